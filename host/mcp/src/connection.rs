//! One live connection to a server: connect (transport, dual-era handshake declaring what the
//! session can answer, discovery of tools, prompts and resources) within the startup budget,
//! pings, telling a lost session, starting the server again, and a bounded close.

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rho_component::{McpServerSpec, McpTransport, ServerPrompt, ServerResource};
use rmcp::model::{ClientRequest, ProtocolVersion};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, PeerRequestOptions, RunningService, Service as _,
};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleClient, serve_client_with_lifecycle};
use serde_json::Value;
use tokio_util::sync::DropGuard;

use crate::McpError;
use crate::catalog::{Catalog, Listing};
use crate::completion::Completions;
use crate::environment::server_environment;
use crate::era::{Era, Liveness, PROBE_ANSWER_WAIT};
use crate::handler::RhoClient;
use crate::options::{ClientOptions, Declared};
use crate::standalone::{STANDALONE_STREAM_WAIT, StandaloneStream};
use crate::stdio::{ServerProcess, spawn};
use crate::tools::ServerTool;

mod handshake;

use handshake::{Handshake, Handshaking, handshake_by};

/// What discovery learned about a server.
#[derive(Debug, Clone)]
pub struct ServerSummary {
    /// The negotiated protocol version (`2026-07-28`, `2025-11-25`, ...).
    pub protocol_version: String,
    /// `serverInfo` as the server sent it.
    pub server_info: Option<Value>,
    /// The server's instructions, if any (kept for the system prompt, fenced and attributed).
    pub instructions: Option<String>,
    /// Whether the server declared `logging`.
    pub logging: bool,
    /// Whether the server declared `prompts` (they were listed at connect).
    pub prompts: bool,
    /// Whether the server declared `resources` (resources and templates were listed).
    pub resources: bool,
    /// Whether the server declared `completions` (argument suggestions may be asked for).
    pub completions: bool,
    /// Whether it takes `resources/subscribe` (declared `resources.subscribe`, in a 2025-11-25
    /// session: the request does not exist in 2026-07-28).
    pub resource_subscriptions: bool,
}

/// A connected server.
pub struct Connection {
    pub(crate) spec: McpServerSpec,
    pub(crate) client: RhoClient,
    pub(crate) service: RunningService<RoleClient, RhoClient>,
    process: Option<ServerProcess>,
    /// What the handshake and discovery returned.
    pub summary: ServerSummary,
    /// The exported tools (allow/deny applied), in the server's order. The set of names is
    /// fixed when the connection is made (a session's tool set never grows mid-session);
    /// definitions may be revised by [`Connection::reconcile_tools`].
    pub tools: Vec<ServerTool>,
    /// Tools the server listed beyond [`crate::MAX_SERVER_TOOLS`] (after `allow`/`deny` and
    /// duplicates), left out of [`Connection::tools`]; `0` when none were.
    pub tools_left_out: usize,
    /// Tools the server withdrew after a `tools/list_changed`; calling them fails clearly.
    pub(crate) withdrawn: std::collections::BTreeSet<String>,
    /// Tools the server added after the connection was made; they need a restart.
    pub(crate) added: Vec<ServerTool>,
    /// Argument suggestions: cache and the one request in flight.
    pub(crate) completions: Completions,
    /// Whether a legacy HTTP session's standalone stream is open yet.
    standalone: StandaloneStream,
    /// The OAuth authorization of a server that uses it (for a step-up login on
    /// `403 insufficient_scope`).
    pub(crate) authorizer: Option<crate::oauth::Authorizer>,
    /// What the session lets this connection declare (a restart declares the same).
    options: ClientOptions,
    /// How many times this connection started its server again, and why the last time.
    restarts: u32,
    last_restart: Option<String>,
    /// Set when the session stopped working though its transport is open (a keep-alive ping
    /// went unanswered, a request could not reach the server): it is never used again.
    broken: AtomicBool,
    /// Set while [`Connection::tools`] are what rho knew of the server before it started
    /// ([`Known`]) and the server has not listed its tools since.
    pub(crate) unchecked: bool,
    /// Stops background re-listings when the connection goes away (closed or dropped).
    _stop_relisting: DropGuard,
}

