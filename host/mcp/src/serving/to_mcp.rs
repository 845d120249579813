//! rho's types as MCP's, for `rho mcp serve`: a served tool's definition (its exported name,
//! its risk level as annotations), prompts, resources and templates as declared, a call's or
//! prompt's result (an upstream one passed on as its server sent it, within
//! [`MAX_PASSED_RESULT_BYTES`]), and completions capped at the protocol's 100.

use std::borrow::Cow;
use std::sync::Arc;

use rho_component::{
    PassedOutput, PromptRole, RiskLevel, ServerPrompt, ServerResource, ToolOutput, ToolSpec,
};
use rmcp::model::{
    CallToolResponse, CallToolResult, CompletionInfo, ContentBlock, GetPromptResponse,
    GetPromptResult, JsonObject, Prompt, PromptMessage, Role, Tool, ToolAnnotations,
};
use serde_json::Value;

use super::{MAX_PASSED_RESULT_BYTES, ServedPrompt, ServedRefusal};

/// The response to a served call that finished with `output` (`None`: no such tool).
pub(super) fn call_response(
    name: &str,
    output: Option<PassedOutput>,
) -> Result<CallToolResponse, rmcp::ErrorData> {
    match output {
        Some(PassedOutput::Rendered(output)) => Ok(CallToolResponse::Complete(result(output))),
        Some(PassedOutput::AsSent(sent)) => Ok(CallToolResponse::Complete(passed_on(name, sent))),
        None => Err(rmcp::ErrorData::invalid_params(
            format!("no tool named {name:?}"),
            None,
        )),
    }
}

/// `values` as a completion, at most the protocol's 100 (the total says how many there were).
pub(super) fn completion(mut values: Vec<String>) -> CompletionInfo {
    let total = u32::try_from(values.len()).unwrap_or(u32::MAX);
    let has_more = values.len() > CompletionInfo::MAX_VALUES;
    values.truncate(CompletionInfo::MAX_VALUES);
    // Within the cap by now, so this cannot fail; an empty completion if it ever did.
    CompletionInfo::with_pagination(values, Some(total), has_more).unwrap_or_default()
}

/// The response to a prompt expansion that ended with `prompt`.
pub(super) fn prompt_response(
    name: &str,
    prompt: Result<ServedPrompt, ServedRefusal>,
) -> Result<GetPromptResponse, rmcp::ErrorData> {
    let messages = match prompt.map_err(|refusal| refusal.error(rmcp::ErrorData::invalid_params))? {
        ServedPrompt::AsSent(sent) => return passed_prompt(name, sent),
        ServedPrompt::Messages(messages) => messages,
    };
    let messages = messages
        .into_iter()
        .map(|m| {
            let role = match m.role {
                PromptRole::User => Role::User,
                PromptRole::Assistant => Role::Assistant,
            };
            PromptMessage::new_text(role, m.text)
        })
        .collect();
    Ok(GetPromptResponse::Complete(GetPromptResult::new(messages)))
}

/// An upstream prompt's result passed on as its server sent it, within
/// [`MAX_PASSED_RESULT_BYTES`]; a larger or malformed one is an internal error naming the
/// prompt.
pub(super) fn passed_prompt(name: &str, sent: Value) -> Result<GetPromptResponse, rmcp::ErrorData> {
    let too_large = !within(&sent, MAX_PASSED_RESULT_BYTES);
    let result = (!too_large)
        .then(|| serde_json::from_value::<GetPromptResult>(sent).ok())
        .flatten();
    match result {
        Some(mut result) => {
            // Complete whatever revision the server spoke, as a passed-on tool result is.
            result.result_type = Some(rmcp::model::ResultType::COMPLETE);
            Ok(GetPromptResponse::Complete(result))
        }
        None => Err(rmcp::ErrorData::internal_error(
            if too_large {
                format!(
                    "prompt {name:?}: its server's result is larger than {MAX_PASSED_RESULT_BYTES} bytes"
                )
            } else {
                format!("prompt {name:?}: its server's result is not a prompt result")
            },
            None,
        )),
    }
}

