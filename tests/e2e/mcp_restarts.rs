//! Servers that come back (`docs/mcp.md`): a killed stdio server is started again by the next
//! call, a stopped HTTP server is reached again on a new session, a server that crashes on
//! every start is given up on after the bound (and its toolset closed once, at the next turn
//! boundary), and each keep-alive ping and each
//! `notifications/cancelled` really reaches the server. Real processes throughout (`fake-mcp`,
//! over stdio and real loopback HTTP), through `rho rpc` where a session is the point.

use std::path::Path;
use std::time::{Duration, Instant};

use rho_component::naming::ExportedNames;
use rho_e2e::{FakeModel, KillOnDrop, Rpc, Sandbox};
use serde_json::{Value, json};

const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp");
const FAKE_MODEL: &str = env!("CARGO_BIN_EXE_fake-model");

fn echo() -> String {
    ExportedNames::default().assign("fake", "echo")
}

/// Configures `fake-mcp` with `args` as server `fake` of `sandbox`, every tool allowed.
fn configure_fake(sandbox: &Sandbox, args: &[&str]) {
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    sandbox.write_config(&format!(
        "[agent]\npermission_mode = \"allow-all\"\n\n[mcp.servers.fake]\ncommand = {FAKE:?}\nargs = [{}]\n",
        args.join(", ")
    ));
}

/// A model that calls `echo` once per prompt (with `n` = the prompt's number), `prompts` times.
fn echo_model(dir: &Path, prompts: u64) -> FakeModel {
    let mut script = Vec::new();
    for n in 1..=prompts {
        script.push(json!({"tool_calls": [{"name": echo(), "arguments": {"n": n}}]}));
        script.push(json!({"content": format!("done {n}")}));
    }
    FakeModel::start(FAKE_MODEL, dir, &Value::Array(script))
}

/// Runs prompt `id` to its end; returns its notifications.
fn prompt(rpc: &mut Rpc, id: u64) -> Vec<Value> {
    rpc.request(id, "prompt", json!({"message": format!("prompt {id}")}));
    let (notes, response) = rpc.response(id);
    assert!(response.get("error").is_none(), "{response}");
    notes
}

/// [`prompt`], whose tool call must have succeeded.
fn prompt_with_a_good_call(rpc: &mut Rpc, id: u64) {
    let notes = prompt(rpc, id);
    assert_eq!(
        tool_result(&notes)["params"]["is_error"],
        false,
        "{notes:#?}"
    );
}

fn tool_result(notes: &[Value]) -> &Value {
    notes
        .iter()
        .find(|n| n["method"] == "tool/result")
        .unwrap_or_else(|| panic!("no tool/result: {notes:#?}"))
}

fn restarts(notes: &[Value]) -> Vec<&Value> {
    notes
        .iter()
        .filter(|n| n["method"] == "server/restart")
        .collect()
}

