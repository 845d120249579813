//! `rho mcp serve`: rho's tools as one MCP server, driven by clients no one here wrote (the
//! Python `mcp` SDK 2.x in the 2026-07-28 and 2025-11-25 revisions, the TypeScript SDK in
//! 2025-11-25) through `tests/peers/gateway_client.{py,mjs}`: what is listed (exported names,
//! risk as annotations, built-ins only on request and up to a risk), calls to MCP, built-in
//! and WASM tools, progress passed through, the component filters, and the servers rho started
//! stopped when the client goes away or a signal arrives.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rho_e2e::*;
use serde_json::{Value, json};

const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp");

/// A client of the gateway.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Client {
    /// The Python SDK, `--mode auto` (it settles on 2026-07-28 with rho) or `legacy`.
    Python(&'static str),
    /// The Python SDK (2026-07-28), listing the tools again after its calls (`toolsAfter`).
    PythonRelisting,
    /// The TypeScript SDK (2025-11-25).
    TypeScript,
    /// The TypeScript SDK, cancelling a call still running after this many milliseconds.
    TypeScriptCancelling(u32),
}

/// Runs `client` against `rho --cwd <project> mcp serve <serve>` in the sandbox, making
/// `calls`; its report (see the clients' docs).
fn through_gateway(
    sandbox: &Sandbox,
    client: Client,
    serve: &[&str],
    calls: &[(&str, Value)],
) -> Value {
    let mut command = client_command(client, calls);
    let rho = rho_bin();
    command
        .arg("--")
        .arg(&rho)
        .arg("--cwd")
        .arg(&sandbox.project)
        .args(["mcp", "serve"])
        .args(serve);
    report_of(command, sandbox)
}

/// Runs `client` against the Streamable HTTP endpoint `url` (with the bearer token `bearer`,
/// TypeScript only), making `calls`; its report.
pub(crate) fn over_http(
    sandbox: &Sandbox,
    client: Client,
    url: &str,
    bearer: Option<&str>,
    calls: &[(&str, Value)],
) -> Value {
    let mut command = client_command(client, calls);
    if let Some(token) = bearer {
        command.args(["--bearer", token]);
    }
    command.args(["--url", url]);
    report_of(command, sandbox)
}

/// The client's command line up to its calls.
fn client_command(client: Client, calls: &[(&str, Value)]) -> Command {
    let peers = repo_root().join("tests/peers");
    let mut command = match client {
        Client::Python(mode) => {
            let mut c = Command::new("python3");
            c.arg(peers.join("gateway_client.py"))
                .args(["--mode", mode]);
            c
        }
        Client::PythonRelisting => {
            let mut c = Command::new("python3");
            c.arg(peers.join("gateway_client.py")).arg("--relist");
            c
        }
        Client::TypeScript => {
            let mut c = Command::new("node");
            c.arg(peers.join("gateway_client.mjs"));
            c
        }
        Client::TypeScriptCancelling(ms) => {
            let mut c = Command::new("node");
            c.arg(peers.join("gateway_client.mjs"))
                .args(["--cancel-after", &ms.to_string()]);
            c
        }
    };
    for (name, arguments) in calls {
        command.arg("--call").arg(name).arg(arguments.to_string());
    }
    command
}

/// Runs a client's `command` in the sandbox's environment; its JSON report.
fn report_of(mut command: Command, sandbox: &Sandbox) -> Value {
    command
        .current_dir(&sandbox.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("RHO_HOME", &sandbox.rho_home)
        .stdin(Stdio::null());
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the client failed: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The names a report lists.
pub(crate) fn names(report: &Value) -> Vec<String> {
    strings_of(&report["tools"], "name")
}

fn strings_of(list: &Value, key: &str) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| t[key].as_str().unwrap().to_owned())
        .collect()
}

/// A sandbox with `fake-mcp --mode ok` as server `echoer` (its pids appended to `pids`) and a
/// file to read.
pub(crate) fn echo_sandbox(pids: &Path) -> Sandbox {
    let sandbox = Sandbox::new();
    write(&sandbox.project.join("notes.txt"), "hello gateway\n");
    sandbox.write_config(&format!(
        "[mcp.servers.echoer]\ncommand = {FAKE:?}\nargs = [\"--mode\", \"ok\", \"--pid-file\", {:?}]\n",
        pids.display().to_string()
    ));
    sandbox
}

pub(crate) const ECHO: &str = "mcp__echoer__echo";
const READ_ONLY_BUILTINS: [&str; 4] = ["read_file", "list_directory", "glob", "grep"];

