//! `OpenAiCompatible` against a tiny in-test HTTP server on 127.0.0.1 serving canned answers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Mutex;
use std::time::Duration;

use rho_component::CancelSignal;
use rho_core::provider::{
    ChatMessage, ChatRequest, FinishReason, OpenAiCompatible, OpenAiConfig, Provider,
    ProviderError, StreamEvent, ToolCall, ToolDefinition,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::time::Instant;

const CANARY: &str = "sk-canary-5f0e1d2c3b4a";

/// A request as the server saw it.
#[derive(Debug)]
struct Seen {
    request_line: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// One canned answer: a head, body pieces written with a pause between them, and whether to
/// keep the connection open afterwards (reporting when the client closes it).
struct Reply {
    head: String,
    pieces: Vec<Vec<u8>>,
    gap: Duration,
    hold_open: bool,
}

impl Reply {
    /// A close-delimited SSE stream cut into `size`-byte pieces.
    fn sse(body: &str, size: usize) -> Self {
        Self {
            head: "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                .into(),
            pieces: body.as_bytes().chunks(size).map(<[u8]>::to_vec).collect(),
            gap: Duration::from_millis(1),
            hold_open: false,
        }
    }

    /// A chunked-encoded SSE stream, one HTTP chunk per piece.
    fn chunked_sse(pieces: &[&str]) -> Self {
        let mut framed: Vec<Vec<u8>> = pieces
            .iter()
            .map(|p| format!("{:x}\r\n{p}\r\n", p.len()).into_bytes())
            .collect();
        framed.push(b"0\r\n\r\n".to_vec());
        Self {
            head: "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                   Transfer-Encoding: chunked\r\n\r\n"
                .into(),
            pieces: framed,
            gap: Duration::from_millis(1),
            hold_open: false,
        }
    }

    /// A complete answer with a `Content-Length`.
    fn full(status: &str, content_type: &str, body: &str) -> Self {
        Self {
            head: format!(
                "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n",
                body.len()
            ),
            pieces: vec![body.as_bytes().to_vec()],
            gap: Duration::ZERO,
            hold_open: false,
        }
    }
}

struct Server {
    base: String,
    seen: mpsc::Receiver<Seen>,
    closed: mpsc::Receiver<()>,
}

/// Serves `replies` in order, one connection each.
async fn serve(replies: Vec<Reply>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let (seen_tx, seen) = mpsc::channel(16);
    let (closed_tx, closed) = mpsc::channel(16);
    tokio::spawn(async move {
        for reply in replies {
            let (mut socket, _) = listener.accept().await.unwrap();
            seen_tx.send(read_request(&mut socket).await).await.unwrap();
            socket.write_all(reply.head.as_bytes()).await.unwrap();
            for piece in &reply.pieces {
                if socket.write_all(piece).await.is_err() {
                    break;
                }
                let _ = socket.flush().await;
                tokio::time::sleep(reply.gap).await;
            }
            if reply.hold_open {
                let mut sink = [0u8; 256];
                while matches!(socket.read(&mut sink).await, Ok(n) if n > 0) {}
                let _ = closed_tx.send(()).await;
            }
        }
    });
    Server { base, seen, closed }
}

async fn read_request(socket: &mut tokio::net::TcpStream) -> Seen {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = socket.read(&mut chunk).await.unwrap();
        assert!(n > 0, "client closed inside the head");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.unwrap();
        assert!(n > 0, "client closed inside the body");
        body.extend_from_slice(&chunk[..n]);
    }
    Seen {
        request_line,
        headers,
        body,
    }
}

fn provider(base: &str) -> OpenAiCompatible {
    OpenAiCompatible::new(OpenAiConfig::new("test", base, "model-x").with_api_key(CANARY)).unwrap()
}

fn request() -> ChatRequest<'static> {
    static MESSAGES: std::sync::LazyLock<[ChatMessage; 2]> =
        std::sync::LazyLock::new(|| [ChatMessage::system("be brief"), ChatMessage::user("hello")]);
    static TOOLS: std::sync::LazyLock<[ToolDefinition; 1]> = std::sync::LazyLock::new(|| {
        [ToolDefinition {
            name: "read_file".into(),
            description: "Reads a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }]
    });
    ChatRequest {
        model: "",
        messages: MESSAGES.iter().collect(),
        tools: &*TOOLS,
    }
}

/// Runs `complete` and returns the result with every event it streamed.
async fn complete(
    provider: &OpenAiCompatible,
    cancel: &CancelSignal,
) -> (
    Result<rho_core::provider::ChatResponse, ProviderError>,
    Vec<StreamEvent>,
) {
    let events = Mutex::new(Vec::new());
    let on_event = |e: StreamEvent| events.lock().unwrap().push(e);
    let result = provider.complete(&request(), &on_event, cancel).await;
    (result, events.into_inner().unwrap())
}

fn data(value: Value) -> String {
    format!("data: {value}\n\n")
}

fn delta(delta: Value) -> String {
    data(
        json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]}),
    )
}