fn pids(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// SIGKILLs `pid` and waits until it is dead (a zombie counts: its pipes are closed).
fn kill(pid: &str) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", pid])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // `<pid> (<comm>) <state> ...`: gone, or Z(ombie), or X (dead).
        let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
        if stat.is_empty() || matches!(state, Some('Z' | 'X')) {
            return;
        }
        assert!(Instant::now() < deadline, "{pid} did not die");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn server_entry(rpc: &mut Rpc, id: u64) -> Value {
    let extensions = rpc.call(id, "listExtensions", json!({}));
    extensions["servers"][0].clone()
}

#[test]
fn a_killed_stdio_server_is_started_again_by_the_next_call() {
    let sandbox = Sandbox::new();
    let pid_file = sandbox.outside("run").join("pids");
    configure_fake(&sandbox, &["--pid-file", pid_file.to_str().unwrap()]);
    let model = echo_model(&sandbox.dir.path().join("model"), 2);
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    prompt_with_a_good_call(&mut rpc, 1);
    let first = pids(&pid_file);
    assert_eq!(first.len(), 1, "{first:?}");
    kill(&first[0]);
    let notes = prompt(&mut rpc, 2);
    let result = tool_result(&notes);
    assert_eq!(result["params"]["is_error"], false, "{notes:#?}");
    assert!(
        result["params"]["output"]
            .as_str()
            .unwrap()
            .contains(r#"{"n":2}"#),
        "{result}"
    );
    let started = pids(&pid_file);
    assert_eq!(started.len(), 2, "one new process: {started:?}");
    assert_ne!(started[0], started[1]);
    let restart = restarts(&notes);
    assert_eq!(restart.len(), 1, "{notes:#?}");
    assert_eq!(restart[0]["params"]["server"], "fake");
    assert_eq!(restart[0]["params"]["restarts"], 1);
    assert!(restart[0]["params"]["gaveUp"].is_null());
    assert!(
        !restart[0]["params"]["reason"].as_str().unwrap().is_empty(),
        "{restart:?}"
    );
    let server = server_entry(&mut rpc, 3);
    assert_eq!(server["status"], "used", "{server}");
    assert_eq!(server["restarts"], 1, "{server}");
    assert!(server["lastRestart"].is_string(), "{server}");
}

#[test]
fn a_server_that_crashes_on_every_restart_is_given_up_on_after_the_bound() {
    let sandbox = Sandbox::new();
    let run = sandbox.outside("run");
    let (pid_file, marker) = (run.join("pids"), run.join("started"));
    configure_fake(
        &sandbox,
        &[
            "--pid-file",
            pid_file.to_str().unwrap(),
            "--fail-restarts",
            marker.to_str().unwrap(),
        ],
    );
    let model = echo_model(&sandbox.dir.path().join("model"), 3);
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    prompt_with_a_good_call(&mut rpc, 1);
    kill(&pids(&pid_file)[0]);
    // The lost session is one failure, every failed start another: the last one gives up.
    let notes = prompt(&mut rpc, 2);
    let result = tool_result(&notes);
    assert_eq!(result["params"]["is_error"], true, "{notes:#?}");
    let output = result["params"]["output"].as_str().unwrap();
    assert!(
        output.contains("gave up on MCP server `fake`")
            && output.contains(&format!("after {} failures", rho_mcp::RESTART_LIMIT))
            && output.contains("crashing on start"),
        "{output}"
    );
    assert_eq!(
        pids(&pid_file).len(),
        rho_mcp::RESTART_LIMIT,
        "the first process and {} failed starts",
        rho_mcp::RESTART_LIMIT - 1
    );
    let restart = restarts(&notes);
    assert_eq!(restart.len(), 1, "{notes:#?}");
    assert!(
        restart[0]["params"]["gaveUp"]
            .as_str()
            .unwrap()
            .contains("`fake`")
    );
    let server = server_entry(&mut rpc, 4);
    assert_eq!(server["status"], "failed", "{server}");
    assert!(
        server["error"].as_str().unwrap().contains("gave up"),
        "{server}"
    );
    // Given up for good: the next call fails at once, starting nothing.
    let notes = prompt(&mut rpc, 3);
    let output = tool_result(&notes)["params"]["output"].as_str().unwrap();
    assert!(output.contains("gave up on MCP server `fake`"), "{output}");
    assert_eq!(pids(&pid_file).len(), rho_mcp::RESTART_LIMIT);
    assert!(restarts(&notes).is_empty(), "reported once: {notes:#?}");
    // Lost for the session: its toolset is closed (not running) at the turn boundary after
    // rho gave up, once; the end of input closes nothing more.
    let closed = |notes: &[Value]| -> Vec<Value> {
        notes
            .iter()
            .filter(|n| n["method"] == "toolset/closed")
            .map(|n| n["params"].clone())
            .collect()
    };
    let reported = closed(&rpc.seen);
    assert_eq!(reported.len(), 1, "{:#?}", rpc.seen);
    assert_eq!(reported[0]["server"], "fake");
    assert_eq!(reported[0]["live"], false);
    let rest = rpc.rest_after_eof();
    assert!(closed(&rest).is_empty(), "closed twice: {rest:#?}");
}

/// `fake-mcp` over HTTP on `port`, recording into `record`.
fn http_server(port: u16, record: &Path, extra: &[&str]) -> KillOnDrop {
    let child = std::process::Command::new(FAKE)
        .args(["--http", &port.to_string(), "--record"])
        .arg(record)
        .args(extra)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let server = KillOnDrop(child);
    rho_e2e::wait_for_port(port, 10, "fake-mcp --http");
    server
}

fn http_sandbox(port: u16) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[agent]\npermission_mode = \"allow-all\"\n\n[mcp.servers.fake]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
    ));
    sandbox
}