#[test]
fn clients_of_both_revisions_list_and_call_through_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = echo_sandbox(&dir.path().join("pids"));
    let calls = [
        (ECHO, json!({"text": "hi"})),
        ("read_file", json!({"path": "notes.txt"})),
    ];
    for (client, version) in [
        (Client::Python("auto"), "2026-07-28"),
        (Client::Python("legacy"), "2025-11-25"),
        (Client::TypeScript, "2025-11-25"),
    ] {
        let report = through_gateway(&sandbox, client, &["--builtins"], &calls);
        assert_eq!(report["protocolVersion"], version, "{report:#}");
        let listed = names(&report);
        // Built-ins up to `read` (the default --max-risk), never activate_skill, then the
        // server's tools under rho's exported names.
        for name in READ_ONLY_BUILTINS.iter().chain([&ECHO]) {
            assert!(listed.iter().any(|n| n == name), "{name}: {listed:?}");
        }
        for absent in ["write_file", "edit_file", "run_command", "activate_skill"] {
            assert!(!listed.iter().any(|n| n == absent), "{absent}: {listed:?}");
        }
        let tool = |name: &str| {
            report["tools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == name)
                .unwrap()
                .clone()
        };
        assert_eq!(tool("read_file")["annotations"]["readOnlyHint"], true);
        assert_eq!(
            tool(ECHO)["annotations"]["destructiveHint"],
            true,
            "{report:#}"
        );
        let calls = report["calls"].as_array().unwrap();
        assert_eq!(calls[0]["isError"], false, "{report:#}");
        assert_eq!(
            calls[0]["text"],
            json!(["called echo with {\"text\":\"hi\"}"])
        );
        assert_eq!(calls[1]["text"][0], "     1\thello gateway\n", "{report:#}");
    }
}

#[test]
fn builtins_are_served_only_on_request_and_up_to_the_risk_asked() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = echo_sandbox(&dir.path().join("pids"));
    let python = Client::Python("auto");
    let listed = names(&through_gateway(&sandbox, python, &[], &[]));
    assert_eq!(listed, [ECHO], "no built-in without --builtins");
    let listed = names(&through_gateway(
        &sandbox,
        python,
        &["--builtins", "--max-risk", "write"],
        &[],
    ));
    assert!(listed.iter().any(|n| n == "write_file"), "{listed:?}");
    assert!(!listed.iter().any(|n| n == "run_command"), "{listed:?}");
    let report = through_gateway(
        &sandbox,
        python,
        &["--builtins", "--max-risk", "destructive"],
        &[("run_command", json!({"command": "echo ran > ran.txt"}))],
    );
    assert_eq!(report["calls"][0]["isError"], false, "{report:#}");
    assert!(sandbox.project.join("ran.txt").exists());
    // A tool that is not served cannot be called by name either: an unknown tool is a
    // protocol error (-32602), as the specification says.
    let report = through_gateway(
        &sandbox,
        python,
        &["--builtins"],
        &[("write_file", json!({"path": "w.txt", "content": "x"}))],
    );
    let error = &report["calls"][0]["error"];
    assert_eq!(error["code"], -32602, "{report:#}");
    assert_eq!(
        error["message"], "no tool named \"write_file\"",
        "{report:#}"
    );
    assert!(!sandbox.project.join("w.txt").exists());
}

#[test]
fn only_and_exclude_pick_components_and_an_unknown_one_is_refused() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[mcp.servers.alpha]\ncommand = {FAKE:?}\nargs = [\"--mode\", \"ok\"]\n\n\
         [mcp.servers.beta]\ncommand = {FAKE:?}\nargs = [\"--mode\", \"ok\"]\n"
    ));
    let python = Client::Python("auto");
    let listed = names(&through_gateway(&sandbox, python, &[], &[]));
    assert_eq!(listed, ["mcp__alpha__echo", "mcp__beta__echo"]);
    let listed = names(&through_gateway(&sandbox, python, &["--only", "beta"], &[]));
    assert_eq!(listed, ["mcp__beta__echo"]);
    let listed = names(&through_gateway(
        &sandbox,
        python,
        &["--exclude", "beta"],
        &[],
    ));
    assert_eq!(listed, ["mcp__alpha__echo"]);
    let refused = sandbox
        .rho(&["mcp", "serve", "--only", "beta,gamma"])
        .code(1);
    assert_eq!(
        refused.stderr,
        "error: --only names no MCP server or plugin: gamma (known: alpha, beta)\n"
    );
    assert!(refused.stdout.is_empty());
}