/// The MCP definition of a served tool: its exported name, and its risk level as hints.
pub(super) fn definition(spec: &ToolSpec) -> Tool {
    let schema = match &spec.input_schema {
        Value::Object(map) => map.clone(),
        _ => JsonObject::from_iter([("type".to_owned(), Value::from("object"))]),
    };
    let annotations = match spec.risk {
        RiskLevel::Read => ToolAnnotations::new().read_only(true),
        RiskLevel::Write => ToolAnnotations::new().read_only(false).destructive(false),
        RiskLevel::Destructive => ToolAnnotations::new().read_only(false).destructive(true),
    };
    let mut tool = Tool::new(
        Cow::Owned(spec.name.clone()),
        Cow::Owned(spec.description.clone()),
        Arc::new(schema),
    )
    .with_annotations(annotations);
    if let Some(title) = &spec.title {
        tool = tool.with_title(title.clone());
    }
    if let Some(Value::Object(schema)) = &spec.output_schema {
        tool = tool.with_raw_output_schema(Arc::new(schema.clone()));
    }
    tool
}

/// The MCP declaration of a served prompt.
pub(super) fn prompt(served: ServerPrompt) -> Prompt {
    let arguments = served
        .arguments
        .into_iter()
        .map(|a| {
            let mut argument = rmcp::model::PromptArgument::new(a.name).with_required(a.required);
            if let Some(title) = a.title {
                argument = argument.with_title(title);
            }
            if let Some(description) = a.description {
                argument = argument.with_description(description);
            }
            argument
        })
        .collect();
    let mut prompt = Prompt::new(served.name, served.description, Some(arguments));
    if let Some(title) = served.title {
        prompt = prompt.with_title(title);
    }
    prompt
}

/// The MCP declaration of a served resource.
pub(super) fn resource(served: ServerResource) -> rmcp::model::Resource {
    let mut resource = rmcp::model::Resource::new(served.uri, served.name);
    if let Some(title) = served.title {
        resource = resource.with_title(title);
    }
    if let Some(description) = served.description {
        resource = resource.with_description(description);
    }
    if let Some(mime_type) = served.mime_type {
        resource = resource.with_mime_type(mime_type);
    }
    resource
}

/// The MCP declaration of a served resource template.
pub(super) fn template(served: ServerResource) -> rmcp::model::ResourceTemplate {
    let mut template = rmcp::model::ResourceTemplate::new(served.uri, served.name);
    if let Some(title) = served.title {
        template = template.with_title(title);
    }
    if let Some(description) = served.description {
        template = template.with_description(description);
    }
    if let Some(mime_type) = served.mime_type {
        template = template.with_mime_type(mime_type);
    }
    template
}

/// An upstream server's result of tool `name` as it sent it, or an error result naming the
/// tool when it is larger than [`MAX_PASSED_RESULT_BYTES`] or is no `CallToolResult`.
pub(super) fn passed_on(name: &str, sent: Value) -> CallToolResult {
    if !within(&sent, MAX_PASSED_RESULT_BYTES) {
        return CallToolResult::error(vec![ContentBlock::text(format!(
            "the result of tool {name:?} is larger than the {} MiB rho mcp serve passes on",
            MAX_PASSED_RESULT_BYTES / (1024 * 1024)
        ))]);
    }
    match serde_json::from_value::<CallToolResult>(sent) {
        Ok(mut result) => {
            // The call is complete whatever revision the server spoke (rho answered its input
            // requests); rmcp leaves the field out for a 2025-11-25 client.
            result.result_type = Some(rmcp::model::ResultType::COMPLETE);
            result
        }
        Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
            "the result of tool {name:?} is not a tool result: {e}"
        ))]),
    }
}

