//! What a running session tells its front-end ([`SessionEvent`], delivered through an
//! [`EventSink`]), how a prompt ends ([`TurnResult`]), and how the front-end answers an
//! approval request ([`Approver`]) or a server's question ([`QuestionRequest`]).

use std::future::Future;
use std::pin::Pin;

use rho_component::{FormField, RiskLevel, SamplingMessage, ToolImage};
use serde::{Deserialize, Serialize};

use crate::provider::{FinishReason, Usage};

/// The loop's state, as `state/change` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoopState {
    /// Waiting for the model.
    Thinking,
    /// Running tool calls.
    ExecutingTool,
    /// Waiting for the user to approve a call.
    AwaitingApproval,
    /// Nothing running.
    Idle,
}

/// How full the context is, after a model request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextSnapshot {
    /// Tokens the last request's prompt used.
    pub tokens: u64,
    /// The model's context window, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// `tokens / window` as a percentage, when the window is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent: Option<f64>,
    /// Messages in the conversation.
    pub messages: usize,
}

/// What happened to one tool call (reported in `agent/end`, kept on the call's tool message in
/// the session file): `{"kind": …}`, with `message` for `error`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallOutcome {
    /// The tool ran and succeeded.
    Success,
    /// The tool ran and failed (or could not run); the model read why.
    Error {
        /// The first line of the failure.
        message: String,
    },
    /// The approval gate or the user refused it.
    Denied,
    /// The user redirected instead of approving; the batch was abandoned.
    Redirected,
    /// The user aborted while it ran.
    Cancelled,
}

/// One tool call of a prompt, for `agent/end`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallRecord {
    /// The exported tool name.
    pub name: String,
    /// The arguments as the model wrote them.
    pub arguments: String,
    /// What happened.
    pub outcome: CallOutcome,
    /// How long it ran (0 when it did not run).
    pub duration_ms: u64,
}

/// How a prompt ended (`agent/end`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnResult {
    /// The model's final text.
    pub reply: String,
    /// Model requests made.
    pub iterations: u32,
    /// Tokens used by this prompt.
    pub usage: Usage,
    /// Every tool call, in order.
    pub tool_calls: Vec<CallRecord>,
    /// Wall time of the prompt.
    pub duration_ms: u64,
    /// The model's last reason (`stop`, `length`, ...), `tool_calls` (iteration budget spent
    /// with calls pending), `max_iterations` or `aborted`.
    pub finish_reason: FinishReason,
}

/// Something a front-end shows while a prompt runs. Names follow the RPC notifications of
/// `docs/rpc.md`.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    /// The agent began processing a prompt.
    AgentStart,
    /// The loop changed state.
    StateChange(LoopState),
    /// Answer text streamed in.
    MessageDelta(String),
    /// Reasoning text streamed in.
    ReasoningDelta(String),
    /// The model asked for a tool call (`tool/call`).
    ToolCall(CallStarted),
    /// The approval gate needs the user (`approval/request`).
    ApprovalRequest(ApprovalAsked),
    /// A tool call was refused, by the mode or by the user (`tool/denied`).
    ToolDenied(CallDenied),
    /// A running tool reported progress (MCP progress notifications, WASM `report-progress`):
    /// at most [`PROGRESS_REPORTS_PER_CALL`](crate::session::PROGRESS_REPORTS_PER_CALL) per
    /// call, messages cut to 1 KiB, so a chatty tool cannot grow a front end's queue without
    /// end (`tool/progress`).
    ToolProgress(CallProgress),
    /// A tool call finished (`tool/result`).
    ToolResult(CallFinished),
    /// One model request's usage and the context after it (`usage`).
    Usage(UsageReport),
    /// The prompt finished.
    AgentEnd(TurnResult),
    /// The loop failed (the model could not be reached, ...).
    AgentError(String),
    /// A server asks the user something during one of its tool calls; the front-end answers
    /// with the question's id.
    Question(QuestionRequest),
    /// rho started an MCP server again after its session was lost, or gave up on it
    /// (`docs/mcp.md`, "Servers that come back").
    ServerRestart(crate::ServerRestart),
    /// A server's tool list changed (it said so, it was started again, or a lazy server's
    /// first start listed other tools than the tool cache): the new list is used from this
    /// turn on (`docs/mcp.md`, "Tool lists that change").
    ToolsChanged(ToolsChanged),
    /// An MCP server's tool list became usable in the session: at mount (live for a server
    /// started with the session, from the tool cache for a lazy one), and live at the turn
    /// boundary after a lazy server's first start (`docs/mcp.md`, "Lifecycle evidence").
    ToolsetInitialized(crate::ServerToolset),
    /// The session closed an MCP server (end of input, a signal, `reloadExtensions`).
    ToolsetClosed(crate::ServerToolset),
    /// A server's tools digest differs from the one the resumed session file recorded.
    ToolsetChanged(crate::ToolsetChanged),
    /// Something rho itself tells the user about the turn, never part of the model's reply
    /// or the session file (`notice`): a Claude runtime session that could not be resumed.
    Notice(Notice),
}

