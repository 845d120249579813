//! Components built into the rho binary: skills and the built-in tools.
//!
//! Skills: their `SKILL.md` files live under `builtin-plugins/skills/` and are embedded at
//! compile time, then parsed with the same validator as every other skill (a unit test proves
//! each one is valid). Built-in skills have the highest skill precedence.
//!
//! Tools: [`builtin_tools`] lists the file tools (`read_file`, `write_file`, `edit_file`,
//! `list_directory`), the search tools (`glob`, `grep`) and `run_command`, each a
//! [`rho_component::Tool`]. File tools stay inside the session workspace and its extra roots,
//! symbolic links included; commands run in their own process group, which is killed on
//! timeout, cancellation or drop. This crate does not provide `activate_skill` (it needs the
//! skill registry, which the host owns), nor does it decide approvals: each tool only declares
//! its risk level.
//!
//! WASM components: [`builtin_components`] embeds tool components written with
//! `rho-plugin-sdk` (`text-stats`); the registry loads them through the WASM host.

mod components;
mod tools;

use rho_component::{Diagnostic, DiagnosticCode, SkillMeta, SkillSource};

pub use components::{BuiltinComponent, builtin_components};
pub use tools::{
    Builtin, BuiltinTool, EditFile, Glob, Grep, ListDirectory, ReadFile, RunCommand, WriteFile,
    builtin_tools,
};

/// One embedded skill: its name and the full text of its `SKILL.md`.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinSkill {
    /// The skill name (its directory name).
    pub name: &'static str,
    /// The whole `SKILL.md` text.
    pub text: &'static str,
}

const BUILTIN_SKILLS: &[BuiltinSkill] = &[BuiltinSkill {
    name: "rho-plugin-authoring",
    text: include_str!("../skills/rho-plugin-authoring/SKILL.md"),
}];

/// Every embedded skill's raw text.
pub fn builtin_skill_texts() -> &'static [BuiltinSkill] {
    BUILTIN_SKILLS
}

/// The built-in skills, parsed. A built-in that fails validation (prevented by a test) is
/// reported as a diagnostic rather than trusted.
pub fn builtin_skills() -> (Vec<SkillMeta>, Vec<Diagnostic>) {
    let mut skills = Vec::new();
    let mut diags = Vec::new();
    for skill in BUILTIN_SKILLS {
        let location = rho_skills::builtin_location(skill.name);
        match rho_skills::parse_skill(
            skill.text.as_bytes(),
            skill.name,
            location,
            SkillSource::BuiltIn,
        ) {
            Ok(meta) => skills.push(meta),
            Err(e) => diags.push(
                Diagnostic::error(DiagnosticCode::SkillInvalid, format!("built-in skill: {e}"))
                    .with_component(skill.name),
            ),
        }
    }
    (skills, diags)
}

/// The body (instructions) of a built-in skill.
pub fn builtin_skill_body(name: &str) -> Option<&'static str> {
    BUILTIN_SKILLS
        .iter()
        .find(|s| s.name == name)
        .and_then(|s| rho_skills::split_body(s.text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_skill_is_valid() {
        let (skills, diags) = builtin_skills();
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(skills.len(), BUILTIN_SKILLS.len());
        for skill in &skills {
            assert!(rho_skills::is_builtin(skill));
            let body = builtin_skill_body(&skill.name).unwrap();
            assert!(body.starts_with("# "), "{}", skill.name);
        }
    }
}
