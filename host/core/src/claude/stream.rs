//! Claude's stream-json output, one line at a time, as the session events every front-end
//! already shows: streamed text and reasoning, tool calls (named as Claude's, `claude › Read`)
//! and their results, and the `result` line that ends a turn. Lines of kinds rho does not use
//! (status, hooks, rate limits) are skipped; a line that is not a JSON object with a `type` is
//! an error. Subagents' own messages (`parent_tool_use_id` set) are not relayed: their work
//! shows as the one call that started them.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Instant;

use serde_json::Value;

use super::ClaudeError;
use super::control::{self, Control};
use crate::provider::{ChatMessage, FinishReason, ToolCall, Usage};
use crate::session::{
    CallDenied, CallFinished, CallOutcome, CallRecord, CallStarted, LoopState, SessionEvent,
};

/// The owner shown before Claude's tool names (`claude › Bash`).
pub const CLAUDE_TOOL_OWNER: &str = "claude";
/// A tool result's text kept in its event, at most (the rest is counted).
const MAX_RESULT_BYTES: usize = 64 * 1024;

/// What one line means for the front-end.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Relayed {
    /// An event delivered in order.
    Event(SessionEvent),
    /// Streamed text, merged with undelivered text when the front-end is behind.
    Delta(SessionEvent),
    /// The turn ended.
    End(Ending),
    /// A control message (a permission prompt, or its withdrawal) waiting for rho.
    Control(Control),
}

/// How Claude said the turn ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ending {
    /// It answered: the final text, what it spent, and why it stopped.
    Answered {
        reply: String,
        usage: Usage,
        finish_reason: FinishReason,
    },
    /// It failed; Claude's words.
    Failed(String),
}

/// The state of one turn's relay.
#[derive(Debug, Default)]
pub(crate) struct Relay {
    /// Claude's session id (from `system/init` and every later line).
    pub(crate) session_id: Option<String>,
    /// The model Claude says it uses.
    pub(crate) model: Option<String>,
    /// Calls started and not yet answered: id → (Claude's tool name, arguments, start).
    open_calls: HashMap<String, (String, String, Instant)>,
    /// Every call of the turn, in order.
    pub(crate) tool_calls: Vec<CallRecord>,
    /// Model requests seen.
    pub(crate) iterations: u32,
    /// Text of the current content block arrived as deltas (the whole block that follows is
    /// then not sent again).
    text_streamed: bool,
    /// The same for reasoning.
    thinking_streamed: bool,
    /// Calls the user (or rho's mode) refused: their results show as denials.
    denied: HashSet<String>,
    /// The assistant message being put together from Claude's whole content blocks.
    assistant_message: Option<ChatMessage>,
    /// The turn's messages as rho records them (the prompt aside): Claude's text, reasoning
    /// and calls, the calls' results with their outcome, and the steering Claude took.
    transcript: Vec<ChatMessage>,
    /// Steering messages sent to Claude that it has not taken yet (it echoes each one it
    /// takes, `--replay-user-messages`), oldest first.
    steering: VecDeque<String>,
}

impl Relay {
    /// Marks call `tool_use_id` as refused: its result (Claude's refusal) is shown as a
    /// denial.
    pub(crate) fn denied(&mut self, tool_use_id: &str) {
        self.denied.insert(tool_use_id.to_owned());
    }

    /// Notes that steering message `text` was sent to Claude.
    pub(crate) fn steered(&mut self, text: String) {
        self.steering.push_back(text);
    }

    /// Whether steering sent to Claude waits to be taken: Claude takes it with its next
    /// model request in this turn, or runs it as a turn of its own right after this one.
    pub(crate) fn steering_waits(&self) -> bool {
        !self.steering.is_empty()
    }

    /// The steering Claude never took (the turn was stopped), oldest first.
    pub(crate) fn take_untaken_steering(&mut self) -> Vec<String> {
        self.steering.drain(..).collect()
    }

    /// The turn's messages so far, for the session file; the relay starts over.
    pub(crate) fn take_transcript(&mut self) -> Vec<ChatMessage> {
        self.end_assistant_message();
        std::mem::take(&mut self.transcript)
    }

    fn end_assistant_message(&mut self) {
        if let Some(message) = self.assistant_message.take() {
            self.transcript.push(message);
        }
    }

    fn assistant_message(&mut self) -> &mut ChatMessage {
        self.assistant_message
            .get_or_insert_with(|| ChatMessage::assistant(String::new(), Vec::new()))
    }

