//! The OpenAI chat-completions wire format: the request body rho sends, and the accumulation of
//! streamed chunks (or one plain completion) into a [`ChatResponse`].
//!
//! Parsing is deliberately lenient, because "OpenAI-compatible" servers differ in detail: null
//! and missing fields are the same, reasoning arrives as `reasoning_content` (llama.cpp, vLLM,
//! DeepSeek) or `reasoning` (OpenRouter, Ollama), tool-call arguments may be an object instead
//! of a string, and usage may come with the last choice or in a chunk of its own.

use serde_json::Value;
#[cfg(test)]
use serde_json::json;

use super::chat::{ChatMessage, ChatRequest, ChatResponse, Role, StreamEvent, ToolCall, Usage};
use super::finish_reason::FinishReason;

/// The JSON body of one streaming request, serialized straight from the borrowed
/// conversation (no intermediate JSON tree, no copies of messages or schemas).
pub(crate) fn request_body(model: &str, request: &ChatRequest<'_>) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(&Body {
        model,
        messages: request.messages.iter().map(|m| WireMessage(m)).collect(),
        tools: request.tools.iter().map(WireTool).collect(),
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
    })
}

#[derive(serde::Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    stream: bool,
    stream_options: StreamOptions,
}

#[derive(serde::Serialize)]
struct StreamOptions {
    include_usage: bool,
}

struct WireTool<'a>(&'a super::chat::ToolDefinition);

impl serde::Serialize for WireTool<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        #[derive(serde::Serialize)]
        struct Function<'a> {
            name: &'a str,
            description: &'a str,
            parameters: &'a Value,
        }
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("type", "function")?;
        map.serialize_entry(
            "function",
            &Function {
                name: &self.0.name,
                description: &self.0.description,
                parameters: &self.0.parameters,
            },
        )?;
        map.end()
    }
}

struct WireMessage<'a>(&'a ChatMessage);

impl serde::Serialize for WireMessage<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let message = self.0;
        let mut map = serializer.serialize_map(None)?;
        match message.role {
            Role::System => {
                map.serialize_entry("role", "system")?;
                map.serialize_entry("content", &message.content)?;
            }
            Role::User => {
                map.serialize_entry("role", "user")?;
                if message.images.is_empty() {
                    map.serialize_entry("content", &message.content)?;
                } else {
                    // Images ride as content parts (data URLs), after the text.
                    let mut parts =
                        vec![serde_json::json!({"type": "text", "text": message.content})];
                    parts.extend(message.images.iter().map(|image| {
                        serde_json::json!({
                            "type": "image_url",
                            "image_url": {"url": format!("data:{};base64,{}", image.mime_type, image.data)},
                        })
                    }));
                    map.serialize_entry("content", &parts)?;
                }
            }
            Role::Tool => {
                map.serialize_entry("role", "tool")?;
                map.serialize_entry(
                    "tool_call_id",
                    message.tool_call_id.as_deref().unwrap_or_default(),
                )?;
                map.serialize_entry("content", &message.content)?;
            }
            Role::Assistant => {
                map.serialize_entry("role", "assistant")?;
                // The canonical form of a tools-only turn is `content: null`.
                if message.content.is_empty() && !message.tool_calls.is_empty() {
                    map.serialize_entry("content", &())?;
                } else {
                    map.serialize_entry("content", &message.content)?;
                }
                if !message.tool_calls.is_empty() {
                    let calls: Vec<WireCall<'_>> =
                        message.tool_calls.iter().map(WireCall).collect();
                    map.serialize_entry("tool_calls", &calls)?;
                }
            }
        }
        map.end()
    }
}

struct WireCall<'a>(&'a ToolCall);

impl serde::Serialize for WireCall<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        #[derive(serde::Serialize)]
        struct Function<'a> {
            name: &'a str,
            arguments: &'a str,
        }
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("id", &self.0.id)?;
        map.serialize_entry("type", "function")?;
        map.serialize_entry(
            "function",
            &Function {
                name: &self.0.name,
                arguments: wire_arguments(&self.0.arguments),
            },
        )?;
        map.end()
    }
}

/// Arguments as sent back in the history. Servers that render chat templates (llama.cpp and
/// others) parse them and fail the whole request on invalid JSON, so text that is not a JSON
/// value goes back as `{}`; the tool result already told the model what was wrong. The check
/// builds no JSON tree.
fn wire_arguments(arguments: &str) -> &str {
    if serde_json::from_str::<serde::de::IgnoredAny>(arguments).is_ok() {
        arguments
    } else {
        "{}"
    }
}

/// The error message in an error body: `error.message`, `error` as text, `message` or
/// `detail`.
pub(crate) fn error_message(body: &Value) -> Option<String> {
    let error = body.get("error");
    error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .or_else(|| error.and_then(Value::as_str))
        .or_else(|| body.get("message").and_then(Value::as_str))
        .or_else(|| body.get("detail").and_then(Value::as_str))
        .map(str::to_owned)
}

