//! The provider-neutral conversation: messages, tool calls, tool definitions, usage, and the
//! [`Provider`] trait a model backend implements. Sessions persist these types as they are.

use std::future::Future;
use std::pin::Pin;

use rho_component::CancelSignal;

use crate::provider::FinishReason;
use crate::session::CallOutcome;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// rho's instructions to the model.
    System,
    /// The user (prompts, steering, redirects).
    User,
    /// The model.
    Assistant,
    /// A tool result, answering one tool call.
    Tool,
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolCall {
    /// The provider's id for the call; the result message carries it back.
    pub id: String,
    /// The exported tool name.
    pub name: String,
    /// The arguments exactly as the model wrote them (JSON text, possibly invalid).
    pub arguments: String,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: Role,
    /// The text (empty for an assistant message that only calls tools).
    #[serde(default)]
    pub content: String,
    /// Reasoning text the model streamed, kept for the transcript (never sent back).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    /// Tool calls, on assistant messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call this message answers, on tool messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool name, on tool messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Images the model can look at, on user messages (a resource a server returned as an
    /// image), passed on exactly as the server encoded them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImagePart>,
    /// What happened to the call, on tool messages: kept in the session file so a resumed
    /// session shows each call as it ended (absent in files written before rho kept it, and
    /// never sent to the model, which reads `content`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<CallOutcome>,
}

/// One image in a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImagePart {
    /// The MIME type (`image/png`, ...).
    pub mime_type: String,
    /// The base64 data.
    pub data: String,
}

impl ChatMessage {
    fn plain(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
            images: Vec::new(),
            outcome: None,
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::plain(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::plain(Role::User, content)
    }

    /// An assistant message with text and tool calls.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self {
            tool_calls,
            ..Self::plain(Role::Assistant, content)
        }
    }

    /// The result of the tool call `call_id`.
    pub fn tool_result(
        call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Self {
            tool_call_id: Some(call_id.into()),
            name: Some(name.into()),
            ..Self::plain(Role::Tool, content)
        }
    }

    /// This tool message, recording how its call ended.
    pub fn with_outcome(self, outcome: CallOutcome) -> Self {
        Self {
            outcome: Some(outcome),
            ..self
        }
    }
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// The exported name.
    pub name: String,
    /// The description.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
}

/// One request to the model. It borrows the conversation: building a request copies no
/// message, so its cost does not grow with the history.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest<'a> {
    /// The model id as the endpoint knows it (empty: the provider's configured model).
    pub model: &'a str,
    /// The conversation so far, system message first.
    pub messages: Vec<&'a ChatMessage>,
    /// The tools the model may call (empty: none offered).
    pub tools: &'a [ToolDefinition],
}

/// Token counts of one or more model requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Their sum as the endpoint reported it (or computed).
    pub total_tokens: u64,
    /// Cost in the endpoint's currency, when it reports one (0 otherwise).
    pub total_cost: f64,
    /// How many model requests these figures cover.
    pub request_count: u64,
}

impl Usage {
    /// Adds `other` to these figures.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.total_tokens += other.total_tokens;
        self.total_cost += other.total_cost;
        self.request_count += other.request_count;
    }
}

/// A piece of the answer as it streams in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// Answer text.
    Text(String),
    /// Reasoning text (models that stream it separately).
    Reasoning(String),
}

/// The model's complete answer to one request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatResponse {
    /// The answer text.
    pub content: String,
    /// Reasoning text, when the model streamed any.
    pub reasoning: String,
    /// The tool calls it asked for, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Why it stopped (a provider that says nothing: [`FinishReason::Stop`]).
    pub finish_reason: FinishReason,
    /// Tokens this request used (`request_count` 1).
    pub usage: Usage,
}

/// The future a provider call returns.
pub type ProviderFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, crate::provider::ProviderError>> + Send + 'a>>;

/// A model backend.
pub trait Provider: Send + Sync {
    /// A short name for inventories (`openai-compatible`, or the configured provider id).
    fn name(&self) -> &str;

    /// Sends one request and streams the answer into `on_event`; stops promptly with
    /// [`crate::provider::ProviderError::Cancelled`] when `cancel` fires.
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest<'a>,
        on_event: &'a (dyn Fn(StreamEvent) + Send + Sync),
        cancel: &'a CancelSignal,
    ) -> ProviderFuture<'a, ChatResponse>;

    /// The model ids the endpoint offers (`GET …/models`).
    fn list_models(&self) -> ProviderFuture<'_, Vec<String>>;
}
