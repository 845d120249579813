//! `rho-bench lazy-first-call`: the first call of a lazy stdio server's tool in a `rho rpc`
//! session, which spawns the server, does the handshake and makes the call, against the bench
//! as a bare client doing the same to the same server over pipes.
//!
//! - **through rho:** a `rho rpc` session per run whose one server, `fake-mcp --mode ok`, is
//!   `startup = "lazy"` and known from the tool cache (filled once before timing by a session
//!   that started it in the background), with every tool call allowed. `fake-model` answers
//!   the first prompt with one call of `mcp__lazy__echo`; the call's time is from reading its
//!   `tool/call` line to reading its `tool/result` (as in `misbehaving`): the gate, the
//!   server's start (spawn, the handshake of the era the cache remembers, no listing before
//!   the call), the call, the result and its event, as a client sees them. A second prompt
//!   calls the tool again on the running server, for reference.
//! - **baseline:** the bench spawns the same `fake-mcp` and writes `initialize`, reads its
//!   answer, writes `notifications/initialized` and `tools/call echo`, and reads the result:
//!   from just before `spawn` to reading the result. A second `tools/call` on the same
//!   process is timed too, for reference. rho sends this server the same requests before its
//!   call (`host/mcp/tests/client_half/startup.rs` checks the sequence), so the difference is
//!   the implementation's.
//! - **SDK baseline:** `sdk_first_call` (an example of `rho-mcp`, next to the rho binary in
//!   `examples/`) does the same with `rmcp`, the MCP SDK rho is built on, on a two-worker
//!   tokio runtime as rho's, with nothing of rho around it: spawn, `initialize`, `tools/call
//!   echo`, timed in that process from just before the spawn to the result. It separates what
//!   the SDK and its runtime cost from what rho adds.
//!
//! rho and the baseline alternate, which goes first alternating too, with the SDK baseline
//! between them. Each server start appends its pid to a file: every rho session must start the
//! server exactly once, on the first call (none at `ready`), or the bench stops.

use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fakes::{
    FakeModel, fake_mcp_binary, fake_model_binary, helper_path, script_text as model_script,
};
use crate::json_lines;
use crate::lazy::{check_statuses, fill_cache, server_statuses, server_table, starts};
use crate::measure::Probe;
use crate::misbehaving::{TurnLines, check_reply, turn};
use crate::rpc_ready::{LineChild, LineCommand, UNREACHABLE_ENDPOINT, rpc_args};
use crate::scratch::Scratch;
use crate::stats::{Summary, print_paths, verdict};
use crate::{Error, Resolved, context, machine};

/// The issue's goal: rho's first call of a lazy server within this multiple of a bare client's
/// spawn, handshake and call.
const GOAL_RATIO: f64 = 1.2;

/// The lazy server's identity.
const SERVER: &str = "lazy";

/// Its tool as rho exports it to the model.
const TOOL: &str = "mcp__lazy__echo";

/// The id of the bare client's `initialize`.
const INITIALIZE_ID: u64 = 0;

/// The lines the bare client writes, built before any clock starts.
struct BareRequests {
    /// `initialize` (the era fake-mcp speaks, no client capabilities).
    initialize: String,
    /// `notifications/initialized`.
    initialized: String,
    /// `tools/call echo` 1 and 2.
    calls: [String; 2],
}

impl BareRequests {
    fn new() -> Self {
        let [initialize, initialized] = json_lines::mcp_handshake(INITIALIZE_ID);
        Self {
            initialize,
            initialized,
            calls: [1, 2].map(|id| json_lines::mcp_call("echo", id)),
        }
    }
}

/// The scripted answer after call `call` (1 or 2) of run `run`.
fn reply_of(run: usize, call: usize) -> String {
    format!("Run {run} call {call} answered.")
}

