//! One MCP server as a session's tools share it: its connection, made by the first call when
//! the server starts lazily (once, however many calls arrive together), started again by the
//! next call that finds its session lost (rho-mcp's `Restarts` keeps the policy: backoff,
//! giving up), what inventories show of it (its [`ServerLive`](super::server_state)), and the
//! restarts the session reports ([`ServerRestart`]). See `docs/mcp.md`, "Lazy start" and
//! "Servers that come back".

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use rho_component::{CancelSignal, McpServerSpec, ServerPrompt, ServerResource};
use rho_mcp::{ClientOptions, Connection, Restarts, ServerTool};
use tokio::sync::{RwLock, RwLockReadGuard};

use super::CachedCatalog;
use super::server_state::{ServerStatus, SharedLive, lock};

/// What a session's inventories show of a server's life since it started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerHealth {
    /// How many times rho started it again (a new process, a new HTTP session).
    pub restarts: u32,
    /// Why the last restart happened.
    pub last_restart: Option<String>,
    /// The latest failed keep-alive ping (HTTP sessions; cleared by the next answered one).
    pub ping_failure: Option<String>,
    /// Why rho gave up on it, once it has: it stays failed for the rest of the session.
    pub given_up: Option<String>,
}

/// A restart of a server, or rho giving up on one, as the session reports it
/// (`server/restart`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerRestart {
    /// The server identity.
    pub server: String,
    /// Its restarts so far in this session.
    pub restarts: u32,
    /// Why it was (or could not be) started again.
    pub reason: String,
    /// Set when rho gave up on the server (it stays failed for the rest of the session): why.
    pub gave_up: Option<String>,
}

/// Restarts waiting for the session to report them (shared by every link of a tool set).
pub(crate) type RestartNotices = Arc<Mutex<Vec<ServerRestart>>>;

/// Called with what a link's server offers whenever that changed from what the tool cache is
/// known to hold (at its first start, a start again, a reconciled tool list): the registry
/// remembers it (the tool cache).
pub(crate) type Remember = Box<dyn Fn(Arc<CachedCatalog>) + Send + Sync>;

/// A server shared by its tools, its prompts and resources, and the keep-alive.
pub(crate) struct ServerLink {
    id: String,
    spec: McpServerSpec,
    /// Shared by every server of a session.
    options: Arc<ClientOptions>,
    /// The server's `call_timeout_sec`: a call's wait for a start fits in it.
    call_budget: std::time::Duration,
    /// `None` until the server first starts.
    connection: Arc<RwLock<Option<Connection>>>,
    /// What the tool cache holds for the server, as far as this session knows: the entry it
    /// was mounted from (its tools are the ones mounted before the first start), then what
    /// each start or reconciliation remembered. A start that finds the same writes nothing.
    cached: Mutex<Option<Arc<CachedCatalog>>>,
    restarts: Mutex<Restarts>,
    /// Held while the server is being started, so concurrent calls start it once.
    starting: tokio::sync::Mutex<()>,
    /// Failed first starts so far and the last one's error: calls that waited behind a start
    /// that failed get its error instead of starting the server again at once.
    first_failures: Mutex<(u64, Option<String>)>,
    live: SharedLive,
    notices: RestartNotices,
    remember: Option<Remember>,
}

impl ServerLink {
    /// A link to a server that started with the session.
    pub(crate) fn started(
        connection: Connection,
        live: SharedLive,
        notices: RestartNotices,
        remember: Option<Remember>,
    ) -> Self {
        {
            let (restarts, last) = connection.restarts();
            let mut live = lock(&live);
            live.started(&connection);
            live.health.restarts = restarts;
            live.health.last_restart = last.map(str::to_owned);
        }
        let spec = connection.spec().clone();
        let options = Arc::new(connection.options().clone());
        let mut link = Self::unstarted(spec, options, None, live, notices, remember);
        link.remember(&connection);
        link.connection = Arc::new(RwLock::new(Some(connection)));
        link
    }

    /// A link to a server that has not started: the first call (or
    /// [`ServerLink::start_first`]) starts it with `options`. `cached` is its tool cache
    /// entry, when there is one: the tools mounted for it, its prompts and resources until it
    /// starts, and the protocol version its first start speaks without probing the era.
    pub(crate) fn unstarted(
        spec: McpServerSpec,
        options: Arc<ClientOptions>,
        cached: Option<CachedCatalog>,
        live: SharedLive,
        notices: RestartNotices,
        remember: Option<Remember>,
    ) -> Self {
        Self {
            id: spec.id.clone(),
            call_budget: spec.call_timeout,
            spec,
            options,
            connection: Arc::new(RwLock::new(None)),
            cached: Mutex::new(cached.map(Arc::new)),
            restarts: Mutex::new(Restarts::default()),
            starting: tokio::sync::Mutex::new(()),
            first_failures: Mutex::new((0, None)),
            live,
            notices,
            remember,
        }
    }

