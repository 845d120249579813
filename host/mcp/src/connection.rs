//! One live connection to a server: connect (transport, dual-era handshake, discovery) within
//! the startup budget, call tools with progress, cancellation and a budget, and close.

use std::ffi::OsString;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rho_component::{McpServerSpec, McpTransport};
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, PaginatedRequestParams, ProtocolVersion,
    ServerResult,
};
use rmcp::serve_client_with_lifecycle;
use rmcp::service::{ClientLifecycleMode, PeerRequestOptions, RunningService, ServiceError};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::McpError;
use crate::environment::server_environment;
use crate::handler::{Progress, RhoClient, progress_key};
use crate::stdio::{ServerProcess, spawn};

/// At most this many `tools/list` pages are followed (a server repeating a cursor forever
/// would otherwise hang discovery).
pub const MAX_LIST_PAGES: usize = 100;

/// At most this many rounds of one call (the first request and its MRTR retries): a server
/// asking for input forever would otherwise keep the call alive until its budget.
pub const MAX_INPUT_ROUNDS: usize = 10;

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
}

/// One tool as the server declared it (after `allow`/`deny`).
#[derive(Debug, Clone)]
pub struct ServerTool {
    /// The server's own name (sent back unchanged on calls).
    pub name: String,
    /// The declaration as JSON (`title`, `description`, `inputSchema`, `outputSchema`,
    /// `annotations`, ...).
    pub definition: Value,
}

impl ServerTool {
    /// `title`, if declared.
    pub fn title(&self) -> Option<&str> {
        self.definition.get("title").and_then(Value::as_str)
    }

    /// `description`, if declared.
    pub fn description(&self) -> Option<&str> {
        self.definition.get("description").and_then(Value::as_str)
    }
}

/// A connected server.
pub struct Connection {
    spec: McpServerSpec,
    client: RhoClient,
    service: RunningService<RoleClient, RhoClient>,
    process: Option<ServerProcess>,
    /// What the handshake and discovery returned.
    pub summary: ServerSummary,
    /// The exported tools (allow/deny applied), in the server's order. The set of names is
    /// fixed when the connection is made (a session's tool set never grows mid-session);
    /// definitions may be revised by [`Connection::reconcile_tools`].
    pub tools: Vec<ServerTool>,
    /// Tools the server withdrew after a `tools/list_changed`; calling them fails clearly.
    withdrawn: std::collections::BTreeSet<String>,
    /// Tools the server added after the connection was made; they need a restart.
    added: Vec<ServerTool>,
}

/// What a re-listing after `notifications/tools/list_changed` changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolChanges {
    /// Still offered with a new definition (used from the next turn on).
    pub revised: Vec<String>,
    /// No longer offered: kept under their exported names, and calls fail with a reason.
    pub withdrawn: Vec<String>,
    /// Newly offered: not exported until the session restarts.
    pub added: Vec<String>,
}

impl ToolChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.revised.is_empty() && self.withdrawn.is_empty() && self.added.is_empty()
    }
}