/// The model's script: per run, two prompts, each answered with one call of [`TOOL`], then a
/// sentence.
fn script_text(runs: usize) -> String {
    let turns: Vec<Value> = (0..runs)
        .flat_map(|run| [1, 2].map(|call| (run, call)))
        .flat_map(|(run, call)| {
            [
                json!({"tool_calls": [{"name": TOOL, "arguments": {"run": run, "call": call}}]}),
                json!({"content": reply_of(run, call)}),
            ]
        })
        .collect();
    model_script(&turns)
}

/// The configuration: every tool call allowed and the lazy server recording its starts in
/// `pids`.
fn config_text(fake: &Path, pids: &Path) -> String {
    format!(
        "[agent]\npermission_mode = \"allow-all\"\n\n{}",
        server_table(SERVER, fake, pids, "lazy")
    )
}

/// Checks one call's `tool/call` and `tool/result` lines and the turn's reply; returns the
/// call's latency.
fn check_call(run: usize, call: usize, seen: &TurnLines) -> Result<Duration, String> {
    let (Some(called), Some((result, line))) = (seen.call, &seen.result) else {
        return Err(format!(
            "run {run} call {call}: no tool/call and tool/result of {TOOL} before the response"
        ));
    };
    let message = json_lines::rpc_line(line)?;
    let params = &message["params"];
    let output = params["output"].as_str().unwrap_or("");
    if params["is_error"] != false || !output.starts_with("called echo") {
        return Err(format!("run {run} call {call}: the call failed: {line}"));
    }
    check_reply(&seen.response, &reply_of(run, call))?;
    Ok(result.saturating_duration_since(called))
}

/// Reads from the bare client's server up to the response with `id` (skipping notifications
/// and requests; fake-mcp writes its members in any order).
fn read_response(server: &mut LineChild, id: u64, line: &mut String) -> Result<(), String> {
    loop {
        server.read_line(line)?;
        if is_response(line, id) {
            return Ok(());
        }
    }
}

/// Whether `line` is the response with `id` (its `id` member, no `method`); a line that is not
/// JSON is not.
fn is_response(line: &str, id: u64) -> bool {
    serde_json::from_str::<Value>(line)
        .is_ok_and(|message| json_lines::is_response_to(&message, id))
}

