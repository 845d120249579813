//! Start-up failures: the server's stderr in the report, and a bounded close after discovery
//! fails.

use rho_component::{McpTransport, StdioCommand};
use rho_mcp::ClientOptions;

use crate::peers::*;

pub(crate) fn python(code: &str) -> McpTransport {
    stdio(
        StdioCommand::Bare("python3".into()),
        vec!["-c".into(), code.into()],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_failing_its_handshake_is_reported_with_its_stderr_redacted() {
    let code = "import os, sys\n\
                sys.stderr.write('starting\\n')\n\
                sys.stderr.write('fatal: bad token ' + os.environ['TOKEN'] + '\\n')\n\
                sys.exit(3)";
    let mut spec = spec("failing", python(code));
    if let McpTransport::Stdio(stdio) = &mut spec.transport {
        stdio.env_from_env = vec![("TOKEN".into(), "RHO_TEST_CANARY".into())];
    }
    let ambient = |name: &str| (name == "RHO_TEST_CANARY").then(|| "canary-s3cr3t".into());
    let error = rho_mcp::connect_with(&spec, &ambient, &ClientOptions::default())
        .await
        .err()
        .expect("the handshake fails");
    let message = error.to_string();
    assert!(message.contains("handshake failed"), "{message}");
    assert!(message.contains("fatal: bad token [redacted]"), "{message}");
    assert!(message.contains("starting"), "{message}");
    assert!(!message.contains("canary-s3cr3t"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discovery_failure_closes_the_session_instead_of_killing_it() {
    // A legacy server that shakes hands, refuses tools/list, and records how it ended: a
    // closed stdin (the bounded close) rather than a kill (drop).
    let marker = workspace("discovery").join("ended");
    let _ = std::fs::remove_file(&marker);
    let code = format!(
        r#"
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    if id is None:
        continue
    if method == "initialize":
        result = {{"protocolVersion": "2025-11-25", "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "half", "version": "1"}}}}
        print(json.dumps({{"jsonrpc": "2.0", "id": id, "result": result}}), flush=True)
    else:
        error = {{"code": -32601, "message": "no " + str(method)}}
        print(json.dumps({{"jsonrpc": "2.0", "id": id, "error": error}}), flush=True)
open({marker:?}, "w").write("stdin closed")
"#,
        marker = marker.display().to_string()
    );
    let spec = spec("half", python(&code));
    let error = rho_mcp::connect_with(&spec, &rho_mcp::process_ambient, &ClientOptions::default())
        .await
        .err()
        .expect("discovery fails");
    assert!(error.to_string().contains("tools/list failed"), "{error}");
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap_or_default(),
        "stdin closed"
    );
}

/// A legacy (2025-11-25) server in Python that appends each request's method to `record`.
fn recording_legacy_server(record: &std::path::Path) -> McpTransport {
    python(&format!(
        r#"
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    open({record:?}, "a").write(str(method) + "\n")
    if id is None:
        continue
    if method == "initialize":
        result = {{"protocolVersion": "2025-11-25", "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "legacy", "version": "1"}}}}
    elif method == "tools/list":
        result = {{"tools": [{{"name": "echo", "inputSchema": {{"type": "object"}}}}]}}
    else:
        print(json.dumps({{"jsonrpc": "2.0", "id": id, "error": {{"code": -32601, "message": "no " + str(method)}}}}), flush=True)
        continue
    print(json.dumps({{"jsonrpc": "2.0", "id": id, "result": result}}), flush=True)
"#,
        record = record.display().to_string()
    ))
}

/// Starts the recording legacy server (its record in workspace `name`) as one known to have
/// spoken `known`; returns the methods it received, in order.
async fn methods_of_a_start_knowing(name: &str, known: &str) -> Vec<String> {
    let record = workspace(name).join("methods");
    let _ = std::fs::remove_file(&record);
    let spec = spec("legacy", recording_legacy_server(&record));
    let options = ClientOptions::default();
    let connection =
        rho_mcp::connect_knowing(&spec, &rho_mcp::process_ambient, &options, Some(known))
            .await
            .expect("the server starts");
    assert!(connection.is_legacy());
    assert_eq!(connection.tools.len(), 1);
    connection.close().await;
    let methods = std::fs::read_to_string(&record).unwrap_or_default();
    methods.lines().map(str::to_owned).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_known_to_speak_2025_11_25_is_not_probed() {
    assert_eq!(
        methods_of_a_start_knowing("known-era", "2025-11-25").await,
        ["initialize", "notifications/initialized", "tools/list"],
        "no era probe before initialize"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_changed_era_since_is_started_again_and_probed() {
    // Known as a 2026-07-28 server, it now refuses server/discover: one more start, probed.
    assert_eq!(
        methods_of_a_start_knowing("changed-era", "2026-07-28").await,
        [
            "server/discover",
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ],
        "the remembered era refused, then the probe and the legacy handshake"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_in_its_remembered_era_is_not_started_twice() {
    let record = workspace("dead-era").join("starts");
    let _ = std::fs::remove_file(&record);
    let code = format!(
        "open({:?}, 'a').write('start\\n')\nimport sys\nsys.exit(3)",
        record.display().to_string()
    );
    let spec = spec("dead", python(&code));
    let error = rho_mcp::connect_knowing(
        &spec,
        &rho_mcp::process_ambient,
        &ClientOptions::default(),
        Some("2025-11-25"),
    )
    .await
    .err()
    .expect("the start fails");
    assert!(error.to_string().contains("handshake failed"), "{error}");
    assert_eq!(
        std::fs::read_to_string(&record).unwrap_or_default(),
        "start\n"
    );
}
