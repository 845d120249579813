//! Where a tool's document comes from: inline `input` text or a workspace file at `path`,
//! in a given, inferred or detected format.

use rho_plugin_sdk::{Context, ToolError};
use serde_json::{Value, json};

use crate::format::Format;

/// A parsed document.
pub struct Document {
    /// Its content.
    pub value: Value,
    /// The format it was read as.
    pub format: Format,
}

/// The input schema of a tool that reads a document: the document's `input`, `path` and
/// `from` (what [`load`] takes), then the tool's own `properties`, of which `required` must be
/// given. `example` is a workspace file the description of `path` names.
pub fn input_schema(example: &str, properties: Value, required: &str) -> Value {
    let mut all = json!({
        "input": {
            "type": "string",
            "description": "The document's text. Give this or `path`."
        },
        "path": {
            "type": "string",
            "description": format!(
                "A workspace file holding the document, relative to the workspace (for \
                 example `{example}`). Give this or `input`."
            )
        },
        "from": {
            "type": "string",
            "enum": ["json", "toml", "yaml"],
            "description": "The document's format. Default: from the file extension, else detected."
        }
    });
    if let (Some(all), Value::Object(own)) = (all.as_object_mut(), properties) {
        all.extend(own);
    }
    json!({
        "type": "object",
        "properties": all,
        "required": [required],
        "additionalProperties": false
    })
}

/// Reads and parses the document of a call: exactly one of `input` and `path`, in format
/// `from`, else the one `path`'s extension names, else the one detected from the text.
pub fn load(
    input: Option<String>,
    path: Option<String>,
    from: Option<Format>,
    cx: &Context,
) -> Result<Document, ToolError> {
    let (text, path) = match (input, path) {
        (Some(text), None) => (text, None),
        (None, Some(path)) => (cx.read_to_string(&path)?, Some(path)),
        (Some(_), Some(_)) => {
            return Err(ToolError::invalid_arguments(
                "give either `input` or `path`, not both",
            ));
        }
        (None, None) => {
            return Err(ToolError::invalid_arguments(
                "give `input` (the document's text) or `path` (a workspace file)",
            ));
        }
    };
    let parsed = match from.or_else(|| path.as_deref().and_then(Format::from_path)) {
        Some(format) => format
            .parse(&text)
            .map(|value| (format, value))
            .map_err(|e| (format, e)),
        None => Format::detect(&text).inspect(|(format, _)| {
            cx.debug(format!("input detected as {}", format.name()));
        }),
    };
    let (format, value) = parsed.map_err(|(format, e)| {
        let hint = if from.is_none() {
            " (give `from` if that is not its format)"
        } else {
            ""
        };
        match &path {
            Some(path) => {
                ToolError::failed(format!("{path} is not valid {}{hint}: {e}", format.name()))
            }
            None => ToolError::invalid_arguments(format!(
                "input is not valid {}{hint}: {e}",
                format.name()
            )),
        }
    })?;
    Ok(Document { value, format })
}
