//! The fixed tool set of a session: built-in tools, `activate_skill` (when skills exist) and
//! the tools of every MCP server that started within its budget. Servers start in parallel
//! (at most `rho_mcp::MAX_CONCURRENT_STARTS` at a time, each budget counted from its own start);
//! one that fails is reported ([`ServerStatus::Failed`], `mcp-server-failed`) and leaves the
//! rest untouched, and one that offers more than `rho_mcp::MAX_SERVER_TOOLS` tools is mounted
//! with the first of them (`mcp-tools-capped`). With no startable server nothing MCP-related
//! runs at all. A server whose session is lost later is started again by the next call
//! (`server_link.rs`); Streamable HTTP sessions are pinged to find lost ones.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rho_component::{Diagnostic, DiagnosticCode, SkillMeta, Tool, ToolSpec, Transport};
use rho_mcp::Connection;
use tokio::sync::RwLock;

use super::mcp_tool::McpTool;
use super::server_link::{RestartNotices, ServerHealth, ServerLink, ServerRestart};
use super::skill_tool::ActivateSkill;
use super::{Registry, ServerSource, SlotState};

/// How to mount a registry.
#[derive(Debug, Clone)]
pub struct MountOptions {
    /// Start MCP servers (off: the tool set holds only built-in tools and `activate_skill`).
    pub connect_mcp: bool,
    /// Ping Streamable HTTP sessions (both eras) this often (`None`: never).
    pub keep_alive: Option<Duration>,
    /// Tell servers rho can put a form in front of a person (elicitation).
    pub elicitation: bool,
    /// Tell servers that opted in (`sampling = "ask"`) that rho has a model to spend.
    pub sampling: bool,
    /// Whether an OAuth server without a usable stored token may start a browser login
    /// (only a run with a terminal and not in CI); tokens live in `$RHO_HOME/credentials`.
    pub oauth_login: rho_mcp::oauth::LoginPolicy,
}

impl Default for MountOptions {
    fn default() -> Self {
        Self {
            connect_mcp: true,
            keep_alive: Some(Duration::from_secs(60)),
            elicitation: false,
            sampling: false,
            oauth_login: rho_mcp::oauth::LoginPolicy::Never,
        }
    }
}

/// The live state of one server in a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStatus {
    /// Started, handshake done, tools listed.
    Connected,
    /// Valid and enabled, but not started (mounting without MCP).
    Configured,
    /// Disabled by its entry or its plugin.
    Disabled,
    /// The entry is invalid.
    Invalid(String),
    /// Start-up failed; the message says why.
    Failed(String),
    /// A project plugin's server the user has not trusted; never started.
    Untrusted(String),
}

impl ServerStatus {
    /// `connected`, `configured`, `disabled`, `untrusted` or `failed` (invalid entries count
    /// as failed).
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Connected => "connected",
            Self::Configured => "configured",
            Self::Disabled => "disabled",
            Self::Invalid(_) | Self::Failed(_) => "failed",
            Self::Untrusted(_) => "untrusted",
        }
    }

    /// The error, for invalid and failed servers.
    pub fn error(&self) -> Option<&str> {
        match self {
            Self::Invalid(e) | Self::Failed(e) | Self::Untrusted(e) => Some(e),
            _ => None,
        }
    }
}

/// A tool a server contributes to a session: the name the model calls and the server's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountedTool {
    /// The exported name the model calls (`mcp__<server>__<tool>`, encoded).
    pub name: String,
    /// The server's own name for it.
    pub tool: String,
}

impl MountedTool {
    /// The name a person reads (`everything › get-env`): `rho_component::tool_display_name`
    /// of `server` (the identity of the server that contributes it) and its own name.
    pub fn display_name(&self, server: &str) -> String {
        rho_component::tool_display_name(Some(server), &self.tool)
    }
}

