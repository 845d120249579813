//! MCP's client half through `rho rpc`, against the real `@modelcontextprotocol/server-everything`
//! (stdio): the workspace as the one root, a server's form and sampling questions put to the
//! RPC client and answered, prompts as `/mcp:` commands with argument suggestions, and
//! resources attached to a prompt. The model is `fake-model`, scripted turn by turn.

use std::path::Path;

use rho_component::naming::ExportedNames;
use rho_e2e::{FakeModel, Rpc, Sandbox, everything};
use serde_json::{Value, json};

const FAKE_MODEL: &str = env!("CARGO_BIN_EXE_fake-model");

fn model(dir: &Path, script: &Value) -> FakeModel {
    FakeModel::start(FAKE_MODEL, dir, script)
}

/// The exported name of a server-everything tool.
fn tool(name: &str) -> String {
    ExportedNames::default().assign("everything", name)
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": tool(name), "arguments": arguments})
}

fn tool_names(rpc: &mut Rpc, id: u64) -> Vec<String> {
    let tools = rpc.call(id, "listTools", json!({}));
    tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Reads until the next `question/request` and returns its params.
fn next_question(rpc: &mut Rpc) -> Value {
    rpc.until("question/request")["params"].clone()
}

fn tool_result<'a>(notes: &'a [Value], name: &str) -> &'a Value {
    let exported = tool(name);
    notes
        .iter()
        .find(|n| n["method"] == "tool/result" && n["params"]["name"] == exported.as_str())
        .unwrap_or_else(|| panic!("no tool/result for {name}: {notes:#?}"))
}

