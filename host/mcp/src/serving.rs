//! rho as an MCP server (`rho mcp serve`, `docs/mcp.md`, "rho as an MCP server"): an rmcp
//! server handler over a [`Served`] set of tools, on stdin/stdout ([`serve_stdio`]) or
//! Streamable HTTP ([`serve_http`]: rmcp's service behind a small hyper server that checks
//! the path and, for remote clients, a bearer token). The set is rho's own types;
//! this module turns its [`ToolSpec`]s into MCP tool definitions (rho's exported names, the risk
//! level as annotations), passes an MCP tool's result on as its server sent it (up to
//! [`MAX_PASSED_RESULT_BYTES`]) and turns other tools' [`ToolOutput`]s into call results, passes a client's progress
//! token and cancellation through to the call, passes an upstream server's questions to the
//! client (`downstream.rs`: as requests to a 2025-11-25 client, as input requests in the
//! call's result to a 2026-07-28 one, `parked.rs`), and speaks both revisions rho speaks as a client
//! (2026-07-28 through `server/discover`, 2025-11-25 through `initialize`: rmcp answers each
//! in the client's era).

mod downstream;
mod http;
mod notices;
mod parked;
mod to_mcp;

use to_mcp::{
    call_response, completion, definition, prompt, prompt_response, resource, result, template,
};

pub use http::{HTTP_PATH, HttpServe, serve_http};

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rho_component::{
    CancelSignal, PassedOutput, ProgressSink, PromptMessage as RhoPromptMessage, ResourceBody,
    ResourceContent, ServerPrompt, ServerResource, ToolOutput, ToolProgress, ToolSpec,
};
use rmcp::handler::server::ServerHandler;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, InitializeResult, JsonObject,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Reference, ResourceContents, ServerCapabilities,
};
use rmcp::service::{RequestContext, RoleServer, ServiceExt, SubscriptionContext};
use serde_json::Value;

/// The future of one served call: `None` when the set has no tool of that name; an MCP
/// tool's result as its server sent it, any other tool's as rho renders it.
pub type ServedCall<'a> = Pin<Box<dyn Future<Output = Option<PassedOutput>> + Send + 'a>>;

/// The largest upstream result passed on, serialized: a larger one is refused with an error
/// result naming the tool (`docs/mcp.md`, "rho as an MCP server").
pub const MAX_PASSED_RESULT_BYTES: usize = 16 * 1024 * 1024;

/// The future of the served tools' list.
pub type ServedList<'a> = Pin<Box<dyn Future<Output = Vec<ToolSpec>> + Send + 'a>>;

/// The future of one search: what the client reads, and the exported names of the matches.
pub type ServedSearch<'a> = Pin<Box<dyn Future<Output = (ToolOutput, Vec<String>)> + Send + 'a>>;

/// The future of any other served answer.
pub type ServedFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a client asks to complete: an argument of a served prompt or resource template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentCompletion {
    /// Whose argument it is.
    pub of: Completing,
    /// The argument's name.
    pub argument: String,
    /// What is typed so far.
    pub value: String,
    /// The other arguments already filled in.
    pub context: std::collections::BTreeMap<String, String>,
}

/// What has the argument a client asks to complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completing {
    /// The prompt served under this name.
    Prompt(String),
    /// The resource template with this URI template.
    ResourceTemplate(String),
}

/// An expanded prompt as the gateway passes it on.
#[derive(Debug, Clone, PartialEq)]
pub enum ServedPrompt {
    /// An upstream server's `GetPromptResult` as it sent it (as JSON): every content block.
    AsSent(Value),
    /// rho's own messages (a skill's body), as text.
    Messages(Vec<RhoPromptMessage>),
}

/// Why a prompt or resource was not served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServedRefusal {
    /// No prompt or resource of that name or URI is served (`-32602`, `-32002`).
    Unknown(String),
    /// It is served, but getting it failed (the upstream server's refusal, a missing argument).
    Failed(String),
}

/// How many times each served list has changed so far: a client is told of each list that
/// moved since it last looked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServedChanges {
    /// Changes of the tools.
    pub tools: u64,
    /// Changes of the prompts.
    pub prompts: u64,
    /// Changes of the resources and resource templates.
    pub resources: u64,
}

