//! Mounting a session's [`ToolSet`]: built-in tools, `activate_skill` (when skills exist), WASM
//! tools, and every startable MCP server. Eager servers start in parallel (at most
//! `rho_mcp::MAX_CONCURRENT_STARTS` at a time, each budget counted from its own start) and
//! `ready` waits for them; one that fails is reported ([`ServerStatus::Failed`],
//! `mcp-server-failed`) and leaves the rest untouched, and one that offers more than
//! `rho_mcp::MAX_SERVER_TOOLS` tools is mounted with the first of them (`mcp-tools-capped`).
//! A lazy server spawns nothing: with a tool cache entry it is *known* (its tools mounted from
//! the cache, started by the first use); without one it starts in the background to fill the
//! cache, and its tools join at the first turn boundary after. With no startable server
//! nothing MCP-related runs at all. Streamable HTTP sessions are pinged to find lost ones.
//! [`Registry::probe`] starts, names and remembers servers through the same
//! [`ServerStarts`].

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rho_component::{CancelSignal, Diagnostic, DiagnosticCode, McpServerSpec, Tool, Transport};
use rho_mcp::Connection;
use tokio::sync::RwLock;

use super::mcp_tool::McpTool;
use super::probe::{StartFailure, StartReport};
use super::server_link::{Remember, ServerHealth, ServerLink};
use super::server_state::{
    MountedServer, MountedTool, NotLoadedReason, ServerStatus, SharedLive, lock,
};
use super::skill_tool::ActivateSkill;
use super::tool_set::{MountOptions, ToolSet};
use super::toolset_evidence::ServerToolset;
use super::{CacheKey, CacheKeys, CachedCatalog, ToolCache};
use super::{Registry, ServerSlot};

/// How one startable server joins the session.
enum Plan {
    /// It started with the session (or failed to).
    Started(Box<Result<Connection, rho_mcp::McpError>>),
    /// It starts on first use; what the tool cache has of it (`None`: nothing yet).
    Lazy(Option<CachedCatalog>),
}

/// Which servers a mount starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Starting<'a> {
    /// None: the set holds no MCP tool (mounting without MCP).
    Nothing,
    /// A session's: eager servers now, lazy ones from the tool cache or in the background.
    Session,
    /// A probe's: server `only` (every startable one when `None`), lazy ones included, all
    /// now.
    Probe {
        /// The one server to start.
        only: Option<&'a str>,
    },
}

/// One server's start as it finished: its place in the registry, its entry, the result and
/// how long it took.
struct Start {
    index: usize,
    spec: McpServerSpec,
    result: Result<Connection, rho_mcp::McpError>,
    elapsed: Duration,
}

/// The servers of a mount while they start: what joins the set for each startable server,
/// the starts under way, and where what they offer is remembered. Shared by
/// [`Registry::mount`] and [`Registry::probe`], so a probe starts, names and remembers
/// servers exactly as a session does.
pub(super) struct ServerStarts {
    client: rho_mcp::ClientOptions,
    cache: ToolCache,
    keys: HashMap<usize, CacheKey>,
    plans: Vec<(usize, McpServerSpec, Plan)>,
    started: tokio::task::JoinSet<Start>,
    task_index: HashMap<tokio::task::Id, usize>,
    /// Lazy servers (their registry indices) whose tool cache entries are still to be read
    /// ([`ServerStarts::read_cached`]).
    lazy: Vec<usize>,
    writes: CacheWrites,
}

