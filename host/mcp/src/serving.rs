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
mod parked;

pub use http::{HTTP_PATH, HttpServe, serve_http};

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rho_component::{
    CancelSignal, PassedOutput, ProgressSink, PromptMessage as RhoPromptMessage, PromptRole,
    ResourceBody, ResourceContent, RiskLevel, ServerPrompt, ServerResource, ToolOutput,
    ToolProgress, ToolSpec,
};
use rmcp::handler::server::ServerHandler;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    CompletionInfo, ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, InitializeResult, JsonObject, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    Prompt, PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Reference, ResourceContents, Role, ServerCapabilities, Tool, ToolAnnotations,
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

    /// Expands prompt `name` with `arguments`.
    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: std::collections::BTreeMap<String, String>,
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
        // From now on, each change of a served list reaches this 2025-11-25 client as that
        // list's `notifications/*/list_changed`, until it goes.
        let changes = self.served.changes();
        let gone = self.gone.clone();
        let peer = context.peer;
        // The updates of the resources it subscribed to, as `notifications/resources/updated`.
        let mut updates = self.served.resource_updates();
        let (subscribed, updated_peer, stop) = (
            Arc::clone(&self.subscribed),
            peer.clone(),
            self.gone.clone(),
        );
        tokio::spawn(async move {
            loop {
                let uri = tokio::select! {
                    update = updates.recv() => match update {
                        Ok(uri) => uri,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                    },
                    () = stop.cancelled() => return,
                };
                if lock(&subscribed).contains(&uri) {
                    let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
                    if updated_peer.notify_resource_updated(param).await.is_err() {
                        return;
                    }
                }
            }
        });
        tokio::spawn(async move {
            let tell = |list: Moved| {
                let peer = peer.clone();
                async move {
                    match list {
                        Moved::Tools => peer.notify_tool_list_changed().await,
                        Moved::Prompts => peer.notify_prompt_list_changed().await,
                        Moved::Resources => peer.notify_resource_list_changed().await,
                    }
                    .is_ok()
                }
            };
            forward_changes(changes, gone.cancelled(), tell).await;
        });
    }

    /// A 2026-07-28 client learns of list changes and resource updates on a
    /// `subscriptions/listen` stream: rho accepts the three list changes and the resources
    /// asked for (at most [`MAX_LISTEN_RESOURCES`]).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let uris = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .take(MAX_LISTEN_RESOURCES)
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
        let accepted = context.accepted().clone();
        let sink = context.sink().clone();
        // The stream's resources are held while it is open; one a server refuses is never
        // updated (it was acknowledged before rho could ask).
        let uris: Vec<String> = accepted.resource_subscriptions.clone().unwrap_or_default();
        let mut held = Vec::new();
        for uri in &uris {
            match self.served.subscribe(uri).await {
                Ok(()) => held.push(uri.clone()),
                Err(refusal) => {
                    tracing::info!(target: "rho::serve", uri = uri.as_str(), "a resource subscription was refused: {refusal:?}");
                }
            }
        }
        let mut updates = self.served.resource_updates();
        let updated_sink = sink.clone();
        let forward_updates = async {
            loop {
                match updates.recv().await {
                    Ok(uri) if held.contains(&uri) => {
                        if updated_sink.notify_resource_updated(uri).await.is_err() {
                            return;
                        }
                    }
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        };
        let tell = |list: Moved| {
            let (sink, accepted) = (sink.clone(), accepted.clone());
            async move {
                let wanted = match list {
                    Moved::Tools => accepted.tools_list_changed,
                    Moved::Prompts => accepted.prompts_list_changed,
                    Moved::Resources => accepted.resources_list_changed,
                };
                if wanted != Some(true) {
                    return true;
                }
                match list {
                    Moved::Tools => sink.notify_tool_list_changed().await,
                    Moved::Prompts => sink.notify_prompt_list_changed().await,
                    Moved::Resources => sink.notify_resource_list_changed().await,
                }
                .is_ok()
            }
        };
        let stop = async {
            tokio::select! {
                () = context.cancelled() => {}
                () = self.gone.cancelled() => {}
            }
        };
        tokio::select! {
            () = forward_changes(self.served.changes(), stop, tell) => {}
            () = forward_updates => {}
        }
        for uri in &held {
            self.served.unsubscribe(uri).await;
        }
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
        let prompt = self
            .served
            .get_prompt(&request.name, arguments)
            .await
            .map_err(|refusal| refusal.error(rmcp::ErrorData::invalid_params))?;
        let messages = match prompt {
            ServedPrompt::AsSent(sent) => return passed_prompt(&request.name, sent),
            ServedPrompt::Messages(messages) => messages,
        };
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
        // Once per client and URI: a repeat holds nothing more.
        if lock(&self.subscribed).contains(&request.uri) {
            return Ok(());
        }
        self.served
            .subscribe(&request.uri)
            .await
            .map_err(|refusal| refusal.error(rmcp::ErrorData::invalid_params))?;
        lock(&self.subscribed).insert(request.uri);
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
            return self
                .call_asking(&request.name, arguments, retry, capabilities, context)
                .await;
        }
        let cancel = CancelSignal::new();
        let on_cancel = cancel.clone();
        let ct = context.ct.clone();
        let watch = tokio::spawn(async move {
            ct.cancelled().await;
            on_cancel.cancel();
        });
        let progress = progress_sink(&context);
        let asker = Arc::new(downstream::Downstream::new(
            context.peer.clone(),
            &context,
            *self.log_level(),
        ));
        let output = self
            .served
            .call(&request.name, arguments, cancel, progress, asker)
            .await;
        watch.abort();
        call_response(&request.name, output)
    }
}

