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
