//! One MCP server tool mounted as a [`Tool`]: calls go through the server's shared
//! [`rho_mcp::Connection`] (started again first when its session was lost), the user's abort
//! becomes `notifications/cancelled`, progress is forwarded, and the result is rendered as the
//! model reads it (capped at the server's `max_output_bytes`), or, for `rho mcp serve`, passed
//! on as the server sent it ([`Tool::call_as_sent`]). A tool that runs only as an MCP task is
//! refused here, the one place every call of an MCP tool passes.

use std::sync::Arc;
use std::time::Instant;

use rho_component::{
    PassedFuture, PassedOutput, RiskLevel, Tool, ToolContext, ToolFuture, ToolImage, ToolOrigin,
    ToolOutput, ToolProgress, ToolSpec,
};
use rho_mcp::{McpError, ServerTool};
use serde_json::Value;

use super::server_link::ServerLink;

/// A tool of a connected server.
pub(crate) struct McpTool {
    spec: ToolSpec,
    raw_name: String,
    /// The server declared it runs only as an MCP task: every call is refused here, before
    /// the server is started or sent anything (`docs/mcp.md`, "Tools").
    needs_tasks: bool,
    link: Arc<ServerLink>,
    max_output_bytes: u64,
}

impl McpTool {
    /// Mounts `tool` of the server behind `link` under `exported` name.
    pub(crate) fn new(
        exported: String,
        tool: &ServerTool,
        server: &str,
        plugin: Option<&str>,
        link: Arc<ServerLink>,
        max_output_bytes: u64,
    ) -> Self {
        let input_schema = tool
            .definition
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "object"}));
        let output_schema = tool.definition.get("outputSchema").cloned();
        Self {
            spec: ToolSpec {
                name: exported,
                title: tool.title().map(str::to_owned),
                description: rho_mcp::exported_description(server, tool),
                input_schema,
                output_schema,
                // rho cannot see what a server does, and annotations are hints from a server
                // rho does not control: they never lower the level (`docs/mcp.md`, "Tools").
                risk: RiskLevel::Destructive,
                origin: ToolOrigin::Mcp {
                    server: server.to_owned(),
                    plugin: plugin.map(str::to_owned),
                    tool: tool.name.clone(),
                },
            },
            raw_name: tool.name.clone(),
            needs_tasks: tool.needs_tasks,
            link,
            max_output_bytes,
        }
    }
}

impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            match self.call_result(arguments, context).await {
                Ok(value) => {
                    let rendered = rho_mcp::render_result(&value, self.max_output_bytes);
                    ToolOutput {
                        text: rendered.text,
                        is_error: rendered.is_error,
                        structured: rendered.structured,
                        image: rendered.image.map(|i| ToolImage {
                            mime_type: i.mime_type,
                            data: i.data,
                        }),
                        truncated: rendered.truncated,
                    }
                }
                Err(message) => ToolOutput::error(message),
            }
        })
    }

    fn call_as_sent<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> PassedFuture<'a> {
        Box::pin(async move {
            match self.call_result(arguments, context).await {
                Ok(value) => PassedOutput::AsSent(value),
                Err(message) => PassedOutput::Rendered(ToolOutput::error(message)),
            }
        })
    }
}

impl McpTool {
    /// One call as the server answered it (its `CallToolResult` as JSON), or why there is no
    /// answer: the one path both [`Tool::call`] (rendered for the model) and
    /// [`Tool::call_as_sent`] (passed on by `rho mcp serve`) take.
    async fn call_result(&self, arguments: Value, context: &ToolContext) -> Result<Value, String> {
        if self.needs_tasks {
            let refused = McpError::NeedsTasks {
                server: self.link.id().to_owned(),
                tool: self.raw_name.clone(),
            };
            return Err(refused.to_string());
        }
        let arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            _ => return Err("the arguments must be a JSON object".to_owned()),
        };
        // Starting a lost server again (backoffs included) fits in the call's budget.
        let deadline = Instant::now() + self.link.call_budget();
        loop {
            let connection = self.link.ready(&context.cancel, deadline).await?;
            match self
                .call_once(&connection, arguments.clone(), context)
                .await
            {
                // The request never reached the server: start it again and send it then.
                Err(McpError::Lost {
                    delivered: false, ..
                }) => connection.mark_broken(),
                // It may have acted on it: not sent twice. The next call starts it again.
                Err(error @ McpError::Lost { .. }) => {
                    connection.mark_broken();
                    return Err(format!(
                        "{error}; the call is not sent again, since the server may have acted on it (the next call starts the server again)"
                    ));
                }
                other => return other.map_err(|e| e.to_string()),
            }
        }
    }
}

impl McpTool {
    /// One call on `connection`: progress forwarded while it runs, the user's abort passed on.
    async fn call_once(
        &self,
        connection: &rho_mcp::Connection,
        arguments: Option<serde_json::Map<String, Value>>,
        context: &ToolContext,
    ) -> Result<Value, McpError> {
        let token = rho_mcp::Cancel::new();
        let (progress_tx, mut progress_rx) = tokio::sync::mpsc::channel(64);
        let progress_tx = context.progress.as_ref().map(|_| progress_tx);
        let call = connection.call_tool_with(
            &self.raw_name,
            arguments,
            progress_tx,
            token.clone(),
            context.asker.clone(),
        );
        tokio::pin!(call);
        let pump = async {
            while let Some(p) = progress_rx.recv().await {
                let p: rho_mcp::Progress = p;
                context.report(ToolProgress {
                    progress: p.progress,
                    total: p.total,
                    message: p.message,
                });
            }
        };
        tokio::pin!(pump);
        let mut pumping = context.progress.is_some();
        loop {
            tokio::select! {
                result = &mut call => return result,
                () = &mut pump, if pumping => pumping = false,
                () = context.cancel.cancelled(), if !token.is_cancelled() => {
                    // The call itself sends `notifications/cancelled` and returns promptly.
                    token.cancel();
                }
            }
        }
    }
}
