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

use rho_component::naming::ExportedNames;
use rho_component::{CancelSignal, Diagnostic, DiagnosticCode, SkillMeta, Tool, ToolSpec};
use rho_mcp::Connection;
use tokio::sync::RwLock;

use super::mcp_tool::McpTool;
use super::server_link::{RestartNotices, ServerLink, ServerRestart};
use super::server_state::{MountedServer, MountedTool, SharedLive, lock};
use super::toolset_evidence::ServerToolset;

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

/// A session's tools. Servers' revised definitions replace the old ones, and tools servers
/// add (a server that started lazily, or announced a new list) join, at a turn boundary
/// ([`ToolSet::reconcile`]); an exported name, once given, keeps meaning the same tool.
pub struct ToolSet {
    mounted: std::sync::RwLock<Mounted>,
    /// The exported names given so far (a tool that joins later gets the next free one).
    names: Mutex<ExportedNames>,
    /// Every server entry and its live state, in registry order.
    pub servers: Vec<MountedServer>,
    /// Problems found while mounting (failed servers, name collisions).
    pub diagnostics: Vec<Diagnostic>,
    /// The skills the catalog lists.
    pub skills: Vec<SkillMeta>,
    pub(super) links: Vec<Arc<ServerLink>>,
    /// Restarts not reported yet ([`ToolSet::take_restarts`]).
    pub(super) restarts: RestartNotices,
    /// Servers' tool lists that became usable and were not reported yet
    /// ([`ToolSet::take_initialized`]).
    initialized: Mutex<Vec<ServerToolset>>,
    /// Servers rho gave up on whose `toolset/closed` went out already ([`ToolSet::take_lost`]);
    /// [`ToolSet::close`] leaves them out.
    lost: Mutex<std::collections::BTreeSet<String>>,
    /// `max_output_bytes` of each server (a remounted or joining tool gets its cap).
    pub(super) output_caps: HashMap<String, u64>,
    /// Stops keep-alive pings and background first starts when the set closes.
    pub(super) stop: CancelSignal,
    /// The built-in WASM components, compiled on first use ([`ToolSet::warm_components`]).
    pub(super) deferred: Vec<Arc<rho_wasm::DeferredComponent>>,
}

/// The tools and their index by exported name.
#[derive(Default)]
struct Mounted {
    tools: Vec<Arc<dyn Tool>>,
    index: HashMap<String, usize>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.read().index.keys().collect::<Vec<_>>())
            .field("servers", &self.servers)
            .finish_non_exhaustive()
    }
}

