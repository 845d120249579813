//! The loopback redirect listener: `127.0.0.1` on an ephemeral port, answering one exact path
//! ([`CALLBACK_PATH`]) and only with the login's CSRF `state`, so a stray request (a favicon, a
//! scanner, another tab) can never finish or spoil the login. Each request is read with a
//! bound on its size and time; anything else gets `404` and the listener keeps waiting.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The one path the listener answers.
pub const CALLBACK_PATH: &str = "/callback";

/// The most of a request the listener reads (the request line and headers).
const REQUEST_MAX_BYTES: usize = 16 * 1024;

/// How long one connection may take to send its request.
const REQUEST_TIME_LIMIT: Duration = Duration::from_secs(5);

/// A bound listener, waiting for the browser.
pub(crate) struct CallbackListener {
    listener: TcpListener,
    port: u16,
}

/// What the browser brought back on the callback path.
#[derive(Debug)]
pub(crate) enum Callback {
    /// The whole redirect URL, with the expected `state` (its code, error and `iss` are for
    /// rmcp to judge).
    Url(String),
    /// The right path with another `state` (or none): a forged or stale redirect.
    WrongState,
}

impl CallbackListener {
    /// A listener on an ephemeral port.
    pub(crate) async fn bind() -> Result<Self, String> {
        Self::bind_port(0).await
    }

    /// A listener on `port` (a step-up login reuses the port its client was registered with).
    pub(crate) async fn bind_port(port: u16) -> Result<Self, String> {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| format!("cannot listen on 127.0.0.1 for the login's redirect: {e}"))?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("cannot read the redirect listener's port: {e}"))?
            .port();
        Ok(Self { listener, port })
    }

    /// The redirect URI to register and send.
    pub(crate) fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// Waits for a request on the callback path, answering every other request with `404`.
    pub(crate) async fn wait(&self, state: &str) -> Callback {
        loop {
            let Ok((stream, _)) = self.listener.accept().await else {
                continue;
            };
            if let Some(callback) = self.serve(stream, state).await {
                return callback;
            }
        }
    }

    async fn serve(&self, mut stream: TcpStream, state: &str) -> Option<Callback> {
        let target = tokio::time::timeout(REQUEST_TIME_LIMIT, read_target(&mut stream))
            .await
            .ok()
            .flatten();
        let Some(target) = target else {
            respond(&mut stream, 400, "rho could not read this request.").await;
            return None;
        };
        let (path, query) = target.split_once('?').unwrap_or((target.as_str(), ""));
        if path != CALLBACK_PATH {
            respond(&mut stream, 404, "Not found.").await;
            return None;
        }
        if query_value(query, "state").as_deref() != Some(state) {
            respond(
                &mut stream,
                400,
                "This sign-in link does not belong to the login rho is waiting for. Start the \
                 login again.",
            )
            .await;
            return Some(Callback::WrongState);
        }
        let finished = if query_value(query, "error").is_some() {
            "The authorization server refused the login. Return to rho to see why."
        } else {
            "rho received the sign-in. You can close this tab and return to rho."
        };
        respond(&mut stream, 200, finished).await;
        Some(Callback::Url(format!(
            "http://127.0.0.1:{}{target}",
            self.port
        )))
    }
}

/// The request target of a `GET`, or `None` for anything else or a request that is too large.
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    while !buffer.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 || buffer.len() + read > REQUEST_MAX_BYTES {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    let line = buffer.split(|&b| b == b'\r').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut parts = line.split(' ');
    let (method, target) = (parts.next()?, parts.next()?);
    (method == "GET" && target.starts_with('/')).then(|| target.to_owned())
}

/// The decoded value of `name` in a query string.
pub(crate) fn query_value(query: &str, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

async fn respond(stream: &mut TcpStream, status: u16, text: &str) {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>rho</title></head>\
         <body><p>{text}</p></body></html>"
    );
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}
