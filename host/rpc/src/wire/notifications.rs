//! Notification params, and the shapes they share with results (questions, resources).

use super::*;

/// `state/change`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StateChangeParams {
    /// `thinking`, `executing_tool`, `awaiting_approval` or `idle`.
    pub state: LoopState,
}

/// `message/delta` and `reasoning/delta`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DeltaParams {
    /// The streamed chunk.
    pub delta: String,
}

/// `tool/call`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolCallParams {
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

/// `tool/progress` (rho's own notification: `docs/rpc.md`, "Notification sequences"): a
/// running tool's progress.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolProgressParams {
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
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolResultParams {
    /// The model's id for the call: pairs `tool/call`, `tool/progress` and `tool/result`
    /// (rho's addition: `docs/rpc.md`, "Notification sequences").
    pub call_id: String,
    /// The exported tool name.
    pub name: String,
    /// Whether the call failed.
    pub is_error: bool,
    /// What the model reads.
    pub output: String,
}

/// `tool/denied`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolDeniedParams {
    /// The model's id for the call (as in its `tool/call`; rho's addition).
    pub call_id: String,
    /// The exported tool name.
    pub name: String,
    /// What a person reads (`docs/mcp.md`, "What people see").
    pub display_name: String,
}

/// `approval/request`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ApprovalRequestParams {
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

/// `usage`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UsageParams {
    /// The model request's number within the prompt.
    pub iteration: u32,
    /// Its tokens.
    pub usage: rho_core::provider::Usage,
    /// The context after it.
    pub context: rho_core::session::ContextSnapshot,
}

/// What happened to one call.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OutcomeWire {
    /// `success`, `error`, `denied`, `redirected` or `cancelled`.
    pub kind: OutcomeKindWire,
    /// The first line of the failure, for `error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One tool call of a prompt.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallRecordWire {
    /// The exported tool name.
    pub name: String,
    /// The arguments as the model wrote them.
    pub arguments: String,
    /// What happened.
    pub outcome: OutcomeWire,
    /// How long it ran.
    pub duration_ms: u64,
}

/// `agent/end`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentEndParams {
    /// The model's final text.
    pub reply: String,
    /// Model requests made.
    pub iterations: u32,
    /// Tokens of this prompt.
    pub usage: rho_core::provider::Usage,
    /// Every tool call.
    pub tool_calls: Vec<CallRecordWire>,
    /// Wall time.
    pub duration_ms: u64,
    /// `stop`, `length`, `max_iterations`, `aborted`, ... (another provider's value as it
    /// came).
    #[schemars(with = "FinishReasonValues")]
    pub finish_reason: FinishReason,
}

/// `agent/error`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AgentErrorParams {
    /// What failed.
    pub error: String,
}

/// One server resource or resource template.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResourceEntry {
    /// The server offering it.
    pub server: String,
    /// The resource as the server declared it.
    #[serde(flatten)]
    pub resource: rho_component::ServerResource,
}

/// `complete` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CompleteResult {
    /// Suggested values, best first (empty when the server has none, has no completions, fails
    /// or answers late).
    pub values: Vec<String>,
}
