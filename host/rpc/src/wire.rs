//! Every shape on the wire: method params and results, and notification params, as typed
//! structs. Params deserialize strictly (unknown fields are `-32602`); results and
//! notifications serialize exactly as `docs/rpc.md` spells them. The OpenRPC document in
//! `schemas/rho-rpc.openrpc.json` is generated from these types (`openrpc.rs`). A field that
//! holds one of a fixed set of words is an enum, never a `String`: a host enum where the host
//! has one (its serde spelling is the wire's and its derived schema lists its values;
//! [`FinishReason`], which also keeps values rho does not know, has its value set built from
//! its own list, `---------- value sets ----------`), or, where the host value carries data
//! (a server's error, a skill's plugin), a wire enum converted from it by an exhaustive match
//! (`---------- wire enums ----------`). Either way the document lists exactly what the host
//! can send.

use std::borrow::Cow;
use std::path::PathBuf;

use rho_component::{
    DiagnosticCode, FieldKind, PermissionMode, RiskLevel, SamplingRole, Scope, Severity,
    SkillSource, ToolOrigin,
};
use rho_core::doctor::{CheckKind, CheckStatus};
use rho_core::provider::{FinishReason, Role};
use rho_core::session::{CallOutcome, LoopState, QuestionKind};
use rho_core::{PluginStatus, ProviderSource, ServerSource, ServerStatus};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

// ---------- value sets ----------

/// The schema of [`FinishReason`]: one of the reasons rho knows, or any other string a
/// provider sent (kept as it came).
struct FinishReasonValues;

impl JsonSchema for FinishReasonValues {
    fn schema_name() -> Cow<'static, str> {
        "FinishReason".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let known: Vec<&str> = FinishReason::KNOWN
            .iter()
            .map(FinishReason::as_str)
            .collect();
        json_schema!({
            "anyOf": [
                { "type": "string", "enum": known },
                { "type": "string" },
            ]
        })
    }
}

// ---------- wire enums ----------
//
// Host values that carry data (a skill's plugin, a server's error, a tool's server) reach the
// wire as one word; these enums are those words, each converted from the host type by an
// exhaustive match, so a new host variant cannot go unspelled.

/// Where a skill comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SkillSourceWire {
    /// Embedded in the rho binary.
    Builtin,
    /// A loose skill folder under the user's home.
    User,
    /// A loose skill folder in the project.
    Project,
    /// A plugin installed in the project.
    ProjectPlugin,
    /// A plugin installed for the user.
    UserPlugin,
}

impl From<&SkillSource> for SkillSourceWire {
    fn from(source: &SkillSource) -> Self {
        match source {
            SkillSource::BuiltIn => Self::Builtin,
            SkillSource::User => Self::User,
            SkillSource::Project => Self::Project,
            SkillSource::Plugin {
                scope: Scope::Project,
                ..
            } => Self::ProjectPlugin,
            SkillSource::Plugin {
                scope: Scope::User, ..
            } => Self::UserPlugin,
        }
    }
}

/// The live state of an MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ServerStatusWire {
    /// Valid and enabled, not started, nothing known of its tools yet (a lazy server whose
    /// first start, filling the tool cache, is still to come).
    Configured,
    /// Not started: its tools come from the tool cache; the first use starts it.
    Known,
    /// Running (handshake done, tools listed), not used yet in this session.
    Started,
    /// Running, and used by a call, a prompt or a resource read.
    Used,
    /// Disabled by its entry or its plugin.
    Disabled,
    /// A project plugin's server the user has not trusted; never started (`error` says how
    /// to trust it).
    Untrusted,
    /// Its entry is invalid or it failed to start (`error` says why).
    Failed,
}

impl From<&ServerStatus> for ServerStatusWire {
    fn from(status: &ServerStatus) -> Self {
        match status {
            ServerStatus::Configured => Self::Configured,
            ServerStatus::Known => Self::Known,
            ServerStatus::Started => Self::Started,
            ServerStatus::Used => Self::Used,
            ServerStatus::Disabled => Self::Disabled,
            ServerStatus::Untrusted(_) => Self::Untrusted,
            ServerStatus::Invalid(_) | ServerStatus::Failed(_) => Self::Failed,
        }
    }
}

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolSourceWire {
    /// Compiled into rho.
    Builtin,
    /// Served by an MCP server (`server` names it).
    Mcp,
    /// Exported by a WASM component of a plugin (`plugin` names it).
    Wasm,
}

impl From<&ToolOrigin> for ToolSourceWire {
    fn from(origin: &ToolOrigin) -> Self {
        match origin {
            ToolOrigin::Builtin => Self::Builtin,
            ToolOrigin::Mcp { .. } => Self::Mcp,
            ToolOrigin::Wasm { .. } => Self::Wasm,
        }
    }
}

