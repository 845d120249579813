//! rho-mcp used as a library (the way sessions will use it), against `fake-mcp`: behaviour that
//! needs a connection kept open across several calls.

use std::time::Duration;

use rho_component::{McpServerOrigin, McpServerSpec, McpTransport, StdioCommand, StdioServerSpec};
use rho_e2e::everything;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp");

fn spec(mode: &str) -> McpServerSpec {
    let mut spec = McpServerSpec::new(
        "fake",
        McpServerOrigin::Config,
        McpTransport::Stdio(StdioServerSpec {
            command: StdioCommand::Path(FAKE.into()),
            args: vec!["--mode".into(), mode.into()],
            env: vec![],
            env_from_env: vec![],
            cwd: None,
        }),
    );
    spec.startup_timeout = Duration::from_secs(10);
    spec.call_timeout = Duration::from_secs(10);
    spec
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_is_reconciled_and_added_tools_join_when_taken_in() {
    let mut connection = rho_mcp::connect(&spec("list-changed"), &rho_mcp::process_ambient)
        .await
        .unwrap();
    let names: Vec<&str> = connection.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "retired"]);
    let cancel = rho_mcp::Cancel::new();
    connection
        .call_tool("echo", None, None, cancel.clone())
        .await
        .unwrap();
    // The server announced a change after the call.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !connection.tools_changed() {
        assert!(
            std::time::Instant::now() < deadline,
            "no tools/list_changed seen"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let changes = connection.reconcile_tools().await.unwrap();
    assert_eq!(changes.revised, ["echo"]);
    assert_eq!(changes.withdrawn, ["retired"]);
    assert_eq!(changes.added, ["newcomer"]);
    assert_eq!(connection.tools.len(), 2, "added tools wait to be taken in");
    assert_eq!(
        connection.tools[0].description(),
        Some("echo, revised"),
        "revised tools keep working"
    );
    connection
        .call_tool("echo", None, None, cancel.clone())
        .await
        .unwrap();
    let withdrawn = connection
        .call_tool("retired", None, None, cancel.clone())
        .await
        .unwrap_err()
        .to_string();
    assert!(withdrawn.contains("withdrew"), "{withdrawn}");
    let added = connection
        .call_tool("newcomer", None, None, cancel.clone())
        .await
        .unwrap_err()
        .to_string();
    assert!(added.contains("from the next turn"), "{added}");
    assert_eq!(connection.added_tools().len(), 1);
    // A session takes them in at its turn boundary; then they answer.
    let taken: Vec<String> = connection
        .accept_added()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(taken, ["newcomer"]);
    assert!(connection.added_tools().is_empty());
    connection
        .call_tool("newcomer", None, None, cancel.clone())
        .await
        .unwrap();
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_for_a_finished_call_goes_nowhere_and_calls_are_independent() {
    let connection = rho_mcp::connect(&spec("ok"), &rho_mcp::process_ambient)
        .await
        .unwrap();
    let cancel = rho_mcp::Cancel::new();
    let (tx, mut rx) = tokio::sync::mpsc::channel(8);
    let a = connection.call_tool("echo", None, Some(tx), cancel.clone());
    let b = connection.call_tool("echo", None, None, cancel.clone());
    let (a, b) = tokio::join!(a, b);
    assert!(a.is_ok() && b.is_ok());
    connection.close().await;
    assert!(rx.try_recv().is_err(), "fake-mcp sends no progress");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_cancellation_fails_the_call_promptly() {
    let connection = rho_mcp::connect(&spec("slow-call"), &rho_mcp::process_ambient)
        .await
        .unwrap();
    let cancel = rho_mcp::Cancel::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    let err = connection
        .call_tool("echo", None, None, cancel)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("cancelled"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(3));
    connection.close().await;
}

/// server-everything on loopback `port` over Streamable HTTP, as server `web`.
fn http_spec(port: u16) -> McpServerSpec {
    let mut spec = McpServerSpec::new(
        "web",
        McpServerOrigin::Config,
        McpTransport::StreamableHttp(rho_component::HttpServerSpec {
            url: everything::http_url(port),
            headers: vec![],
            headers_from_env: vec![],
        }),
    );
    spec.startup_timeout = Duration::from_secs(10);
    spec
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_is_answered_while_the_server_runs_and_fails_once_it_is_gone() {
    let port = rho_e2e::free_port();
    let mut server = everything::start_http(port);
    let spec = http_spec(port);
    let connection = rho_mcp::connect(&spec, &rho_mcp::process_ambient)
        .await
        .unwrap();
    assert!(connection.is_legacy());
    connection.ping(Duration::from_secs(5)).await.unwrap();
    server.0.kill().unwrap();
    server.0.wait().unwrap();
    let failed = connection
        .ping(Duration::from_secs(5))
        .await
        .unwrap_err()
        .to_string();
    assert!(failed.contains("ping failed"), "{failed}");
    assert!(
        !failed.contains("rmcp::") && !failed.contains("Probed"),
        "no type names: {failed}"
    );
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_legacy_http_session_is_reinitialized_and_the_call_retried() {
    let port = rho_e2e::free_port();
    let mut server = everything::start_http(port);
    let mut spec = http_spec(port);
    spec.call_timeout = Duration::from_secs(20);
    let connection = rho_mcp::connect(&spec, &rho_mcp::process_ambient)
        .await
        .unwrap();
    assert!(connection.is_legacy());
    let args = serde_json::json!({"message": "before"});
    let cancel = rho_mcp::Cancel::new();
    connection
        .call_tool("echo", args.as_object().cloned(), None, cancel.clone())
        .await
        .unwrap();
    // A restarted server no longer knows the session id: it answers 404, and the client must
    // initialize a new session and retry the call once, without the caller noticing.
    server.0.kill().unwrap();
    server.0.wait().unwrap();
    server = everything::start_http(port);
    let args = serde_json::json!({"message": "after restart"});
    let result = connection
        .call_tool("echo", args.as_object().cloned(), None, cancel)
        .await
        .unwrap();
    let rendered = format!("{result:?}");
    assert!(rendered.contains("after restart"), "{rendered}");
    connection.close().await;
    drop(server);
}

/// A modern-era `fake-mcp` with extra arguments, given a startup budget well past rmcp's 10 s
/// era probe.
fn modern_spec(extra: &[&str]) -> McpServerSpec {
    let mut spec = spec("ok");
    if let McpTransport::Stdio(stdio) = &mut spec.transport {
        stdio.args.push("--modern".into());
        stdio.args.extend(extra.iter().map(|a| (*a).to_owned()));
    }
    spec.startup_timeout = Duration::from_secs(60);
    spec
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_server_slow_to_start_still_gets_a_modern_session() {
    // An interpreter that takes longer than rmcp's fixed 10 s discover probe to start (Python
    // on a loaded CI machine): its answer to `server/discover` arrives after the probe gave up.
    // The probe must not count time the process spent before reading its input.
    let spec = modern_spec(&["--start-delay-ms", "11000"]);
    let connection = rho_mcp::connect(&spec, &rho_mcp::process_ambient)
        .await
        .unwrap();
    assert_eq!(connection.summary.protocol_version, "2026-07-28");
    let names: Vec<&str> = connection.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo"]);
    let cancel = rho_mcp::Cancel::new();
    connection
        .call_tool("echo", None, None, cancel)
        .await
        .unwrap();
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_server_that_answers_discover_late_is_started_again_in_the_modern_era() {
    // This one reads `server/discover` at once but answers after 11 s, so the probe falls back to
    // `initialize`, which a modern server that already served discover refuses. Its late answer
    // shows the era: a fresh process is started once, in the modern era (the delay applies to
    // the first process only).
    let marker = tempfile::tempdir().unwrap();
    let marker = marker.path().join("started");
    let spec = modern_spec(&[
        "--discover-delay-ms",
        "11000",
        "--delay-once",
        marker.to_str().unwrap(),
    ]);
    let connection = rho_mcp::connect(&spec, &rho_mcp::process_ambient)
        .await
        .unwrap();
    assert!(marker.exists(), "the first process ran");
    assert_eq!(connection.summary.protocol_version, "2026-07-28");
    let cancel = rho_mcp::Cancel::new();
    connection
        .call_tool("echo", None, None, cancel)
        .await
        .unwrap();
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_server_that_ignores_discover_gets_initialize_after_the_probe_wait() {
    // Some legacy servers drop requests they do not know instead of refusing them. The probe
    // waits at most half the startup budget (here 4 s) once the server has read it.
    let mut spec = spec("ok");
    if let McpTransport::Stdio(stdio) = &mut spec.transport {
        stdio.args.push("--silent-discover".into());
    }
    spec.startup_timeout = Duration::from_secs(8);
    let connection = rho_mcp::connect(&spec, &rho_mcp::process_ambient)
        .await
        .unwrap();
    assert!(connection.is_legacy());
    assert_eq!(connection.summary.protocol_version, "2025-11-25");
    connection.close().await;
}
