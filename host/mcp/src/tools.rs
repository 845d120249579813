//! A connection's tools: listed at connect (allow/deny applied, pages guarded, at most
//! [`MAX_SERVER_TOOLS`] kept), and reconciled after `notifications/tools/list_changed` with the
//! fixed set the session started with.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use serde_json::Value;

use crate::McpError;
use crate::connection::{Connection, connect_error};
use crate::paging::{Kept, all_pages, keep_first};
use crate::task_support::TaskFlags;

/// At most this many tools of one server are exported (counted after `allow`/`deny` and
/// duplicates, in the server's order); the rest are left out with a warning that says how
/// many. A bound on what one server costs (memory, start-up time, the model's tool list):
/// model APIs take a few hundred tools per request at most (OpenAI's takes 128), so a server
/// offering more is narrowed with `[tools] allow` anyway.
pub const MAX_SERVER_TOOLS: usize = 1_000;

/// One tool as the server declared it (after `allow`/`deny`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ServerTool {
    /// The server's own name (sent back unchanged on calls).
    pub name: String,
    /// The declaration as JSON (`title`, `description`, `inputSchema`, `outputSchema`,
    /// `annotations`, ...).
    pub definition: Value,
    /// The server declared `execution.taskSupport: "required"`: the tool runs only as an MCP
    /// task, which rho does not support yet, so it is listed but never called
    /// ([`McpError::NeedsTasks`]). Absent from a tool cache written before rho knew it: false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_tasks: bool,
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

/// What a re-listing after `notifications/tools/list_changed` changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolChanges {
    /// Still offered with a new definition (used from the next turn on).
    pub revised: Vec<String>,
    /// No longer offered: kept under their exported names, and calls fail with a reason.
    pub withdrawn: Vec<String>,
    /// Newly offered: a session exports them under new names at the turn boundary that found
    /// them (`ToolSet::reconcile` in rho-core), within [`MAX_SERVER_TOOLS`] for the server.
    pub added: Vec<String>,
}

impl ToolChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.revised.is_empty() && self.withdrawn.is_empty() && self.added.is_empty()
    }
}

impl Connection {
    /// Tools the server added after the connection was made, not yet taken into the fixed set
    /// ([`Connection::accept_added`]).
    pub fn added_tools(&self) -> &[ServerTool] {
        &self.added
    }

    /// The tools the server offers now, as far as this connection knows: its set without the
    /// withdrawn ones, then the added ones not taken in yet (what a tool cache remembers).
    pub fn live_tools(&self) -> Vec<ServerTool> {
        self.tools
            .iter()
            .filter(|t| !self.withdrawn.contains(&t.name))
            .chain(&self.added)
            .cloned()
            .collect()
    }

    /// Takes the added tools into this connection's fixed set (a session mounts them at a turn
    /// boundary) and returns them, in the server's order.
    pub fn accept_added(&mut self) -> Vec<ServerTool> {
        let added = std::mem::take(&mut self.added);
        self.tools.extend(added.iter().cloned());
        added
    }

    /// Makes `mounted` this connection's fixed set: what a session mounted for the server
    /// before it started (its tools as the tool cache remembered them). When the server now
    /// lists something else, [`Connection::tools_changed`] is set, so the session reconciles
    /// at its next turn boundary as after `tools/list_changed`: the live list wins.
    pub fn adopt_mounted(&mut self, mounted: Vec<ServerTool>) {
        if mounted != self.tools {
            self.client.tools_changed.store(true, Ordering::Relaxed);
        }
        // A mounted tool the server no longer lists fails clearly at once, not only after the
        // next turn boundary.
        let live: std::collections::HashSet<&str> =
            self.tools.iter().map(|t| t.name.as_str()).collect();
        let gone: Vec<String> = mounted
            .iter()
            .filter(|t| !live.contains(t.name.as_str()))
            .map(|t| t.name.clone())
            .collect();
        self.withdrawn.extend(gone);
        self.tools = mounted;
    }