/// Looks variables up in rho's own environment.
pub fn process_ambient(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

pub(crate) fn connect_error(spec: &McpServerSpec, message: impl std::fmt::Display) -> McpError {
    McpError::Connect {
        server: spec.id.clone(),
        message: message.to_string(),
    }
}

fn startup_timeout(spec: &McpServerSpec) -> McpError {
    let budget = spec.startup_timeout;
    tracing::warn!(target: "rho::mcp", server = spec.id.as_str(), seconds = budget.as_secs_f64(), "startup budget exceeded");
    McpError::StartupTimeout {
        server: spec.id.clone(),
        seconds: budget.as_secs_f64(),
    }
}

/// Connects to `spec`'s server declaring nothing (no roots, elicitation or sampling): what
/// inventories and probes use. See [`connect_with`].
pub async fn connect(
    spec: &McpServerSpec,
    ambient: &(dyn Fn(&str) -> Option<OsString> + Sync),
) -> Result<Connection, McpError> {
    connect_with(spec, ambient, &ClientOptions::default()).await
}

/// Connects to `spec`'s server within its startup budget: transport, handshake (modern
/// `server/discover` or legacy `initialize`, chosen automatically) declaring what `options`
/// allow, `tools/list`, and the prompts and resources of a server that declares them. A
/// failure or timeout after the handshake closes the session (bounded) before returning; a
/// failed prompt or resource listing only leaves that list empty.
///
/// At most [`crate::MAX_CONCURRENT_STARTS`] servers start at once in a process; the budget
/// counts from when this one gets its slot (an OAuth login, before it, has its own bounds).
pub async fn connect_with(
    spec: &McpServerSpec,
    ambient: &(dyn Fn(&str) -> Option<OsString> + Sync),
    options: &ClientOptions,
) -> Result<Connection, McpError> {
    connect_knowing(spec, ambient, options, None).await
}

/// What rho knows of a server from its last start (a tool cache entry), so that a start can
/// skip what it would otherwise ask before the connection is usable.
#[derive(Debug, Clone, Copy)]
pub struct Known<'a> {
    /// The protocol version it spoke: the handshake of that era runs without the era probe.
    pub protocol_version: &'a str,
    /// Its tools as it last listed them (allow/deny applied): the connection's fixed set,
    /// taken without `tools/list` (see [`connect_knowing`]).
    pub tools: &'a [ServerTool],
    /// How many tools it listed past [`crate::MAX_SERVER_TOOLS`] (left out of `tools`).
    pub tools_left_out: usize,
    /// Its prompts as last listed: offered until the next listing replaces them.
    pub prompts: &'a [ServerPrompt],
    /// Its resources and templates as last listed: the same.
    pub resources: &'a [ServerResource],
}

/// [`connect_with`] for a server rho knows from its last start (a tool cache remembers it):
/// the handshake of its era straight away, without the era probe's round trip, and the
/// connection usable as soon as the handshake is over. Its tools, prompts and resources are
/// `known`'s, not yet checked against the server: [`Connection::tools_changed`] is set, so a
/// session lists them all and reconciles the tools at its next turn boundary (the live list
/// wins), and a call that the server refuses before then is checked against the live list
/// (a tool the server no longer lists fails as withdrawn).
///
/// A server that refuses the handshake (it changed era since) is started once more and
/// probed as usual. A version the configuration pins wins over `known`'s.
pub async fn connect_knowing(
    spec: &McpServerSpec,
    ambient: &(dyn Fn(&str) -> Option<OsString> + Sync),
    options: &ClientOptions,
    known: Option<Known<'_>>,
) -> Result<Connection, McpError> {
    let era = known.map_or(Handshaking::Probe, |k| {
        Handshaking::of_version(k.protocol_version)
    });
    // An OAuth server's token (stored, refreshed, or from a login) comes first, outside the
    // startup budget: the flow has its own bounds, and a person logging in is not a slow server.
    let authorizer = match crate::oauth::oauth_of(spec) {
        Some((http, oauth)) => {
            let (http_client, _, _) = crate::http::client(spec, http, ambient, Default::default())?;
            let access = options.oauth.as_ref();
            Some(crate::oauth::connect(spec, http, oauth, access, http_client, ambient).await?)
        }
        None => None,
    };
    // Held until the start is over (connected, failed or timed out, and closed if it failed).
    let _slot = crate::start_slots::start_slot().await;
    let started = Instant::now();
    let budget = spec.startup_timeout;
    let authorizer_ref = authorizer.as_ref();
    let mut connection = match handshake_by(
        spec,
        ambient,
        options,
        authorizer_ref,
        started + budget,
        era,
    )
    .await
    {
        Ok(connection) => connection,
        Err(
            Handshake::Failed(error) | Handshake::LateModern(error) | Handshake::EraRefused(error),
        ) => return Err(error),
        // The server refused the token even after a refresh: one new login, one more try.
        Err(Handshake::Unauthorized(challenge)) => {
            let Some(authorizer) = &authorizer else {
                return Err(crate::oauth::needs_login(
                    spec,
                    "the server asks for a login",
                ));
            };
            authorizer.relogin(spec, challenge.as_deref()).await?;
            let deadline = Instant::now() + budget;
            match handshake_by(spec, ambient, options, authorizer_ref, deadline, era).await {
                Ok(connection) => connection,
                Err(
                    Handshake::Failed(error)
                    | Handshake::LateModern(error)
                    | Handshake::EraRefused(error),
                ) => {
                    return Err(error);
                }
                Err(Handshake::Unauthorized(_)) => {
                    return Err(connect_error(
                        spec,
                        "the server refused the token of a fresh OAuth login",
                    ));
                }
            }
        }
    };
    match known {
        Some(known) => connection.adopt_known(&known).await,
        None => {
            if let Err(error) = connection.discover(options, started + budget).await {
                connection.close().await;
                return Err(error);
            }
        }
    }
    // A question the server asks during the first call may go to the standalone stream, and
    // be lost if the call gets there first: the connection is ready once the stream is open.
    let remaining = budget
        .saturating_sub(started.elapsed())
        .min(STANDALONE_STREAM_WAIT);
    if tokio::time::timeout(remaining, connection.standalone.settled())
        .await
        .is_err()
    {
        tracing::warn!(target: "rho::mcp", server = spec.id.as_str(), "the session's standalone stream is not open yet; what the server sends there before it opens may be lost");
    }
    Ok(connection)
}

