//! rho as an MCP server (`rho mcp serve`, `docs/mcp.md`, "rho as an MCP server"): an rmcp
//! server handler over a [`Served`] set of tools, on stdin/stdout ([`serve_stdio`]) or
//! Streamable HTTP ([`serve_http`]: rmcp's service behind a small hyper server that checks
//! the path and, for remote clients, a bearer token). The set is rho's own types;
//! this module turns its [`ToolSpec`]s into MCP tool definitions (rho's exported names, the risk
//! level as annotations) and its [`ToolOutput`]s into call results, passes a client's progress
//! token and cancellation through to the call, passes an upstream server's questions to the
//! client (`downstream.rs`), and speaks both revisions rho speaks as a client
//! (2026-07-28 through `server/discover`, 2025-11-25 through `initialize`: rmcp answers each
//! in the client's era).

mod downstream;

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rho_component::{
    CancelSignal, ProgressSink, PromptMessage as RhoPromptMessage, PromptRole, ResourceAttachment,
    RiskLevel, ServerPrompt, ServerResource, ToolOutput, ToolProgress, ToolSpec,
};
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, InitializeResult, JsonObject,
    ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, Prompt, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ResourceContents, Role, ServerCapabilities, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer, ServiceExt};
use serde_json::Value;

/// The future of one served call: `None` when the set has no tool of that name.
pub type ServedCall<'a> = Pin<Box<dyn Future<Output = Option<ToolOutput>> + Send + 'a>>;

/// The future of the served tools' list.
pub type ServedList<'a> = Pin<Box<dyn Future<Output = Vec<ToolSpec>> + Send + 'a>>;

/// The future of one search: what the client reads, and the exported names of the matches.
pub type ServedSearch<'a> = Pin<Box<dyn Future<Output = (ToolOutput, Vec<String>)> + Send + 'a>>;

/// The future of any other served answer.
pub type ServedFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a prompt or resource was not served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServedRefusal {
    /// No prompt or resource of that name or URI is served (`-32602`, `-32002`).
    Unknown(String),
    /// It is served, but getting it failed (the upstream server's refusal, a missing argument).
    Failed(String),
}

/// What rho serves: tools under their exported names.
pub trait Served: Send + Sync + 'static {
    /// The tools, in the order a client lists them.
    fn tools(&self) -> ServedList<'_>;

    /// Counts changes of the served tools (an upstream server's `list_changed`, a lazy
    /// server's first start): clients are told their list changed each time it moves.
    fn changes(&self) -> tokio::sync::watch::Receiver<u64>;

    /// The search tool's declaration when a client is to see it instead of every tool
    /// (`--tool-search`): the tools it finds join that client's list.
    fn search_tool(&self) -> Option<ToolSpec>;

    /// Runs the search tool with the client's `arguments`.
    fn search(&self, arguments: Value) -> ServedSearch<'_>;

    /// The prompts, under their served names (`ServerPrompt::name`).
    fn prompts(&self) -> ServedFuture<'_, Vec<ServerPrompt>>;

    /// Expands prompt `name` with `arguments`.
    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: std::collections::BTreeMap<String, String>,
    ) -> ServedFuture<'a, Result<Vec<RhoPromptMessage>, ServedRefusal>>;

    /// The resources, under their served URIs.
    fn resources(&self) -> ServedFuture<'_, Vec<ServerResource>>;

    /// Reads the resource at `uri`.
    fn read_resource<'a>(
        &'a self,
        uri: &'a str,
    ) -> ServedFuture<'a, Result<ResourceAttachment, ServedRefusal>>;

    /// Calls tool `name`: `cancel` fires when the client cancels (or goes away), `progress`
    /// receives the tool's progress when the client asked for it, and `asker` puts an upstream
    /// server's questions to the client.
    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
        cancel: CancelSignal,
        progress: Option<ProgressSink>,
        asker: Arc<dyn rho_component::Asker>,
    ) -> ServedCall<'a>;
}

/// How the server introduces itself.
#[derive(Debug, Clone)]
pub struct ServeInfo {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// `instructions`, when there are some.
    pub instructions: Option<String>,
}