/// Text of a `content`-like field: a string, or the text parts of an array.
fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str).or(part.as_str()))
            .collect(),
        _ => String::new(),
    }
}

fn reasoning_of(value: &Value) -> String {
    let reasoning = text_of(value.get("reasoning_content"));
    if reasoning.is_empty() {
        text_of(value.get("reasoning"))
    } else {
        reasoning
    }
}

/// Arguments as text: a string verbatim, anything else serialized.
fn arguments_of(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

fn count(value: Option<&Value>) -> u64 {
    value
        .and_then(|v| {
            v.as_u64()
                .or_else(|| v.as_f64().map(|f| f.max(0.0).round() as u64))
        })
        .unwrap_or(0)
}

fn usage_of(value: &Value) -> Usage {
    let input_tokens = count(value.get("prompt_tokens"));
    let output_tokens = count(value.get("completion_tokens"));
    let total = count(value.get("total_tokens"));
    Usage {
        input_tokens,
        output_tokens,
        total_tokens: if total == 0 {
            input_tokens + output_tokens
        } else {
            total
        },
        total_cost: value
            .get("cost")
            .or_else(|| value.get("total_cost"))
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
        request_count: 1,
    }
}

/// An error the server reported inside a 2xx answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReportedError {
    /// Its message.
    pub message: String,
    /// `error.code`, when that is an HTTP status (OpenRouter reports upstream failures so).
    pub status: Option<u16>,
}

impl ReportedError {
    pub(crate) fn from_body(body: &Value) -> Self {
        let status = body
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(|c| {
                c.as_u64()
                    .or_else(|| c.as_str().and_then(|s| s.parse().ok()))
            })
            .and_then(|c| u16::try_from(c).ok())
            .filter(|c| (400..=599).contains(c));
        Self {
            message: error_message(body).unwrap_or_else(|| "unspecified error".into()),
            status,
        }
    }
}

/// The first choice (index 0, or the only one).
fn first_choice(body: &Value) -> Option<&Value> {
    let choices = body.get("choices")?.as_array()?;
    choices
        .iter()
        .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
}

#[derive(Debug, Default)]
struct PartialCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

/// The answer so far.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    content: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    finish_reason: Option<FinishReason>,
    usage: Option<Usage>,
}

