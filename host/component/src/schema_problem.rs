//! How a JSON Schema violation reads, wherever rho validates a document a package or a server
//! supplies (an Agent Plugins manifest, an `mcp.json`, a tool's structured output): the
//! instance path, then what is wrong, in one line.

use serde_json::Value;

/// One line per violation of `validator` by `instance` (`/servers/a/url: "x" is not a "uri"`;
/// a violation at the root has no path), in the validator's order.
pub fn schema_problems<'a>(
    validator: &'a jsonschema::Validator,
    instance: &'a Value,
) -> impl Iterator<Item = String> + 'a {
    validator.iter_errors(instance).map(|e| {
        let at = e.instance_path().to_string();
        if at.is_empty() {
            e.to_string()
        } else {
            format!("{at}: {e}")
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn problems_name_where_and_what() {
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        let validator = jsonschema::options().offline().build(&schema).unwrap();
        let missing: Vec<String> = schema_problems(&validator, &json!({})).collect();
        assert_eq!(missing, [r#""n" is a required property"#]);
        let wrong: Vec<String> = schema_problems(&validator, &json!({"n": "x"})).collect();
        assert_eq!(wrong, [r#"/n: "x" is not of type "integer""#]);
        assert_eq!(schema_problems(&validator, &json!({"n": 1})).count(), 0);
    }
}
