//! Tool arguments: the model's JSON parsed into typed structs, errors naming the field.

use rho_component::{ToolOutput, json_kind};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Parses `arguments` (a JSON object; `null` counts as `{}`) into `T`. Argument structs use
/// `deny_unknown_fields`, so a misspelt field is reported rather than ignored.
pub(crate) fn parse<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, ToolOutput> {
    let arguments = match arguments {
        Value::Null => Value::Object(Map::new()),
        Value::Object(_) => arguments,
        other => {
            return Err(ToolOutput::error(format!(
                "invalid arguments for {tool}: expected a JSON object, got {}",
                json_kind(&other)
            )));
        }
    };
    serde_path_to_error::deserialize(arguments).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        if field == "." {
            ToolOutput::error(format!("invalid arguments for {tool}: {inner}"))
        } else {
            ToolOutput::error(format!(
                "invalid arguments for {tool}: field `{field}`: {inner}"
            ))
        }
    })
}

/// A failed output for an argument that parsed but is not acceptable.
pub(crate) fn invalid(tool: &str, field: &str, why: impl std::fmt::Display) -> ToolOutput {
    ToolOutput::error(format!(
        "invalid arguments for {tool}: field `{field}`: {why}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Example {
        path: String,
        limit: Option<u64>,
    }

    fn error_of(arguments: Value) -> String {
        let failed = parse::<Example>("example", arguments).unwrap_err();
        assert!(failed.is_error);
        failed.text
    }

    #[test]
    fn errors_name_the_field() {
        assert!(error_of(json!({})).contains("missing field `path`"));
        let wrong_type = error_of(json!({"path": "a", "limit": "ten"}));
        assert!(wrong_type.contains("field `limit`"), "{wrong_type}");
        assert!(error_of(json!({"path": "a", "lmit": 3})).contains("unknown field `lmit`"));
        assert!(error_of(json!(["a"])).contains("expected a JSON object, got an array"));
        assert!(parse::<Example>("example", json!({"path": "a"})).is_ok());
    }
}
