//! Method results, as `docs/rpc.md` spells them.

use super::*;

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
    pub tool_calls: Vec<rho_core::provider::ToolCall>,
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

/// `listModels` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ModelsResult {
    /// Models from configuration and from each reachable provider.
    pub models: Vec<rho_core::host::ModelEntry>,
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
    #[serde(serialize_with = "rho_component::lossy_path::option::serialize")]
    #[schemars(with = "Option<String>")]
    pub session_file: Option<PathBuf>,
    /// Tokens over the session's life (the user's turns and compactions).
    pub usage: rho_core::provider::Usage,
    /// The usage ledger by purpose: the user's turns, and what servers spent through
    /// sampling.
    pub usage_by_purpose: UsageByPurposeWire,
    /// The context after the last request.
    pub context: rho_core::session::ContextSnapshot,
    /// Messages in the conversation.
    pub messages: usize,
}

/// Tokens by what they were spent on.
#[derive(Debug, Clone, Copy, Default, Serialize, JsonSchema)]
pub struct UsageByPurposeWire {
    /// The user's turns and compactions.
    pub turns: rho_core::provider::Usage,
    /// Servers' `sampling/createMessage` requests the user allowed.
    pub mcp_sampling: rho_core::provider::Usage,
}

/// `listSessions` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionsResult {
    /// This project's sessions, most recent first.
    pub sessions: Vec<rho_core::session::SessionSummary>,
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
    #[serde(serialize_with = "rho_component::lossy_path::serialize")]
    #[schemars(with = "String")]
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
    /// Present (`true`) when the tool runs only as an MCP task (`execution.taskSupport:
    /// "required"`): listed and sent to the model, but every call is refused until rho
    /// supports tasks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_tasks: bool,
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
    /// `configured`, `known`, `started`, `used`, `disabled`, `untrusted`, `not_loaded` or
    /// `failed`.
    pub status: ServerStatusWire,
    /// Why it failed.
    pub error: Option<String>,
    /// Why the session does not load it (`Claude CLI runtime`), present only when `status` is
    /// `not_loaded`: inventories show it as `not loaded (Claude CLI runtime)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_loaded: Option<String>,
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
    /// The digest of its tools as `toolset/initialized` last reported it (`null` before any).
    pub digest: Option<String>,
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
    pub diagnostics: Vec<Diagnostic>,
    /// What the next model request costs the context (estimates, about 4 bytes a token): the
    /// system prompt, the tool definitions (per owner: server id, `<plugin>/<component>`,
    /// `rho` for built-in tools; with what waits behind the tool search), the conversation.
    pub context: rho_core::session::ContextBudget,
}

/// `doctor` result: the rows of `rho doctor`, with the session's live servers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DoctorResult {
    /// One row per part of the setup.
    pub checks: Vec<rho_core::doctor::Check>,
    /// No row is an error.
    pub ok: bool,
}
