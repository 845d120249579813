//! A server's `sampling/createMessage` as a [`SamplingRequest`] the session can show and run,
//! and the model's reply as the protocol's result (`docs/mcp.md`, "Sampling").
//! Model preferences, `includeContext`, temperature, stop sequences and tools are not honoured:
//! the session's own model answers, and only text reaches it.

use rho_component::{SamplingMessage, SamplingRequest, SamplingRole};
use serde_json::{Value, json};

use crate::render::message_text;

/// More messages than this is refused rather than shown.
const MAX_MESSAGES: usize = 200;
/// More conversation text than this (bytes) is refused too.
const MAX_TEXT: usize = 256 * 1024;

/// The request as rho shows it, or why it is refused.
pub(crate) fn request(params: &Value) -> Result<SamplingRequest, String> {
    let messages = params
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("the request has no messages")?;
    if messages.is_empty() {
        return Err("the request has no messages".into());
    }
    if messages.len() > MAX_MESSAGES {
        return Err(format!("the request has more than {MAX_MESSAGES} messages"));
    }
    let mut flattened = Vec::with_capacity(messages.len());
    let mut total = 0usize;
    for message in messages {
        let role = match message.get("role").and_then(Value::as_str) {
            Some("assistant") => SamplingRole::Assistant,
            Some("user") => SamplingRole::User,
            _ => return Err("a message has no valid role".into()),
        };
        let text = message_text(message, block_text);
        total = total.saturating_add(text.len());
        flattened.push(SamplingMessage { role, text });
    }
    let system_prompt = params
        .get("systemPrompt")
        .and_then(Value::as_str)
        .map(str::to_owned);
    total = total.saturating_add(system_prompt.as_ref().map_or(0, String::len));
    if total > MAX_TEXT {
        return Err(format!("the conversation is longer than {MAX_TEXT} bytes"));
    }
    let max_tokens = params
        .get("maxTokens")
        .and_then(Value::as_u64)
        .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX));
    Ok(SamplingRequest {
        system_prompt,
        messages: flattened,
        max_tokens,
        key: None,
    })
}

/// One content block as text: text as is; anything else named, never sent.
fn block_text(block: &Value) -> String {
    let kind = block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    match kind {
        "text" => block
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        "image" | "audio" => {
            let mime = block
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or("application/octet-stream");
            format!("[{kind} {mime}]")
        }
        "tool_use" => {
            let name = block.get("name").and_then(Value::as_str).unwrap_or("?");
            format!("[tool use {name}]")
        }
        "tool_result" => "[tool result]".to_owned(),
        other => format!("[{other}]"),
    }
}

/// The `CreateMessageResult` for a reply: the model that wrote it, as the assistant, as text.
pub(crate) fn result(model: &str, text: &str, stop_reason: &str) -> Value {
    json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": model,
        "stopReason": stop_reason,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_conversation_is_flattened_to_text_and_other_blocks_are_named() {
        let params = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "hello"}},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image", "mimeType": "image/png", "data": "AAAA"},
                    {"type": "tool_use", "id": "1", "name": "search", "input": {}}
                ]},
                {"role": "user", "content": [
                    {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"},
                    {"type": "tool_result", "toolUseId": "1", "content": []}
                ]}
            ],
            "systemPrompt": "be brief",
            "maxTokens": 100,
            "temperature": 0.7,
            "modelPreferences": {"hints": [{"name": "claude"}]},
            "includeContext": "allServers",
            "stopSequences": ["x"]
        });
        let request = request(&params).unwrap();
        assert_eq!(request.system_prompt.as_deref(), Some("be brief"));
        assert_eq!(request.max_tokens, 100);
        assert_eq!(
            request.messages,
            vec![
                SamplingMessage {
                    role: SamplingRole::User,
                    text: "hello".into()
                },
                SamplingMessage {
                    role: SamplingRole::Assistant,
                    text: "look\n[image image/png]\n[tool use search]".into()
                },
                SamplingMessage {
                    role: SamplingRole::User,
                    text: "[audio audio/wav]\n[tool result]".into()
                },
            ]
        );
        assert!(
            !format!("{request:?}").contains("AAAA"),
            "no payload reaches the model"
        );
    }

    #[test]
    fn malformed_or_oversized_requests_are_refused() {
        assert!(request(&json!({})).is_err());
        assert!(request(&json!({"messages": []})).is_err());
        assert!(request(&json!({"messages": [{"role": "system", "content": []}]})).is_err());
        let many: Vec<Value> = (0..201)
            .map(|_| json!({"role": "user", "content": {"type": "text", "text": "x"}}))
            .collect();
        assert!(request(&json!({ "messages": many })).is_err());
        let long = "x".repeat(MAX_TEXT + 1);
        let params =
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": long}}]});
        assert!(request(&params).is_err());
    }

    #[test]
    fn the_reply_names_the_model_and_is_the_assistant_speaking_text() {
        assert_eq!(
            result("m-1", "hi", "endTurn"),
            json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m-1", "stopReason": "endTurn"})
        );
    }
}