#[test]
fn tool_search_lists_one_tool_and_what_searches_find() {
    let sandbox = everything::allow_all_sandbox("");
    let sum = rho_component::naming::ExportedNames::default().assign("everything", "get-sum");
    let report = through_gateway(
        &sandbox,
        Client::PythonRelisting,
        &["--tool-search"],
        &[
            (
                "tool_search",
                json!({"query": "add two numbers together", "limit": 2}),
            ),
            (sum.as_str(), json!({"a": 2, "b": 3})),
        ],
    );
    assert_eq!(names(&report), ["tool_search"], "{report:#}");
    let found = report["calls"][0]["text"][0].as_str().unwrap();
    assert!(
        found.starts_with("Loaded (call them from your next step):"),
        "{found}"
    );
    assert!(found.contains(&format!("- {sum}: ")), "{found}");
    assert!(
        report["calls"][1]["text"][0]
            .as_str()
            .unwrap()
            .contains('5'),
        "{report:#}"
    );
    let after = strings(&report["toolsAfter"]);
    assert_eq!(
        after.first().map(String::as_str),
        Some("tool_search"),
        "{after:?}"
    );
    assert!(after.contains(&sum), "{after:?}");
    assert!(
        after.len() <= 3,
        "only the search's matches join: {after:?}"
    );
    // Without it, every tool is listed and there is no search tool.
    let report = through_gateway(&sandbox, Client::Python("auto"), &[], &[]);
    let listed = names(&report);
    assert!(
        listed.len() > 5 && !listed.iter().any(|n| n == "tool_search"),
        "{listed:?}"
    );
}

/// The Python client (2026-07-28) with `client_args` against `rho mcp serve <serve>`.
pub(crate) fn python_with(sandbox: &Sandbox, client_args: &[&str], serve: &[&str]) -> Value {
    let mut command = client_command(Client::Python("auto"), &[]);
    command
        .args(client_args)
        .arg("--")
        .arg(rho_bin())
        .arg("--cwd")
        .arg(&sandbox.project)
        .args(["mcp", "serve"])
        .args(serve);
    report_of(command, sandbox)
}

#[test]
fn skills_and_upstream_prompts_and_resources_are_served() {
    let sandbox = everything::allow_all_sandbox("");
    write(
        &sandbox.home.join(".agents/skills/greeting/SKILL.md"),
        "---\nname: greeting\ndescription: Greets people warmly.\n---\nSay hello warmly.\n",
    );
    let doc = "demo://resource/static/document/architecture.md";
    let report = python_with(
        &sandbox,
        &[
            "--prompt",
            "skill:greeting",
            "{}",
            "--prompt",
            "everything:args-prompt",
            r#"{"city": "Paris"}"#,
            "--prompt",
            "everything:no-such-prompt",
            "{}",
            "--read",
            doc,
            "--read",
            "demo://no/such/thing",
        ],
        &[],
    );
    let prompts = strings(&report["prompts"]);
    for name in [
        "skill:greeting",
        "everything:simple-prompt",
        "everything:args-prompt",
    ] {
        assert!(prompts.iter().any(|p| p == name), "{name}: {prompts:?}");
    }
    let prompted = &report["prompted"];
    assert_eq!(prompted[0][0]["text"], "Say hello warmly.", "{report:#}");
    assert_eq!(prompted[0][0]["role"], "user");
    assert!(
        prompted[1][0]["text"].as_str().unwrap().contains("Paris"),
        "{report:#}"
    );
    assert_eq!(prompted[2]["error"]["code"], -32602, "{report:#}");
    assert!(
        strings(&report["resources"]).iter().any(|r| r == doc),
        "{report:#}"
    );
    let reads = &report["reads"];
    assert!(
        reads[0][0]
            .as_str()
            .unwrap()
            .starts_with("# Everything Server"),
        "{report:#}"
    );
    // Resource not found: -32602 in 2026-07-28 (SEP-2164), -32002 before.
    assert_eq!(reads[1]["error"]["code"], -32602, "{report:#}");
    // An excluded server's prompts and resources are not served; skills still are.
    let report = python_with(
        &sandbox,
        &["--prompt", "everything:simple-prompt", "{}"],
        &["--exclude", "everything"],
    );
    let prompts = strings(&report["prompts"]);
    assert!(
        prompts.iter().all(|p| p.starts_with("skill:")),
        "{prompts:?}"
    );
    // The skill's own file stays: skills are served unless `--only` is given.
    assert_eq!(
        report["resources"],
        json!(["skill://greeting/SKILL.md"]),
        "{report:#}"
    );
    assert_eq!(report["prompted"][0]["error"]["code"], -32602, "{report:#}");
}