impl Accumulator {
    /// Applies one streamed chunk. `Err` carries an error the server reported in the stream.
    pub(crate) fn chunk(
        &mut self,
        chunk: &Value,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<(), ReportedError> {
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            return Err(ReportedError::from_body(chunk));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage_of(usage));
        }
        let Some(choice) = first_choice(chunk) else {
            return Ok(());
        };
        if let Some(delta) = choice.get("delta") {
            self.apply_message(delta, on_event, true);
        }
        self.note_finish(choice);
        Ok(())
    }

    /// Applies a plain (non-streamed) completion. `Err` carries an error the server reported.
    pub(crate) fn completion(
        &mut self,
        body: &Value,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<(), ReportedError> {
        if body.get("error").is_some_and(|e| !e.is_null()) {
            return Err(ReportedError::from_body(body));
        }
        let Some(choice) = first_choice(body) else {
            return Err(ReportedError {
                message: "the completion has no choices".into(),
                status: None,
            });
        };
        if let Some(message) = choice.get("message") {
            self.apply_message(message, on_event, false);
        }
        self.note_finish(choice);
        if let Some(usage) = body.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage_of(usage));
        }
        Ok(())
    }

    /// Whether a choice has finished (a `finish_reason` arrived).
    pub(crate) fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    fn note_finish(&mut self, choice: &Value) {
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str)
            && !reason.is_empty()
        {
            self.finish_reason = Some(FinishReason::parse(reason));
        }
    }

    fn apply_message(
        &mut self,
        message: &Value,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
        streamed: bool,
    ) {
        let reasoning = reasoning_of(message);
        if !reasoning.is_empty() {
            self.reasoning.push_str(&reasoning);
            on_event(StreamEvent::Reasoning(reasoning));
        }
        let text = text_of(message.get("content"));
        if !text.is_empty() {
            self.content.push_str(&text);
            on_event(StreamEvent::Text(text));
        }
        let Some(calls) = message.get("tool_calls").and_then(Value::as_array) else {
            return;
        };
        for (position, call) in calls.iter().enumerate() {
            if streamed {
                self.apply_call_delta(call);
            } else {
                let function = call.get("function");
                self.calls.push(PartialCall {
                    index: position as u64,
                    id: text_of(call.get("id")),
                    name: text_of(function.and_then(|f| f.get("name"))),
                    arguments: arguments_of(function.and_then(|f| f.get("arguments"))),
                });
            }
        }
    }

    /// One `delta.tool_calls[]` entry: fragments of the call at `index` are concatenated.
    fn apply_call_delta(&mut self, delta: &Value) {
        let id = text_of(delta.get("id"));
        let index = match delta.get("index").and_then(Value::as_u64) {
            Some(index) => index,
            // Servers that omit `index`: a new id opens a new call, anything else continues
            // the last one.
            None => match self.calls.iter().find(|c| !id.is_empty() && c.id == id) {
                Some(call) => call.index,
                None if !id.is_empty() || self.calls.is_empty() => {
                    self.calls.iter().map(|c| c.index + 1).max().unwrap_or(0)
                }
                None => self.calls.last().map(|c| c.index).unwrap_or(0),
            },
        };
        let position = match self.calls.iter().position(|c| c.index == index) {
            Some(position) => position,
            None => {
                self.calls.push(PartialCall {
                    index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let Some(call) = self.calls.get_mut(position) else {
            return;
        };
        if call.id.is_empty() {
            call.id = id;
        }
        let function = delta.get("function");
        let name = text_of(function.and_then(|f| f.get("name")));
        // Some servers repeat the whole name in every fragment instead of sending it once.
        if !name.is_empty() && name != call.name {
            call.name.push_str(&name);
        }
        call.arguments
            .push_str(&arguments_of(function.and_then(|f| f.get("arguments"))));
    }

    /// The complete answer. Calls without an id get `call_<n>`; a missing finish reason is
    /// derived (`tool_calls` when there are calls, else `stop`).
    pub(crate) fn finish(mut self) -> ChatResponse {
        self.calls.sort_by_key(|c| c.index);
        let mut tool_calls: Vec<ToolCall> = Vec::with_capacity(self.calls.len());
        let mut next = 1usize;
        for call in &self.calls {
            let mut id = call.id.clone();
            // Ids must be unique: tool results are matched by them.
            while id.is_empty() || tool_calls.iter().any(|c| c.id == id) {
                id = format!("call_{next}");
                next += 1;
                if self.calls.iter().any(|c| c.id == id) {
                    id.clear();
                }
            }
            tool_calls.push(ToolCall {
                id,
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            });
        }
        let finish_reason = match self.finish_reason {
            Some(reason) => reason,
            None if tool_calls.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        };
        ChatResponse {
            content: self.content,
            reasoning: self.reasoning,
            tool_calls,
            finish_reason,
            usage: self.usage.unwrap_or(Usage {
                request_count: 1,
                ..Usage::default()
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ToolDefinition;
    use std::sync::Mutex;

    fn run(chunks: &[Value]) -> (ChatResponse, Vec<StreamEvent>) {
        let events = Mutex::new(Vec::new());
        let on_event = |e: StreamEvent| events.lock().unwrap().push(e);
        let mut acc = Accumulator::default();
        for chunk in chunks {
            acc.chunk(chunk, &on_event).unwrap();
        }
        (acc.finish(), events.into_inner().unwrap())
    }

    fn delta(delta: Value) -> Value {
        json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": null }] })
    }

    #[test]
    fn interleaved_fragments_of_two_calls_are_assembled() {
        let chunks = [
            delta(json!({ "role": "assistant", "content": null })),
            delta(json!({ "tool_calls": [
                { "index": 0, "id": "call_a", "type": "function", "function": { "name": "read_file", "arguments": "" } }
            ]})),
            delta(json!({ "tool_calls": [
                { "index": 1, "id": "call_b", "type": "function", "function": { "name": "grep", "arguments": "{\"pat" } }
            ]})),
            delta(
                json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "{\"path\":" } }] }),
            ),
            delta(json!({ "tool_calls": [
                { "index": 1, "function": { "arguments": "tern\":" } },
                { "index": 0, "function": { "arguments": " \"a.txt\"}" } }
            ]})),
            delta(
                json!({ "tool_calls": [{ "index": 1, "function": { "arguments": " \"x\"}" } }] }),
            ),
            json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }] }),
            json!({ "choices": [], "usage": { "prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19, "cost": 0.25 } }),
        ];
        let (response, events) = run(&chunks);
        assert!(events.is_empty());
        assert_eq!(
            response.tool_calls,
            vec![
                ToolCall {
                    id: "call_a".into(),
                    name: "read_file".into(),
                    arguments: "{\"path\": \"a.txt\"}".into()
                },
                ToolCall {
                    id: "call_b".into(),
                    name: "grep".into(),
                    arguments: "{\"pattern\": \"x\"}".into()
                },
            ]
        );
        assert_eq!(response.finish_reason, FinishReason::ToolCalls);
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 12,
                output_tokens: 7,
                total_tokens: 19,
                total_cost: 0.25,
                request_count: 1
            }
        );
    }

    #[test]
    fn text_and_reasoning_stream_in_order() {
        let chunks = [
            delta(json!({ "reasoning_content": "think " })),
            delta(json!({ "reasoning": "more" })),
            delta(json!({ "content": "Hello" })),
            delta(json!({ "content": ", world" })),
            json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }],
                    "usage": { "prompt_tokens": 3, "completion_tokens": 2, "total_cost": 1.5 } }),
        ];
        let (response, events) = run(&chunks);
        assert_eq!(
            events,
            vec![
                StreamEvent::Reasoning("think ".into()),
                StreamEvent::Reasoning("more".into()),
                StreamEvent::Text("Hello".into()),
                StreamEvent::Text(", world".into()),
            ]
        );
        assert_eq!(response.content, "Hello, world");
        assert_eq!(response.reasoning, "think more");
        assert_eq!(response.finish_reason, FinishReason::Stop);
        assert_eq!(response.usage.total_tokens, 5);
        assert_eq!(response.usage.total_cost, 1.5);
    }

    #[test]
    fn missing_ids_and_indexes_are_tolerated() {
        let chunks = [
            delta(json!({ "tool_calls": [{ "function": { "name": "a", "arguments": "{" } }] })),
            delta(json!({ "tool_calls": [{ "function": { "name": "a", "arguments": "}" } }] })),
            delta(
                json!({ "tool_calls": [{ "id": "call_1", "function": { "name": "b", "arguments": {"k": 1} } }] }),
            ),
        ];
        let (response, _) = run(&chunks);
        let calls: Vec<(&str, &str, &str)> = response
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        // The generated id skips `call_1`, which the server gave the second call.
        assert_eq!(calls, [("call_2", "a", "{}"), ("call_1", "b", "{\"k\":1}")]);
        assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    }

    #[test]
    fn stream_error_is_reported() {
        let mut acc = Accumulator::default();
        let err = acc
            .chunk(&json!({ "error": { "message": "overloaded" } }), &|_| {})
            .unwrap_err();
        assert_eq!(err.message, "overloaded");
        assert_eq!(err.status, None);
        let err = acc
            .chunk(
                &json!({ "error": { "code": 429, "message": "slow down" } }),
                &|_| {},
            )
            .unwrap_err();
        assert_eq!(err.status, Some(429));
    }

    #[test]
    fn plain_completion_is_parsed() {
        let body = json!({
            "choices": [{ "index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "ok", "reasoning_content": "hmm",
                "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "f", "arguments": "{\"x\":1}" } }]
            }}],
            "usage": { "prompt_tokens": 4, "completion_tokens": 1, "total_tokens": 5 }
        });
        let mut acc = Accumulator::default();
        acc.completion(&body, &|_| {}).unwrap();
        let response = acc.finish();
        assert_eq!(response.content, "ok");
        assert_eq!(response.reasoning, "hmm");
        assert_eq!(response.tool_calls.len(), 1);
        assert_eq!(response.tool_calls[0].arguments, "{\"x\":1}");
        assert_eq!(response.usage.total_tokens, 5);
    }

    #[test]
    fn request_body_maps_every_role() {
        let messages = [
            ChatMessage::system("sys"),
            ChatMessage::user("hi"),
            ChatMessage::assistant(
                "",
                vec![ToolCall {
                    id: "c1".into(),
                    name: "f".into(),
                    arguments: "{not json".into(),
                }],
            ),
            ChatMessage::tool_result("c1", "f", "result"),
        ];
        let tools = [ToolDefinition {
            name: "f".into(),
            description: "does f".into(),
            parameters: json!({ "type": "object" }),
        }];
        let request = ChatRequest {
            model: "m",
            messages: messages.iter().collect(),
            tools: &tools,
        };
        let body: Value = serde_json::from_slice(&request_body("m", &request).unwrap()).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "m",
                "messages": [
                    { "role": "system", "content": "sys" },
                    { "role": "user", "content": "hi" },
                    { "role": "assistant", "content": null, "tool_calls": [
                        { "id": "c1", "type": "function", "function": { "name": "f", "arguments": "{}" } }
                    ]},
                    { "role": "tool", "tool_call_id": "c1", "content": "result" },
                ],
                "tools": [{ "type": "function", "function": {
                    "name": "f", "description": "does f", "parameters": { "type": "object" } } }],
                "stream": true,
                "stream_options": { "include_usage": true },
            })
        );
        let bare: Value = serde_json::from_slice(
            &request_body(
                "m",
                &ChatRequest {
                    model: "m",
                    messages: vec![],
                    tools: &[],
                },
            )
            .unwrap(),
        )
        .unwrap();
        assert!(bare.get("tools").is_none());
    }
}