/// Stops the HTTP server, starts a new one on the same port a second later (while the call
/// below is already failing to reach it), and checks that the call got through on a session of
/// its own with the new server.
fn an_http_server_that_went_away_is_reached_again(extra: &[&str], era: &str) {
    let port = rho_e2e::free_port();
    let sandbox = http_sandbox(port);
    let records = sandbox.outside("records");
    let (before, after) = (records.join("before.log"), records.join("after.log"));
    let mut server = http_server(port, &before, extra);
    let model = echo_model(&sandbox.dir.path().join("model"), 2);
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    let listed = server_entry(&mut rpc, 1);
    assert_eq!(listed["protocolVersion"], era, "{listed}");
    prompt_with_a_good_call(&mut rpc, 2);
    server.0.kill().unwrap();
    server.0.wait().unwrap();
    let extra: Vec<String> = extra.iter().map(|a| (*a).to_owned()).collect();
    let after_path = after.clone();
    let comeback = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(1));
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        http_server(port, &after_path, &extra)
    });
    let notes = prompt(&mut rpc, 3);
    let _server = comeback.join().unwrap();
    let result = tool_result(&notes);
    assert_eq!(result["params"]["is_error"], false, "{notes:#?}");
    let log = std::fs::read_to_string(&after).unwrap();
    let methods: Vec<&str> = log.lines().map(|l| l.split(' ').next().unwrap()).collect();
    // A new session from the start (the handshake of the era the server spoke, without the era
    // probe, then the listing), not the old one resumed.
    let handshake = if era == "2025-11-25" {
        "initialize"
    } else {
        "server/discover"
    };
    assert_eq!(methods.first(), Some(&handshake), "{log}");
    assert!(methods.contains(&"tools/call"), "{log}");
    assert!(
        log.contains(r#""n":2"#),
        "the call that found it gone: {log}"
    );
    let restart = restarts(&notes);
    assert_eq!(restart.len(), 1, "{notes:#?}");
    let server = server_entry(&mut rpc, 4);
    assert_eq!(server["restarts"], 1, "{server}");
    assert_eq!(server["status"], "used", "{server}");
}

#[test]
fn a_legacy_http_server_that_went_away_is_reached_again_on_a_new_session() {
    an_http_server_that_went_away_is_reached_again(&[], "2025-11-25");
}

#[test]
fn a_modern_http_server_that_went_away_is_reached_again_on_a_new_session() {
    an_http_server_that_went_away_is_reached_again(&["--modern"], "2026-07-28");
}

/// A mounted tool set (in this process) for `sandbox`'s configuration, pinging every `ping`.
async fn mount(sandbox: &Sandbox, ping: Duration) -> rho_core::ToolSet {
    sandbox
        .registry()
        .mount(&rho_core::MountOptions {
            keep_alive: Some(ping),
            ..rho_core::MountOptions::default()
        })
        .await
}

async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn count(record: &Path, method: &str) -> usize {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.split(' ').next() == Some(method))
        .count()
}

