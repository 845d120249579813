//! `rho rpc --mcp-config <file>`: a standalone JSON file of MCP servers for programs that embed
//! rho. Its servers are the run's only ones (config.toml's and plugins' are not read, nor
//! started), and any problem in it stops rho at start-up with exit 1 and an error naming the
//! file, the server and the key.

use std::path::{Path, PathBuf};

use rho_component::naming::ExportedNames;
use rho_e2e::{FakeModel, Rpc, Sandbox, make_fifo, make_mcp, make_plugin};
use serde_json::{Value, json};

const FAKE_MCP: &str = env!("CARGO_BIN_EXE_fake-mcp");
const FAKE_MODEL: &str = env!("CARGO_BIN_EXE_fake-model");

/// `fake-mcp` recording into `<dir>/<name>.record` (which exists only once it started).
fn recording_server(dir: &Path, name: &str) -> Value {
    json!({"command": FAKE_MCP, "args": ["--record", dir.join(format!("{name}.record")).display().to_string()]})
}

fn write_servers_file(dir: &Path, document: &Value) -> PathBuf {
    let file = dir.join("servers.json");
    std::fs::write(&file, serde_json::to_vec_pretty(document).unwrap()).unwrap();
    file
}

#[test]
fn only_the_files_servers_are_read_and_started() {
    let sandbox = Sandbox::new();
    let dir = sandbox.outside("servers");
    let conf = recording_server(&dir, "conf");
    sandbox.write_config(&format!(
        "[mcp.servers.conf]\ncommand = {}\nargs = {}\n",
        conf["command"], conf["args"]
    ));
    let plugin = sandbox.user_plugins().join("extra");
    make_plugin(&plugin, "extra");
    make_mcp(
        &plugin,
        &json!({"side": recording_server(&dir, "plugin")}).to_string(),
    );
    let mut embedded = recording_server(&dir, "embedded");
    embedded["call_timeout_sec"] = json!(30);
    let file = write_servers_file(&dir, &json!({"mcpServers": {"embedded": embedded}}));

    let model = FakeModel::start(
        FAKE_MODEL,
        &sandbox.dir.path().join("model"),
        &json!([{"content": "ok"}]),
    );
    let file_arg = file.display().to_string();
    let mut rpc = Rpc::start(
        &sandbox,
        &model,
        &["--ephemeral", "--mcp-config", &file_arg],
    );
    let extensions = rpc.call(1, "listExtensions", json!({}));
    let ids: Vec<&str> = extensions["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["embedded"], "{extensions:#}");
    assert_eq!(
        extensions["servers"][0]["status"], "started",
        "{extensions:#}"
    );
    let tools = rpc.call(2, "listTools", json!({}));
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["server"].as_str())
        .collect();
    assert!(!names.is_empty(), "{tools:#}");
    assert!(names.iter().all(|s| *s == "embedded"), "{tools:#}");
    let echo = ExportedNames::default().assign("embedded", "echo");
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == echo.as_str()),
        "{tools:#}"
    );
    assert_eq!(rpc.finish(), 0);
    assert!(dir.join("embedded.record").exists());
    assert!(
        !dir.join("conf.record").exists(),
        "config.toml's server never started"
    );
    assert!(
        !dir.join("plugin.record").exists(),
        "the plugin's server never started"
    );
}

#[test]
fn every_problem_stops_rho_naming_file_server_and_key() {
    let sandbox = Sandbox::new();
    let dir = sandbox.outside("servers");
    let file = dir.join("servers.json");
    let cases = [
        (
            json!({"mcpServers": {"a": {"command": "x", "colour": "red"}}}),
            "mcpServers.a.colour: unknown field `colour`",
        ),
        (
            json!({"mcpServers": {"a": {"command": "x", "url": "https://example.com/mcp"}}}),
            "mcpServers.a.transport: both command and url are set; set transport to choose",
        ),
        (
            json!({"mcpServers": {"a": {"url": "https://example.com/mcp", "args": ["x"]}}}),
            "mcpServers.a.args: not used by the streamable_http transport",
        ),
        (
            json!({"mcpServers": {"a": {"type": "stdio"}}}),
            "mcpServers.a.command: required for the stdio transport",
        ),
        (
            json!({"mcpServers": {"a": {"type": "http"}}}),
            "mcpServers.a.url: required for the streamable_http transport",
        ),
        (
            json!({"mcpServers": {"a": {"command": "x", "startup_timeout_sec": 0}}}),
            "mcpServers.a.startup_timeout_sec: must be more than 0 and at most 86400 seconds",
        ),
        (
            json!({"mcpServers": {"a": {"command": "x", "call_timeout_sec": 0}}}),
            "mcpServers.a.call_timeout_sec: must be more than 0 and at most 86400 seconds",
        ),
        (
            json!({"servers": {}}),
            "needs mcpServers, an object of servers by identity",
        ),
    ];
    for (document, expected) in cases {
        write_servers_file(&dir, &document);
        let run = sandbox
            .rho(&["rpc", "--mcp-config", &file.display().to_string()])
            .code(1);
        let wanted = format!("--mcp-config: {}: {expected}", file.display());
        assert!(run.stderr.contains(&wanted), "{wanted}\n{}", run.stderr);
        assert!(
            run.stdout.is_empty(),
            "nothing on the protocol stream: {}",
            run.stdout
        );
    }
    // Not a regular file: refused by type, before anything is read.
    let fifo = dir.join("fifo.json");
    make_fifo(&fifo);
    let run = sandbox
        .rho(&["rpc", "--mcp-config", &fifo.display().to_string()])
        .code(1);
    assert!(run.stderr.contains("not a regular file"), "{}", run.stderr);
}
