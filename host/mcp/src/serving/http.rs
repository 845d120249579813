//! `rho mcp serve --http`: rmcp's Streamable HTTP service behind a small hyper server that
//! answers only [`HTTP_PATH`], checks a bearer token when one is set, bounds connections,
//! header reads and bodies, and stops with the caller's signal.

use std::sync::Arc;

use rho_component::CancelSignal;

use super::{Gateway, ServeError, ServeInfo, Served};

/// Where `rho mcp serve --http` listens, and what a request must carry.
pub struct HttpServe {
    /// The bound listener (bound by the caller, which reports its address).
    pub listener: tokio::net::TcpListener,
    /// The token every request must carry as `Authorization: Bearer <token>` (`None`: no
    /// check, for a loopback listener).
    pub bearer: Option<String>,
    /// Accept any `Host` header (remote clients, which the token guards); otherwise only
    /// loopback names, against DNS rebinding.
    pub any_host: bool,
}

impl std::fmt::Debug for HttpServe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token itself.
        f.debug_struct("HttpServe")
            .field("listener", &self.listener.local_addr().ok())
            .field("bearer", &self.bearer.as_ref().map(|_| "<set>"))
            .field("any_host", &self.any_host)
            .finish()
    }
}

/// Connections served at once, at most; more wait to be accepted.
const MAX_HTTP_CONNECTIONS: usize = 256;

/// How long a connection may take to send a request's headers.
const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long accepting pauses after it failed (out of file descriptors, say), so a failing
/// `accept` does not spin.
const ACCEPT_RETRY: std::time::Duration = std::time::Duration::from_millis(100);

/// The path the MCP endpoint answers on.
pub const HTTP_PATH: &str = "/mcp";

/// The largest request body accepted.
const MAX_HTTP_BODY_BYTES: usize = 4 << 20;

/// Serves `served` over Streamable HTTP on `http.listener` (path [`HTTP_PATH`]) until `stop`
/// fires: both revisions (2025-11-25 clients get a session, 2026-07-28 requests are served
/// statelessly).
pub async fn serve_http(
    served: Arc<dyn Served>,
    info: ServeInfo,
    http: HttpServe,
    stop: CancelSignal,
) -> Result<(), ServeError> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let mut config = StreamableHttpServerConfig::default();
    config.max_request_body_bytes = MAX_HTTP_BODY_BYTES;
    if http.any_host {
        config = config.disable_allowed_hosts();
    }
    let sessions_stop = config.cancellation_token.clone();
    let parked = Arc::default();
    let service = StreamableHttpService::new(
        move || {
            Ok(Gateway::new(
                served.clone(),
                info.clone(),
                Arc::clone(&parked),
            ))
        },
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let bearer: Option<Arc<str>> = http.bearer.map(Arc::from);
    let mut connections = tokio::task::JoinSet::new();
    loop {
        // Finished connections are reaped; at the cap, the next waits for one to end.
        while connections.try_join_next().is_some() {}
        if connections.len() >= MAX_HTTP_CONNECTIONS {
            tokio::select! {
                _ = connections.join_next() => continue,
                () = stop.cancelled() => break,
            }
        }
        let accepted = tokio::select! {
            accepted = http.listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(target: "rho::serve", "cannot accept a connection: {e}");
                tokio::select! {
                    () = tokio::time::sleep(ACCEPT_RETRY) => continue,
                    () = stop.cancelled() => break,
                }
            }
        };
        let service = service.clone();
        let bearer = bearer.clone();
        connections.spawn(async move {
            let answer = hyper::service::service_fn(move |request| {
                let service = service.clone();
                let bearer = bearer.clone();
                async move {
                    Ok::<_, std::convert::Infallible>(match refusal(&request, bearer.as_deref()) {
                        Some(refused) => refused,
                        None => service.handle(request).await,
                    })
                }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(io, answer)
                .await
            {
                tracing::debug!(target: "rho::serve", "a connection ended: {e}");
            }
        });
    }
    // Sessions end (their streams close), then the connections that carried them.
    sessions_stop.cancel();
    connections.abort_all();
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// A response body of rmcp's type.
type HttpBody = http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>;

/// The answer to a request that is not for the endpoint (404) or lacks the bearer token (401),
/// or `None` to pass it to the MCP service.
fn refusal<B>(
    request: &http::Request<B>,
    bearer: Option<&str>,
) -> Option<http::Response<HttpBody>> {
    let status = if request.uri().path() != HTTP_PATH {
        http::StatusCode::NOT_FOUND
    } else if bearer.is_some_and(|token| !carries_token(request.headers(), token)) {
        http::StatusCode::UNAUTHORIZED
    } else {
        return None;
    };
    let body = http_body_util::Full::new(bytes::Bytes::from(
        status.canonical_reason().unwrap_or_default(),
    ));
    let mut response = http::Response::new(http_body_util::BodyExt::boxed(body));
    *response.status_mut() = status;
    if status == http::StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            http::header::WWW_AUTHENTICATE,
            http::HeaderValue::from_static("Bearer"),
        );
    }
    Some(response)
}

/// Whether `headers` carry `Authorization: Bearer <token>`, compared in constant time.
fn carries_token(headers: &http::HeaderMap, token: &str) -> bool {
    let Some(given) = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    let (given, token) = (given.as_bytes(), token.as_bytes());
    given.len() == token.len()
        && given
            .iter()
            .zip(token)
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(path: &str, authorization: Option<&str>) -> http::Request<()> {
        let mut builder = http::Request::post(path);
        if let Some(value) = authorization {
            builder = builder.header(http::header::AUTHORIZATION, value);
        }
        builder.body(()).unwrap_or_default()
    }

    #[test]
    fn only_the_endpoint_with_the_token_passes() {
        let status = |path, auth, bearer| refusal(&request(path, auth), bearer).map(|r| r.status());
        assert_eq!(status(HTTP_PATH, None, None), None);
        assert_eq!(status("/", None, None), Some(http::StatusCode::NOT_FOUND));
        assert_eq!(status(HTTP_PATH, Some("Bearer t0k"), Some("t0k")), None);
        for wrong in [
            None,
            Some("Bearer t0"),
            Some("Bearer t0kk"),
            Some("Basic t0k"),
            Some("t0k"),
        ] {
            assert_eq!(
                status(HTTP_PATH, wrong, Some("t0k")),
                Some(http::StatusCode::UNAUTHORIZED),
                "{wrong:?}"
            );
        }
        let refused = refusal(&request(HTTP_PATH, None), Some("t0k"));
        let header = refused
            .as_ref()
            .and_then(|r| r.headers().get(http::header::WWW_AUTHENTICATE));
        assert_eq!(header.and_then(|h| h.to_str().ok()), Some("Bearer"));
    }
}
