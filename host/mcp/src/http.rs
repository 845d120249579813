//! The Streamable HTTP transport: HTTPS except loopback (checked again here, whatever the
//! source), no redirects (configured headers never reach another origin), literal headers plus
//! headers from the environment (which win on a name collision; values are never logged), and
//! a watch on the session's standalone stream so a connection is ready only once it is open.

use std::collections::HashMap;
use std::ffi::OsString;
use std::pin::Pin;
use std::sync::Arc;

use reqwest::header::{HeaderName, HeaderValue};
use rho_component::endpoint::check_remote_url;
use rho_component::{HttpServerSpec, McpServerSpec};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};

use crate::McpError;
use crate::standalone::StandaloneStream;
use crate::task_support::TaskFlags;

/// The HTTP client and transport settings for `http` (its `tools/list` answers read into
/// `task_flags`), and the watch on its session's standalone stream. [`transport`] makes the transport of a server without OAuth; an OAuth
/// server's client is wrapped in rmcp's `AuthClient` first (`crate::oauth`).
pub(crate) fn client(
    spec: &McpServerSpec,
    http: &HttpServerSpec,
    ambient: &(dyn Fn(&str) -> Option<OsString> + Sync),
    task_flags: TaskFlags,
) -> Result<
    (
        HttpClient,
        StreamableHttpClientTransportConfig,
        StandaloneStream,
    ),
    McpError,
> {
    let fail = |message: String| McpError::Connect {
        server: spec.id.clone(),
        message,
    };
    check_remote_url(&http.url).map_err(|problem| fail(problem.to_string()))?;
    let mut headers: HashMap<HeaderName, HeaderValue> = HashMap::new();
    let mut put = |name: &str, value: &str| -> Result<(), McpError> {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| fail(format!("header name {name:?} is not valid")))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| fail(format!("header {name} has an invalid value")))?;
        value.set_sensitive(true);
        headers.insert(name, value);
        Ok(())
    };
    for (name, value) in &http.headers {
        put(name, value)?;
    }
    for (name, variable) in &http.headers_from_env {
        let value = ambient(variable).ok_or_else(|| McpError::MissingEnv {
            server: spec.id.clone(),
            variable: variable.clone(),
        })?;
        let value = value
            .into_string()
            .map_err(|_| fail(format!("{variable} is not valid UTF-8")))?;
        put(name, &value)?;
    }
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(spec.startup_timeout)
        .build()
        .map_err(|e| fail(format!("cannot build the HTTP client: {e}")))?;
    let config =
        StreamableHttpClientTransportConfig::with_uri(http.url.clone()).custom_headers(headers);
    let standalone = StandaloneStream::default();
    let client = HttpClient {
        client,
        standalone: standalone.clone(),
        task_flags,
    };
    Ok((client, config, standalone))
}

/// The transport of `client` with `config`.
pub(crate) fn transport<C: StreamableHttpClient>(
    client: C,
    config: StreamableHttpClientTransportConfig,
) -> StreamableHttpClientTransport<C> {
    StreamableHttpClientTransport::with_client(client, config)
}

/// rho's HTTP client for rmcp's Streamable HTTP transport: `reqwest` without redirects, plus two
/// repairs for servers that answer a request with an HTTP error whose JSON-RPC error has no `id`
/// (the reference `server-everything` does this with `400` for a session it no longer knows).
///
/// Without the repairs, rmcp hands such an error to the lifecycle as an uncorrelated message and
/// the request waits for its whole call budget. Here:
/// - when the request carried a session id and the error is about the session, it is reported as
///   an expired session, so rmcp re-initializes and retries the request once (what a `404` gets);
/// - otherwise the error is given the id of the request that was posted, so the request fails
///   at once with the server's message.
///
/// It also tells [`StandaloneStream`] when a legacy handshake gave a session (rmcp then opens
/// the standalone stream with a `GET` of its own) and when the server answered that `GET`.
///
/// It implements only the trait's required methods, and applies rmcp's default response limits
/// itself: the trait's variants that take limits forward to these, and rho's transport
/// configuration leaves the limits at those defaults.
#[derive(Clone)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
    standalone: StandaloneStream,
    task_flags: TaskFlags,
}