/// What rho serves: tools under their exported names.
pub trait Served: Send + Sync + 'static {
    /// The tools, in the order a client lists them.
    fn tools(&self) -> ServedList<'_>;

    /// Counts changes of the served lists (an upstream server's `list_changed`, a lazy
    /// server's first start): clients are told a list changed each time it moves.
    fn changes(&self) -> tokio::sync::watch::Receiver<ServedChanges>;

    /// The search tool's declaration when a client is to see it instead of every tool
    /// (`--tool-search`): the tools it finds join that client's list.
    fn search_tool(&self) -> Option<ToolSpec>;

    /// Runs the search tool with the client's `arguments`.
    fn search(&self, arguments: Value) -> ServedSearch<'_>;

    /// The prompts, under their served names (`ServerPrompt::name`).
    fn prompts(&self) -> ServedFuture<'_, Vec<ServerPrompt>>;

    /// Expands prompt `name` with `arguments`; `asker` puts an upstream server's questions to
    /// the client.
    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: std::collections::BTreeMap<String, String>,
        asker: Arc<dyn rho_component::Asker>,
    ) -> ServedFuture<'a, Result<ServedPrompt, ServedRefusal>>;

    /// Suggestions for one argument of a served prompt or resource template: `None` when none
    /// is served under that name or URI template.
    fn complete(&self, asked: ArgumentCompletion) -> ServedFuture<'_, Option<Vec<String>>>;

    /// The resources, under their served URIs.
    fn resources(&self) -> ServedFuture<'_, Vec<ServerResource>>;

    /// The resource templates (`ServerResource::template`), their URIs RFC 6570 templates.
    fn resource_templates(&self) -> ServedFuture<'_, Vec<ServerResource>>;

    /// Reads the resource at `uri` (a listed URI, or one a template expands to): its bodies
    /// as they are passed on.
    fn read_resource<'a>(
        &'a self,
        uri: &'a str,
    ) -> ServedFuture<'a, Result<Vec<ResourceBody>, ServedRefusal>>;

    /// Subscribes a client to updates of the resource at `uri`: each call holds it until its
    /// [`Served::unsubscribe`]. A URI no served server offers is held and never updated; a
    /// server that refuses the subscription is the refusal.
    fn subscribe<'a>(&'a self, uri: &'a str) -> ServedFuture<'a, Result<(), ServedRefusal>>;

    /// Releases one [`Served::subscribe`] of `uri`.
    fn unsubscribe<'a>(&'a self, uri: &'a str) -> ServedFuture<'a, ()>;

    /// The URIs of held resources as their servers update them, from now on.
    fn resource_updates(&self) -> tokio::sync::broadcast::Receiver<String>;

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
    let handler = Gateway::new(served, info, Arc::default());
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
    /// Calls of 2026-07-28 clients waiting for answers, shared by every handler of the server
    /// (such a client's retry may reach another one).
    parked: Arc<parked::Parked>,
    /// The least severe upstream log message this client wants (`logging/setLevel`); none
    /// until it sets one.
    log_level: std::sync::Mutex<Option<rho_component::LogLevel>>,
    /// The resources this client subscribed to (`resources/subscribe`), shared with the task
    /// that passes their updates on.
    subscribed: Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.gone.cancel();
        // The client is gone: its subscriptions are released (in the background: dropping
        // cannot wait).
        let uris = std::mem::take(&mut *lock(&self.subscribed));
        if !uris.is_empty()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let served = Arc::clone(&self.served);
            runtime.spawn(async move {
                for uri in uris {
                    served.unsubscribe(&uri).await;
                }
            });
        }
    }
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Gateway {
    fn new(served: Arc<dyn Served>, info: ServeInfo, parked: Arc<parked::Parked>) -> Self {
        Self {
            search: served.search_tool(),
            served,
            info,
            parked,
            log_level: std::sync::Mutex::default(),
            subscribed: Arc::default(),
            found: std::sync::Mutex::default(),
            gone: tokio_util::sync::CancellationToken::new(),
        }
    }

    fn log_level(&self) -> std::sync::MutexGuard<'_, Option<rho_component::LogLevel>> {
        self.log_level
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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
    // `logging`: see `set_level`.
    #[allow(deprecated)]
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
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
        // From now on this 2025-11-25 client is told of each change of a served list, and of
        // each update of a resource it subscribed to, until it goes.
        notices::tell_session(
            Arc::clone(&self.served),
            Arc::clone(&self.subscribed),
            self.gone.clone(),
            context.peer,
        );
    }

    /// A 2026-07-28 client learns of list changes and resource updates on a
    /// `subscriptions/listen` stream: rho accepts the three list changes and the resources
    /// asked for (at most [`notices::MAX_LISTEN_RESOURCES`]).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let uris = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .take(notices::MAX_LISTEN_RESOURCES)
            .cloned()
            .collect::<Vec<_>>();
        Some(
            SubscriptionFilter::builder()
                .tools_list_changed()
                .prompts_list_changed()
                .resources_list_changed()
                .resource_subscriptions(uris)
                .build(),
        )
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), rmcp::ErrorData> {
        notices::tell_stream(self.served.as_ref(), &self.gone, &context).await;
        Ok(())
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
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, rmcp::ErrorData> {
        let arguments: std::collections::BTreeMap<String, String> = request
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|(key, value)| match value {
                Value::String(text) => (key, text),
                other => (key, other.to_string()),
            })
            .collect();
        let name = request.name;
        let (modern, capabilities) = downstream::declared(&context);
        if modern {
            // Its questions become input requests, as a call's do.
            let retry = parked::Retry {
                state: request.request_state,
                responses: request.input_responses.map(|r| r.into_iter().collect()),
            };
            let (served, prompt) = (Arc::clone(&self.served), name.clone());
            let start = move |asker, _cancel| {
                tokio::spawn(async move {
                    parked::Outcome::Prompt(served.get_prompt(&prompt, arguments, asker).await)
                })
            };
            let asking = parked::Asking::Prompt(name.clone());
            return match self
                .asking(asking, retry, capabilities, &context, start)
                .await?
            {
                parked::Reply::Done(parked::Outcome::Prompt(prompt)) => {
                    prompt_response(&name, prompt)
                }
                parked::Reply::Done(parked::Outcome::Tool(_)) => Err(
                    rmcp::ErrorData::internal_error("a prompt ended as a tool call", None),
                ),
                parked::Reply::Asks(asks) => Ok(GetPromptResponse::InputRequired(asks)),
            };
        }
        let asker = Arc::new(downstream::Downstream::new(
            context.peer.clone(),
            &context,
            *self.log_level(),
        ));
        let prompt = self.served.get_prompt(&name, arguments, asker).await;
        prompt_response(&name, prompt)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, rmcp::ErrorData> {
        let (of, unknown) = match &request.r#ref {
            Reference::Prompt(prompt) => (
                Completing::Prompt(prompt.name.clone()),
                format!("no prompt named {:?}", prompt.name),
            ),
            Reference::Resource(template) => (
                Completing::ResourceTemplate(template.uri.clone()),
                format!("no resource template {:?}", template.uri),
            ),
            // A kind of reference a later revision adds: nothing to suggest.
            _ => return Ok(CompleteResult::default()),
        };
        let context = request
            .context
            .and_then(|c| c.arguments)
            .unwrap_or_default()
            .into_iter()
            .collect();
        let asked = ArgumentCompletion {
            of,
            argument: request.argument.name,
            value: request.argument.value,
            context,
        };
        let values = self
            .served
            .complete(asked)
            .await
            .ok_or_else(|| rmcp::ErrorData::invalid_params(unknown, None))?;
        Ok(CompleteResult::new(completion(values)))
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

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, rmcp::ErrorData> {
        let templates = self
            .served
            .resource_templates()
            .await
            .into_iter()
            .map(template)
            .collect();
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, rmcp::ErrorData> {
        let bodies =
            self.served
                .read_resource(&request.uri)
                .await
                .map_err(|refusal| match refusal {
                    // The URI goes back in the error's data (SEP-2164).
                    ServedRefusal::Unknown(message) => rmcp::ErrorData::resource_not_found(
                        message,
                        Some(serde_json::json!({ "uri": request.uri })),
                    ),
                    failed @ ServedRefusal::Failed(_) => {
                        failed.error(rmcp::ErrorData::invalid_params)
                    }
                })?;
        let contents = bodies
            .into_iter()
            .map(|body| {
                let contents = match body.content {
                    ResourceContent::Text(text) => ResourceContents::text(text, body.uri),
                    ResourceContent::Blob(blob) => ResourceContents::blob(blob, body.uri),
                };
                match body.mime_type {
                    Some(mime) => contents.with_mime_type(mime),
                    None => contents,
                }
            })
            .collect();
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            contents,
        )))
    }

    // rmcp marks resources/subscribe deprecated (2026-07-28 subscribes on
    // subscriptions/listen); 2025-11-25 clients still send it.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), rmcp::ErrorData> {
        // Once per client and URI (a repeat holds nothing more), and at most
        // `notices::MAX_LISTEN_RESOURCES` per client; recorded before the request, so two at
        // once take one hold.
        {
            let mut subscribed = lock(&self.subscribed);
            if subscribed.contains(&request.uri) {
                return Ok(());
            }
            if subscribed.len() >= notices::MAX_LISTEN_RESOURCES {
                return Err(rmcp::ErrorData::invalid_params(
                    format!(
                        "a client may hold at most {} resource subscriptions",
                        notices::MAX_LISTEN_RESOURCES
                    ),
                    None,
                ));
            }
            subscribed.insert(request.uri.clone());
        }
        if let Err(refusal) = self.served.subscribe(&request.uri).await {
            lock(&self.subscribed).remove(&request.uri);
            return Err(refusal.error(rmcp::ErrorData::invalid_params));
        }
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), rmcp::ErrorData> {
        if lock(&self.subscribed).remove(&request.uri) {
            self.served.unsubscribe(&request.uri).await;
        }
        Ok(())
    }

    // rmcp marks logging deprecated (SEP-2577); 2025-11-25 clients still set a level.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), rmcp::ErrorData> {
        // From now on, the log messages an upstream server sends during this client's calls
        // reach it from this level up (rho's own log keeps them all).
        *self.log_level() = Some(crate::connection::rho_level(request.level));
        Ok(())
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
        let (modern, capabilities) = downstream::declared(&context);
        if modern {
            let retry = parked::Retry {
                state: request.request_state,
                responses: request.input_responses.map(|r| r.into_iter().collect()),
            };
            let (served, tool) = (Arc::clone(&self.served), request.name.to_string());
            let reports = progress_reports(&context);
            let start = move |asker, cancel| {
                tokio::spawn(async move {
                    let progress = reports.as_ref().map(|r| Arc::clone(&r.sink));
                    let called = served.call(&tool, arguments, cancel, progress, asker).await;
                    if let Some(reports) = &reports {
                        reports.flushed().await;
                    }
                    parked::Outcome::Tool(called)
                })
            };
            let asking = parked::Asking::Tool(request.name.to_string());
            return match self
                .asking(asking, retry, capabilities, &context, start)
                .await?
            {
                parked::Reply::Done(parked::Outcome::Tool(output)) => {
                    call_response(&request.name, output)
                }
                parked::Reply::Done(parked::Outcome::Prompt(_)) => Err(
                    rmcp::ErrorData::internal_error("a tool call ended as a prompt", None),
                ),
                parked::Reply::Asks(asks) => Ok(CallToolResponse::InputRequired(asks)),
            };
        }
        let cancel = CancelSignal::new();
        let on_cancel = cancel.clone();
        let ct = context.ct.clone();
        let watch = tokio::spawn(async move {
            ct.cancelled().await;
            on_cancel.cancel();
        });
        let reports = progress_reports(&context);
        let progress = reports.as_ref().map(|r| Arc::clone(&r.sink));
        let downstream = Arc::new(downstream::Downstream::new(
            context.peer.clone(),
            &context,
            *self.log_level(),
        ));
        let asker = Arc::clone(&downstream);
        let output = self
            .served
            .call(&request.name, arguments, cancel, progress, asker)
            .await;
        watch.abort();
        if let Some(reports) = &reports {
            reports.flushed().await;
        }
        downstream.logs_flushed().await;
        call_response(&request.name, output)
    }
}