/// What happened to one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeKindWire {
    /// The tool ran and succeeded.
    Success,
    /// The tool ran and failed, or could not run (`message` says why).
    Error,
    /// The approval gate or the user refused it.
    Denied,
    /// The user redirected instead of approving; the batch was abandoned.
    Redirected,
    /// The user aborted while it ran.
    Cancelled,
}

impl From<&CallOutcome> for OutcomeKindWire {
    fn from(outcome: &CallOutcome) -> Self {
        match outcome {
            CallOutcome::Success => Self::Success,
            CallOutcome::Error { .. } => Self::Error,
            CallOutcome::Denied => Self::Denied,
            CallOutcome::Redirected => Self::Redirected,
            CallOutcome::Cancelled => Self::Cancelled,
        }
    }
}

// ---------- params ----------

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

/// What the user did with a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum QuestionAction {
    /// Answered (`answers` holds the form's answers as text).
    Accept,
    /// Refused; the server carries on without it.
    Decline,
    /// Dismissed; the turn ends.
    Cancel,
}

/// `questionResponse`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct QuestionResponseParams {
    /// The `questionId` of the `question/request`.
    pub question_id: u64,
    /// Accept, decline or cancel.
    pub action: QuestionAction,
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

// ---------- results ----------

/// An empty result (`{}`).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Empty {}

/// `prompt` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromptResult {
    /// The model's final text.
    pub reply: String,
    /// `stop`, `length`, `max_iterations`, `aborted`, ... (another provider's value as it
    /// came).
    #[schemars(with = "FinishReasonValues")]
    pub finish_reason: FinishReason,
}

/// `prompt` result: the turn's reply, or `{}` for a steering nudge.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum PromptAnswer {
    /// An ordinary prompt ended.
    Turn(PromptResult),
    /// A steering nudge was queued for the next seam.
    Steered(Empty),
}

/// Token counts.
#[derive(Debug, Clone, Copy, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageWire {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Their sum.
    pub total_tokens: u64,
    /// Cost as the endpoint reports it (0 when it reports none).
    pub total_cost: f64,
    /// Model requests covered.
    pub request_count: u64,
}

/// How full the context is.
#[derive(Debug, Clone, Copy, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextWire {
    /// Tokens of the last request.
    pub tokens: u64,
    /// The context window, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// Percentage of the window used, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent: Option<f64>,
    /// Messages in the conversation.
    pub messages: usize,
}

/// `getState` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StateResult {
    /// The model id (`null` when no provider could be chosen).
    pub model: Option<String>,
    /// The provider identity.
    pub provider: Option<String>,
    /// Where the provider came from: `flags` (`--endpoint`), `config` (`[providers.*]`) or
    /// `builtin` (nothing configured: the model is rho's default guess, not a choice).
    pub provider_source: Option<ProviderSource>,
    /// Why no provider could be chosen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_error: Option<String>,
    /// The workspace.
    pub cwd: PathBuf,
    /// The session id (`null` when ephemeral).
    pub session_id: Option<String>,
    /// The session file (`null` when ephemeral).
    pub session_file: Option<PathBuf>,
    /// The permission mode: `read-only`, `ask`, `ask-destructive` or `allow-all`.
    pub permission_mode: PermissionMode,
}

/// A tool call inside a message.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolCallWire {
    /// The provider's call id.
    pub id: String,
    /// The exported tool name.
    pub name: String,
    /// The arguments as the model wrote them.
    pub arguments: String,
}

/// One message of the conversation.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageWire {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: Role,
    /// The text.
    pub content: String,
    /// Reasoning text (assistant messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Tool calls (assistant messages).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallWire>,
    /// The call answered (tool messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool name (tool messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `getMessages` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MessagesResult {
    /// The conversation, oldest first (the system prompt is not included).
    pub messages: Vec<MessageWire>,
}

/// `setModel` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SetModelResult {
    /// The model now in use.
    pub model: String,
    /// Its provider.
    pub provider: String,
}

/// One model a provider offers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ModelWire {
    /// The model id.
    pub id: String,
    /// The provider.
    pub provider: String,
}

/// `listModels` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ModelsResult {
    /// Models from configuration and from each reachable provider.
    pub models: Vec<ModelWire>,
    /// Providers that could not be asked, with the reason.
    pub errors: Vec<ProviderProblem>,
}

/// A provider that failed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProviderProblem {
    /// The provider.
    pub provider: String,
    /// Why.
    pub error: String,
}

