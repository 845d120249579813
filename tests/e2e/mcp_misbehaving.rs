//! Misbehaving stdio servers (`fake-mcp --mode ...`, adversarial catalogue §D): each one fails
//! alone, with a clear error naming it, within its budget, leaving no process behind.

use std::time::{Duration, Instant};

use rho_e2e::*;
use serde_json::{Value, json};

const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp");

fn fake(id: &str, mode: &str, extra: &str) -> String {
    format!("[mcp.servers.{id}]\ncommand = {FAKE:?}\nargs = [\"--mode\", {mode:?}]\n{extra}\n")
}

#[test]
fn non_json_lines_and_banners_are_skipped() {
    let sb = Sandbox::new();
    sb.write_config(&(fake("chatty", "non-json", "") + &fake("banner", "banner", "")));
    let list = sb.rho(&["mcp", "list", "--connect", "--json"]).ok().json();
    assert_eq!(mcp_server(&list, "chatty")["status"], "started", "{list:#}");
    assert_eq!(mcp_server(&list, "banner")["status"], "started", "{list:#}");
    let run = sb
        .rho(&["mcp", "call", "chatty", "echo", r#"{"x":1}"#])
        .ok();
    assert!(run.stdout.starts_with("called echo"), "{}", run.stdout);
}

#[test]
fn servers_flooding_notifications_still_answer_calls() {
    let sb = Sandbox::new();
    sb.write_config(&(fake("logs", "log-flood", "") + &fake("lists", "list-changed-flood", "")));
    let started = Instant::now();
    for server in ["logs", "lists"] {
        let run = sb.rho(&["mcp", "call", server, "echo", r#"{"x":1}"#]).ok();
        assert!(
            run.stdout.starts_with("called echo"),
            "{server}: {}",
            run.stdout
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_crash_mid_call_fails_the_call_at_once() {
    let sb = Sandbox::new();
    sb.write_config(&fake("crashy", "crash-on-call", "call_timeout_sec = 60"));
    let started = Instant::now();
    let run = sb.rho(&["mcp", "call", "crashy", "echo"]).code(1);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "failed at once, not at the 60 s budget"
    );
    assert!(run.stderr.contains("crashy"), "{}", run.stderr);
}

#[test]
fn odd_and_duplicate_tool_names_get_distinct_valid_exported_names() {
    let sb = Sandbox::new();
    sb.write_config(&fake("odd", "odd-names", ""));
    let list = sb.rho(&["mcp", "list", "--connect", "--json"]).ok().json();
    let tools = mcp_server(&list, "odd")["tools"]
        .as_array()
        .unwrap()
        .clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names.iter().filter(|n| **n == "dup").count(),
        1,
        "duplicates dropped"
    );
    let mut exported: Vec<&str> = tools
        .iter()
        .map(|t| t["exported_name"].as_str().unwrap())
        .collect();
    for name in &exported {
        assert!(
            name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{name}"
        );
    }
    exported.sort();
    exported.dedup();
    assert_eq!(exported.len(), tools.len(), "exported names are unique");
    // Calls route by table and send the raw name back.
    let long = tools
        .iter()
        .find(|t| t["name"].as_str().unwrap().len() == 300)
        .unwrap();
    let run = sb
        .rho(&[
            "mcp",
            "call",
            "odd",
            long["exported_name"].as_str().unwrap(),
        ])
        .ok();
    assert!(
        run.stdout
            .starts_with(&format!("called {}", "x".repeat(300))),
        "{}",
        run.stdout
    );
    let run = sb.rho(&["mcp", "call", "odd", "a__b"]).ok();
    assert!(run.stdout.starts_with("called a__b"), "{}", run.stdout);
}

#[test]
fn pages_are_followed_and_repeated_cursors_stop() {
    let sb = Sandbox::new();
    sb.write_config(
        &(fake("paged", "paged", "") + &fake("loop", "repeat-cursor", "startup_timeout_sec = 20")),
    );
    let started = Instant::now();
    let list = sb.rho(&["mcp", "list", "--connect", "--json"]).ok().json();
    assert!(started.elapsed() < Duration::from_secs(10));
    let paged: Vec<&str> = mcp_server(&list, "paged")["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(paged, ["t0", "t1", "t2", "last"]);
    let looping = mcp_server(&list, "loop");
    assert_eq!(looping["status"], "started");
    assert_eq!(looping["tools"].as_array().unwrap().len(), 1);
}

#[test]
fn an_oversized_message_fails_the_call_within_budget() {
    let sb = Sandbox::new();
    sb.write_config(&fake("huge", "huge-line", "call_timeout_sec = 3"));
    let started = Instant::now();
    let run = sb.rho(&["mcp", "call", "huge", "echo"]).code(1);
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "{:?}",
        started.elapsed()
    );
    assert!(run.stderr.contains("huge"), "{}", run.stderr);
}

#[test]
fn cancellation_is_sent_when_the_budget_runs_out() {
    let sb = Sandbox::new();
    let record = sb.outside("rec").join("methods.log");
    sb.write_config(
        &format!(
            "[mcp.servers.slow]\ncommand = {FAKE:?}\nargs = [\"--mode\", \"slow-call\", \"--record\", {:?}]\ncall_timeout_sec = 0.5\nlog_level = \"warning\"\n",
            record.to_str().unwrap()
        ),
    );
    let run = sb.rho(&["mcp", "call", "slow", "echo"]).code(1);
    assert!(run.stderr.contains("call budget"), "{}", run.stderr);
    let deadline = Instant::now() + Duration::from_secs(6);
    loop {
        let log = std::fs::read_to_string(&record).unwrap_or_default();
        if log.contains("notifications/cancelled") {
            assert!(
                log.lines()
                    .any(|l| l.starts_with("logging/setLevel")
                        && l.contains("\"level\":\"warning\"")),
                "{log}"
            );
            assert!(
                log.lines()
                    .any(|l| l.starts_with("tools/call") && l.contains("progressToken")),
                "every call carries a progress token: {log}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no notifications/cancelled reached the server: {log}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_broken_output_contract_fails_the_call() {
    let sb = Sandbox::new();
    sb.write_config(&fake("contract", "bad-structured", ""));
    let run = sb.rho(&["mcp", "call", "contract", "temp"]).code(1);
    assert!(
        run.stderr.contains("outputSchema") && run.stderr.contains("/temp"),
        "{}",
        run.stderr
    );
}

#[test]
fn servers_ignoring_stdin_close_and_sigterm_are_still_stopped() {
    let sb = Sandbox::new();
    let marker = format!("--marker-{}", std::process::id());
    let script = sb.outside("bin").join("stubborn");
    write_script(
        &script,
        &format!("#!/bin/sh\ntrap '' TERM\nexec {FAKE} --mode ignore-stdin-close {marker}\n"),
    );
    sb.write_server_command("stubborn", &script);
    let started = Instant::now();
    sb.rho(&["mcp", "call", "stubborn", "echo"]).ok();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_no_process(&marker);
}

#[test]
fn daemons_escaping_the_process_group_are_stopped_too() {
    let sb = Sandbox::new();
    let marker = format!("47.{}", std::process::id());
    let script = sb.outside("bin").join("daemonizing");
    write_script(
        &script,
        &format!("#!/bin/sh\nsetsid sleep {marker} &\nexec {FAKE} --mode ok\n"),
    );
    sb.write_server_command("daemon", &script);
    sb.rho(&["mcp", "call", "daemon", "echo"]).ok();
    assert_no_process(&marker);
}

/// No byte of `text` could act on a terminal: no escape, bell or carriage return.
fn assert_terminal_safe(what: &str, text: &str) {
    for bad in ['\u{1b}', '\u{7}', '\r', '\u{9b}'] {
        assert!(!text.contains(bad), "{what} holds {bad:?}: {text:?}");
    }
}

#[test]
fn a_servers_hostile_error_reaches_the_terminal_escaped() {
    let sb = Sandbox::new();
    sb.write_config(&fake("hostile", "hostile-error", ""));
    let run = sb.rho(&["mcp", "call", "hostile", "echo"]).code(1);
    assert_terminal_safe("stderr", &run.stderr);
    assert_terminal_safe("stdout", &run.stdout);
    // What the server said is still there to read, escaped.
    assert!(run.stderr.contains("refused"), "{}", run.stderr);
    assert!(run.stderr.contains("\\u{1b}]0;pwned"), "{}", run.stderr);
    // With every log line on: logs are made safe too, and carry no colour on a pipe.
    let run = sb
        .rho_env(&[("RHO_LOG", "trace")], &["mcp", "call", "hostile", "echo"])
        .code(1);
    assert_terminal_safe("stderr with RHO_LOG=trace", &run.stderr);
    assert!(run.stderr.lines().count() > 3, "{}", run.stderr);
}

/// `rho <args>` in `sb` with stdin kept open (so EOF never ends it) and output discarded.
fn spawn_rho(sb: &Sandbox, args: &[&str]) -> std::process::Child {
    sb.command(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits until the file at `record` satisfies `ready` (a fake-mcp method log).
fn wait_for_record(record: &std::path::Path, what: &str, ready: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(record).is_ok_and(|log| ready(&log)) {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `signal` to `child` and checks that it leaves within 5 s with 128 + `number`, and
/// that no process with `marker` outlives it.
fn signal_and_expect_stop(
    child: &mut std::process::Child,
    signal: &str,
    number: i32,
    marker: &str,
) {
    let sent = Instant::now();
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "rho did not stop on SIG{signal}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(128 + number), "SIG{signal}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        processes_with(marker).is_empty(),
        "SIG{signal} left the server running: {:?}",
        processes_with(marker)
    );
}

/// Starts `rho mcp call` on a server that never answers, waits until the call reached it,
/// sends `signal`, and checks that rho told the server, stopped it and left with 128 + the
/// signal's number within a few seconds.
fn signal_during_call(signal: &str, number: i32) {
    let sb = Sandbox::new();
    let marker = format!("sig{number}.{}", std::process::id());
    let record = sb.outside(&marker).join("methods.log");
    sb.write_config(&format!(
        "[mcp.servers.slow]\ncommand = {FAKE:?}\nargs = [\"--mode\", \"slow-call\", \"--record\", {:?}]\ncall_timeout_sec = 600\n",
        record.to_str().unwrap()
    ));
    let mut child = spawn_rho(&sb, &["mcp", "call", "slow", "echo"]);
    wait_for_record(&record, "the call never reached the server", |log| {
        log.contains("tools/call")
    });
    assert!(!processes_with(&marker).is_empty(), "the server runs");
    signal_and_expect_stop(&mut child, signal, number, &marker);
    let log = std::fs::read_to_string(&record).unwrap();
    assert!(
        log.contains("notifications/cancelled"),
        "the server was told the call is cancelled: {log}"
    );
}

#[test]
fn sigterm_to_mcp_call_cancels_and_stops_the_server() {
    signal_during_call("TERM", 15);
}

#[test]
fn sighup_to_mcp_call_cancels_and_stops_the_server() {
    signal_during_call("HUP", 1);
}

#[test]
fn sigint_to_mcp_call_cancels_and_stops_the_server() {
    signal_during_call("INT", 2);
}

/// A `rho rpc` whose servers are still starting (a server that never answers `initialize`)
/// when its terminal goes away.
#[test]
fn sighup_while_rpc_starts_its_servers_stops_them() {
    let sb = Sandbox::new();
    let marker = format!("hup-start.{}", std::process::id());
    let record = sb.outside(&marker).join("methods.log");
    sb.write_config(&format!(
        "[mcp.servers.mute]\ncommand = {FAKE:?}\nargs = [\"--mode\", \"never-answer\", \"--record\", {:?}]\nstartup_timeout_sec = 120\n",
        record.to_str().unwrap()
    ));
    let mut child = spawn_rho(
        &sb,
        &[
            "rpc",
            "--ephemeral",
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
        ],
    );
    // The handshake's first request (`server/discover`, then `initialize`) reached the server.
    wait_for_record(&record, "the server never started", |log| !log.is_empty());
    signal_and_expect_stop(&mut child, "HUP", 1, &marker);
}

/// How many `question/request` notifications `rpc` has read so far.
fn questions_shown(rpc: &Rpc) -> usize {
    rpc.seen
        .iter()
        .filter(|m| m["method"] == "question/request")
        .count()
}

/// The `questionsRejected` of server `id` in `listExtensions` (queued behind a running turn).
fn questions_rejected(rpc: &mut Rpc, request: u64, id: &str) -> Value {
    let extensions = rpc.call(request, "listExtensions", json!({}));
    let servers = extensions["servers"].as_array().unwrap();
    let server = servers.iter().find(|s| s["id"] == id).unwrap();
    server["questionsRejected"].clone()
}

/// A round trip handled while a turn runs (an answer to a question that does not exist), so
/// every notification rho wrote before it has been read (`Rpc::seen`).
fn round_trip(rpc: &mut Rpc, request: u64) {
    rpc.request(
        request,
        "questionResponse",
        json!({"questionId": 999_999, "action": "decline"}),
    );
    let (_, response) = rpc.response(request);
    assert_eq!(response["error"]["code"], -32600, "{response}");
}

#[test]
fn a_sampling_flood_gets_one_question_at_a_time_and_the_rest_rejected() {
    const FLOOD: usize = 1400;
    const QUEUED: usize = 8;
    const REJECTED: usize = FLOOD - 1 - QUEUED;
    let sb = Sandbox::new();
    let record = sb.dir.path().join("flood.log");
    sb.write_config(&format!(
        "[agent]\npermission_mode = \"allow-all\"\n\n[mcp.servers.flood]\ncommand = {FAKE:?}\n\
         args = [\"--mode\", \"sampling-flood\", \"--record\", {:?}]\nsampling = \"ask\"\n",
        record.display().to_string()
    ));
    let model = FakeModel::start(
        env!("CARGO_BIN_EXE_fake-model"),
        &sb.dir.path().join("model"),
        &json!([
            {"tool_calls": [{"name": "mcp__flood__flood", "arguments": {"count": FLOOD}}]},
            // The first sampling question, allowed: the user's model answers it.
            {"content": "sampled", "expect": {"last_message_contains": "flood request"}},
            {"content": "done"}
        ]),
    );
    let mut rpc = Rpc::start(&sb, &model, &["--ephemeral", "--accept-questions"]);
    rpc.request(1, "prompt", json!({"message": "flood"}));
    let mut question = rpc.until("question/request")["params"].clone();
    assert_eq!(question["kind"], "sampling", "{question}");
    assert_eq!(question["server"], "flood", "{question}");
    // Before anyone answers, every request beyond the one open and the eight waiting has its
    // JSON-RPC error (the server records each answer as it arrives).
    let rejections = |log: &str| {
        log.lines()
            .filter(|l| *l == r#"sampling-error {"code":-32000}"#)
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline
        && std::fs::read_to_string(&record).map_or(0, |log| rejections(&log)) < REJECTED
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    // The session still answers; by its answer every question rho put to the front-end so far
    // has been read.
    round_trip(&mut rpc, 2);
    assert_eq!(
        questions_shown(&rpc),
        1,
        "one question open at a time, not {} of {FLOOD}",
        questions_shown(&rpc)
    );
    let log = std::fs::read_to_string(&record).unwrap();
    assert_eq!(rejections(&log), REJECTED, "{log:.2000}");
    // Answering lets the next waiting request in, one at a time: the first is allowed (the
    // model runs), the other eight declined.
    for n in 0..=QUEUED {
        let action = if n == 0 { "accept" } else { "decline" };
        let id = 10 + n as u64;
        rpc.call(
            id,
            "questionResponse",
            json!({"questionId": question["questionId"], "action": action}),
        );
        if n == QUEUED {
            break;
        }
        question = rpc.until("question/request")["params"].clone();
        round_trip(&mut rpc, 100 + id);
        assert_eq!(questions_shown(&rpc), n + 2, "one question open at a time");
    }
    let (notes, response) = rpc.response(1);
    assert_eq!(response["result"]["reply"], "done", "{response}");
    assert!(
        !notes.iter().any(|n| n["method"] == "question/request"),
        "no tenth question: {notes:#?}"
    );
    assert_eq!(questions_shown(&rpc), 1 + QUEUED);
    // The server's own tally of the answers it got, as the tool result.
    let result = rpc
        .seen
        .iter()
        .find(|n| n["method"] == "tool/result")
        .unwrap()["params"]["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        result,
        format!("answers={FLOOD} replies=1 errors=-32000:{REJECTED},-1:{QUEUED}")
    );
    // Counted for the session: `listExtensions` (and `/mcp`) show it.
    assert_eq!(questions_rejected(&mut rpc, 200, "flood"), json!(REJECTED));
    assert_eq!(rpc.finish(), 0);
}