impl Registry {
    /// Builds the session's tool set: built-in tools, `activate_skill` when skills exist, and
    /// (with `options.connect_mcp`) every startable server's tools: eager servers started in
    /// parallel within their own budgets, lazy ones from the tool cache or started in the
    /// background.
    pub async fn mount(&self, options: &MountOptions) -> ToolSet {
        let mut set = ToolSet::empty();
        set.skills = self.skills.skills.iter().cloned().collect();
        for tool in rho_builtin_plugins::builtin_tools() {
            if let Err(d) = set.add(tool) {
                set.diagnostics.push(d);
            }
        }
        let starting = if options.connect_mcp {
            Starting::Session
        } else {
            Starting::Nothing
        };
        let mut starts = self.start_servers(&mut set, options, starting);
        // WASM components load while the servers start. Built-in ones mount with the other
        // built-in tools, plugin ones after the MCP tools.
        let mut names = std::mem::take(&mut *set.names());
        // The lazy servers' cache entries are read on this task while the WASM components
        // load: the load is polled first, so its compiles (or cache reads) run on blocking
        // threads meanwhile. Measured, that beats a thread for the entries, whose start and
        // competition with the compiles cost more than the reads.
        let (wasm, ()) = tokio::join!(
            biased;
            super::wasm_tools::wasm_tools(self, &mut names),
            async { starts.read_cached(&self.plugins, &self.servers) },
        );
        *set.names() = names;
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
        starts.join(&mut set, None).await;
        starts.mount(&mut set, options.keep_alive);
        for tool in plugin_wasm {
            if let Err(d) = set.add(tool) {
                set.diagnostics.push(d);
            }
        }
        set
    }

    /// The tool set of a session whose runtime loads none of rho's components (the Claude CLI
    /// runtime): no tool, and every server entry listed, a valid enabled one as
    /// [`ServerStatus::NotLoaded`] for `reason`, the others in the state their configuration
    /// gives them. Starts nothing.
    pub fn unmounted(&self, reason: NotLoadedReason) -> ToolSet {
        let mut set = ToolSet::empty();
        set.servers = self
            .servers
            .iter()
            .map(|slot| {
                let status = match slot.startable() {
                    Some(_) => ServerStatus::NotLoaded(reason),
                    None => slot.status(),
                };
                MountedServer::new(
                    slot.id.clone(),
                    slot.source,
                    slot.plugin.clone(),
                    slot.spec.as_ref().map(|spec| spec.transport.kind()),
                    status,
                    Vec::new(),
                )
            })
            .collect();
        set
    }

    /// Lists every server entry in `set` (in registry order, in the state its configuration
    /// gives it) and starts what `starting` asks for, in parallel; lazy servers of a session
    /// get their plan from the tool cache instead ([`ServerStarts::read_cached`]).
    /// [`ServerStarts::join`] waits for the starts, [`ServerStarts::mount`] mounts their
    /// tools.
    pub(super) fn start_servers(
        &self,
        set: &mut ToolSet,
        options: &MountOptions,
        starting: Starting<'_>,
    ) -> ServerStarts {
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
        let mut starts = ServerStarts {
            client,
            cache: ToolCache::new(self.paths.mcp_cache_dir()),
            keys: HashMap::new(),
            plans: Vec::new(),
            started: tokio::task::JoinSet::new(),
            task_index: HashMap::new(),
            lazy: Vec::new(),
            // A probe ends right after its servers close: it waits for their cache writes.
            writes: match starting {
                Starting::Probe { .. } => CacheWrites::kept(),
                Starting::Nothing | Starting::Session => CacheWrites::default(),
            },
        };
        let mut keys = CacheKeys::new(&self.plugins, &rho_mcp::process_ambient);
        for (index, slot) in self.servers.iter().enumerate() {
            let mut server = MountedServer::new(
                slot.id.clone(),
                slot.source,
                slot.plugin.clone(),
                slot.spec.as_ref().map(|s| s.transport.kind()),
                slot.status(),
                Vec::new(),
            );
            server.defer = slot.spec.as_ref().is_none_or(|s| s.defer);
            set.servers.push(server);
            let lazy_from_cache = match starting {
                Starting::Nothing => continue,
                Starting::Session => true,
                Starting::Probe { only } => {
                    if only.is_some_and(|only| only != slot.id) {
                        continue;
                    }
                    false
                }
            };
            let Some(spec) = slot.startable() else {
                continue;
            };
            if lazy_from_cache && spec.startup == rho_component::Startup::Lazy {
                starts.lazy.push(index);
                continue;
            }
            if let Some(key) = keys.key(slot) {
                starts.keys.insert(index, key);
            }
            let spec = spec.clone();
            let client = starts.client.clone();
            let handle = starts.started.spawn(async move {
                let began = std::time::Instant::now();
                let result = rho_mcp::connect_with(&spec, &rho_mcp::process_ambient, &client).await;
                let elapsed = began.elapsed();
                Start {
                    index,
                    spec,
                    result,
                    elapsed,
                }
            });
            starts.task_index.insert(handle.id(), index);
        }
        starts
    }
}

