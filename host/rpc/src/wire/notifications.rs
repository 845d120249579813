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