/// `tool/call`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CallStarted {
    /// The model's id for the call: pairs `tool/call`, `tool/progress` and `tool/result`
    /// (rho's addition: `docs/rpc.md`, "Notification sequences").
    pub call_id: String,
    /// The exported tool name.
    pub name: String,
    /// What a person reads (`everything › get-env`; `docs/mcp.md`, "What people see"); the
    /// exported name when the session has no such tool.
    pub display_name: String,
    /// The arguments as the model wrote them (JSON text).
    pub arguments: String,
}

/// `approval/request`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ApprovalAsked {
    /// The model's id for the call asked about (as in its `tool/call`; rho's addition).
    pub call_id: String,
    /// The exported tool name.
    pub tool: String,
    /// What a person reads (`docs/mcp.md`, "What people see").
    pub display_name: String,
    /// The arguments as the model wrote them (JSON text).
    pub arguments: String,
    /// `read`, `write` or `destructive`.
    pub risk: RiskLevel,
}

/// `tool/denied`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CallDenied {
    /// The model's id for the call (as in its `tool/call`; rho's addition).
    pub call_id: String,
    /// The exported tool name.
    pub name: String,
    /// What a person reads (`docs/mcp.md`, "What people see").
    pub display_name: String,
}

/// `tool/progress` (rho's own notification: `docs/rpc.md`, "Notification sequences"): a
/// running tool's progress.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CallProgress {
    /// The model's id for the call: pairs `tool/call`, `tool/progress` and `tool/result`
    /// (rho's addition: `docs/rpc.md`, "Notification sequences").
    pub call_id: String,
    /// The exported tool name.
    pub name: String,
    /// How far along, in the tool's own units.
    pub progress: f64,
    /// The total, when the tool knows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A short message, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `tool/result`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CallFinished {
    /// The model's id for the call: pairs `tool/call`, `tool/progress` and `tool/result`
    /// (rho's addition: `docs/rpc.md`, "Notification sequences").
    pub call_id: String,
    /// The exported tool name.
    pub name: String,
    /// Whether the call failed.
    pub is_error: bool,
    /// How it ended: a failure while the turn was being stopped is `Cancelled` (reported in
    /// `agent/end`, not here).
    #[serde(skip)]
    #[schemars(skip)]
    pub outcome: CallOutcome,
    /// What the model reads.
    pub output: String,
    /// The first image the result carried (within its budget), for a front-end to draw; the
    /// model reads its descriptor in `output` (not on the wire).
    #[serde(skip)]
    #[schemars(skip)]
    pub image: Option<ToolImage>,
}

/// `usage`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct UsageReport {
    /// The model request's number within the prompt.
    pub iteration: u32,
    /// Its tokens.
    pub usage: Usage,
    /// The context after it.
    pub context: ContextSnapshot,
}

/// A note from rho to the user (`notice`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Notice {
    /// What rho says, one sentence or a few.
    pub message: String,
}

/// What changed in one server's tool list, by the server's own tool names (`tools/changed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ToolsChanged {
    /// The server identity.
    pub server: String,
    /// Still offered with a new definition.
    pub revised: Vec<String>,
    /// No longer offered: calls fail, saying the server withdrew it.
    pub withdrawn: Vec<String>,
    /// Newly offered, and mounted under new exported names.
    pub added: Vec<String>,
}

