//! `fake-anthropic`: a scripted Anthropic Messages endpoint on 127.0.0.1 for the end-to-end
//! tests of the Claude CLI runtime (the real Claude Code CLI is pointed at it with
//! `ANTHROPIC_BASE_URL`).
//!
//! `fake-anthropic --script <file.json> [--log <file.jsonl>] [--port-file <path>]` binds a free
//! port, writes it to `--port-file` (atomically), prints `listening <port>`, and serves until
//! killed. Each `POST /v1/messages` that offers tools (the agent's own requests) answers with
//! the next turn of the script as the Messages API streams it (`message_start`,
//! `content_block_start/delta/stop`, `message_delta`, `message_stop`); a turn is
//! `{"text": "..."}`, `{"tool_use": {"name": "Read", "input": {...}}}`, or `{"stall": "..."}`
//! (that text, then nothing until the connection closes). Other requests (no tools: titles,
//! summaries) get a short text; `count_tokens` gets a count. `--log` appends every request as
//! one JSON line: method, path, model, whether it streamed, how many tools it offered, whether
//! an API key header came (never its value), the last user text (text blocks, and tool
//! results given as a string) and every text of the conversation (`texts`). HTTP is minimal: one
//! request per connection, `Content-Length` bodies only.
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line server owns both streams

use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[path = "../fake_http.rs"]
mod fake_http;
use fake_http::{Request, write_json};

const USAGE: &str =
    "usage: fake-anthropic --script <file.json> [--log <file.jsonl>] [--port-file <path>]";

/// One scripted answer to the agent.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
enum Turn {
    /// Text, streamed in a few deltas.
    Text(String),
    /// One call of one of Claude's tools.
    ToolUse { name: String, input: Value },
    /// This text, then nothing more.
    Stall(String),
}

struct State {
    turns: Vec<Turn>,
    next: Mutex<usize>,
    log: Option<Mutex<File>>,
}

fn main() -> ExitCode {
    let mut script = None;
    let mut log = None;
    let mut port_file = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next();
        match (flag.as_str(), value) {
            ("--script", Some(v)) => script = Some(PathBuf::from(v)),
            ("--log", Some(v)) => log = Some(PathBuf::from(v)),
            ("--port-file", Some(v)) => port_file = Some(PathBuf::from(v)),
            _ => {
                eprintln!("fake-anthropic: bad argument {flag:?}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(script) = script else {
        eprintln!("fake-anthropic: --script is required\n{USAGE}");
        return ExitCode::from(2);
    };
    let turns: Vec<Turn> = match std::fs::read_to_string(&script)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(turns) => turns,
        Err(e) => {
            eprintln!("fake-anthropic: {}: {e}", script.display());
            return ExitCode::from(2);
        }
    };
    let log = match log.map(|path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))
    }) {
        None => None,
        Some(Ok(file)) => Some(Mutex::new(file)),
        Some(Err(e)) => {
            eprintln!("fake-anthropic: {e}");
            return ExitCode::FAILURE;
        }
    };
    let state = Arc::new(State {
        turns,
        next: Mutex::new(0),
        log,
    });
    fake_http::run("fake-anthropic", serve(state, port_file))
}

async fn serve(state: Arc<State>, port_file: Option<PathBuf>) -> Result<(), String> {
    let listener = fake_http::listen(0, port_file.as_deref()).await?;
    fake_http::accept_forever(
        listener,
        state,
        "fake-anthropic",
        |stream, state| async move { handle(stream, &state).await },
    )
    .await;
    Ok(())
}

