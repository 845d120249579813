//! `rho rpc` end to end: the real binary over pipes, a scripted OpenAI-compatible model
//! (`fake-model`) on loopback, real tools and a real MCP server. Every stdout line must be a
//! JSON-RPC message; notification sequences are checked against those `docs/rpc.md` documents.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rho_e2e::{
    FakeModel, HostileFiles, Rpc, Sandbox, everything, make_fifo, processes_with, write,
};
use serde_json::{Value, json};

const FAKE_MODEL: &str = env!("CARGO_BIN_EXE_fake-model");

/// The scripted model server, started with this test binary's `fake-model`.
struct Model;

impl Model {
    fn start(dir: &Path, script: &Value) -> FakeModel {
        FakeModel::start(FAKE_MODEL, dir, script)
    }
}

/// rho in JSON-RPC mode (`first` is `["rpc"]`, or nothing for the piped-stdin default) with an
/// ephemeral session on `endpoint`, stdin and stdout piped.
fn ephemeral_rpc(sandbox: &Sandbox, first: &[&str], endpoint: &str) -> Command {
    let mut args = first.to_vec();
    args.extend(["--ephemeral", "--endpoint", endpoint, "--model", "m"]);
    let mut command = sandbox.command(&args);
    command.stdin(Stdio::piped()).stdout(Stdio::piped());
    command
}

/// [`ephemeral_rpc`] fed `input` (stdin closed after it), stderr dropped: its stdout and
/// exit code.
fn piped_rpc(
    sandbox: &Sandbox,
    first: &[&str],
    endpoint: &str,
    input: &[u8],
) -> (String, Option<i32>) {
    let mut child = ephemeral_rpc(sandbox, first, endpoint)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let output = child.wait_with_output().unwrap();
    (
        String::from_utf8(output.stdout).unwrap(),
        output.status.code(),
    )
}

fn methods(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| m["method"].as_str().map(str::to_owned))
        .collect()
}

/// `expected` appears in `actual` in order (other notifications may come between).
fn assert_subsequence(actual: &[Value], expected: &[(&str, Value)]) {
    let mut at = 0;
    for (method, params) in expected {
        let found = actual[at..].iter().position(|m| {
            m["method"] == *method
                && (params.is_null()
                    || params
                        .as_object()
                        .unwrap()
                        .iter()
                        .all(|(k, v)| m["params"][k] == *v))
        });
        match found {
            Some(i) => at += i + 1,
            None => panic!(
                "{method} {params} not found in order; got {:#?}",
                methods(actual)
            ),
        }
    }
}

fn tool_call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

