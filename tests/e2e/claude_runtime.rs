//! The Claude CLI runtime (`--runtime claude`, `[agent] runtime`) with the real Claude Code
//! CLI (`tests/peers`, npm `@anthropic-ai/claude-code`) against `fake-anthropic`, a scripted
//! Messages endpoint on loopback: its text, tool calls and results arrive as the usual RPC
//! notifications and `rho run` prints its answer; an abort stops the `claude` process; rho's
//! MCP servers are listed as not loaded and never start; Claude's own MCP configuration is not
//! loaded either; a missing `claude` says how to install it; the TUI (in tmux) shows Claude's
//! calls as Claude's and the servers not loaded. Claude runs with a scratch HOME,
//! nonessential traffic off and a proxy that must never be used, so nothing leaves loopback.

use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rho_e2e::*;
use serde_json::{Value, json};

const FAKE_ANTHROPIC: &str = env!("CARGO_BIN_EXE_fake-anthropic");
const FAKE_MCP: &str = env!("CARGO_BIN_EXE_fake-mcp");
/// The API key Claude is given: it must appear nowhere rho writes.
pub(crate) const API_KEY: &str = "sk-ant-canary-4f1d2c";

/// A sandbox whose Claude is the pinned peer (`[agent] claude_command`), with one configured
/// MCP server (`fake-mcp`, marked so a start would show in /proc), a note to read, and a
/// Claude configuration in the scratch HOME that declares an MCP server of its own (which
/// would leave a file behind if Claude started it).
pub(crate) struct ClaudeSandbox {
    pub(crate) sandbox: Sandbox,
    model: FakeModel,
    /// A listener set as every proxy variable: nothing may connect to it.
    proxy: TcpListener,
    /// The pid file the configured MCP server would write (on its command line too).
    server_pid_file: PathBuf,
    /// The file Claude's own MCP server would create.
    claude_mcp_started: PathBuf,
}

impl ClaudeSandbox {
    /// A sandbox whose model has Claude read the project's `note.txt` with its Read tool, then
    /// answers "The note says: done.".
    pub(crate) fn reading_the_note() -> Self {
        Self::new(
            |sandbox| {
                let note = sandbox.project.join("note.txt");
                json!([
                    {"tool_use": {"name": "Read", "input": {"file_path": note}}},
                    {"text": "The note says: done."}
                ])
            },
            "",
        )
    }

    /// `script(sandbox)` is the endpoint's script; `extra_agent`, more `[agent]` keys.
    pub(crate) fn new(script: impl FnOnce(&Sandbox) -> Value, extra_agent: &str) -> Self {
        let sandbox = Sandbox::new();
        let server_pid_file = sandbox.dir.path().join("echoer.pid");
        sandbox.write_config(&format!(
            "[agent]\nclaude_command = {:?}\n{extra_agent}\n\
             [mcp.servers.echoer]\ncommand = {FAKE_MCP:?}\n\
             args = [\"--mode\", \"ok\", \"--pid-file\", {:?}]\n",
            peer_bin("claude").display().to_string(),
            server_pid_file.display().to_string(),
        ));
        write(&sandbox.project.join("note.txt"), "done\n");
        let claude_mcp_started = sandbox.dir.path().join("claude-mcp-started");
        write(
            &sandbox.home.join(".claude.json"),
            json!({"mcpServers": {"canary": {
                "command": "/bin/sh",
                "args": ["-c", format!("touch {}; sleep 30", claude_mcp_started.display())],
            }}})
            .to_string(),
        );
        let script = script(&sandbox);
        let model = FakeModel::start(FAKE_ANTHROPIC, &sandbox.dir.path().join("model"), &script);
        let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
        proxy.set_nonblocking(true).unwrap();
        Self {
            sandbox,
            model,
            proxy,
            server_pid_file,
            claude_mcp_started,
        }
    }