#[tokio::test]
async fn text_deltas_stream_in_order_and_usage_is_parsed() {
    let body = [
        ": keep-alive\n\n".to_owned(),
        delta(json!({"role": "assistant", "content": ""})),
        delta(json!({"reasoning_content": "Short "})),
        delta(json!({"reasoning_content": "answer."})),
        delta(json!({"content": "Hello"})),
        delta(json!({"content": ", "})),
        delta(json!({"content": "world"})),
        data(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
        data(
            json!({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}),
        ),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat()
    .replace('\n', "\r\n");
    let mut server = serve(vec![Reply::sse(&body, 7)]).await;
    let (result, events) = complete(&provider(&server.base), &CancelSignal::new()).await;
    let response = result.unwrap();
    assert_eq!(
        events,
        [
            StreamEvent::Reasoning("Short ".into()),
            StreamEvent::Reasoning("answer.".into()),
            StreamEvent::Text("Hello".into()),
            StreamEvent::Text(", ".into()),
            StreamEvent::Text("world".into()),
        ]
    );
    assert_eq!(response.content, "Hello, world");
    assert_eq!(response.reasoning, "Short answer.");
    assert_eq!(response.finish_reason, FinishReason::Stop);
    assert_eq!(
        (
            response.usage.input_tokens,
            response.usage.output_tokens,
            response.usage.total_tokens,
            response.usage.request_count
        ),
        (11, 3, 14, 1)
    );

    let seen = server.seen.recv().await.unwrap();
    assert_eq!(seen.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(
        seen.header("authorization"),
        Some(format!("Bearer {CANARY}").as_str())
    );
    let sent = seen.json();
    assert_eq!(sent["model"], "model-x");
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"]["include_usage"], true);
    assert_eq!(
        sent["messages"][1],
        json!({"role": "user", "content": "hello"})
    );
    assert_eq!(sent["tools"][0]["function"]["name"], "read_file");
}

#[tokio::test]
async fn interleaved_tool_calls_are_assembled() {
    let calls = |v: Value| delta(json!({"tool_calls": v}));
    let pieces = [
        delta(json!({"role": "assistant", "content": null})),
        calls(
            json!([{"index": 0, "id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": ""}}]),
        ),
        calls(
            json!([{"index": 1, "id": "call_b", "type": "function", "function": {"name": "read_file", "arguments": "{\"pa"}}]),
        ),
        calls(json!([{"index": 0, "function": {"arguments": "{\"path\": \"a"}}])),
        calls(json!([{"index": 1, "function": {"arguments": "th\": \"b.txt\"}"}}])),
        calls(json!([{"index": 0, "function": {"arguments": ".txt\"}"}}])),
        data(
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 5, "completion_tokens": 9}}),
        ),
        "data: [DONE]\n\n".to_owned(),
    ];
    // One event split over two HTTP chunks, too.
    let joined = pieces.concat();
    let (a, b) = joined.split_at(joined.len() / 2 + 3);
    let mut server = serve(vec![Reply::chunked_sse(&[a, b])]).await;
    let (result, events) = complete(&provider(&server.base), &CancelSignal::new()).await;
    let response = result.unwrap();
    assert!(events.is_empty());
    assert_eq!(
        response.tool_calls,
        [
            ToolCall {
                id: "call_a".into(),
                name: "read_file".into(),
                arguments: "{\"path\": \"a.txt\"}".into()
            },
            ToolCall {
                id: "call_b".into(),
                name: "read_file".into(),
                arguments: "{\"path\": \"b.txt\"}".into()
            },
        ]
    );
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage.total_tokens, 14);
    server.seen.recv().await.unwrap();
}