#[test]
fn a_prompt_reads_a_file_with_a_builtin_tool_in_the_spec_sequence() {
    let sandbox = Sandbox::new();
    write(&sandbox.project.join("notes.txt"), "the answer is 42\n");
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [tool_call("read_file", json!({"path": "notes.txt"}))],
             "expect": {"tools_include": ["read_file", "grep", "run_command"], "last_role": "user"}},
            {"content": "The answer is 42.",
             "expect": {"last_role": "tool", "last_message_contains": "the answer is 42"}}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.request(1, "prompt", json!({"message": "what is the answer?"}));
    let (notes, response) = rpc.response(1);
    assert_eq!(
        response["result"]["reply"], "The answer is 42.",
        "{response}"
    );
    assert_subsequence(
        &notes,
        &[
            ("agent/start", Value::Null),
            ("state/change", json!({"state": "thinking"})),
            (
                "tool/call",
                json!({"name": "read_file", "arguments": "{\"path\":\"notes.txt\"}"}),
            ),
            (
                "tool/result",
                json!({"name": "read_file", "is_error": false}),
            ),
            ("message/delta", Value::Null),
            ("state/change", json!({"state": "idle"})),
            ("agent/end", Value::Null),
        ],
    );
    let result = notes.iter().find(|n| n["method"] == "tool/result").unwrap();
    assert!(
        result["params"]["output"]
            .as_str()
            .unwrap()
            .contains("the answer is 42")
    );
    let end = notes.last().unwrap();
    assert_eq!(
        end["method"], "agent/end",
        "agent/end comes right before the response"
    );
    let end = &end["params"];
    assert_eq!(end["reply"], "The answer is 42.");
    assert_eq!(end["iterations"], 2);
    assert_eq!(end["finishReason"], "stop");
    assert_eq!(end["usage"]["requestCount"], 2);
    assert_eq!(end["toolCalls"][0]["name"], "read_file");
    assert_eq!(end["toolCalls"][0]["outcome"]["kind"], "success");
    let deltas: String = notes
        .iter()
        .filter(|n| n["method"] == "message/delta")
        .map(|n| n["params"]["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "The answer is 42.");
    // The model saw the system prompt first and the tool result answering its call id.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1]["messages"][0]["role"], "system");
    let tool_message = requests[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(tool_message["role"], "tool");
    assert_eq!(
        tool_message["tool_call_id"],
        requests[1]["messages"][2]["tool_calls"][0]["id"]
    );
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn the_spec_hello_example_streams_and_answers() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([{"content": "hello", "usage": {"prompt_tokens": 32, "completion_tokens": 5}}]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.request(1, "prompt", json!({"message": "say hello"}));
    let (notes, response) = rpc.response(1);
    assert_subsequence(
        &notes,
        &[
            ("agent/start", Value::Null),
            ("state/change", json!({"state": "thinking"})),
            ("message/delta", json!({"delta": "hello"})),
            ("state/change", json!({"state": "idle"})),
            (
                "agent/end",
                json!({"reply": "hello", "iterations": 1, "finishReason": "stop",
                "usage": {"inputTokens": 32, "outputTokens": 5, "totalTokens": 37, "totalCost": 0.0, "requestCount": 1},
                "toolCalls": []}),
            ),
        ],
    );
    assert_eq!(response["result"]["reply"], "hello");
    let usage = notes.iter().find(|n| n["method"] == "usage").unwrap();
    assert_eq!(usage["params"]["iteration"], 1);
    assert_eq!(usage["params"]["usage"]["totalTokens"], 37);
    assert_eq!(rpc.finish(), 0);
}

fn approval_script(after: Value) -> Value {
    json!([
        {"tool_calls": [tool_call("run_command", json!({"argv": ["echo", "removed"]}))]},
        after
    ])
}

#[test]
fn an_approved_destructive_call_runs() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &approval_script(
            json!({"content": "Done.", "expect": {"last_role": "tool", "last_message_contains": "removed"}}),
        ),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.request(1, "prompt", json!({"message": "delete the temp files"}));
    let request = rpc.until("approval/request");
    assert_eq!(
        request["params"],
        json!({"call_id": "call_1_1", "tool": "run_command", "display_name": "run_command", "arguments": "{\"argv\":[\"echo\",\"removed\"]}", "risk": "destructive"})
    );
    assert_eq!(
        rpc.call(2, "approvalResponse", json!({"approved": true})),
        json!({})
    );
    let (notes, response) = rpc.response(1);
    assert_subsequence(
        &notes,
        &[
            (
                "tool/result",
                json!({"name": "run_command", "is_error": false}),
            ),
            ("state/change", json!({"state": "idle"})),
            ("agent/end", json!({"reply": "Done."})),
        ],
    );
    assert!(!methods(&notes).contains(&"tool/denied".to_owned()));
    assert_eq!(response["result"]["reply"], "Done.");
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn a_denied_call_is_reported_and_the_model_continues() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &approval_script(json!({"content": "I will not delete anything.",
            "expect": {"last_role": "tool", "last_message_contains": "denied"}})),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.request(1, "prompt", json!({"message": "delete the temp files"}));
    rpc.until("approval/request");
    rpc.call(2, "approvalResponse", json!({"approved": false}));
    let (notes, response) = rpc.response(1);
    assert_subsequence(
        &notes,
        &[
            ("tool/denied", json!({"name": "run_command"})),
            ("agent/end", json!({"reply": "I will not delete anything."})),
        ],
    );
    assert!(!methods(&notes).contains(&"tool/result".to_owned()));
    let end = notes.iter().find(|n| n["method"] == "agent/end").unwrap();
    assert_eq!(end["params"]["toolCalls"][0]["outcome"]["kind"], "denied");
    assert!(response["result"]["reply"].is_string());
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn an_approval_request_carries_the_models_arguments_byte_for_byte() {
    let sandbox = Sandbox::new();
    // `touch X`, 300 line breaks, `echo hello`: a front-end that showed a trimmed or
    // re-serialized form could hide what runs. The text keeps the model's own spacing, so a
    // re-serialized form would not match either.
    let command = format!("touch X\n{}echo hello", "\n".repeat(300));
    let arguments = format!(
        "{{ \"command\" :  {} }}",
        serde_json::to_string(&command).unwrap()
    );
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [{"name": "run_command", "arguments": arguments}]},
            {"content": "Not run.", "expect": {"last_role": "tool", "last_message_contains": "denied"}}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.request(1, "prompt", json!({"message": "make X"}));
    let request = rpc.until("approval/request");
    assert_eq!(request["params"]["arguments"], arguments.as_str());
    let parsed: Value =
        serde_json::from_str(request["params"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(parsed["command"], command.as_str());
    assert_eq!(parsed["command"].as_str().unwrap().lines().count(), 302);
    rpc.call(2, "approvalResponse", json!({"approved": false}));
    let (_, response) = rpc.response(1);
    assert_eq!(response["result"]["reply"], "Not run.");
    assert!(!sandbox.project.join("X").exists());
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn a_redirect_abandons_the_batch_and_the_model_replans() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &approval_script(json!({"content": "Listing them instead.",
            "expect": {"last_role": "user", "last_message_contains": "only list the temp files"}})),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.request(1, "prompt", json!({"message": "delete the temp files"}));
    rpc.until("approval/request");
    rpc.call(
        2,
        "approvalResponse",
        json!({"approved": false, "message": "only list the temp files"}),
    );
    let (notes, response) = rpc.response(1);
    let seen = methods(&notes);
    assert!(!seen.contains(&"tool/denied".to_owned()), "{seen:?}");
    assert!(!seen.contains(&"tool/result".to_owned()), "{seen:?}");
    assert_eq!(response["result"]["reply"], "Listing them instead.");
    let end = notes.iter().find(|n| n["method"] == "agent/end").unwrap();
    assert_eq!(
        end["params"]["toolCalls"][0]["outcome"]["kind"],
        "redirected"
    );
    assert_eq!(rpc.finish(), 0);
}

fn allow_all(sandbox: &Sandbox, extra: &str) {
    sandbox.write_config(&format!(
        "[agent]\npermission_mode = \"allow-all\"\n{extra}"
    ));
}

#[test]
fn steering_joins_at_the_next_tool_batch_seam() {
    let sandbox = Sandbox::new();
    allow_all(&sandbox, "");
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [tool_call("run_command", json!({"argv": ["sleep", "0.7"]}))]},
            {"content": "Checked the tests too.",
             "expect": {"last_role": "user", "last_message_contains": "also check the tests"}}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.request(1, "prompt", json!({"message": "fix the bug"}));
    rpc.until("tool/call");
    // Answered at once, while the tool still runs.
    let started = Instant::now();
    rpc.request(
        2,
        "prompt",
        json!({"message": "also check the tests", "steer": true}),
    );
    let (_, steer) = rpc.response(2);
    assert_eq!(steer["result"], json!({}));
    assert!(started.elapsed() < Duration::from_millis(500));
    let (notes, response) = rpc.response(1);
    assert_eq!(
        response["result"]["reply"], "Checked the tests too.",
        "{notes:#?}"
    );
    assert_eq!(rpc.finish(), 0);
}

/// Sends prompt 1, whose tool call runs a command with `marker` in its arguments, and waits
/// until that command runs.
fn prompt_until_running(rpc: &mut Rpc, marker: &str) {
    rpc.request(1, "prompt", json!({"message": "wait"}));
    rpc.until("tool/call");
    let deadline = Instant::now() + Duration::from_secs(5);
    while processes_with(marker).is_empty() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn abort_mid_tool_kills_the_command_and_ends_the_prompt() {
    let sandbox = Sandbox::new();
    allow_all(&sandbox, "");
    let marker = format!("29.{}", std::process::id());
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [tool_call("run_command", json!({"argv": ["sleep", marker]}))]},
            {"content": "never requested"}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    prompt_until_running(&mut rpc, &marker);
    let started = Instant::now();
    assert_eq!(rpc.call(2, "abort", json!(null)), json!({}));
    let (notes, response) = rpc.response(1);
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(response["result"]["finishReason"], "aborted", "{response}");
    let end = notes.iter().find(|n| n["method"] == "agent/end").unwrap();
    assert_eq!(
        end["params"]["toolCalls"][0]["outcome"]["kind"],
        "cancelled"
    );
    assert!(
        processes_with(&marker).is_empty(),
        "the command survived the abort"
    );
    assert_eq!(
        model.requests().len(),
        1,
        "no model request after the abort"
    );
    // Nothing runs any more.
    rpc.request(3, "abort", json!(null));
    let (_, response) = rpc.response(3);
    assert_eq!(response["error"]["code"], -32600);
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn a_saved_session_is_resumed_with_continue_and_listed() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([
            {"content": "I will remember kiwi."},
            {"content": "The word was kiwi.",
             "expect": {"any_message_contains": "remember the word kiwi"}}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &[]);
    rpc.call(1, "prompt", json!({"message": "remember the word kiwi"}));
    let state = rpc.call(2, "getState", json!({}));
    let file = PathBuf::from(state["sessionFile"].as_str().unwrap());
    assert!(
        file.starts_with(sandbox.rho_home.join("sessions")),
        "{state}"
    );
    assert_eq!(state["model"], "fake-model-1");
    assert_eq!(state["cwd"], json!(sandbox.project));
    assert_eq!(rpc.finish(), 0);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.lines().next().unwrap().contains("\"type\":\"header\""));

    let mut rpc = Rpc::start(&sandbox, &model, &["--continue"]);
    let messages = rpc.call(1, "getMessages", json!({}));
    assert_eq!(messages["messages"][0]["content"], "remember the word kiwi");
    assert_eq!(messages["messages"][1]["content"], "I will remember kiwi.");
    let reply = rpc.call(2, "prompt", json!({"message": "which word?"}));
    assert_eq!(reply["reply"], "The word was kiwi.");
    let sessions = rpc.call(3, "listSessions", json!({}));
    assert_eq!(
        sessions["sessions"].as_array().unwrap().len(),
        1,
        "{sessions}"
    );
    assert_eq!(sessions["sessions"][0]["messages"], 4);
    assert_eq!(
        sessions["sessions"][0]["firstPrompt"],
        "remember the word kiwi"
    );
    let stats = rpc.call(4, "getSessionStats", json!({}));
    assert_eq!(stats["usage"]["requestCount"], 2);
    assert_eq!(rpc.finish(), 0);

    // --session <path> resumes the same file; --ephemeral writes nothing new.
    let mut rpc = Rpc::start(&sandbox, &model, &["--session", file.to_str().unwrap()]);
    assert_eq!(
        rpc.call(1, "getMessages", json!({}))["messages"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    assert_eq!(rpc.finish(), 0);
    let rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    assert_eq!(rpc.finish(), 0);
    let dir = file.parent().unwrap();
    assert_eq!(std::fs::read_dir(dir).unwrap().count(), 1);
}

/// rho in JSON-RPC mode in `workspace` (with `flags`), fed `lines` (stdin closed after them):
/// each answer by its id.
fn answers_in(
    sandbox: &Sandbox,
    workspace: &Path,
    flags: &[&str],
    lines: &[Value],
) -> std::collections::BTreeMap<u64, Value> {
    let mut child = sandbox
        .command_in(workspace, flags)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|m| Some((m["id"].as_u64()?, m)))
        .collect()
}

/// A workspace whose path is not UTF-8 keeps its conversation: the session file's header
/// records the path as its bytes (serde refuses such a path as text, which used to fail every
/// prompt there before its first line was saved), and `--continue` finds the session again.
#[test]
fn a_session_in_a_workspace_whose_path_is_not_utf8_is_saved_and_continued() {
    use std::os::unix::ffi::OsStrExt;

    let sandbox = Sandbox::new();
    let workspace = sandbox
        .dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"w\xe9rk"));
    std::fs::create_dir_all(&workspace).unwrap();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([{"content": "first answer"}, {"content": "second answer"}]),
    );
    let endpoint = model.endpoint();
    let prompt = |id: u64, message: &str| json!({"jsonrpc": "2.0", "id": id, "method": "prompt", "params": {"message": message}});
    let first = answers_in(
        &sandbox,
        &workspace,
        &["rpc", "--endpoint", &endpoint, "--model", "m"],
        &[prompt(1, "hello")],
    );
    assert_eq!(first[&1]["result"]["reply"], "first answer", "{first:#?}");
    let again = answers_in(
        &sandbox,
        &workspace,
        &["rpc", "--continue", "--endpoint", &endpoint, "--model", "m"],
        &[
            json!({"jsonrpc": "2.0", "id": 2, "method": "listSessions"}),
            prompt(3, "and then?"),
            json!({"jsonrpc": "2.0", "id": 4, "method": "getMessages"}),
        ],
    );
    assert_eq!(
        again[&2]["result"]["sessions"].as_array().map(Vec::len),
        Some(1),
        "{again:#?}"
    );
    assert_eq!(again[&3]["result"]["reply"], "second answer", "{again:#?}");
    let contents: Vec<&str> = again[&4]["result"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(
        contents,
        ["hello", "first answer", "and then?", "second answer"],
        "{again:#?}"
    );
}

/// A skill directory whose name is not UTF-8 is refused with a diagnostic, and the listing
/// that carries it is still answered: the path is written as text with U+FFFD (serde alone
/// fails on such a path, which used to turn the whole `listExtensions`, or `getState` in such
/// a workspace, into an internal error).
#[test]
fn a_diagnostic_about_a_path_that_is_not_utf8_does_not_lose_the_listing() {
    use std::os::unix::ffi::OsStrExt;

    let sandbox = Sandbox::new();
    let skills = sandbox.project.join(".agents/skills");
    rho_e2e::make_skill(&skills, "release-notes", "Write release notes.");
    let odd = skills.join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::write(
        odd.join("SKILL.md"),
        "---\nname: cafe\ndescription: d\n---\nbody\n",
    )
    .unwrap();
    let model = Model::start(&sandbox.dir.path().join("model"), &json!([]));
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    let extensions = rpc.call(1, "listExtensions", json!({}));
    assert!(
        extensions["skills"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "release-notes"),
        "{extensions:#}"
    );
    let refused = extensions["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "skill-invalid")
        .unwrap_or_else(|| panic!("no skill-invalid diagnostic: {extensions:#}"));
    assert!(
        refused["path"].as_str().unwrap().contains("caf\u{fffd}"),
        "{refused:#}"
    );
    // A workspace whose path is not UTF-8: `getState` still answers, with its `cwd` as text.
    let workspace = sandbox
        .dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"w\xe9rk"));
    std::fs::create_dir_all(&workspace).unwrap();
    let endpoint = model.endpoint();
    let answers = answers_in(
        &sandbox,
        &workspace,
        &[
            "rpc",
            "--ephemeral",
            "--endpoint",
            &endpoint,
            "--model",
            "m",
        ],
        &[json!({"jsonrpc": "2.0", "id": 1, "method": "getState"})],
    );
    let state = &answers[&1];
    assert!(
        state["result"]["cwd"]
            .as_str()
            .is_some_and(|cwd| cwd.ends_with("w\u{fffd}rk")),
        "{state:#}"
    );
}

#[test]
fn tools_extensions_and_state_are_listed() {
    let sandbox = Sandbox::new();
    rho_e2e::make_skill(
        &sandbox.project.join(".agents/skills"),
        "release-notes",
        "Write release notes.",
    );
    let model = Model::start(&sandbox.dir.path().join("model"), &json!([]));
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    let tools = rpc.call(1, "listTools", json!({}));
    let find = |name: &str| {
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {tools:#}"))
            .clone()
    };
    assert_eq!(find("read_file")["risk"], "read");
    assert_eq!(find("edit_file")["risk"], "write");
    assert_eq!(find("run_command")["risk"], "destructive");
    assert_eq!(find("run_command")["source"], "builtin");
    let skills = find("activate_skill")["inputSchema"]["properties"]["name"]["enum"].clone();
    assert!(
        skills.as_array().unwrap().contains(&json!("release-notes")),
        "{skills}"
    );
    let extensions = rpc.call(2, "listExtensions", json!({}));
    let names: Vec<&str> = extensions["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"release-notes") && names.contains(&"rho-plugin-authoring"));
    assert_eq!(extensions["servers"], json!([]));
    let reloaded = rpc.call(3, "reloadExtensions", json!({}));
    assert_eq!(reloaded["skills"], extensions["skills"]);
    // The doctor's rows, with this session's provider reachable.
    let report = rpc.call(40, "doctor", json!({}));
    let checks = report["checks"].as_array().unwrap();
    let row = |name: &str| {
        checks
            .iter()
            .find(|c| c["check"] == name)
            .unwrap_or_else(|| panic!("no {name} row: {report:#}"))
            .clone()
    };
    assert_eq!(row("skills")["status"], "ok", "{report:#}");
    assert!(
        row("skills")["detail"]
            .as_str()
            .unwrap()
            .contains("available")
    );
    assert!(
        row("provider")["detail"]
            .as_str()
            .unwrap()
            .contains("reachable"),
        "{report:#}"
    );
    assert_eq!(report["ok"], true, "{report:#}");
    let providers = rpc.call(4, "listProviders", json!({}));
    assert_eq!(providers["providers"][0]["id"], "cli");
    assert_eq!(providers["providers"][0]["reachable"], true);
    assert_eq!(providers["providers"][0]["active"], true);
    let models = rpc.call(5, "listModels", json!({}));
    assert!(
        models["models"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == "fake-model-2")
    );
    let set = rpc.call(6, "setModel", json!({"model": "fake-model-2"}));
    assert_eq!(set["model"], "fake-model-2");
    assert_eq!(rpc.call(7, "getState", json!({}))["model"], "fake-model-2");
    assert_eq!(rpc.call(8, "clear", json!({})), json!({}));
    let fresh = rpc.call(9, "newSession", json!({}));
    assert_eq!(fresh["messages"], 0);
    assert_eq!(rpc.finish(), 0);
}

/// server-everything's `trigger-long-running-operation`, as rho exports it (`-` is encoded,
/// and the name is shortened to 64 characters with a hash).
const LONG_RUNNING: &str = "mcp__everything___rho_747269676765722d6c6f6e672_ee211d5a154f82c9";

#[test]
fn a_prompt_calls_a_real_mcp_server_tool() {
    let sandbox = everything::allow_all_sandbox("");
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [
                tool_call(LONG_RUNNING, json!({"duration": 1, "steps": 2000})),
                tool_call("mcp__everything__echo", json!({"message": "hi from rho"}))
             ],
             "expect": {"tools_include": ["mcp__everything__echo", LONG_RUNNING]}},
            {"content": "The server echoed.", "expect": {"last_role": "tool", "last_message_contains": "hi from rho"}}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    let extensions = rpc.call(1, "listExtensions", json!({}));
    assert_eq!(
        extensions["servers"][0]["status"], "started",
        "{extensions}"
    );
    rpc.request(2, "prompt", json!({"message": "echo something"}));
    let (notes, response) = rpc.response(2);
    // The long-running tool's progress reaches the client before its result. (Its report for
    // the last step races the result inside rmcp, so only reports before it are certain.)
    let position = |method: &str, name: &str| {
        notes
            .iter()
            .position(|n| n["method"] == method && n["params"]["name"] == name)
            .unwrap_or_else(|| panic!("no {method} for {name}: {notes:#?}"))
    };
    let call_id = notes[position("tool/call", LONG_RUNNING)]["params"]["call_id"].clone();
    assert!(call_id.is_string(), "{notes:#?}");
    // Reports a client has not read yet merge (the latest wins), so the first one delivered
    // may be past step 1; they only ever go forward.
    let first = &notes[position("tool/progress", LONG_RUNNING)];
    assert!(
        first["params"]["progress"].as_f64().unwrap() >= 1.0,
        "{first}"
    );
    assert_eq!(first["params"]["total"], 2000.0, "{first}");
    assert_eq!(first["params"]["call_id"], call_id, "{first}");
    let steps: Vec<f64> = notes
        .iter()
        .filter(|n| n["method"] == "tool/progress" && n["params"]["call_id"] == call_id)
        .map(|n| n["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
    assert_eq!(
        notes[position("tool/result", LONG_RUNNING)]["params"]["call_id"],
        call_id
    );
    // The server sends 2,000 reports; one call passes on at most 1,000.
    let reports = notes
        .iter()
        .filter(|n| n["method"] == "tool/progress" && n["params"]["call_id"] == call_id)
        .count();
    assert!(
        (1..=rho_core::session::PROGRESS_REPORTS_PER_CALL as usize).contains(&reports),
        "{reports} progress reports"
    );
    let result = &notes[position("tool/result", "mcp__everything__echo")];
    assert_eq!(result["params"]["is_error"], false);
    assert!(
        result["params"]["output"]
            .as_str()
            .unwrap()
            .contains("hi from rho"),
        "{result}"
    );
    assert_eq!(response["result"]["reply"], "The server echoed.");
    // The system prompt carries the skill catalog and the server's instructions, fenced and
    // attributed to the server.
    let system = model.requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.contains("<available_skills>"), "{system}");
    assert!(
        system.contains("<name>rho-plugin-authoring</name>"),
        "{system}"
    );
    assert!(
        system.contains("<mcp_server_instructions server=\"everything\">"),
        "{system}"
    );
    assert!(system.contains("documentation provided by MCP servers"));
    assert_eq!(rpc.finish(), 0);
}

/// `get-env` of a server whose id is `every-thing`: both hyphens are hex-encoded in the
/// name the model calls.
const GET_ENV: &str = "mcp___rho_65766572792d7468696e67___rho_6765742d656e76";

#[test]
fn listings_and_tool_events_name_an_mcp_tool_as_server_and_tool() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&everything::stdio_table("every-thing", ""));
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [tool_call(GET_ENV, json!({}))]},
            {"content": "Read the environment.", "expect": {"last_role": "tool"}}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    let tools = rpc.call(1, "listTools", json!({}));
    let tools = tools["tools"].as_array().unwrap();
    let get_env = tools
        .iter()
        .find(|t| t["name"] == GET_ENV)
        .unwrap_or_else(|| panic!("no {GET_ENV}: {tools:#?}"));
    assert_eq!(get_env["source"], "mcp");
    assert_eq!(get_env["server"], "every-thing");
    assert_eq!(get_env["tool"], "get-env");
    assert_eq!(get_env["displayName"], "every-thing › get-env");
    // A built-in tool is its own name everywhere.
    let read_file = tools.iter().find(|t| t["name"] == "read_file").unwrap();
    assert_eq!(read_file["tool"], "read_file");
    assert_eq!(read_file["displayName"], "read_file");
    let extensions = rpc.call(2, "listExtensions", json!({}));
    let server = &extensions["servers"][0];
    let at = server["tools"]
        .as_array()
        .unwrap()
        .iter()
        .position(|t| t == GET_ENV)
        .unwrap_or_else(|| panic!("{server:#}"));
    assert_eq!(
        server["toolDetails"][at],
        json!({"name": GET_ENV, "tool": "get-env", "displayName": "every-thing › get-env"})
    );
    // The events a client shows a call from carry what a person reads beside the name.
    rpc.request(3, "prompt", json!({"message": "what environment is this?"}));
    let call = rpc.until("tool/call");
    assert_eq!(call["params"]["name"], GET_ENV);
    assert_eq!(call["params"]["display_name"], "every-thing › get-env");
    let request = rpc.until("approval/request");
    assert_eq!(request["params"]["tool"], GET_ENV);
    assert_eq!(request["params"]["display_name"], "every-thing › get-env");
    rpc.call(4, "approvalResponse", json!({"approved": false}));
    let (notes, _) = rpc.response(3);
    assert_subsequence(
        &notes,
        &[(
            "tool/denied",
            json!({"name": GET_ENV, "display_name": "every-thing › get-env"}),
        )],
    );
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn bad_input_gets_the_right_errors_and_the_process_keeps_serving() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([{"content": "slow answer with several words", "chunk_delay_ms": 150}, {"content": "second answer"}]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    let expect_error = |rpc: &mut Rpc, line: &str, code: i64, id: Value| {
        rpc.send_raw(line);
        let message = rpc.next_message();
        assert_eq!(message["error"]["code"], code, "{line} -> {message}");
        assert_eq!(message["id"], id, "{line} -> {message}");
    };
    expect_error(&mut rpc, "{bad json", -32700, Value::Null);
    expect_error(&mut rpc, "[]", -32600, Value::Null);
    expect_error(&mut rpc, "[1,2]", -32600, Value::Null);
    expect_error(&mut rpc, "42", -32600, Value::Null);
    expect_error(
        &mut rpc,
        r#"{"jsonrpc":"1.0","method":"getState","id":1}"#,
        -32600,
        json!(1),
    );
    expect_error(&mut rpc, r#"{"jsonrpc":"2.0","id":2}"#, -32600, json!(2));
    expect_error(
        &mut rpc,
        r#"{"jsonrpc":"2.0","method":"nope","id":3}"#,
        -32601,
        json!(3),
    );
    expect_error(
        &mut rpc,
        r#"{"jsonrpc":"2.0","method":"prompt","params":{"message":5},"id":4}"#,
        -32602,
        json!(4),
    );
    expect_error(
        &mut rpc,
        r#"{"jsonrpc":"2.0","method":"setModel","params":{"model":"x","extra":1},"id":5}"#,
        -32602,
        json!(5),
    );
    expect_error(
        &mut rpc,
        r#"{"jsonrpc":"2.0","method":"abort","id":6}"#,
        -32600,
        json!(6),
    );
    expect_error(
        &mut rpc,
        r#"{"jsonrpc":"2.0","method":"approvalResponse","params":{"approved":true},"id":7}"#,
        -32600,
        json!(7),
    );
    expect_error(
        &mut rpc,
        r#"{"jsonrpc":"2.0","method":"getState","id":1.5}"#,
        -32600,
        Value::Null,
    );
    // An unknown notification gets no answer at all; the next request is answered next.
    rpc.send_raw(r#"{"jsonrpc":"2.0","method":"nope"}"#);
    rpc.send_raw(r#"{"jsonrpc":"2.0","method":"getState","id":18446744073709551616}"#);
    let message = rpc.next_message();
    assert!(message["result"].is_object(), "{message}");
    // A second prompt while one runs is queued (rho-rpc-mode: ordinary prompts are processed
    // serially); it runs once the first one finished.
    rpc.request(10, "prompt", json!({"message": "first"}));
    rpc.until("message/delta");
    rpc.request(11, "prompt", json!({"message": "second"}));
    let (_, first) = rpc.response(10);
    assert_eq!(first["result"]["reply"], "slow answer with several words");
    let (_, second) = rpc.response(11);
    assert_eq!(second["result"]["reply"], "second answer", "{second}");
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn huge_ids_are_echoed_byte_for_byte() {
    let sandbox = Sandbox::new();
    let model = Model::start(&sandbox.dir.path().join("model"), &json!([]));
    let (stdout, code) = piped_rpc(
        &sandbox,
        &["rpc"],
        &model.endpoint(),
        b"{\"jsonrpc\":\"2.0\",\"method\":\"getState\",\"id\":18446744073709551616}\n",
    );
    assert!(stdout.contains("\"id\":18446744073709551616"), "{stdout}");
    assert_eq!(code, Some(0));
}

#[test]
fn an_external_provider_needs_consent() {
    let sandbox = Sandbox::new();
    let mut rpc = Rpc::start_with(
        &sandbox,
        &[
            "--ephemeral",
            "--endpoint",
            "https://api.example.com/v1",
            "--model",
            "m",
        ],
    );
    let state = rpc.call(1, "getState", json!({}));
    assert!(
        state["providerError"]
            .as_str()
            .unwrap()
            .contains("--accept-external-provider")
    );
    rpc.request(2, "prompt", json!({"message": "hi"}));
    let (notes, response) = rpc.response(2);
    assert_eq!(response["error"]["code"], -32603);
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--accept-external-provider")
    );
    assert!(methods(&notes).contains(&"agent/error".to_owned()));
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn eof_mid_prompt_lets_it_finish_then_exits() {
    let sandbox = Sandbox::new();
    allow_all(&sandbox, "");
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [tool_call("run_command", json!({"argv": ["sleep", "0.5"]}))]},
            {"content": "slept"}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &[]);
    rpc.request(1, "prompt", json!({"message": "wait"}));
    rpc.until("tool/call");
    drop(rpc.stdin.take());
    let (_, response) = rpc.response(1);
    assert_eq!(response["result"]["reply"], "slept", "{response}");
    assert_eq!(rpc.finish(), 0);
    let sessions = sandbox.rho_home.join("sessions");
    let project = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let file = std::fs::read_dir(project)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let saved = std::fs::read_to_string(file).unwrap();
    assert!(
        saved.contains("\"content\":\"slept\""),
        "the whole turn was saved"
    );
}

#[test]
fn the_spec_usage_pipes_one_prompt_and_gets_the_answer() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([{"content": "fixed it"}]),
    );
    // As `docs/rpc.md` shows it: no `rpc` command, stdin not a terminal.
    let (stdout, code) = piped_rpc(
        &sandbox,
        &[],
        &model.endpoint(),
        b"{\"jsonrpc\":\"2.0\",\"method\":\"prompt\",\"params\":{\"message\":\"fix the bug\"},\"id\":1}\n",
    );
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["id"], 1);
    assert_eq!(last["result"]["reply"], "fixed it", "{stdout}");
    assert_eq!(code, Some(0));
}