    /// What Claude needs in rho's environment: the fake endpoint and key, no nonessential
    /// traffic, and the never-used proxy.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        let proxy = format!("http://{}", self.proxy.local_addr().unwrap());
        [
            (
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", self.model.port()),
            ),
            ("ANTHROPIC_API_KEY", API_KEY.to_owned()),
            ("DISABLE_TELEMETRY", "1".to_owned()),
            ("DISABLE_AUTOUPDATER", "1".to_owned()),
            ("DISABLE_ERROR_REPORTING", "1".to_owned()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
            ("HTTP_PROXY", proxy.clone()),
            ("HTTPS_PROXY", proxy),
            ("NO_PROXY", "127.0.0.1,localhost".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    pub(crate) fn rpc(&self, args: &[&str]) -> Rpc {
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Rpc::start_env(
            &self.sandbox,
            &[&["--runtime", "claude"], args].concat(),
            &env,
        )
    }

    /// Every request the fake endpoint received.
    pub(crate) fn requests(&self) -> Vec<Value> {
        let log = self.sandbox.dir.path().join("model/requests.jsonl");
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// Nothing left loopback through a proxy, Claude's own MCP server never started, rho's
    /// configured one neither, and every request reached the fake Messages endpoint.
    pub(crate) fn assert_contained(&self) {
        assert!(
            matches!(self.proxy.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "something connected to the proxy"
        );
        assert!(
            !self.claude_mcp_started.exists(),
            "Claude started an MCP server from its own configuration"
        );
        assert!(
            !self.server_pid_file.exists()
                && processes_with(self.server_pid_file.to_str().unwrap()).is_empty(),
            "rho started its configured MCP server"
        );
        for request in self.requests() {
            assert!(
                request["path"]
                    .as_str()
                    .unwrap()
                    .starts_with("/v1/messages"),
                "{request}"
            );
        }
    }
}

/// `claude` processes of this sandbox (their command line names the sandbox's model marker).
fn claude_processes(marker: &str) -> Vec<String> {
    processes_with(marker)
        .into_iter()
        .filter(|line| line.contains("--input-format stream-json"))
        .collect()
}

#[test]
fn an_rpc_prompt_streams_claudes_text_tool_call_and_result_as_the_usual_notifications() {
    let claude = ClaudeSandbox::reading_the_note();

    let mut rpc = claude.rpc(&[]);
    let extensions = rpc.call(1, "listExtensions", json!({}));
    let server = &extensions["servers"][0];
    assert_eq!(server["id"], "echoer", "{extensions:#}");
    assert_eq!(server["status"], "not_loaded", "{server:#}");
    assert_eq!(server["notLoaded"], "Claude CLI runtime", "{server:#}");
    assert_eq!(extensions["tools"], json!([]), "{extensions:#}");

    rpc.request(2, "prompt", json!({"message": "What does note.txt say?"}));
    let (notes, response) = rpc.response(2);
    assert!(response.get("error").is_none(), "{response}\n{notes:#?}");
    assert_eq!(response["result"]["reply"], "The note says: done.");
    assert_eq!(response["result"]["finishReason"], "stop");
    let methods: Vec<&str> = notes.iter().filter_map(|n| n["method"].as_str()).collect();
    let call = notes.iter().find(|n| n["method"] == "tool/call").unwrap();
    assert_eq!(call["params"]["name"], "Read", "{call}");
    assert_eq!(call["params"]["display_name"], "claude › Read", "{call}");
    let result = notes.iter().find(|n| n["method"] == "tool/result").unwrap();
    assert_eq!(result["params"]["is_error"], false, "{result}");
    assert!(
        result["params"]["output"]
            .as_str()
            .unwrap()
            .contains("done"),
        "{result}"
    );
    let streamed: String = notes
        .iter()
        .filter(|n| n["method"] == "message/delta")
        .map(|n| n["params"]["delta"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, "The note says: done.", "{methods:?}");
    let order: Vec<&str> = methods
        .iter()
        .copied()
        .filter(|m| {
            [
                "agent/start",
                "tool/call",
                "tool/result",
                "message/delta",
                "agent/end",
            ]
            .contains(m)
        })
        .collect::<Vec<_>>();
    assert_eq!(order.first(), Some(&"agent/start"), "{methods:?}");
    assert_eq!(order.last(), Some(&"agent/end"), "{methods:?}");
    let at = |m: &str| order.iter().position(|o| *o == m).unwrap();
    assert!(at("tool/call") < at("tool/result") && at("tool/result") < at("message/delta"));
    let end = notes.iter().find(|n| n["method"] == "agent/end").unwrap();
    assert_eq!(end["params"]["toolCalls"][0]["name"], "Read", "{end}");

    let state = rpc.call(3, "getState", json!({}));
    assert_eq!(state["provider"], "claude-cli", "{state}");
    assert_eq!(rpc.finish(), 0);
    let all = serde_json::to_string(&rpc_seen(&notes, &extensions, &state)).unwrap();
    assert!(!all.contains(API_KEY), "the API key leaked");
    claude.assert_contained();
    assert_eq!(claude.requests().len(), 2, "{:#?}", claude.requests());
}

/// Everything the client read, as one value (to look for a secret in).
fn rpc_seen(notes: &[Value], extensions: &Value, state: &Value) -> Value {
    json!({"notes": notes, "extensions": extensions, "state": state})
}

#[test]
fn rho_run_prints_claudes_answer() {
    let claude = ClaudeSandbox::new(|_| json!([{"text": "Hello from Claude."}]), "");
    let mut command = claude
        .sandbox
        .command(&["run", "--runtime", "claude", "say hello"]);
    for (k, v) in claude.env() {
        command.env(k, v);
    }
    let done = Run::from(command.stdin(std::process::Stdio::null()).output().unwrap()).ok();
    assert_eq!(done.stdout, "Hello from Claude.\n");
    assert!(!done.stderr.contains(API_KEY), "{}", done.stderr);
    claude.assert_contained();
    // `[agent] runtime = "claude"` chooses it as the flag does.
    let claude = ClaudeSandbox::new(
        |_| json!([{"text": "From the config."}]),
        "runtime = \"claude\"",
    );
    let mut command = claude.sandbox.command(&["run", "say hello"]);
    for (k, v) in claude.env() {
        command.env(k, v);
    }
    let done = Run::from(command.stdin(std::process::Stdio::null()).output().unwrap()).ok();
    assert_eq!(done.stdout, "From the config.\n");
}

#[test]
fn claudes_control_characters_are_escaped_in_json_lines() {
    // A piped answer keeps its bytes (as rho's own answers do, `run.rs`); what reaches a
    // terminal, and every JSON line, goes through rho's one terminal-safe rule.
    let claude = ClaudeSandbox::new(|_| json!([{"text": "plain \u{1b}[31mred\u{7}"}]), "");
    let mut command =
        claude
            .sandbox
            .command(&["run", "--json", "--runtime", "claude", "say hello"]);
    for (k, v) in claude.env() {
        command.env(k, v);
    }
    let done = Run::from(command.stdin(std::process::Stdio::null()).output().unwrap()).ok();
    assert!(
        !done.stdout.contains('\u{1b}') && !done.stdout.contains('\u{7}'),
        "{:?}",
        done.stdout
    );
    assert!(
        done.stdout.contains(r"\u001b[31mred\u0007"),
        "{}",
        done.stdout
    );
}

#[test]
fn an_abort_stops_the_claude_process_and_the_next_prompt_resumes_its_session() {
    let marker = format!("claude-abort-{}", std::process::id());
    let claude = ClaudeSandbox::new(
        |_| json!([{"stall": "Working on it"}, {"text": "Back again."}]),
        &format!("model = {marker:?}"),
    );
    let mut rpc = claude.rpc(&[]);
    rpc.request(1, "prompt", json!({"message": "take your time"}));
    let delta = rpc.until("message/delta");
    assert!(
        delta["params"]["delta"]
            .as_str()
            .unwrap()
            .starts_with("Work"),
        "{delta}"
    );
    assert_eq!(
        claude_processes(&marker).len(),
        1,
        "{:?}",
        processes_with(&marker)
    );
    assert_eq!(rpc.call(2, "abort", json!(null)), json!({}));
    let (_, response) = rpc.response(1);
    assert_eq!(response["result"]["finishReason"], "aborted", "{response}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !claude_processes(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "claude survived the abort: {:?}",
            claude_processes(&marker)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The next prompt starts claude again on the same Claude session.
    let reply = rpc.call(3, "prompt", json!({"message": "are you there?"}));
    assert_eq!(reply["reply"], "Back again.", "{reply}");
    let again: Vec<String> = claude_processes(&marker);
    assert!(
        again.iter().all(|line| line.contains("--resume")),
        "{again:?}"
    );
    assert_eq!(rpc.finish(), 0);
    // Ending rho ends claude.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !claude_processes(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "claude survived rho: {:?}",
            claude_processes(&marker)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    claude.assert_contained();
}

#[test]
fn a_missing_claude_says_how_to_install_it() {
    let sandbox = Sandbox::new();
    sandbox.write_config("[agent]\nclaude_command = \"claude-not-installed-here\"\n");
    let done = sandbox
        .rho(&["run", "--runtime", "claude", "hello"])
        .code(1);
    assert!(done.stdout.is_empty(), "{}", done.stdout);
    insta::assert_snapshot!("claude_runtime_missing_binary", done.stderr);
}

/// A sandbox in `ask` mode whose script has Claude run `touch ran.txt` with `Bash`, then say
/// `after`; the prompt is sent and the approval request Claude's call made is returned.
fn bash_approval(after: &str) -> (ClaudeSandbox, Rpc, Value) {
    bash_approval_waiting(after, "")
}

/// [`bash_approval`], with `before` (shell) run before the file is made.
fn bash_approval_waiting(after: &str, before: &str) -> (ClaudeSandbox, Rpc, Value) {
    let claude = ClaudeSandbox::new(
        |sandbox| {
            let ran = sandbox.project.join("ran.txt");
            json!([
                {"tool_use": {"name": "Bash", "input": {
                    "command": format!("{before}touch {}", ran.display()),
                    "description": "make a file",
                }}},
                {"text": after}
            ])
        },
        "permission_mode = \"ask\"",
    );
    let mut rpc = claude.rpc(&[]);
    rpc.request(1, "prompt", json!({"message": "make ran.txt"}));
    let request = rpc.until("approval/request");
    let ran = claude.sandbox.project.join("ran.txt");
    let params = &request["params"];
    assert_eq!(params["tool"], "Bash", "{request}");
    assert_eq!(params["display_name"], "claude › Bash", "{request}");
    assert_eq!(params["risk"], "destructive", "{request}");
    assert!(
        params["call_id"].as_str().is_some_and(|id| !id.is_empty()),
        "{request}"
    );
    let arguments: Value = serde_json::from_str(params["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(
        arguments["command"],
        format!("{before}touch {}", ran.display()),
        "{request}"
    );
    assert!(
        !ran.exists(),
        "Claude ran the command before it was approved"
    );
    (claude, rpc, request)
}

#[test]
fn in_ask_mode_a_bash_call_rho_approves_runs() {
    let (claude, mut rpc, request) = bash_approval("It ran.");
    assert_eq!(
        rpc.call(2, "approvalResponse", json!({"approved": true})),
        json!({})
    );
    let (notes, response) = rpc.response(1);
    assert_eq!(response["result"]["reply"], "It ran.", "{response}");
    let result = notes.iter().find(|n| n["method"] == "tool/result").unwrap();
    assert_eq!(result["params"]["call_id"], request["params"]["call_id"]);
    assert_eq!(result["params"]["is_error"], false, "{result}");
    assert!(claude.sandbox.project.join("ran.txt").exists());
    // A second answer has nothing to answer: as in rho's own loop, an error.
    rpc.request(3, "approvalResponse", json!({"approved": true}));
    let (_, late) = rpc.response(3);
    assert!(late.get("error").is_some(), "{late}");
    assert_eq!(rpc.finish(), 0);
    claude.assert_contained();
}

#[test]
fn steering_sent_while_claudes_call_runs_reaches_its_next_model_request() {
    let (claude, mut rpc, _) = bash_approval_waiting("Noted.", "sleep 2; ");
    assert_eq!(
        rpc.call(2, "approvalResponse", json!({"approved": true})),
        json!({})
    );
    // The command sleeps 2 s: the steering arrives while it runs.
    rpc.call(
        3,
        "prompt",
        json!({"message": "also say banana", "steer": true}),
    );
    let (notes, response) = rpc.response(1);
    assert_eq!(response["result"]["reply"], "Noted.", "{response}");
    assert_eq!(
        notes.iter().filter(|n| n["method"] == "agent/end").count(),
        1,
        "{notes:#?}"
    );
    // Claude took it with the call's result, in the one turn.
    let requests: Vec<Value> = claude
        .requests()
        .into_iter()
        .filter(|r| r["tools"].as_u64().unwrap_or(0) > 0)
        .collect();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    assert!(
        requests[1]["last_user"]
            .as_str()
            .is_some_and(|text| text.contains("also say banana")),
        "{:#}",
        requests[1]
    );
    assert_eq!(rpc.finish(), 0);
    claude.assert_contained();
}

#[test]
fn set_model_switches_claude_and_compact_runs_claudes_own() {
    let claude = ClaudeSandbox::new(
        |_| {
            json!([
                {"text": "The word is kiwi."},
                // Claude asks again for a summary without these tags.
                {"text": "<analysis>one word</analysis>\n<summary>the user chose the word kiwi.</summary>"},
                {"text": "Still kiwi."}
            ])
        },
        "",
    );
    let mut rpc = claude.rpc(&[]);
    let first = rpc.call(1, "prompt", json!({"message": "remember kiwi"}));
    assert_eq!(first["reply"], "The word is kiwi.", "{first}");
    let switched = rpc.call(2, "setModel", json!({"model": "claude-switched-1"}));
    assert_eq!(
        switched,
        json!({"model": "claude-switched-1", "provider": "claude-cli"})
    );
    let state = rpc.call(3, "getState", json!({}));
    assert_eq!(state["model"], "claude-switched-1", "{state}");
    // A name Claude could not be given is refused before it is.
    rpc.request(4, "setModel", json!({"model": "two words"}));
    let (_, refused) = rpc.response(4);
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("is not a model name")),
        "{refused}"
    );
    let compacted = rpc.call(5, "compact", json!({}));
    assert!(
        compacted["summary"]
            .as_str()
            .is_some_and(|s| s.contains("the user chose the word kiwi")),
        "{compacted}"
    );
    let after = rpc.call(6, "prompt", json!({"message": "which word?"}));
    assert_eq!(after["reply"], "Still kiwi.", "{after}");
    let requests: Vec<Value> = claude
        .requests()
        .into_iter()
        .filter(|r| r["tools"].as_u64().unwrap_or(0) > 0)
        .collect();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    assert_ne!(requests[0]["model"], "claude-switched-1");
    assert_eq!(requests[1]["model"], "claude-switched-1", "the summary");
    assert_eq!(requests[2]["model"], "claude-switched-1");
    assert_eq!(rpc.finish(), 0);
    claude.assert_contained();
}

#[test]
fn in_ask_mode_a_bash_call_rho_denies_does_not_run_and_claude_goes_on() {
    let (claude, mut rpc, request) = bash_approval("I could not run it.");
    rpc.call(2, "approvalResponse", json!({"approved": false}));
    let (notes, response) = rpc.response(1);
    assert_eq!(
        response["result"]["reply"], "I could not run it.",
        "{response}"
    );
    let denied = notes.iter().find(|n| n["method"] == "tool/denied").unwrap();
    assert_eq!(denied["params"]["call_id"], request["params"]["call_id"]);
    assert_eq!(
        denied["params"]["display_name"], "claude › Bash",
        "{denied}"
    );
    assert!(
        !notes.iter().any(|n| n["method"] == "tool/result"),
        "{notes:#?}"
    );
    let end = notes.iter().find(|n| n["method"] == "agent/end").unwrap();
    assert_eq!(
        end["params"]["toolCalls"][0]["outcome"]["kind"], "denied",
        "{end}"
    );
    assert!(
        !claude.sandbox.project.join("ran.txt").exists(),
        "a denied command ran"
    );
    // Claude's model read the denial as the call's result.
    let asked = claude.requests();
    let last = asked
        .iter()
        .rev()
        .find(|r| r["tools"].as_u64() > Some(0))
        .unwrap();
    assert!(
        last["last_user"]
            .as_str()
            .is_some_and(|text| text.contains("the user denied this tool call")),
        "{last}"
    );
    assert_eq!(rpc.finish(), 0);
    claude.assert_contained();
}

#[test]
fn an_abort_while_claude_waits_for_approval_runs_nothing() {
    let (claude, mut rpc, _) = bash_approval("It ran.");
    assert_eq!(rpc.call(2, "abort", json!(null)), json!({}));
    let (_, response) = rpc.response(1);
    assert_eq!(response["result"]["finishReason"], "aborted", "{response}");
    // The request went with the turn: a late answer has nothing to answer.
    rpc.request(3, "approvalResponse", json!({"approved": true}));
    let (_, late) = rpc.response(3);
    assert!(late.get("error").is_some(), "{late}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !claude.sandbox.project.join("ran.txt").exists(),
        "a command ran after its turn was aborted"
    );
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn closing_the_front_end_denies_claudes_pending_approval() {
    let (claude, rpc, _) = bash_approval("I could not run it.");
    // EOF on stdin: nobody can answer, so the call is denied and rho exits cleanly.
    assert_eq!(rpc.finish(), 0);
    assert!(
        !claude.sandbox.project.join("ran.txt").exists(),
        "a command nobody approved ran"
    );
}

#[test]
fn a_signal_to_rho_stops_claude_mid_turn() {
    let marker = format!("claude-signal-{}", std::process::id());
    let claude = ClaudeSandbox::new(
        |_| json!([{"stall": "Working on it"}]),
        &format!("model = {marker:?}"),
    );
    let mut rpc = claude.rpc(&[]);
    rpc.request(1, "prompt", json!({"message": "take your time"}));
    rpc.until("message/delta");
    assert_eq!(claude_processes(&marker).len(), 1);
    let pid = rustix::process::Pid::from_raw(i32::try_from(rpc.child.id()).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    // rho aborts the turn and ends (how it exits is `rpc.rs`'s business).
    rpc.child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !claude_processes(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "claude survived rho's SIGTERM: {:?}",
            claude_processes(&marker)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn output_claude_should_not_write_is_an_error_naming_the_runtime() {
    let sandbox = Sandbox::new();
    let fake = sandbox.dir.path().join("fake-claude");
    // Reads the prompt, then writes what is not stream-json.
    write_script(
        &fake,
        "#!/bin/sh\nread line\necho 'this is not JSON'\nsleep 5\n",
    );
    sandbox.write_config(&format!(
        "[agent]\nruntime = \"claude\"\nclaude_command = {:?}\n",
        fake.display().to_string()
    ));
    let done = sandbox.rho(&["run", "hello"]).code(1);
    let error = done
        .stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap();
    assert!(
        error.starts_with("error: claude runtime: unreadable output line (not JSON: "),
        "{}",
        done.stderr
    );
    // `script` as claude: rho's run fails saying `expected`.
    let fails_saying = |script: &str, expected: &str| {
        write_script(&fake, script);
        let done = sandbox.rho(&["run", "hello"]).code(1);
        assert!(done.stderr.contains(expected), "{}", done.stderr);
    };
    // A line past the cap is an error too, not a process that grows without end.
    fails_saying(
        "#!/bin/sh\nread line\nhead -c 17000000 /dev/zero | tr '\\0' 'x'\necho\n",
        "error: claude runtime: Claude wrote an output line longer than 16777216 bytes",
    );
    // Exiting before the turn ends says how, with the end of its stderr.
    fails_saying(
        "#!/bin/sh\nread line\necho 'no credentials' >&2\nexit 3\n",
        "error: claude runtime: claude exited before the turn ended (exit status: 3): no credentials",
    );
}

#[test]
fn the_tui_shows_claudes_calls_as_claudes_and_servers_not_loaded() {
    let claude = ClaudeSandbox::reading_the_note();
    let sandbox = &claude.sandbox;
    let project = sandbox.project.display().to_string();
    let home = sandbox.home.display().to_string();
    let rho_home = sandbox.rho_home.display().to_string();
    let path = std::env::var("PATH").unwrap_or_default();
    let mut env: Vec<(String, String)> = claude.env();
    env.extend([
        ("HOME".to_owned(), home),
        ("RHO_HOME".to_owned(), rho_home),
        ("PATH".to_owned(), path),
    ]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let tmux = rho_e2e::tmux::Tmux::start(
        &rho_bin(),
        &["--cwd", &project, "--runtime", "claude"],
        &env,
        &sandbox.project,
        100,
        32,
    );
    tmux.wait_for("Ask rho anything");
    tmux.type_text("what does note.txt say?");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("The note says: done.");
    assert!(screen.contains("✓ claude › Read"), "{screen}");
    tmux.type_text("/mcp");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("not loaded (Claude CLI runtime)");
    assert!(
        screen.contains("echoer  stdio  not loaded (Claude CLI runtime)"),
        "{screen}"
    );
    tmux.keys(&["C-c"]);
    tmux.wait_for("ctrl+c again to quit");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0, "{}", tmux.screen());
    claude.assert_contained();
}