/// Pings reach the server; once the server is gone a ping fails and is reported, and the next
/// call uses a new session (never the broken one) with the server that replaced it.
async fn pings_reach_the_server_and_a_failed_one_retires_the_session(extra: &[&str]) {
    let port = rho_e2e::free_port();
    let sandbox = http_sandbox(port);
    let records = sandbox.outside("records");
    let (before, after) = (records.join("before.log"), records.join("after.log"));
    let mut server = http_server(port, &before, extra);
    let tools = mount(&sandbox, Duration::from_millis(100)).await;
    assert_eq!(tools.servers[0].status(), rho_core::ServerStatus::Started);
    wait_for("no ping reached the server", || count(&before, "ping") >= 3).await;
    assert_eq!(tools.servers[0].last_ping_failure(), None);
    server.0.kill().unwrap();
    server.0.wait().unwrap();
    wait_for("no failed ping reported", || {
        tools.servers[0].last_ping_failure().is_some()
    })
    .await;
    let failure = tools.servers[0].last_ping_failure().unwrap();
    assert!(failure.contains("ping failed"), "{failure}");
    let _server = http_server(port, &after, extra);
    let tool = tools.get(&echo()).unwrap();
    let context = rho_component::ToolContext::new(&sandbox.project);
    let output = tool.call(json!({"after": true}), &context).await;
    assert!(!output.is_error, "{}", output.text);
    let log = std::fs::read_to_string(&after).unwrap();
    // The era is known: the handshake comes without the era probe.
    let handshake = if extra.contains(&"--modern") {
        "server/discover"
    } else {
        "initialize"
    };
    assert!(log.starts_with(handshake), "a new session: {log}");
    assert!(log.contains("tools/call"), "{log}");
    assert_eq!(tools.servers[0].health().restarts, 1);
    let reported = tools.take_restarts();
    assert_eq!(reported.len(), 1, "{reported:?}");
    // The new session is pinged in turn.
    wait_for("the new session is not pinged", || {
        count(&after, "ping") >= 2
    })
    .await;
    tools.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_http_pings_reach_the_server_and_a_failed_one_retires_the_session() {
    pings_reach_the_server_and_a_failed_one_retires_the_session(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_http_pings_reach_the_server_and_a_failed_one_retires_the_session() {
    // 2026-07-28 has no ping method: the server's "method not found" still proves the
    // connection works, and the ping still travels.
    pings_reach_the_server_and_a_failed_one_retires_the_session(&["--modern"]).await;
}

/// A connection to `fake-mcp --mode slow-call` on `transport`, recording into `record`.
fn slow_spec(
    transport: rho_component::McpTransport,
    call_timeout: Duration,
) -> rho_component::McpServerSpec {
    let mut spec = rho_component::McpServerSpec::new(
        "fake",
        rho_component::McpServerOrigin::Config,
        transport,
    );
    spec.startup_timeout = Duration::from_secs(10);
    spec.call_timeout = call_timeout;
    spec
}

fn stdio(args: &[&str]) -> rho_component::McpTransport {
    rho_component::McpTransport::Stdio(rho_component::StdioServerSpec {
        command: rho_component::StdioCommand::Path(FAKE.into()),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: vec![],
        env_from_env: vec![],
        cwd: None,
    })
}

fn http(port: u16) -> rho_component::McpTransport {
    rho_component::McpTransport::StreamableHttp(rho_component::HttpServerSpec {
        url: format!("http://127.0.0.1:{port}/mcp"),
        headers: vec![],
        headers_from_env: vec![],
    })
}

/// Two calls the server never answers, one ended by the user's cancel and one by the budget:
/// the server must have been told of each, naming that call's request: by
/// `notifications/cancelled`, or on 2026-07-28 Streamable HTTP (which has no such
/// notification) by the request's response stream being closed (`signal` is what the record
/// shows).
async fn the_cancellation_reaches_the_server(
    spec: rho_component::McpServerSpec,
    record: &Path,
    signal: &str,
) {
    let connection = rho_mcp::connect(&spec, &rho_mcp::process_ambient)
        .await
        .unwrap();
    // Ended by the user.
    let cancel = rho_mcp::Cancel::new();
    let trigger = cancel.clone();
    let call = connection.call_tool("echo", None, None, cancel);
    let (result, ()) = tokio::join!(call, async {
        let record = record.to_owned();
        wait_for("the call never reached the server", move || {
            count(&record, "tools/call") == 1
        })
        .await;
        trigger.cancel();
    });
    assert!(result.unwrap_err().to_string().contains("cancelled"));
    wait_for(
        "no cancellation reached the server after the user's cancel",
        || count(record, signal) == 1,
    )
    .await;
    // Ended by the budget.
    let err = connection
        .call_tool("echo", None, None, rho_mcp::Cancel::new())
        .await
        .unwrap_err();
    assert!(
        matches!(err, rho_mcp::McpError::CallTimeout { .. }),
        "{err}"
    );
    wait_for(
        "no cancellation reached the server after the budget ran out",
        || count(record, signal) == 2,
    )
    .await;
    // Each names the request it cancels (the calls' ids, in order).
    let log = std::fs::read_to_string(record).unwrap();
    let prefix = format!("{signal} ");
    let cancelled: Vec<Value> = log
        .lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .map(|params| serde_json::from_str(params).unwrap())
        .collect();
    assert!(
        cancelled.iter().all(|p| p["requestId"].is_number()),
        "{cancelled:?}"
    );
    assert_ne!(cancelled[0]["requestId"], cancelled[1]["requestId"]);
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellations_reach_a_stdio_server() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.log");
    let args = ["--mode", "slow-call", "--record", record.to_str().unwrap()];
    let spec = slow_spec(stdio(&args), Duration::from_millis(700));
    the_cancellation_reaches_the_server(spec, &record, "notifications/cancelled").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellations_reach_a_legacy_http_server() {
    the_cancellation_reaches_an_http_server(&[], "notifications/cancelled").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellations_reach_a_modern_http_server_as_closed_streams() {
    the_cancellation_reaches_an_http_server(&["--modern"], "stream-closed").await;
}

/// [`the_cancellation_reaches_the_server`] for a slow fake-mcp HTTP server started with
/// `extra` arguments.
async fn the_cancellation_reaches_an_http_server(extra: &[&str], expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.log");
    let port = rho_e2e::free_port();
    let args = [&["--mode", "slow-call"], extra].concat();
    let _server = http_server(port, &record, &args);
    let spec = slow_spec(http(port), Duration::from_millis(700));
    the_cancellation_reaches_the_server(spec, &record, expected).await;
}