#[test]
fn an_upstream_list_change_reaches_the_client() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[mcp.servers.fake]\ncommand = {FAKE:?}\nargs = [\"--mode\", \"list-changed\"]\n"
    ));
    // A 2025-11-25 client is sent the notification; a 2026-07-28 client, which has no
    // session to send it on, gets it on its `subscriptions/listen` stream.
    for revision in [&["--mode", "legacy"][..], &["--mode", "auto", "--listen"]] {
        let args = [
            revision,
            &[
                "--call",
                "mcp__fake__echo",
                "{}",
                "--wait-list-changed",
                "10",
                "--relist",
            ],
        ]
        .concat();
        let report = python_with(&sandbox, &args, &[]);
        assert!(report["listChanged"].as_u64().unwrap() >= 1, "{report:#}");
        let after = strings(&report["toolsAfter"]);
        assert!(
            after.iter().any(|n| n == "mcp__fake__newcomer"),
            "{after:?}"
        );
        if revision.contains(&"--listen") {
            assert_eq!(
                report["honored"],
                json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true}),
                "{report:#}"
            );
        }
    }
}

#[test]
fn an_upstream_servers_questions_reach_a_client_that_can_answer_them() {
    let sandbox = everything::allow_all_sandbox("sampling = \"ask\"\n");
    let name =
        |tool: &str| rho_component::naming::ExportedNames::default().assign("everything", tool);
    let (elicit, sample) = (
        name("trigger-elicitation-request"),
        name("trigger-sampling-request"),
    );
    let calls = [
        "--call",
        elicit.as_str(),
        "{}",
        "--call",
        sample.as_str(),
        r#"{"prompt": "say hi", "maxTokens": 50}"#,
    ];
    // A 2025-11-25 client is asked with the same requests; a 2026-07-28 client, which a
    // server may not send requests, gets them as input requests in the call's result and
    // retries the call with its answers (docs/mcp.md, "rho as an MCP server").
    for (mode, revision) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let answering = [
            &[
                "--mode",
                mode,
                "--answer-forms",
                r#"{"name": "Ada", "check": true}"#,
                "--answer-sampling",
                "hello from the client",
            ][..],
            &calls,
        ]
        .concat();
        let report = python_with(&sandbox, &answering, &[]);
        assert_eq!(report["protocolVersion"], revision, "{report:#}");
        let text = |i: usize| text_of(&report, i);
        assert!(text(0).contains("- Name: Ada"), "{mode}: {report:#}");
        assert!(
            text(1).contains("hello from the client"),
            "{mode}: {report:#}"
        );
        let form = &report["forms"][0];
        assert!(
            form["message"]
                .as_str()
                .unwrap()
                .starts_with("everything asks: "),
            "{mode}: {report:#}"
        );
        assert_eq!(form["schema"]["properties"]["check"]["type"], "boolean");
        assert_eq!(
            report["samplings"][0][0],
            "Resource trigger-sampling-request context: say hi"
        );
        // A client that declared neither: the form is declined, sampling refused, the calls
        // end.
        let report = python_with(&sandbox, &[&["--mode", mode][..], &calls].concat(), &[]);
        assert!(
            text_of(&report, 0).contains("declined"),
            "{mode}: {report:#}"
        );
        assert_eq!(report["calls"][1]["isError"], true, "{mode}: {report:#}");
        assert!(
            text_of(&report, 1).contains("cannot sample"),
            "{mode}: {report:#}"
        );
    }
}

