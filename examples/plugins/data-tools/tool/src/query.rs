//! The `query` tool: one value out of a JSON, TOML or YAML document.

use rho_plugin_sdk::{Annotations, Context, Output, Tool, ToolError};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::format::Format;
use crate::{document, selector};

/// Extracts a value by JSON Pointer or dotted path.
pub struct Query;

/// Arguments of `query`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryArgs {
    input: Option<String>,
    path: Option<String>,
    from: Option<Format>,
    select: String,
    #[serde(default = "json_format")]
    format: Format,
    #[serde(default)]
    raw: bool,
}

fn json_format() -> Format {
    Format::Json
}

impl Tool for Query {
    const NAME: &'static str = "query";
    const TITLE: Option<&'static str> = Some("Query JSON / TOML / YAML");
    const DESCRIPTION: &'static str = "Extracts one value from a JSON, TOML or YAML document. \
        `select` is a JSON Pointer when it starts with `/` (`/package/authors/0`), else a \
        dotted path (`package.authors[0]`, `package.authors.0`, `servers[-1]` for the last \
        item, `\"key.with.dots\".x` for keys with dots); `.` or an empty string selects the \
        whole document. Give the document as `input` text or as `path`, a workspace file. \
        When nothing is there, the error names the deepest place found and the keys it has.";
    type Args = QueryArgs;

    fn input_schema() -> Value {
        document::input_schema(
            "Cargo.toml",
            json!({
                "select": {
                    "type": "string",
                    "description": "What to extract: a JSON Pointer (`/a/0/b`) or a dotted path (`a[0].b`); `.` for everything."
                },
                "format": {
                    "type": "string",
                    "enum": ["json", "toml", "yaml"],
                    "default": "json",
                    "description": "How to write the selected value (TOML only for tables)."
                },
                "raw": {
                    "type": "boolean",
                    "default": false,
                    "description": "Write a selected string as it is, without quotes (like `jq -r`)."
                }
            }),
            "select",
        )
    }

    fn output_schema() -> Option<Value> {
        Some(json!({
            "type": "object",
            "properties": {"value": {"description": "The selected value"}},
            "required": ["value"]
        }))
    }

    fn annotations() -> Option<Annotations> {
        Some(Annotations::READ_ONLY)
    }

    fn call(args: QueryArgs, cx: &Context) -> Result<Output, ToolError> {
        let steps = selector::parse(&args.select)
            .map_err(|e| ToolError::invalid_arguments(format!("select: {e}")))?;
        let doc = document::load(args.input, args.path, args.from, cx)?;
        let value = selector::select(&doc.value, &steps).map_err(ToolError::failed)?;
        let text = match value {
            Value::String(s) if args.raw => s.clone(),
            _ => args.format.render(value, false).map_err(|e| {
                ToolError::failed(format!(
                    "cannot write the value as {}: {e}",
                    args.format.name()
                ))
            })?,
        };
        Ok(Output::text(text).with_structured(json!({ "value": value })))
    }
}
