//! Method params: strict (an unknown field is `-32602`).

use super::*;

/// `prompt`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptParams {
    /// The user's message.
    pub message: String,
    /// `true`: a steering nudge, injected at the next tool-batch seam instead of starting a
    /// new turn.
    #[serde(default)]
    pub steer: bool,
    /// Server resources to read and attach before the turn starts (a failed read is an error
    /// naming the URI, and no turn starts).
    #[serde(default)]
    pub attachments: Vec<AttachmentWire>,
}

/// One resource to attach to a prompt.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachmentWire {
    /// The server offering it.
    pub server: String,
    /// Its URI.
    pub uri: String,
}

/// `questionResponse`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct QuestionResponseParams {
    /// The `questionId` of the `question/request`.
    pub question_id: u64,
    /// Accept, decline or cancel.
    pub action: rho_component::QuestionAction,
    /// With `accept`: each field's answer as text, by field name (rho types it; an answer
    /// that cannot carry its field's type declines the question).
    #[serde(default)]
    pub answers: Option<std::collections::BTreeMap<String, String>>,
}

/// `setModel`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetModelParams {
    /// A model id, or `provider:id`.
    pub model: String,
}

/// `resumeSession`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeSessionParams {
    /// The session file (JSONL) to resume.
    pub path: PathBuf,
}

/// `approvalResponse`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalResponseParams {
    /// Whether the pending call may run.
    pub approved: bool,
    /// With `approved: false`: alternative instructions; the batch is abandoned and the model
    /// re-plans with them (a redirect).
    #[serde(default)]
    pub message: Option<String>,
}

/// `complete`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteParams {
    /// The prompt command (`/mcp:<server>:<prompt>`).
    pub command: String,
    /// The argument being filled in.
    pub argument: String,
    /// What was typed of it so far.
    pub value: String,
    /// The other arguments already filled in. Its former name `arguments` is still accepted;
    /// it was renamed because JavaScript's strict mode reserves that name, so a generated
    /// client could not take it as a parameter.
    #[serde(default, rename = "filledArguments", alias = "arguments")]
    pub filled_arguments: std::collections::BTreeMap<String, String>,
}

/// Methods without params accept no params, `null`, `{}` or `[]`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}