#[tokio::test]
async fn plain_json_answer_is_understood() {
    let body = json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "Plain answer"}}],
        "usage": {"prompt_tokens": 2, "completion_tokens": 2, "total_tokens": 4, "cost": 0.5}
    });
    let server = serve(vec![Reply::full(
        "200 OK",
        "application/json; charset=utf-8",
        &body.to_string(),
    )])
    .await;
    let (result, events) = complete(&provider(&server.base), &CancelSignal::new()).await;
    let response = result.unwrap();
    assert_eq!(response.content, "Plain answer");
    assert_eq!(events, [StreamEvent::Text("Plain answer".into())]);
    assert_eq!(response.usage.total_tokens, 4);
    assert_eq!(response.usage.total_cost, 0.5);
}

#[tokio::test]
async fn http_error_carries_the_message_and_never_the_key() {
    let body = json!({"error": {
        "message": format!("Incorrect API key provided: {CANARY}."),
        "type": "invalid_request_error", "code": "invalid_api_key"
    }});
    let server = serve(vec![Reply::full(
        "401 Unauthorized",
        "application/json",
        &body.to_string(),
    )])
    .await;
    let (result, _) = complete(&provider(&server.base), &CancelSignal::new()).await;
    let err = result.unwrap_err();
    let ProviderError::Http {
        status, message, ..
    } = &err
    else {
        panic!("expected an HTTP error, got {err:?}");
    };
    assert_eq!(*status, 401);
    assert!(message.contains("Incorrect API key provided"), "{message}");
    for text in [err.to_string(), format!("{err:?}")] {
        assert!(!text.contains(CANARY), "{text}");
        assert!(!text.contains("5f0e1d2c3b4a"), "{text}");
    }
    assert!(err.to_string().contains("HTTP 401"));
}