#[test]
fn roots_forms_and_sampling_reach_the_client_and_come_back_typed() {
    let sandbox = everything::allow_all_sandbox("sampling = \"ask\"\n");
    let model = model(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [call("get-roots-list", json!({}))]},
            {"tool_calls": [call("trigger-elicitation-request", json!({}))]},
            {"tool_calls": [call("trigger-sampling-request", json!({"prompt": "say hi", "maxTokens": 50}))]},
            // The server's sampling request, on the user's model.
            {"content": "sampled reply", "expect": {"last_message_contains": "say hi"}},
            {"content": "all done"}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral", "--accept-questions"]);
    let names = tool_names(&mut rpc, 1);
    for wanted in [
        "trigger-elicitation-request",
        "trigger-sampling-request",
        "get-roots-list",
    ] {
        assert!(
            names.contains(&tool(wanted)),
            "{wanted} not offered: {names:?}"
        );
    }
    rpc.request(2, "prompt", json!({"message": "go"}));
    // The form: titled with the server, attached to the call that caused it.
    let form = next_question(&mut rpc);
    assert_eq!(form["kind"], "elicitation", "{form}");
    assert_eq!(form["server"], "everything");
    let asking_call = rpc
        .seen
        .iter()
        .rev()
        .find(|n| n["method"] == "tool/call")
        .unwrap()["params"]["call_id"]
        .clone();
    assert_eq!(form["callId"], asking_call, "{form}");
    // The notification a client renders, as it reaches stdout (ids vary from run to run).
    let mut shown = form.clone();
    shown["questionId"] = json!("[id]");
    shown["callId"] = json!("[call]");
    insta::assert_snapshot!(
        "question_request_form",
        serde_json::to_string_pretty(&shown).unwrap()
    );
    let fields = form["fields"].as_array().unwrap();
    let field = |name: &str| fields.iter().find(|f| f["name"] == name).unwrap().clone();
    assert_eq!(field("name")["kind"], "text");
    assert_eq!(field("name")["required"], true);
    assert_eq!(field("check")["kind"], "boolean");
    assert_eq!(
        field("firstLine")["default"],
        "It was a dark and stormy night."
    );
    let answer = rpc.call(
        3,
        "questionResponse",
        json!({"questionId": form["questionId"], "action": "accept", "answers": {"name": "Ada", "check": "yes"}}),
    );
    assert_eq!(answer, json!({}));
    // The sampling request: who asks, how much, and the conversation.
    let sampling = next_question(&mut rpc);
    assert_eq!(sampling["kind"], "sampling", "{sampling}");
    assert_eq!(sampling["server"], "everything");
    let mut shown = sampling.clone();
    shown["questionId"] = json!("[id]");
    shown["callId"] = json!("[call]");
    insta::assert_snapshot!(
        "question_request_sampling",
        serde_json::to_string_pretty(&shown).unwrap()
    );
    assert_eq!(sampling["maxTokens"], 50);
    assert!(
        sampling["messages"][0]["text"]
            .as_str()
            .unwrap()
            .contains("say hi"),
        "{sampling}"
    );
    rpc.call(
        4,
        "questionResponse",
        json!({"questionId": sampling["questionId"], "action": "accept"}),
    );
    let (_, response) = rpc.response(2);
    assert_eq!(response["result"]["reply"], "all done", "{response}");
    let notes = rpc.seen.clone();
    let roots = tool_result(&notes, "get-roots-list")["params"]["output"]
        .as_str()
        .unwrap()
        .to_owned();
    let workspace = dunce::canonicalize(&sandbox.project).unwrap();
    assert!(
        roots.contains(&format!("file://{}", workspace.display())),
        "{roots}"
    );
    let form_result = tool_result(&notes, "trigger-elicitation-request")["params"]["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(form_result.contains("- Name: Ada"), "{form_result}");
    // The boolean went back as a JSON boolean, not as the text typed.
    assert!(
        form_result.contains("Agreed to terms: true"),
        "{form_result}"
    );
    let sampled = tool_result(&notes, "trigger-sampling-request")["params"]["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(sampled.contains("sampled reply"), "{sampled}");
    assert!(sampled.contains("fake-model-1"), "{sampled}");
    // Sampling spend is recorded apart from the user's turns.
    let stats = rpc.call(5, "getSessionStats", json!({}));
    assert_eq!(
        stats["usageByPurpose"]["mcp_sampling"]["requestCount"], 1,
        "{stats}"
    );
    assert_eq!(
        stats["usageByPurpose"]["turns"]["requestCount"], 4,
        "{stats}"
    );
    assert_eq!(model.requests().len(), 5);
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn nothing_is_declared_where_nobody_can_answer() {
    // Sampling opted in, but no --accept-questions: no form, no sampling question can reach a
    // person, so neither is declared and server-everything offers neither tool.
    let sandbox = everything::allow_all_sandbox("sampling = \"ask\"\n");
    let model = model(&sandbox.dir.path().join("model"), &json!([]));
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    let names = tool_names(&mut rpc, 1);
    assert!(names.contains(&tool("get-roots-list")), "{names:?}");
    assert!(
        !names.contains(&tool("trigger-elicitation-request")),
        "{names:?}"
    );
    assert!(
        !names.contains(&tool("trigger-sampling-request")),
        "{names:?}"
    );
    assert_eq!(rpc.finish(), 0);
    // With questions accepted but sampling left at its default (deny): forms only.
    let sandbox = everything::allow_all_sandbox("");
    let model = self::model(&sandbox.dir.path().join("model"), &json!([]));
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral", "--accept-questions"]);
    let names = tool_names(&mut rpc, 1);
    assert!(
        names.contains(&tool("trigger-elicitation-request")),
        "{names:?}"
    );
    assert!(
        !names.contains(&tool("trigger-sampling-request")),
        "{names:?}"
    );
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn a_declined_form_lets_the_turn_go_on_and_a_cancelled_one_ends_it() {
    let sandbox = everything::allow_all_sandbox("");
    let model = model(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [call("trigger-elicitation-request", json!({}))]},
            {"content": "went on", "expect": {"last_message_contains": "declined"}},
            {"tool_calls": [call("trigger-elicitation-request", json!({}))]},
            {"content": "never asked for"}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral", "--accept-questions"]);
    rpc.request(1, "prompt", json!({"message": "ask me"}));
    let form = next_question(&mut rpc);
    rpc.call(
        2,
        "questionResponse",
        json!({"questionId": form["questionId"], "action": "decline"}),
    );
    let (_, response) = rpc.response(1);
    assert_eq!(response["result"]["reply"], "went on", "{response}");
    // An answer that cannot carry its type declines, as does an unknown question.
    rpc.request(3, "prompt", json!({"message": "ask again"}));
    let form = next_question(&mut rpc);
    rpc.request(
        4,
        "questionResponse",
        json!({"questionId": 999, "action": "accept"}),
    );
    let (_, unknown) = rpc.response(4);
    assert_eq!(unknown["error"]["code"], -32600, "{unknown}");
    rpc.call(
        5,
        "questionResponse",
        json!({"questionId": form["questionId"], "action": "cancel"}),
    );
    let (_, response) = rpc.response(3);
    assert_eq!(response["result"]["finishReason"], "aborted", "{response}");
    assert_eq!(
        model.requests().len(),
        3,
        "no model request after the cancel"
    );
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn prompts_are_commands_with_suggestions_and_resources_attach_to_a_prompt() {
    let sandbox = everything::allow_all_sandbox("");
    let model = model(
        &sandbox.dir.path().join("model"),
        &json!([
            {"content": "sunny", "expect": {"last_message_contains": "What's weather in Paris, Texas?"}},
            {"content": "read it", "expect": {"last_message_contains": "Resource 1: This is a plaintext resource"}}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    let prompts = rpc.call(1, "listPrompts", json!({}));
    let commands: Vec<&str> = prompts
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["command"].as_str().unwrap())
        .collect();
    for wanted in ["simple-prompt", "args-prompt", "completable-prompt"] {
        assert!(
            commands.contains(&format!("/mcp:everything:{wanted}").as_str()),
            "{prompts}"
        );
    }
    let args = prompts
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "args-prompt")
        .unwrap();
    assert_eq!(args["server"], "everything");
    assert_eq!(args["arguments"][0]["name"], "city");
    assert_eq!(args["arguments"][0]["required"], true);
    // Suggestions for an argument, and for the next one given the first.
    let department = rpc.call(
        2,
        "complete",
        json!({"command": "/mcp:everything:completable-prompt", "argument": "department", "value": "E"}),
    );
    assert_eq!(department, json!({"values": ["Engineering"]}));
    let lead = rpc.call(
        3,
        "complete",
        json!({"command": "/mcp:everything:completable-prompt", "argument": "name", "value": "",
               "arguments": {"department": "Engineering"}}),
    );
    assert_eq!(lead, json!({"values": ["Alice", "Bob", "Charlie"]}));
    let none = rpc.call(
        4,
        "complete",
        json!({"command": "/mcp:nobody:x", "argument": "a", "value": ""}),
    );
    assert_eq!(none, json!({"values": []}));
    // A missing required argument is named, and no turn starts.
    rpc.request(
        5,
        "prompt",
        json!({"message": "/mcp:everything:args-prompt state=Texas"}),
    );
    let (notes, missing) = rpc.response(5);
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("city"),
        "{missing}"
    );
    assert!(
        !notes.iter().any(|n| n["method"] == "agent/start"),
        "{notes:?}"
    );
    // Expanded at submit: the model reads the server's text.
    rpc.request(
        6,
        "prompt",
        json!({"message": "/mcp:everything:args-prompt city=Paris state=Texas"}),
    );
    let (_, response) = rpc.response(6);
    assert_eq!(response["result"]["reply"], "sunny", "{response}");
    // Resources and templates are listed; a resource read before the turn joins its message.
    let resources = rpc.call(7, "listResources", json!({}));
    let list = resources.as_array().unwrap();
    assert!(
        list.iter()
            .any(|r| r["template"] == true && r["uri"].as_str().unwrap().contains("{")),
        "{resources}"
    );
    assert!(
        list.iter()
            .any(|r| r["template"] == false && r["server"] == "everything"),
        "{resources}"
    );
    rpc.request(
        8,
        "prompt",
        json!({"message": "summarize", "attachments": [{"server": "everything", "uri": "demo://resource/dynamic/text/1"}]}),
    );
    let (_, response) = rpc.response(8);
    assert_eq!(response["result"]["reply"], "read it", "{response}");
    // A read that fails names the URI and starts no turn.
    rpc.request(
        9,
        "prompt",
        json!({"message": "x", "attachments": [{"server": "everything", "uri": "demo://nothing/here"}]}),
    );
    let (notes, failed) = rpc.response(9);
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("demo://nothing/here"),
        "{failed}"
    );
    assert!(
        !notes.iter().any(|n| n["method"] == "agent/start"),
        "{notes:?}"
    );
    assert_eq!(model.requests().len(), 2);
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn a_revised_tool_reaches_the_model_next_turn_and_added_ones_need_a_restart() {
    let sandbox = Sandbox::new();
    let fake = env!("CARGO_BIN_EXE_fake-mcp");
    sandbox.write_config(&format!(
        "[agent]\npermission_mode = \"allow-all\"\n\n[mcp.servers.fake]\ncommand = \"{fake}\"\nargs = [\"--mode\", \"list-changed\"]\n"
    ));
    let echo = ExportedNames::default().assign("fake", "echo");
    let model = model(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [{"name": echo, "arguments": {}}]},
            {"content": "called"},
            {"content": "second turn"}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.request(1, "prompt", json!({"message": "call echo"}));
    let (_, first) = rpc.response(1);
    assert_eq!(first["result"]["reply"], "called", "{first}");
    // The server announced a new list after the call; the next turn reconciles it.
    std::thread::sleep(std::time::Duration::from_millis(200));
    rpc.request(2, "prompt", json!({"message": "again"}));
    let (_, second) = rpc.response(2);
    assert_eq!(second["result"]["reply"], "second turn", "{second}");
    let requests = model.requests();
    let description = |body: &Value| {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == echo.as_str())
            .map(|t| t["function"]["description"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert!(!description(&requests[0]).contains("revised"));
    assert!(
        description(&requests[2]).contains("echo, revised"),
        "the revised definition reaches the model: {}",
        description(&requests[2])
    );
    let extensions = rpc.call(3, "listExtensions", json!({}));
    let server = &extensions["servers"][0];
    assert_eq!(server["addedTools"], json!(["newcomer"]), "{extensions}");
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn end_of_input_declines_an_open_question_and_rho_exits() {
    let sandbox = everything::allow_all_sandbox("");
    let model = model(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [call("trigger-elicitation-request", json!({}))]},
            {"content": "carried on", "expect": {"last_message_contains": "declined"}}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral", "--accept-questions"]);
    rpc.request(1, "prompt", json!({"message": "ask"}));
    next_question(&mut rpc);
    drop(rpc.stdin.take());
    let (_, response) = rpc.response(1);
    assert_eq!(response["result"]["reply"], "carried on", "{response}");
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn a_modern_server_asks_through_input_requests_and_gets_the_same_answers() {
    // The Python `mcp` 2.x server speaks 2026-07-28: its questions arrive as input requests
    // inside the tool call's result (multi round-trip requests), not as server requests.
    let sandbox = Sandbox::new();
    let script = rho_e2e::repo_root().join("tests/peers/modern_server.py");
    sandbox.write_config(&format!(
        "[agent]\npermission_mode = \"allow-all\"\n\n[mcp.servers.modern]\ncommand = \"python3\"\nargs = [\"{}\", \"stdio\"]\nsampling = \"ask\"\n",
        script.display()
    ));
    let modern = |name: &str| ExportedNames::default().assign("modern", name);
    let model = model(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [{"name": modern("roots"), "arguments": {}}]},
            {"tool_calls": [{"name": modern("profile"), "arguments": {}}]},
            {"tool_calls": [{"name": modern("summarize"), "arguments": {"topic": "tides"}}]},
            {"content": "tides rise", "expect": {"last_message_contains": "Write about tides"}},
            {"content": "finished"}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral", "--accept-questions"]);
    let extensions = rpc.call(1, "listExtensions", json!({}));
    assert_eq!(
        extensions["servers"][0]["protocolVersion"], "2026-07-28",
        "{extensions}"
    );
    rpc.request(2, "prompt", json!({"message": "go"}));
    let form = next_question(&mut rpc);
    assert_eq!(form["server"], "modern", "{form}");
    let kinds: Vec<(&str, &str)> = form["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap(), f["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("name", "text"),
            ("age", "integer"),
            ("subscribe", "boolean")
        ],
        "{form}"
    );
    rpc.call(
        3,
        "questionResponse",
        json!({"questionId": form["questionId"], "action": "accept",
               "answers": {"name": "Ada", "age": "36", "subscribe": "no"}}),
    );
    let sampling = next_question(&mut rpc);
    assert_eq!(sampling["kind"], "sampling", "{sampling}");
    assert_eq!(sampling["maxTokens"], 64);
    rpc.call(
        4,
        "questionResponse",
        json!({"questionId": sampling["questionId"], "action": "accept"}),
    );
    let (_, response) = rpc.response(2);
    assert_eq!(response["result"]["reply"], "finished", "{response}");
    let output = |name: &str| {
        let exported = modern(name);
        rpc.seen
            .iter()
            .find(|n| n["method"] == "tool/result" && n["params"]["name"] == exported.as_str())
            .unwrap_or_else(|| panic!("no result for {name}"))["params"]["output"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let workspace = dunce::canonicalize(&sandbox.project).unwrap();
    assert!(
        output("roots").contains(&format!("file://{}", workspace.display())),
        "{}",
        output("roots")
    );
    // Typed back to the schema: an integer and a boolean, not the text typed.
    // (The server mirrors its result as structured content, which is what the model reads.)
    assert!(
        output("profile").contains("accepted name='Ada' age=36 subscribe=False"),
        "{}",
        output("profile")
    );
    assert!(
        output("summarize").contains("model=fake-model-1 text=tides rise"),
        "{}",
        output("summarize")
    );
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn abort_declines_an_open_question_and_ends_the_turn() {
    let sandbox = everything::allow_all_sandbox("");
    let model = model(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [call("trigger-elicitation-request", json!({}))]},
            {"content": "never asked for"}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral", "--accept-questions"]);
    rpc.request(1, "prompt", json!({"message": "ask"}));
    let form = next_question(&mut rpc);
    assert_eq!(rpc.call(2, "abort", json!({})), json!({}));
    let (_, response) = rpc.response(1);
    assert_eq!(response["result"]["finishReason"], "aborted", "{response}");
    // The question is closed: answering it now is refused.
    rpc.request(
        3,
        "questionResponse",
        json!({"questionId": form["questionId"], "action": "accept"}),
    );
    let (_, late) = rpc.response(3);
    assert_eq!(late["error"]["code"], -32600, "{late}");
    assert_eq!(model.requests().len(), 1);
    assert_eq!(rpc.finish(), 0);
}
