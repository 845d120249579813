//! `fake-model`: a scripted OpenAI-compatible chat-completions server on 127.0.0.1 that rho's
//! end-to-end tests use instead of a hosted model.
//!
//! `fake-model --script <file.json> [--port N] [--log <file.jsonl>] [--port-file <path>]`
//! binds (port 0: any free port), writes the port to `--port-file` (atomically), prints
//! `listening <port>`, and serves until killed. Each POST to `/v1/chat/completions` (or
//! `/chat/completions`) answers with the next turn of the script, streamed as SSE when the
//! request asks for `stream: true`, else as one JSON completion. `GET /v1/models` lists two
//! models. `--log` appends every request (method, path, whether an `Authorization` header was
//! present, body) as one JSON line. HTTP is hand-written and minimal: one request per
//! connection, `Content-Length` bodies only.
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line server owns both streams

use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

#[path = "../fake_http.rs"]
mod fake_http;
use fake_http::{Request, write_json};

const USAGE: &str =
    "usage: fake-model --script <file.json> [--port N] [--log <file.jsonl>] [--port-file <path>]";

/// One scripted answer. Every field is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Turn {
    #[serde(default)]
    content: String,
    #[serde(default)]
    reasoning: String,
    #[serde(default)]
    tool_calls: Vec<ScriptCall>,
    finish_reason: Option<String>,
    usage: Option<Map<String, Value>>,
    #[serde(default)]
    delay_ms: u64,
    #[serde(default)]
    chunk_delay_ms: u64,
    status: Option<u16>,
    error: Option<String>,
    expect: Option<Expect>,
}

/// One scripted tool call. `arguments`: an object (serialized) or a string (sent verbatim).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptCall {
    /// Absent: `call_<turn>_<n>`; empty: no id on the wire.
    id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

/// What the request must look like for the turn to be served.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    last_role: Option<String>,
    last_message_contains: Option<String>,
    any_message_contains: Option<String>,
    #[serde(default)]
    tools_include: Vec<String>,
    model: Option<String>,
}

struct Args {
    script: PathBuf,
    port: u16,
    log: Option<PathBuf>,
    port_file: Option<PathBuf>,
}

struct State {
    turns: Vec<Turn>,
    next: Mutex<usize>,
    log: Option<Mutex<File>>,
}

fn parse_args() -> Result<Args, String> {
    let mut script = None;
    let mut port = 0;
    let mut log = None;
    let mut port_file = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--script" => script = Some(PathBuf::from(value()?)),
            "--port" => {
                let text = value()?;
                port = text
                    .parse()
                    .map_err(|_| format!("--port {text:?} is not a port number"))?;
            }
            "--log" => log = Some(PathBuf::from(value()?)),
            "--port-file" => port_file = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Args {
        script: script.ok_or("--script is required")?,
        port,
        log,
        port_file,
    })
}

fn load_script(path: &PathBuf) -> Result<Vec<Turn>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let turns: Vec<Turn> = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a valid script: {e}", path.display()))?;
    for (n, turn) in turns.iter().enumerate() {
        if let Some(status) = turn.status
            && !(200..=599).contains(&status)
        {
            return Err(format!("turn {}: status {status} is not 200-599", n + 1));
        }
    }
    Ok(turns)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("fake-model: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let turns = match load_script(&args.script) {
        Ok(turns) => turns,
        Err(message) => {
            eprintln!("fake-model: {message}");
            return ExitCode::from(2);
        }
    };
    fake_http::run("fake-model", serve(args, turns))
}

async fn serve(args: Args, turns: Vec<Turn>) -> Result<(), String> {
    let log = match &args.log {
        Some(path) => Some(Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?,
        )),
        None => None,
    };
    let listener = fake_http::listen(args.port, args.port_file.as_deref()).await?;
    let state = Arc::new(State {
        turns,
        next: Mutex::new(0),
        log,
    });
    fake_http::accept_forever(listener, state, "fake-model", |stream, state| async move {
        handle(stream, &state).await
    })
    .await;
    Ok(())
}

async fn handle(mut stream: TcpStream, state: &State) -> std::io::Result<()> {
    let request = match fake_http::receive(&mut stream, &["authorization"]).await? {
        Ok(request) => request,
        Err((status, message)) => return write_error(&mut stream, status, &message).await,
    };
    let body: Option<Value> = serde_json::from_slice(&request.body).ok();
    log_request(state, &request, body.as_ref());
    let is_chat = matches!(
        request.path.as_str(),
        "/v1/chat/completions" | "/chat/completions"
    );
    let is_models = matches!(request.path.as_str(), "/v1/models" | "/models");
    match (request.method.as_str(), is_chat, is_models) {
        ("POST", true, _) => match body {
            Some(body) if body.is_object() => chat(&mut stream, state, &body).await,
            _ => write_error(&mut stream, 400, "the request body is not a JSON object").await,
        },
        ("GET", _, true) => {
            let list = json!({"object": "list", "data": [
                {"id": "fake-model-1", "object": "model"},
                {"id": "fake-model-2", "object": "model"},
            ]});
            write_json(&mut stream, 200, &list).await
        }
        (_, true, _) | (_, _, true) => write_error(&mut stream, 405, "method not allowed").await,
        _ => write_error(&mut stream, 404, &format!("no route for {}", request.path)).await,
    }
}