/// One provider.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderWire {
    /// The identity.
    pub id: String,
    /// `flags`, `config` or `builtin`.
    pub source: ProviderSource,
    /// The endpoint.
    pub endpoint: String,
    /// Outside this machine.
    pub external: bool,
    /// The default model.
    pub default_model: Option<String>,
    /// Whether `GET …/models` answered within 3 s.
    pub reachable: bool,
    /// Why it is unusable or unreachable.
    pub error: Option<String>,
    /// Whether this is the provider in use.
    pub active: bool,
}

/// `listProviders` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProvidersResult {
    /// Every provider.
    pub providers: Vec<ProviderWire>,
}

/// `getSessionStats` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatsResult {
    /// The session id (`null` when ephemeral).
    pub session_id: Option<String>,
    /// The session file.
    pub session_file: Option<PathBuf>,
    /// Tokens over the session's life (the user's turns and compactions).
    pub usage: UsageWire,
    /// The usage ledger by purpose: the user's turns, and what servers spent through
    /// sampling.
    pub usage_by_purpose: UsageByPurposeWire,
    /// The context after the last request.
    pub context: ContextWire,
    /// Messages in the conversation.
    pub messages: usize,
}

/// Tokens by what they were spent on.
#[derive(Debug, Clone, Copy, Default, Serialize, JsonSchema)]
pub struct UsageByPurposeWire {
    /// The user's turns and compactions.
    pub turns: UsageWire,
    /// Servers' `sampling/createMessage` requests the user allowed.
    pub mcp_sampling: UsageWire,
}

/// One saved session.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionWire {
    /// The session id.
    pub id: String,
    /// The file.
    pub path: PathBuf,
    /// Creation time (seconds since the epoch).
    pub created: u64,
    /// Last change (seconds since the epoch).
    pub modified: u64,
    /// Messages.
    pub messages: usize,
    /// The first user message, cut.
    pub first_prompt: Option<String>,
}

/// `listSessions` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionsResult {
    /// This project's sessions, most recent first.
    pub sessions: Vec<SessionWire>,
}

/// `newSession` / `resumeSession` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionResult {
    /// The session id (`null` when ephemeral).
    pub session_id: Option<String>,
    /// The session file.
    pub session_file: Option<PathBuf>,
    /// Messages in the conversation.
    pub messages: usize,
}

/// `compact` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CompactResult {
    /// The summary that replaced the history.
    pub summary: String,
}

/// One tool.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolWire {
    /// The exported name the model calls.
    pub name: String,
    /// The tool's own name: the server's for an MCP tool, the component's for a WASM tool,
    /// `name` for a built-in tool.
    pub tool: String,
    /// What a person reads: `<server> › <tool>`, `<plugin> › <tool>`, or a built-in tool's
    /// name (`docs/mcp.md`, "What people see").
    pub display_name: String,
    /// A display title.
    pub title: Option<String>,
    /// The description the model reads.
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: serde_json::Value,
    /// `read`, `write` or `destructive`.
    pub risk: RiskLevel,
    /// `builtin`, `mcp` or `wasm`.
    pub source: ToolSourceWire,
    /// The MCP server, for MCP tools.
    pub server: Option<String>,
    /// The plugin, for plugin tools.
    pub plugin: Option<String>,
}

/// `listTools` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolsResult {
    /// Every tool of the session.
    pub tools: Vec<ToolWire>,
}

/// One plugin.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PluginWire {
    /// The manifest name.
    pub name: String,
    /// `user` or `project`.
    pub scope: Scope,
    /// `loaded`, `disabled`, `rejected` or `shadowed`.
    pub status: PluginStatus,
    /// The resolved root.
    pub path: PathBuf,
}

/// One skill.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SkillWire {
    /// The name.
    pub name: String,
    /// The description.
    pub description: String,
    /// `builtin`, `user`, `project`, `project-plugin` or `user-plugin`.
    pub source: SkillSourceWire,
    /// The plugin, for plugin skills.
    pub plugin: Option<String>,
}

/// One tool a server contributes.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerToolWire {
    /// The exported name the model calls.
    pub name: String,
    /// The server's own name for it.
    pub tool: String,
    /// What a person reads: `<server> › <tool>` (`docs/mcp.md`, "What people see").
    pub display_name: String,
}