type SseStream =
    Pin<Box<dyn futures_core::Stream<Item = Result<sse_stream::Sse, SseError>> + Send + 'static>>;

impl HttpClient {
    fn correlate(
        message: &ClientJsonRpcMessage,
        session_attached: bool,
        response: StreamableHttpPostResponse,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let ClientJsonRpcMessage::Request(request) = message else {
            return Ok(response);
        };
        match response {
            StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(mut error), session)
                if error.id.is_none() =>
            {
                if session_attached && error.error.message.to_lowercase().contains("session") {
                    return Err(StreamableHttpError::SessionExpired);
                }
                error.id = Some(request.id.clone());
                Ok(StreamableHttpPostResponse::Json(
                    ServerJsonRpcMessage::Error(error),
                    session,
                ))
            }
            other => Ok(other),
        }
    }
}

impl StreamableHttpClient for HttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let limits = StreamableHttpResponseLimits::default();
        let session_attached = session_id.is_some();
        // Kept for a listing read again (below).
        let again = lists_tools(&message).then(|| Repost {
            uri: uri.clone(),
            session: session_id.clone(),
            auth: auth_header.clone(),
            headers: custom_headers.clone(),
            max_bytes: limits.max_json_response_size,
        });
        let response = self
            .client
            .post_message_with_response_limits(
                uri,
                message.clone(),
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await?;
        if opens_session(&message, &response) {
            self.standalone.expect();
        }
        let response = match (response, again) {
            // A listing's events are read for the tools that need tasks before rmcp decodes
            // them.
            (StreamableHttpPostResponse::Sse(stream, session), Some(_)) => {
                let flags = self.task_flags.clone();
                let stream: SseStream = Box::pin(ScannedEvents {
                    inner: stream,
                    flags,
                });
                StreamableHttpPostResponse::Sse(stream, session)
            }
            // A plain JSON answer reaches rho decoded, without `execution`: the page is asked
            // for once more and its raw answer read for them.
            (
                response @ StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Response(_), _),
                Some(again),
            ) => {
                self.read_task_flags(&message, again).await;
                response
            }
            (other, _) => other,
        };
        Self::correlate(&message, session_attached, response)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        let deleted = self
            .client
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await;
        // The server may keep the session: said, never passed over.
        if let Err(e) = &deleted {
            tracing::warn!(target: "rho::mcp", "ending the HTTP session failed: {e}");
        }
        deleted
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        let opening = opens_standalone(session_id.as_deref(), last_event_id.as_deref());
        let stream = self
            .client
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                StreamableHttpResponseLimits::default().max_sse_event_size,
            )
            .await;
        if opening {
            self.standalone.settle();
        }
        stream
    }
}

/// What a `tools/list` was posted with, to post it once more.
struct Repost {
    uri: Arc<str>,
    session: Option<Arc<str>>,
    auth: Option<String>,
    headers: HashMap<HeaderName, HeaderValue>,
    /// The most bytes read of the answer.
    max_bytes: usize,
}

/// How long the second reading of a listing may take.
const REPOST_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