/// The most resources one `subscriptions/listen` stream holds.
const MAX_LISTEN_RESOURCES: usize = 256;

/// One of the lists a client is told changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moved {
    Tools,
    Prompts,
    Resources,
}

/// Tells a client of each served list that moves (through `tell`, which says whether the
/// client could be told), until `stop` resolves, the set is gone, or the client cannot be told
/// any more.
async fn forward_changes<Tell, Told>(
    mut changes: tokio::sync::watch::Receiver<ServedChanges>,
    stop: impl Future<Output = ()>,
    tell: Tell,
) where
    Tell: Fn(Moved) -> Told,
    Told: Future<Output = bool>,
{
    tokio::pin!(stop);
    let mut seen = *changes.borrow_and_update();
    loop {
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            () = &mut stop => return,
        }
        let now = *changes.borrow_and_update();
        for (list, moved) in [
            (Moved::Tools, now.tools != seen.tools),
            (Moved::Prompts, now.prompts != seen.prompts),
            (Moved::Resources, now.resources != seen.resources),
        ] {
            if moved && !tell(list).await {
                return;
            }
        }
        seen = now;
    }
}

/// Where a call's progress goes when the client asked for it (a progress token): one sender
/// per call keeps the reports in order, and a full queue drops a report rather than holding
/// up the tool.
fn progress_sink(context: &RequestContext<RoleServer>) -> Option<ProgressSink> {
    let token = context.meta.get_progress_token()?;
    let (reports, mut to_send) = tokio::sync::mpsc::channel::<ProgressNotificationParam>(64);
    let peer = context.peer.clone();
    tokio::spawn(async move {
        while let Some(param) = to_send.recv().await {
            if peer.notify_progress(param).await.is_err() {
                return;
            }
        }
    });
    Some(Arc::new(move |p: ToolProgress| {
        let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
        param.total = p.total;
        param.message = p.message;
        let _ = reports.try_send(param);
    }))
}

/// The response to a served call that finished with `output` (`None`: no such tool).
fn call_response(
    name: &str,
    output: Option<PassedOutput>,
) -> Result<CallToolResponse, rmcp::ErrorData> {
    match output {
        Some(PassedOutput::Rendered(output)) => Ok(CallToolResponse::Complete(result(output))),
        Some(PassedOutput::AsSent(sent)) => Ok(CallToolResponse::Complete(passed_on(name, sent))),
        None => Err(rmcp::ErrorData::invalid_params(
            format!("no tool named {name:?}"),
            None,
        )),
    }
}

/// `values` as a completion, at most the protocol's 100 (the total says how many there were).
fn completion(mut values: Vec<String>) -> CompletionInfo {
    let total = u32::try_from(values.len()).unwrap_or(u32::MAX);
    let has_more = values.len() > CompletionInfo::MAX_VALUES;
    values.truncate(CompletionInfo::MAX_VALUES);
    // Within the cap by now, so this cannot fail; an empty completion if it ever did.
    CompletionInfo::with_pagination(values, Some(total), has_more).unwrap_or_default()
}

/// An upstream prompt's result passed on as its server sent it, within
/// [`MAX_PASSED_RESULT_BYTES`]; a larger or malformed one is an internal error naming the
/// prompt.
fn passed_prompt(name: &str, sent: Value) -> Result<GetPromptResponse, rmcp::ErrorData> {
    let too_large = !within(&sent, MAX_PASSED_RESULT_BYTES);
    let result = (!too_large)
        .then(|| serde_json::from_value::<GetPromptResult>(sent).ok())
        .flatten();
    match result {
        Some(mut result) => {
            // Complete whatever revision the server spoke, as a passed-on tool result is.
            result.result_type = Some(rmcp::model::ResultType::COMPLETE);
            Ok(GetPromptResponse::Complete(result))
        }
        None => Err(rmcp::ErrorData::internal_error(
            if too_large {
                format!(
                    "prompt {name:?}: its server's result is larger than {MAX_PASSED_RESULT_BYTES} bytes"
                )
            } else {
                format!("prompt {name:?}: its server's result is not a prompt result")
            },
            None,
        )),
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

/// The MCP declaration of a served resource template.
fn template(served: ServerResource) -> rmcp::model::ResourceTemplate {
    let mut template = rmcp::model::ResourceTemplate::new(served.uri, served.name);
    if let Some(title) = served.title {
        template = template.with_title(title);
    }
    if let Some(description) = served.description {
        template = template.with_description(description);
    }
    if let Some(mime_type) = served.mime_type {
        template = template.with_mime_type(mime_type);
    }
    template
}

/// An upstream server's result of tool `name` as it sent it, or an error result naming the
/// tool when it is larger than [`MAX_PASSED_RESULT_BYTES`] or is no `CallToolResult`.
fn passed_on(name: &str, sent: Value) -> CallToolResult {
    if !within(&sent, MAX_PASSED_RESULT_BYTES) {
        return CallToolResult::error(vec![ContentBlock::text(format!(
            "the result of tool {name:?} is larger than the {} MiB rho mcp serve passes on",
            MAX_PASSED_RESULT_BYTES / (1024 * 1024)
        ))]);
    }
    match serde_json::from_value::<CallToolResult>(sent) {
        Ok(mut result) => {
            // The call is complete whatever revision the server spoke (rho answered its input
            // requests); rmcp leaves the field out for a 2025-11-25 client.
            result.result_type = Some(rmcp::model::ResultType::COMPLETE);
            result
        }
        Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
            "the result of tool {name:?} is not a tool result: {e}"
        ))]),
    }
}

