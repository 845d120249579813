//! Output-schema contracts for tools whose transport does not check them itself (WASM tools;
//! `rho-mcp` checks MCP results as they arrive): a tool that declares an output schema must
//! return structured content that validates, or its call fails and says why. The check is the
//! one `rho-mcp` applies (`rho_mcp::output_schema`), so both kinds follow one rule.

use std::sync::Arc;

use rho_component::{Tool, ToolContext, ToolFuture, ToolOutput, ToolSpec};
use serde_json::Value;

/// `inner` with its declared output schema enforced on successful results.
pub(crate) struct OutputContract {
    inner: Arc<dyn Tool>,
    schema: Value,
}

impl OutputContract {
    /// Wraps `inner` when it declares an output schema; returns it unchanged otherwise.
    pub(crate) fn wrap(inner: Arc<dyn Tool>) -> Arc<dyn Tool> {
        match inner.spec().output_schema.clone() {
            Some(schema) => Arc::new(Self { inner, schema }),
            None => inner,
        }
    }
}

impl Tool for OutputContract {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let out = self.inner.call(arguments, context).await;
            if out.is_error {
                return out;
            }
            match rho_mcp::output_schema::check(&self.schema, out.structured.as_ref()) {
                Ok(()) => out,
                Err(problem) => {
                    ToolOutput::error(format!("tool `{}`: {problem}", self.inner.spec().name))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rho_component::{RiskLevel, ToolOrigin};
    use serde_json::json;

    /// Returns the structured content it was built with (or an error result).
    struct Fixed {
        spec: ToolSpec,
        structured: Option<Value>,
        error: bool,
    }

    impl Tool for Fixed {
        fn spec(&self) -> &ToolSpec {
            &self.spec
        }

        fn call<'a>(&'a self, _: Value, _: &'a ToolContext) -> ToolFuture<'a> {
            Box::pin(async move {
                if self.error {
                    return ToolOutput::error("it failed");
                }
                ToolOutput {
                    text: "text".to_owned(),
                    structured: self.structured.clone(),
                    ..ToolOutput::default()
                }
            })
        }
    }

    fn tool(schema: Option<Value>, structured: Option<Value>, error: bool) -> Arc<dyn Tool> {
        OutputContract::wrap(Arc::new(Fixed {
            spec: ToolSpec {
                name: "wasm__p__t".to_owned(),
                title: None,
                description: String::new(),
                input_schema: json!({"type": "object"}),
                output_schema: schema,
                risk: RiskLevel::Read,
                origin: ToolOrigin::Builtin,
            },
            structured,
            error,
        }))
    }

    async fn run(tool: &Arc<dyn Tool>) -> ToolOutput {
        tool.call(json!({}), &ToolContext::new(std::env::temp_dir()))
            .await
    }

    #[tokio::test]
    async fn declared_schemas_are_enforced_on_successful_results_only() {
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        let good = run(&tool(Some(schema.clone()), Some(json!({"n": 3})), false)).await;
        assert!(!good.is_error, "{}", good.text);
        assert_eq!(good.structured, Some(json!({"n": 3})));

        let bad = run(&tool(Some(schema.clone()), Some(json!({"n": "x"})), false)).await;
        assert!(bad.is_error);
        assert!(
            bad.text.starts_with(
                "tool `wasm__p__t`: structuredContent does not match the tool's outputSchema: /n: "
            ),
            "{}",
            bad.text
        );

        let missing = run(&tool(Some(schema.clone()), None, false)).await;
        assert!(missing.is_error);
        assert!(
            missing.text.contains("returned no structuredContent"),
            "{}",
            missing.text
        );

        // Error results are exempt; tools without a schema are not wrapped at all.
        let failed = run(&tool(Some(schema), None, true)).await;
        assert_eq!(failed.text, "it failed");
        let free = run(&tool(None, Some(json!("anything")), false)).await;
        assert!(!free.is_error);
    }
}