/// Looks variables up in rho's own environment.
pub fn process_ambient(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

fn connect_error(spec: &McpServerSpec, message: impl std::fmt::Display) -> McpError {
    McpError::Connect {
        server: spec.id.clone(),
        message: message.to_string(),
    }
}

/// Connects to `spec`'s server within its startup budget: transport, handshake (modern
/// `server/discover` or legacy `initialize`, chosen automatically) and `tools/list`.
pub async fn connect(
    spec: &McpServerSpec,
    ambient: &(dyn Fn(&str) -> Option<OsString> + Sync),
) -> Result<Connection, McpError> {
    let budget = spec.startup_timeout;
    match tokio::time::timeout(budget, connect_inner(spec, ambient)).await {
        Ok(result) => result,
        Err(_) => {
            tracing::warn!(target: "rho::mcp", server = spec.id.as_str(), seconds = budget.as_secs_f64(), "startup budget exceeded");
            Err(McpError::StartupTimeout {
                server: spec.id.clone(),
                seconds: budget.as_secs_f64(),
            })
        }
    }
}

/// The handshake to run: pinned by `spec.protocol_version` when the revision is known (the
/// `initialize` handshake up to 2025-11-25, `server/discover` from 2026-07-28), otherwise
/// detected (2026-07-28 `server/discover` probe, falling back to 2025-11-25 `initialize`).
/// Also returns the version `initialize` carries.
fn lifecycle(spec: &McpServerSpec) -> Result<(ClientLifecycleMode, ProtocolVersion), McpError> {
    let Some(pinned) = &spec.protocol_version else {
        let mode = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        };
        return Ok((mode, ProtocolVersion::V_2025_11_25));
    };
    let Some(version) = ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .find(|v| v.as_str() == pinned)
    else {
        return Err(connect_error(
            spec,
            format!("protocol version {pinned} is not one rho speaks"),
        ));
    };
    let mode = if version.has_initialize() {
        ClientLifecycleMode::Initialize
    } else {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![version.clone()],
        }
    };
    Ok((mode, version.clone()))
}

async fn connect_inner(
    spec: &McpServerSpec,
    ambient: &(dyn Fn(&str) -> Option<OsString> + Sync),
) -> Result<Connection, McpError> {
    let (lifecycle, handshake_version) = lifecycle(spec)?;
    let client = RhoClient::new(&spec.id, handshake_version);
    let (service, process) = match &spec.transport {
        McpTransport::Stdio(stdio) => {
            let env = server_environment(spec, ambient)?;
            let secrets = stdio
                .env_from_env
                .iter()
                .filter_map(|(name, _)| env.get(&OsString::from(name)))
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            let (process, stdout, stdin) = spawn(spec, stdio, env, secrets)?;
            let service = serve_client_with_lifecycle(client.clone(), (stdout, stdin), lifecycle)
                .await
                .map_err(|e| connect_error(spec, format!("handshake failed: {e}")))?;
            (service, Some(process))
        }
        McpTransport::StreamableHttp(http) => {
            let transport = crate::http::transport(spec, http, ambient)?;
            let service = serve_client_with_lifecycle(client.clone(), transport, lifecycle)
                .await
                .map_err(|e| connect_error(spec, format!("handshake failed: {e}")))?;
            (service, None)
        }
    };
    let info = service.peer_info();
    let summary = ServerSummary {
        protocol_version: info
            .as_ref()
            .map(|i| i.protocol_version.to_string())
            .unwrap_or_default(),
        server_info: info
            .as_ref()
            .and_then(|i| i.server_info.as_ref())
            .and_then(|s| serde_json::to_value(s).ok()),
        instructions: info.as_ref().and_then(|i| i.instructions.clone()),
        logging: info
            .as_ref()
            .is_some_and(|i| i.capabilities.logging.is_some()),
    };
    let legacy = info
        .as_ref()
        .is_some_and(|i| i.protocol_version.has_initialize());
    if let Some(level) = spec.log_level
        && summary.logging
        && legacy
    {
        set_log_level(&service, spec, level).await;
    }
    let mut connection = Connection {
        spec: spec.clone(),
        client,
        service,
        process,
        summary,
        tools: Vec::new(),
        withdrawn: std::collections::BTreeSet::new(),
        added: Vec::new(),
    };
    connection.tools = connection.list_tools().await?;
    Ok(connection)
}

