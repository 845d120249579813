//! What a session knows of each MCP server, in one place: its state (configured → known →
//! started → used, or why it does not run), the tools it contributes, what its handshake said,
//! its health and its rejected questions. The server's link writes it as the server starts,
//! is used, restarts or fails; every inventory (the TUI's `/mcp`, RPC `listExtensions`,
//! `rho mcp list/show`, `rho tools list`) reads it through [`MountedServer`].

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rho_component::Transport;

use super::server_link::ServerHealth;
use super::{ServerSource, ServerToolset, ToolsetChanged};

/// The state of one server in a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStatus {
    /// Valid and enabled, not started, and nothing known of its tools: mounting without MCP,
    /// or a lazy server whose first start (filling the tool cache) is still to come.
    Configured,
    /// Not started: its tools are mounted from the tool cache; the first call starts it.
    Known,
    /// Running (handshake done, tools listed), not used yet in this session.
    Started,
    /// Running, and a call, a prompt or a resource read used it.
    Used,
    /// Disabled by its entry or its plugin.
    Disabled,
    /// The entry is invalid.
    Invalid(String),
    /// Starting failed; the message says why.
    Failed(String),
    /// A project plugin's server the user has not trusted; never started.
    Untrusted(String),
    /// Valid and enabled, but this session's runtime loads no MCP server of rho's (the
    /// Claude CLI runtime, `docs/mcp.md`, "Runtime differences"); never started.
    NotLoaded(NotLoadedReason),
}

/// Why a valid, enabled server is not loaded in a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotLoadedReason {
    /// The session runs on the Claude Code CLI, which gets none of rho's MCP servers.
    ClaudeRuntime,
}

impl NotLoadedReason {
    /// The reason as inventories show it: `Claude CLI runtime`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClaudeRuntime => "Claude CLI runtime",
        }
    }
}

