//! One connected MCP server as a session's tools share it: its connection, started again by
//! the next call that finds its session lost (rho-mcp's `Restarts` keeps the policy: backoff,
//! giving up), what inventories show of it ([`ServerHealth`]), and the restarts the session
//! reports ([`ServerRestart`]). See `docs/mcp.md`, "Servers that come back".

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use rho_component::CancelSignal;
use rho_mcp::{Connection, Restarts};
use tokio::sync::{RwLock, RwLockReadGuard};

/// What a session's inventories show of a server's life since it connected.
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

/// A restart of a server, or rho giving up on one, as the session reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerRestart {
    /// The server identity.
    pub server: String,
    /// Its restarts so far in this session.
    pub restarts: u32,
    /// Why it was (or could not be) started again.
    pub reason: String,
    /// Set when rho gave up on it: why.
    pub gave_up: Option<String>,
}

/// Restarts waiting for the session to report them (shared by every link of a tool set).
pub(crate) type RestartNotices = Arc<Mutex<Vec<ServerRestart>>>;

/// A connected server shared by its tools, its prompts and resources, and the keep-alive.
pub(crate) struct ServerLink {
    id: String,
    /// The server's `call_timeout_sec`: a call's wait for a restart fits in it.
    call_budget: std::time::Duration,
    connection: Arc<RwLock<Connection>>,
    restarts: Mutex<Restarts>,
    /// Held while the server is being started again, so concurrent calls start it once.
    starting: tokio::sync::Mutex<()>,
    health: Arc<Mutex<ServerHealth>>,
    notices: RestartNotices,
}

impl ServerLink {
    pub(crate) fn new(
        connection: Connection,
        health: Arc<Mutex<ServerHealth>>,
        notices: RestartNotices,
    ) -> Self {
        let (restarts, last) = connection.restarts();
        {
            let mut health = health.lock().unwrap_or_else(PoisonError::into_inner);
            health.restarts = restarts;
            health.last_restart = last.map(str::to_owned);
        }
        Self {
            id: connection.spec().id.clone(),
            call_budget: connection.spec().call_timeout,
            connection: Arc::new(RwLock::new(connection)),
            restarts: Mutex::new(Restarts::default()),
            starting: tokio::sync::Mutex::new(()),
            health,
            notices,
        }
    }

    /// The server identity.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The server's call budget.
    pub(crate) fn call_budget(&self) -> std::time::Duration {
        self.call_budget
    }

    /// The connection as it is (lost or not): prompts, resources, completions, the keep-alive.
    pub(crate) fn connection(&self) -> &Arc<RwLock<Connection>> {
        &self.connection
    }

    /// What inventories show of the server.
    pub(crate) fn health(&self) -> &Arc<Mutex<ServerHealth>> {
        &self.health
    }

    /// Gives the link back its connection once nothing else holds it (closing the tool set).
    pub(crate) fn into_connection(self) -> Option<Connection> {
        Arc::try_unwrap(self.connection)
            .ok()
            .map(RwLock::into_inner)
    }

    /// A usable connection: the current one, or, when its session was lost, the server started
    /// again (waiting out the backoff after failed starts). Fails with a message naming the
    /// server when rho gave up on it, when `cancel` fires, or when the next start could not
    /// begin before `deadline`.
    pub(crate) async fn ready(
        &self,
        cancel: &CancelSignal,
        deadline: Instant,
    ) -> Result<RwLockReadGuard<'_, Connection>, String> {
        loop {
            if let Some(given_up) = self.books().given_up() {
                return Err(given_up.to_owned());
            }
            let connection = self.connection.read().await;
            let Some(reason) = connection.is_gone() else {
                return Ok(connection);
            };
            drop(connection);
            self.start_again(reason, cancel, deadline).await?;
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
        let (spec, options) = {
            let connection = self.connection.read().await;
            if connection.is_gone().is_none() {
                return Ok(());
            }
            (connection.spec().clone(), connection.options().clone())
        };
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
        if Instant::now() + wait > deadline {
            return Err(format!(
                "MCP server `{}` is down ({reason}) and its next start is {:.1} s away, past the call's budget",
                self.id,
                wait.as_secs_f64()
            ));
        }
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = cancel.cancelled() => return Err("cancelled".to_owned()),
        }
        let started = tokio::select! {
            started = rho_mcp::connect_with(&spec, &rho_mcp::process_ambient, &options) => started,
            () = cancel.cancelled() => return Err("cancelled".to_owned()),
        };
        match started {
            Ok(fresh) => {
                self.books().started();
                let old = self.connection.write().await.take_over(fresh, reason);
                old.close().await;
                let (restarts, _) = self.connection.read().await.restarts();
                {
                    let mut health = self.health.lock().unwrap_or_else(PoisonError::into_inner);
                    health.restarts = restarts;
                    health.last_restart = Some(reason.to_owned());
                    health.ping_failure = None;
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

    fn books(&self) -> std::sync::MutexGuard<'_, Restarts> {
        self.restarts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that rho gave up (reported once).
    fn gave_up(&self, reason: &str, given_up: &str) {
        let restarts = {
            let mut health = self.health.lock().unwrap_or_else(PoisonError::into_inner);
            if health.given_up.is_some() {
                return;
            }
            health.given_up = Some(given_up.to_owned());
            health.restarts
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
