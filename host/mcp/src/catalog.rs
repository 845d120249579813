//! The prompts and resources a server offers, listed at connect and held for the session so
//! matching a slash command or an `@` costs no round-trip, and re-listed by the connection
//! itself when the server sends `notifications/prompts/list_changed` or
//! `notifications/resources/list_changed`. Each list keeps the first of each name (URI) and at
//! most [`MAX_SERVER_PROMPTS`] prompts and [`MAX_SERVER_RESOURCES`] resources and templates;
//! what is left out is counted in a warning.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rho_component::{PromptArgument, ServerPrompt, ServerResource};
use rmcp::RoleClient;
use rmcp::service::Peer;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::paging::{Kept, all_pages, keep_first};

/// At most this many prompts of one server are offered (as slash commands).
pub const MAX_SERVER_PROMPTS: usize = 1_000;

/// At most this many resources and resource templates (together, resources first) of one
/// server are offered (as `@` attachments).
pub const MAX_SERVER_RESOURCES: usize = 10_000;

/// Which list changed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Listing {
    Prompts,
    Resources,
}

/// The snapshots of one connection, and what re-listing needs.
#[derive(Clone)]
pub(crate) struct Catalog {
    server: String,
    /// Each re-listing (every page) gets the call budget.
    budget: Duration,
    prompts: Arc<Mutex<Vec<ServerPrompt>>>,
    resources: Arc<Mutex<Vec<ServerResource>>>,
    /// One re-listing at a time per connection, so a burst of notifications cannot fan out.
    relisting: Arc<tokio::sync::Mutex<()>>,
    /// Cancelled when the connection closes or is dropped: re-listings in progress stop.
    closed: CancellationToken,
}

impl Catalog {
    pub(crate) fn new(server: &str, budget: Duration) -> Self {
        Self {
            server: server.to_owned(),
            budget,
            prompts: Arc::default(),
            resources: Arc::default(),
            relisting: Arc::default(),
            closed: CancellationToken::new(),
        }
    }

    /// The token that stops re-listings (the connection cancels it when it goes away).
    pub(crate) fn closed(&self) -> &CancellationToken {
        &self.closed
    }

    pub(crate) fn prompts(&self) -> Vec<ServerPrompt> {
        self.prompts.lock().map(|p| p.clone()).unwrap_or_default()
    }