fn log_request(state: &State, request: &Request, body: Option<&Value>) {
    let Some(log) = &state.log else {
        return;
    };
    let body = match body {
        Some(value) => value.clone(),
        None if request.body.is_empty() => Value::Null,
        None => Value::String(String::from_utf8_lossy(&request.body).into_owned()),
    };
    let line = json!({
        "method": request.method,
        "path": request.path,
        "authorization": request.authorization,
        "body": body,
    });
    let mut file = log.lock().unwrap_or_else(PoisonError::into_inner);
    if let Err(e) = writeln!(file, "{line}").and_then(|()| file.flush()) {
        eprintln!("fake-model: cannot write the log: {e}");
    }
}

/// Text of a message's `content`: a string, or the text parts of an array.
fn content_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// Every way `body` fails `expect`, empty when it satisfies it.
fn mismatches(expect: &Expect, body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let last = messages.last();
    if let Some(role) = &expect.last_role {
        let actual = last.and_then(|m| m.get("role")).and_then(Value::as_str);
        if actual != Some(role.as_str()) {
            problems.push(format!(
                "last_role: expected {role:?}, the last message has role {}",
                actual.map_or("(none)".to_owned(), |a| format!("{a:?}"))
            ));
        }
    }
    if let Some(needle) = &expect.last_message_contains {
        let text = last.map(content_text).unwrap_or_default();
        if !text.contains(needle.as_str()) {
            problems.push(format!(
                "last_message_contains: {needle:?} is not in the last message {:?}",
                text.chars().take(500).collect::<String>()
            ));
        }
    }
    if let Some(needle) = &expect.any_message_contains
        && !messages
            .iter()
            .any(|m| content_text(m).contains(needle.as_str()))
    {
        problems.push(format!(
            "any_message_contains: {needle:?} is in none of the {} messages",
            messages.len()
        ));
    }
    let tools: Vec<&str> = body
        .get("tools")
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    for name in &expect.tools_include {
        if !tools.contains(&name.as_str()) {
            problems.push(format!(
                "tools_include: {name:?} is not among the offered tools {tools:?}"
            ));
        }
    }
    if let Some(model) = &expect.model {
        let actual = body.get("model").and_then(Value::as_str);
        if actual != Some(model.as_str()) {
            problems.push(format!(
                "model: expected {model:?}, got {}",
                actual.map_or("(none)".to_owned(), |a| format!("{a:?}"))
            ));
        }
    }
    problems
}

/// The tool calls of a turn as (id or none, name, argument text).
fn calls_of(turn: &Turn, number: usize) -> Vec<(Option<String>, String, String)> {
    turn.tool_calls
        .iter()
        .enumerate()
        .map(|(n, call)| {
            let id = match &call.id {
                None => Some(format!("call_{number}_{}", n + 1)),
                Some(id) if id.is_empty() => None,
                Some(id) => Some(id.clone()),
            };
            let arguments = match &call.arguments {
                None => "{}".to_owned(),
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
            };
            (id, call.name.clone(), arguments)
        })
        .collect()
}

fn usage_of(turn: &Turn, body: &Value, calls: &[(Option<String>, String, String)]) -> Value {
    let mut usage = turn.usage.clone().unwrap_or_default();
    let number = |usage: &Map<String, Value>, key: &str| usage.get(key).and_then(Value::as_u64);
    let prompt =
        number(&usage, "prompt_tokens").unwrap_or_else(|| body.to_string().len() as u64 / 4);
    let generated: usize = turn.content.len()
        + turn.reasoning.len()
        + calls.iter().map(|(_, _, args)| args.len()).sum::<usize>();
    let completion = number(&usage, "completion_tokens").unwrap_or(generated as u64 / 4 + 1);
    let total = number(&usage, "total_tokens").unwrap_or(prompt + completion);
    usage.insert("prompt_tokens".into(), json!(prompt));
    usage.insert("completion_tokens".into(), json!(completion));
    usage.insert("total_tokens".into(), json!(total));
    Value::Object(usage)
}

/// Splits `text` into word-sized pieces (each keeps its trailing space).
fn words(text: &str) -> Vec<String> {
    text.split_inclusive(' ').map(str::to_owned).collect()
}