impl HttpClient {
    /// Posts the `tools/list` page `message` once more (under an id of its own) and reads the
    /// raw answer, JSON or an event stream, for the tools that need tasks
    /// ([`TaskFlags::scan`]): rmcp's decoding of a JSON answer drops `execution`. A failure
    /// leaves the flags as they were (logged at debug).
    async fn read_task_flags(&self, message: &ClientJsonRpcMessage, again: Repost) {
        let ClientJsonRpcMessage::Request(request) = message else {
            return;
        };
        let mut request = request.clone();
        static REPOSTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = REPOSTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        request.id = rmcp::model::RequestId::String(Arc::from(format!("rho-task-support-{n}")));
        let mut post = self
            .client
            .post(again.uri.as_ref())
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .timeout(REPOST_WAIT);
        if let Some(token) = &again.auth {
            post = post.bearer_auth(token);
        }
        for (name, value) in &again.headers {
            post = post.header(name, value);
        }
        if let Some(session) = &again.session {
            post = post.header("mcp-session-id", session.as_ref());
        }
        let read = async {
            let mut response = post
                .json(&ClientJsonRpcMessage::Request(request))
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if !response.status().is_success() {
                return Err(format!("HTTP {}", response.status()));
            }
            let events = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|t| t.starts_with("text/event-stream"));
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
                if body.len() + chunk.len() > again.max_bytes {
                    return Err(format!("the answer is over {} bytes", again.max_bytes));
                }
                body.extend_from_slice(&chunk);
            }
            Ok((events, body))
        };
        match read.await {
            Ok((false, body)) => self.task_flags.scan(&body),
            Ok((true, body)) => {
                for data in event_data(&body) {
                    self.task_flags.scan(&data);
                }
            }
            Err(why) => {
                tracing::debug!(target: "rho::mcp", "reading tools/list again for task support failed: {why}");
            }
        }
    }
}

/// The `data` of each event of an event stream's `body` (its `data:` lines joined by
/// newlines, as the format says).
fn event_data(body: &[u8]) -> Vec<Vec<u8>> {
    let mut events = Vec::new();
    let mut data: Option<Vec<u8>> = None;
    for line in body.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            events.extend(data.take());
        } else if let Some(value) = line.strip_prefix(b"data:") {
            let value = value.strip_prefix(b" ").unwrap_or(value);
            let joined = data.get_or_insert_with(Vec::new);
            if !joined.is_empty() {
                joined.push(b'\n');
            }
            joined.extend_from_slice(value);
        }
    }
    events.extend(data);
    events
}

/// Whether `message` asks for a page of tools.
fn lists_tools(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(request) if matches!(request.request, ClientRequest::ListToolsRequest(_)))
}

/// The events of a `tools/list` answer, passed on unchanged, each one's data read by
/// [`TaskFlags::scan`] first.
struct ScannedEvents {
    inner: SseStream,
    flags: TaskFlags,
}

impl futures_core::Stream for ScannedEvents {
    type Item = Result<sse_stream::Sse, SseError>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        let polled = self.inner.as_mut().poll_next(cx);
        if let std::task::Poll::Ready(Some(Ok(event))) = &polled
            && let Some(data) = &event.data
        {
            self.flags.scan(data.as_bytes());
        }
        polled
    }
}

/// Whether a `GET` opens a session's standalone stream (resuming a stream names the last event
/// seen instead). Whatever the server answers, open or refused (`405` from a server without
/// one), no stream is on its way any more.
fn opens_standalone(session_id: Option<&str>, last_event_id: Option<&str>) -> bool {
    session_id.is_some() && last_event_id.is_none()
}