#[test]
fn a_2026_client_answers_what_a_2026_upstream_asks_under_its_keys() {
    let upstream = repo_root().join("tests/peers/mrtr_upstream.mjs");
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[mcp.servers.asker]\ncommand = \"node\"\nargs = [{:?}]\n\n[agent]\npermission_mode = \"allow-all\"\n",
        upstream.display().to_string()
    ));
    // Both questions of one round reach the client at once, and its answers go back under the
    // upstream's own keys (`name`, `color`).
    let report = python_with(
        &sandbox,
        &[
            "--answer-forms",
            r#"{"name": "Ada", "color": "teal", "context": "tea"}"#,
            "--call",
            "mcp__asker__ask_twice",
            "{}",
            "--prompt",
            "asker:test_input_required_result_prompt",
            "{}",
        ],
        &[],
    );
    assert_eq!(report["protocolVersion"], "2026-07-28", "{report:#}");
    assert_eq!(text_of(&report, 0), "Ada likes teal", "{report:#}");
    // A prompt's question reaches the client the same way.
    assert_eq!(
        report["prompted"][0][0]["text"], "Use this context: tea",
        "{report:#}"
    );
    let mut asked: Vec<&str> = report["forms"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["message"].as_str())
        .collect();
    asked.sort_unstable();
    assert_eq!(
        asked,
        [
            "asker asks: What context should the prompt use?",
            "asker asks: Your color?",
            "asker asks: Your name?"
        ],
        "{report:#}"
    );
}

/// The text blocks of call `i` in `report`, joined (an upstream result is passed on with
/// every block it has).
fn text_of(report: &Value, i: usize) -> String {
    report["calls"][i]["text"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[test]
fn progress_from_an_upstream_server_reaches_the_client() {
    let sandbox = everything::allow_all_sandbox("");
    let long = rho_component::naming::ExportedNames::default()
        .assign("everything", "trigger-long-running-operation");
    let report = through_gateway(
        &sandbox,
        Client::Python("auto"),
        &[],
        &[(long.as_str(), json!({"duration": 1, "steps": 3}))],
    );
    let call = &report["calls"][0];
    assert_eq!(call["isError"], false, "{report:#}");
    let progress = call["progress"].as_array().unwrap();
    assert_eq!(progress.len(), 3, "{report:#}");
    assert_eq!(progress[2]["progress"], 3.0);
    assert_eq!(progress[2]["total"], 3.0);
}

#[test]
fn a_cancelled_call_is_cancelled_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record");
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[mcp.servers.slow]\ncommand = {FAKE:?}\nargs = [\"--mode\", \"slow-call\", \"--record\", {:?}]\n",
        record.display().to_string()
    ));
    let report = through_gateway(
        &sandbox,
        Client::TypeScriptCancelling(500),
        &[],
        &[("mcp__slow__echo", json!({}))],
    );
    assert!(report["calls"][0]["error"].is_string(), "{report:#}");
    // The server never answers: the call ended because the client cancelled it, and rho told
    // the server.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let recorded = std::fs::read_to_string(&record).unwrap_or_default();
        if recorded
            .lines()
            .any(|l| l.starts_with("notifications/cancelled"))
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no cancellation upstream: {recorded}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pids in `file` (one a line), once it has `count`.
fn pids(file: &Path, count: usize) -> Vec<i32> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let pids: Vec<i32> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.len() >= count {
            return pids;
        }
        assert!(Instant::now() < deadline, "no pid in {}", file.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `pid` is gone (or a zombie: its parent reaps it).
fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.contains(") Z ") => return true,
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    false
}

#[test]
fn servers_stop_when_the_client_goes_and_when_a_signal_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let sandbox = echo_sandbox(&pid_file);
    // The client closes stdin after its calls: rho closes the server and exits.
    through_gateway(&sandbox, Client::TypeScript, &[], &[(ECHO, json!({}))]);
    let first = pids(&pid_file, 1)[0];
    assert!(gone(first), "server {first} outlived its gateway");
    // A signal after a client's handshake (stdin held open): the servers are closed as at
    // the end of a session (stdin, then SIGTERM), not left to a kill on drop.
    let stderr_file = dir.path().join("stderr");
    let mut rho = sandbox
        .command(&["mcp", "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr_file).unwrap())
        .spawn()
        .unwrap();
    let second = pids(&pid_file, 2)[1];
    {
        use std::io::{BufRead, Write};
        let stdin = rho.stdin.as_mut().unwrap();
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}});
        writeln!(stdin, "{initialize}").unwrap();
        let mut answer = String::new();
        std::io::BufReader::new(rho.stdout.as_mut().unwrap())
            .read_line(&mut answer)
            .unwrap();
        assert!(answer.contains("\"serverInfo\""), "{answer}");
        writeln!(
            stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
    }
    let killed = Command::new("kill")
        .args(["-TERM", &rho.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = rho.wait().unwrap();
    // Serving wound down on its own terms: as `rho rpc`, it exits 0.
    assert_eq!(status.code(), Some(0), "{status}");
    assert!(
        gone(second),
        "server {second} outlived a SIGTERM to its gateway"
    );
}
