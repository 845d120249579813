//! What a WASM tool's result must satisfy before the session sees it (`rho-mcp` does the same
//! for MCP results as they arrive): a tool that declares an output schema must return
//! structured content that validates, or its call fails and says why (the check is
//! `rho_mcp::output_schema`, so both kinds follow one rule); and structured content larger than
//! the component's output cap is left out with a note, as text over it is cut. The schema is
//! checked first, so a large but valid result is cut, never refused.

use std::sync::Arc;

use rho_component::{Tool, ToolContext, ToolFuture, ToolOutput, ToolSpec};
use serde_json::Value;

/// `inner` with its output contract enforced on successful results.
pub(crate) struct OutputContract {
    inner: Arc<dyn Tool>,
    schema: Option<Value>,
    max_structured_bytes: usize,
}

impl OutputContract {
    /// Wraps `inner`, whose structured content may take `max_output_bytes` of JSON text.
    pub(crate) fn wrap(inner: Arc<dyn Tool>, max_output_bytes: u64) -> Arc<dyn Tool> {
        Arc::new(Self {
            schema: inner.spec().output_schema.clone(),
            inner,
            max_structured_bytes: usize::try_from(max_output_bytes).unwrap_or(usize::MAX),
        })
    }
}

impl Tool for OutputContract {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let mut out = self.inner.call(arguments, context).await;
            if out.is_error {
                return out;
            }
            if let Some(schema) = &self.schema
                && let Err(problem) = rho_mcp::output_schema::check(schema, out.structured.as_ref())
            {
                return ToolOutput::error(format!("tool `{}`: {problem}", self.inner.spec().name));
            }
            let len = out
                .structured
                .as_ref()
                .map_or(0, |v| serde_json::to_string(v).map_or(0, |t| t.len()));
            if len > self.max_structured_bytes {
                out.structured = None;
                out.truncated = true;
                if !out.text.is_empty() {
                    out.text.push('\n');
                }
                out.text.push_str(&format!(
                    "[structured content of {len} bytes left out: over the {}-byte output limit]",
                    self.max_structured_bytes
                ));
            }
            out
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
        OutputContract::wrap(
            Arc::new(Fixed {
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
            }),
            100,
        )
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

        // Error results are exempt, and a tool without a schema may return anything.
        let failed = run(&tool(Some(schema), None, true)).await;
        assert_eq!(failed.text, "it failed");
        let free = run(&tool(None, Some(json!("anything")), false)).await;
        assert!(!free.is_error);
        assert_eq!(free.structured, Some(json!("anything")));
    }

    #[tokio::test]
    async fn large_structured_content_is_checked_then_cut_with_a_note() {
        let big = json!({"n": 1, "pad": "x".repeat(200)});
        let len = serde_json::to_string(&big).unwrap().len();
        let schema = json!({"type": "object", "required": ["n"]});
        // Valid but over the cap: cut, not refused.
        let out = run(&tool(Some(schema.clone()), Some(big.clone()), false)).await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(out.structured, None);
        assert!(out.truncated);
        assert_eq!(
            out.text,
            format!(
                "text\n[structured content of {len} bytes left out: over the 100-byte output limit]"
            )
        );
        // Invalid and over the cap: refused for the schema.
        let mut wrong = big;
        wrong["n"] = json!(null);
        wrong.as_object_mut().unwrap().remove("n");
        let out = run(&tool(Some(schema), Some(wrong), false)).await;
        assert!(out.is_error);
        assert!(out.text.contains("outputSchema"), "{}", out.text);
    }
}