    /// Remembers what the server behind `connection` offers now (the tool cache), unless the
    /// cache is known to hold just that already.
    pub(crate) fn remember(&self, connection: &Connection) {
        let catalog = Arc::new(CachedCatalog::of(connection));
        {
            // Kept even without a cache to write to: the next start speaks its era at once.
            let mut cached = self.cached();
            if cached.as_deref() == Some(&*catalog) {
                return;
            }
            *cached = Some(Arc::clone(&catalog));
        }
        if let Some(remember) = &self.remember {
            remember(catalog);
        }
    }

    /// The server's entry.
    pub(crate) fn spec(&self) -> &McpServerSpec {
        &self.spec
    }

    /// Runs `mount` on the tools the tool cache entry lists (none without an entry): what a
    /// server that has not started is mounted with.
    pub(crate) fn with_cached_tools<T>(&self, mount: impl FnOnce(&[ServerTool]) -> T) -> T {
        mount(self.cached().as_ref().map_or(&[], |c| c.tools.as_slice()))
    }

    /// The server identity.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The server's call budget.
    pub(crate) fn call_budget(&self) -> std::time::Duration {
        self.call_budget
    }

    /// The connection as it is (not made yet, lost or not): completions, the keep-alive, the
    /// turn boundary's reconciliation.
    pub(crate) fn connection(&self) -> &Arc<RwLock<Option<Connection>>> {
        &self.connection
    }

    /// What inventories show of the server.
    pub(crate) fn live(&self) -> &SharedLive {
        &self.live
    }

    /// The prompts the server offers: its connection's, or the cache's before it starts.
    pub(crate) async fn prompts(&self) -> Vec<ServerPrompt> {
        if let Some(connection) = self.connection.read().await.as_ref() {
            return connection.prompts();
        }
        self.cached_part(|c| c.prompts.clone())
    }

    /// The resources the server offers: its connection's, or the cache's before it starts.
    pub(crate) async fn resources(&self) -> Vec<ServerResource> {
        if let Some(connection) = self.connection.read().await.as_ref() {
            return connection.resources();
        }
        self.cached_part(|c| c.resources.clone())
    }

    fn cached_part<T: Default>(&self, part: impl Fn(&CachedCatalog) -> T) -> T {
        self.cached().as_deref().map(part).unwrap_or_default()
    }

    fn cached(&self) -> std::sync::MutexGuard<'_, Option<Arc<CachedCatalog>>> {
        self.cached.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Gives the link back its connection once nothing else holds it (closing the tool set).
    pub(crate) fn into_connection(self) -> Option<Connection> {
        Arc::try_unwrap(self.connection)
            .ok()
            .and_then(RwLock::into_inner)
    }