    pub(crate) fn resources(&self) -> Vec<ServerResource> {
        self.resources.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Offers `prompts` and `resources` (what a server offered at its last start) until a
    /// listing replaces them.
    pub(crate) fn adopt(&self, prompts: &[ServerPrompt], resources: &[ServerResource]) {
        if let Ok(mut snapshot) = self.prompts.lock() {
            *snapshot = prompts.to_vec();
        }
        if let Ok(mut snapshot) = self.resources.lock() {
            *snapshot = resources.to_vec();
        }
    }

    /// Lists `which` now and replaces its snapshot; a failure logs a warning and leaves the
    /// list empty (it never fails the connection).
    pub(crate) async fn refresh(&self, peer: &Peer<RoleClient>, which: Listing) {
        match which {
            Listing::Prompts => {
                let listed = list_prompts(peer, &self.server, self.budget).await;
                store(&self.prompts, listed, &self.server, "prompts");
            }
            Listing::Resources => {
                let listed = list_resources(peer, &self.server, self.budget).await;
                store(&self.resources, listed, &self.server, "resources");
            }
        }
    }

    /// Re-lists `which` in the background (from a notification handler, which must not wait
    /// on the server it is handling a message from).
    pub(crate) fn relist(&self, peer: Peer<RoleClient>, which: Listing) {
        let catalog = self.clone();
        tokio::spawn(async move {
            let closed = catalog.closed.clone();
            tokio::select! {
                () = closed.cancelled() => {}
                () = async {
                    let _one_at_a_time = catalog.relisting.lock().await;
                    catalog.refresh(&peer, which).await;
                } => {}
            }
        });
    }
}

fn store<T>(snapshot: &Mutex<Vec<T>>, listed: Result<Vec<T>, String>, server: &str, what: &str) {
    let items = listed.unwrap_or_else(|why| {
        tracing::warn!(target: "rho::mcp", server, "listing {what} failed, none offered: {why}");
        Vec::new()
    });
    if let Ok(mut snapshot) = snapshot.lock() {
        *snapshot = items;
    }
}

async fn list_prompts(
    peer: &Peer<RoleClient>,
    server: &str,
    budget: Duration,
) -> Result<Vec<ServerPrompt>, String> {
    let listed = all_pages(server, "prompts/list", budget, |params| async move {
        let page = peer.list_prompts(params).await?;
        Ok((page.prompts, page.next_cursor))
    })
    .await?;
    let kept = keep_first(
        listed,
        MAX_SERVER_PROMPTS,
        |p| Some(p.name.clone()),
        |p| prompt(&serde_json::to_value(p).ok()?),
    )
    .await;
    Ok(report(kept, server, "prompts", MAX_SERVER_PROMPTS))
}

/// Resources, then templates (`template: true`).
async fn list_resources(
    peer: &Peer<RoleClient>,
    server: &str,
    budget: Duration,
) -> Result<Vec<ServerResource>, String> {
    let resources = all_pages(server, "resources/list", budget, |params| async move {
        let page = peer.list_resources(params).await?;
        Ok((page.resources, page.next_cursor))
    })
    .await?;
    let templates = all_pages(
        server,
        "resources/templates/list",
        budget,
        |params| async move {
            let page = peer.list_resource_templates(params).await?;
            Ok((page.resource_templates, page.next_cursor))
        },
    )
    .await?;
    let mut kept = keep_first(
        resources,
        MAX_SERVER_RESOURCES,
        |r| Some(r.uri.clone()),
        |r| resource(&serde_json::to_value(r).ok()?, false),
    )
    .await;
    let room = MAX_SERVER_RESOURCES.saturating_sub(kept.items.len());
    let templates = keep_first(
        templates,
        room,
        |r| Some(r.uri_template.clone()),
        |r| resource(&serde_json::to_value(r).ok()?, true),
    )
    .await;
    kept.items.extend(templates.items);
    kept.left_out += templates.left_out;
    kept.duplicates += templates.duplicates;
    Ok(report(kept, server, "resources", MAX_SERVER_RESOURCES))
}

/// The items kept, after a warning for what was left out or repeated.
fn report<T>(kept: Kept<T>, server: &str, what: &str, cap: usize) -> Vec<T> {
    if kept.duplicates > 0 {
        tracing::warn!(target: "rho::mcp", server, duplicates = kept.duplicates, "duplicate {what}; the first of each is kept");
    }
    if kept.left_out > 0 {
        tracing::warn!(target: "rho::mcp", server, left_out = kept.left_out, "MCP server `{server}` offers more {what} than the {cap} rho keeps from one server: {} are not offered", kept.left_out);
    }
    kept.items
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A listed prompt (as JSON) as rho describes it.
pub(crate) fn prompt(value: &Value) -> Option<ServerPrompt> {
    let arguments = value
        .get("arguments")
        .and_then(Value::as_array)
        .map(|arguments| {
            arguments
                .iter()
                .filter_map(|a| {
                    Some(PromptArgument {
                        name: text(a, "name")?,
                        title: text(a, "title"),
                        description: text(a, "description"),
                        required: a.get("required").and_then(Value::as_bool).unwrap_or(false),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Some(ServerPrompt {
        name: text(value, "name")?,
        title: text(value, "title"),
        description: text(value, "description"),
        arguments,
    })
}

/// A listed resource or template (as JSON) as rho describes it.
pub(crate) fn resource(value: &Value, template: bool) -> Option<ServerResource> {
    let uri = text(value, if template { "uriTemplate" } else { "uri" })?;
    Some(ServerResource {
        name: text(value, "name").unwrap_or_else(|| uri.clone()),
        uri,
        title: text(value, "title"),
        description: text(value, "description"),
        mime_type: text(value, "mimeType"),
        template,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn prompts_and_resources_are_described_from_their_listings() {
        let listed = json!({"name": "triage", "title": "Triage", "arguments": [
            {"name": "id", "required": true, "description": "ticket"}, {"name": "severity"}, {"nameless": 1}
        ]});
        let prompt = prompt(&listed).unwrap();
        assert_eq!(prompt.title.as_deref(), Some("Triage"));
        assert_eq!(prompt.arguments.len(), 2);
        assert!(prompt.arguments[0].required);
        assert!(!prompt.arguments[1].required);
        let template = resource(
            &json!({"uriTemplate": "db://users/{id}", "name": "user", "mimeType": "application/json"}),
            true,
        )
        .unwrap();
        assert!(template.template);
        assert_eq!(template.uri, "db://users/{id}");
        assert!(resource(&json!({"uri": "x://a"}), true).is_none());
        assert_eq!(
            resource(&json!({"uri": "x://a"}), false).unwrap().name,
            "x://a"
        );
    }
}
