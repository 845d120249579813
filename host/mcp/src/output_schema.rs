//! Output-schema contracts (`docs/mcp.md`, "Calls and results"): a tool that declares one must
//! return structured content that validates (JSON Schema 2020-12 by default). Validation is
//! offline: a `$ref` to the network is never fetched and makes the schema unusable instead.
//! The registry applies the same contract to WASM tools (`rho_core`'s `wasm_tools.rs`).

use serde_json::Value;

/// Why a tool's result breaks its output-schema contract (the caller names the tool).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputSchemaError {
    /// The tool declares an `outputSchema` but its result has no `structuredContent`.
    #[error("the tool declares an outputSchema but returned no structuredContent")]
    Missing,
    /// The tool's `outputSchema` cannot be used (not a schema, or a `$ref` to the network).
    #[error("the tool's outputSchema is not usable: {reason}")]
    Unusable {
        /// Why the validator refused it.
        reason: String,
    },
    /// `structuredContent` does not validate.
    #[error(
        "structuredContent does not match the tool's outputSchema: {}",
        .problems.join("; ")
    )]
    Mismatch {
        /// The first few problems, each naming where in the content it is.
        problems: Vec<String>,
    },
}

/// Checks `structured` against `schema`; the error says what is wrong, in one line.
pub fn check(schema: &Value, structured: Option<&Value>) -> Result<(), OutputSchemaError> {
    let Some(structured) = structured else {
        return Err(OutputSchemaError::Missing);
    };
    let validator =
        jsonschema::options()
            .offline()
            .build(schema)
            .map_err(|e| OutputSchemaError::Unusable {
                reason: e.to_string(),
            })?;
    let problems: Vec<String> = rho_component::schema_problems(&validator, structured)
        .take(5)
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(OutputSchemaError::Mismatch { problems })
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
        let mismatch = check(&schema, Some(&json!({"t": "x"}))).unwrap_err();
        assert!(matches!(mismatch, OutputSchemaError::Mismatch { .. }));
        assert!(
            mismatch
                .to_string()
                .starts_with("structuredContent does not match the tool's outputSchema: ")
        );
        assert!(mismatch.to_string().contains("/t"));
        assert_eq!(
            check(&schema, None).unwrap_err().to_string(),
            "the tool declares an outputSchema but returned no structuredContent"
        );
        let remote = json!({"$ref": "http://169.254.169.254/schema.json"});
        assert!(
            matches!(
                check(&remote, Some(&json!({}))),
                Err(OutputSchemaError::Unusable { .. })
            ),
            "no network $ref"
        );
    }
}
