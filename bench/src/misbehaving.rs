//! `rho-bench misbehaving`: the latency of a healthy server's tool calls in a `rho rpc` session
//! that also holds 24 misbehaving `fake-mcp` servers at once, against a session with the
//! healthy server alone.
//!
//! Both sessions are driven the same way: each turn the bench sends a `prompt`, `fake-model`
//! answers with one call of `mcp__healthy__echo`, rho runs it and the model then answers in one
//! sentence. A call's latency is the time from reading its `tool/call` notification to reading
//! its `tool/result` (the gate, the MCP round trip, the result's rendering and its event, as a
//! client sees them); the whole turn (prompt to response) is timed too. The misbehaving servers
//! (see [`MISBEHAVING`]) hang on `initialize`, crash on start, print garbage, list 20,000 tools,
//! start and answer slowly, flood the client with log messages and `list_changed`
//! notifications, and, once before the first timed call and again after every
//! [`PROVOKE_EVERY`] calls, are called in an untimed turn where their calls never return, crash
//! the server or answer 20 MiB. The baseline session runs first, then the one with every
//! server; one session exists at a time, so the misbehaving servers never slow the baseline.
//! After each session the bench counts, from `/proc`, the servers it left running.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fakes::{FakeModel, fake_mcp_binary, fake_model_binary, script_text as model_script};
use crate::json_lines::{self, prompt_request};
use crate::processes;
use crate::rpc_ready::{LineChild, RpcPlace};
use crate::scratch::Scratch;
use crate::stats::{max, median, percentile};
use crate::toml_text::toml_string;
use crate::{Error, Resolved, context, machine};

/// The issue's target: the healthy server's call p99.
const GOAL_P99_MS: f64 = 200.0;

/// The healthy server's tool as the model calls it.
const HEALTHY_TOOL: &str = "mcp__healthy__echo";

/// Untimed turns calling the misbehaving tools come before the first call and after every this
/// many calls.
const PROVOKE_EVERY: usize = 50;

/// The tools an untimed provoking turn calls (one batch, run one after another).
const PROVOKED: [&str; 3] = [
    "mcp__neverreply1__echo",
    "mcp__crashcall__echo",
    "mcp__hugeline__echo",
];

/// The misbehaving servers: id, `fake-mcp` arguments (`{marker}` and `{crash}` are filled in)
/// and extra settings of the `[mcp.servers.<id>]` table.
const MISBEHAVING: [(&str, &str, &str); 24] = [
    // Never answer the handshake: the start gives up after 2 s.
    ("hang1", "--mode never-answer", "startup_timeout_sec = 2"),
    ("hang2", "--mode never-answer", "startup_timeout_sec = 2"),
    ("hang3", "--mode never-answer", "startup_timeout_sec = 2"),
    // Exit at once with a message on stderr.
    ("crashstart1", "--fail-restarts {crash}", ""),
    ("crashstart2", "--fail-restarts {crash}", ""),
    // Garbage on stdout around every answer.
    ("garbage1", "--mode non-json", ""),
    ("garbage2", "--mode non-json", ""),
    ("banner", "--mode banner", ""),
    // A huge tools/list (rho keeps the first 1,000) and huge prompt and resource lists.
    ("hugelist1", "--mode many-tools --count 20000", ""),
    ("hugelist2", "--mode many-tools --count 20000", ""),
    ("manyoffers", "--mode many-offers --count 5000", ""),
    // Slow to start, slow to answer the era probe, a legacy server that never answers it.
    ("slowstart1", "--mode ok --start-delay-ms 1500", ""),
    ("slowstart2", "--mode ok --start-delay-ms 1500", ""),
    (
        "slowreply1",
        "--mode ok --modern --discover-delay-ms 1000",
        "",
    ),
    (
        "slowreply2",
        "--mode ok --modern --discover-delay-ms 1000",
        "",
    ),
    ("silentdiscover", "--mode ok --silent-discover", ""),
    // Calls that never return (the budget cancels them), a crash mid-call, a 20 MiB answer.
    ("neverreply1", "--mode slow-call", "call_timeout_sec = 1"),
    ("neverreply2", "--mode slow-call", "call_timeout_sec = 1"),
    ("crashcall", "--mode crash-on-call", ""),
    ("hugeline", "--mode huge-line", "call_timeout_sec = 3"),
    // Ignores stdin closing (and is stopped by signal when the session ends).
    ("stubborn", "--mode ignore-stdin-close", ""),
    // Never stop talking.
    ("logflood1", "--mode log-flood --interval-ms 1", ""),
    ("logflood2", "--mode log-flood --interval-ms 1", ""),
    (
        "listflood",
        "--mode list-changed-flood --interval-ms 10",
        "",
    ),
];

