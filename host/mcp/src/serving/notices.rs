//! What `rho mcp serve` tells a client unasked: each change of a served list
//! (`notifications/*/list_changed`) and each update of a resource it subscribed to
//! (`notifications/resources/updated`), on a 2025-11-25 client's session or on a 2026-07-28
//! client's `subscriptions/listen` stream.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::service::{Peer, RoleServer, SubscriptionContext};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::{Served, ServedChanges, lock};

/// Tells a 2025-11-25 client (`peer`) of list changes, and of updates of the resources in
/// `subscribed`, until `gone` fires or it cannot be told any more.
pub(super) fn tell_session(
    served: Arc<dyn Served>,
    subscribed: Arc<Mutex<BTreeSet<String>>>,
    gone: CancellationToken,
    peer: Peer<RoleServer>,
) {
    let mut updates = served.resource_updates();
    let (updated_peer, stop) = (peer.clone(), gone.clone());
    tokio::spawn(async move {
        loop {
            let uri = tokio::select! {
                update = updates.recv() => match update {
                    Ok(uri) => uri,
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => return,
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
    let changes = served.changes();
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

/// Serves one `subscriptions/listen` stream of a 2026-07-28 client until it is cancelled or
/// `gone` fires: the accepted list changes, and the updates of the accepted resources, held
/// while the stream is open (one a server refuses is never updated: it was acknowledged
/// before rho could ask).
pub(super) async fn tell_stream(
    served: &dyn Served,
    gone: &CancellationToken,
    context: &SubscriptionContext,
) {
    let accepted = context.accepted().clone();
    let sink = context.sink().clone();
    let uris: Vec<String> = accepted.resource_subscriptions.clone().unwrap_or_default();
    let mut held = Vec::new();
    for uri in &uris {
        match served.subscribe(uri).await {
            Ok(()) => held.push(uri.clone()),
            Err(refusal) => {
                tracing::info!(target: "rho::serve", uri = uri.as_str(), "a resource subscription was refused: {refusal:?}");
            }
        }
    }
    let mut updates = served.resource_updates();
    let updated_sink = sink.clone();
    let forward_updates = async {
        loop {
            match updates.recv().await {
                Ok(uri) if held.contains(&uri) => {
                    if updated_sink.notify_resource_updated(uri).await.is_err() {
                        return;
                    }
                }
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
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
            () = gone.cancelled() => {}
        }
    };
    tokio::select! {
        () = forward_changes(served.changes(), stop, tell) => {}
        () = forward_updates => {}
    }
    for uri in &held {
        served.unsubscribe(uri).await;
    }
}

/// The most resources one client subscribes to: on one `subscriptions/listen` stream, or in
/// one 2025-11-25 session.
pub(super) const MAX_LISTEN_RESOURCES: usize = 256;

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
