//! Skill activation (Agent Skills client guide, steps 3 and 4): the catalog the system prompt
//! carries, and the `activate_skill` tool whose `name` parameter is an enum of the available
//! skills. The tool returns the body wrapped in `<skill_content>` with the skill's directory
//! and its bundled files (listed, never read eagerly).

use std::collections::BTreeMap;
use std::sync::Arc;

use rho_component::{
    RiskLevel, SkillMeta, Tool, ToolContext, ToolFuture, ToolOrigin, ToolOutput, ToolSpec,
};
use rho_plugins::PluginInventory;
use serde_json::{Value, json};

/// The exported name of the activation tool.
pub const ACTIVATE_SKILL: &str = "activate_skill";

/// At most this many bundled files are listed on activation.
const RESOURCE_LIST_CAP: usize = 200;

/// The catalog section of the system prompt, or `None` when there are no skills (then
/// neither the catalog nor the tool exists).
pub fn skill_catalog(skills: &[SkillMeta]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut text = String::from(
        "The following skills provide specialized instructions for specific tasks.\n\
         When a task matches a skill's description, call the activate_skill tool with the \
         skill's name to load its full instructions.\n\n<available_skills>\n",
    );
    for skill in skills {
        text.push_str(&format!(
            "  <skill>\n    <name>{}</name>\n    <description>{}</description>\n  </skill>\n",
            escape(&skill.name),
            escape(&skill.description)
        ));
    }
    text.push_str("</available_skills>");
    Some(text)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The `activate_skill` tool. Bodies are read on activation, not at session start: plugin
/// skills are re-opened under their plugin's containment rules.
pub(crate) struct ActivateSkill {
    spec: ToolSpec,
    skills: BTreeMap<String, SkillMeta>,
    plugins: Arc<PluginInventory>,
}

impl ActivateSkill {
    /// The tool over `skills` (must not be empty).
    pub(crate) fn new(skills: Vec<SkillMeta>, plugins: Arc<PluginInventory>) -> Self {
        let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
        let spec = ToolSpec {
            name: ACTIVATE_SKILL.to_owned(),
            title: Some("Activate skill".to_owned()),
            description: "Load the full instructions of one of the available skills (see \
                          <available_skills> in the system prompt) when a task matches its \
                          description."
                .to_owned(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "name": {
                        "type": "string",
                        "enum": names,
                        "description": "The skill to activate.",
                    }
                },
                "required": ["name"],
                "additionalProperties": false,
            }),
            output_schema: None,
            risk: RiskLevel::Read,
            origin: ToolOrigin::Builtin,
        };
        Self {
            spec,
            skills: skills.into_iter().map(|s| (s.name.clone(), s)).collect(),
            plugins,
        }
    }

    fn activate(&self, arguments: &Value) -> ToolOutput {
        let Some(name) = arguments.get("name").and_then(Value::as_str) else {
            return ToolOutput::error("activate_skill needs a \"name\" (a string)");
        };
        let Some(meta) = self.skills.get(name) else {
            let known: Vec<&str> = self.skills.keys().map(String::as_str).collect();
            return ToolOutput::error(format!(
                "no skill named {name:?}; available: {}",
                known.join(", ")
            ));
        };
        let body = match super::skill_body(meta, &self.plugins) {
            Ok(body) => body,
            Err(e) => return ToolOutput::error(format!("skill {name:?} cannot be read: {e}")),
        };
        let mut text = format!("<skill_content name=\"{}\">\n", escape(name));
        text.push_str(body.trim_end());
        text.push_str("\n\n");
        if !rho_skills::is_builtin(meta) {
            text.push_str(&format!(
                "Skill directory: {}\nRelative paths in this skill are relative to the skill \
                 directory.\n",
                meta.directory().display()
            ));
            let resources = rho_skills::list_resources(meta, RESOURCE_LIST_CAP);
            if !resources.is_empty() {
                text.push_str("\n<skill_resources>\n");
                for file in &resources {
                    text.push_str(&format!(
                        "  <file>{}</file>\n",
                        escape(&file.to_string_lossy())
                    ));
                }
                if resources.len() >= RESOURCE_LIST_CAP {
                    text.push_str("  <!-- listing cut; more files exist -->\n");
                }
                text.push_str("</skill_resources>\n");
            }
        }
        text.push_str("</skill_content>");
        ToolOutput::text(text)
    }
}

impl Tool for ActivateSkill {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, arguments: Value, _context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { self.activate(&arguments) })
    }
}