/// One step of a session's script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// A turn calling the misbehaving tools, untimed.
    Provoke,
    /// Healthy call number `n` (1-based).
    Call(usize),
}

/// The steps of a session with `calls` healthy calls, provoking first and every
/// [`PROVOKE_EVERY`] calls when `provoke`.
fn plan(calls: usize, provoke: bool) -> Vec<Step> {
    let mut steps = Vec::with_capacity(calls + calls / PROVOKE_EVERY + 1);
    for n in 1..=calls {
        if provoke && (n - 1) % PROVOKE_EVERY == 0 {
            steps.push(Step::Provoke);
        }
        steps.push(Step::Call(n));
    }
    steps
}

/// The scripted answer after healthy call `n`.
fn reply_of(n: usize) -> String {
    format!("Call {n} answered.")
}

/// The model's script for `steps`: per step, the tool call(s), then a one-sentence answer.
fn script_text(steps: &[Step]) -> String {
    let turns: Vec<Value> = steps
        .iter()
        .flat_map(|step| {
            let (calls, reply) = match step {
                Step::Provoke => (
                    PROVOKED
                        .iter()
                        .map(|name| json!({"name": name, "arguments": {}}))
                        .collect(),
                    "Provoked.".to_owned(),
                ),
                Step::Call(n) => (
                    vec![json!({"name": HEALTHY_TOOL, "arguments": {"n": n}})],
                    reply_of(*n),
                ),
            };
            [json!({"tool_calls": calls}), json!({"content": reply})]
        })
        .collect();
    model_script(&turns)
}

/// The configuration: every tool call allowed, the healthy server, and the misbehaving ones
/// when `misbehaving`. Every server carries `marker`.
fn config_text(fake: &Path, marker: &str, crash: &Path, misbehaving: bool) -> String {
    let command = toml_string(&fake.to_string_lossy());
    let server = |id: &str, args: &str, extra: &str| {
        let args: Vec<String> = args
            .split_whitespace()
            .map(|a| match a {
                "{crash}" => toml_string(&crash.to_string_lossy()),
                a => toml_string(a),
            })
            .chain([toml_string("--bench-marker"), toml_string(marker)])
            .collect();
        format!(
            "[mcp.servers.{id}]\ncommand = {command}\nargs = [{}]\n{extra}\n\n",
            args.join(", ")
        )
    };
    let mut text = String::from("[agent]\npermission_mode = \"allow-all\"\n\n");
    text.push_str(&server("healthy", "--mode ok", ""));
    if misbehaving {
        for (id, args, extra) in MISBEHAVING {
            text.push_str(&server(id, args, extra));
        }
    }
    text
}

/// What one session measured.
struct Session {
    label: &'static str,
    servers: usize,
    ready: Duration,
    stop: Duration,
    calls: Vec<Duration>,
    turns: Vec<Duration>,
    restarts: usize,
    leaked: usize,
}

/// Where the sessions run.
struct Setup<'a> {
    place: RpcPlace<'a>,
    fake: PathBuf,
    model: PathBuf,
    marker: String,
    crash: PathBuf,
}

/// The parts of one turn the bench reads (shared with `lazy-first-call`).
pub struct TurnLines {
    /// When the watched tool's `tool/call` line was read.
    pub call: Option<Instant>,
    /// When its `tool/result` line was read, and the line.
    pub result: Option<(Instant, String)>,
    /// The `prompt` response line.
    pub response: String,
    /// `server/restart` notifications seen.
    pub restarts: usize,
}

