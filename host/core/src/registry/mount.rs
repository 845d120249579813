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

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rho_component::{CancelSignal, Diagnostic, DiagnosticCode, McpServerSpec, Tool, Transport};
use rho_mcp::Connection;
use tokio::sync::RwLock;

use super::mcp_tool::McpTool;
use super::server_link::{Remember, ServerHealth, ServerLink, Unstarted};
use super::server_state::{MountedServer, MountedTool, ServerStatus, SharedLive, lock};
use super::skill_tool::ActivateSkill;
use super::tool_set::{MountOptions, ToolSet};
use super::{CacheKey, CachedCatalog, ToolCache};
use super::{Registry, SlotState};

/// How one startable server joins the session.
enum Plan {
    /// It started with the session (or failed to).
    Started(Box<Result<Connection, rho_mcp::McpError>>),
    /// It starts on first use; what the tool cache has of it (`None`: nothing yet).
    Lazy(Option<CachedCatalog>),
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
        let mut started = tokio::task::JoinSet::new();
        let mut task_index = HashMap::new();
        let mut plans = Vec::new();
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
        let cache = ToolCache::new(self.paths.mcp_cache_dir());
        let mut keys = HashMap::new();
        for (index, slot) in self.servers.iter().enumerate() {
            let status = match &slot.state {
                SlotState::Configured => ServerStatus::Configured,
                SlotState::Disabled => ServerStatus::Disabled,
                SlotState::Invalid(e) => ServerStatus::Invalid(e.clone()),
                SlotState::Untrusted(e) => ServerStatus::Untrusted(e.clone()),
            };
            let mut server = MountedServer::new(
                slot.id.clone(),
                slot.source,
                slot.plugin.clone(),
                slot.spec.as_ref().map(|s| s.transport.kind()),
                status,
                Vec::new(),
            );
            server.defer = slot.spec.as_ref().is_none_or(|s| s.defer);
            set.servers.push(server);
            if !options.connect_mcp {
                continue;
            }
            let Some(spec) = slot.startable() else {
                continue;
            };
            let key = CacheKey::of(slot, &self.plugins);
            if spec.startup == rho_component::Startup::Lazy {
                let cached = key.as_ref().and_then(|key| cache.load(key));
                plans.push((index, spec.clone(), Plan::Lazy(cached)));
            }
            if let Some(key) = key {
                keys.insert(index, key);
            }
            if spec.startup == rho_component::Startup::Lazy {
                continue;
            }
            let spec = spec.clone();
            let client = client.clone();
            let handle = started.spawn(async move {
                let result = rho_mcp::connect_with(&spec, &rho_mcp::process_ambient, &client).await;
                (index, spec, result)
            });
            task_index.insert(handle.id(), index);
        }
        // WASM components load while the servers start. Built-in ones mount with the other
        // built-in tools, plugin ones after the MCP tools.
        let mut names = std::mem::take(&mut *set.names());
        let wasm = super::wasm_tools::wasm_tools(self, &mut names).await;
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
        // Zero-server fast path: with nothing startable the join set is empty and no task,
        // process or socket exists.
        while let Some(joined) = started.join_next().await {
            match joined {
                Ok((index, spec, result)) => {
                    plans.push((index, spec, Plan::Started(Box::new(result))));
                }
                Err(e) => {
                    // A start-up task that panicked fails only its own server.
                    if let Some(&index) = task_index.get(&e.id()) {
                        let server = &set.servers[index];
                        let message = "start-up failed unexpectedly (an internal error)".to_owned();
                        set.diagnostics.push(
                            Diagnostic::error(DiagnosticCode::McpServerFailed, message.clone())
                                .with_component(server.id.clone()),
                        );
                        lock(&server.live).status = ServerStatus::Failed(message);
                    }
                }
            }
        }
        // Servers mount in registry order, however their starts finished.
        plans.sort_by_key(|(index, _, _)| *index);
        for (index, spec, plan) in plans {
            let live = set.servers[index].live.clone();
            let remember = keys.remove(&index).map(|key| remember_in(&cache, key));
            let http = spec.transport.kind() == Transport::StreamableHttp;
            let (link, tools) = match plan {
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
                        if let Some(remember) = &remember {
                            remember(&connection);
                        }
                        let tools = connection.tools.clone();
                        let link =
                            ServerLink::started(connection, live, set.restarts.clone(), remember);
                        (Arc::new(link), tools)
                    }
                },
                Plan::Lazy(Some(catalog)) => {
                    let tools = catalog.tools.clone();
                    {
                        // Until it starts, inventories show what the cache remembers.
                        let mut live = lock(&live);
                        live.status = ServerStatus::Known;
                        live.protocol_version = Some(catalog.protocol_version.clone());
                        live.server_info = catalog.server_info.clone();
                        live.instructions = catalog.instructions.clone();
                    }
                    let link = ServerLink::unstarted(
                        spec.clone(),
                        client.clone(),
                        Unstarted::from(catalog),
                        live,
                        set.restarts.clone(),
                        remember,
                    );
                    (Arc::new(link), tools)
                }
                Plan::Lazy(None) => {
                    let link = Arc::new(ServerLink::unstarted(
                        spec.clone(),
                        client.clone(),
                        Unstarted::default(),
                        live,
                        set.restarts.clone(),
                        remember,
                    ));
                    fill_in_background(&link, &set.stop);
                    (link, Vec::new())
                }
            };
            set.output_caps
                .insert(spec.id.clone(), spec.max_output_bytes);
            mount_tools(&mut set, &spec, &link, &tools);
            if let (true, Some(interval)) = (http, options.keep_alive) {
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
        for tool in plugin_wasm {
            if let Err(d) = set.add(tool) {
                set.diagnostics.push(d);
            }
        }
        set
    }
}

/// Remembers what a server offers in `cache` under `key`, off the session's task (the write
/// is flushed to disk), and only when it changed.
fn remember_in(cache: &ToolCache, key: CacheKey) -> Remember {
    let cache = cache.clone();
    Box::new(move |connection| {
        let catalog = CachedCatalog::of(connection);
        let (cache, key) = (cache.clone(), key.clone());
        drop(tokio::task::spawn_blocking(move || {
            if cache.load(&key).as_ref() != Some(&catalog) {
                cache.store(&key, &catalog);
            }
        }));
    })
}

/// Mounts `tools` of `spec`'s server behind `link` while mounting (name collisions become
/// diagnostics).
fn mount_tools(
    set: &mut ToolSet,
    spec: &McpServerSpec,
    link: &Arc<ServerLink>,
    tools: &[rho_mcp::ServerTool],
) {
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
