//! Questions a server asks during one of its tool calls, as rho shows them: a form
//! (`elicitation/create`, mapped from the request's schema by `rho-mcp`) or a request for a
//! completion from the user's model (`sampling/createMessage`). The [`Asker`] a session hands
//! each call puts them in front of a person (`docs/mcp.md`, "Questions from a server").

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use serde::Serialize;

/// What kind of answer a form field takes. Every answer arrives as text; `rho-mcp` types it
/// back to the field's declared JSON type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    /// Free text (a JSON string).
    Text,
    /// Free text parsed back to a JSON number.
    Number,
    /// Free text parsed back to a JSON integer.
    Integer,
    /// Yes or no (a JSON boolean).
    Boolean,
    /// One of the field's `choices`.
    Choice,
    /// Any number of the field's `choices`, comma-separated (a JSON array of strings).
    MultiChoice,
}

/// One value a choice field offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Choice {
    /// The value to answer with.
    pub value: String,
    /// Its title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// One question of a form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FormField {
    /// The answer's key.
    pub name: String,
    /// A display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `text`, `number`, `integer`, `boolean`, `choice` or `multi_choice` (answers
    /// comma-separated).
    pub kind: FieldKind,
    /// The values of a choice field.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<Choice>,
    /// The default answer, as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Whether an answer is required.
    pub required: bool,
    /// The description and constraints (shown, not enforced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

/// A log message a server sent (`notifications/message`).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerLog {
    /// Its severity.
    pub level: crate::LogLevel,
    /// The logger that wrote it, when the server named one.
    pub logger: Option<String>,
    /// The message: any JSON the server sent.
    pub data: serde_json::Value,
}

/// A form a server asks the user to fill in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    /// The server's message.
    pub message: String,
    /// The questions, in the schema's order.
    pub fields: Vec<FormField>,
    /// The server's name for this question when it came as a 2026-07-28 input request (a
    /// gateway passes the question on under the same key); `None` for a 2025-11-25 request.
    pub key: Option<String>,
    /// The server's `requestedSchema` as it sent it, when the form came from one: a gateway
    /// passes it on as is, so its client shows what the server meant (titles, defaults,
    /// every enum form); `fields` is rho's reading of it.
    pub schema: Option<serde_json::Value>,
}

/// How the user answered a server's question: a form (elicitation) or a request to spend
/// the model (sampling). The one answer type from the front-end through the session to the
/// server's connection; its kind alone, [`QuestionAction`], is derived from it (the `action`
/// a front-end sends over JSON-RPC). A form's fields left out of `Accept` are unanswered; a
/// sampling request is accepted with none.
#[derive(Debug, Clone, PartialEq, Eq, strum::EnumDiscriminants)]
#[strum_discriminants(
    name(QuestionAction),
    doc = "What the user did with a question: [`QuestionAnswer`] without the answers.",
    derive(serde::Deserialize, schemars::JsonSchema),
    serde(rename_all = "lowercase")
)]
pub enum QuestionAnswer {
    /// Answered, with a form's answers as text by field name (`answers` over JSON-RPC).
    Accept(BTreeMap<String, String>),
    /// Refused; the server carries on without the information.
    Decline,
    /// Dismissed; this also ends the turn.
    Cancel,
}

impl QuestionAnswer {
    /// The answer a front-end gave as `action` and, with `accept`, its `answers`.
    pub fn from_action(action: QuestionAction, answers: Option<BTreeMap<String, String>>) -> Self {
        match action {
            QuestionAction::Accept => Self::Accept(answers.unwrap_or_default()),
            QuestionAction::Decline => Self::Decline,
            QuestionAction::Cancel => Self::Cancel,
        }
    }
}

/// Who wrote one message of a sampling conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SamplingRole {
    /// The user side of the server's conversation.
    User,
    /// The assistant side.
    Assistant,
}

/// One message of a sampling conversation, its blocks rendered as text (non-text blocks are
/// named, not sent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SamplingMessage {
    /// `user` or `assistant`.
    pub role: SamplingRole,
    /// Its text.
    pub text: String,
}

/// A server's request for a completion from the user's model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplingRequest {
    /// The server's system prompt, when it sent one.
    pub system_prompt: Option<String>,
    /// The conversation, oldest first.
    pub messages: Vec<SamplingMessage>,
    /// The token ceiling the server asked for (shown, not enforced).
    pub max_tokens: u32,
    /// The server's name for this question when it came as a 2026-07-28 input request (a
    /// gateway passes the question on under the same key); `None` for a 2025-11-25 request.
    pub key: Option<String>,
}

/// How a sampling request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SamplingAnswer {
    /// The model wrote `text`.
    Reply {
        /// The model that wrote it (the session's current model).
        model: String,
        /// What it wrote.
        text: String,
        /// Why it stopped (`endTurn`, `maxTokens`).
        stop_reason: String,
    },
    /// The user refused, nobody could be asked, or the model failed: the request is rejected
    /// with this reason.
    Refused(String),
    /// The user dismissed the question; this also ends the turn.
    Cancel,
}

/// The future an [`Asker`] returns.
pub type AskFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Puts a server's questions in front of a person on behalf of one tool call. A session gives
/// each call its own asker (naming the call); the MCP runtime uses it only while exactly that
/// call runs on the asking server.
pub trait Asker: Send + Sync {
    /// Shows `form` from `server` and waits for the answer. An asker that cannot ask declines.
    fn ask_form<'a>(&'a self, server: &'a str, form: Form) -> AskFuture<'a, QuestionAnswer>;

    /// Whether its questions go to one person, one at a time: then a server's questions queue
    /// at that server's question gate (`docs/mcp.md`, "Questions from a server"). A gateway
    /// whose every call has a client of its own answers `false`, so one client's unanswered
    /// question does not hold up another's.
    fn asks_one_person(&self) -> bool {
        true
    }

    /// A log message `server` sent while this call ran (MCP `notifications/message`), for an
    /// asker that passes such messages on to whoever made the call (a gateway's client). By
    /// default it stays in rho's own log, where every server log message goes.
    fn pass_log(&self, _server: &str, _log: &ServerLog) {}

    /// The roots to tell `server` when it asks (`roots/list`) during this call, as the
    /// `ListRootsResult` JSON (`{"roots": [...]}`), when whoever made the call has its own (a
    /// gateway's client that declared roots); `None` (the default) for rho's workspace.
    fn list_roots<'a>(&'a self, _server: &'a str) -> AskFuture<'a, Option<serde_json::Value>> {
        Box::pin(std::future::ready(None))
    }

    /// Asks the user whether `server` may use the model for `request`, then runs it.
    fn sample<'a>(
        &'a self,
        server: &'a str,
        request: SamplingRequest,
    ) -> AskFuture<'a, SamplingAnswer>;
}