/// `message`, followed by the server's stderr tail when it left one.
fn with_tail(message: String, tail: &str) -> String {
    if tail.trim().is_empty() {
        message
    } else {
        format!("{message}; the server's last stderr lines:\n{tail}")
    }
}

/// rho's level for the protocol's (the one mapping, [`protocol_level`], read backwards).
#[allow(deprecated)] // rmcp deprecates logging with SEP-2577; both eras still carry levels
pub(crate) fn rho_level(level: rmcp::model::LoggingLevel) -> rho_component::LogLevel {
    rho_component::LogLevel::ALL
        .into_iter()
        .find(|rho| protocol_level(*rho) == level)
        .unwrap_or(rho_component::LogLevel::Emergency)
}

/// The protocol's level for a configured one.
#[allow(deprecated)] // rmcp deprecates logging with SEP-2577; both eras still carry levels
pub(crate) fn protocol_level(level: rho_component::LogLevel) -> rmcp::model::LoggingLevel {
    use rmcp::model::LoggingLevel;
    match level {
        rho_component::LogLevel::Debug => LoggingLevel::Debug,
        rho_component::LogLevel::Info => LoggingLevel::Info,
        rho_component::LogLevel::Notice => LoggingLevel::Notice,
        rho_component::LogLevel::Warning => LoggingLevel::Warning,
        rho_component::LogLevel::Error => LoggingLevel::Error,
        rho_component::LogLevel::Critical => LoggingLevel::Critical,
        rho_component::LogLevel::Alert => LoggingLevel::Alert,
        rho_component::LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// `logging/setLevel` for a legacy (2025-11-25) server that declared logging (modern servers
/// get the level in each call's `_meta`). A refusal is logged, not fatal.
#[allow(deprecated)] // rmcp deprecates logging with SEP-2577; legacy servers still use it
async fn set_log_level(
    service: &RunningService<RoleClient, RhoClient>,
    spec: &McpServerSpec,
    level: rho_component::LogLevel,
) {
    use rmcp::model::SetLevelRequestParams;
    if let Err(e) = service
        .set_level(SetLevelRequestParams::new(protocol_level(level)))
        .await
    {
        tracing::warn!(target: "rho::mcp", server = spec.id.as_str(), "logging/setLevel refused: {e}");
    }
}

impl Connection {
    /// `logging/setLevel` for a legacy server that declared logging, when the configuration
    /// sets a level.
    async fn set_configured_level(&self) {
        if let Some(level) = self.spec.log_level
            && self.summary.logging
            && self.is_legacy()
        {
            set_log_level(&self.service, &self.spec, level).await;
        }
    }

    /// What a start asks a server it knows nothing of, within the startup budget that ends
    /// at `deadline`: the tools (failing the start), then its prompts and resources unless
    /// `options` skip them (running out of budget there leaves them unlisted, the connection
    /// stands).
    async fn discover(
        &mut self,
        options: &ClientOptions,
        deadline: Instant,
    ) -> Result<(), McpError> {
        let remaining = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(remaining, self.discover_tools()).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => return Err(self.with_stderr_tail(error).await),
            Err(_) => return Err(startup_timeout(&self.spec)),
        }
        let remaining = deadline.saturating_duration_since(Instant::now());
        if !options.skip_offers
            && tokio::time::timeout(remaining, self.discover_offers())
                .await
                .is_err()
        {
            tracing::warn!(target: "rho::mcp", server = self.spec.id.as_str(), "startup budget ran out listing prompts and resources; some are not offered");
        }
        Ok(())
    }

    /// `logging/setLevel` (legacy servers) and `tools/list`.
    async fn discover_tools(&mut self) -> Result<(), McpError> {
        self.set_configured_level().await;
        self.client.tools_changed.store(false, Ordering::Relaxed);
        let kept = self.list_tools().await?;
        self.tools = kept.items;
        self.tools_left_out = kept.left_out;
        Ok(())
    }

    /// Takes `known`'s offers as this connection's (see [`connect_knowing`]): its tools as
    /// the fixed set and its prompts and resources (empty for a list the server does not
    /// declare), all unchecked until [`Connection::reconcile_tools`] lists them.
    async fn adopt_known(&mut self, known: &Known<'_>) {
        self.set_configured_level().await;
        self.tools = known.tools.to_vec();
        self.tools_left_out = known.tools_left_out;
        self.unchecked = true;
        self.client.tools_changed.store(true, Ordering::Relaxed);
        self.client.catalog.adopt(
            if self.summary.prompts {
                known.prompts
            } else {
                &[]
            },
            if self.summary.resources {
                known.resources
            } else {
                &[]
            },
        );
    }

    /// Prompts and resources of a server that declares them; failures leave them empty.
    pub(crate) async fn discover_offers(&self) {
        let catalog = &self.client.catalog;
        if self.summary.prompts {
            catalog.refresh(self.service.peer(), Listing::Prompts).await;
        }
        if self.summary.resources {
            catalog
                .refresh(self.service.peer(), Listing::Resources)
                .await;
        }
    }

    /// A discovery error with the server's stderr tail (stdio servers that left one).
    async fn with_stderr_tail(&self, error: McpError) -> McpError {
        let Some(process) = &self.process else {
            return error;
        };
        match error {
            McpError::Connect { server, message } => {
                let tail = process.stderr_tail().await;
                McpError::Connect {
                    server,
                    message: with_tail(message, &tail),
                }
            }
            other => other,
        }
    }

    /// The prompts the server offers (a snapshot: re-listed by the connection itself when the
    /// server says they changed). Empty when it declares no prompts.
    pub fn prompts(&self) -> Vec<ServerPrompt> {
        self.client.catalog.prompts()
    }

    /// The resources the server offers, then its resource templates (`template: true`); a
    /// snapshot like [`Connection::prompts`].
    pub fn resources(&self) -> Vec<ServerResource> {
        self.client.catalog.resources()
    }

    /// The server's spec.
    pub fn spec(&self) -> &McpServerSpec {
        &self.spec
    }

    /// Whether the server said its tool list changed since the last listing.
    pub fn tools_changed(&self) -> bool {
        self.client.tools_changed.load(Ordering::Relaxed)
    }

    /// Whether this is a legacy (2025-11-25 or older) session, which keeps server state
    /// (`logging/setLevel`, a session id over HTTP).
    pub fn is_legacy(&self) -> bool {
        self.service
            .peer_info()
            .is_some_and(|i| i.protocol_version.has_initialize())
    }

    /// Sends one `ping` and waits at most `timeout` for an answer. An error answer counts as
    /// one: 2026-07-28 has no `ping` (servers answer "method not found"), and any answer shows
    /// the session works.
    pub async fn ping(&self, timeout: Duration) -> Result<(), McpError> {
        let request = ClientRequest::PingRequest(rmcp::model::PingRequest {
            method: Default::default(),
            extensions: Default::default(),
        });
        let fail = |message: String| connect_error(&self.spec, format!("ping failed: {message}"));
        match tokio::time::timeout(timeout, self.service.send_request(request)).await {
            Ok(Ok(_) | Err(rmcp::ServiceError::McpError(_))) => Ok(()),
            Ok(Err(e)) => Err(fail(crate::request::describe(&e))),
            Err(_) => Err(fail(format!(
                "no answer within {:.1} s",
                timeout.as_secs_f64()
            ))),
        }
    }

    /// Why this session cannot be used any more, if it cannot: the server's process exited or
    /// its transport closed, or it was marked broken ([`Connection::mark_broken`]).
    pub fn is_gone(&self) -> Option<&'static str> {
        if self.service.is_transport_closed() {
            Some(match self.spec.transport {
                McpTransport::Stdio(_) => "the server's process exited",
                McpTransport::StreamableHttp(_) => "the connection to the server closed",
            })
        } else if self.broken.load(Ordering::Acquire) {
            Some(
                "the session stopped working (a request or a keep-alive ping could not reach the server)",
            )
        } else {
            None
        }
    }

    /// Marks the session broken: it is never used again, and the next call starts a new one.
    pub fn mark_broken(&self) {
        self.broken.store(true, Ordering::Release);
    }

    /// How many times this connection started its server again (after lost sessions, or once
    /// at connect for a server found modern late), and why the last time.
    pub fn restarts(&self) -> (u32, Option<&str>) {
        (self.restarts, self.last_restart.as_deref())
    }

    /// The server's questions rejected so far because it had one open and
    /// [`crate::MAX_QUEUED_QUESTIONS`] waiting: a live count that carries across
    /// [`Connection::take_over`].
    pub fn rejected_questions(&self) -> crate::RejectedQuestions {
        self.client.questions.gate.rejected()
    }

    /// What this connection was allowed to declare: a new start of the server (after a lost
    /// session) connects with the same options.
    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// Puts `fresh` (a new start of the same server: a new process, a new HTTP session) in
    /// this connection's place and returns the old one for the caller to close. The set of
    /// tools stays the one the connection started with: `fresh`'s tools are re-listed and
    /// reconciled with it as after `tools/list_changed` ([`Connection::tools_changed`] is set,
    /// so a session reconciles at its next turn boundary). `reason` says why the server was
    /// started again ([`Connection::restarts`] counts it).
    pub fn take_over(&mut self, mut fresh: Connection, reason: &str) -> Connection {
        fresh.tools = std::mem::take(&mut self.tools);
        fresh.tools_left_out = self.tools_left_out;
        fresh.withdrawn = std::mem::take(&mut self.withdrawn);
        fresh.added = std::mem::take(&mut self.added);
        fresh.restarts = self
            .restarts
            .saturating_add(fresh.restarts)
            .saturating_add(1);
        fresh.last_restart = Some(reason.to_owned());
        fresh
            .client
            .questions
            .gate
            .continue_count(&self.client.questions.gate.rejected());
        fresh.unchecked |= self.unchecked;
        fresh.client.tools_changed.store(true, Ordering::Relaxed);
        tracing::info!(target: "rho::mcp", server = self.spec.id.as_str(), restarts = fresh.restarts, "started again: {reason}");
        std::mem::replace(self, fresh)
    }

    /// Options of a request: on a modern session with a configured `log_level`, the level rides
    /// in the request's `_meta` (2026-07-28 has no `logging/setLevel`).
    #[allow(deprecated)] // the level type is marked deprecated by rmcp (SEP-2577)
    pub(crate) fn request_options(&self) -> PeerRequestOptions {
        let mut options = PeerRequestOptions::no_options();
        if let Some(level) = self.spec.log_level
            && !self.is_legacy()
        {
            let mut meta = rmcp::model::RequestMetaObject::new();
            meta.set_log_level(protocol_level(level));
            options.meta = Some(meta);
        }
        options
    }

    /// Closes the session (stdin closed or HTTP session deleted), then stops the process group.
    /// Background re-listings stop too. Bounded: a session that does not close in 3 s is
    /// dropped.
    pub async fn close(self) {
        let Connection {
            mut service,
            process,
            spec,
            _stop_relisting,
            ..
        } = self;
        drop(_stop_relisting);
        // A close that did not finish is reported, never passed over as done.
        match tokio::time::timeout(Duration::from_secs(3), service.close()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                tracing::warn!(target: "rho::mcp", server = spec.id.as_str(), "closing the session failed: {e}");
            }
            Err(_) => {
                tracing::warn!(target: "rho::mcp", server = spec.id.as_str(), "close timed out");
            }
        }
        drop(service);
        if let Some(process) = process {
            process.shutdown().await;
        }
    }
}

/// A cancellation handle type re-exported for callers.
pub type Cancel = tokio_util::sync::CancellationToken;
