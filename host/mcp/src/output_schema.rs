//! Output-schema contracts (`docs/mcp.md`, "Calls and results"): a tool that declares one must
//! return structured content that validates (JSON Schema 2020-12 by default). Validation is
//! offline: a `$ref` to the network is never fetched and makes the schema unusable instead.
//! The registry applies the same contract to WASM tools (`rho_core`'s `wasm_tools.rs`).

use serde_json::Value;

/// Checks `structured` against `schema`; the error says what is wrong, in one line.
pub fn check(schema: &Value, structured: Option<&Value>) -> Result<(), String> {
    let Some(structured) = structured else {
        return Err("the tool declares an outputSchema but returned no structuredContent".into());
    };
    let validator = jsonschema::options()
        .offline()
        .build(schema)
        .map_err(|e| format!("the tool's outputSchema is not usable: {e}"))?;
    let problems: Vec<String> = rho_component::schema_problems(&validator, structured)
        .take(5)
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "structuredContent does not match the tool's outputSchema: {}",
            problems.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn contract_is_enforced_offline() {
        let schema =
            json!({"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]});
        assert!(check(&schema, Some(&json!({"t": 1}))).is_ok());
        assert!(
            check(&schema, Some(&json!({"t": "x"})))
                .unwrap_err()
                .contains("/t")
        );
        assert!(
            check(&schema, None)
                .unwrap_err()
                .contains("no structuredContent")
        );
        let remote = json!({"$ref": "http://169.254.169.254/schema.json"});
        assert!(check(&remote, Some(&json!({}))).is_err(), "no network $ref");
    }
}