impl ToolSet {
    /// A set with no tool and no server.
    pub fn empty() -> Self {
        Self {
            mounted: std::sync::RwLock::default(),
            names: Mutex::default(),
            servers: Vec::new(),
            diagnostics: Vec::new(),
            skills: Vec::new(),
            links: Vec::new(),
            restarts: RestartNotices::default(),
            initialized: Mutex::default(),
            lost: Mutex::default(),
            output_caps: HashMap::new(),
            stop: CancelSignal::new(),
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

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Mounted> {
        self.mounted.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Mounted> {
        self.mounted.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The exported names given so far.
    pub(super) fn names(&self) -> std::sync::MutexGuard<'_, ExportedNames> {
        self.names.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The tool exported as `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        let mounted = self.read();
        let index = *mounted.index.get(name)?;
        mounted.tools.get(index).cloned()
    }

    /// Every tool's current declaration: built-in first, then `activate_skill`, then MCP tools
    /// in server order, then plugin WASM tools, then tools that joined later.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.read().tools.iter().map(|t| t.spec().clone()).collect()
    }

    /// Whether `spec`'s tool is always sent to the model, never held back behind the tool
    /// search: built-in tools (`activate_skill` and the built-in WASM tools included) and the
    /// tools of servers pinned with `defer = false`.
    pub fn pinned(&self, spec: &ToolSpec) -> bool {
        match &spec.origin {
            rho_component::ToolOrigin::Builtin => true,
            rho_component::ToolOrigin::Mcp { server, .. } => {
                self.servers.iter().any(|s| &s.id == server && !s.defer)
            }
            rho_component::ToolOrigin::Wasm { .. } => false,
        }
    }

    /// How many tools the set holds.
    pub fn len(&self) -> usize {
        self.read().index.len()
    }

    /// Whether the set holds no tool.
    pub fn is_empty(&self) -> bool {
        self.read().index.is_empty()
    }

    /// The connection to `server` as it is (`None` inside when it has not started).
    pub(crate) fn connection(&self, server: &str) -> Option<Arc<RwLock<Option<Connection>>>> {
        self.links
            .iter()
            .find(|link| link.id() == server)
            .map(|link| link.connection().clone())
    }

    /// The connection to `server` for a use of it (a prompt, a resource read): started first
    /// when it has not started, or again when its session was lost (as a tool call would:
    /// `docs/mcp.md`, "Lazy start" and "Servers that come back"); `None` when no such server
    /// is mounted, an error naming the server when it cannot be started in time.
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

    /// Every mounted server's prompts (refreshed by the server's `list_changed`; the tool
    /// cache's before a lazy server starts), as `(server, prompt)` in server order.
    pub async fn prompts(&self) -> Vec<(String, rho_component::ServerPrompt)> {
        let mut out = Vec::new();
        for link in &self.links {
            let prompts = link.prompts().await;
            out.extend(prompts.into_iter().map(|p| (link.id().to_owned(), p)));
        }
        out
    }

    /// Every mounted server's resources and resource templates (as [`ToolSet::prompts`]), as
    /// `(server, resource)` in server order.
    pub async fn resources(&self) -> Vec<(String, rho_component::ServerResource)> {
        let mut out = Vec::new();
        for link in &self.links {
            let resources = link.resources().await;
            out.extend(resources.into_iter().map(|r| (link.id().to_owned(), r)));
        }
        out
    }

    /// The restarts (and servers given up on) since the last call, oldest first, for the
    /// session to report.
    pub fn take_restarts(&self) -> Vec<ServerRestart> {
        std::mem::take(&mut *self.restarts.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Records that a server's tool list became usable in the session (`live` from the running
    /// server, or from the tool cache), for inventories, the log and the session to report
    /// ([`ToolSet::take_initialized`]).
    pub(super) fn announce(&self, live: &SharedLive, toolset: ServerToolset) {
        toolset.log("toolset initialized");
        lock(live).toolset = Some(toolset.clone());
        self.initialized
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(toolset);
    }

    /// The servers' tool lists that became usable since the last call, oldest first, for the
    /// session to report (`toolset/initialized`): each server once when mounted (live for one
    /// started with the session, from the tool cache for a lazy one the cache knows), and once
    /// more, live, at the turn boundary after a lazy server's first start lists its tools.
    pub fn take_initialized(&self) -> Vec<ServerToolset> {
        std::mem::take(
            &mut *self
                .initialized
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// What `toolset/closed` reports of each server whose tools were known and that rho gave
    /// up on since the last call (it is lost for the rest of the session: `live: false`), each
    /// logged once; [`ToolSet::close`] does not report them again.
    pub fn take_lost(&self) -> Vec<ServerToolset> {
        let mut lost = self.lost.lock().unwrap_or_else(PoisonError::into_inner);
        self.servers
            .iter()
            .filter(|server| server.health().given_up.is_some())
            .filter_map(|server| {
                let mut toolset = server.toolset()?;
                if !lost.insert(server.id.clone()) {
                    return None;
                }
                toolset.live = false;
                toolset.log("toolset closed");
                Some(toolset)
            })
            .collect()
    }

    /// What was last reported of each server whose tools are known (`toolset/initialized`),
    /// in registry order.
    pub fn toolsets(&self) -> Vec<ServerToolset> {
        self.servers
            .iter()
            .filter_map(MountedServer::toolset)
            .collect()
    }

    /// The instructions of every server that has given some, as `(server, text)`.
    pub fn instructions(&self) -> Vec<(String, String)> {
        self.servers
            .iter()
            .filter_map(|s| Some((s.id.clone(), s.instructions()?)))
            .collect()
    }

    /// Re-lists the tools of every server that announced a change, was started again, started
    /// from its tool cache entry (its tools not yet listed; its prompts and resources are
    /// listed too), or started for the first time with a list other than the one mounted for
    /// it, at a turn
    /// boundary (no call may be running). Revised definitions replace the old ones; added
    /// tools join under new exported names; withdrawn ones keep their names and fail clearly.
    /// Returns `(server, changes)` for each server that had some.
    pub async fn reconcile(&self) -> Vec<(String, rho_mcp::ToolChanges)> {
        self.reconcile_servers(false).await
    }

    /// [`ToolSet::reconcile`] while calls may be running (`rho mcp serve`): a server with a
    /// call in flight is left for a later pass instead of waited for, so a long call never
    /// holds up the server's other calls behind the listing.
    pub async fn reconcile_idle(&self) -> Vec<(String, rho_mcp::ToolChanges)> {
        self.reconcile_servers(true).await
    }

    async fn reconcile_servers(&self, skip_busy: bool) -> Vec<(String, rho_mcp::ToolChanges)> {
        let mut out = Vec::new();
        for link in &self.links {
            let id = link.id();
            let connection = link.connection();
            {
                let guard = connection.read().await;
                match guard.as_ref() {
                    Some(c) if c.tools_changed() && c.is_gone().is_none() => {}
                    _ => continue,
                }
            }
            let mut guard = if skip_busy {
                match connection.try_write() {
                    Ok(guard) => guard,
                    Err(_) => continue,
                }
            } else {
                connection.write().await
            };
            let Some(connection) = guard.as_mut() else {
                continue;
            };
            match connection.reconcile_tools().await {
                Ok(changes) => {
                    // A revised definition reaches the model from the next turn: the tool is
                    // mounted again under its exported name with the new declaration.
                    for name in &changes.revised {
                        if let Some(tool) = connection.tools.iter().find(|t| &t.name == name) {
                            self.replace_mcp_tool(id, tool, link);
                        }
                    }
                    let added = connection.accept_added();
                    self.join(link, &added);
                    link.remember(connection);
                    // A lazy server's first listing: its live tools are usable from now on.
                    let reported_live = lock(link.live()).toolset.as_ref().is_some_and(|t| t.live);
                    if !reported_live {
                        let toolset = ServerToolset::of(
                            link.spec(),
                            connection.options(),
                            true,
                            &connection.live_tools(),
                            connection.prompts().len(),
                            connection.resources().len(),
                        );
                        self.announce(link.live(), toolset);
                    }
                    // A listing that confirms what was mounted (a known server's first
                    // start, a restart) changes nothing to report.
                    if !changes.is_empty() {
                        out.push((id.to_owned(), changes));
                    }
                }
                Err(e) => {
                    tracing::warn!(target: "rho::mcp", server = id, "re-listing tools failed: {e}")
                }
            }
        }
        out
    }

    /// Mounts `tools` of the server behind `link` (it started, or added them) under new
    /// exported names.
    pub(super) fn join(&self, link: &Arc<ServerLink>, tools: &[rho_mcp::ServerTool]) {
        let Some(server) = self.servers.iter().find(|s| s.id == link.id()) else {
            return;
        };
        let max_output_bytes = self
            .output_caps
            .get(link.id())
            .copied()
            .unwrap_or(rho_component::DEFAULT_MAX_OUTPUT_BYTES);
        let mut joined = Vec::new();
        for tool in tools {
            let exported = self.names().assign(link.id(), &tool.name);
            let mounted = Arc::new(McpTool::new(
                exported,
                tool,
                link.id(),
                server.plugin.as_deref(),
                link.clone(),
                max_output_bytes,
            ));
            let named = MountedTool {
                name: mounted.spec().name.clone(),
                tool: tool.name.clone(),
                needs_tasks: tool.needs_tasks,
            };
            match self.insert(mounted) {
                Ok(()) => joined.push(named),
                Err(d) => tracing::warn!(target: "rho::mcp", server = link.id(), "{}", d.message),
            }
        }
        if !joined.is_empty() {
            let mut live = lock(link.live());
            live.added_tools
                .extend(joined.iter().map(|t| t.tool.clone()));
            live.tools.extend(joined);
        }
    }

    /// Replaces the mounted tool for `tool` of `server` with one built from its current
    /// definition, keeping its exported name and output cap.
    fn replace_mcp_tool(&self, server: &str, tool: &rho_mcp::ServerTool, link: &Arc<ServerLink>) {
        let mut mounted = self.write();
        let Some(slot) = mounted.tools.iter_mut().find(|t| {
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
        drop(mounted);
        // Inventories show whether it needs tasks as its new declaration says.
        if let Some(named) = lock(link.live())
            .tools
            .iter_mut()
            .find(|t| t.tool == tool.name)
        {
            named.needs_tasks = tool.needs_tasks;
        }
    }

    /// Stops keep-alive pings and background starts, and closes every server (stdin closed,
    /// then the process group stopped; HTTP sessions deleted). Returns what `toolset/closed`
    /// reports: each server whose tools were known, `live` when it was running, each logged
    /// (not those [`ToolSet::take_lost`] reported already).
    pub async fn close(self) -> Vec<ServerToolset> {
        let lost = std::mem::take(&mut *self.lost.lock().unwrap_or_else(PoisonError::into_inner));
        let closed: Vec<ServerToolset> = self
            .servers
            .iter()
            .filter(|server| !lost.contains(&server.id))
            .filter_map(|server| {
                let mut toolset = server.toolset()?;
                toolset.live = server.status().is_running();
                Some(toolset)
            })
            .collect();
        self.stop.cancel();
        drop(self.mounted);
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
        for toolset in &closed {
            toolset.log("toolset closed");
        }
        closed
    }

    /// Adds `tool` while mounting.
    pub(super) fn add(&mut self, tool: Arc<dyn Tool>) -> Result<(), Diagnostic> {
        self.insert(tool)
    }

    /// Adds `tool` under its exported name, unless another tool has that name.
    fn insert(&self, tool: Arc<dyn Tool>) -> Result<(), Diagnostic> {
        let name = tool.spec().name.clone();
        let mut mounted = self.write();
        if let Some(&kept) = mounted.index.get(&name) {
            let kept = &mounted.tools[kept].spec().origin;
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
        let at = mounted.tools.len();
        mounted.index.insert(name, at);
        mounted.tools.push(tool);
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