impl ServerStatus {
    /// `configured`, `known`, `started`, `used`, `disabled`, `untrusted`, `not_loaded` or
    /// `failed` (invalid entries count as failed).
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Configured => "configured",
            Self::Known => "known",
            Self::Started => "started",
            Self::Used => "used",
            Self::Disabled => "disabled",
            Self::Invalid(_) | Self::Failed(_) => "failed",
            Self::Untrusted(_) => "untrusted",
            Self::NotLoaded(_) => "not_loaded",
        }
    }

    /// The state as a person reads it: the word of [`ServerStatus::as_str`], except
    /// `not loaded (Claude CLI runtime)` for a server the session's runtime does not load.
    pub fn label(&self) -> String {
        match self {
            Self::NotLoaded(reason) => format!("not loaded ({})", reason.as_str()),
            other => other.as_str().to_owned(),
        }
    }

    /// Why the server is not loaded, when it is [`ServerStatus::NotLoaded`].
    pub fn not_loaded(&self) -> Option<NotLoadedReason> {
        match self {
            Self::NotLoaded(reason) => Some(*reason),
            _ => None,
        }
    }

    /// The error, for invalid, failed and untrusted servers.
    pub fn error(&self) -> Option<&str> {
        match self {
            Self::Invalid(e) | Self::Failed(e) | Self::Untrusted(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the server's process or session is up (started or used).
    pub fn is_running(&self) -> bool {
        matches!(self, Self::Started | Self::Used)
    }

    /// Whether its tools are mounted: known from the cache, started or used.
    pub fn offers_tools(&self) -> bool {
        matches!(self, Self::Known | Self::Started | Self::Used)
    }
}

/// How inventories mark a tool that runs only as an MCP task (`MountedTool::needs_tasks`):
/// `/mcp`, `rho mcp show --connect`.
pub const NEEDS_TASKS_MARK: &str = "needs task support";

/// A tool a server contributes to a session: the name the model calls and the server's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountedTool {
    /// The exported name the model calls (`mcp__<server>__<tool>`, encoded).
    pub name: String,
    /// The server's own name for it.
    pub tool: String,
    /// It runs only as an MCP task (`execution.taskSupport: "required"`): listed, but every
    /// call is refused until rho supports tasks.
    pub needs_tasks: bool,
}

impl MountedTool {
    /// The name a person reads (`everything › get-env`): `rho_component::tool_display_name`
    /// of `server` (the identity of the server that contributes it) and its own name.
    pub fn display_name(&self, server: &str) -> String {
        rho_component::tool_display_name(Some(server), &self.tool)
    }
}

/// What changes about a server while a session runs; written by its link, read by inventories.
#[derive(Debug, Clone)]
pub(crate) struct ServerLive {
    pub(crate) status: ServerStatus,
    /// The tools it contributes, in its listing order.
    pub(crate) tools: Vec<MountedTool>,
    /// Tools the server added after the session mounted it (they join at a turn boundary).
    pub(crate) added_tools: Vec<String>,
    pub(crate) health: ServerHealth,
    pub(crate) protocol_version: Option<String>,
    pub(crate) server_info: Option<serde_json::Value>,
    pub(crate) instructions: Option<String>,
    pub(crate) rejected_questions: rho_mcp::RejectedQuestions,
    /// What `toolset/initialized` last reported of it (`None`: nothing yet).
    pub(crate) toolset: Option<ServerToolset>,
    /// Its digest differs from the one the resumed session file recorded.
    pub(crate) digest_changed: Option<ToolsetChanged>,
}

impl ServerLive {
    pub(crate) fn new(status: ServerStatus) -> Self {
        Self {
            status,
            tools: Vec::new(),
            added_tools: Vec::new(),
            health: ServerHealth::default(),
            protocol_version: None,
            server_info: None,
            instructions: None,
            rejected_questions: rho_mcp::RejectedQuestions::default(),
            toolset: None,
            digest_changed: None,
        }
    }

    /// Takes what a (first or new) start of the server said: the handshake's facts, and the
    /// server is running (used stays used).
    pub(crate) fn started(&mut self, connection: &rho_mcp::Connection) {
        self.protocol_version = Some(connection.summary.protocol_version.clone());
        self.server_info = connection.summary.server_info.clone();
        self.instructions = connection.summary.instructions.clone();
        self.rejected_questions = connection.rejected_questions();
        if self.status != ServerStatus::Used {
            self.status = ServerStatus::Started;
        }
    }
}

/// The shared handle of a server's [`ServerLive`].
pub(crate) type SharedLive = Arc<Mutex<ServerLive>>;

/// Locks `live`, surviving a panic elsewhere (the data is plain).
pub(crate) fn lock(live: &SharedLive) -> MutexGuard<'_, ServerLive> {
    live.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One server as a session sees it: what the configuration says and, live, what the session
/// knows now.
#[derive(Debug, Clone)]
pub struct MountedServer {
    /// The identity (config key or `<plugin>/<server>`).
    pub id: String,
    /// Config or plugin.
    pub source: ServerSource,
    /// The plugin, for plugin servers.
    pub plugin: Option<String>,
    /// The transport, when the entry is valid.
    pub transport: Option<Transport>,
    /// Whether its tools may wait behind the tool search (`defer`, default `true`); `false`
    /// pins them: always sent to the model.
    pub defer: bool,
    pub(crate) live: SharedLive,
}

impl MountedServer {
    /// A server in `status` contributing `tools`, with nothing else known (front-ends' tests
    /// build inventories with it).
    pub fn new(
        id: impl Into<String>,
        source: ServerSource,
        plugin: Option<String>,
        transport: Option<Transport>,
        status: ServerStatus,
        tools: Vec<MountedTool>,
    ) -> Self {
        let mut live = ServerLive::new(status);
        live.tools = tools;
        Self {
            id: id.into(),
            source,
            plugin,
            transport,
            defer: true,
            live: Arc::new(Mutex::new(live)),
        }
    }

    /// This server with `health` (front-ends' tests).
    pub fn with_health(self, health: ServerHealth) -> Self {
        self.live().health = health;
        self
    }

    /// This server with its rejected questions counted by `rejected` (front-ends' tests).
    pub fn with_rejected_questions(self, rejected: rho_mcp::RejectedQuestions) -> Self {
        self.live().rejected_questions = rejected;
        self
    }

    /// This server having negotiated `version` (front-ends' tests).
    pub fn with_protocol_version(self, version: impl Into<String>) -> Self {
        self.live().protocol_version = Some(version.into());
        self
    }

    /// This server with a digest other than the resumed session file's (front-ends' tests).
    pub fn with_digest_changed(self, changed: ToolsetChanged) -> Self {
        self.live().digest_changed = Some(changed);
        self
    }

    fn live(&self) -> MutexGuard<'_, ServerLive> {
        lock(&self.live)
    }

    /// The state now (failed once rho gave up on the server).
    pub fn status(&self) -> ServerStatus {
        let live = self.live();
        match &live.health.given_up {
            Some(given_up) => ServerStatus::Failed(given_up.clone()),
            None => live.status.clone(),
        }
    }

    /// The tools it contributes now, in its listing order.
    pub fn tools(&self) -> Vec<MountedTool> {
        self.live().tools.clone()
    }

    /// Tools the server added after the session mounted it.
    pub fn added_tools(&self) -> Vec<String> {
        self.live().added_tools.clone()
    }

    /// Restarts, the latest failed ping and giving up, as they are now.
    pub fn health(&self) -> ServerHealth {
        self.live().health.clone()
    }

    /// The latest failed ping, if the last one failed.
    pub fn last_ping_failure(&self) -> Option<String> {
        self.live().health.ping_failure.clone()
    }

    /// The negotiated protocol version (from the tool cache until the server starts).
    pub fn protocol_version(&self) -> Option<String> {
        self.live().protocol_version.clone()
    }

    /// `serverInfo`.
    pub fn server_info(&self) -> Option<serde_json::Value> {
        self.live().server_info.clone()
    }

    /// The server's instructions (they reach the system prompt fenced and attributed).
    pub fn instructions(&self) -> Option<String> {
        self.live().instructions.clone()
    }

    /// The server's questions (forms, sampling) rejected because it already had one open and
    /// [`rho_mcp::MAX_QUEUED_QUESTIONS`] waiting: counted live by the server's connection,
    /// across its restarts.
    pub fn rejected_questions(&self) -> u64 {
        self.live().rejected_questions.count()
    }

    /// What `toolset/initialized` last reported of it: its tools' digest, counts, live or
    /// from the tool cache (`None` before its tools are known).
    pub fn toolset(&self) -> Option<ServerToolset> {
        self.live().toolset.clone()
    }

    /// Set when its digest differs from the one the resumed session file recorded
    /// (`toolset/changed`; `/mcp` says so).
    pub fn digest_changed(&self) -> Option<ToolsetChanged> {
        self.live().digest_changed.clone()
    }

    pub(crate) fn set_digest_changed(&self, changed: ToolsetChanged) {
        self.live().digest_changed = Some(changed);
    }
}