impl ServerStarts {
    /// Reads the tool cache entries of the lazy servers listed so far (`servers` is the
    /// registry's list they index), one after another, the directory checked once for all,
    /// and plans each to start on first use.
    fn read_cached(&mut self, plugins: &rho_plugins::PluginInventory, servers: &[ServerSlot]) {
        if self.lazy.is_empty() {
            return;
        }
        let mut keys = CacheKeys::new(plugins, &rho_mcp::process_ambient);
        let reader = self.cache.reader();
        for index in std::mem::take(&mut self.lazy) {
            let Some(slot) = servers.get(index) else {
                continue;
            };
            let Some(spec) = slot.startable() else {
                continue;
            };
            let key = keys.key(slot);
            let cached = reader
                .as_ref()
                .zip(key.as_ref())
                .and_then(|(reader, key)| reader.load(key));
            if let Some(key) = key {
                self.keys.insert(index, key);
            }
            self.plans.push((index, spec.clone(), Plan::Lazy(cached)));
        }
    }

    /// Waits for every start under way, telling `watch` of each as it finishes. A server
    /// that could not start is [`ServerStatus::Failed`] in `set` and is reported there as a
    /// diagnostic.
    pub(super) async fn join(
        &mut self,
        set: &mut ToolSet,
        watch: Option<&tokio::sync::mpsc::Sender<StartReport>>,
    ) {
        // Zero-server fast path: with nothing startable the join set is empty and no task,
        // process or socket exists.
        while let Some(joined) = self.started.join_next().await {
            let report = match joined {
                Ok(start) => {
                    let report = StartReport {
                        server: start.spec.id.clone(),
                        outcome: match &start.result {
                            Ok(connection) => Ok(connection.tools.len()),
                            Err(e) => Err(e.clone().into()),
                        },
                        elapsed: start.elapsed,
                    };
                    self.plans.push((
                        start.index,
                        start.spec,
                        Plan::Started(Box::new(start.result)),
                    ));
                    Some(report)
                }
                Err(e) => {
                    // A start-up task that panicked fails only its own server.
                    self.task_index.get(&e.id()).map(|&index| {
                        let server = &set.servers[index];
                        let failure = StartFailure::Internal {
                            server: server.id.clone(),
                        };
                        let message = "start-up failed unexpectedly (an internal error)".to_owned();
                        set.diagnostics.push(
                            Diagnostic::error(DiagnosticCode::McpServerFailed, message.clone())
                                .with_component(server.id.clone()),
                        );
                        lock(&server.live).status = ServerStatus::Failed(message);
                        StartReport {
                            server: server.id.clone(),
                            outcome: Err(failure),
                            elapsed: Duration::ZERO,
                        }
                    })
                }
            };
            if let (Some(watch), Some(report)) = (watch, report) {
                // A watcher that went away only stops hearing of starts.
                let _ = watch.send(report).await;
            }
        }
    }

    /// The cache writes of this mount ([`CacheWrites::finish`] waits for them).
    pub(super) fn writes(&self) -> CacheWrites {
        self.writes.clone()
    }

