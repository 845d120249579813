//! A connection's tools: listed at connect (allow/deny applied, pages guarded), and reconciled
//! after `notifications/tools/list_changed` with the fixed set the session started with.

use std::sync::atomic::Ordering;

use serde_json::Value;

use crate::McpError;
use crate::connection::{Connection, connect_error};
use crate::paging::all_pages;

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

impl Connection {
    /// Tools the server added after the connection was made (they need a restart).
    pub fn added_tools(&self) -> &[ServerTool] {
        &self.added
    }

    /// Re-lists the tools and reconciles them with the fixed set of this connection
    /// (`docs/mcp.md`, "Tool lists that change").
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

    /// Lists every tool, following pages with a guard against repeated cursors. Duplicate
    /// names keep the first; `allow`/`deny` apply.
    pub async fn list_tools(&self) -> Result<Vec<ServerTool>, McpError> {
        self.client.tools_changed.store(false, Ordering::Relaxed);
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
        let listed = listed.map_err(|message| connect_error(&self.spec, message))?;
        let mut tools: Vec<ServerTool> = Vec::new();
        for tool in listed {
            let name = tool.name.to_string();
            if tools.iter().any(|t| t.name == name) {
                tracing::warn!(target: "rho::mcp", server, tool = name.as_str(), "duplicate tool name; the first is kept");
                continue;
            }
            if !self.spec.tools.allows(&name) {
                continue;
            }
            let definition = serde_json::to_value(&tool).unwrap_or(Value::Null);
            tools.push(ServerTool { name, definition });
        }
        Ok(tools)
    }
}