/// Where a call's progress goes when the client asked for it (a progress token): one sender
/// per call keeps the reports in order, a full queue drops a report rather than holding up
/// the tool, and the call's result waits for the reports made before it
/// ([`ProgressReports::flushed`]).
fn progress_reports(context: &RequestContext<RoleServer>) -> Option<ProgressReports> {
    let token = context.meta.get_progress_token()?;
    let (queue, mut to_send) = tokio::sync::mpsc::channel::<Report>(64);
    let peer = context.peer.clone();
    tokio::spawn(async move {
        while let Some(report) = to_send.recv().await {
            match report {
                Report::Progress(param) => {
                    if peer.notify_progress(param).await.is_err() {
                        return;
                    }
                }
                Report::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    });
    let reports = queue.clone();
    let sink: ProgressSink = Arc::new(move |p: ToolProgress| {
        let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
        param.total = p.total;
        param.message = p.message;
        let _ = reports.try_send(Report::Progress(param));
    });
    Some(ProgressReports { sink, queue })
}

/// A call's progress reports on their way to the client, in order.
struct ProgressReports {
    /// What the call reports to.
    sink: ProgressSink,
    queue: tokio::sync::mpsc::Sender<Report>,
}

/// One item of a call's progress queue.
enum Report {
    /// A report to send.
    Progress(ProgressNotificationParam),
    /// Answered once every report before it was sent.
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// How long a call's result waits for its last progress reports to be sent.
const PROGRESS_FLUSH_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

impl ProgressReports {
    /// Waits until every report made so far was sent (at most [`PROGRESS_FLUSH_WAIT`]): a
    /// client gets no progress after a call's result.
    async fn flushed(&self) {
        let (done, sent) = tokio::sync::oneshot::channel();
        if self.queue.send(Report::Flush(done)).await.is_ok() {
            let _ = tokio::time::timeout(PROGRESS_FLUSH_WAIT, sent).await;
        }
    }
}
