//! The tools a component declares ([`GuestTool`]) and the checks each declaration must pass:
//! a valid name, bounded texts, an object input schema, a JSON output schema, no duplicates.
//! A bad declaration drops only that tool.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::bindings::rho::tool::types as wit;
use crate::error::WasmError;

/// Tools one component may declare; later ones are dropped.
pub const MAX_TOOLS_PER_COMPONENT: usize = 128;
/// Longest tool name.
const MAX_NAME_LEN: usize = 64;
/// Longest title, in bytes.
const MAX_TITLE_BYTES: usize = 256;
/// Longest description, in bytes (the model reads it on every turn).
const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;
/// Longest input or output schema, in bytes of JSON text.
const MAX_SCHEMA_BYTES: usize = 256 * 1024;

/// Behaviour hints a tool declares. They inform the user and never lower the component's risk
/// level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolAnnotations {
    /// The tool only reads.
    pub read_only: bool,
    /// The tool may destroy data.
    pub destructive: bool,
    /// Calling it twice with the same arguments has no further effect.
    pub idempotent: bool,
    /// The tool claims to reach outside the workspace (it cannot: no network).
    pub open_world: bool,
}

/// One tool a component offers, validated.
/// Its JSON form (serde) is how rho's built-in components' tool lists are carried in the
/// binary (`builtin-plugins/wasm/*.tools.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuestTool {
    /// The name inside the component (`^[A-Za-z0-9_-]{1,64}$`).
    pub name: String,
    /// A display title.
    pub title: Option<String>,
    /// What the tool does (the model reads it).
    pub description: String,
    /// JSON Schema of the arguments: an object with `"type": "object"`.
    pub input_schema: Value,
    /// JSON Schema of structured results, when declared.
    pub output_schema: Option<Value>,
    /// Behaviour hints, when declared.
    pub annotations: Option<ToolAnnotations>,
}

/// Validates what `list-tools` returned: the tools that passed, and one error per tool that
/// did not.
pub(crate) fn validate(
    component: &str,
    specs: Vec<wit::ToolSpec>,
) -> (Vec<GuestTool>, Vec<WasmError>) {
    let mut tools = Vec::new();
    let mut rejected = Vec::new();
    let mut seen = HashSet::new();
    let count = specs.len();
    for spec in specs.into_iter().take(MAX_TOOLS_PER_COMPONENT) {
        let shown = shown_name(&spec.name);
        let invalid = |reason: String| WasmError::InvalidTool {
            component: component.to_owned(),
            tool: shown.clone(),
            reason,
        };
        match check(spec) {
            Err(reason) => rejected.push(invalid(reason)),
            Ok(tool) if !seen.insert(tool.name.clone()) => {
                rejected.push(invalid(
                    "another tool of the component has this name".to_owned(),
                ));
            }
            Ok(tool) => tools.push(tool),
        }
    }
    if count > MAX_TOOLS_PER_COMPONENT {
        rejected.push(WasmError::InvalidTool {
            component: component.to_owned(),
            tool: format!("#{}..", MAX_TOOLS_PER_COMPONENT + 1),
            reason: format!(
                "the component declares {count} tools; only the first {MAX_TOOLS_PER_COMPONENT} are loaded"
            ),
        });
    }
    (tools, rejected)
}

fn check(spec: wit::ToolSpec) -> Result<GuestTool, String> {
    check_name(&spec.name)?;
    if let Some(title) = &spec.title
        && title.len() > MAX_TITLE_BYTES
    {
        return Err(format!("its title is longer than {MAX_TITLE_BYTES} bytes"));
    }
    if spec.description.len() > MAX_DESCRIPTION_BYTES {
        return Err(format!(
            "its description is longer than {MAX_DESCRIPTION_BYTES} bytes"
        ));
    }
    let input_schema = schema("input-schema", &spec.input_schema)?;
    if input_schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("input-schema must be an object schema (`\"type\": \"object\"`)".to_owned());
    }
    let output_schema = spec
        .output_schema
        .as_deref()
        .map(|text| schema("output-schema", text))
        .transpose()?;
    Ok(GuestTool {
        name: spec.name,
        title: spec.title,
        description: spec.description,
        input_schema,
        output_schema,
        annotations: spec.annotations.map(|a| ToolAnnotations {
            read_only: a.read_only,
            destructive: a.destructive,
            idempotent: a.idempotent,
            open_world: a.open_world,
        }),
    })
}

fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME_LEN {
        return Err(format!("a name must have 1 to {MAX_NAME_LEN} characters"));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err("a name may only contain ASCII letters, digits, `_` and `-`".to_owned());
    }
    Ok(())
}

/// A schema: JSON text of an object.
fn schema(field: &str, text: &str) -> Result<Value, String> {
    if text.len() > MAX_SCHEMA_BYTES {
        return Err(format!(
            "its {field} is longer than {MAX_SCHEMA_BYTES} bytes"
        ));
    }
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("its {field} is not valid JSON: {e}"))?;
    if !value.is_object() {
        return Err(format!("its {field} is not a JSON object"));
    }
    Ok(value)
}

/// A name safe to show in a message: cut to a few dozen characters.
fn shown_name(name: &str) -> String {
    name.chars().take(MAX_NAME_LEN + 8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, input: &str) -> wit::ToolSpec {
        wit::ToolSpec {
            name: name.to_owned(),
            title: None,
            description: "d".to_owned(),
            input_schema: input.to_owned(),
            output_schema: None,
            annotations: None,
        }
    }

    #[test]
    fn bad_declarations_drop_only_their_tool() {
        let obj = r#"{"type":"object"}"#;
        let mut with_output = spec("out", obj);
        with_output.output_schema = Some("[1]".to_owned());
        let (tools, rejected) = validate(
            "p/c",
            vec![
                spec("ok-1_A", obj),
                spec("", obj),
                spec("bad name", obj),
                spec(&"x".repeat(65), obj),
                spec("not-json", "{"),
                spec("not-object", r#"{"type":"string"}"#),
                spec("ok-1_A", obj),
                with_output,
            ],
        );
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name, "ok-1_A");
        assert_eq!(tools[0].input_schema["type"], "object");
        let messages: Vec<String> = rejected.iter().map(ToString::to_string).collect();
        assert_eq!(messages.len(), 7, "{messages:#?}");
        assert!(messages[0].contains("1 to 64"), "{}", messages[0]);
        assert!(messages[1].contains("ASCII letters"), "{}", messages[1]);
        assert!(messages[3].contains("not valid JSON"), "{}", messages[3]);
        assert!(messages[4].contains("object schema"), "{}", messages[4]);
        assert!(messages[5].contains("another tool"), "{}", messages[5]);
        assert!(
            messages[6].contains("output-schema is not a JSON object"),
            "{}",
            messages[6]
        );
        assert!(
            messages
                .iter()
                .all(|m| m.starts_with("component p/c: tool"))
        );
    }

    #[test]
    fn only_the_first_tools_are_kept() {
        let specs = (0..MAX_TOOLS_PER_COMPONENT + 2)
            .map(|i| spec(&format!("t{i}"), r#"{"type":"object"}"#))
            .collect();
        let (tools, rejected) = validate("p/c", specs);
        assert_eq!(tools.len(), MAX_TOOLS_PER_COMPONENT);
        assert_eq!(rejected.len(), 1);
    }
}