#[test]
fn sigterm_mid_tool_aborts_kills_the_command_and_exits() {
    let sandbox = Sandbox::new();
    allow_all(&sandbox, "");
    let marker = format!("28.{}", std::process::id());
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([{"tool_calls": [tool_call("run_command", json!({"argv": ["sleep", marker]}))]}]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    prompt_until_running(&mut rpc, &marker);
    let started = Instant::now();
    let status = Command::new("kill")
        .args(["-TERM", &rpc.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let (_, response) = rpc.response(1);
    assert_eq!(response["result"]["finishReason"], "aborted", "{response}");
    let deadline = Instant::now() + Duration::from_secs(5);
    let code = loop {
        if let Some(status) = rpc.child.try_wait().unwrap() {
            break status.code();
        }
        assert!(Instant::now() < deadline, "rho did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code, Some(0));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        processes_with(&marker).is_empty(),
        "the command survived SIGTERM"
    );
}

#[test]
fn a_closed_stdout_stops_rho_without_a_panic() {
    let sandbox = Sandbox::new();
    let mut child = ephemeral_rpc(&sandbox, &["rpc"], "http://127.0.0.1:1/v1")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.contains("ready"), "{first}");
    // The reader goes away (`rho rpc | head -1`), stdin stays open.
    drop(stdout);
    let mut stdin = child.stdin.take().unwrap();
    let started = Instant::now();
    for id in 0..20 {
        let line = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"getState\",\"id\":{id}}}\n");
        if stdin.write_all(line.as_bytes()).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        if child.try_wait().unwrap().is_some() {
            break;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "rho kept running with nobody reading"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(started.elapsed() < Duration::from_secs(5));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status.code(), Some(0), "{stderr}");
}

#[test]
fn eof_with_a_queued_prompt_that_needs_approval_denies_it_and_exits() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([
            {"content": "first answer"},
            {"content": "a summary", "delay_ms": 500},
            {"tool_calls": [tool_call("run_command", json!({"argv": ["echo", "x"]}))]},
            {"content": "not deleting", "expect": {"last_role": "tool", "last_message_contains": "denied"}}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.call(1, "prompt", json!({"message": "first"}));
    rpc.request(2, "compact", json!({}));
    rpc.request(3, "prompt", json!({"message": "then delete"}));
    // EOF while the compaction runs and the prompt waits behind it: both still run, the
    // approval nobody can answer any more is denied, and rho exits.
    drop(rpc.stdin.take());
    let started = Instant::now();
    let (_, compact) = rpc.response(2);
    assert!(
        compact["result"]["summary"]
            .as_str()
            .unwrap()
            .contains("a summary")
    );
    let (notes, response) = rpc.response(3);
    assert_eq!(response["result"]["reply"], "not deleting", "{response}");
    let end = notes.iter().find(|n| n["method"] == "agent/end").unwrap();
    assert_eq!(end["params"]["toolCalls"][0]["outcome"]["kind"], "denied");
    assert_eq!(rpc.finish(), 0);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn abort_reaches_a_prompt_waiting_in_the_queue() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([
            {"content": "first answer"},
            {"content": "a summary", "delay_ms": 600},
            {"content": "never asked"}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.call(1, "prompt", json!({"message": "first"}));
    // A slow listModels-like method: a compaction, then a prompt queued behind it.
    rpc.request(2, "getSessionStats", json!({}));
    rpc.request(3, "compact", json!({}));
    rpc.request(4, "prompt", json!({"message": "queued"}));
    let (_, _) = rpc.response(2);
    // The compaction runs now; abort it, then abort the queued prompt.
    rpc.call(5, "abort", json!(null));
    let second = rpc.call(6, "abort", json!(null));
    assert_eq!(second, json!({}), "the queued prompt takes the abort");
    let (_, response) = rpc.response(4);
    assert_eq!(response["result"]["finishReason"], "aborted", "{response}");
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn abort_at_an_approval_asks_nothing_more() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([{"tool_calls": [
            tool_call("run_command", json!({"argv": ["echo", "1"]})),
            tool_call("run_command", json!({"argv": ["echo", "2"]}))
        ]}]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.request(1, "prompt", json!({"message": "two commands"}));
    rpc.until("approval/request");
    rpc.request(2, "abort", json!(null));
    let (all, answers) = rpc.responses(&[1, 2]);
    assert_eq!(answers[&2]["result"], json!({}));
    let response = answers[&1].clone();
    assert_eq!(
        methods(&all)
            .iter()
            .filter(|m| *m == "approval/request")
            .count(),
        0,
        "no approval is asked after the abort: {all:#?}"
    );
    assert_eq!(response["result"]["finishReason"], "aborted");
    let end = all.iter().find(|n| n["method"] == "agent/end").unwrap();
    let calls = end["params"]["toolCalls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{end}");
    assert!(
        calls.iter().all(|c| c["outcome"]["kind"] == "cancelled"),
        "{end}"
    );
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn provider_keys_never_reach_commands_or_the_model() {
    let sandbox = Sandbox::new();
    allow_all(&sandbox, "");
    let canary = "sk-canary-7d41c2";
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [tool_call("run_command", json!({"argv": ["env"]}))]},
            {"content": "done"}
        ]),
    );
    let mut rpc = Rpc::start_env(
        &sandbox,
        &[
            "--ephemeral",
            "--endpoint",
            &model.endpoint(),
            "--model",
            "m",
            "--api-key-env",
            "MY_PROVIDER_KEY",
        ],
        &[("MY_PROVIDER_KEY", canary)],
    );
    rpc.request(1, "prompt", json!({"message": "show the environment"}));
    let (notes, _) = rpc.response(1);
    let result = notes.iter().find(|n| n["method"] == "tool/result").unwrap();
    let output = result["params"]["output"].as_str().unwrap();
    assert!(output.contains("HOME="), "the command ran: {output}");
    assert!(!output.contains(canary), "{output}");
    for request in model.requests() {
        assert!(!request.to_string().contains(canary));
    }
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn steering_belongs_to_its_session() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([{"content": "ok"}]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.call(
        1,
        "prompt",
        json!({"message": "SECRET-PLAN", "steer": true}),
    );
    rpc.call(2, "clear", json!({}));
    rpc.call(3, "prompt", json!({"message": "hello"}));
    let messages = rpc.call(4, "getMessages", json!({}));
    let text = messages.to_string();
    assert!(!text.contains("SECRET-PLAN"), "{messages:#}");
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn a_session_cut_by_a_crash_resumes_with_a_well_formed_history() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [tool_call("run_command", json!({"argv": ["echo", "x"]}))]},
            {"content": "resumed fine"}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &[]);
    rpc.request(1, "prompt", json!({"message": "run it"}));
    rpc.until("approval/request");
    // A crash while the approval is pending: the call never gets a result on disk.
    rpc.child.kill().unwrap();
    rpc.child.wait().unwrap();
    drop(rpc);
    let mut rpc = Rpc::start(&sandbox, &model, &["--continue"]);
    let reply = rpc.call(1, "prompt", json!({"message": "again"}));
    assert_eq!(reply["reply"], "resumed fine");
    let sent = &model.requests()[1]["messages"];
    let messages = sent.as_array().unwrap();
    let call_id = messages
        .iter()
        .find_map(|m| m["tool_calls"][0]["id"].as_str())
        .unwrap()
        .to_owned();
    let answer = messages
        .iter()
        .position(|m| m["role"] == "tool" && m["tool_call_id"] == call_id.as_str())
        .expect("the interrupted call has a result");
    let again = messages
        .iter()
        .position(|m| m["content"] == "again")
        .unwrap();
    assert!(answer < again, "{sent:#}");
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn reload_applies_new_agent_settings() {
    let sandbox = Sandbox::new();
    let model = Model::start(&sandbox.dir.path().join("model"), &json!([]));
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    assert_eq!(
        rpc.call(1, "getState", json!({}))["permissionMode"],
        "ask-destructive"
    );
    sandbox.write_config("[agent]\npermission_mode = \"read-only\"\n");
    rpc.call(2, "reloadExtensions", json!({}));
    assert_eq!(
        rpc.call(3, "getState", json!({}))["permissionMode"],
        "read-only"
    );
    assert_eq!(rpc.finish(), 0);
}

/// `reloadExtensions` works in every state of a saved session: before its file exists (right
/// after start, after `newSession`), after a prompt wrote it, and the conversation goes on.
#[test]
fn reload_works_before_the_first_prompt_and_after_new_session() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([{"content": "first answer"}, {"content": "second answer"}]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &[]);
    rpc.call(1, "reloadExtensions", json!({}));
    rpc.call(2, "prompt", json!({"message": "first"}));
    rpc.call(3, "reloadExtensions", json!({}));
    let messages = rpc.call(4, "getMessages", json!({}));
    assert_eq!(
        messages["messages"].as_array().unwrap().len(),
        2,
        "{messages:#}"
    );
    rpc.call(5, "newSession", json!({}));
    rpc.call(6, "reloadExtensions", json!({}));
    rpc.call(7, "prompt", json!({"message": "second"}));
    let stats = rpc.call(8, "getSessionStats", json!({}));
    let file = stats["sessionFile"].as_str().unwrap().to_owned();
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("second answer")
    );
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn an_empty_summary_never_replaces_the_history() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([{"content": "first answer"}, {"content": ""}]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.call(1, "prompt", json!({"message": "first"}));
    rpc.request(2, "compact", json!({}));
    let (_, response) = rpc.response(2);
    assert_eq!(response["error"]["code"], -32603, "{response}");
    let messages = rpc.call(3, "getMessages", json!({}));
    assert_eq!(
        messages["messages"].as_array().unwrap().len(),
        2,
        "{messages:#}"
    );
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn ready_comes_before_answers_to_early_input() {
    let sandbox = Sandbox::new();
    for _ in 0..5 {
        let (stdout, _) = piped_rpc(&sandbox, &["rpc"], "http://127.0.0.1:1/v1", b"{bad\n");
        let first = stdout.lines().next().unwrap_or_default();
        assert!(first.contains("\"ready\""), "{stdout}");
        assert!(stdout.contains("-32700"), "{stdout}");
    }
}

#[test]
fn a_request_flood_is_refused_beyond_the_queue_bound() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([{"content": "slow words to keep the prompt busy", "chunk_delay_ms": 100}]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.request(1, "prompt", json!({"message": "go"}));
    rpc.until("message/delta");
    for id in 100..300 {
        rpc.request(id, "getState", json!({}));
    }
    let mut refused = 0;
    let mut answered = 0;
    let mut prompt_done = false;
    while refused + answered < 200 || !prompt_done {
        let message = rpc.next_message();
        match message["id"].as_u64() {
            Some(1) => prompt_done = true,
            Some(_) if message["error"]["code"] == -32600 => refused += 1,
            Some(_) => answered += 1,
            None => {}
        }
    }
    assert!(refused > 0, "nothing was refused");
    assert!(answered >= 64, "the queue holds at least 64: {answered}");
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn ids_in_flight_cannot_be_reused_by_inline_messages() {
    let sandbox = Sandbox::new();
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([{"content": "a b c d", "chunk_delay_ms": 80}]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.request(1, "prompt", json!({"message": "go"}));
    rpc.until("message/delta");
    rpc.request(1, "prompt", json!({"message": "steer", "steer": true}));
    let refused = rpc.next_message();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let (_, response) = rpc.response(1);
    assert_eq!(response["result"]["reply"], "a b c d");
    assert_eq!(rpc.finish(), 0);
}

/// Waits up to `seconds` for `child` to exit; on a timeout sends SIGTERM, waits 5 s more, and
/// panics saying whether SIGTERM ended it (a hung child is never left behind).
fn exit_within(child: &mut std::process::Child, seconds: u64, what: &str) -> i32 {
    let wait = |child: &mut std::process::Child, seconds| {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return Some(status.code().unwrap_or(-1));
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    if let Some(code) = wait(child, seconds) {
        return code;
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let after_term = wait(child, 5);
    let _ = child.kill();
    let _ = child.wait();
    match after_term {
        Some(_) => panic!("{what}: still running after {seconds} s (SIGTERM ended it)"),
        None => panic!("{what}: still running after {seconds} s, and SIGTERM did not end it"),
    }
}

#[test]
fn rpc_with_a_fifo_as_session_errors_out_at_once_naming_it() {
    let sandbox = Sandbox::new();
    let fifo = sandbox.dir.path().join("session.jsonl");
    make_fifo(&fifo);
    let mut child = sandbox
        .command(&["rpc", "--session"])
        .arg(&fifo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let code = exit_within(&mut child, 10, "rho rpc --session <fifo>");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "session file {}: a FIFO, not a regular file",
            fifo.display()
        )),
        "{stderr}"
    );
}

#[test]
fn resume_session_refuses_fifos_devices_and_huge_files_at_once_and_sigterm_still_works() {
    let sandbox = Sandbox::new();
    let files = HostileFiles::make(sandbox.dir.path(), "jsonl");
    let mut rpc = Rpc::start_with(&sandbox, &["--ephemeral"]);
    let cases = [
        (files.fifo.as_path(), "a FIFO, not a regular file"),
        (
            Path::new("/dev/zero"),
            "a character device, not a regular file",
        ),
        (
            files.device.as_path(),
            "a character device, not a regular file",
        ),
        (files.sparse.as_path(), "larger than the 256 MiB cap"),
    ];
    for (id, (path, problem)) in (1..).zip(cases) {
        let started = Instant::now();
        rpc.request(id, "resumeSession", json!({"path": path}));
        let (_, response) = rpc.response(id);
        assert!(started.elapsed() < Duration::from_secs(5), "{response}");
        assert_eq!(response["error"]["code"], -32602, "{response}");
        assert_eq!(
            response["error"]["message"],
            format!("session file {}: {problem}", path.display()),
            "{response}"
        );
    }
    // The loop still serves, and SIGTERM still ends rho.
    assert_eq!(
        rpc.call(9, "getState", json!({}))["cwd"],
        json!(sandbox.project)
    );
    let status = Command::new("kill")
        .args(["-TERM", &rpc.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(exit_within(&mut rpc.child, 5, "rho rpc after SIGTERM"), 0);
}