/// Splits `text` into 2 or 3 pieces at character boundaries (the first may be empty).
fn fragments(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let cuts = if chars.len() >= 3 {
        vec![0, chars.len() / 3, 2 * chars.len() / 3, chars.len()]
    } else {
        vec![0, 0, chars.len()]
    };
    cuts.windows(2)
        .map(|w| match w {
            [a, b] => chars.get(*a..*b).unwrap_or_default().iter().collect(),
            _ => String::new(),
        })
        .collect()
}

async fn chat(stream: &mut TcpStream, state: &State, body: &Value) -> std::io::Result<()> {
    let index = {
        let mut next = state.next.lock().unwrap_or_else(PoisonError::into_inner);
        let index = *next;
        *next += 1;
        index
    };
    let Some(turn) = state.turns.get(index) else {
        return write_error(stream, 500, "script exhausted").await;
    };
    let number = index + 1;
    if turn.delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(turn.delay_ms)).await;
    }
    if let Some(expect) = &turn.expect {
        let problems = mismatches(expect, body);
        if !problems.is_empty() {
            let message = format!(
                "fake-model turn {number}: request does not match expect: {}",
                problems.join("; ")
            );
            eprintln!("{message}");
            return write_error(stream, 400, &message).await;
        }
    }
    let status = turn
        .status
        .unwrap_or(if turn.error.is_some() { 500 } else { 200 });
    if status != 200 {
        let message = turn.error.as_deref().unwrap_or("scripted error");
        return write_error(stream, status, message).await;
    }
    let calls = calls_of(turn, number);
    let finish_reason = turn.finish_reason.clone().unwrap_or_else(|| {
        if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        }
        .to_owned()
    });
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .unwrap_or("fake-model-1");
    let id = format!("chatcmpl-fake-{number}");
    let usage = usage_of(turn, body, &calls);
    if body.get("stream").and_then(Value::as_bool) != Some(true) {
        let mut message = Map::new();
        message.insert("role".into(), json!("assistant"));
        let content = if turn.content.is_empty() && !calls.is_empty() {
            Value::Null
        } else {
            json!(turn.content)
        };
        message.insert("content".into(), content);
        if !turn.reasoning.is_empty() {
            message.insert("reasoning_content".into(), json!(turn.reasoning));
        }
        if !calls.is_empty() {
            let wire: Vec<Value> = calls
                .iter()
                .map(|(id, name, arguments)| {
                    let mut call = json!({"type": "function", "function": {"name": name, "arguments": arguments}});
                    if let (Some(id), Some(object)) = (id, call.as_object_mut()) {
                        object.insert("id".into(), json!(id));
                    }
                    call
                })
                .collect();
            message.insert("tool_calls".into(), Value::Array(wire));
        }
        let completion = json!({
            "id": id, "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": usage,
        });
        return write_json(stream, 200, &completion).await;
    }
    let chunk = |choices: Value| json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model, "choices": choices});
    let delta = |delta: Value| chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}]));
    let mut events = vec![delta(json!({"role": "assistant", "content": ""}))];
    for word in words(&turn.reasoning) {
        events.push(delta(json!({"reasoning_content": word})));
    }
    for word in words(&turn.content) {
        events.push(delta(json!({"content": word})));
    }
    for (n, (id, name, arguments)) in calls.iter().enumerate() {
        let mut opening =
            json!({"index": n, "type": "function", "function": {"name": name, "arguments": ""}});
        if let (Some(id), Some(object)) = (id, opening.as_object_mut()) {
            object.insert("id".into(), json!(id));
        }
        events.push(delta(json!({"tool_calls": [opening]})));
        for fragment in fragments(arguments) {
            events.push(delta(
                json!({"tool_calls": [{"index": n, "function": {"arguments": fragment}}]}),
            ));
        }
    }
    events.push(chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": finish_reason}]),
    ));
    let mut usage_chunk = chunk(json!([]));
    if let Some(object) = usage_chunk.as_object_mut() {
        object.insert("usage".into(), usage);
    }
    events.push(usage_chunk);
    stream
        .write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
              Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        )
        .await?;
    let mut payloads: Vec<String> = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    payloads.push("data: [DONE]\n\n".into());
    for (n, payload) in payloads.iter().enumerate() {
        if n > 0 && turn.chunk_delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(turn.chunk_delay_ms)).await;
        }
        let framed = format!("{:x}\r\n{payload}\r\n", payload.len());
        stream.write_all(framed.as_bytes()).await?;
        stream.flush().await?;
    }
    stream.write_all(b"0\r\n\r\n").await?;
    stream.shutdown().await
}

async fn write_error(stream: &mut TcpStream, status: u16, message: &str) -> std::io::Result<()> {
    let body = json!({"error": {"message": message, "type": "fake_model_error", "code": status}});
    write_json(stream, status, &body).await
}