/// Fails unless `line` is a successful result of the bare client's `tools/call`.
fn check_bare_result(line: &str) -> Result<(), String> {
    let message = json_lines::parse(line, "fake-mcp")?;
    let result = &message["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or("");
    if !text.starts_with("called echo") || result.get("isError").is_some() {
        return Err(format!("bare client: the call failed: {line}"));
    }
    Ok(())
}

/// One bare run: (spawn + handshake + first call, second call on the same process).
fn bare_run(
    command: &mut LineCommand,
    requests: &BareRequests,
    line: &mut String,
) -> Result<(Duration, Duration), String> {
    let start = Instant::now();
    let mut server = command.spawn()?;
    server.write_line(&requests.initialize)?;
    read_response(&mut server, INITIALIZE_ID, line)?;
    server.write_line(&requests.initialized)?;
    server.write_line(&requests.calls[0])?;
    read_response(&mut server, 1, line)?;
    let first = start.elapsed();
    check_bare_result(line)?;
    let start = Instant::now();
    server.write_line(&requests.calls[1])?;
    read_response(&mut server, 2, line)?;
    let second = start.elapsed();
    check_bare_result(line)?;
    server.finish()?;
    Ok((first, second))
}

/// One SDK-baseline run: asks the running `sdk_first_call` for one and reads its
/// `<first µs> <second µs>` line.
fn sdk_run(sdk: &mut LineChild, line: &mut String) -> Result<(Duration, Duration), String> {
    sdk.write_line("run")?;
    sdk.read_line(line)?;
    parse_sdk_line(line)
}

/// Reads `sdk_first_call`'s answer to one `run`.
fn parse_sdk_line(line: &str) -> Result<(Duration, Duration), String> {
    let mut fields = line.split_whitespace().map(str::parse::<u64>);
    match (fields.next(), fields.next(), fields.next()) {
        (Some(Ok(first)), Some(Ok(second)), None) => {
            Ok((Duration::from_micros(first), Duration::from_micros(second)))
        }
        _ => Err(format!("sdk_first_call answered {:?}", line.trim_end())),
    }
}

/// One rho run: a session with the server known, two prompts each calling its tool; returns
/// (first call, second call). `pids` must gain exactly one start, during the first call.
fn rho_run(
    command: &mut LineCommand,
    run: usize,
    pids: &Path,
) -> Result<(Duration, Duration), String> {
    let before = starts(pids)?;
    let mut rpc = command.spawn_ready()?;
    let at_ready = starts(pids)?;
    if at_ready != before {
        return Err(format!(
            "run {run}: the lazy server started before its first call ({} holds {at_ready} \
             pids, {before} before the session)",
            pids.display()
        ));
    }
    let mut calls = [Duration::ZERO; 2];
    for (call, slot) in (1..).zip(&mut calls) {
        let (_, seen) = turn(&mut rpc, call, TOOL)?;
        *slot = check_call(run, call, &seen)?;
        let now = starts(pids)?;
        if now != before + 1 {
            return Err(format!(
                "run {run}: after call {call} the server has started {} times in this \
                 session, expected once",
                now - before
            ));
        }
    }
    rpc.finish()?;
    Ok((calls[0], calls[1]))
}

/// Times both paths and prints the comparison.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let fake = fake_mcp_binary(resolved)?;
    let model_binary = fake_model_binary(resolved)?;
    let load_at_start = machine::load();
    let scratch = Scratch::new("lazy-first-call")?;
    let (home, project, rho_home) = scratch.layout()?;
    let env = [("HOME", home.as_path()), ("RHO_HOME", rho_home.as_path())];
    let pids = scratch.path().join("lazy.pids");
    let bare_pids = scratch.path().join("bare.pids");
    let config = scratch.path().join("config.toml");
    std::fs::write(&config, config_text(&fake, &pids))
        .map_err(|e| format!("cannot write {}: {e}", config.display()))?;

    // Fill the tool cache, then check that a session knows the server without starting it.
    let mut filler = LineCommand::new(Probe::new(
        "rho rpc (filling the cache)",
        &resolved.rho,
        &rpc_args(&project, Some(&config), &[], UNREACHABLE_ENDPOINT),
        &env,
        &project,
        scratch.path().join("rho-fill.stderr"),
    ))?;
    eprintln!(
        "rho-bench: filling the tool cache: `{}`",
        filler.command_line()
    );
    fill_cache(&mut filler, &rho_home, 1)?;
    {
        let mut rpc = filler.spawn_ready()?;
        let statuses = server_statuses(&mut rpc, 1)?;
        check_statuses(&statuses, 1, "known").map_err(|e| format!("after the fill: {e}"))?;
        rpc.finish()?;
    }
    let filled = starts(&pids)?;
    if filled != 1 {
        return Err(Error::Failed(format!(
            "filling the cache started the server {filled} times, expected once"
        )));
    }

    let total = o.warmup + o.runs;
    let script = scratch.path().join("script.json");
    std::fs::write(&script, script_text(total))
        .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
    let model = FakeModel::start(&model_binary, scratch.path(), "model", &script, None)?;
    let endpoint = model.endpoint();
    let mut rho = LineCommand::new(Probe::new(
        "rho rpc",
        &resolved.rho,
        &rpc_args(&project, Some(&config), &[], &endpoint),
        &env,
        &project,
        scratch.path().join("rho.stderr"),
    ))?;
    let bare_args = [
        OsStr::new("--mode"),
        OsStr::new("ok"),
        OsStr::new("--pid-file"),
        bare_pids.as_os_str(),
    ];
    let mut bare = LineCommand::new(Probe::new(
        "bare client's fake-mcp",
        &fake,
        &bare_args,
        &env,
        &project,
        scratch.path().join("bare.stderr"),
    ))?;
    let sdk_pids = scratch.path().join("sdk.pids");
    let sdk_binary = helper_path(
        resolved,
        "examples/sdk_first_call",
        "cargo build --release -p rho-mcp --example sdk_first_call",
    )?;
    let sdk_args = [
        fake.as_os_str(),
        OsStr::new("--mode"),
        OsStr::new("ok"),
        OsStr::new("--pid-file"),
        sdk_pids.as_os_str(),
    ];
    let mut sdk = LineCommand::new(Probe::new(
        "sdk_first_call",
        &sdk_binary,
        &sdk_args,
        &env,
        &project,
        scratch.path().join("sdk.stderr"),
    ))?
    .spawn()?;
    eprintln!("rho-bench: timing `{}`", rho.command_line());

    let requests = BareRequests::new();
    let mut line = String::new();
    let (mut rho_first, mut rho_second) = (Vec::new(), Vec::new());
    let (mut bare_first, mut bare_second) = (Vec::new(), Vec::new());
    let (mut sdk_first, mut sdk_second) = (Vec::new(), Vec::new());
    for i in 0..total {
        // Alternating which goes first keeps a slow drift in the machine from favouring either;
        // the SDK baseline runs between them.
        let (r, s, b) = if i % 2 == 0 {
            let r = rho_run(&mut rho, i, &pids)?;
            let s = sdk_run(&mut sdk, &mut line)?;
            (r, s, bare_run(&mut bare, &requests, &mut line)?)
        } else {
            let b = bare_run(&mut bare, &requests, &mut line)?;
            let s = sdk_run(&mut sdk, &mut line)?;
            (rho_run(&mut rho, i, &pids)?, s, b)
        };
        if i >= o.warmup {
            rho_first.push(r.0);
            rho_second.push(r.1);
            bare_first.push(b.0);
            bare_second.push(b.1);
            sdk_first.push(s.0);
            sdk_second.push(s.1);
        }
    }
    sdk.finish()?;
    let sdk_starts = starts(&sdk_pids)?;
    if sdk_starts != total {
        return Err(Error::Failed(format!(
            "sdk_first_call started the server {sdk_starts} times for {total} runs"
        )));
    }
    drop(model);
    let summary =
        |runs: &[Duration]| Summary::of(runs).ok_or_else(|| Error::Failed("no timed runs".into()));
    let (rf, rs, bf, bs, sf, ss) = (
        summary(&rho_first)?,
        summary(&rho_second)?,
        summary(&bare_first)?,
        summary(&bare_second)?,
        summary(&sdk_first)?,
        summary(&sdk_second)?,
    );

    println!("first call of a lazy stdio server's tool: rho rpc against a bare client");
    context::print(&load_at_start, &resolved.rho);
    println!(
        "server:   {} --mode ok --pid-file <file> (one tool, `echo`)",
        fake.display()
    );
    println!(
        "rho:      one rho rpc session per run, the server startup = \"lazy\" and known from the \
         tool cache; fake-model calls {TOOL} in two prompts; a call is timed from reading \
         tool/call to reading tool/result"
    );
    println!(
        "baseline: the bench spawns fake-mcp; initialize, notifications/initialized, tools/call \
         over pipes; timed from just before spawn to reading the result"
    );
    println!(
        "sdk:      sdk_first_call, a bare rmcp client on a two-worker tokio runtime: spawn, \
         initialize, tools/call; timed in its process from just before spawn to the result"
    );
    println!(
        "runs:     {} timed after {} warm-up; rho and the baseline alternate, the SDK \
         baseline between them; every rho session started the server once, at its first call",
        o.runs, o.warmup
    );
    println!();
    print_paths(
        &[
            ("rho: first call (starts the server)", rf),
            ("bare: spawn + handshake + call", bf),
            ("sdk: spawn + handshake + call", sf),
            ("rho: second call", rs),
            ("bare: second call", bs),
            ("sdk: second call", ss),
        ],
        2,
    );
    println!();
    let ratio = rf.median / bf.median;
    println!(
        "rho first/bare first: {ratio:.2}x ({:+.2} ms); rho's start alone (first − second \
         call): {:.2} ms",
        rf.median - bf.median,
        rf.median - rs.median
    );
    let sdk_ratio = rf.median / sf.median;
    println!(
        "rho first/sdk first: {sdk_ratio:.2}x ({:+.2} ms: what rho adds over the SDK it is \
         built on); sdk first/bare first: {:.2}x (what the SDK and its runtime cost)",
        rf.median - sf.median,
        sf.median / bf.median
    );
    let verdict = verdict(ratio <= GOAL_RATIO);
    println!(
        "goal: first call ≤ {GOAL_RATIO:.1}x a bare client's spawn + handshake + call \
         (median): {verdict} ({ratio:.2}x; p90 {:.2}x)",
        rf.p90 / bf.p90
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_calls_the_tool_twice_per_run() {
        let text = script_text(2);
        assert_eq!(text.matches(TOOL).count(), 4);
        assert!(text.trim_end().ends_with(']'));
        let doc: Value = serde_json::from_str(&text).unwrap();
        let turns = doc.as_array().unwrap();
        assert_eq!(turns.len(), 8);
        assert_eq!(
            turns[6]["tool_calls"][0]["arguments"],
            json!({"run": 1, "call": 2})
        );
        assert_eq!(turns[7], json!({"content": "Run 1 call 2 answered."}));
    }

    #[test]
    fn config_allows_calls_and_starts_the_server_lazily() {
        let text = config_text(Path::new("/x/fake-mcp"), Path::new("/tmp/p"));
        assert!(text.starts_with("[agent]\npermission_mode = \"allow-all\"\n"));
        assert!(text.contains("[mcp.servers.lazy]\n"));
        assert!(text.contains("startup = \"lazy\""));
    }

    #[test]
    fn the_bare_requests_are_json_rpc_with_their_ids() {
        let requests = BareRequests::new();
        for (request, id, method) in [
            (&requests.initialize, INITIALIZE_ID, "initialize"),
            (&requests.calls[0], 1, "tools/call"),
            (&requests.calls[1], 2, "tools/call"),
        ] {
            let message = json_lines::rpc_line(request).unwrap();
            assert_eq!(message["method"], method, "{request}");
            assert_eq!(message["id"], id, "{request}");
        }
        let initialize = json_lines::rpc_line(&requests.initialize).unwrap();
        assert_eq!(initialize["params"]["protocolVersion"], "2025-11-25");
        assert_eq!(initialize["params"]["capabilities"], json!({}));
        let initialized = json_lines::rpc_line(&requests.initialized).unwrap();
        assert_eq!(initialized["method"], "notifications/initialized");
        assert!(initialized.get("id").is_none());
    }

    #[test]
    fn sdk_lines_are_two_microsecond_counts() {
        assert_eq!(
            parse_sdk_line("1831 89\n"),
            Ok((Duration::from_micros(1831), Duration::from_micros(89)))
        );
        for bad in ["error: handshake failed: eof", "1 2 3", "12", ""] {
            assert!(parse_sdk_line(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bare_results_must_be_echoes() {
        let ok = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"called echo with {}"}]}}"#;
        assert_eq!(check_bare_result(ok), Ok(()));
        let failed = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"called echo"}],"isError":true}}"#;
        assert!(check_bare_result(failed).is_err());
        assert!(check_bare_result(r#"{"jsonrpc":"2.0","id":1,"error":{}}"#).is_err());
        let call = json_lines::rpc_line(&json_lines::mcp_call("echo", 3)).unwrap();
        assert_eq!(
            (&call["id"], &call["method"]),
            (&json!(3), &json!("tools/call"))
        );
        assert_eq!(
            call["params"],
            json!({"name": "echo", "arguments": {"call": 3}})
        );
        assert!(is_response(ok, 1));
        assert!(!is_response(ok, 12));
        assert!(!is_response(
            r#"{"id":1,"jsonrpc":"2.0","method":"ping"}"#,
            1
        ));
        assert!(is_response(r#"{"id":0,"jsonrpc":"2.0","result":{}}"#, 0));
        assert!(!is_response("not json", 0));
    }
}