/// Sends prompt `id` and reads to its response, noting when `tool`'s `tool/call` and
/// `tool/result` lines arrived (each line's time is taken before it is parsed).
pub fn turn(rpc: &mut LineChild, id: usize, tool: &str) -> Result<(Duration, TurnLines), String> {
    let prompt = prompt_request(id, &format!("Step {id}."));
    let mut seen = TurnLines {
        call: None,
        result: None,
        response: String::new(),
        restarts: 0,
    };
    let start = Instant::now();
    rpc.write_line(&prompt)?;
    let mut line = String::new();
    loop {
        rpc.read_line(&mut line)?;
        let now = Instant::now();
        let message = json_lines::parse(&line, "rho")?;
        if json_lines::is_response(&message) {
            seen.response = std::mem::take(&mut line);
            return Ok((now - start, seen));
        }
        let healthy = message["params"]["name"] == tool;
        match message["method"].as_str() {
            Some("tool/call") if healthy => seen.call = Some(now),
            Some("tool/result") if healthy => seen.result = Some((now, line.clone())),
            Some("server/restart") => seen.restarts += 1,
            _ => {}
        }
    }
}

/// Checks a healthy call's turn and returns the call's latency.
fn check_call(n: usize, seen: &TurnLines) -> Result<Duration, String> {
    let (Some(call), Some((result, line))) = (seen.call, &seen.result) else {
        return Err(format!(
            "call {n}: no tool/call and tool/result of {HEALTHY_TOOL} before the response"
        ));
    };
    let message = json_lines::rpc_line(line)?;
    let params = &message["params"];
    let output = params["output"].as_str().unwrap_or("");
    if params["is_error"] != false || !output.starts_with("called echo") {
        return Err(format!("call {n}: the healthy call failed: {line}"));
    }
    check_reply(&seen.response, &reply_of(n))?;
    Ok(result.saturating_duration_since(call))
}

/// Checks that a `prompt` response carries `expected` as its reply.
pub fn check_reply(line: &str, expected: &str) -> Result<(), String> {
    let response = json_lines::rpc_line(line)?;
    if response["result"]["reply"] != expected {
        return Err(format!("expected the reply {expected:?}, got {line}"));
    }
    Ok(())
}

impl Setup<'_> {
    /// Runs one session: start to `ready`, the steps, stdin closed to exit; then counts the
    /// marked processes left behind (waiting a moment, then killing them).
    fn session(
        &self,
        label: &'static str,
        misbehaving: bool,
        calls: usize,
        warmup: usize,
    ) -> Result<Session, String> {
        let name = if misbehaving {
            "misbehaving"
        } else {
            "baseline"
        };
        let steps = plan(calls + warmup, misbehaving);
        let script = self
            .place
            .scratch
            .path()
            .join(format!("script-{name}.json"));
        std::fs::write(&script, script_text(&steps))
            .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
        let config = self
            .place
            .scratch
            .path()
            .join(format!("config-{name}.toml"));
        std::fs::write(
            &config,
            config_text(&self.fake, &self.marker, &self.crash, misbehaving),
        )
        .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
        let model = FakeModel::start(&self.model, self.place.scratch.path(), name, &script, None)?;
        let endpoint = model.endpoint();
        let mut command = self.place.command(name, &config, &endpoint)?;
        let start = Instant::now();
        let mut rpc = command.spawn_ready()?;
        let ready = start.elapsed();
        let mut session = Session {
            label,
            servers: 1 + if misbehaving { MISBEHAVING.len() } else { 0 },
            ready,
            stop: Duration::ZERO,
            calls: Vec::with_capacity(calls),
            turns: Vec::with_capacity(calls),
            restarts: 0,
            leaked: 0,
        };
        for (id, step) in (1..).zip(&steps) {
            let (elapsed, seen) = turn(&mut rpc, id, HEALTHY_TOOL)?;
            session.restarts += seen.restarts;
            match step {
                Step::Provoke => check_reply(&seen.response, "Provoked.")
                    .map_err(|e| format!("{name}: provoking turn {id}: {e}"))?,
                Step::Call(n) => {
                    let latency = check_call(*n, &seen).map_err(|e| format!("{name}: {e}"))?;
                    if *n > warmup {
                        session.calls.push(latency);
                        session.turns.push(elapsed);
                    }
                }
            }
        }
        let stopping = Instant::now();
        rpc.finish()?;
        session.stop = stopping.elapsed();
        drop(model);
        std::thread::sleep(Duration::from_millis(300));
        let left = processes::with_marker(&self.marker);
        for process in &left {
            eprintln!(
                "rho-bench: {name}: left running: pid {} (parent {}): {}",
                process.pid, process.ppid, process.cmdline
            );
            processes::kill(process.pid);
        }
        session.leaked = left.len();
        Ok(session)
    }
}