    /// Mounts every server's tools in registry order, however their starts finished: a
    /// started server behind its connection (what it offers remembered in the tool cache),
    /// a lazy one from the cache or started in the background. HTTP sessions are pinged
    /// every `keep_alive`.
    pub(super) fn mount(self, set: &mut ToolSet, keep_alive: Option<Duration>) {
        let Self {
            client,
            cache,
            mut keys,
            mut plans,
            writes,
            ..
        } = self;
        plans.sort_by_key(|(index, _, _)| *index);
        let client = Arc::new(client);
        for (index, spec, plan) in plans {
            let live = set.servers[index].live.clone();
            let remember = keys
                .remove(&index)
                .map(|key| remember_in(&cache, key, writes.clone()));
            let http = spec.transport.kind() == Transport::StreamableHttp;
            let (link, tools, toolset) = match plan {
                Plan::Started(result) => match *result {
                    Err(e) => {
                        let message = e.to_string();
                        set.diagnostics.push(
                            Diagnostic::error(DiagnosticCode::McpServerFailed, message.clone())
                                .with_component(spec.id.clone()),
                        );
                        lock(&live).status = ServerStatus::Failed(message);
                        continue;
                    }
                    Ok(connection) => {
                        if connection.tools_left_out > 0 {
                            set.diagnostics.push(
                                Diagnostic::warning(
                                    DiagnosticCode::McpToolsCapped,
                                    rho_mcp::tools_left_out_message(
                                        &spec.id,
                                        connection.tools_left_out,
                                    ),
                                )
                                .with_component(spec.id.clone()),
                            );
                        }
                        let tools = connection.tools.clone();
                        let toolset = ServerToolset::of(
                            &spec,
                            connection.options(),
                            true,
                            &tools,
                            connection.prompts().len(),
                            connection.resources().len(),
                        );
                        let link =
                            ServerLink::started(connection, live, set.restarts.clone(), remember);
                        (Arc::new(link), Some(tools), Some(toolset))
                    }
                },
                Plan::Lazy(Some(catalog)) => {
                    {
                        // Until it starts, inventories show what the cache remembers.
                        let mut live = lock(&live);
                        live.status = ServerStatus::Known;
                        live.protocol_version = Some(catalog.protocol_version.clone());
                        live.server_info = catalog.server_info.clone();
                        live.instructions = catalog.instructions.clone();
                    }
                    let toolset = ServerToolset::of(
                        &spec,
                        &client,
                        false,
                        &catalog.tools,
                        catalog.prompts.len(),
                        catalog.resources.len(),
                    );
                    let link = ServerLink::unstarted(
                        spec,
                        client.clone(),
                        Some(catalog),
                        live,
                        set.restarts.clone(),
                        remember,
                    );
                    (Arc::new(link), None, Some(toolset))
                }
                Plan::Lazy(None) => {
                    let link = Arc::new(ServerLink::unstarted(
                        spec,
                        client.clone(),
                        None,
                        live,
                        set.restarts.clone(),
                        remember,
                    ));
                    fill_in_background(&link, &set.stop);
                    (link, None, None)
                }
            };
            let spec = link.spec();
            set.output_caps
                .insert(spec.id.clone(), spec.max_output_bytes);
            // A started server's tools are its connection's; a lazy one's, its cache entry's
            // (none without one), which the link holds.
            match tools {
                Some(tools) => mount_tools(set, &link, &tools),
                None => link.with_cached_tools(|tools| mount_tools(set, &link, tools)),
            }
            if let Some(toolset) = toolset {
                set.announce(link.live(), toolset);
            }
            if let (true, Some(interval)) = (http, keep_alive) {
                spawn_keep_alive(
                    Arc::downgrade(link.connection()),
                    interval,
                    link.live().clone(),
                    set.stop.clone(),
                    spec.id.clone(),
                );
            }
            set.links.push(link);
        }
    }
}