/// Whether `value` serializes to at most `cap` bytes.
pub(super) fn within(value: &Value, cap: usize) -> bool {
    /// Counts bytes, failing past the cap so a huge value is not walked to its end.
    struct Counter {
        bytes: usize,
        cap: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.bytes = self.bytes.saturating_add(buf.len());
            if self.bytes > self.cap {
                return Err(std::io::Error::other("over the cap"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(&mut Counter { bytes: 0, cap }, value).is_ok()
}

/// The MCP result of a served call: its text, its image, its structured content.
pub(super) fn result(output: ToolOutput) -> CallToolResult {
    let mut content = vec![ContentBlock::text(output.text)];
    if let Some(image) = output.image {
        content.push(ContentBlock::image(image.data, image.mime_type));
    }
    let mut result = if output.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = output.structured;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upstream_result_is_passed_on_as_sent() {
        let sent = serde_json::json!({
            "content": [
                {"type": "text", "text": "one"},
                {"type": "text", "text": "two"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "test://r", "mimeType": "text/plain", "text": "body"}},
                {"type": "resource_link", "uri": "test://l", "name": "l"},
            ],
            "structuredContent": {"n": 1},
            "isError": true,
            "_meta": {"example.com/k": "v"},
        });
        let passed = serde_json::to_value(passed_on("t", sent.clone())).unwrap();
        for key in ["content", "structuredContent", "isError", "_meta"] {
            assert_eq!(passed[key], sent[key], "{key}");
        }
    }

    #[test]
    fn completions_are_capped_at_the_protocols_hundred_with_their_total() {
        let few = completion(vec!["paris".into(), "park".into()]);
        assert_eq!(few.values, ["paris", "park"]);
        assert_eq!((few.total, few.has_more), (Some(2), Some(false)));
        let many = completion((0..150).map(|n| n.to_string()).collect());
        assert_eq!(many.values.len(), 100);
        assert_eq!((many.total, many.has_more), (Some(150), Some(true)));
    }

    #[test]
    fn an_upstream_prompt_is_passed_on_as_sent_or_refused_naming_it() {
        let sent = serde_json::json!({
            "description": "d",
            "messages": [
                {"role": "user", "content": {"type": "image", "data": "iVBO", "mimeType": "image/png"}},
                {"role": "user", "content": {"type": "resource", "resource": {"uri": "test://r", "text": "body"}}},
            ],
        });
        let Ok(GetPromptResponse::Complete(result)) = passed_prompt("p", sent.clone()) else {
            panic!("not passed on");
        };
        let passed = serde_json::to_value(result).unwrap();
        assert_eq!(passed["messages"], sent["messages"]);
        assert_eq!(passed["resultType"], "complete");
        let malformed = passed_prompt("p", serde_json::json!({"messages": 3})).unwrap_err();
        assert!(malformed.message.contains("prompt \"p\""), "{malformed:?}");
        let huge = "x".repeat(MAX_PASSED_RESULT_BYTES);
        let big = serde_json::json!({"messages": [{"role": "user", "content": {"type": "text", "text": huge}}]});
        let too_large = passed_prompt("p", big).unwrap_err();
        assert!(too_large.message.contains("larger than"), "{too_large:?}");
    }

    #[test]
    fn a_result_over_the_cap_or_not_a_result_is_an_error_naming_the_tool() {
        assert!(within(&Value::from("x".repeat(10)), 12));
        assert!(!within(&Value::from("x".repeat(11)), 12));
        let huge = serde_json::json!({
            "content": [{"type": "text", "text": "x".repeat(MAX_PASSED_RESULT_BYTES)}],
        });
        let refused = passed_on("big_tool", huge);
        assert_eq!(refused.is_error, Some(true));
        let text = serde_json::to_string(&refused.content).unwrap();
        assert!(
            text.contains("big_tool") && text.contains("16 MiB"),
            "{text}"
        );
        let odd = passed_on("odd_tool", serde_json::json!({"content": 3}));
        assert_eq!(odd.is_error, Some(true));
        assert!(
            serde_json::to_string(&odd.content)
                .unwrap()
                .contains("odd_tool")
        );
    }
}