async fn handle(mut stream: TcpStream, state: &State) -> std::io::Result<()> {
    let request = match fake_http::receive(&mut stream, &["authorization", "x-api-key"]).await? {
        Ok(request) => request,
        Err((status, message)) => return write_error(&mut stream, status, &message).await,
    };
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    log_request(state, &request, &body);
    match (request.method.as_str(), request.path.as_str()) {
        ("POST", "/v1/messages/count_tokens") => {
            write_json(&mut stream, 200, &json!({"input_tokens": 10})).await
        }
        ("POST", "/v1/messages") => {
            let offers_tools = body
                .get("tools")
                .and_then(Value::as_array)
                .is_some_and(|tools| !tools.is_empty());
            let streamed = body.get("stream").and_then(Value::as_bool) == Some(true);
            let model = body.get("model").and_then(Value::as_str).unwrap_or("fake");
            if !offers_tools {
                let text = "A title";
                if streamed {
                    return write_stream(&mut stream, model, &Turn::Text(text.into()), 0).await;
                }
                let message = json!({
                    "id": "msg_side", "type": "message", "role": "assistant", "model": model,
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn", "stop_sequence": null,
                    "usage": {"input_tokens": 5, "output_tokens": 2},
                });
                return write_json(&mut stream, 200, &message).await;
            }
            let number = {
                let mut next = state.next.lock().unwrap_or_else(PoisonError::into_inner);
                *next += 1;
                *next
            };
            match state.turns.get(number - 1) {
                Some(turn) if streamed => write_stream(&mut stream, model, turn, number).await,
                Some(_) => write_error(&mut stream, 400, "the agent's requests must stream").await,
                None => {
                    write_error(
                        &mut stream,
                        500,
                        &format!("the script has no turn {number}"),
                    )
                    .await
                }
            }
        }
        _ => write_error(&mut stream, 404, &format!("no route for {}", request.path)).await,
    }
}

/// The texts of one message's `content`: the string itself, or each block's `text` (a tool
/// result's `content` when it is a string).
fn content_texts(content: &Value) -> Vec<&str> {
    match content {
        Value::String(text) => vec![text.as_str()],
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| {
                p.get("text")
                    .or_else(|| p.get("content"))
                    .and_then(Value::as_str)
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn log_request(state: &State, request: &Request, body: &Value) {
    let Some(log) = &state.log else {
        return;
    };
    let messages = || {
        body.get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    };
    let last_user = messages()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|message| content_texts(&message["content"]).join("\n"));
    // Every text of the conversation (text blocks, and tool results given as a string), so a
    // test can tell an earlier turn reached the model.
    let texts: Vec<&str> = messages()
        .flat_map(|message| content_texts(&message["content"]))
        .collect();
    let line = json!({
        "method": request.method,
        "path": request.path,
        "model": body.get("model"),
        "stream": body.get("stream"),
        "tools": body.get("tools").and_then(Value::as_array).map_or(0, Vec::len),
        "api_key": request.authorization,
        "last_user": last_user,
        "texts": texts,
    });
    let mut file = log.lock().unwrap_or_else(PoisonError::into_inner);
    let _ = writeln!(file, "{line}");
}

/// One Server-Sent Event.
fn event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// Streams `turn` as the Messages API does; a stall keeps the connection open afterwards.
async fn write_stream(
    stream: &mut TcpStream,
    model: &str,
    turn: &Turn,
    number: usize,
) -> std::io::Result<()> {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
                Connection: close\r\n\r\n";
    stream.write_all(head.as_bytes()).await?;
    let mut out = event(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": format!("msg_{number:04}"), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 12, "output_tokens": 1},
        }}),
    );
    let (text, stop_reason) = match turn {
        Turn::Text(text) | Turn::Stall(text) => (Some(text.as_str()), "end_turn"),
        Turn::ToolUse { .. } => (None, "tool_use"),
    };
    match (text, turn) {
        (Some(text), _) => {
            out += &event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "text", "text": ""}}),
            );
            let middle = text
                .char_indices()
                .nth(text.chars().count() / 2)
                .map_or(0, |(i, _)| i);
            for part in [&text[..middle], &text[middle..]] {
                out += &event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": part}}),
                );
            }
        }
        (None, Turn::ToolUse { name, input }) => {
            out += &event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": 0, "content_block": {
                    "type": "tool_use", "id": format!("toolu_{number:04}"), "name": name,
                    "input": {},
                }}),
            );
            out += &event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
            );
        }
        (None, _) => {}
    }
    if let Turn::Stall(_) = turn {
        stream.write_all(out.as_bytes()).await?;
        stream.flush().await?;
        // Nothing more: the client gives up or is stopped.
        let mut sink = [0u8; 1024];
        while stream.read(&mut sink).await? > 0 {}
        return Ok(());
    }
    out += &event(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": 0}),
    );
    out += &event(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason,
            "stop_sequence": null}, "usage": {"output_tokens": 7}}),
    );
    out += &event("message_stop", &json!({"type": "message_stop"}));
    stream.write_all(out.as_bytes()).await?;
    stream.flush().await?;
    stream.shutdown().await
}

async fn write_error(stream: &mut TcpStream, status: u16, message: &str) -> std::io::Result<()> {
    let body = json!({"type": "error", "error": {"type": "api_error", "message": message, "code": status}});
    write_json(stream, status, &body).await
}
