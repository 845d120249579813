//! Expanding a server's prompt (`prompts/get`): within the call budget, driven through
//! 2026-07-28 input requests like a tool call, its messages rendered as text (binary never
//! reaches the model as base64) and capped together at `max_output_bytes`, or, for a gateway,
//! the result as the server sent it.

use std::collections::BTreeMap;
use std::sync::Arc;

use rho_component::{Asker, PromptMessage, PromptRole};
use rmcp::model::{GetPromptRequestParams, ServerResult};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::McpError;
use crate::connection::Connection;
use crate::questions::InFlight;
use crate::render::{block_text, cap, message_text};
use crate::request::Failure;

impl Connection {
    /// Expands prompt `name` with `arguments`. Questions the server asks meanwhile go to
    /// `asker` (as for a tool call). The messages' text is capped together at the server's
    /// `max_output_bytes`; messages past the cap are left out.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        asker: Option<Arc<dyn Asker>>,
    ) -> Result<Vec<PromptMessage>, McpError> {
        let value = self.get_prompt_as_sent(name, arguments, asker).await?;
        let max = usize::try_from(self.spec.max_output_bytes).unwrap_or(usize::MAX);
        Ok(messages(&value, max))
    }

    /// Expands prompt `name` with `arguments` as [`Connection::get_prompt`] does, and returns
    /// the server's `GetPromptResult` as it sent it (as JSON: every content block), for a
    /// gateway to pass on.
    pub async fn get_prompt_as_sent(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        asker: Option<Arc<dyn Asker>>,
    ) -> Result<Value, McpError> {
        let fail = |message: String| McpError::Prompt {
            server: self.spec.id.clone(),
            prompt: name.to_owned(),
            message,
        };
        if !self.summary.prompts {
            return Err(fail("the server offers no prompts".into()));
        }
        let mut params = GetPromptRequestParams::new(name.to_owned());
        if !arguments.is_empty() {
            let arguments: Map<String, Value> = arguments
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            params.arguments = Some(arguments);
        }
        let flight = Arc::new(InFlight::new(
            asker,
            self.spec.call_timeout,
            CancellationToken::new(),
        ));
        let _in_flight = self.client.calls.enter(Arc::clone(&flight));
        let result = self
            .drive(params, &flight, None)
            .await
            .map_err(|failure| fail(failure_text(failure)))?;
        let ServerResult::GetPromptResult(result) = result else {
            return Err(fail(
                "the server answered with something other than a prompt".into(),
            ));
        };
        serde_json::to_value(&result).map_err(|e| fail(e.to_string()))
    }
}

/// A failed request as the error message of a prompt or resource.
pub(crate) fn failure_text(failure: Failure) -> String {
    match failure {
        Failure::Timeout(seconds) => format!("no result within the {seconds:.1} s call budget"),
        Failure::Cancelled => "cancelled".into(),
        Failure::Failed(message)
        | Failure::Unauthorized { message, .. }
        | Failure::Lost { message, .. } => message,
    }
}

/// The messages of a `GetPromptResult` (as JSON), their text capped together at `max` bytes.
fn messages(result: &Value, max: usize) -> Vec<PromptMessage> {
    let mut out = Vec::new();
    let mut left = max;
    for message in result
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = match message.get("role").and_then(Value::as_str) {
            Some("assistant") => PromptRole::Assistant,
            _ => PromptRole::User,
        };
        let text = message_text(message, block_text);
        let (text, truncated) = cap(text, left);
        left = left.saturating_sub(text.len());
        out.push(PromptMessage { role, text });
        if truncated || left == 0 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn messages_are_rendered_as_text_without_base64() {
        let result = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "hello"}},
            {"role": "assistant", "content": {"type": "image", "mimeType": "image/png", "data": "AAAA"}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "x://a", "text": "body"}}}
        ]});
        let messages = messages(&result, 1000);
        assert_eq!(
            messages,
            vec![
                PromptMessage {
                    role: PromptRole::User,
                    text: "hello".into()
                },
                PromptMessage {
                    role: PromptRole::Assistant,
                    text: "[image image/png, 3 B]".into()
                },
                PromptMessage {
                    role: PromptRole::User,
                    text: "[resource x://a]\nbody".into()
                },
            ]
        );
    }

    #[test]
    fn all_messages_together_are_capped() {
        let result = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "aaaaaaaaaa"}},
            {"role": "user", "content": {"type": "text", "text": "bbbbbbbbbb"}},
            {"role": "user", "content": {"type": "text", "text": "cccccccccc"}}
        ]});
        let messages = messages(&result, 15);
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0].text, "aaaaaaaaaa");
        assert!(
            messages[1].text.starts_with("bbbbb\n[output truncated"),
            "{}",
            messages[1].text
        );
    }
}
