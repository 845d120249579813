//! Resource subscriptions through `rho mcp serve` (`docs/mcp.md`, "rho as an MCP server"):
//! every client's subscription to a URI is one hold on it; the first hold subscribes at the
//! upstream server that offers the URI, the last release unsubscribes there. Each server's
//! `notifications/resources/updated` are forwarded, for held URIs only, to one channel every
//! client reads. A URI no served server offers (or a skill's file, which never changes under
//! a running server) is held but never updated.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use rho_mcp::serving::ServedRefusal;
use tokio::sync::broadcast;

use super::ServedTools;

/// Updates a slow client may fall behind by before it misses some.
const UPDATE_BACKLOG: usize = 256;

/// The held URIs and the forwarding of their servers' updates.
pub(super) struct Subscriptions {
    /// By URI: the server subscribed at (`None`: none offers it), and the holds.
    held: Arc<Mutex<BTreeMap<String, Held>>>,
    /// Servers whose updates are forwarded now.
    forwarding: Arc<Mutex<BTreeSet<String>>>,
    updates: broadcast::Sender<String>,
    /// One subscribe or release of a URI at a time, upstream request included: a first hold
    /// and a last release of one URI never cross (other URIs do not wait).
    changing: Mutex<BTreeMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

struct Held {
    server: Option<String>,
    holds: usize,
}

impl Default for Subscriptions {
    fn default() -> Self {
        Self {
            held: Arc::default(),
            forwarding: Arc::default(),
            updates: broadcast::channel(UPDATE_BACKLOG).0,
            changing: Mutex::default(),
        }
    }
}

impl Subscriptions {
    /// Waits for `uri`'s turn to subscribe or release (held until the upstream request is
    /// done). A URI's lock goes when nothing holds or waits for it.
    pub(super) async fn changing(&self, uri: &str) -> tokio::sync::OwnedMutexGuard<()> {
        let turn = {
            let mut changing = lock(&self.changing);
            changing.retain(|held, turn| held == uri || Arc::strong_count(turn) > 1);
            Arc::clone(changing.entry(uri.to_owned()).or_default())
        };
        turn.lock_owned().await
    }

    /// The updates of held URIs, from now on.
    pub(super) fn updates(&self) -> broadcast::Receiver<String> {
        self.updates.subscribe()
    }

    /// Adds a hold on `uri` when it is held already (`true`); otherwise the caller subscribes
    /// upstream first and then calls [`Subscriptions::hold`].
    pub(super) fn hold_again(&self, uri: &str) -> bool {
        match lock(&self.held).get_mut(uri) {
            Some(held) => {
                held.holds += 1;
                true
            }
            None => false,
        }
    }

    /// Holds `uri`, subscribed at `server` (or at none).
    pub(super) fn hold(&self, uri: &str, server: Option<String>) {
        lock(&self.held)
            .entry(uri.to_owned())
            .or_insert(Held { server, holds: 0 })
            .holds += 1;
    }

    /// Releases one hold on `uri`; when it was the last, the server to unsubscribe at.
    pub(super) fn release(&self, uri: &str) -> Option<String> {
        let mut held = lock(&self.held);
        let entry = held.get_mut(uri)?;
        entry.holds = entry.holds.saturating_sub(1);
        if entry.holds > 0 {
            return None;
        }
        held.remove(uri).and_then(|h| h.server)
    }

    /// Forwards `server`'s updates (read from `from`) of held URIs, unless they are forwarded
    /// already; forwarding ends with the connection.
    pub(super) fn forward(&self, server: &str, mut from: broadcast::Receiver<String>) {
        if !lock(&self.forwarding).insert(server.to_owned()) {
            return;
        }
        let (held, forwarding, updates) = (
            Arc::clone(&self.held),
            Arc::clone(&self.forwarding),
            self.updates.clone(),
        );
        let server = server.to_owned();
        tokio::spawn(async move {
            loop {
                match from.recv().await {
                    Ok(uri) => {
                        let wanted = lock(&held)
                            .get(&uri)
                            .is_some_and(|h| h.server.as_deref() == Some(server.as_str()));
                        if wanted {
                            // No client listening is fine.
                            let _ = updates.send(uri);
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(target: "rho::serve", server = server.as_str(), missed, "resource updates were missed");
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
            lock(&forwarding).remove(&server);
        });
    }
}

impl ServedTools {
    /// A client's subscription to `uri` ([`rho_mcp::serving::Served::subscribe`]): one more
    /// hold, or the first, subscribed at the server that offers it.
    pub(super) async fn hold_subscription(&self, uri: &str) -> Result<(), ServedRefusal> {
        let _turn = self.subscriptions.changing(uri).await;
        if self.subscriptions.hold_again(uri) {
            return Ok(());
        }
        let Some(server) = self.resource_server(uri).await else {
            self.subscriptions.hold(uri, None);
            return Ok(());
        };
        let unknown = || ServedRefusal::Unknown(format!("no resource at {uri:?}"));
        let connection = self.connection(&server, unknown).await?;
        connection
            .subscribe_resource(uri)
            .await
            .map_err(|e| ServedRefusal::Failed(e.to_string()))?;
        self.subscriptions
            .forward(&server, connection.resource_updates());
        self.subscriptions.hold(uri, Some(server));
        Ok(())
    }

    /// Releases one hold on `uri`; the last unsubscribes at its server (a failure is logged).
    pub(super) async fn release_subscription(&self, uri: &str) {
        let _turn = self.subscriptions.changing(uri).await;
        let Some(server) = self.subscriptions.release(uri) else {
            return;
        };
        let unknown = || ServedRefusal::Unknown(String::new());
        let released = match self.connection(&server, unknown).await {
            Ok(connection) => connection
                .unsubscribe_resource(uri)
                .await
                .map_err(|e| e.to_string()),
            Err(refusal) => Err(format!("{refusal:?}")),
        };
        if let Err(why) = released {
            tracing::warn!(target: "rho::serve", server = server.as_str(), "unsubscribing from a resource failed: {why}");
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn holds_count_and_only_held_uris_of_their_server_are_forwarded() {
        let subscriptions = Subscriptions::default();
        assert!(!subscriptions.hold_again("u://a"));
        subscriptions.hold("u://a", Some("s".into()));
        assert!(subscriptions.hold_again("u://a"));
        subscriptions.hold("u://never", None);
        let (from, upstream) = broadcast::channel(8);
        let mut updates = subscriptions.updates();
        subscriptions.forward("s", upstream);
        // A second forward of the same server is a no-op (one task per server).
        subscriptions.forward("s", from.subscribe());
        for uri in ["u://other", "u://never", "u://a"] {
            from.send(uri.to_owned()).unwrap();
        }
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), updates.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got, "u://a");
        assert!(
            updates.try_recv().is_err(),
            "only the held URI of that server"
        );
        // Two holds: the first release keeps it, the second names the server.
        assert_eq!(subscriptions.release("u://a"), None);
        assert_eq!(subscriptions.release("u://a"), Some("s".to_owned()));
        assert_eq!(subscriptions.release("u://a"), None);
        assert_eq!(subscriptions.release("u://never"), None);
        // The forwarding ends with the connection's channel.
        drop(from);
        for _ in 0..50 {
            if lock(&subscriptions.forwarding).is_empty() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the forwarder did not end");
    }
}