    /// Re-lists the tools and reconciles them with the fixed set of this connection
    /// (`docs/mcp.md`, "Tool lists that change"). Linear in what the server lists; at most
    /// [`MAX_SERVER_TOOLS`] added tools are recorded.
    pub async fn reconcile_tools(&mut self) -> Result<ToolChanges, McpError> {
        // Cleared before listing: a change announced while the listing runs is seen next time.
        self.client.tools_changed.store(false, Ordering::Relaxed);
        let listed = match self.listed_tools().await {
            Ok(listed) => listed,
            Err(error) => {
                // Tools rho knew before the start stay to be checked at the next boundary.
                if self.unchecked {
                    self.client.tools_changed.store(true, Ordering::Relaxed);
                }
                return Err(error);
            }
        };
        if self.unchecked {
            // What a known start took from the tool cache is listed now too (failures leave a
            // list empty, as at a first start).
            self.discover_offers().await;
            self.unchecked = false;
        }
        let fixed: HashMap<String, usize> = self
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        let mut fresh: Vec<Option<(Value, bool)>> = vec![None; self.tools.len()];
        let spec = &self.spec;
        let flags = &self.client.task_flags;
        // The fixed set and the added tools together stay within the cap.
        let room = MAX_SERVER_TOOLS.saturating_sub(self.tools.len());
        let added = keep_first(
            listed,
            room,
            |tool| {
                let name = tool.name.as_ref();
                spec.tools.allows(name).then(|| name.to_owned())
            },
            |tool| match fixed.get(tool.name.as_ref()) {
                Some(&i) => {
                    fresh[i] = Some((definition(&tool), flags.required(tool.name.as_ref())));
                    None
                }
                None => Some(server_tool(&tool, flags)),
            },
        )
        .await;
        let mut changes = ToolChanges::default();
        for (tool, fresh) in self.tools.iter_mut().zip(fresh) {
            match fresh {
                Some((definition, needs_tasks)) => {
                    if self.withdrawn.remove(&tool.name)
                        || definition != tool.definition
                        || needs_tasks != tool.needs_tasks
                    {
                        changes.revised.push(tool.name.clone());
                    }
                    tool.definition = definition;
                    tool.needs_tasks = needs_tasks;
                }
                None => {
                    if self.withdrawn.insert(tool.name.clone()) {
                        changes.withdrawn.push(tool.name.clone());
                    }
                }
            }
        }
        self.added = added.items;
        changes.added = self.added.iter().map(|t| t.name.clone()).collect();
        if !changes.is_empty() {
            tracing::info!(target: "rho::mcp", server = self.spec.id.as_str(), revised = changes.revised.len(), withdrawn = changes.withdrawn.len(), added = changes.added.len(), "tool list reconciled");
        }
        Ok(changes)
    }

    /// Lists the tools to export: every page (guarded against repeated cursors), duplicate
    /// names keep the first, `allow`/`deny` apply, and at most [`MAX_SERVER_TOOLS`] are kept
    /// (`left_out` counts the rest, with a warning naming the server).
    pub(crate) async fn list_tools(&self) -> Result<Kept<ServerTool>, McpError> {
        let listed = self.listed_tools().await?;
        let spec = &self.spec;
        let flags = &self.client.task_flags;
        let kept = keep_first(
            listed,
            MAX_SERVER_TOOLS,
            |tool| {
                let name = tool.name.as_ref();
                spec.tools.allows(name).then(|| name.to_owned())
            },
            |tool| Some(server_tool(&tool, flags)),
        )
        .await;
        let server = spec.id.as_str();
        if kept.duplicates > 0 {
            tracing::warn!(target: "rho::mcp", server, duplicates = kept.duplicates, "duplicate tool names; the first of each is kept");
        }
        if kept.left_out > 0 {
            tracing::warn!(target: "rho::mcp", server, kept = kept.items.len(), left_out = kept.left_out, "{}", tools_left_out_message(server, kept.left_out));
        }
        Ok(kept)
    }

    /// Whether the server lists `tool` now (`None` when the listing failed). The connection's
    /// tools are left as they are: reconciling is the turn boundary's.
    pub(crate) async fn lists(&self, tool: &str) -> Option<bool> {
        let listed = self.listed_tools().await.ok()?;
        Some(listed.iter().any(|t| t.name == tool))
    }

    /// Every tool the server lists, as it listed them (pages followed, an OAuth server's
    /// refused token renewed once).
    async fn listed_tools(&self) -> Result<Vec<rmcp::model::Tool>, McpError> {
        let server = self.spec.id.as_str();
        // The challenge of an OAuth server that refused the listing's token.
        let refused = std::sync::Mutex::new(None::<String>);
        let list = || {
            all_pages(
                server,
                "tools/list",
                self.spec.call_timeout,
                |params| async {
                    let page = self.service.list_tools(params).await.inspect_err(|e| {
                        if let (Some(challenge), Ok(mut slot)) =
                            (e.auth_challenge(), refused.lock())
                        {
                            *slot = Some(challenge.to_owned());
                        }
                    })?;
                    Ok((page.tools, page.next_cursor))
                },
            )
        };
        let mut listed = list().await;
        let challenge = refused.lock().ok().and_then(|mut slot| slot.take());
        if listed.is_err()
            && let Some(challenge) = challenge
            && self.authorizer.is_some()
        {
            self.reauthorize(&challenge).await?;
            listed = list().await;
        }
        listed.map_err(|message| connect_error(&self.spec, message))
    }
}

/// What a diagnostic says of a server whose tools beyond [`MAX_SERVER_TOOLS`] were left out.
pub fn tools_left_out_message(server: &str, left_out: usize) -> String {
    format!(
        "MCP server `{server}` offers more tools than the {MAX_SERVER_TOOLS} rho exports from one server: {left_out} are left out (narrow them with `[tools] allow`)"
    )
}

fn definition(tool: &rmcp::model::Tool) -> Value {
    serde_json::to_value(tool).unwrap_or(Value::Null)
}

fn server_tool(tool: &rmcp::model::Tool, flags: &TaskFlags) -> ServerTool {
    ServerTool {
        name: tool.name.to_string(),
        definition: definition(tool),
        needs_tasks: flags.required(tool.name.as_ref()),
    }
}