/// Whether `value` serializes to at most `cap` bytes.
fn within(value: &Value, cap: usize) -> bool {
    /// Counts bytes, failing past the cap so a huge value is not walked to its end.
    struct Counter {
        bytes: usize,
        cap: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.bytes = self.bytes.saturating_add(buf.len());
            if self.bytes > self.cap {
                return Err(std::io::Error::other("over the cap"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(&mut Counter { bytes: 0, cap }, value).is_ok()
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

    #[test]
    fn an_upstream_result_is_passed_on_as_sent() {
        let sent = serde_json::json!({
            "content": [
                {"type": "text", "text": "one"},
                {"type": "text", "text": "two"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "test://r", "mimeType": "text/plain", "text": "body"}},
                {"type": "resource_link", "uri": "test://l", "name": "l"},
            ],
            "structuredContent": {"n": 1},
            "isError": true,
            "_meta": {"example.com/k": "v"},
        });
        let passed = serde_json::to_value(passed_on("t", sent.clone())).unwrap();
        for key in ["content", "structuredContent", "isError", "_meta"] {
            assert_eq!(passed[key], sent[key], "{key}");
        }
    }

    #[test]
    fn completions_are_capped_at_the_protocols_hundred_with_their_total() {
        let few = completion(vec!["paris".into(), "park".into()]);
        assert_eq!(few.values, ["paris", "park"]);
        assert_eq!((few.total, few.has_more), (Some(2), Some(false)));
        let many = completion((0..150).map(|n| n.to_string()).collect());
        assert_eq!(many.values.len(), 100);
        assert_eq!((many.total, many.has_more), (Some(150), Some(true)));
    }

    #[test]
    fn an_upstream_prompt_is_passed_on_as_sent_or_refused_naming_it() {
        let sent = serde_json::json!({
            "description": "d",
            "messages": [
                {"role": "user", "content": {"type": "image", "data": "iVBO", "mimeType": "image/png"}},
                {"role": "user", "content": {"type": "resource", "resource": {"uri": "test://r", "text": "body"}}},
            ],
        });
        let Ok(GetPromptResponse::Complete(result)) = passed_prompt("p", sent.clone()) else {
            panic!("not passed on");
        };
        let passed = serde_json::to_value(result).unwrap();
        assert_eq!(passed["messages"], sent["messages"]);
        assert_eq!(passed["resultType"], "complete");
        let malformed = passed_prompt("p", serde_json::json!({"messages": 3})).unwrap_err();
        assert!(malformed.message.contains("prompt \"p\""), "{malformed:?}");
        let huge = "x".repeat(MAX_PASSED_RESULT_BYTES);
        let big = serde_json::json!({"messages": [{"role": "user", "content": {"type": "text", "text": huge}}]});
        let too_large = passed_prompt("p", big).unwrap_err();
        assert!(too_large.message.contains("larger than"), "{too_large:?}");
    }

    #[test]
    fn a_result_over_the_cap_or_not_a_result_is_an_error_naming_the_tool() {
        assert!(within(&Value::from("x".repeat(10)), 12));
        assert!(!within(&Value::from("x".repeat(11)), 12));
        let huge = serde_json::json!({
            "content": [{"type": "text", "text": "x".repeat(MAX_PASSED_RESULT_BYTES)}],
        });
        let refused = passed_on("big_tool", huge);
        assert_eq!(refused.is_error, Some(true));
        let text = serde_json::to_string(&refused.content).unwrap();
        assert!(
            text.contains("big_tool") && text.contains("16 MiB"),
            "{text}"
        );
        let odd = passed_on("odd_tool", serde_json::json!({"content": 3}));
        assert_eq!(odd.is_error, Some(true));
        assert!(
            serde_json::to_string(&odd.content)
                .unwrap()
                .contains("odd_tool")
        );
    }
}
