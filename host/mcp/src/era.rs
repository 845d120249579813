//! Which protocol era a server speaks, found by rho's own `server/discover` probe before rmcp's
//! handshake runs, so the handshake can be told the era instead of guessing it on a timer.
//!
//! rmcp's automatic lifecycle sends `server/discover`, gives the answer a fixed 10 s counted
//! from the call (for a stdio server: from the spawn), then falls back to `initialize` on the
//! same connection. A server still starting after 10 s (an interpreter on a loaded machine)
//! answers the discover late; that answer then arrives where rmcp waits for the `initialize`
//! one, and the start fails ("conflict initialized response id"). Here instead:
//!
//! - the probe's wait starts only once the server is up: a stdio server once it has read the
//!   probe from its stdin pipe (Linux: the pipe is empty again), an HTTP server once it answered
//!   the `POST`, any server once it sent anything; until then only the startup budget counts;
//! - the probe has an id of its own ([`PROBE_ID`]); [`Probed`] drops every answer to it that
//!   arrives after the probe is over, so a late answer can never be mistaken for another;
//! - a late answer that shows a modern server is remembered ([`Probed::late_modern`]): when the
//!   `initialize` fallback then fails, the connection starts once more in the modern era.
//!
//! The probe's answer decides the handshake rmcp runs next: `server/discover` again (a modern
//! answer) or `initialize` (a legacy refusal, or silence for [`PROBE_ANSWER_WAIT`]).

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    ClientConfig, ClientJsonRpcMessage, ClientRequest, DiscoverRequest, DiscoverRequestParams,
    ErrorCode, ErrorData, JsonRpcError, JsonRpcResponse, NumberOrString, ProtocolVersion,
    RequestMetaObject, ServerJsonRpcMessage,
};
use rmcp::service::{ClientInitializeError, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// How long the probe waits for its answer once the server is up, before falling back to
/// `initialize` (what rmcp waits, counted from a later moment); at most half the startup budget.
pub const PROBE_ANSWER_WAIT: Duration = Duration::from_secs(10);

/// The id of the probe request: a string, so it can never equal one of rmcp's numeric ids.
pub(crate) const PROBE_ID: &str = "rho-era-probe";

/// How often a stdio server's stdin pipe is looked at while the probe waits to be read.
const PIPE_POLL: Duration = Duration::from_millis(20);

/// What the probe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// The server answered `server/discover` (or refused it the way only 2026-07-28 servers
    /// do: version negotiation, a missing capability, a header mismatch).
    Modern,
    /// The server refused `server/discover` as an unknown request.
    Legacy,
    /// The server was up but did not answer within [`PROBE_ANSWER_WAIT`].
    Silent,
}

/// How to tell that a server is up and reading.
pub(crate) enum Liveness {
    /// A stdio server: up once its stdin pipe (a duplicate of our end) is empty again.
    Pipe(OwnedFd),
    /// Up once the probe is sent (an HTTP server answered the `POST`).
    Sent,
}

/// A transport whose answers to the probe are dropped, and whose first messages may be ones the
/// probe read on the way to its answer (given to rmcp first, in order).
pub(crate) struct Probed<T> {
    inner: T,
    replay: VecDeque<ServerJsonRpcMessage>,
    late_modern: Arc<AtomicBool>,
}

