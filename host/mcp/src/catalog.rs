//! The prompts and resources a server offers, listed at connect and held for the session so
//! matching a slash command or an `@` costs no round-trip, and re-listed by the connection
//! itself when the server sends `notifications/prompts/list_changed` or
//! `notifications/resources/list_changed`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rho_component::{PromptArgument, ServerPrompt, ServerResource};
use rmcp::RoleClient;
use rmcp::service::Peer;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::paging::all_pages;

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
        let items = page
            .prompts
            .iter()
            .filter_map(|p| serde_json::to_value(p).ok())
            .filter_map(|p| prompt(&p))
            .collect();
        Ok((items, page.next_cursor))
    })
    .await?;
    Ok(dedup(listed, |p| p.name.clone()))
}

/// Resources, then templates (`template: true`).
async fn list_resources(
    peer: &Peer<RoleClient>,
    server: &str,
    budget: Duration,
) -> Result<Vec<ServerResource>, String> {
    let mut all = all_pages(server, "resources/list", budget, |params| async move {
        let page = peer.list_resources(params).await?;
        let items = page
            .resources
            .iter()
            .filter_map(|r| serde_json::to_value(r).ok())
            .filter_map(|r| resource(&r, false))
            .collect();
        Ok((items, page.next_cursor))
    })
    .await?;
    let templates = all_pages(
        server,
        "resources/templates/list",
        budget,
        |params| async move {
            let page = peer.list_resource_templates(params).await?;
            let items = page
                .resource_templates
                .iter()
                .filter_map(|r| serde_json::to_value(r).ok())
                .filter_map(|r| resource(&r, true))
                .collect();
            Ok((items, page.next_cursor))
        },
    )
    .await?;
    all.extend(templates);
    Ok(dedup(all, |r| (r.uri.clone(), r.template)))
}

/// Keeps the first of items with the same key (a server listing one twice).
fn dedup<T, K: Ord>(items: Vec<T>, key: impl Fn(&T) -> K) -> Vec<T> {
    let mut seen = std::collections::BTreeSet::new();
    items
        .into_iter()
        .filter(|item| seen.insert(key(item)))
        .collect()
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

    #[test]
    fn the_first_of_duplicates_is_kept() {
        assert_eq!(dedup(vec![1, 2, 1, 3], |n| *n), vec![1, 2, 3]);
    }
}