/// Runs both sessions and prints the comparison; fails if the p99 misses the target.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let fake = fake_mcp_binary(resolved)?;
    let model = fake_model_binary(resolved)?;
    let load_at_start = machine::load();
    let scratch = Scratch::new("misbehaving")?;
    let crash = scratch.path().join("crash-marker");
    // The file exists, so every start of a `--fail-restarts` server counts as a restart.
    std::fs::write(&crash, "").map_err(|e| format!("cannot write {}: {e}", crash.display()))?;
    let setup = Setup {
        place: RpcPlace::new(&resolved.rho, &scratch)?,
        fake: fake.clone(),
        model,
        marker: format!("rho-bench-misbehaving-{}", std::process::id()),
        crash,
    };
    let baseline = setup.session("healthy only", false, o.runs, o.warmup)?;
    let loaded = setup.session("healthy + 24 misbehaving", true, o.runs, o.warmup)?;

    println!("healthy MCP tool calls in a rho rpc session beside 24 misbehaving fake-mcp servers");
    context::print(&load_at_start, &resolved.rho);
    println!(
        "servers:  {} --mode ok (healthy); misbehaving: 3 hang on the handshake, 2 crash on \
         start, 3 print garbage, 2 list 20,000 tools, 1 lists 5,000 prompts and resources, \
         2 start 1.5 s late, 2 answer the era probe 1 s late, 1 never answers it, 2 never answer \
         calls, 1 crashes on a call, 1 answers 20 MiB, 1 ignores stdin closing, 2 flood log \
         messages (1 ms), 1 floods list_changed (10 ms)",
        fake.display()
    );
    println!(
        "turn:     prompt → fake-model asks {HEALTHY_TOOL} → rho calls it → one-sentence \
         answer; untimed turns call {} before the first call and after every {PROVOKE_EVERY}",
        PROVOKED.join(", ")
    );
    println!(
        "call:     from reading tool/call to reading tool/result; baseline: the same session \
         with the healthy server alone, run first"
    );
    println!(
        "calls:    {} timed per session after {} warm-up",
        o.runs, o.warmup
    );
    println!();
    println!(
        "{:<26} {:>7} | {:>8} {:>8} {:>8} {:>8} | {:>8} {:>8} | {:>8} {:>7} {:>8} {:>6}",
        "session",
        "servers",
        "call p50",
        "p99",
        "max",
        "mean",
        "turn p50",
        "p99",
        "ready ms",
        "stop ms",
        "restarts",
        "leaked"
    );
    let mut p99s = Vec::new();
    for s in [&baseline, &loaded] {
        let calls: Vec<f64> = s.calls.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        let turns: Vec<f64> = s.turns.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        let mean = calls.iter().sum::<f64>() / calls.len().max(1) as f64;
        p99s.push((median(&calls), percentile(&calls, 99)));
        println!(
            "{:<26} {:>7} | {:>8.3} {:>8.3} {:>8.3} {mean:>8.3} | {:>8.3} {:>8.3} | {:>8.1} {:>7.1} {:>8} {:>6}",
            s.label,
            s.servers,
            median(&calls),
            percentile(&calls, 99),
            max(&calls),
            median(&turns),
            percentile(&turns, 99),
            s.ready.as_secs_f64() * 1e3,
            s.stop.as_secs_f64() * 1e3,
            s.restarts,
            s.leaked,
        );
    }
    println!();
    let [(base_p50, base_p99), (p50, p99)] = p99s[..] else {
        return Err(Error::Failed("expected two sessions".into()));
    };
    println!(
        "misbehaving / baseline: call p50 {:.2}x ({:+.3} ms), p99 {:.2}x ({:+.3} ms)",
        p50 / base_p50,
        p50 - base_p50,
        p99 / base_p99,
        p99 - base_p99
    );
    let leaked = baseline.leaked + loaded.leaked;
    let pass = p99 <= GOAL_P99_MS;
    println!(
        "goal: healthy call p99 ≤ {GOAL_P99_MS:.0} ms beside 24 misbehaving servers: {} \
         ({p99:.3} ms)",
        if pass { "PASS" } else { "FAIL" }
    );
    println!("servers left running after the sessions: {leaked}");
    if !pass {
        return Err(Error::Failed(format!(
            "misbehaving: the healthy call p99 is {p99:.3} ms, over {GOAL_P99_MS:.0} ms"
        )));
    }
    if leaked > 0 {
        return Err(Error::Failed(format!(
            "misbehaving: {leaked} server(s) were left running"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_provokes_first_and_every_fifty_calls() {
        let steps = plan(101, true);
        assert_eq!(steps[0], Step::Provoke);
        assert_eq!(steps[1], Step::Call(1));
        assert_eq!(steps.iter().filter(|s| **s == Step::Provoke).count(), 3);
        assert_eq!(steps[51], Step::Provoke);
        assert_eq!(steps[52], Step::Call(51));
        assert!(!plan(10, false).contains(&Step::Provoke));
    }

    #[test]
    fn script_has_two_entries_per_step() {
        let steps = plan(3, true);
        let doc: Value = serde_json::from_str(&script_text(&steps)).unwrap();
        let turns = doc.as_array().unwrap();
        assert_eq!(turns.len(), 8);
        let calls = turns[0]["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), PROVOKED.len());
        assert_eq!(calls[2], json!({"name": PROVOKED[2], "arguments": {}}));
        assert_eq!(
            turns[2]["tool_calls"],
            json!([{"name": HEALTHY_TOOL, "arguments": {"n": 1}}])
        );
        assert_eq!(turns[7]["content"], reply_of(3));
    }

    #[test]
    fn config_holds_every_server_with_the_marker() {
        let text = config_text(Path::new("/f"), "mark", Path::new("/c"), true);
        assert_eq!(text.matches("[mcp.servers.").count(), 25);
        assert_eq!(text.matches(r#""--bench-marker", "mark""#).count(), 25);
        assert!(text.contains(r#"args = ["--fail-restarts", "/c", "--bench-marker", "mark"]"#));
        assert!(text.contains("startup_timeout_sec = 2"));
        let alone = config_text(Path::new("/f"), "mark", Path::new("/c"), false);
        assert_eq!(alone.matches("[mcp.servers.").count(), 1);
        for (id, _, _) in MISBEHAVING {
            assert!(
                id.bytes().all(|b| b.is_ascii_alphanumeric()),
                "{id} is a plain server id"
            );
        }
    }

    #[test]
    fn call_check_wants_a_good_result_and_the_reply() {
        let now = Instant::now();
        let result = r#"{"jsonrpc":"2.0","method":"tool/result","params":{"call_id":"c","name":"mcp__healthy__echo","is_error":false,"output":"called echo with {}"}}"#;
        let seen = |result: &str, reply: &str| TurnLines {
            call: Some(now),
            result: Some((now + Duration::from_millis(2), result.to_owned())),
            response: json!({"jsonrpc": "2.0", "id": 4, "result": {"reply": reply}}).to_string(),
            restarts: 0,
        };
        assert_eq!(
            check_call(2, &seen(result, &reply_of(2))),
            Ok(Duration::from_millis(2))
        );
        assert!(check_call(3, &seen(result, &reply_of(2))).is_err());
        let failed = result.replace("\"is_error\":false", "\"is_error\":true");
        assert!(check_call(2, &seen(&failed, &reply_of(2))).is_err());
    }
}