impl<T> Probed<T> {
    /// Set when an answer to the probe arrived after the probe was over and showed a modern
    /// server.
    pub(crate) fn late_modern(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.late_modern)
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Probed<T> {
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if let Some(message) = self.replay.pop_front() {
            return Some(message);
        }
        loop {
            let message = self.inner.receive().await?;
            match answer_era(&message) {
                None => return Some(message),
                Some(era) => {
                    tracing::debug!(target: "rho::mcp", ?era, "a late answer to the era probe, dropped");
                    if era == Era::Modern {
                        self.late_modern.store(true, Ordering::Release);
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

/// The era an answer to the probe shows; `None` when `message` is not one.
fn answer_era(message: &ServerJsonRpcMessage) -> Option<Era> {
    let probe = NumberOrString::String(PROBE_ID.into());
    match message {
        ServerJsonRpcMessage::Response(JsonRpcResponse { id, .. }) if *id == probe => {
            Some(Era::Modern)
        }
        ServerJsonRpcMessage::Error(JsonRpcError {
            id: Some(id),
            error,
            ..
        }) if *id == probe => Some(refusal_era(error)),
        _ => None,
    }
}

/// A refusal of `server/discover`: the codes only 2026-07-28 defines mean a modern server (rmcp's
/// own discover handshake then negotiates or reports them); anything else, a legacy one.
fn refusal_era(error: &ErrorData) -> Era {
    if [
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        ErrorCode::HEADER_MISMATCH,
    ]
    .contains(&error.code)
    {
        Era::Modern
    } else {
        Era::Legacy
    }
}

/// Sends the probe on `transport` and waits for its answer: without a limit of its own until the
/// server is up (`liveness`), then at most `wait`. The caller bounds the whole by the startup
/// budget. Messages the server sends meanwhile are kept for rmcp.
pub(crate) async fn probe<T: Transport<RoleClient> + 'static>(
    transport: T,
    client: &ClientConfig,
    version: ProtocolVersion,
    liveness: Liveness,
    wait: Duration,
) -> Result<(Probed<T>, Era), ClientInitializeError> {
    let mut probed = Probed {
        inner: transport,
        replay: VecDeque::new(),
        late_modern: Arc::default(),
    };
    let meta = RequestMetaObject::with_client_context(
        version,
        client.client_info.clone(),
        client.capabilities.clone(),
    );
    let mut discover = DiscoverRequest::new(DiscoverRequestParams {});
    discover.extensions.insert(meta);
    let request = ClientJsonRpcMessage::request(
        ClientRequest::DiscoverRequest(discover),
        NumberOrString::String(PROBE_ID.into()),
    );
    probed
        .inner
        .send(request)
        .await
        .map_err(|e| ClientInitializeError::transport::<T>(e, "send the server/discover probe"))?;
    let up = async {
        if let Liveness::Pipe(pipe) = &liveness {
            read_by_server(pipe).await;
        }
    };
    tokio::pin!(up);
    let mut is_up = false;
    let silence = tokio::time::sleep(Duration::MAX);
    tokio::pin!(silence);
    loop {
        tokio::select! {
            () = &mut up, if !is_up => {
                is_up = true;
                silence.as_mut().reset(tokio::time::Instant::now() + wait);
            }
            () = &mut silence, if is_up => return Ok((probed, Era::Silent)),
            message = probed.inner.receive() => {
                let Some(message) = message else {
                    return Err(ClientInitializeError::ConnectionClosed(
                        "server/discover probe".into(),
                    ));
                };
                if let Some(era) = answer_era(&message) {
                    return Ok((probed, era));
                }
                match message {
                    // An error without an id answers the one request there is (2026-07-28 lets a
                    // server that could not read the id leave it out).
                    ServerJsonRpcMessage::Error(JsonRpcError { id: None, error, .. }) => {
                        return Ok((probed, refusal_era(&error)));
                    }
                    ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_) => {
                        tracing::warn!(target: "rho::mcp", "a response to no request before the handshake, dropped");
                    }
                    other => probed.replay.push_back(other),
                }
                if !is_up {
                    is_up = true;
                    silence.as_mut().reset(tokio::time::Instant::now() + wait);
                }
            }
        }
    }
}

/// Returns once the server has read what was written to its stdin pipe (`pipe` duplicates our
/// end): the pipe holds no unread byte. Where that cannot be asked, at once.
async fn read_by_server(pipe: &OwnedFd) {
    #[cfg(target_os = "linux")]
    while matches!(rustix::io::ioctl_fionread(pipe), Ok(unread) if unread > 0) {
        tokio::time::sleep(PIPE_POLL).await;
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (pipe, PIPE_POLL);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(id: Option<&str>, code: ErrorCode) -> ServerJsonRpcMessage {
        ServerJsonRpcMessage::Error(JsonRpcError {
            jsonrpc: Default::default(),
            id: id.map(|id| NumberOrString::String(id.into())),
            error: ErrorData::new(code, "no", None),
        })
    }

    #[test]
    fn refusals_tell_the_era_and_other_ids_are_not_the_probe() {
        assert_eq!(
            answer_era(&error(Some(PROBE_ID), ErrorCode::METHOD_NOT_FOUND)),
            Some(Era::Legacy)
        );
        assert_eq!(
            answer_era(&error(
                Some(PROBE_ID),
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            )),
            Some(Era::Modern)
        );
        assert_eq!(
            answer_era(&error(Some("0"), ErrorCode::METHOD_NOT_FOUND)),
            None
        );
        assert_eq!(answer_era(&error(None, ErrorCode::METHOD_NOT_FOUND)), None);
    }
}
