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
    let dir = workspace("discovery");
    let marker = dir.path().join("ended");
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

/// A legacy (2025-11-25) server in Python that appends each request's method to `record`,
/// lists one tool, `echo`, and answers a call of it without arguments (any other call is an
/// error).
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
    elif method == "tools/call" and message["params"]["name"] == "echo" and not message["params"].get("arguments"):
        result = {{"content": [{{"type": "text", "text": "echoed"}}]}}
    else:
        print(json.dumps({{"jsonrpc": "2.0", "id": id, "error": {{"code": -32602, "message": "no " + str(method)}}}}), flush=True)
        continue
    print(json.dumps({{"jsonrpc": "2.0", "id": id, "result": result}}), flush=True)
"#,
        record = record.display().to_string()
    ))
}

/// A tool as the tool cache remembers it.
fn remembered(name: &str) -> rho_mcp::ServerTool {
    rho_mcp::ServerTool {
        name: name.into(),
        definition: serde_json::json!({"name": name, "inputSchema": {"type": "object"}}),
        needs_tasks: false,
    }
}

/// Starts the recording legacy server (its record in workspace `name`) as one known to have
/// spoken `version` and listed `tools`, and calls `call` once (with `{"fail": true}` when
/// `fail`); returns the call's outcome
/// (its text or error) and the methods the server received, in order.
async fn start_knowing(
    name: &str,
    version: &str,
    tools: &[rho_mcp::ServerTool],
    call: &str,
    fail: bool,
) -> (Result<String, String>, Vec<String>) {
    let dir = workspace(name);
    let record = dir.path().join("methods");
    let _ = std::fs::remove_file(&record);
    let spec = spec("legacy", recording_legacy_server(&record));
    let options = ClientOptions::default();
    let known = rho_mcp::Known {
        protocol_version: version,
        tools,
        tools_left_out: 0,
        prompts: &[],
        resources: &[],
    };
    let connection =
        rho_mcp::connect_knowing(&spec, &rho_mcp::process_ambient, &options, Some(known))
            .await
            .expect("the server starts");
    assert!(connection.is_legacy());
    assert_eq!(connection.tools, tools, "the known tools, as they were");
    assert!(
        connection.tools_changed(),
        "the known tools are listed at the next turn boundary"
    );
    let arguments = fail.then(|| serde_json::Map::from_iter([("fail".into(), true.into())]));
    let outcome = connection
        .call_tool(call, arguments, None, rho_mcp::Cancel::new())
        .await
        .map(|value| {
            value["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .map_err(|e| e.to_string());
    connection.close().await;
    let methods = std::fs::read_to_string(&record).unwrap_or_default();
    (outcome, methods.lines().map(str::to_owned).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_server_gets_its_first_call_right_after_the_handshake() {
    let (outcome, methods) = start_knowing(
        "known-era",
        "2025-11-25",
        &[remembered("echo")],
        "echo",
        false,
    )
    .await;
    assert_eq!(outcome.as_deref(), Ok("echoed"));
    assert_eq!(
        methods,
        ["initialize", "notifications/initialized", "tools/call"],
        "no era probe before initialize, no listing before the call"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_changed_era_since_is_started_again_and_probed() {
    // Known as a 2026-07-28 server, it now refuses server/discover: one more start, probed.
    let (outcome, methods) = start_knowing(
        "changed-era",
        "2026-07-28",
        &[remembered("echo")],
        "echo",
        false,
    )
    .await;
    assert_eq!(outcome.as_deref(), Ok("echoed"));
    assert_eq!(
        methods,
        [
            "server/discover",
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/call"
        ],
        "the remembered era refused, then the probe and the legacy handshake"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_tool_the_server_refuses_and_no_longer_lists_fails_as_withdrawn() {
    let tools = [remembered("echo"), remembered("retired")];
    let (outcome, methods) =
        start_knowing("known-gone", "2025-11-25", &tools, "retired", false).await;
    let error = outcome.expect_err("the call fails");
    assert!(error.contains("withdrew"), "{error}");
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/call",
            "tools/list"
        ],
        "the refusal is checked against the live list"
    );
    // A refused call of a tool the server still lists keeps the server's own error.
    let (outcome, methods) =
        start_knowing("known-refused", "2025-11-25", &tools, "echo", true).await;
    let error = outcome.expect_err("the call fails");
    assert!(
        error.contains("no tools/call") && !error.contains("withdrew"),
        "{error}"
    );
    assert_eq!(methods.last().map(String::as_str), Some("tools/list"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_in_its_remembered_era_is_not_started_twice() {
    let dir = workspace("dead-era");
    let record = dir.path().join("starts");
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
        Some(rho_mcp::Known {
            protocol_version: "2025-11-25",
            tools: &[],
            tools_left_out: 0,
            prompts: &[],
            resources: &[],
        }),
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