    /// A usable connection, for a use of the server (a call, a prompt, a resource read): the
    /// current one; the server's first start when it has not started; or, when its session
    /// was lost, the server started again (waiting out the backoff after failed starts).
    /// Fails with a message naming the server when its start fails, when rho gave up on it,
    /// when `cancel` fires, or when the next start could not begin before `deadline`.
    pub(crate) async fn ready(
        &self,
        cancel: &CancelSignal,
        deadline: Instant,
    ) -> Result<RwLockReadGuard<'_, Connection>, String> {
        loop {
            if let Some(given_up) = self.books().given_up() {
                return Err(given_up.to_owned());
            }
            match RwLockReadGuard::try_map(self.connection.read().await, Option::as_ref) {
                Ok(connection) => {
                    let Some(reason) = connection.is_gone() else {
                        let mut live = lock(&self.live);
                        if live.status == ServerStatus::Started {
                            live.status = ServerStatus::Used;
                        }
                        return Ok(connection);
                    };
                    drop(connection);
                    self.start_again(reason, cancel, deadline).await?;
                }
                Err(unstarted) => {
                    drop(unstarted);
                    self.start_first(cancel, deadline).await?;
                }
            }
        }
    }

    /// Starts the server for the first time, unless another call already did: one attempt,
    /// after the backoff earlier failures call for. A call that waited behind a failed
    /// attempt gets that attempt's error (a batch of calls starts a server once).
    pub(crate) async fn start_first(
        &self,
        cancel: &CancelSignal,
        deadline: Instant,
    ) -> Result<(), String> {
        let failures_seen = self.failures().0;
        let _starting = tokio::select! {
            starting = self.starting.lock() => starting,
            () = cancel.cancelled() => return Err("cancelled".to_owned()),
        };
        if self.connection.read().await.is_some() {
            return Ok(());
        }
        {
            let (failures, last) = &*self.failures();
            if *failures != failures_seen {
                return Err(last.clone().unwrap_or_default());
            }
        }
        // With a cache entry the start takes the tools it lists (see `connect_after`).
        let known = self.cached().is_some();
        let wait = self.books().wait(Instant::now());
        let started = self
            .connect_after(wait, deadline, cancel, "could not start")
            .await?;
        match started {
            Ok(mut fresh) => {
                self.books().started();
                // A known start's catalog is the entry's with what its handshake said (version,
                // serverInfo, instructions): remembered when those changed, the rest at the
                // turn boundary that lists it. Otherwise what the server listed is remembered,
                // and the tools mounted before this start (none) stay the set.
                self.remember(&fresh);
                if !known {
                    fresh.adopt_mounted(Vec::new());
                }
                lock(&self.live).started(&fresh);
                tracing::info!(target: "rho::mcp", server = self.id.as_str(), "started on first use");
                *self.connection.write().await = Some(fresh);
                Ok(())
            }
            Err(error) => {
                let error = error.to_string();
                {
                    let mut failures = self.failures();
                    failures.0 += 1;
                    failures.1 = Some(error.clone());
                }
                let given_up = self.books().start_failed(&self.id, Instant::now(), &error);
                lock(&self.live).status = ServerStatus::Failed(error.clone());
                if let Some(given_up) = given_up {
                    self.gave_up(&error, &given_up);
                    return Err(given_up);
                }
                Err(error)
            }
        }
    }

    /// Starts the server again after its session was lost (`reason`), unless another call
    /// already did: one attempt, after the backoff the failures so far call for.
    async fn start_again(
        &self,
        reason: &str,
        cancel: &CancelSignal,
        deadline: Instant,
    ) -> Result<(), String> {
        let _starting = tokio::select! {
            starting = self.starting.lock() => starting,
            () = cancel.cancelled() => return Err("cancelled".to_owned()),
        };
        if self
            .connection
            .read()
            .await
            .as_ref()
            .is_none_or(|connection| connection.is_gone().is_none())
        {
            return Ok(());
        }
        let wait = {
            let mut books = self.books();
            // Counted once per lost session, however many calls find it lost.
            if let Some(given_up) = books.lost(&self.id, Instant::now(), reason) {
                drop(books);
                self.gave_up(reason, &given_up);
                return Err(given_up);
            }
            books.wait(Instant::now())
        };
        let started = self
            .connect_after(wait, deadline, cancel, &format!("is down ({reason})"))
            .await?;
        match started {
            Ok(fresh) => {
                self.books().started();
                self.remember(&fresh);
                let mut slot = self.connection.write().await;
                let old = match slot.as_mut() {
                    Some(current) => Some(current.take_over(fresh, reason)),
                    None => slot.replace(fresh),
                };
                let restarts = slot.as_ref().map_or(0, |c| c.restarts().0);
                if let Some(current) = slot.as_ref() {
                    let mut live = lock(&self.live);
                    live.started(current);
                    live.health.restarts = restarts;
                    live.health.last_restart = Some(reason.to_owned());
                    live.health.ping_failure = None;
                }
                drop(slot);
                if let Some(old) = old {
                    old.close().await;
                }
                self.notify(restarts, reason, None);
                Ok(())
            }
            Err(error) => {
                let error = error.to_string();
                let given_up = self.books().start_failed(&self.id, Instant::now(), &error);
                match given_up {
                    Some(given_up) => {
                        self.gave_up(&error, &given_up);
                        Err(given_up)
                    }
                    // The next attempt (after the backoff) is the caller's loop.
                    None => Ok(()),
                }
            }
        }
    }

    /// Waits out `wait` (the backoff) and starts the server, both ended by `cancel`; refused
    /// when the start could not begin before `deadline` (`state` says how the server is, for
    /// the message).
    async fn connect_after(
        &self,
        wait: std::time::Duration,
        deadline: Instant,
        cancel: &CancelSignal,
        state: &str,
    ) -> Result<Result<Connection, rho_mcp::McpError>, String> {
        if Instant::now() + wait > deadline {
            return Err(format!(
                "MCP server `{}` {state}, and its next start is {:.1} s away, past the call's budget",
                self.id,
                wait.as_secs_f64()
            ));
        }
        // No backoff, no timer: tokio rounds a sleep up to the next millisecond, which a first
        // start would otherwise always wait.
        if !wait.is_zero() {
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = cancel.cancelled() => return Err("cancelled".to_owned()),
            }
        }
        // What the tool cache remembers spares the era probe and the listings before the
        // first request.
        let cached = self.cached().clone();
        let known = cached.as_deref().map(|c| rho_mcp::Known {
            protocol_version: &c.protocol_version,
            tools: &c.tools,
            tools_left_out: c.tools_left_out,
            prompts: &c.prompts,
            resources: &c.resources,
        });
        let start =
            rho_mcp::connect_knowing(&self.spec, &rho_mcp::process_ambient, &self.options, known);
        tokio::select! {
            started = start => Ok(started),
            () = cancel.cancelled() => Err("cancelled".to_owned()),
        }
    }

    fn books(&self) -> std::sync::MutexGuard<'_, Restarts> {
        self.restarts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn failures(&self) -> std::sync::MutexGuard<'_, (u64, Option<String>)> {
        self.first_failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that rho gave up (reported once).
    fn gave_up(&self, reason: &str, given_up: &str) {
        let restarts = {
            let mut live = lock(&self.live);
            if live.health.given_up.is_some() {
                return;
            }
            live.health.given_up = Some(given_up.to_owned());
            live.health.restarts
        };
        self.notify(restarts, reason, Some(given_up.to_owned()));
    }

    fn notify(&self, restarts: u32, reason: &str, gave_up: Option<String>) {
        self.notices
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(ServerRestart {
                server: self.id.clone(),
                restarts,
                reason: reason.to_owned(),
                gave_up,
            });
    }
}