    /// What `line` means. Errors name the runtime; they never quote the line.
    pub(crate) fn line(&mut self, line: &[u8]) -> Result<Vec<Relayed>, ClaudeError> {
        let value: Value = serde_json::from_slice(line).map_err(|e| ClaudeError::Malformed {
            reason: format!("not JSON: {e}"),
        })?;
        let kind =
            value
                .get("type")
                .and_then(Value::as_str)
                .ok_or_else(|| ClaudeError::Malformed {
                    reason: "a line without a \"type\"".into(),
                })?;
        if let Some(id) = value.get("session_id").and_then(Value::as_str) {
            self.session_id = Some(id.to_owned());
        }
        let nested = value
            .get("parent_tool_use_id")
            .is_some_and(|parent| !parent.is_null());
        if nested {
            return Ok(Vec::new());
        }
        Ok(match kind {
            "system" => {
                if value.get("subtype").and_then(Value::as_str) == Some("init") {
                    self.model = value
                        .get("model")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                }
                Vec::new()
            }
            "stream_event" => self.stream_event(value.get("event").unwrap_or(&Value::Null)),
            "assistant" => self.assistant(&value),
            "user" => self.user(&value),
            "result" => vec![Relayed::End(ending(&value))],
            "control_request" | "control_cancel_request" => control::parse(&value)
                .map(Relayed::Control)
                .into_iter()
                .collect(),
            _ => Vec::new(),
        })
    }

    fn stream_event(&mut self, event: &Value) -> Vec<Relayed> {
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                self.iterations += 1;
                vec![Relayed::Event(SessionEvent::StateChange(
                    LoopState::Thinking,
                ))]
            }
            Some("content_block_delta") => {
                let delta = event.get("delta").unwrap_or(&Value::Null);
                let text = |key: &str| delta.get(key).and_then(Value::as_str).map(str::to_owned);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => text("text")
                        .map(|t| {
                            self.text_streamed = true;
                            Relayed::Delta(SessionEvent::MessageDelta(t))
                        })
                        .into_iter()
                        .collect(),
                    Some("thinking_delta") => text("thinking")
                        .map(|t| {
                            self.thinking_streamed = true;
                            Relayed::Delta(SessionEvent::ReasoningDelta(t))
                        })
                        .into_iter()
                        .collect(),
                    _ => Vec::new(),
                }
            }
            _ => Vec::new(),
        }
    }

    /// A whole content block: text and reasoning not streamed already, and tool calls.
    fn assistant(&mut self, value: &Value) -> Vec<Relayed> {
        let mut out = Vec::new();
        for block in blocks(value) {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                    join_block(&mut self.assistant_message().content, text);
                    if !std::mem::take(&mut self.text_streamed) && !text.is_empty() {
                        out.push(Relayed::Delta(SessionEvent::MessageDelta(text.to_owned())));
                    }
                }
                Some("thinking") => {
                    let text = block.get("thinking").and_then(Value::as_str).unwrap_or("");
                    join_block(&mut self.assistant_message().reasoning, text);
                    if !std::mem::take(&mut self.thinking_streamed) && !text.is_empty() {
                        out.push(Relayed::Delta(SessionEvent::ReasoningDelta(
                            text.to_owned(),
                        )));
                    }
                }
                Some("tool_use") => {
                    let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                    let name = block.get("name").and_then(Value::as_str).unwrap_or("?");
                    let arguments = block
                        .get("input")
                        .map_or_else(|| "{}".to_owned(), Value::to_string);
                    self.assistant_message().tool_calls.push(ToolCall {
                        id: id.to_owned(),
                        name: name.to_owned(),
                        arguments: arguments.clone(),
                    });
                    self.open_calls.insert(
                        id.to_owned(),
                        (name.to_owned(), arguments.clone(), Instant::now()),
                    );
                    out.push(Relayed::Event(SessionEvent::ToolCall(CallStarted {
                        call_id: id.to_owned(),
                        name: name.to_owned(),
                        display_name: display_name(name),
                        arguments,
                    })));
                    out.push(Relayed::Event(SessionEvent::StateChange(
                        LoopState::ExecutingTool,
                    )));
                }
                _ => {}
            }
        }
        out
    }

    /// Tool results Claude sends back to its model.
    fn user(&mut self, value: &Value) -> Vec<Relayed> {
        // A user message Claude echoes as it takes it: steering rho sent joins the record
        // where Claude took it. (The prompt's own echo is recorded already.)
        if value.get("isReplay").and_then(Value::as_bool) == Some(true) {
            let echoed = message_text(value);
            let taken = self
                .steering
                .iter()
                .position(|sent| sent.trim() == echoed.trim());
            if let Some(text) = taken.and_then(|at| self.steering.remove(at)) {
                self.end_assistant_message();
                self.transcript.push(ChatMessage::user(text));
            }
            return Vec::new();
        }
        let mut out = Vec::new();
        for block in blocks(value) {
            if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                continue;
            }
            self.end_assistant_message();
            let id = block
                .get("tool_use_id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let is_error = block
                .get("is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let output = bounded(result_text(block.get("content").unwrap_or(&Value::Null)));
            let (name, arguments, started) = self
                .open_calls
                .remove(&id)
                .unwrap_or_else(|| ("?".to_owned(), String::new(), Instant::now()));
            if self.denied.remove(&id) {
                self.transcript.push(ChatMessage {
                    outcome: Some(CallOutcome::Denied),
                    ..ChatMessage::tool_result(&id, &name, &output)
                });
                self.tool_calls.push(CallRecord {
                    name: name.clone(),
                    arguments,
                    outcome: CallOutcome::Denied,
                    duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                });
                out.push(Relayed::Event(SessionEvent::ToolDenied(CallDenied {
                    call_id: id,
                    display_name: display_name(&name),
                    name,
                })));
                continue;
            }
            let outcome = if is_error {
                CallOutcome::Error {
                    message: output.lines().next().unwrap_or("").to_owned(),
                }
            } else {
                CallOutcome::Success
            };
            self.transcript.push(ChatMessage {
                outcome: Some(outcome.clone()),
                ..ChatMessage::tool_result(&id, &name, &output)
            });
            self.tool_calls.push(CallRecord {
                name: name.clone(),
                arguments,
                outcome: outcome.clone(),
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            });
            out.push(Relayed::Event(SessionEvent::ToolResult(CallFinished {
                call_id: id,
                name,
                is_error,
                outcome,
                output,
                image: None,
            })));
        }
        out
    }
}