/// One MCP server.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerWire {
    /// The identity.
    pub id: String,
    /// `config` or `plugin`.
    pub source: ServerSource,
    /// The plugin, for plugin servers.
    pub plugin: Option<String>,
    /// `configured`, `known`, `started`, `used`, `disabled`, `untrusted` or `failed`.
    pub status: ServerStatusWire,
    /// Why it failed.
    pub error: Option<String>,
    /// The negotiated protocol version.
    pub protocol_version: Option<String>,
    /// Exported names of its tools.
    pub tools: Vec<String>,
    /// Its tools as people read them, in the order of `tools`.
    pub tool_details: Vec<ServerToolWire>,
    /// Tools the server added after the session mounted it, by the server's names (they join
    /// at the next turn boundary).
    pub added_tools: Vec<String>,
    /// The latest failed keep-alive ping.
    pub ping_failure: Option<String>,
    /// How many times rho started the server again in this session (a new process, a new
    /// HTTP session) after its session was lost.
    pub restarts: u32,
    /// Why the last restart happened.
    pub last_restart: Option<String>,
    /// How many of the server's questions (forms, sampling) rho rejected in this session
    /// because it already had one open and 8 waiting.
    pub questions_rejected: u64,
    /// For an OAuth server, its login state (`logged in, expires in 55m`, `needs login`, ...).
    pub auth: Option<String>,
}

/// One diagnostic.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DiagnosticWire {
    /// `error`, `warning` or `info`.
    pub severity: Severity,
    /// The stable code.
    pub code: DiagnosticCode,
    /// What happened.
    pub message: String,
    /// The component involved.
    pub component: Option<String>,
    /// The file involved.
    pub path: Option<PathBuf>,
}

/// `listExtensions` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExtensionsResult {
    /// Every plugin found.
    pub plugins: Vec<PluginWire>,
    /// Skills after precedence.
    pub skills: Vec<SkillWire>,
    /// MCP servers and their live state.
    pub servers: Vec<ServerWire>,
    /// Tools of the session.
    pub tools: Vec<String>,
    /// Everything refused, shadowed or failed.
    pub diagnostics: Vec<DiagnosticWire>,
    /// What the next model request costs the context (estimates, about 4 bytes a token): the
    /// system prompt, the tool definitions (per owner: server id, `<plugin>/<component>`,
    /// `rho` for built-in tools; with what waits behind the tool search), the conversation.
    pub context: rho_core::session::ContextBudget,
}

/// `doctor` result: the rows of `rho doctor`, with the session's live servers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DoctorResult {
    /// One row per part of the setup.
    pub checks: Vec<CheckWire>,
    /// No row is an error.
    pub ok: bool,
}

/// One row of the health report.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CheckWire {
    /// `config`, `agent plugins`, `plugin trust`, `skills`, `mcp servers` or `provider`.
    pub check: CheckKind,
    /// `ok`, `warning` or `error`.
    pub status: CheckStatus,
    /// What was found.
    pub detail: String,
}

// ---------- notifications ----------

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

/// `server/restart`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerRestartParams {
    /// The server identity.
    pub server: String,
    /// Its restarts so far in this session.
    pub restarts: u32,
    /// Why it was (or could not be) started again.
    pub reason: String,
    /// Set when rho gave up on the server (it stays failed for the rest of the session): why.
    pub gave_up: Option<String>,
}

/// `tools/changed`, by the server's own tool names.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolsChangedParams {
    /// The server identity.
    pub server: String,
    /// Still offered with a new definition.
    pub revised: Vec<String>,
    /// No longer offered: calls fail, saying the server withdrew it.
    pub withdrawn: Vec<String>,
    /// Newly offered, and mounted under new exported names.
    pub added: Vec<String>,
}

/// `tool/denied`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolDeniedParams {
    /// The exported tool name.
    pub name: String,
    /// What a person reads (`docs/mcp.md`, "What people see").
    pub display_name: String,
}

/// `approval/request`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ApprovalRequestParams {
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
    pub usage: UsageWire,
    /// The context after it.
    pub context: ContextWire,
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
    pub usage: UsageWire,
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

/// `question/request` (rho's addition): a server asks the user something during one of its
/// tool calls. Answer with `questionResponse`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuestionRequestParams {
    /// The id `questionResponse` names.
    pub question_id: u64,
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
    pub fields: Vec<FieldWire>,
    /// The conversation the server wants the model to continue (sampling).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<SamplingMessageWire>,
    /// The token ceiling the server asked for (sampling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// One question of a form.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FieldWire {
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
    pub choices: Vec<ChoiceWire>,
    /// The default answer, as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Whether an answer is required.
    pub required: bool,
    /// The description and constraints (shown, not enforced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

/// One value a choice field offers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChoiceWire {
    /// The value to answer with.
    pub value: String,
    /// Its title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// One message of a sampling conversation.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SamplingMessageWire {
    /// `user` or `assistant`.
    pub role: SamplingRole,
    /// Its text.
    pub text: String,
}

