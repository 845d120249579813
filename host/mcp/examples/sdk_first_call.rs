//! A bare `rmcp` client for `rho-bench lazy-first-call`: the second baseline of that bench,
//! the MCP SDK rho is built on doing the same first call with nothing of rho around it.
//!
//! `sdk_first_call SERVER [ARGS...]` reads one line per run from stdin. For each `run` it
//! spawns `SERVER ARGS...` (its environment is this process's, which the bench clears), and
//! does
//! `rmcp`'s `initialize` handshake (the era a known server's cache entry records, so no
//! `server/discover` probe, as rho does), calls the server's `echo` tool, and times that from
//! just before the spawn to the call's result; then it times a second call on the same
//! process, stops the server and writes `<first µs> <second µs>` on one line (`error: …`
//! when a step failed). End of input ends it.
//!
//! It runs on a two-worker tokio runtime, as `rho` does, each run on the runtime's main task.
//! It lives in `rho-mcp` because `rmcp` may appear in no other crate (`docs/benchmarks.md`,
//! `lazy-first-call`).
//!
//! `cargo build --release -p rho-mcp --example sdk_first_call`

// A benchmark helper owns its stdout (one line a run) and reports usage on stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::serve_client_with_lifecycle;
use rmcp::service::ClientLifecycleMode;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(server) = args.next() else {
        eprintln!("usage: sdk_first_call SERVER [ARGS...]  (then `run` lines on stdin)");
        return ExitCode::from(2);
    };
    let server_args: Vec<_> = args.collect();
    let mut arguments = Map::new();
    arguments.insert("call".into(), Value::from(1));
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if line.trim() != "run" {
            println!("error: expected `run`, got {line:?}");
            continue;
        }
        match one_run(&server, &server_args, &arguments).await {
            Ok((first, second)) => println!("{} {}", first.as_micros(), second.as_micros()),
            Err(e) => println!("error: {e}"),
        }
    }
    ExitCode::SUCCESS
}

/// Spawn, handshake and first call (timed together), then a second call (timed alone).
async fn one_run(
    server: &std::ffi::OsStr,
    args: &[std::ffi::OsString],
    arguments: &Map<String, Value>,
) -> Result<(Duration, Duration), String> {
    let start = Instant::now();
    let mut child = tokio::process::Command::new(server)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", server.to_string_lossy()))?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err("the server has no stdio pipes".into());
    };
    let service = serve_client_with_lifecycle((), (stdout, stdin), ClientLifecycleMode::Initialize)
        .await
        .map_err(|e| format!("handshake failed: {e}"))?;
    let call = || CallToolRequestParams::new("echo").with_arguments(arguments.clone());
    let result = service
        .call_tool(call())
        .await
        .map_err(|e| format!("first call failed: {e}"))?;
    let first = start.elapsed();
    check_echo(&result, "first")?;
    let start = Instant::now();
    let result = service
        .call_tool(call())
        .await
        .map_err(|e| format!("second call failed: {e}"))?;
    let second = start.elapsed();
    check_echo(&result, "second")?;
    drop(service);
    let _ = child.kill().await;
    Ok((first, second))
}

/// Fails unless `result` is `fake-mcp`'s answer to `echo` (as the bench checks its bare
/// client's): checked after the clock stops.
fn check_echo(result: &rmcp::model::CallToolResult, which: &str) -> Result<(), String> {
    let text = serde_json::to_value(&result.content)
        .ok()
        .and_then(|content| content[0]["text"].as_str().map(str::to_owned))
        .unwrap_or_default();
    if result.is_error == Some(true) || !text.starts_with("called echo") {
        return Err(format!("the {which} call did not echo: {text:?}"));
    }
    Ok(())
}