/// One server as a session sees it.
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
    /// The live state.
    pub status: ServerStatus,
    /// The negotiated protocol version.
    pub protocol_version: Option<String>,
    /// `serverInfo`.
    pub server_info: Option<serde_json::Value>,
    /// The server's instructions (they reach the system prompt fenced and attributed).
    pub instructions: Option<String>,
    /// The tools this server contributes, in its listing order.
    pub tools: Vec<MountedTool>,
    /// Tools the server added after the session started (they need a restart), by the
    /// server's own names; updated when the tool list is reconciled.
    pub added_tools: Arc<Mutex<Vec<String>>>,
    /// Restarts, the latest failed keep-alive ping, giving up: updated while the session runs.
    pub health: Arc<Mutex<ServerHealth>>,
    /// The server's questions (forms, sampling) rejected because it already had one open and
    /// [`rho_mcp::MAX_QUEUED_QUESTIONS`] waiting: counted live by the server's connection, across
    /// its restarts.
    pub rejected_questions: rho_mcp::RejectedQuestions,
}

impl MountedServer {
    /// Tools the server added after the session started, which need a restart.
    pub fn added_tools(&self) -> Vec<String> {
        self.added_tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The latest failed ping, if the last one failed.
    pub fn last_ping_failure(&self) -> Option<String> {
        self.health().ping_failure
    }

    /// Restarts, the latest failed ping and giving up, as they are now.
    pub fn health(&self) -> ServerHealth {
        self.health
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The state now: [`MountedServer::status`], or failed once rho gave up on the server.
    pub fn current_status(&self) -> ServerStatus {
        match self.health().given_up {
            Some(given_up) => ServerStatus::Failed(given_up),
            None => self.status.clone(),
        }
    }
}

/// A session's tools, fixed when the session starts: the set of names never changes, but a
/// server's revised definitions replace the old ones at a turn boundary
/// ([`ToolSet::reconcile`]).
pub struct ToolSet {
    tools: std::sync::RwLock<Vec<Arc<dyn Tool>>>,
    index: HashMap<String, usize>,
    /// Every server entry and its live state, in registry order.
    pub servers: Vec<MountedServer>,
    /// Problems found while mounting (failed servers, name collisions).
    pub diagnostics: Vec<Diagnostic>,
    /// The skills the catalog lists.
    pub skills: Vec<SkillMeta>,
    links: Vec<Arc<ServerLink>>,
    /// Restarts not reported yet ([`ToolSet::take_restarts`]).
    restarts: RestartNotices,
    /// `max_output_bytes` of each connected server (a remounted tool keeps its cap).
    output_caps: HashMap<String, u64>,
    keep_alive_stop: tokio_util::sync::CancellationToken,
    /// The built-in WASM components, compiled on first use ([`ToolSet::warm_components`]).
    deferred: Vec<Arc<rho_wasm::DeferredComponent>>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.index.keys().collect::<Vec<_>>())
            .field("servers", &self.servers)
            .finish_non_exhaustive()
    }
}

impl ToolSet {
    /// A set with no tool and no server.
    pub fn empty() -> Self {
        Self {
            tools: std::sync::RwLock::new(Vec::new()),
            index: HashMap::new(),
            servers: Vec::new(),
            diagnostics: Vec::new(),
            skills: Vec::new(),
            links: Vec::new(),
            restarts: RestartNotices::default(),
            output_caps: HashMap::new(),
            keep_alive_stop: tokio_util::sync::CancellationToken::new(),
            deferred: Vec::new(),
        }
    }

