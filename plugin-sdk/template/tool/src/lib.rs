//! The `{{tool}}` tool component of the `{{plugin}}` plugin.
//!
//! Build: `../build.sh` (needs `rustup target add wasm32-wasip2`). Test: `cargo test` here
//! (native; the tool runs against a `MockHost` instead of rho).

use rho_plugin_sdk::{Annotations, Context, Output, Tool, ToolError, export_tools};
use serde::Deserialize;
use serde_json::{Value, json};

/// The tool. Rename the type freely; its name for rho is `NAME`.
pub struct MyTool;

/// The arguments, decoded from the call's JSON. Keep them in step with `input_schema`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The text to work on.
    text: Option<String>,
    /// A workspace file to work on instead.
    path: Option<String>,
}

impl Tool for MyTool {
    const NAME: &'static str = "{{tool}}";
    const TITLE: Option<&'static str> = Some("{{tool}}");
    const DESCRIPTION: &'static str =
        "Returns `text`, or the workspace file at `path`, in upper case. Give exactly one of them.";
    type Args = Args;

    fn input_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The text. Give this or `path`."},
                "path": {
                    "type": "string",
                    "description": "A UTF-8 workspace file, relative to the workspace. Give this or `text`."
                }
            },
            "additionalProperties": false
        })
    }

    fn output_schema() -> Option<Value> {
        Some(json!({
            "type": "object",
            "properties": {"characters": {"type": "integer"}},
            "required": ["characters"]
        }))
    }

    fn annotations() -> Option<Annotations> {
        Some(Annotations::READ_ONLY)
    }

    fn call(args: Args, cx: &Context) -> Result<Output, ToolError> {
        let text = match (args.text, args.path) {
            (Some(text), None) => text,
            (None, Some(path)) => cx.read_to_string(&path)?,
            _ => return Err(ToolError::invalid_arguments("give exactly one of `text` and `path`")),
        };
        cx.debug(format!("{} bytes in", text.len()));
        let characters = text.chars().count();
        Ok(Output::text(text.to_uppercase()).with_structured(json!({ "characters": characters })))
    }
}

export_tools!(MyTool);

#[cfg(test)]
mod tests {
    use super::*;
    use rho_plugin_sdk::{MockHost, ToolSpec};

    #[test]
    fn the_spec_is_sound() {
        assert_eq!(ToolSpec::of::<MyTool>().problems(), Vec::<String>::new());
    }

    #[test]
    fn upper_cases_text_and_files() {
        let host = MockHost::new().with_file("notes.txt", "hello");
        let out = host.call::<MyTool>(r#"{"path": "notes.txt"}"#).unwrap();
        assert_eq!(out.text_content(), "HELLO");
        assert_eq!(out.structured(), Some(&json!({"characters": 5})));
        let err = host.call::<MyTool>(r#"{"text": 1}"#).unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments(m) if m.starts_with("text:")));
    }
}