/// Why serving ended badly.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The client never completed the handshake (or stdin closed first).
    #[error("the MCP client did not complete the handshake: {0}")]
    Handshake(String),
}

/// Serves `served` over stdin and stdout until the client closes stdin or `stop` fires.
pub async fn serve_stdio(
    served: Arc<dyn Served>,
    info: ServeInfo,
    stop: CancelSignal,
) -> Result<(), ServeError> {
    let handler = Gateway::new(served, info);
    let transport = (tokio::io::stdin(), tokio::io::stdout());
    let running = tokio::select! {
        running = handler.serve(transport) => running.map_err(|e| ServeError::Handshake(e.to_string()))?,
        () = stop.cancelled() => return Ok(()),
    };
    let cancel = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        _ = &mut waiting => {}
        () = stop.cancelled() => {
            // The service's task holds the handler (and the served set) until it ends: wait
            // for it, so the caller can close what the set started.
            cancel.cancel();
            if tokio::time::timeout(SERVICE_STOP_WAIT, waiting).await.is_err() {
                tracing::warn!(target: "rho::serve", "the MCP service did not stop within {} ms", SERVICE_STOP_WAIT.as_millis());
            }
        }
    }
    Ok(())
}

/// How long a stop waits for the service's task to end (the servers' close comes after, all
/// within rho's grace period after a signal).
const SERVICE_STOP_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Where `rho mcp serve --http` listens, and what a request must carry.
pub struct HttpServe {
    /// The bound listener (bound by the caller, which reports its address).
    pub listener: tokio::net::TcpListener,
    /// The token every request must carry as `Authorization: Bearer <token>` (`None`: no
    /// check, for a loopback listener).
    pub bearer: Option<String>,
    /// Accept any `Host` header (remote clients, which the token guards); otherwise only
    /// loopback names, against DNS rebinding.
    pub any_host: bool,
}

impl std::fmt::Debug for HttpServe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token itself.
        f.debug_struct("HttpServe")
            .field("listener", &self.listener.local_addr().ok())
            .field("bearer", &self.bearer.as_ref().map(|_| "<set>"))
            .field("any_host", &self.any_host)
            .finish()
    }
}

/// Connections served at once, at most; more wait to be accepted.
const MAX_HTTP_CONNECTIONS: usize = 256;

/// How long a connection may take to send a request's headers.
const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long accepting pauses after it failed (out of file descriptors, say), so a failing
/// `accept` does not spin.
const ACCEPT_RETRY: std::time::Duration = std::time::Duration::from_millis(100);

/// The path the MCP endpoint answers on.
pub const HTTP_PATH: &str = "/mcp";

/// The largest request body accepted.
const MAX_HTTP_BODY_BYTES: usize = 4 << 20;