/// One argument of a prompt.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PromptArgumentWire {
    /// Its name (the key in `key=value`).
    pub name: String,
    /// A display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the prompt needs it.
    pub required: bool,
}

/// One server prompt, as a slash command.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PromptWire {
    /// `/mcp:<server>:<prompt>`: a `prompt` whose message starts with it expands the prompt.
    pub command: String,
    /// The server identity.
    pub server: String,
    /// The server's name for the prompt.
    pub name: String,
    /// A display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments: one argument takes everything after the command; several take
    /// `key=value` pairs.
    pub arguments: Vec<PromptArgumentWire>,
}

/// One server resource or resource template.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceWire {
    /// The server offering it.
    pub server: String,
    /// Its URI (an RFC 6570 template when `template`).
    pub uri: String,
    /// The server's name for it.
    pub name: String,
    /// A display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type, when declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// A template: fill in its placeholders before attaching it.
    pub template: bool,
}

/// `complete` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CompleteResult {
    /// Suggested values, best first (empty when the server has none, has no completions, fails
    /// or answers late).
    pub values: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON string `value` serializes to.
    fn spelling<T: Serialize>(value: T) -> String {
        serde_json::to_value(value)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }

    /// Host enums that reach the wire as themselves are spelled by serde; the host's own
    /// `as_str()` (tables, text output) must say the same.
    #[test]
    fn host_enums_serialize_as_their_as_str_spelling() {
        for s in [Severity::Info, Severity::Warning, Severity::Error] {
            assert_eq!(spelling(s), s.as_str());
        }
        for r in [RiskLevel::Read, RiskLevel::Write, RiskLevel::Destructive] {
            assert_eq!(spelling(r), r.as_str());
        }
        for m in PermissionMode::ALL {
            assert_eq!(spelling(m), m.as_str());
        }
        for s in [Scope::User, Scope::Project] {
            assert_eq!(spelling(s), s.as_str());
        }
        for s in [
            PluginStatus::Loaded,
            PluginStatus::Disabled,
            PluginStatus::Rejected,
            PluginStatus::Shadowed,
        ] {
            assert_eq!(spelling(s), s.as_str());
        }
        for s in [
            ProviderSource::Flags,
            ProviderSource::Config,
            ProviderSource::Builtin,
        ] {
            assert_eq!(spelling(s), s.as_str());
        }
        for s in [ServerSource::Config, ServerSource::Plugin] {
            assert_eq!(spelling(s), s.as_str());
        }
        for s in [CheckStatus::Ok, CheckStatus::Warning, CheckStatus::Error] {
            assert_eq!(spelling(s), s.as_str());
        }
        for &k in CheckKind::ALL {
            assert_eq!(spelling(k), k.as_str());
        }
    }

    /// The wire-only enums say what the host's own words for the same values say.
    #[test]
    fn wire_enums_spell_as_the_host_does() {
        let plugin = |scope| SkillSource::Plugin {
            plugin: "p".to_owned(),
            scope,
        };
        for s in [
            SkillSource::BuiltIn,
            SkillSource::User,
            SkillSource::Project,
            plugin(Scope::Project),
            plugin(Scope::User),
        ] {
            assert_eq!(spelling(SkillSourceWire::from(&s)), s.kind());
        }
        for s in [
            ServerStatus::Configured,
            ServerStatus::Known,
            ServerStatus::Started,
            ServerStatus::Used,
            ServerStatus::Disabled,
            ServerStatus::Invalid("x".to_owned()),
            ServerStatus::Failed("x".to_owned()),
            ServerStatus::Untrusted("x".to_owned()),
        ] {
            assert_eq!(spelling(ServerStatusWire::from(&s)), s.as_str());
        }
        for o in [
            ToolOrigin::Builtin,
            ToolOrigin::Mcp {
                server: "s".to_owned(),
                plugin: None,
                tool: "t".to_owned(),
            },
            ToolOrigin::Wasm {
                plugin: "p".to_owned(),
                component: "c".to_owned(),
                tool: "t".to_owned(),
            },
        ] {
            assert_eq!(spelling(ToolSourceWire::from(&o)), o.kind());
        }
        for o in [
            CallOutcome::Success,
            CallOutcome::Error {
                message: "m".to_owned(),
            },
            CallOutcome::Denied,
            CallOutcome::Redirected,
            CallOutcome::Cancelled,
        ] {
            let host = serde_json::to_value(&o).ok().map(|v| v["kind"].clone());
            assert_eq!(
                serde_json::to_value(OutcomeKindWire::from(&o)).ok(),
                host,
                "{o:?}"
            );
        }
    }
}
