//! Tools that run only as MCP tasks (`execution.taskSupport: "required"`), which rho does not
//! support yet: listed and marked in every inventory (`rho mcp show --connect`, RPC
//! `listExtensions` and `listTools`), sent to the model, and every call answered with a clear
//! error without `tools/call` reaching the server (`fake-mcp --record`).

use std::path::{Path, PathBuf};

use rho_component::naming::ExportedNames;
use rho_e2e::{FakeModel, Rpc, Sandbox};
use serde_json::json;

const FAKE_MCP: &str = env!("CARGO_BIN_EXE_fake-mcp");
const FAKE_MODEL: &str = env!("CARGO_BIN_EXE_fake-model");

/// The tool list of [`task_server`], in a file of `dir`.
fn task_tools(dir: &Path) -> PathBuf {
    let tools = dir.join("tools.json");
    let schema = json!({"type": "object", "properties": {}});
    let listed = json!([
        {"name": "slow", "description": "Runs for hours.", "inputSchema": schema,
         "execution": {"taskSupport": "required"}},
        {"name": "quick", "description": "Runs either way.", "inputSchema": schema,
         "execution": {"taskSupport": "optional"}},
        {"name": "plain", "description": "Runs at once.", "inputSchema": schema},
    ]);
    std::fs::write(&tools, serde_json::to_vec(&listed).unwrap()).unwrap();
    tools
}

/// A server `fake` listing `slow` (task required), `quick` (tasks optional) and `plain`,
/// recording what it receives; returns the record file.
fn task_server(sandbox: &Sandbox, extra_config: &str) -> PathBuf {
    let dir = sandbox.outside("tasks");
    let tools = task_tools(&dir);
    let record = dir.join("record.txt");
    sandbox.write_config(&format!(
        "{extra_config}[mcp.servers.fake]\ncommand = {}\nargs = [\"--tools-file\", {}, \"--record\", {}]\n",
        json!(FAKE_MCP),
        json!(tools.display().to_string()),
        json!(record.display().to_string()),
    ));
    record
}

fn calls_received(record: &Path) -> Vec<String> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("tools/call"))
        .map(str::to_owned)
        .collect()
}

fn exported(tool: &str) -> String {
    ExportedNames::default().assign("fake", tool)
}

#[test]
fn a_streamable_http_server_answering_in_plain_json_has_its_task_tools_marked() {
    // fake-mcp over HTTP answers every request with one JSON body (no event stream), which
    // rmcp decodes without `execution`: rho reads that listing again, raw.
    let sandbox = Sandbox::new();
    let dir = sandbox.outside("tasks");
    let tools = task_tools(&dir);
    let port = rho_e2e::free_port();
    let server = std::process::Command::new(FAKE_MCP)
        .args(["--http", &port.to_string(), "--tools-file"])
        .arg(&tools)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _server = rho_e2e::KillOnDrop(server);
    rho_e2e::wait_for_port(port, 10, "fake-mcp --http");
    sandbox.write_config(&format!(
        "[mcp.servers.fake]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
    ));
    assert_show_marks_only_slow(&sandbox);
}

/// `rho mcp show fake --connect --json` marks `slow` as needing tasks, and only it.
fn assert_show_marks_only_slow(sandbox: &Sandbox) {
    let shown = sandbox
        .rho(&["mcp", "show", "fake", "--connect", "--json"])
        .ok()
        .json();
    let tools = shown["tools"].as_array().unwrap();
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap();
    assert_eq!(tool("slow")["needs_tasks"], true, "{shown:#}");
    assert!(tool("quick").get("needs_tasks").is_none(), "{shown:#}");
    assert!(tool("plain").get("needs_tasks").is_none(), "{shown:#}");
}

#[test]
fn show_connect_marks_a_tool_that_needs_tasks() {
    let sandbox = Sandbox::new();
    task_server(&sandbox, "");
    assert_show_marks_only_slow(&sandbox);

    let human = sandbox.rho(&["mcp", "show", "fake", "--connect"]).ok();
    let line = |name: &str| {
        human
            .stdout
            .lines()
            .find(|l| l.contains(&format!("fake › {name}")))
            .unwrap_or_else(|| panic!("no row for {name}: {}", human.stdout))
            .to_owned()
    };
    assert!(
        line("slow").contains("[needs task support] Runs for hours."),
        "{}",
        human.stdout
    );
    assert!(!line("quick").contains("needs task support"));
}

#[test]
fn a_session_lists_the_tool_and_refuses_its_calls_without_sending_them() {
    let sandbox = Sandbox::new();
    let record = task_server(&sandbox, "[agent]\npermission_mode = \"allow-all\"\n\n");
    let model = FakeModel::start(
        FAKE_MODEL,
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [
                {"name": exported("slow"), "arguments": {}},
                {"name": exported("quick"), "arguments": {}}
            ]},
            {"content": "done"}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    let extensions = rpc.call(1, "listExtensions", json!({}));
    let server = &extensions["servers"][0];
    let details = server["toolDetails"].as_array().unwrap();
    let detail = |name: &str| details.iter().find(|t| t["tool"] == name).unwrap();
    assert_eq!(detail("slow")["needsTasks"], true, "{server:#}");
    assert!(detail("quick").get("needsTasks").is_none(), "{server:#}");
    let listed = rpc.call(2, "listTools", json!({}));
    assert!(
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == exported("slow").as_str()),
        "{listed:#}"
    );

    rpc.request(3, "prompt", json!({"message": "run both"}));
    let (notes, answer) = rpc.response(3);
    assert_eq!(answer["result"]["reply"], "done", "{answer}");
    let result = |name: &str| {
        notes
            .iter()
            .find(|n| {
                n["method"] == "tool/result" && n["params"]["name"] == exported(name).as_str()
            })
            .unwrap_or_else(|| panic!("no result for {name}: {notes:#?}"))["params"]
            .clone()
    };
    let slow = result("slow");
    assert_eq!(slow["is_error"], true, "{slow}");
    assert_eq!(
        slow["output"],
        "MCP tool `slow` of server `fake` needs task support (execution.taskSupport = \"required\"), which rho does not have yet; the call was not sent"
    );
    assert_eq!(result("quick")["is_error"], false);
    // The model was offered the tool; the server never saw its call.
    let offered: Vec<String> = model.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(offered.contains(&exported("slow")), "{offered:?}");
    assert_eq!(rpc.finish(), 0);
    let calls = calls_received(&record);
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(calls[0].contains("\"quick\""), "{calls:?}");
}
