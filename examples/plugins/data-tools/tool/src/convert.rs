//! The `convert` tool: a JSON, TOML or YAML document rewritten in another of the three.

use rho_plugin_sdk::{Annotations, Context, Output, Tool, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::document;
use crate::format::Format;

/// Converts a document between JSON, TOML and YAML.
pub struct Convert;

/// Arguments of `convert`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConvertArgs {
    input: Option<String>,
    path: Option<String>,
    from: Option<Format>,
    to: Format,
    #[serde(default)]
    compact: bool,
}

impl Tool for Convert {
    const NAME: &'static str = "convert";
    const TITLE: Option<&'static str> = Some("Convert JSON / TOML / YAML");
    const DESCRIPTION: &'static str = "Converts a document between JSON, TOML and YAML and \
        returns the converted text. Give the document as `input` text or as `path`, a workspace \
        file. The source format is `from`, else the file extension (.json, .toml, .yaml, .yml), \
        else detected (JSON, then TOML, then YAML). Key order is kept. TOML has no null and \
        needs a table at the top, so such documents cannot become TOML; TOML date-times \
        become strings. Comments are not kept.";
    type Args = ConvertArgs;

    fn input_schema() -> Value {
        document::input_schema(
            "config/app.yaml",
            json!({
                "to": {
                    "type": "string",
                    "enum": ["json", "toml", "yaml"],
                    "description": "The target format."
                },
                "compact": {
                    "type": "boolean",
                    "default": false,
                    "description": "JSON output on one line instead of indented."
                }
            }),
            "to",
        )
    }

    fn annotations() -> Option<Annotations> {
        Some(Annotations::READ_ONLY)
    }

    fn call(args: ConvertArgs, cx: &Context) -> Result<Output, ToolError> {
        let doc = document::load(args.input, args.path, args.from, cx)?;
        let text = args.to.render(&doc.value, args.compact).map_err(|e| {
            ToolError::failed(format!(
                "cannot write this {} document as {}: {e}",
                doc.format.name(),
                args.to.name()
            ))
        })?;
        Ok(Output::text(text))
    }
}