    /// Starts compiling (or loading from the cache) the built-in WASM components in the
    /// background, so a session's first call of one does not wait for the compiler. Listing
    /// commands skip this: they never call a tool.
    pub fn warm_components(&self) {
        for component in &self.deferred {
            component.warm();
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<dyn Tool>>> {
        self.tools.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The tool exported as `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        let index = *self.index.get(name)?;
        self.read().get(index).cloned()
    }

    /// Every tool's current declaration: built-in first, then `activate_skill`, then MCP tools
    /// in server order, then plugin WASM tools.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.read().iter().map(|t| t.spec().clone()).collect()
    }

    /// How many tools the set holds.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the set holds no tool.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The live connection to `server`, when it is connected.
    pub(crate) fn connection(&self, server: &str) -> Option<Arc<RwLock<Connection>>> {
        self.links
            .iter()
            .find(|link| link.id() == server)
            .map(|link| link.connection().clone())
    }

    /// The connection to `server`, started again first when its session was lost (as a tool
    /// call would: `docs/mcp.md`, "Servers that come back"); `None` when no such server is
    /// connected, an error naming the server when it cannot be started again in time.
    pub(crate) async fn live_connection(
        &self,
        server: &str,
    ) -> Option<Result<tokio::sync::RwLockReadGuard<'_, Connection>, String>> {
        let link = self.links.iter().find(|link| link.id() == server)?;
        let deadline = std::time::Instant::now() + link.call_budget();
        Some(
            link.ready(&rho_component::CancelSignal::new(), deadline)
                .await,
        )
    }

    /// Every connected server's prompts (refreshed by the server's `list_changed`), as
    /// `(server, prompt)` in server order.
    pub async fn prompts(&self) -> Vec<(String, rho_component::ServerPrompt)> {
        let mut out = Vec::new();
        for link in &self.links {
            let prompts = link.connection().read().await.prompts();
            out.extend(prompts.into_iter().map(|p| (link.id().to_owned(), p)));
        }
        out
    }

    /// Every connected server's resources and resource templates (refreshed by the server's
    /// `list_changed`), as `(server, resource)` in server order.
    pub async fn resources(&self) -> Vec<(String, rho_component::ServerResource)> {
        let mut out = Vec::new();
        for link in &self.links {
            let resources = link.connection().read().await.resources();
            out.extend(resources.into_iter().map(|r| (link.id().to_owned(), r)));
        }
        out
    }

    /// The restarts (and servers given up on) since the last call, oldest first, for the
    /// session to report.
    pub fn take_restarts(&self) -> Vec<ServerRestart> {
        std::mem::take(&mut *self.restarts.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The instructions of every connected server, as `(server, text)`.
    pub fn instructions(&self) -> impl Iterator<Item = (&str, &str)> {
        self.servers
            .iter()
            .filter_map(|s| Some((s.id.as_str(), s.instructions.as_deref()?)))
    }

    /// Re-lists the tools of every server that announced a change or was started again, at a
    /// turn boundary (no call may be running). Returns `(server, changes)` for each server that
    /// had some. The set of exported tools stays fixed: added tools need a restart, withdrawn
    /// ones fail clearly.
    pub async fn reconcile(&self) -> Vec<(String, rho_mcp::ToolChanges)> {
        let mut out = Vec::new();
        for link in &self.links {
            let id = link.id();
            let connection = link.connection();
            {
                let guard = connection.read().await;
                if !guard.tools_changed() || guard.is_gone().is_some() {
                    continue;
                }
            }
            let mut guard = connection.write().await;
            match guard.reconcile_tools().await {
                Ok(changes) => {
                    // A revised definition reaches the model from the next turn: the tool is
                    // mounted again under its exported name with the new declaration.
                    for name in &changes.revised {
                        if let Some(tool) = guard.tools.iter().find(|t| &t.name == name) {
                            self.replace_mcp_tool(id, tool, link);
                        }
                    }
                    if let Some(server) = self.servers.iter().find(|s| s.id == id) {
                        *server
                            .added_tools
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner) =
                            guard.added_tools().iter().map(|t| t.name.clone()).collect();
                    }
                    out.push((id.to_owned(), changes));
                }
                Err(e) => {
                    tracing::warn!(target: "rho::mcp", server = id, "re-listing tools failed: {e}")
                }
            }
        }
        out
    }

    /// Replaces the mounted tool for `tool` of `server` with one built from its current
    /// definition, keeping its exported name and output cap.
    fn replace_mcp_tool(&self, server: &str, tool: &rho_mcp::ServerTool, link: &Arc<ServerLink>) {
        let mut tools = self.tools.write().unwrap_or_else(PoisonError::into_inner);
        let Some(slot) = tools.iter_mut().find(|t| {
            matches!(&t.spec().origin, rho_component::ToolOrigin::Mcp { server: s, tool: name, .. } if s == server && name == &tool.name)
        }) else {
            return;
        };
        let (exported, plugin) = match &slot.spec().origin {
            rho_component::ToolOrigin::Mcp { plugin, .. } => {
                (slot.spec().name.clone(), plugin.clone())
            }
            _ => return,
        };
        let max_output_bytes = self
            .output_caps
            .get(server)
            .copied()
            .unwrap_or(rho_component::DEFAULT_MAX_OUTPUT_BYTES);
        *slot = Arc::new(McpTool::new(
            exported,
            tool,
            server,
            plugin.as_deref(),
            link.clone(),
            max_output_bytes,
        ));
    }

    /// Stops keep-alive pings and closes every server (stdin closed, then the process group
    /// stopped; HTTP sessions deleted).
    pub async fn close(self) {
        self.keep_alive_stop.cancel();
        drop(self.tools);
        drop(self.index);
        let mut closing = tokio::task::JoinSet::new();
        for link in self.links {
            // A call still holding the connection keeps it; dropping it then kills the group.
            if let Some(connection) = Arc::try_unwrap(link)
                .ok()
                .and_then(ServerLink::into_connection)
            {
                closing.spawn(connection.close());
            }
        }
        while closing.join_next().await.is_some() {}
    }

    fn add(&mut self, tool: Arc<dyn Tool>) -> Result<(), Diagnostic> {
        let name = tool.spec().name.clone();
        if let Some(&kept) = self.index.get(&name) {
            let tools = self.tools.get_mut().unwrap_or_else(PoisonError::into_inner);
            let kept = &tools[kept].spec().origin;
            let dropped = &tool.spec().origin;
            return Err(Diagnostic::error(
                DiagnosticCode::ToolNameCollision,
                format!(
                    "two tools are exported as {name:?}: {} is kept, {} is left out",
                    describe(kept),
                    describe(dropped)
                ),
            )
            .with_component(owner(dropped).unwrap_or(name)));
        }
        let tools = self.tools.get_mut().unwrap_or_else(PoisonError::into_inner);
        self.index.insert(name, tools.len());
        tools.push(tool);
        Ok(())
    }
}

/// Where a tool comes from, for a diagnostic.
fn describe(origin: &rho_component::ToolOrigin) -> String {
    use rho_component::ToolOrigin;
    match origin {
        ToolOrigin::Builtin => "the built-in tool".to_owned(),
        ToolOrigin::Mcp { server, tool, .. } => format!("tool `{tool}` of MCP server `{server}`"),
        ToolOrigin::Wasm {
            plugin,
            component,
            tool,
        } => format!("tool `{tool}` of WASM component `{plugin}/{component}`"),
    }
}

/// The component a tool belongs to (`<server>` or `<plugin>/<component>`), if not built in.
fn owner(origin: &rho_component::ToolOrigin) -> Option<String> {
    use rho_component::ToolOrigin;
    match origin {
        ToolOrigin::Builtin => None,
        ToolOrigin::Mcp { server, .. } => Some(server.clone()),
        ToolOrigin::Wasm {
            plugin, component, ..
        } => Some(format!("{plugin}/{component}")),
    }
}

impl Registry {
    /// Builds the session's tool set: built-in tools, `activate_skill` when skills exist, and
    /// (with `options.connect_mcp`) every startable server's tools, servers started in parallel
    /// within their own budgets.
    pub async fn mount(&self, options: &MountOptions) -> ToolSet {
        let mut set = ToolSet {
            skills: self.skills.skills.iter().cloned().collect(),
            ..ToolSet::empty()
        };
        for tool in rho_builtin_plugins::builtin_tools() {
            if let Err(d) = set.add(tool) {
                set.diagnostics.push(d);
            }
        }
        let mut started = tokio::task::JoinSet::new();
        let mut task_index = HashMap::new();
        // What every server is told rho answers: the session workspace as its one root, and
        // forms and sampling only where the front-end and the model can answer them.
        let client = rho_mcp::ClientOptions {
            roots: Some(self.paths.project.cwd.clone()),
            elicitation: options.elicitation,
            sampling: options.sampling,
            skip_offers: false,
            oauth: Some(rho_mcp::oauth::OAuthAccess {
                store: rho_config::CredentialStore::new(self.paths.credentials_dir()),
                login: options.oauth_login.clone(),
            }),
        };
        for (index, slot) in self.servers.iter().enumerate() {
            let status = match &slot.state {
                SlotState::Configured => ServerStatus::Configured,
                SlotState::Disabled => ServerStatus::Disabled,
                SlotState::Invalid(e) => ServerStatus::Invalid(e.clone()),
                SlotState::Untrusted(e) => ServerStatus::Untrusted(e.clone()),
            };
            set.servers.push(MountedServer {
                id: slot.id.clone(),
                source: slot.source,
                plugin: slot.plugin.clone(),
                transport: slot.spec.as_ref().map(|s| s.transport.kind()),
                status,
                protocol_version: None,
                server_info: None,
                instructions: None,
                tools: Vec::new(),
                added_tools: Arc::default(),
                health: Arc::default(),
                rejected_questions: rho_mcp::RejectedQuestions::default(),
            });
            if !options.connect_mcp {
                continue;
            }
            if let Some(spec) = slot.startable() {
                let spec = spec.clone();
                let client = client.clone();
                let handle = started.spawn(async move {
                    let result =
                        rho_mcp::connect_with(&spec, &rho_mcp::process_ambient, &client).await;
                    (index, spec, result)
                });
                task_index.insert(handle.id(), index);
            }
        }
        // WASM components load while the servers start. Built-in ones mount with the other
        // built-in tools, plugin ones after the MCP tools.
        let mut names = rho_component::naming::ExportedNames::default();
        let wasm = super::wasm_tools::wasm_tools(self, &mut names).await;
        set.diagnostics.extend(wasm.diagnostics);
        set.deferred = wasm.deferred;
        let (builtin_wasm, plugin_wasm): (Vec<_>, Vec<_>) = wasm
            .tools
            .into_iter()
            .partition(|t| t.spec().origin == rho_component::ToolOrigin::Builtin);
        for tool in builtin_wasm {
            if let Err(d) = set.add(tool) {
                set.diagnostics.push(d);
            }
        }
        if !set.skills.is_empty() {
            let tool = ActivateSkill::new(set.skills.clone(), self.plugins.clone());
            if let Err(d) = set.add(Arc::new(tool)) {
                set.diagnostics.push(d);
            }
        }
        // Zero-server fast path: with nothing startable the join set is empty and no task,
        // process or socket exists.
        let mut outcomes = Vec::new();
        while let Some(joined) = started.join_next().await {
            match joined {
                Ok(outcome) => outcomes.push(outcome),
                Err(e) => {
                    // A start-up task that panicked fails only its own server.
                    if let Some(&index) = task_index.get(&e.id()) {
                        let server = &mut set.servers[index];
                        let message = "start-up failed unexpectedly (an internal error)".to_owned();
                        set.diagnostics.push(
                            Diagnostic::error(DiagnosticCode::McpServerFailed, message.clone())
                                .with_component(server.id.clone()),
                        );
                        server.status = ServerStatus::Failed(message);
                    }
                }
            }
        }
        outcomes.sort_by_key(|(index, _, _)| *index);
        for (index, spec, result) in outcomes {
            let server = &mut set.servers[index];
            let connection = match result {
                Ok(connection) => connection,
                Err(e) => {
                    let message = e.to_string();
                    set.diagnostics.push(
                        Diagnostic::error(DiagnosticCode::McpServerFailed, message.clone())
                            .with_component(spec.id.clone()),
                    );
                    server.status = ServerStatus::Failed(message);
                    continue;
                }
            };
            server.status = ServerStatus::Connected;
            if connection.tools_left_out > 0 {
                set.diagnostics.push(
                    Diagnostic::warning(
                        DiagnosticCode::McpToolsCapped,
                        rho_mcp::tools_left_out_message(&spec.id, connection.tools_left_out),
                    )
                    .with_component(spec.id.clone()),
                );
            }
            server.protocol_version = Some(connection.summary.protocol_version.clone());
            server.server_info = connection.summary.server_info.clone();
            server.instructions = connection.summary.instructions.clone();
            server.rejected_questions = connection.rejected_questions();
            let http = server.transport == Some(Transport::StreamableHttp);
            let server_tools = connection.tools.clone();
            let link = Arc::new(ServerLink::new(
                connection,
                server.health.clone(),
                set.restarts.clone(),
            ));
            let mut mounted = Vec::new();
            for tool in &server_tools {
                let exported = names.assign(&spec.id, &tool.name);
                mounted.push(Arc::new(McpTool::new(
                    exported,
                    tool,
                    &spec.id,
                    spec.plugin(),
                    link.clone(),
                    spec.max_output_bytes,
                )) as Arc<dyn Tool>);
            }
            if let (true, Some(interval)) = (http, options.keep_alive) {
                spawn_keep_alive(
                    Arc::downgrade(link.connection()),
                    interval,
                    link.health().clone(),
                    set.keep_alive_stop.clone(),
                    spec.id.clone(),
                );
            }
            let mut contributed = Vec::new();
            for tool in mounted {
                let named = MountedTool {
                    name: tool.spec().name.clone(),
                    tool: tool.spec().own_name().to_owned(),
                };
                match set.add(tool) {
                    Ok(()) => contributed.push(named),
                    Err(d) => set.diagnostics.push(d),
                }
            }
            set.servers[index].tools = contributed;
            set.output_caps
                .insert(spec.id.clone(), spec.max_output_bytes);
            set.links.push(link);
        }
        for tool in plugin_wasm {
            if let Err(d) = set.add(tool) {
                set.diagnostics.push(d);
            }
        }
        set
    }
}

/// Pings a Streamable HTTP session (either era) every `interval` until `stop`, since an idle
/// proxy can drop a remote connection with no local signal. A failure is recorded for
/// inventories (cleared by the next answer) and marks the session broken, so the next call
/// starts a new one instead of using it; a session already lost is not pinged. The one
/// keep-alive of a session's servers (`docs/mcp.md`, "Servers that come back").
fn spawn_keep_alive(
    connection: std::sync::Weak<RwLock<Connection>>,
    interval: Duration,
    health: Arc<Mutex<ServerHealth>>,
    stop: tokio_util::sync::CancellationToken,
    server: String,
) {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(interval);
        ticker.tick().await;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = ticker.tick() => {}
            }
            // A weak reference: the pinger never keeps a closed session alive.
            let Some(connection) = connection.upgrade() else {
                return;
            };
            let guard = connection.read().await;
            if guard.is_gone().is_some() {
                continue;
            }
            let result = guard.ping(interval.min(Duration::from_secs(10))).await;
            if result.is_err() {
                guard.mark_broken();
            }
            drop(guard);
            drop(connection);
            let mut health = health.lock().unwrap_or_else(PoisonError::into_inner);
            match result {
                Ok(()) => health.ping_failure = None,
                Err(e) => {
                    tracing::warn!(target: "rho::mcp", server = server.as_str(), "keep-alive ping failed: {e}");
                    health.ping_failure = Some(e.to_string());
                }
            }
        }
    });
}
