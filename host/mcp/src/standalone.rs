//! Whether a legacy Streamable HTTP session's standalone stream (the `GET` rmcp opens after the
//! handshake) is open yet, so a connection is handed out only once it is.
//!
//! rmcp opens the stream in the background while requests already flow. A server may send on it
//! the questions it asks during a call (the conformance suite's fixtures do: a server request
//! that names no request goes there), and a server that keeps no event store drops what it
//! sends while the stream is not open. A first call that reached the server before the stream
//! did then waited out its budget for an answer to a question rho never saw
//! (`docs/mcp.md`, "Starting and stopping").

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

/// The longest a connection waits for its standalone stream after discovery. The `GET` runs
/// alongside `tools/list` (or, for a start that knows the server's tools, right after the
/// handshake), so the wait usually costs little; a server that holds its answer back longer
/// costs at most this, and the connection is used without the stream.
pub const STANDALONE_STREAM_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// No stream is on its way: none is expected (stdio, a 2026-07-28 or stateless session),
    /// or the server answered its `GET` (opened, or refused).
    Settled,
    /// A legacy handshake gave a session and the server has not answered its `GET` yet.
    Pending,
}

/// Shared by the transport's HTTP client (which sees the handshake and the `GET`) and the
/// connection (which waits).
#[derive(Clone)]
pub(crate) struct StandaloneStream(Arc<watch::Sender<Opening>>);

impl Default for StandaloneStream {
    fn default() -> Self {
        Self(Arc::new(watch::Sender::new(Opening::Settled)))
    }
}

impl StandaloneStream {
    /// A handshake gave a session: its standalone stream is on its way.
    pub(crate) fn expect(&self) {
        self.0.send_replace(Opening::Pending);
    }

    /// The server answered the stream's `GET`.
    pub(crate) fn settle(&self) {
        self.0.send_replace(Opening::Settled);
    }

    /// Resolves once no standalone stream is on its way.
    pub(crate) async fn settled(&self) {
        let mut opening = self.0.subscribe();
        // `self` holds the sender, so the channel stays open while this waits.
        let _ = opening.wait_for(|o| *o == Opening::Settled).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_connection_waits_only_while_a_stream_is_on_its_way() {
        let stream = StandaloneStream::default();
        // Nothing expected (stdio, modern sessions): no wait at all.
        stream.settled().await;

        stream.expect();
        let waiting = tokio::time::timeout(Duration::from_secs(60), stream.settled()).await;
        assert!(
            waiting.is_err(),
            "an unanswered GET keeps the connection waiting"
        );

        let waiter = tokio::spawn({
            let stream = stream.clone();
            async move { stream.settled().await }
        });
        tokio::task::yield_now().await;
        stream.settle();
        let settled = tokio::time::timeout(Duration::from_secs(1), waiter).await;
        assert!(
            settled.is_ok_and(|joined| joined.is_ok()),
            "the answer releases the waiter"
        );
    }
}