#[tokio::test]
async fn non_json_error_body_is_bounded_text() {
    let body = format!("upstream exploded\n{}", "x".repeat(100_000));
    let server = serve(vec![Reply::full("502 Bad Gateway", "text/plain", &body)]).await;
    let (result, _) = complete(&provider(&server.base), &CancelSignal::new()).await;
    match result.unwrap_err() {
        ProviderError::Http {
            status, message, ..
        } => {
            assert_eq!(status, 502);
            // One line: the body's first, never the rest of a long page.
            assert_eq!(message, "upstream exploded");
        }
        other => panic!("{other:?}"),
    }
    let body = "y".repeat(100_000);
    let server = serve(vec![Reply::full("502 Bad Gateway", "text/plain", &body)]).await;
    let (result, _) = complete(&provider(&server.base), &CancelSignal::new()).await;
    match result.unwrap_err() {
        ProviderError::Http { message, .. } => {
            assert!(message.starts_with("yyy"), "{message}");
            assert!(message.chars().count() <= 1001);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let server = serve(vec![Reply::full(
        "307 Temporary Redirect\r\nLocation: http://127.0.0.1:9/v1/chat/completions",
        "text/plain",
        "",
    )])
    .await;
    let (result, _) = complete(&provider(&server.base), &CancelSignal::new()).await;
    assert!(
        matches!(result, Err(ProviderError::Http { status: 307, .. })),
        "{result:?}"
    );
}

#[tokio::test]
async fn cancel_mid_stream_returns_promptly_and_closes_the_connection() {
    let mut reply = Reply::sse(&delta(json!({"content": "first"})), 1 << 20);
    reply.hold_open = true;
    let mut server = serve(vec![reply]).await;
    let provider = provider(&server.base);
    let cancel = CancelSignal::new();
    let events = Mutex::new(Vec::new());
    let on_event = |e: StreamEvent| events.lock().unwrap().push(e);
    let request = request();
    let call = provider.complete(&request, &on_event, &cancel);
    let canceller = async {
        while events.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        cancel.cancel();
        Instant::now()
    };
    let (result, cancelled_at) = tokio::join!(call, canceller);
    assert!(
        cancelled_at.elapsed() < Duration::from_millis(200),
        "{:?}",
        cancelled_at.elapsed()
    );
    assert!(
        matches!(result, Err(ProviderError::Cancelled)),
        "{result:?}"
    );
    assert_eq!(
        events.into_inner().unwrap(),
        [StreamEvent::Text("first".into())]
    );
    tokio::time::timeout(Duration::from_secs(5), server.closed.recv())
        .await
        .expect("the connection was not closed after cancel")
        .unwrap();
}

#[tokio::test]
async fn cancel_before_the_answer_starts() {
    let mut reply = Reply::full("200 OK", "text/event-stream", "");
    reply.head = String::new();
    reply.hold_open = true;
    let server = serve(vec![reply]).await;
    let provider = provider(&server.base);
    let cancel = CancelSignal::new();
    let request = request();
    let started = Instant::now();
    let (result, ()) = tokio::join!(provider.complete(&request, &|_| {}, &cancel), async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    });
    assert!(
        matches!(result, Err(ProviderError::Cancelled)),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn a_silent_stream_times_out() {
    let mut reply = Reply::sse(&delta(json!({"content": "first"})), 1 << 20);
    reply.hold_open = true;
    let server = serve(vec![reply]).await;
    let mut config = OpenAiConfig::new("test", &server.base, "m");
    config.idle_timeout = Duration::from_millis(200);
    let provider = OpenAiCompatible::new(config).unwrap();
    let (result, events) = complete(&provider, &CancelSignal::new()).await;
    assert_eq!(events.len(), 1);
    assert!(
        matches!(result, Err(ProviderError::Timeout { seconds: 1, .. })),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_stream_cut_short_is_an_error() {
    let server = serve(vec![Reply::sse(&delta(json!({"content": "par"})), 64)]).await;
    let (result, _) = complete(&provider(&server.base), &CancelSignal::new()).await;
    assert!(
        matches!(&result, Err(ProviderError::Protocol { message, .. }) if message.contains("[DONE]")),
        "{result:?}"
    );
}

#[tokio::test]
async fn an_unreachable_endpoint_is_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let (result, _) = complete(&provider(&base), &CancelSignal::new()).await;
    let err = result.unwrap_err();
    assert!(matches!(err, ProviderError::Connect { .. }), "{err:?}");
    assert!(!format!("{err:?}").contains(CANARY));
}

#[test]
fn plain_http_to_a_remote_host_is_refused() {
    let err = OpenAiCompatible::new(
        OpenAiConfig::new("remote", "http://api.example.com/v1", "m").with_api_key(CANARY),
    )
    .unwrap_err();
    assert!(matches!(err, ProviderError::Config { .. }), "{err:?}");
    assert!(err.to_string().contains("https"), "{err}");
    assert!(!format!("{err:?}").contains(CANARY));
    assert!(
        OpenAiCompatible::new(OpenAiConfig::new("local", "http://127.0.0.1:8080/v1", "m")).is_ok()
    );
    assert!(
        OpenAiCompatible::new(OpenAiConfig::new("tls", "https://api.example.com/v1", "m")).is_ok()
    );
}

#[tokio::test]
async fn list_models_reads_the_sibling_models_url() {
    let body = json!({"object": "list", "data": [{"id": "a", "object": "model"}, {"id": "b"}]});
    let mut server = serve(vec![Reply::full(
        "200 OK",
        "application/json",
        &body.to_string(),
    )])
    .await;
    let endpoint = format!("{}/chat/completions", server.base);
    let models = provider(&endpoint).list_models().await.unwrap();
    assert_eq!(models, ["a", "b"]);
    let seen = server.seen.recv().await.unwrap();
    assert_eq!(seen.request_line, "GET /v1/models HTTP/1.1");
    assert!(seen.header("authorization").is_some());
}
