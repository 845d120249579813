//! One tool call outside a session (`rho mcp call`): the server started as a probe starts it
//! (the same start-up, client declarations, exported names and tool cache writes as
//! [`Registry::mount`], lazy servers included), the tool found by its exported name or its
//! own, called through the same `McpTool` a session calls, then the server closed.

use rho_component::{ToolContext, ToolOutput};
use serde_json::Value;

use super::Registry;
use super::mount::Starting;
use super::server_state::ServerStatus;
use super::servers::{Unstartable, startable};
use super::tool_set::{MountOptions, ToolSet};

/// Why a direct call was not made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirectCallError {
    /// It is not there, or not in a state to start.
    #[error(transparent)]
    Unstartable(#[from] Unstartable),
    /// Its start failed.
    #[error("{message}")]
    StartFailed {
        /// The server identity.
        server: String,
        /// What failed, naming the server (and its stderr tail, for a stdio server).
        message: String,
    },
    /// The call's cancellation fired while the server was starting (the start is dropped,
    /// which stops it).
    #[error("stopped while starting MCP server {server:?}")]
    Cancelled {
        /// The server identity.
        server: String,
    },
    /// It offers no tool of that name.
    #[error("server {server:?} has no tool {tool:?} (see `rho mcp show {server} --connect`)")]
    NoTool {
        /// The server identity.
        server: String,
        /// The name asked for.
        tool: String,
    },
}

/// A direct call that was made.
#[derive(Debug)]
pub struct DirectCall {
    /// The server's own name for the tool.
    pub tool: String,
    /// What a session's model would read of the result (capped at the server's
    /// `max_output_bytes`).
    pub output: ToolOutput,
}

impl Registry {
    /// Starts server `server` (lazy or not) as [`Registry::probe`] does, with `options`
    /// (`keep_alive` is ignored: the server closes right after), and calls its tool `tool`
    /// (the exported name a session gives it, or the server's own name) with `arguments`
    /// in `context` (its cancellation, which also ends the start, and its progress). A start
    /// writes the tool cache as any start does, and waits for the write.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        context: &ToolContext,
        options: MountOptions,
    ) -> Result<DirectCall, DirectCallError> {
        startable(&self.servers, server)?;
        let options = MountOptions {
            keep_alive: None,
            ..options
        };
        let mut set = ToolSet::empty();
        let mut starts =
            self.start_servers(&mut set, &options, Starting::Probe { only: Some(server) });
        let writes = starts.writes();
        let cancelled = tokio::select! {
            () = starts.join(&mut set, None) => false,
            () = context.cancel.cancelled() => true,
        };
        if cancelled {
            drop(starts);
            set.close().await;
            writes.finish().await;
            return Err(DirectCallError::Cancelled {
                server: server.to_owned(),
            });
        }
        starts.mount(&mut set, None);
        let outcome = call_in(&set, server, tool, arguments, context).await;
        set.close().await;
        writes.finish().await;
        outcome
    }
}

/// The call of `tool` of `server` in `set`, which started it (or failed to).
async fn call_in(
    set: &ToolSet,
    server: &str,
    tool: &str,
    arguments: Value,
    context: &ToolContext,
) -> Result<DirectCall, DirectCallError> {
    let Some(mounted) = set.servers.iter().find(|s| s.id == server) else {
        return Err(Unstartable::NoServer {
            server: server.to_owned(),
        }
        .into());
    };
    match mounted.status() {
        status if status.is_running() => {}
        ServerStatus::Failed(message) => {
            return Err(DirectCallError::StartFailed {
                server: server.to_owned(),
                message,
            });
        }
        other => {
            return Err(DirectCallError::StartFailed {
                server: server.to_owned(),
                message: format!("MCP server `{server}` did not start ({})", other.as_str()),
            });
        }
    }
    let tools = mounted.tools();
    let found = tools
        .iter()
        .find(|t| t.name == tool)
        .or_else(|| tools.iter().find(|t| t.tool == tool))
        .and_then(|t| Some((t.tool.clone(), set.get(&t.name)?)));
    let Some((own, mounted_tool)) = found else {
        return Err(DirectCallError::NoTool {
            server: server.to_owned(),
            tool: tool.to_owned(),
        });
    };
    let output = mounted_tool.call(arguments, context).await;
    Ok(DirectCall { tool: own, output })
}