/// Tool cache writes to wait for: a probe's, which ends right after its servers close. A
/// session's are not kept (they finish on their own, off its task).
#[derive(Clone, Default)]
pub(super) struct CacheWrites(Option<Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>>);

impl CacheWrites {
    /// Writes that are kept until [`CacheWrites::finish`].
    fn kept() -> Self {
        Self(Some(Arc::default()))
    }

    fn add(&self, write: tokio::task::JoinHandle<()>) {
        if let Some(kept) = &self.0 {
            kept.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(write);
        }
    }

    /// Waits for every kept write.
    pub(super) async fn finish(&self) {
        let Some(kept) = &self.0 else {
            return;
        };
        let writes = std::mem::take(
            &mut *kept
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for write in writes {
            // A write that panicked only leaves the cache as it was.
            let _ = write.await;
        }
    }
}

/// Remembers what a server offers in `cache` under `key`, off the session's task (the write
/// is flushed to disk), and only when it changed; `writes` keeps the write when someone waits
/// for it.
fn remember_in(cache: &ToolCache, key: CacheKey, writes: CacheWrites) -> Remember {
    let cache = cache.clone();
    Box::new(move |catalog| {
        let (cache, key) = (cache.clone(), key.clone());
        writes.add(tokio::task::spawn_blocking(move || {
            if cache.load(&key).as_ref() != Some(&*catalog) {
                cache.store(&key, &catalog);
            }
        }));
    })
}

/// Mounts `tools` of the server behind `link` while mounting (name collisions become
/// diagnostics).
fn mount_tools(set: &mut ToolSet, link: &Arc<ServerLink>, tools: &[rho_mcp::ServerTool]) {
    let spec = link.spec();
    let mut contributed = Vec::new();
    for tool in tools {
        let exported = set.names().assign(&spec.id, &tool.name);
        let mounted: Arc<dyn Tool> = Arc::new(McpTool::new(
            exported,
            tool,
            &spec.id,
            spec.plugin(),
            link.clone(),
            spec.max_output_bytes,
        ));
        let named = MountedTool {
            name: mounted.spec().name.clone(),
            tool: tool.name.clone(),
            needs_tasks: tool.needs_tasks,
        };
        match set.add(mounted) {
            Ok(()) => contributed.push(named),
            Err(d) => set.diagnostics.push(d),
        }
    }
    lock(link.live()).tools = contributed;
}

/// Starts a lazy server nothing is cached for, off the session's start: its tools join at
/// the first turn boundary after it started (the connection adopts an empty mounted list, so
/// everything it lists is added). The set's close stops it.
fn fill_in_background(link: &Arc<ServerLink>, stop: &CancelSignal) {
    let link = link.clone();
    let stop = stop.clone();
    tokio::spawn(async move {
        let deadline = std::time::Instant::now() + link.call_budget();
        if let Err(e) = link.start_first(&stop, deadline).await {
            tracing::warn!(target: "rho::mcp", server = link.id(), "background start failed: {e}");
        }
    });
}

/// Pings a Streamable HTTP session (either era) every `interval` until `stop`, since an idle
/// proxy can drop a remote connection with no local signal. A failure is recorded for
/// inventories (cleared by the next answer) and marks the session broken, so the next call
/// starts a new one instead of using it; a session not started or already lost is not
/// pinged. The one keep-alive of a session's servers (`docs/mcp.md`, "Servers that come
/// back").
fn spawn_keep_alive(
    connection: std::sync::Weak<RwLock<Option<Connection>>>,
    interval: Duration,
    live: SharedLive,
    stop: CancelSignal,
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
            let Some(session) = guard.as_ref() else {
                continue;
            };
            if session.is_gone().is_some() {
                continue;
            }
            let result = session.ping(interval.min(Duration::from_secs(10))).await;
            if result.is_err() {
                session.mark_broken();
            }
            drop(guard);
            drop(connection);
            let health: &mut ServerHealth = &mut lock(&live).health;
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
