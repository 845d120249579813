//! Deferred tool definitions and the `tool_search` tool (`docs/mcp.md`, "Tool search"), end to
//! end: `rho rpc` against `fake-model` (which logs every request it gets) and the real
//! `@modelcontextprotocol/server-everything`, with `[agent] tool_search = "always"`.

use rho_component::naming::ExportedNames;
use rho_e2e::{FakeModel, Rpc, Sandbox, everything};
use serde_json::{Value, json};

const FAKE_MODEL: &str = env!("CARGO_BIN_EXE_fake-model");

fn everything_tool(name: &str) -> String {
    ExportedNames::default().assign("everything", name)
}

/// A sandbox whose config runs server-everything with its tools behind the search.
fn sandbox(tool_search: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[agent]\npermission_mode = \"allow-all\"\ntool_search = {tool_search:?}\n\n{}",
        everything::stdio_table("everything", "")
    ));
    sandbox
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

/// The tool names the model was offered in each request.
fn offered(model: &FakeModel) -> Vec<Vec<String>> {
    model
        .requests()
        .iter()
        .map(|request| {
            request["tools"]
                .as_array()
                .map(|tools| {
                    tools
                        .iter()
                        .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect()
}

fn system_prompt(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// fake-model playing `script`, with its files in the sandbox.
fn start_model(sandbox: &Sandbox, script: &Value) -> FakeModel {
    FakeModel::start(FAKE_MODEL, &sandbox.dir.path().join("model"), script)
}

fn prompt(rpc: &mut Rpc, id: u64, message: &str) -> (Vec<Value>, Value) {
    rpc.request(id, "prompt", json!({"message": message}));
    let (notes, response) = rpc.response(id);
    assert!(response.get("error").is_none(), "{response}");
    (notes, response)
}

#[test]
fn deferred_tools_wait_behind_the_search_and_join_after_it_across_continue() {
    let sandbox = sandbox("always");
    let get_sum = everything_tool("get-sum");
    let model = start_model(
        &sandbox,
        &json!([
            {"tool_calls": [call("tool_search", json!({"query": "add two numbers"}))]},
            {"tool_calls": [call(&get_sum, json!({"a": 2, "b": 3}))],
             "expect": {"tools_include": [get_sum], "last_role": "tool"}},
            {"content": "The sum is 5.", "expect": {"last_message_contains": "5"}},
            {"content": "Still here.", "expect": {"tools_include": [get_sum]}}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &[]);
    let (notes, response) = prompt(&mut rpc, 1, "what is 2 + 3?");
    assert_eq!(response["result"]["reply"], "The sum is 5.", "{response}");
    let search = notes
        .iter()
        .find(|n| n["method"] == "tool/result" && n["params"]["name"] == "tool_search")
        .expect("the search ran");
    let output = search["params"]["output"].as_str().unwrap();
    assert!(output.contains(&get_sum), "{output}");
    let offered = offered(&model);
    // The first request: the built-in tools and the search, no server tool.
    assert!(
        offered[0].contains(&"tool_search".to_owned()),
        "{:?}",
        offered[0]
    );
    assert!(
        offered[0].contains(&"read_file".to_owned()),
        "{:?}",
        offered[0]
    );
    assert!(
        !offered[0].iter().any(|t| t.starts_with("mcp__everything")),
        "{:?}",
        offered[0]
    );
    let requests = model.requests();
    let prompt_text = system_prompt(&requests[0]);
    assert!(prompt_text.contains("tool_search"), "{prompt_text}");
    assert!(prompt_text.contains("- everything: "), "{prompt_text}");
    // Loading tools does not change the system prompt (a stable prefix for prompt caches).
    assert_eq!(system_prompt(&requests[1]), prompt_text);
    // After the search, its matches join (and stay).
    assert!(offered[1].contains(&get_sum), "{:?}", offered[1]);
    assert!(offered[2].contains(&get_sum), "{:?}", offered[2]);
    // listExtensions says what waits and what the definitions cost.
    let extensions = rpc.call(2, "listExtensions", json!({}));
    let tools = &extensions["context"]["tools"];
    assert_eq!(tools["mode"], "always", "{tools:#}");
    assert_eq!(tools["deferring"], true, "{tools:#}");
    let everything = &tools["owners"]["everything"];
    assert_eq!(everything["loaded"], 1, "{everything:#}");
    let waiting = everything["waiting"].as_u64().unwrap();
    assert_eq!(
        waiting + 1,
        everything["tools"].as_u64().unwrap(),
        "{everything:#}"
    );
    assert!(
        tools["sentTokens"].as_u64().unwrap() < tools["allTokens"].as_u64().unwrap(),
        "{tools:#}"
    );
    assert!(extensions["context"]["systemTokens"].as_u64().unwrap() > 0);
    assert_eq!(rpc.finish(), 0);

    // Resumed: what the search loaded is still offered, without searching again.
    let mut rpc = Rpc::start(&sandbox, &model, &["--continue"]);
    let (_, response) = prompt(&mut rpc, 1, "are you there?");
    assert_eq!(response["result"]["reply"], "Still here.", "{response}");
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn a_deferred_tool_called_by_its_name_runs_and_is_loaded() {
    let sandbox = sandbox("always");
    let echo = everything_tool("echo");
    let model = start_model(
        &sandbox,
        &json!([
            {"tool_calls": [call(&echo, json!({"message": "straight through"}))]},
            {"content": "Echoed.", "expect": {"tools_include": [echo], "last_message_contains": "straight through"}}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    let (notes, response) = prompt(&mut rpc, 1, "echo something");
    assert_eq!(response["result"]["reply"], "Echoed.", "{response}");
    let result = notes
        .iter()
        .find(|n| n["method"] == "tool/result")
        .expect("the call ran");
    assert_eq!(result["params"]["is_error"], false, "{result}");
    assert!(!offered(&model)[0].contains(&echo));
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn auto_sends_everything_while_the_definitions_fit_and_never_never_defers() {
    for mode in ["auto", "never"] {
        let sandbox = sandbox(mode);
        let model = start_model(&sandbox, &json!([{"content": "ok"}]));
        let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
        prompt(&mut rpc, 1, "hello");
        let offered = offered(&model);
        assert!(
            offered[0].contains(&everything_tool("echo")),
            "{mode}: {:?}",
            offered[0]
        );
        assert!(
            !offered[0].contains(&"tool_search".to_owned()),
            "{mode}: {:?}",
            offered[0]
        );
        assert_eq!(rpc.finish(), 0);
    }
}

/// The figure of `docs/benchmarks.md`, "Tool definitions per request": 20 servers of 40 real
/// tool definitions each (from the tool search quality set: real servers' tools, served by
/// `fake-mcp --tools-file`), the first model request's `tools` with the tool search off
/// (`never`, every definition) and on (`auto`, which defers past 10 % of the window).
#[test]
fn twenty_servers_of_forty_real_tools_cost_at_most_5_percent_with_the_tool_search() {
    const SERVERS: usize = 20;
    const TOOLS: usize = 40;
    let sandbox = Sandbox::new();
    let data: Value = serde_json::from_str(
        &std::fs::read_to_string(
            rho_e2e::repo_root().join("host/core/tests/data/tool_search/tool_sets.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let real: Vec<Value> = data["servers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["tools"].as_array().unwrap().iter().cloned())
        .collect();
    let records = sandbox.outside("tools");
    let mut servers = String::new();
    for i in 0..SERVERS {
        // 40 tools of distinct names, taken in order from where the last server stopped.
        let mut tools: Vec<&Value> = Vec::new();
        let mut k = i * TOOLS;
        while tools.len() < TOOLS {
            let tool = &real[k % real.len()];
            if !tools.iter().any(|t| t["name"] == tool["name"]) {
                tools.push(tool);
            }
            k += 1;
        }
        let file = records.join(format!("s{i:02}.json"));
        std::fs::write(&file, serde_json::to_vec(&tools).unwrap()).unwrap();
        servers.push_str(&format!(
            "\n[mcp.servers.s{i:02}]\ncommand = {}\nargs = [\"--tools-file\", {}]\n",
            json!(env!("CARGO_BIN_EXE_fake-mcp")),
            json!(file.display().to_string())
        ));
    }
    let mut figures = Vec::new();
    for mode in ["never", "auto"] {
        sandbox.write_config(&format!("[agent]\ntool_search = {mode:?}\n{servers}"));
        let model = FakeModel::start(
            FAKE_MODEL,
            &sandbox.dir.path().join(format!("model-{mode}")),
            &json!([{"content": "ok"}]),
        );
        let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
        prompt(&mut rpc, 1, "hello");
        assert_eq!(rpc.finish(), 0);
        let first = &model.requests()[0];
        let tools = first["tools"].as_array().unwrap();
        let bytes = serde_json::to_string(tools).unwrap().len();
        let system = system_prompt(first).len();
        figures.push((mode, tools.len(), bytes, system));
    }
    let (_, eager_tools, eager, system_off) = figures[0];
    let (_, searched_tools, searched, system_on) = figures[1];
    // What the search costs counts against it: its definition is among the tools sent, and the
    // system prompt's note naming the servers whose tools wait is added here.
    let note = system_on.saturating_sub(system_off);
    #[allow(clippy::cast_precision_loss)]
    let ratio = (searched + note) as f64 / eager as f64;
    println!("tool definitions in the first request, {SERVERS} servers x {TOOLS} real tools:");
    println!(
        "  tool search off: {eager_tools} tools, {eager} bytes (~{} tokens)",
        eager / 4
    );
    println!(
        "  tool search on:  {searched_tools} tools, {searched} bytes, plus a {note}-byte note in the system prompt (~{} tokens)",
        (searched + note) / 4
    );
    println!("  ratio (on / off): {ratio:.4}");
    assert!(
        eager_tools > SERVERS * TOOLS,
        "every definition is sent with the search off: {eager_tools}"
    );
    assert!(ratio <= 0.05, "on/off = {ratio:.4}");
}

#[test]
fn a_pinned_server_is_always_sent_while_others_wait() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[agent]\ntool_search = \"always\"\n\n{}\n[mcp.servers.many]\ncommand = {}\nargs = [\"--mode\", \"many-tools\", \"--count\", \"12\"]\n",
        everything::stdio_table("everything", "defer = false\n"),
        json!(env!("CARGO_BIN_EXE_fake-mcp")),
    ));
    let model = start_model(&sandbox, &json!([{"content": "ok"}]));
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    prompt(&mut rpc, 1, "hello");
    assert_eq!(rpc.finish(), 0);
    let offered = &offered(&model)[0];
    assert!(offered.contains(&everything_tool("echo")), "{offered:?}");
    assert!(offered.contains(&"tool_search".to_owned()), "{offered:?}");
    assert!(
        !offered.iter().any(|t| t.starts_with("mcp__many")),
        "{offered:?}"
    );
    let prompt_text = system_prompt(&model.requests()[0]);
    assert!(prompt_text.contains("- many: 12 tools"), "{prompt_text}");
    assert!(!prompt_text.contains("- everything:"), "{prompt_text}");
}