/// Adds one content block's `text` to `to` (blocks apart by a blank line).
fn join_block(to: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    if !to.is_empty() {
        to.push_str("\n\n");
    }
    to.push_str(text);
}

/// The name a person reads for Claude's tool `name`: `claude › Read`.
pub fn display_name(name: &str) -> String {
    rho_component::tool_display_name(Some(CLAUDE_TOOL_OWNER), name)
}

/// The content blocks of an `assistant` or `user` line (none when its content is a string).
/// The text of a user message line: its content as a string, or its text blocks joined.
pub(crate) fn message_text(value: &Value) -> String {
    match value.pointer("/message/content") {
        Some(Value::String(text)) => text.clone(),
        _ => blocks(value)
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n"),
    }
}

fn blocks(value: &Value) -> impl Iterator<Item = &Value> {
    value
        .pointer("/message/content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// A tool result's content as text: a string, or its text blocks joined (other blocks named).
fn result_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|part| match part.get("type").and_then(Value::as_str) {
                Some("text") => part
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                Some(other) => format!("[{other}]"),
                None => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `text`, cut at [`MAX_RESULT_BYTES`] (on a character boundary) with the rest counted.
fn bounded(text: String) -> String {
    bounded_to(text, MAX_RESULT_BYTES)
}

/// `text`, cut at `max` bytes (on a character boundary) with the rest counted.
pub(crate) fn bounded_to(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let rest = text.len() - cut;
    text.truncate(cut);
    text.push_str(&format!("\n… {rest} more bytes"));
    text
}

/// The `result` line: an answer, or why the turn failed.
fn ending(value: &Value) -> Ending {
    let failed = value
        .get("is_error")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        || value
            .get("subtype")
            .and_then(Value::as_str)
            .is_some_and(|s| s != "success");
    let result = value.get("result").and_then(Value::as_str).unwrap_or("");
    if failed {
        let subtype = value
            .get("subtype")
            .and_then(Value::as_str)
            .unwrap_or("error");
        let errors: Vec<&str> = value
            .get("errors")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let message = if !result.is_empty() {
            result.to_owned()
        } else if !errors.is_empty() {
            errors.join("; ")
        } else {
            subtype.to_owned()
        };
        return Ending::Failed(message);
    }
    let number = |pointer: &str| value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let input_tokens = number("/usage/input_tokens")
        + number("/usage/cache_read_input_tokens")
        + number("/usage/cache_creation_input_tokens");
    let output_tokens = number("/usage/output_tokens");
    let usage = Usage {
        input_tokens,
        output_tokens,
        total_tokens: input_tokens + output_tokens,
        total_cost: value
            .get("total_cost_usd")
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
        request_count: number("/num_turns"),
    };
    let finish_reason = match value.get("stop_reason").and_then(Value::as_str) {
        None | Some("end_turn" | "stop_sequence") => FinishReason::Stop,
        Some("max_tokens") => FinishReason::Length,
        Some(other) => FinishReason::parse(other),
    };
    Ending::Answered {
        reply: result.to_owned(),
        usage,
        finish_reason,
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