/// The protocol's level for a configured one.
#[allow(deprecated)] // rmcp deprecates logging with SEP-2577; both eras still carry levels
fn protocol_level(level: rho_component::LogLevel) -> rmcp::model::LoggingLevel {
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
    /// The server's spec.
    pub fn spec(&self) -> &McpServerSpec {
        &self.spec
    }

    /// Whether the server said its tool list changed since the last listing.
    pub fn tools_changed(&self) -> bool {
        self.client.tools_changed.load(Ordering::Relaxed)
    }

    /// Whether this is a legacy (2025-11-25 or older) session, which keeps server state and
    /// so benefits from keep-alive pings.
    pub fn is_legacy(&self) -> bool {
        self.service
            .peer_info()
            .is_some_and(|i| i.protocol_version.has_initialize())
    }

    /// Sends one `ping` and waits at most `timeout` for the answer.
    pub async fn ping(&self, timeout: Duration) -> Result<(), McpError> {
        let request = ClientRequest::PingRequest(rmcp::model::PingRequest {
            method: Default::default(),
            extensions: Default::default(),
        });
        let fail = |message: String| connect_error(&self.spec, format!("ping failed: {message}"));
        match tokio::time::timeout(timeout, self.service.send_request(request)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(fail(e.to_string())),
            Err(_) => Err(fail(format!(
                "no answer within {:.1} s",
                timeout.as_secs_f64()
            ))),
        }
    }

    /// Starts keep-alive pings every `interval` for a legacy Streamable HTTP session (an idle
    /// proxy can drop a remote connection with no local signal); stdio and modern sessions need
    /// none. The returned status holds the last ping failure, shown by inventories; the task
    /// ends when `stop` is cancelled.
    pub fn keep_alive(self: &std::sync::Arc<Self>, interval: Duration, stop: Cancel) -> PingStatus {
        let status = PingStatus::default();
        if !matches!(self.spec.transport, McpTransport::StreamableHttp(_)) || !self.is_legacy() {
            return status;
        }
        let connection = std::sync::Arc::clone(self);
        let shared = status.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(interval) => {}
                }
                let outcome = connection.ping(interval.min(Duration::from_secs(10))).await;
                if let Ok(mut last) = shared.0.lock() {
                    *last = outcome.err().map(|e| e.to_string());
                }
            }
        });
        status
    }

    /// Options of a request: on a modern session with a configured `log_level`, the level rides
    /// in the request's `_meta` (2026-07-28 has no `logging/setLevel`).
    #[allow(deprecated)] // the level type is marked deprecated by rmcp (SEP-2577)
    fn request_options(&self) -> PeerRequestOptions {
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

    /// Tools the server added after the connection was made (they need a restart).
    pub fn added_tools(&self) -> &[ServerTool] {
        &self.added
    }

    /// Re-lists the tools and reconciles them with the fixed set of this connection
    /// (`rho-mcp.md`, "Tool lists that change mid-session").
    pub async fn reconcile_tools(&mut self) -> Result<ToolChanges, McpError> {
        let fresh = self.list_tools().await?;
        let mut changes = ToolChanges::default();
        for tool in &mut self.tools {
            match fresh.iter().find(|f| f.name == tool.name) {
                Some(new) => {
                    if self.withdrawn.remove(&tool.name) || new.definition != tool.definition {
                        changes.revised.push(tool.name.clone());
                    }
                    tool.definition = new.definition.clone();
                }
                None => {
                    if self.withdrawn.insert(tool.name.clone()) {
                        changes.withdrawn.push(tool.name.clone());
                    }
                }
            }
        }
        self.added = fresh
            .into_iter()
            .filter(|f| !self.tools.iter().any(|t| t.name == f.name))
            .collect();
        changes.added = self.added.iter().map(|t| t.name.clone()).collect();
        if !changes.is_empty() {
            tracing::info!(target: "rho::mcp", server = self.spec.id.as_str(), revised = changes.revised.len(), withdrawn = changes.withdrawn.len(), added = changes.added.len(), "tool list reconciled");
        }
        Ok(changes)
    }

    /// Lists every tool, following pages with a guard against repeated cursors.
    pub async fn list_tools(&self) -> Result<Vec<ServerTool>, McpError> {
        self.client.tools_changed.store(false, Ordering::Relaxed);
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_LIST_PAGES {
            let params = cursor.clone().map(|c| {
                let mut p = PaginatedRequestParams::default();
                p.cursor = Some(c);
                p
            });
            // Every request to a server has a budget; a page gets the call budget.
            let page =
                tokio::time::timeout(self.spec.call_timeout, self.service.list_tools(params))
                    .await
                    .map_err(|_| {
                        connect_error(
                            &self.spec,
                            "tools/list got no answer within the call budget",
                        )
                    })?
                    .map_err(|e| connect_error(&self.spec, format!("tools/list failed: {e}")))?;
            for tool in page.tools {
                let name = tool.name.to_string();
                if tools.iter().any(|t: &ServerTool| t.name == name) {
                    tracing::warn!(target: "rho::mcp", server = self.spec.id.as_str(), tool = name.as_str(), "duplicate tool name; the first is kept");
                    continue;
                }
                if !self.spec.tools.allows(&name) {
                    continue;
                }
                let definition = serde_json::to_value(&tool).unwrap_or(Value::Null);
                tools.push(ServerTool { name, definition });
            }
            match page.next_cursor {
                Some(next) if seen.insert(next.clone()) => cursor = Some(next),
                Some(_) => {
                    tracing::warn!(target: "rho::mcp", server = self.spec.id.as_str(), "tools/list repeated a cursor; stopped paging");
                    return Ok(tools);
                }
                None => return Ok(tools),
            }
        }
        tracing::warn!(target: "rho::mcp", server = self.spec.id.as_str(), pages = MAX_LIST_PAGES, "tools/list page limit reached");
        Ok(tools)
    }

    /// Calls `tool` with `arguments` within the call budget. Every call carries a progress
    /// token; reports go to `progress` while the call runs. On budget expiry or when `cancel`
    /// fires, the server is sent `notifications/cancelled` and the call fails; a result that
    /// arrives afterwards is dropped.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        progress: Option<mpsc::Sender<Progress>>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<Value, McpError> {
        let call_error = |message: String| McpError::Call {
            server: self.spec.id.clone(),
            tool: tool.to_owned(),
            message,
        };
        if self.withdrawn.contains(tool) {
            return Err(call_error(
                "the server withdrew this tool during the session".into(),
            ));
        }
        if !self.tools.iter().any(|t| t.name == tool) {
            let reason = if self.added.iter().any(|t| t.name == tool) {
                "the server added this tool after the session started; restart to use it"
            } else {
                "the server does not offer this tool"
            };
            return Err(call_error(reason.into()));
        }
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let started = Instant::now();
        // The budget is a hard limit for the whole call, every MRTR round included: progress
        // reports never extend it.
        let deadline = tokio::time::Instant::now() + self.spec.call_timeout;
        let mut state_only_rounds: u32 = 0;
        let mut round = 0;
        let value = loop {
            round += 1;
            if round > MAX_INPUT_ROUNDS {
                return Err(call_error(format!(
                    "the server asked for input more than {MAX_INPUT_ROUNDS} times"
                )));
            }
            let mut handle = self
                .service
                .send_cancellable_request(
                    ClientRequest::CallToolRequest(CallToolRequest::new(params.clone())),
                    self.request_options(),
                )
                .await
                .map_err(|e| call_error(e.to_string()))?;
            let key = progress_key(&handle.progress_token);
            if let Some(sender) = &progress
                && let Ok(mut routes) = self.client.progress.lock()
            {
                routes.insert(key.clone(), sender.clone());
            }
            let outcome = tokio::select! {
                received = &mut handle.rx => Outcome::Done(Box::new(received)),
                () = tokio::time::sleep_until(deadline) => Outcome::TimedOut,
                () = cancel.cancelled() => Outcome::Cancelled,
            };
            // rmcp hands each notification to a spawned task, so a report the server sent just
            // before its result may still be on its way: let queued tasks run once before the
            // route closes. Progress arriving after that is late and dropped.
            if matches!(outcome, Outcome::Done(_)) && progress.is_some() {
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
            }
            if let Ok(mut routes) = self.client.progress.lock() {
                routes.remove(&key);
            }
            let result = match outcome {
                Outcome::Done(received) => match *received {
                    Ok(result) => result,
                    Err(_) => Err(ServiceError::TransportClosed),
                },
                Outcome::TimedOut => {
                    // Tell the server to stop working on an abandoned request.
                    let _ = handle.cancel(Some("call budget exceeded".into())).await;
                    return Err(McpError::CallTimeout {
                        server: self.spec.id.clone(),
                        tool: tool.to_owned(),
                        seconds: started.elapsed().as_secs_f64(),
                    });
                }
                Outcome::Cancelled => {
                    let _ = handle.cancel(Some("cancelled by the user".into())).await;
                    return Err(call_error("cancelled".into()));
                }
            };
            match result {
                Ok(ServerResult::CallToolResult(result)) => {
                    break serde_json::to_value(&result).map_err(|e| call_error(e.to_string()))?;
                }
                // 2026-07-28 multi round-trip requests (SEP-2322, basic/utilities/mrtr): answer
                // every input request, then retry as a new request carrying the answers and
                // the server's requestState exactly as received (absent when it sent none).
                Ok(ServerResult::InputRequiredResult(input)) => {
                    let requests = input.input_requests.unwrap_or_default();
                    if requests.is_empty() && input.request_state.is_none() {
                        return Err(call_error(
                            "the server asked for input without saying what".into(),
                        ));
                    }
                    if requests.is_empty() {
                        // A state-only round: back off a little so a server polling through
                        // requestState cannot spin the call.
                        let pause = 50u64.saturating_mul(1 << state_only_rounds.min(3)).min(250);
                        tokio::time::sleep(Duration::from_millis(pause)).await;
                        state_only_rounds += 1;
                    } else {
                        state_only_rounds = 0;
                    }
                    let mut responses = rmcp::model::InputResponses::new();
                    for (key, request) in requests {
                        responses.insert(key, crate::input::answer(&request).map_err(call_error)?);
                    }
                    params.input_responses = (!responses.is_empty()).then_some(responses);
                    params.request_state = input.request_state;
                }
                Ok(other) => {
                    return Err(call_error(format!(
                        "unexpected response {}",
                        serde_json::to_value(&other)
                            .map(|v| v.to_string())
                            .unwrap_or_default()
                    )));
                }
                Err(e) => return Err(call_error(e.to_string())),
            }
        };
        // A declared outputSchema is a contract: a missing or invalid structuredContent fails
        // the call instead of handing the model half an answer (error results are exempt).
        if let Some(schema) = self
            .tools
            .iter()
            .find(|t| t.name == tool)
            .and_then(|t| t.definition.get("outputSchema"))
            && value.get("isError").and_then(Value::as_bool) != Some(true)
        {
            crate::output_schema::check(schema, value.get("structuredContent"))
                .map_err(call_error)?;
        }
        Ok(value)
    }

    /// Closes the session (stdin closed or HTTP session deleted), then stops the process group.
    pub async fn close(self) {
        let Connection {
            mut service,
            process,
            spec,
            ..
        } = self;
        if tokio::time::timeout(Duration::from_secs(3), service.close())
            .await
            .is_err()
        {
            tracing::warn!(target: "rho::mcp", server = spec.id.as_str(), "close timed out");
        }
        drop(service);
        if let Some(process) = process {
            process.shutdown().await;
        }
    }
}

enum Outcome {
    Done(Box<Result<Result<ServerResult, ServiceError>, tokio::sync::oneshot::error::RecvError>>),
    TimedOut,
    Cancelled,
}

/// The outcome of the latest keep-alive ping: `None` while pings succeed (or none ran yet).
#[derive(Debug, Clone, Default)]
pub struct PingStatus(std::sync::Arc<std::sync::Mutex<Option<String>>>);

impl PingStatus {
    /// The latest ping failure, if the latest ping failed.
    pub fn last_failure(&self) -> Option<String> {
        self.0.lock().ok().and_then(|last| last.clone())
    }
}

/// A cancellation handle type re-exported for callers.
pub type Cancel = tokio_util::sync::CancellationToken;