/// Serves `served` over Streamable HTTP on `http.listener` (path [`HTTP_PATH`]) until `stop`
/// fires: both revisions (2025-11-25 clients get a session, 2026-07-28 requests are served
/// statelessly).
pub async fn serve_http(
    served: Arc<dyn Served>,
    info: ServeInfo,
    http: HttpServe,
    stop: CancelSignal,
) -> Result<(), ServeError> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let mut config = StreamableHttpServerConfig::default();
    config.max_request_body_bytes = MAX_HTTP_BODY_BYTES;
    if http.any_host {
        config = config.disable_allowed_hosts();
    }
    let sessions_stop = config.cancellation_token.clone();
    let service = StreamableHttpService::new(
        move || Ok(Gateway::new(served.clone(), info.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let bearer: Option<Arc<str>> = http.bearer.map(Arc::from);
    let mut connections = tokio::task::JoinSet::new();
    loop {
        // Finished connections are reaped; at the cap, the next waits for one to end.
        while connections.try_join_next().is_some() {}
        if connections.len() >= MAX_HTTP_CONNECTIONS {
            tokio::select! {
                _ = connections.join_next() => continue,
                () = stop.cancelled() => break,
            }
        }
        let accepted = tokio::select! {
            accepted = http.listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(target: "rho::serve", "cannot accept a connection: {e}");
                tokio::select! {
                    () = tokio::time::sleep(ACCEPT_RETRY) => continue,
                    () = stop.cancelled() => break,
                }
            }
        };
        let service = service.clone();
        let bearer = bearer.clone();
        connections.spawn(async move {
            let answer = hyper::service::service_fn(move |request| {
                let service = service.clone();
                let bearer = bearer.clone();
                async move {
                    Ok::<_, std::convert::Infallible>(match refusal(&request, bearer.as_deref()) {
                        Some(refused) => refused,
                        None => service.handle(request).await,
                    })
                }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(io, answer)
                .await
            {
                tracing::debug!(target: "rho::serve", "a connection ended: {e}");
            }
        });
    }
    // Sessions end (their streams close), then the connections that carried them.
    sessions_stop.cancel();
    connections.abort_all();
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// A response body of rmcp's type.
type HttpBody = http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>;

/// The answer to a request that is not for the endpoint (404) or lacks the bearer token (401),
/// or `None` to pass it to the MCP service.
fn refusal<B>(
    request: &http::Request<B>,
    bearer: Option<&str>,
) -> Option<http::Response<HttpBody>> {
    let status = if request.uri().path() != HTTP_PATH {
        http::StatusCode::NOT_FOUND
    } else if bearer.is_some_and(|token| !carries_token(request.headers(), token)) {
        http::StatusCode::UNAUTHORIZED
    } else {
        return None;
    };
    let body = http_body_util::Full::new(bytes::Bytes::from(
        status.canonical_reason().unwrap_or_default(),
    ));
    let mut response = http::Response::new(http_body_util::BodyExt::boxed(body));
    *response.status_mut() = status;
    if status == http::StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            http::header::WWW_AUTHENTICATE,
            http::HeaderValue::from_static("Bearer"),
        );
    }
    Some(response)
}

/// Whether `headers` carry `Authorization: Bearer <token>`, compared in constant time.
fn carries_token(headers: &http::HeaderMap, token: &str) -> bool {
    let Some(given) = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    let (given, token) = (given.as_bytes(), token.as_bytes());
    given.len() == token.len()
        && given
            .iter()
            .zip(token)
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
}

impl ServedRefusal {
    /// The JSON-RPC error a client gets: `unknown` for something not served, an internal
    /// error for a failure.
    fn error(
        self,
        unknown: fn(Cow<'static, str>, Option<Value>) -> rmcp::ErrorData,
    ) -> rmcp::ErrorData {
        match self {
            Self::Unknown(message) => unknown(message.into(), None),
            Self::Failed(message) => rmcp::ErrorData::internal_error(message, None),
        }
    }
}

/// The rmcp handler of one client (one per HTTP session): every request is answered from the
/// [`Served`] set.
struct Gateway {
    served: Arc<dyn Served>,
    info: ServeInfo,
    /// With a search tool: the tools this client's searches found, listed from then on.
    found: std::sync::Mutex<std::collections::BTreeSet<String>>,
    /// Ends this client's `list_changed` forwarder when the handler goes.
    gone: tokio_util::sync::CancellationToken,
    /// The search tool, when clients see it instead of every tool (asked once, not per
    /// request).
    search: Option<ToolSpec>,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.gone.cancel();
    }
}

impl Gateway {
    fn new(served: Arc<dyn Served>, info: ServeInfo) -> Self {
        Self {
            search: served.search_tool(),
            served,
            info,
            found: std::sync::Mutex::default(),
            gone: tokio_util::sync::CancellationToken::new(),
        }
    }

    fn found(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeSet<String>> {
        self.found
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs the search tool; the matches join this client's list, and the client is told
    /// the list changed when it grew.
    async fn search(&self, arguments: Value, context: &RequestContext<RoleServer>) -> ToolOutput {
        let (output, matches) = self.served.search(arguments).await;
        let grew = {
            let mut found = self.found();
            let before = found.len();
            found.extend(matches);
            found.len() > before
        };
        if grew {
            let _ = context.peer.notify_tool_list_changed().await;
        }
        output
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let mut result = InitializeResult::new(capabilities).with_server_info(Implementation::new(
            self.info.name.clone(),
            self.info.version.clone(),
        ));
        if let Some(instructions) = &self.info.instructions {
            result = result.with_instructions(instructions.clone());
        }
        result
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        // From now on, each change of the served tools reaches this client as
        // `notifications/tools/list_changed`, until it goes.
        let mut changes = self.served.changes();
        changes.mark_unchanged();
        let gone = self.gone.clone();
        let peer = context.peer;
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    changed = changes.changed() => if changed.is_err() { return },
                    () = gone.cancelled() => return,
                }
                if peer.notify_tool_list_changed().await.is_err() {
                    return;
                }
            }
        });
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, rmcp::ErrorData> {
        let tools = self.served.tools().await;
        let listed = match &self.search {
            None => tools.iter().map(definition).collect(),
            Some(search) => {
                let found = self.found();
                std::iter::once(definition(search))
                    .chain(
                        tools
                            .iter()
                            .filter(|t| found.contains(&t.name))
                            .map(definition),
                    )
                    .collect()
            }
        };
        Ok(ListToolsResult::with_all_items(listed))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, rmcp::ErrorData> {
        let prompts = self
            .served
            .prompts()
            .await
            .into_iter()
            .map(prompt)
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, rmcp::ErrorData> {
        let arguments = request
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|(key, value)| match value {
                Value::String(text) => (key, text),
                other => (key, other.to_string()),
            })
            .collect();
        let messages = self
            .served
            .get_prompt(&request.name, arguments)
            .await
            .map_err(|refusal| refusal.error(rmcp::ErrorData::invalid_params))?;
        let messages = messages
            .into_iter()
            .map(|m| {
                let role = match m.role {
                    PromptRole::User => Role::User,
                    PromptRole::Assistant => Role::Assistant,
                };
                PromptMessage::new_text(role, m.text)
            })
            .collect();
        Ok(GetPromptResponse::Complete(GetPromptResult::new(messages)))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, rmcp::ErrorData> {
        let resources = self
            .served
            .resources()
            .await
            .into_iter()
            .map(resource)
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, rmcp::ErrorData> {
        let read = self
            .served
            .read_resource(&request.uri)
            .await
            .map_err(|refusal| refusal.error(rmcp::ErrorData::resource_not_found))?;
        let mut contents = vec![ResourceContents::text(read.text, read.uri.clone())];
        if let Some(image) = read.image {
            contents
                .push(ResourceContents::blob(image.data, read.uri).with_mime_type(image.mime_type));
        }
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            contents,
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        let arguments = request
            .arguments
            .map_or(Value::Object(JsonObject::new()), Value::Object);
        if self
            .search
            .as_ref()
            .is_some_and(|search| search.name == request.name)
        {
            let output = self.search(arguments, &context).await;
            return Ok(CallToolResponse::Complete(result(output)));
        }
        let cancel = CancelSignal::new();
        let on_cancel = cancel.clone();
        let ct = context.ct.clone();
        let watch = tokio::spawn(async move {
            ct.cancelled().await;
            on_cancel.cancel();
        });
        // One sender per call keeps the reports in order; a full queue drops a report rather
        // than holding up the tool.
        let progress = context.meta.get_progress_token().map(|token| {
            let (reports, mut to_send) =
                tokio::sync::mpsc::channel::<ProgressNotificationParam>(64);
            let peer = context.peer.clone();
            tokio::spawn(async move {
                while let Some(param) = to_send.recv().await {
                    if peer.notify_progress(param).await.is_err() {
                        return;
                    }
                }
            });
            let sink: ProgressSink = Arc::new(move |p: ToolProgress| {
                let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
                param.total = p.total;
                param.message = p.message;
                let _ = reports.try_send(param);
            });
            sink
        });
        let asker = Arc::new(downstream::Downstream::new(context.peer.clone()));
        let output = self
            .served
            .call(&request.name, arguments, cancel, progress, asker)
            .await;
        watch.abort();
        match output {
            Some(output) => Ok(CallToolResponse::Complete(result(output))),
            None => Err(rmcp::ErrorData::invalid_params(
                format!("no tool named {:?}", request.name.as_ref()),
                None,
            )),
        }
    }
}

/// The MCP definition of a served tool: its exported name, and its risk level as hints.
fn definition(spec: &ToolSpec) -> Tool {
    let schema = match &spec.input_schema {
        Value::Object(map) => map.clone(),
        _ => JsonObject::from_iter([("type".to_owned(), Value::from("object"))]),
    };
    let annotations = match spec.risk {
        RiskLevel::Read => ToolAnnotations::new().read_only(true),
        RiskLevel::Write => ToolAnnotations::new().read_only(false).destructive(false),
        RiskLevel::Destructive => ToolAnnotations::new().read_only(false).destructive(true),
    };
    let mut tool = Tool::new(
        Cow::Owned(spec.name.clone()),
        Cow::Owned(spec.description.clone()),
        Arc::new(schema),
    )
    .with_annotations(annotations);
    if let Some(title) = &spec.title {
        tool = tool.with_title(title.clone());
    }
    if let Some(Value::Object(schema)) = &spec.output_schema {
        tool = tool.with_raw_output_schema(Arc::new(schema.clone()));
    }
    tool
}

/// The MCP declaration of a served prompt.
fn prompt(served: ServerPrompt) -> Prompt {
    let arguments = served
        .arguments
        .into_iter()
        .map(|a| {
            let mut argument = rmcp::model::PromptArgument::new(a.name).with_required(a.required);
            if let Some(title) = a.title {
                argument = argument.with_title(title);
            }
            if let Some(description) = a.description {
                argument = argument.with_description(description);
            }
            argument
        })
        .collect();
    let mut prompt = Prompt::new(served.name, served.description, Some(arguments));
    if let Some(title) = served.title {
        prompt = prompt.with_title(title);
    }
    prompt
}

/// The MCP declaration of a served resource.
fn resource(served: ServerResource) -> rmcp::model::Resource {
    let mut resource = rmcp::model::Resource::new(served.uri, served.name);
    if let Some(title) = served.title {
        resource = resource.with_title(title);
    }
    if let Some(description) = served.description {
        resource = resource.with_description(description);
    }
    if let Some(mime_type) = served.mime_type {
        resource = resource.with_mime_type(mime_type);
    }
    resource
}

/// The MCP result of a served call: its text, its image, its structured content.
fn result(output: ToolOutput) -> CallToolResult {
    let mut content = vec![ContentBlock::text(output.text)];
    if let Some(image) = output.image {
        content.push(ContentBlock::image(image.data, image.mime_type));
    }
    let mut result = if output.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = output.structured;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(path: &str, authorization: Option<&str>) -> http::Request<()> {
        let mut builder = http::Request::post(path);
        if let Some(value) = authorization {
            builder = builder.header(http::header::AUTHORIZATION, value);
        }
        builder.body(()).unwrap_or_default()
    }

    #[test]
    fn only_the_endpoint_with_the_token_passes() {
        let status = |path, auth, bearer| refusal(&request(path, auth), bearer).map(|r| r.status());
        assert_eq!(status(HTTP_PATH, None, None), None);
        assert_eq!(status("/", None, None), Some(http::StatusCode::NOT_FOUND));
        assert_eq!(status(HTTP_PATH, Some("Bearer t0k"), Some("t0k")), None);
        for wrong in [
            None,
            Some("Bearer t0"),
            Some("Bearer t0kk"),
            Some("Basic t0k"),
            Some("t0k"),
        ] {
            assert_eq!(
                status(HTTP_PATH, wrong, Some("t0k")),
                Some(http::StatusCode::UNAUTHORIZED),
                "{wrong:?}"
            );
        }
        let refused = refusal(&request(HTTP_PATH, None), Some("t0k"));
        let header = refused
            .as_ref()
            .and_then(|r| r.headers().get(http::header::WWW_AUTHENTICATE));
        assert_eq!(header.and_then(|h| h.to_str().ok()), Some("Bearer"));
    }
}
