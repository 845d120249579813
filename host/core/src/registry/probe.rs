//! Probing MCP servers (`rho mcp list --connect`, `rho mcp show <id> --connect`): every
//! startable server, or one, started the way a session starts it (the same start-up, client
//! declarations, naming and tool cache as [`Registry::mount`], through the same
//! `ServerStarts`), what it offers read, then closed again. Lazy servers start too: the user
//! asked to connect. A probe is a successful start like any other, so what each server offers
//! is written to the tool cache, where a later session finds a lazy server `known`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rho_component::{Diagnostic, ServerPrompt, ServerResource, Transport};
use tokio::sync::{RwLock, mpsc};

use super::Registry;
use super::mount::Starting;
use super::server_link::ServerLink;
use super::server_state::{MountedServer, lock};
use super::tool_set::{MountOptions, ToolSet};

/// How long the one ping of a legacy Streamable HTTP session may take.
const PING_BUDGET: Duration = Duration::from_secs(5);

/// A server's start that finished during a probe (or a mount), as it finished.
#[derive(Debug, Clone, PartialEq)]
pub struct StartReport {
    /// The server identity.
    pub server: String,
    /// How many tools it listed, or why it did not start.
    pub outcome: Result<usize, StartFailure>,
    /// From its start to its answer (tools, prompts and resources listed).
    pub elapsed: Duration,
}

/// Why a start a [`StartReport`] tells of failed. Its message names the server.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StartFailure {
    /// The server could not be started, connected or listed.
    #[error(transparent)]
    Mcp(#[from] rho_mcp::McpError),
    /// Its start-up task ended unexpectedly (an internal error): only its own server failed.
    #[error("server {server}: start-up failed unexpectedly (an internal error)")]
    Internal {
        /// The server identity.
        server: String,
    },
}

/// What a probe found.
#[derive(Debug)]
pub struct Probe {
    /// Every server entry, in registry order: started or failed when the probe started it,
    /// else in the state its configuration gives it.
    pub servers: Vec<ProbedServer>,
    /// Problems found while starting (`mcp-server-failed`, `mcp-tools-capped`).
    pub diagnostics: Vec<Diagnostic>,
}

/// One server after a probe. Its state, tools (with the exported names a session gives them),
/// tools added after it listed them, restarts and handshake facts are in `server`; the rest
/// is what only a probe reports.
#[derive(Debug)]
pub struct ProbedServer {
    /// The server as a session sees it.
    pub server: MountedServer,
    /// Its tools in its listing order, with what a person reads of them.
    pub tools: Vec<ProbedTool>,
    /// Its prompts.
    pub prompts: Vec<ServerPrompt>,
    /// Its resources, then its resource templates.
    pub resources: Vec<ServerResource>,
    /// Legacy Streamable HTTP sessions only: the one ping's result, `ok` or the failure.
    pub ping: Option<String>,
    /// How many tools it offered past `rho_mcp::MAX_SERVER_TOOLS` (not mounted).
    pub tools_left_out: usize,
}

/// One tool of a probed server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbedTool {
    /// The exported name the model calls.
    pub name: String,
    /// The server's own name for it.
    pub tool: String,
    /// `title`, if declared.
    pub title: Option<String>,
    /// `description`, if declared.
    pub description: Option<String>,
    /// It runs only as an MCP task, which rho does not support yet: a call is refused.
    pub needs_tasks: bool,
}

impl Registry {
    /// Starts every startable server (only server `only` when given), lazy ones included, in
    /// parallel as a session's mount does, telling `watch` of each start as it finishes;
    /// reads what each offers, pings legacy Streamable HTTP sessions once, and closes them
    /// all. Servers are told what a session without a person or a model declares (the
    /// workspace root; no forms, no sampling), and an OAuth server without a usable token
    /// fails instead of opening a browser. With nothing to start, nothing runs.
    pub async fn probe(
        &self,
        only: Option<&str>,
        watch: Option<mpsc::Sender<StartReport>>,
    ) -> Probe {
        let options = MountOptions {
            keep_alive: None,
            ..MountOptions::default()
        };
        let mut set = ToolSet::empty();
        let mut starts = self.start_servers(&mut set, &options, Starting::Probe { only });
        let writes = starts.writes();
        starts.join(&mut set, watch.as_ref()).await;
        // Every start is reported: the watcher's channel ends here.
        drop(watch);
        starts.mount(&mut set, None);
        let links: HashMap<&str, &Arc<ServerLink>> =
            set.links.iter().map(|link| (link.id(), link)).collect();
        let mut servers = Vec::with_capacity(set.servers.len());
        let mut pings = tokio::task::JoinSet::new();
        for (index, server) in set.servers.iter().enumerate() {
            let mut probed = ProbedServer {
                server: server.clone(),
                tools: Vec::new(),
                prompts: Vec::new(),
                resources: Vec::new(),
                ping: None,
                tools_left_out: 0,
            };
            if let Some(link) = links.get(server.id.as_str())
                && read(&mut probed, link).await
            {
                let connection = link.connection().clone();
                pings.spawn(async move { (index, ping(&connection).await) });
            }
            servers.push(probed);
        }
        while let Some(joined) = pings.join_next().await {
            if let Ok((index, answer)) = joined {
                servers[index].ping = answer;
            }
        }
        let diagnostics = std::mem::take(&mut set.diagnostics);
        set.close().await;
        writes.finish().await;
        Probe {
            servers,
            diagnostics,
        }
    }
}

/// Fills `probed` from the connection behind `link`, if its server started: what it offers,
/// and the tools it added after listing them (recorded where inventories read them; a
/// session would mount them at its next turn boundary, a probe only names them). Returns
/// whether it is a legacy Streamable HTTP session, which a probe pings once.
async fn read(probed: &mut ProbedServer, link: &ServerLink) -> bool {
    let guard = link.connection().read().await;
    let Some(connection) = guard.as_ref() else {
        return false;
    };
    let offered: HashMap<&str, &rho_mcp::ServerTool> = connection
        .tools
        .iter()
        .map(|tool| (tool.name.as_str(), tool))
        .collect();
    {
        let mut live = lock(link.live());
        live.added_tools = connection
            .added_tools()
            .iter()
            .map(|t| t.name.clone())
            .collect();
        probed.tools = live
            .tools
            .iter()
            .filter_map(|mounted| {
                let tool = offered.get(mounted.tool.as_str())?;
                Some(ProbedTool {
                    name: mounted.name.clone(),
                    tool: mounted.tool.clone(),
                    title: tool.title().map(str::to_owned),
                    description: tool.description().map(str::to_owned),
                    needs_tasks: tool.needs_tasks,
                })
            })
            .collect();
    }
    probed.prompts = connection.prompts();
    probed.resources = connection.resources();
    probed.tools_left_out = connection.tools_left_out;
    probed.server.transport == Some(Transport::StreamableHttp) && connection.is_legacy()
}

/// Pings the session behind `connection` once: `ok` or the failure.
async fn ping(connection: &RwLock<Option<rho_mcp::Connection>>) -> Option<String> {
    let guard = connection.read().await;
    let result = guard.as_ref()?.ping(PING_BUDGET).await;
    Some(match result {
        Ok(()) => "ok".to_owned(),
        Err(e) => e.to_string(),
    })
}
