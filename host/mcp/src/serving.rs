//! rho as an MCP server (`rho mcp serve`, `docs/mcp.md`, "rho as an MCP server"): an rmcp
//! server handler over a [`Served`] set of tools, on stdin/stdout. The set is rho's own types;
//! this module turns its [`ToolSpec`]s into MCP tool definitions (rho's exported names, the risk
//! level as annotations) and its [`ToolOutput`]s into call results, passes a client's progress
//! token and cancellation through to the call, and speaks both revisions rho speaks as a client
//! (2026-07-28 through `server/discover`, 2025-11-25 through `initialize`: rmcp answers each
//! in the client's era).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rho_component::{CancelSignal, ProgressSink, RiskLevel, ToolOutput, ToolProgress, ToolSpec};
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer, ServiceExt};
use serde_json::Value;

/// The future of one served call: `None` when the set has no tool of that name.
pub type ServedCall<'a> = Pin<Box<dyn Future<Output = Option<ToolOutput>> + Send + 'a>>;

/// The future of the served tools' list.
pub type ServedList<'a> = Pin<Box<dyn Future<Output = Vec<ToolSpec>> + Send + 'a>>;

/// What rho serves: tools under their exported names.
pub trait Served: Send + Sync + 'static {
    /// The tools, in the order a client lists them.
    fn tools(&self) -> ServedList<'_>;

    /// Calls tool `name`: `cancel` fires when the client cancels (or goes away), `progress`
    /// receives the tool's progress when the client asked for it.
    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
        cancel: CancelSignal,
        progress: Option<ProgressSink>,
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
    let handler = Gateway { served, info };
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

/// How long a stop waits for the service's task to end.
const SERVICE_STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The rmcp handler: every request is answered from the [`Served`] set.
struct Gateway {
    served: Arc<dyn Served>,
    info: ServeInfo,
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder().enable_tools().build();
        let mut result = InitializeResult::new(capabilities).with_server_info(Implementation::new(
            self.info.name.clone(),
            self.info.version.clone(),
        ));
        if let Some(instructions) = &self.info.instructions {
            result = result.with_instructions(instructions.clone());
        }
        result
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, rmcp::ErrorData> {
        let tools = self.served.tools().await.iter().map(definition).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        let cancel = CancelSignal::new();
        let on_cancel = cancel.clone();
        let ct = context.ct.clone();
        let watch = tokio::spawn(async move {
            ct.cancelled().await;
            on_cancel.cancel();
        });
        let progress = context.meta.get_progress_token().map(|token| {
            let peer = context.peer.clone();
            let sink: ProgressSink = Arc::new(move |p: ToolProgress| {
                let peer = peer.clone();
                let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
                param.total = p.total;
                param.message = p.message;
                tokio::spawn(async move {
                    let _ = peer.notify_progress(param).await;
                });
            });
            sink
        });
        let arguments = request
            .arguments
            .map_or(Value::Object(JsonObject::new()), Value::Object);
        let output = self
            .served
            .call(&request.name, arguments, cancel, progress)
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