impl SessionEvent {
    /// Whether a later event of the same kind may be merged into this one when the front-end
    /// falls behind (streamed text and progress); every other event is delivered as it is.
    pub fn coalesces_with(&self, later: &Self) -> bool {
        match (self, later) {
            (Self::MessageDelta(_), Self::MessageDelta(_))
            | (Self::ReasoningDelta(_), Self::ReasoningDelta(_)) => true,
            (Self::ToolProgress(a), Self::ToolProgress(b)) => a.call_id == b.call_id,
            _ => false,
        }
    }

    /// Merges `later` (of the same kind, see [`SessionEvent::coalesces_with`]) into `self`:
    /// text is appended, progress is replaced by the newer report.
    pub fn absorb(&mut self, later: Self) {
        match (self, later) {
            (Self::MessageDelta(text), Self::MessageDelta(more))
            | (Self::ReasoningDelta(text), Self::ReasoningDelta(more)) => text.push_str(&more),
            (this, later) => *this = later,
        }
    }
}

/// What kind of question a server asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum QuestionKind {
    /// A form (`elicitation/create`).
    Elicitation,
    /// Permission to spend the user's model on the server's request (`sampling/createMessage`).
    Sampling,
}

/// A server's question, as a front-end shows it: titled with the asking server, attached to
/// the tool call that caused it. It is the params of `question/request` (`id` spelled
/// `questionId`), answered with `questionResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuestionRequest {
    /// The id `questionResponse` names.
    #[serde(rename = "questionId")]
    pub id: u64,
    /// `elicitation` (a form) or `sampling` (permission to use the model).
    pub kind: QuestionKind,
    /// The asking server's identity.
    pub server: String,
    /// The tool call the question belongs to (as in `tool/call`).
    pub call_id: String,
    /// The server's message, or what the server asks the model to do.
    pub message: String,
    /// The form's questions (elicitation).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FormField>,
    /// The conversation the server wants the model to continue (sampling).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<SamplingMessage>,
    /// The token ceiling the server asked for (sampling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

pub use rho_component::QuestionAnswer;

/// The future an [`EventSink`] returns.
pub type SinkFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Where a session's events go. Delivery applies backpressure: [`EventSink::send`] waits while
/// the front-end is behind, so a slow reader slows the session instead of growing a queue;
/// [`EventSink::coalesce`] never waits and merges streamed text and progress that have not
/// been delivered yet.
pub trait EventSink: Send + Sync {
    /// Delivers `event` after everything sent before it, waiting for room.
    fn send(&self, event: SessionEvent) -> SinkFuture<'_>;
    /// Delivers a streamed delta or progress report as soon as there is room, merged with
    /// undelivered ones of its kind; never waits (called from synchronous callbacks).
    fn coalesce(&self, event: SessionEvent);
}

/// A sink that forgets everything (compaction, tests that only look at results).
#[derive(Debug, Clone, Copy, Default)]
pub struct Discard;

impl EventSink for Discard {
    fn send(&self, _: SessionEvent) -> SinkFuture<'_> {
        Box::pin(async {})
    }

    fn coalesce(&self, _: SessionEvent) {}
}

/// The user's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run the call.
    Approve,
    /// Run the call, and every later call of this tool in this session without asking.
    ApproveForSession,
    /// Do not run it; the model continues without it.
    Deny,
    /// Do not run it, abandon the batch, and give the model these instructions instead.
    Redirect(String),
}

/// The future an approver returns.
pub type ApprovalFuture<'a> = Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>>;

/// Asks the user about one call. The session has already emitted
/// [`SessionEvent::ApprovalRequest`]; the approver waits for the answer.
pub trait Approver: Send + Sync {
    /// The decision for `tool` with `arguments`.
    fn decide<'a>(
        &'a self,
        tool: &'a str,
        arguments: &'a str,
        risk: RiskLevel,
    ) -> ApprovalFuture<'a>;
}

/// An approver for front-ends that cannot ask anyone: every request is denied.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

impl Approver for DenyAll {
    fn decide<'a>(&'a self, _: &'a str, _: &'a str, _: RiskLevel) -> ApprovalFuture<'a> {
        Box::pin(async { ApprovalDecision::Deny })
    }
}