/// Whether `response` answers a legacy `initialize` with a session: rmcp opens the session's
/// standalone stream next (a `2026-07-28` session has none).
fn opens_session(message: &ClientJsonRpcMessage, response: &StreamableHttpPostResponse) -> bool {
    let ClientJsonRpcMessage::Request(request) = message else {
        return false;
    };
    matches!(request.request, ClientRequest::InitializeRequest(_))
        && matches!(
            response,
            StreamableHttpPostResponse::Json(_, Some(_))
                | StreamableHttpPostResponse::Sse(_, Some(_))
        )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use rmcp::model::{ClientRequest, ErrorData, JsonRpcError, PingRequest, RequestId};

    use super::*;

    fn ping(id: i64) -> ClientJsonRpcMessage {
        ClientJsonRpcMessage::request(
            ClientRequest::PingRequest(PingRequest::default()),
            RequestId::Number(id),
        )
    }

    fn uncorrelated(message: &str) -> StreamableHttpPostResponse {
        let error = ErrorData::new(rmcp::model::ErrorCode(-32000), message.to_owned(), None);
        let error = JsonRpcError::new(None, error);
        StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(error), None)
    }

    #[test]
    fn the_transport_is_configured_with_the_limits_the_client_applies() {
        // HttpClient applies rmcp's default response limits itself and ignores the ones rmcp
        // passes in: that is right only while the transport's configuration has the defaults.
        let http = HttpServerSpec {
            url: "http://127.0.0.1:9/mcp".into(),
            headers: vec![],
            headers_from_env: vec![],
        };
        let spec = McpServerSpec::new(
            "remote",
            rho_component::McpServerOrigin::Config,
            rho_component::McpTransport::StreamableHttp(http.clone()),
        );
        let (_, config, _) = client(&spec, &http, &|_| None, TaskFlags::default()).unwrap();
        let defaults = StreamableHttpResponseLimits::default();
        assert_eq!(config.max_sse_event_size, defaults.max_sse_event_size);
        assert_eq!(
            config.max_json_response_size,
            defaults.max_json_response_size
        );
        assert_eq!(
            config.max_error_response_size,
            defaults.max_error_response_size
        );
    }

    #[test]
    fn only_a_legacy_handshake_that_gives_a_session_expects_a_standalone_stream() {
        let initialize: ClientJsonRpcMessage = serde_json::from_value(serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "rho", "version": "0"}
            }
        }))
        .unwrap();
        let result = |session: Option<&str>| {
            let result = serde_json::from_value(serde_json::json!({
                "jsonrpc": "2.0", "id": 0, "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "serverInfo": {"name": "s", "version": "0"}
                }
            }))
            .unwrap();
            StreamableHttpPostResponse::Json(result, session.map(str::to_owned))
        };
        assert!(opens_session(&initialize, &result(Some("abc"))));
        // A stateless session has no standalone stream; nor does any other request.
        assert!(!opens_session(&initialize, &result(None)));
        assert!(!opens_session(&ping(1), &result(Some("abc"))));
        // Resuming a stream is not opening the standalone one.
        assert!(opens_standalone(Some("abc"), None));
        assert!(!opens_standalone(Some("abc"), Some("event-7")));
        assert!(!opens_standalone(None, None));
    }

    #[test]
    fn an_uncorrelated_error_gets_the_id_of_the_posted_request() {
        let response = HttpClient::correlate(&ping(7), false, uncorrelated("Bad Request")).unwrap();
        let StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(error), _) = response
        else {
            panic!("the error is kept");
        };
        assert_eq!(error.id, Some(RequestId::Number(7)));
        assert_eq!(error.error.message, "Bad Request");
    }

    #[test]
    fn an_uncorrelated_session_error_on_a_session_is_an_expired_session() {
        let message = "Bad Request: No valid session ID provided";
        let result = HttpClient::correlate(&ping(1), true, uncorrelated(message));
        assert!(matches!(result, Err(StreamableHttpError::SessionExpired)));
        // Without a session attached there is nothing to re-initialize.
        let result = HttpClient::correlate(&ping(1), false, uncorrelated(message));
        assert!(result.is_ok());
    }

    #[test]
    fn an_event_streams_data_lines_make_one_payload_per_event() {
        let body = b"event: message\ndata: {\"a\":\ndata: 1}\n\n: comment\r\ndata:{\"b\":2}\r\n\r\ndata: last";
        let events = event_data(body);
        assert_eq!(
            events,
            [
                b"{\"a\":\n1}".to_vec(),
                b"{\"b\":2}".to_vec(),
                b"last".to_vec()
            ]
        );
    }
}
