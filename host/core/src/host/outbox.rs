//! The host's one way out: a bounded channel of [`HostEvent`]s. A front-end that reads slowly
//! slows the host down (every send waits for room); streamed text and progress that cannot be
//! delivered yet wait in a handful of slots and merge there, so nothing else is ever dropped
//! and no queue grows without bound.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc;

use super::operation::HostEvent;
use crate::session::{EventSink, SessionEvent, SinkFuture};

/// Events waiting for the front-end, at most.
pub const EVENT_QUEUE: usize = 256;

/// The sending side of the host's event channel.
pub(crate) struct Outbox {
    tx: mpsc::Sender<HostEvent>,
    /// Deltas and progress not yet delivered: at most one per kind (message text, reasoning
    /// text, each running call's progress).
    pending: Mutex<Vec<SessionEvent>>,
}

impl Outbox {
    pub(crate) fn new(tx: mpsc::Sender<HostEvent>) -> Arc<Self> {
        Arc::new(Self {
            tx,
            pending: Mutex::new(Vec::new()),
        })
    }

    /// Delivers `event` after everything before it, waiting for room. A front-end that has
    /// gone away loses it.
    pub(crate) async fn deliver(&self, event: HostEvent) {
        self.flush().await;
        let _ = self.tx.send(event).await;
    }

    /// Whether the front-end stopped reading.
    pub(crate) fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// Delivers every pending delta and progress report, waiting for room.
    async fn flush(&self) {
        loop {
            if self.lock().is_empty() {
                return;
            }
            let Ok(permit) = self.tx.reserve().await else {
                return;
            };
            let mut pending = self.lock();
            if pending.is_empty() {
                return;
            }
            permit.send(HostEvent::Session(pending.remove(0)));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<SessionEvent>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl EventSink for Outbox {
    fn send(&self, event: SessionEvent) -> SinkFuture<'_> {
        Box::pin(self.deliver(HostEvent::Session(event)))
    }

    fn coalesce(&self, event: SessionEvent) {
        let mut pending = self.lock();
        match pending.iter_mut().find(|p| p.coalesces_with(&event)) {
            Some(earlier) => earlier.absorb(event),
            None => pending.push(event),
        }
        while !pending.is_empty() {
            match self.tx.try_reserve() {
                Ok(permit) => permit.send(HostEvent::Session(pending.remove(0))),
                Err(_) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn delta(text: &str) -> SessionEvent {
        SessionEvent::MessageDelta(text.into())
    }

    #[tokio::test]
    async fn a_slow_reader_gets_merged_deltas_and_every_other_event_in_order() {
        let (tx, mut rx) = mpsc::channel(1);
        let outbox = Outbox::new(tx);
        outbox.coalesce(delta("a"));
        // The channel is full now: these wait and merge.
        outbox.coalesce(delta("b"));
        outbox.coalesce(delta("c"));
        let sender = outbox.clone();
        let later = tokio::spawn(async move {
            sender.send(SessionEvent::AgentStart).await;
        });
        let mut seen = Vec::new();
        for _ in 0..3 {
            if let HostEvent::Session(event) = rx.recv().await.unwrap() {
                seen.push(event);
            }
        }
        later.await.unwrap();
        assert_eq!(
            seen,
            vec![delta("a"), delta("bc"), SessionEvent::AgentStart]
        );
    }
}
