//! The interactive `rho` in a real terminal (tmux), against `fake-model` (a scripted
//! OpenAI-compatible server) and the real `@modelcontextprotocol/server-everything`: a turn
//! with a tool approval, a server's form answered on its tool card, a prompt command, a
//! resource attached with `@`, a turn stopped with Esc Esc, a session resumed with
//! `--continue`, and the terminal restored on every way out. The image tests run rho on a pty
//! whose other end answers as kitty does (`tests/peers/graphics_terminal.py`).

use std::path::Path;

use rho_component::naming::ExportedNames;
use rho_e2e::tmux::Tmux;
use rho_e2e::{FakeModel, Sandbox, everything, make_mcp, make_plugin, rho_bin, write_script};
use serde_json::{Value, json};

const FAKE_MODEL: &str = env!("CARGO_BIN_EXE_fake-model");

/// `rho` on a 100×32 terminal in `sandbox`, talking to `model`, with `extra` arguments, once
/// its status line shows the model.
fn tui(sandbox: &Sandbox, model: &FakeModel, extra: &[&str]) -> Tmux {
    let tmux = tui_starting(sandbox, model, extra);
    tmux.wait_for("fake-model-1");
    tmux
}

/// `rho` on a 100×32 terminal, as soon as it runs.
fn tui_starting(sandbox: &Sandbox, model: &FakeModel, extra: &[&str]) -> Tmux {
    tui_from(&sandbox.project, sandbox, model, extra)
}

/// `rho --cwd <project>` run from the directory `from`, as soon as it runs.
fn tui_from(from: &Path, sandbox: &Sandbox, model: &FakeModel, extra: &[&str]) -> Tmux {
    let endpoint = model.endpoint();
    let project = sandbox.project.display().to_string();
    let mut args = vec![
        "--cwd",
        project.as_str(),
        "--endpoint",
        endpoint.as_str(),
        "--model",
        "fake-model-1",
    ];
    args.extend_from_slice(extra);
    let home = sandbox.home.display().to_string();
    let rho_home = sandbox.rho_home.display().to_string();
    let path = std::env::var("PATH").unwrap_or_default();
    Tmux::start(
        &rho_bin(),
        &args,
        &[
            ("HOME", &home),
            ("RHO_HOME", &rho_home),
            ("PATH", &path),
            ("RHO_LOG", "debug"),
        ],
        from,
        100,
        32,
    )
}

/// Leaves with Ctrl+C twice; checks the exit status and that the terminal was restored.
fn quit(tmux: &Tmux) {
    tmux.keys(&["C-c"]);
    tmux.wait_for("ctrl+c again to quit");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0, "{}", tmux.screen());
    assert_eq!(
        tmux.format("#{alternate_on}"),
        "0",
        "still in the alternate screen"
    );
}

fn model(sandbox: &Sandbox, script: &Value) -> FakeModel {
    FakeModel::start(FAKE_MODEL, &sandbox.dir.path().join("model"), script)
}

fn everything_tool(name: &str) -> String {
    ExportedNames::default().assign("everything", name)
}

#[test]
fn a_turn_with_an_approved_tool_call_streams_and_shows_its_card() {
    let sandbox = Sandbox::new();
    let model = model(
        &sandbox,
        &json!([
            {"content": "I will **run** a command.", "tool_calls": [
                {"name": "run_command", "arguments": {"command": "echo hi-from-the-tool"}}
            ]},
            {"content": "Done: the tool said `hi-from-the-tool`.\n\n- first\n- second"}
        ]),
    );
    let tmux = tui(&sandbox, &model, &[]);
    tmux.type_text("please run it");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Allow this destructive call?");
    assert!(screen.contains("› please run it"), "{screen}");
    assert!(screen.contains("run_command"), "{screen}");
    assert!(screen.contains("echo hi-from-the-tool"), "{screen}");
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("Done: the tool said");
    assert!(screen.contains("✓ run_command"), "{screen}");
    assert!(screen.contains("└ exit code: 0"), "{screen}");
    // Markdown is rendered: no `**` or backticks left, list items kept.
    assert!(!screen.contains("**run**"), "{screen}");
    assert!(screen.contains("first"), "{screen}");
    // `/help` is answered by rho itself.
    tmux.type_text("/help");
    tmux.wait_for("keys and commands");
    tmux.keys(&["Enter"]);
    tmux.wait_for("ctrl+j or shift+enter newline");
    // `/doctor` shows the rows of `rho doctor`.
    tmux.type_text("/doctor");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("mcp servers");
    assert!(screen.contains("reachable, 2 model(s)"), "{screen}");
    let chats = model.requests().iter().filter(|r| !r.is_null()).count();
    assert_eq!(chats, 2, "{:?}", model.requests());
    quit(&tmux);
}

#[test]
fn a_denied_call_and_a_redirect_are_shown_on_their_cards() {
    let sandbox = Sandbox::new();
    let model = model(
        &sandbox,
        &json!([
            {"tool_calls": [{"name": "run_command", "arguments": {"command": "echo one"}}]},
            {"content": "understood, not running it"},
            {"tool_calls": [{"name": "run_command", "arguments": {"command": "echo two"}}]},
            {"content": "listing them instead", "expect": {"last_message_contains": "list the files instead"}}
        ]),
    );
    let tmux = tui(&sandbox, &model, &["--ephemeral"]);
    tmux.type_text("first");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Allow this");
    tmux.keys(&["n"]);
    let screen = tmux.wait_for("understood, not running it");
    assert!(screen.contains("⊘ run_command  denied"), "{screen}");
    tmux.type_text("second");
    tmux.keys(&["Enter"]);
    tmux.wait_until("a second approval", |s| {
        s.matches("Allow this").count() == 1 && s.contains("echo two")
    });
    tmux.keys(&["r"]);
    tmux.wait_for("type what the model should do instead");
    tmux.type_text("list the files instead");
    tmux.keys(&["Enter"]);
    // The reply, not the card's own word: the card says "redirected" while the follow-up turn
    // still runs, and a ctrl+c then would stop that turn instead of arming quit.
    let screen = tmux.wait_for("listing them instead");
    assert!(screen.contains("↪ run_command  redirected"), "{screen}");
    quit(&tmux);
}

#[test]
fn an_approval_shows_what_hides_behind_blank_lines_and_v_shows_all_of_it() {
    let sandbox = Sandbox::new();
    // One command, two things run: `touch X`, then 300 line breaks, then `echo hello`.
    let command = format!("touch X\n{}echo hello", "\n".repeat(300));
    let model = model(
        &sandbox,
        &json!([
            {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
            {"content": "not run then", "expect": {"last_message_contains": "denied"}}
        ]),
    );
    let tmux = tui(&sandbox, &model, &["--ephemeral"]);
    tmux.type_text("make X");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Allow this destructive call?");
    for shown in ["touch X", "⋯ 300 blank lines ⋯", "echo hello"] {
        assert!(screen.contains(shown), "{shown:?} is not shown:\n{screen}");
    }
    // The whole arguments, over the conversation; `y` does nothing there.
    tmux.keys(&["v"]);
    let view = tmux.wait_for("arguments of run_command");
    assert!(view.contains("303 lines"), "{view}");
    assert!(!view.contains("Allow this destructive call?"), "{view}");
    tmux.keys(&["y"]);
    tmux.keys(&["q"]);
    tmux.wait_until("the card's question again", |s| {
        s.contains("Allow this destructive call?") && !s.contains("arguments of run_command")
    });
    tmux.keys(&["n"]);
    let screen = tmux.wait_for("not run then");
    assert!(screen.contains("⊘ run_command  denied"), "{screen}");
    assert!(!sandbox.project.join("X").exists(), "the command ran");
    quit(&tmux);
}

#[test]
fn an_mcp_tool_its_server_calls_read_only_is_asked_about_in_the_servers_words() {
    // server-everything's `echo` says `readOnlyHint: true`; rho cannot check it, so the call
    // is still asked about, and the card must not call it both read-only and destructive.
    let sandbox = Sandbox::new();
    sandbox.write_config(&everything::stdio_table("everything", ""));
    let model = model(
        &sandbox,
        &json!([
            {"tool_calls": [{"name": everything_tool("echo"), "arguments": {"message": "hi"}}]},
            {"content": "echoed", "expect": {"last_message_contains": "Echo: hi"}}
        ]),
    );
    let tmux = tui(&sandbox, &model, &["--ephemeral"]);
    tmux.wait_for("mcp 1 up");
    tmux.type_text("echo it");
    tmux.keys(&["Enter"]);
    let screen =
        tmux.wait_for("The server says this tool only reads (unverified). Allow this call?");
    assert!(
        screen.contains("? everything › echo  mcp__everything__echo"),
        "{screen}"
    );
    assert!(
        screen.contains("server says: read-only (readOnlyHint: true)"),
        "{screen}"
    );
    assert!(!screen.contains("echo  read-only"), "{screen}");
    assert!(!screen.contains("Allow this destructive call?"), "{screen}");
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("echoed");
    assert!(
        screen.contains("✓ everything › echo  mcp__everything__echo"),
        "{screen}"
    );
    quit(&tmux);
}

#[test]
fn a_resumed_session_shows_each_call_as_it_ended() {
    let sandbox = Sandbox::new();
    let model = model(
        &sandbox,
        &json!([
            {"tool_calls": [
                {"name": "read_file", "arguments": {"path": "missing.txt"}},
                {"name": "run_command", "arguments": {"command": "echo never"}}
            ]},
            {"content": "the turn is over", "expect": {"last_message_contains": "denied"}}
        ]),
    );
    let tmux = tui(&sandbox, &model, &[]);
    tmux.type_text("read and run");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Allow this destructive call?");
    tmux.keys(&["n"]);
    let live = tmux.wait_for("the turn is over");
    assert!(live.contains("⊘ run_command  denied"), "{live}");
    assert!(live.contains("✗ read_file"), "{live}");
    quit(&tmux);
    drop(tmux);

    // The session file keeps each call's outcome beside what the model read.
    let file = std::fs::read_dir(sandbox.rho_home.join("sessions"))
        .unwrap()
        .flatten()
        .flat_map(|project| std::fs::read_dir(project.path()).unwrap().flatten())
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .expect("a session file");
    let outcomes: Vec<Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|entry| entry["message"]["role"] == "tool")
        .map(|entry| entry["message"]["outcome"]["kind"].clone())
        .collect();
    assert_eq!(
        outcomes,
        [json!("error"), json!("denied")],
        "{}",
        file.display()
    );

    let tmux = tui(&sandbox, &model, &["--continue"]);
    let resumed = tmux.wait_for("the turn is over");
    assert!(resumed.contains("⊘ run_command  denied"), "{resumed}");
    assert!(resumed.contains("✗ read_file"), "{resumed}");
    assert!(!resumed.contains("✓ run_command"), "{resumed}");
    assert!(!resumed.contains("✓ read_file"), "{resumed}");
    quit(&tmux);
}

/// A new session opens with the welcome: version, the model passed on the command line, the
/// project, what loaded (the everything server and its tools) and where help is.
#[test]
fn a_new_session_opens_with_the_welcome() {
    let sandbox = everything::allow_all_sandbox("");
    let model = model(&sandbox, &json!([]));
    let tmux = tui(&sandbox, &model, &["--ephemeral"]);
    let screen = tmux.wait_for("1 MCP server");
    assert!(
        screen.contains(&format!("rho {}", env!("CARGO_PKG_VERSION"))),
        "{screen}"
    );
    assert!(screen.contains("model     fake-model-1 · cli"), "{screen}");
    assert!(screen.contains("/help lists keys and commands"), "{screen}");
    assert!(!screen.contains("none configured"), "{screen}");
    quit(&tmux);
}

#[test]
fn esc_twice_stops_a_streaming_turn() {
    let sandbox = Sandbox::new();
    let words: String = (0..400).map(|i| format!("word{i} ")).collect();
    let model = model(&sandbox, &json!([{"content": words, "chunk_delay_ms": 40}]));
    let tmux = tui(&sandbox, &model, &["--ephemeral"]);
    tmux.type_text("talk");
    tmux.keys(&["Enter"]);
    tmux.wait_for("word3 ");
    tmux.keys(&["Escape"]);
    tmux.wait_for("esc again to stop the turn");
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("• stopped");
    assert!(!screen.contains("word399"), "{screen}");
    quit(&tmux);
}

#[test]
fn a_resumed_session_shows_its_conversation() {
    let sandbox = Sandbox::new();
    let model = model(
        &sandbox,
        &json!([{"content": "the first answer"}, {"content": "the second answer"}]),
    );
    let tmux = tui(&sandbox, &model, &[]);
    tmux.type_text("remember me");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the first answer");
    quit(&tmux);
    // Leaving says how to come back; rho ran in the project, so no --cwd is needed.
    let printed = tmux.screen_and_history();
    assert!(
        printed.contains("resume this session with: rho --continue"),
        "{printed}"
    );
    drop(tmux);
    let tmux = tui(&sandbox, &model, &["--continue"]);
    let screen = tmux.wait_for("the first answer");
    assert!(screen.contains("› remember me"), "{screen}");
    tmux.type_text("and now");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the second answer");
    // The model saw the whole conversation.
    let last = model.requests().last().cloned().unwrap();
    assert!(last.to_string().contains("remember me"), "{last}");
    quit(&tmux);
}

#[test]
fn leaving_names_the_project_only_from_elsewhere_and_only_when_saved() {
    let sandbox = Sandbox::new();
    let model = model(&sandbox, &json!([{"content": "noted"}]));
    // Nothing said: nothing saved, nothing to resume.
    let tmux = tui(&sandbox, &model, &[]);
    quit(&tmux);
    let printed = tmux.screen_and_history();
    assert!(!printed.contains("resume this session"), "{printed}");
    drop(tmux);
    // From another directory, the line names the project.
    let tmux = tui_from(sandbox.dir.path(), &sandbox, &model, &[]);
    tmux.wait_for("fake-model-1");
    tmux.type_text("hello");
    tmux.keys(&["Enter"]);
    tmux.wait_for("noted");
    quit(&tmux);
    let project = sandbox.project.display().to_string();
    let printed = tmux.screen_and_history();
    assert!(
        printed.contains(&format!(
            "resume this session with: rho --cwd {project} --continue"
        )),
        "{printed}"
    );
}

#[test]
fn a_server_form_is_answered_on_its_tool_card() {
    let sandbox = everything::allow_all_sandbox("");
    let model = model(
        &sandbox,
        &json!([
            {"tool_calls": [{"name": everything_tool("trigger-elicitation-request"), "arguments": {}}]},
            {"content": "thanks for the form"}
        ]),
    );
    let tmux = tui(&sandbox, &model, &["--ephemeral"]);
    tmux.type_text("ask me");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("everything asks:");
    assert!(screen.contains("Your full, legal name"), "{screen}");
    tmux.type_text("Ada");
    // Tab to the yes/no field, choose yes, then submit from the last field.
    tmux.keys(&["Tab", "Right"]);
    for _ in 0..20 {
        tmux.keys(&["Tab"]);
    }
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("thanks for the form");
    assert!(screen.contains("Name: Ada"), "{screen}");
    quit(&tmux);
}

#[test]
fn prompt_commands_and_resources_come_from_the_palettes() {
    let sandbox = everything::allow_all_sandbox("");
    let model = model(
        &sandbox,
        &json!([
            {"content": "prompt used", "expect": {"last_message_contains": "Texas"}},
            {"content": "resource read", "expect": {"last_message_contains": "runtime architecture"}}
        ]),
    );
    let tmux = tui(&sandbox, &model, &["--ephemeral"]);
    tmux.type_text("/mcp:every");
    let screen = tmux.wait_for("/mcp:everything:args-prompt");
    assert!(screen.contains("prompt ·"), "{screen}");
    tmux.type_text("thing:args-prompt city=Paris state=Texas");
    // Esc closes the palette. Enter only once it is closed: ESC and CR arriving in one read
    // are Alt+Enter to a terminal parser.
    tmux.keys(&["Escape"]);
    tmux.wait_until("the palette to close", |screen| {
        !screen.contains("prompt ·")
    });
    tmux.keys(&["Enter"]);
    tmux.wait_for("prompt used");
    tmux.type_text("summarize @architecture");
    tmux.wait_for("resource · everything · architecture.md");
    tmux.keys(&["Tab"]);
    tmux.wait_for("[resource: demo://resource/static/document/architecture.md]");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("resource read");
    assert!(
        screen.contains("› summarize [resource: demo://resource/static/document/architecture.md]"),
        "{screen}"
    );
    quit(&tmux);
}

#[test]
fn the_screen_opens_and_takes_input_while_a_server_starts() {
    let sandbox = Sandbox::new();
    let fake = env!("CARGO_BIN_EXE_fake-mcp");
    sandbox.write_config(&format!(
        "[mcp.servers.slow]\ncommand = \"sh\"\nargs = [\"-c\", \"sleep 3; exec {fake} --mode ok\"]\n"
    ));
    let model = model(&sandbox, &json!([{"content": "hello back"}]));
    let started = std::time::Instant::now();
    let tmux = tui_starting(&sandbox, &model, &["--ephemeral"]);
    tmux.wait_for("starting…");
    tmux.type_text("typed early");
    let screen = tmux.wait_for("› typed early");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "the screen waited for the server:\n{screen}"
    );
    tmux.wait_for("mcp 1 up");
    tmux.keys(&["Enter"]);
    tmux.wait_for("hello back");
    quit(&tmux);
}

/// The pids of `pid`'s children (of all its threads).
fn children(pid: u32) -> Vec<u32> {
    let mut all = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        all.extend(
            text.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    all
}

#[test]
fn a_signal_restores_the_terminal_and_stops_the_servers() {
    let sandbox = Sandbox::new();
    let fake = env!("CARGO_BIN_EXE_fake-mcp");
    sandbox.write_config(&format!(
        "[mcp.servers.one]\ncommand = \"{fake}\"\nargs = [\"--mode\", \"ok\"]\n"
    ));
    let model = model(&sandbox, &json!([]));
    let tmux = tui(&sandbox, &model, &["--ephemeral"]);
    tmux.wait_for("mcp 1 up");
    // The pane runs a shell, whose child is rho, whose child is the server.
    let shell: u32 = tmux.format("#{pane_pid}").parse().unwrap();
    let rho = *children(shell).first().expect("rho is running");
    let servers = children(rho);
    assert!(!servers.is_empty(), "no server process under rho");
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(rho as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    tmux.wait_exit();
    assert_eq!(
        tmux.format("#{alternate_on}"),
        "0",
        "still in the alternate screen"
    );
    for server in servers {
        let alive = std::path::Path::new(&format!("/proc/{server}")).exists()
            && !std::fs::read_to_string(format!("/proc/{server}/stat"))
                .unwrap_or_default()
                .contains(") Z ");
        assert!(!alive, "server process {server} outlived rho");
    }
}

#[test]
fn prompt_arguments_are_suggested_by_the_server() {
    let sandbox = everything::allow_all_sandbox("");
    let model = model(
        &sandbox,
        &json!([{"content": "completed", "expect": {"last_message_contains": "Engineering"}}]),
    );
    let tmux = tui(&sandbox, &model, &["--ephemeral"]);
    tmux.type_text("/mcp:everything:completable-prompt ");
    // The arguments it takes, then the server's suggestions for the value being typed.
    tmux.wait_for("argument · ");
    tmux.type_text("department=E");
    tmux.wait_for("department=Engineering");
    tmux.keys(&["Tab"]);
    tmux.wait_for("› /mcp:everything:completable-prompt department=Engineering");
    // The second argument's suggestions depend on the first.
    tmux.type_text("name=");
    tmux.wait_for("name=Alice");
    tmux.keys(&["Down", "Tab", "Enter"]);
    tmux.wait_for("completed");
    quit(&tmux);
}

#[test]
fn workspace_files_come_after_resources_in_the_at_palette() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.project.join("README.md"), "# demo\n").unwrap();
    std::fs::create_dir_all(sandbox.project.join("target")).unwrap();
    std::fs::write(sandbox.project.join("target/readme-build.txt"), "x").unwrap();
    std::fs::write(sandbox.project.join(".gitignore"), "target/\n").unwrap();
    let model = model(
        &sandbox,
        &json!([{"content": "read it", "expect": {"last_message_contains": "@README.md"}}]),
    );
    let tmux = tui(&sandbox, &model, &["--ephemeral"]);
    tmux.type_text("look at @readm");
    let screen = tmux.wait_for("README.md");
    assert!(
        !screen.contains("readme-build"),
        "an ignored file is offered: {screen}"
    );
    tmux.keys(&["Tab"]);
    tmux.wait_for("› look at @README.md");
    tmux.keys(&["Enter"]);
    tmux.wait_for("read it");
    quit(&tmux);
}

#[test]
fn an_untrusted_project_plugin_is_asked_about_on_screen() {
    let sandbox = Sandbox::new();
    let fake = env!("CARGO_BIN_EXE_fake-mcp");
    let dir = sandbox.project_plugins().join("pp");
    make_plugin(&dir, "pp");
    let marker = sandbox.outside("marks").join("started");
    write_script(
        &dir.join("bin/server"),
        &format!(
            "#!/bin/sh\necho started >> '{}'\nexec '{fake}' --mode ok\n",
            marker.display()
        ),
    );
    make_mcp(
        &dir,
        r#"{"srv": {"type": "stdio", "command": "./bin/server"}}"#,
    );
    let model = model(&sandbox, &json!([]));
    let started = || std::fs::read_to_string(&marker).map_or(0, |t| t.lines().count());

    // Declined: nothing runs, and the next start asks again.
    let tmux = tui_starting(&sandbox, &model, &["--ephemeral"]);
    let screen = tmux.wait_for("The project plugin pp is not trusted yet");
    assert!(screen.contains("MCP server pp/srv: runs "), "{screen}");
    assert!(screen.contains("bin/server"), "{screen}");
    tmux.keys(&["n"]);
    tmux.wait_for("fake-model-1");
    assert_eq!(started(), 0, "an untrusted server ran");
    quit(&tmux);
    drop(tmux);

    // Trusted: it starts, and it is remembered as `rho plugins trust` does.
    let tmux = tui_starting(&sandbox, &model, &["--ephemeral"]);
    tmux.wait_for("The project plugin pp is not trusted yet");
    tmux.keys(&["y"]);
    tmux.wait_for("mcp 1 up");
    assert_eq!(started(), 1);
    quit(&tmux);
    drop(tmux);
    let trust = sandbox
        .rho(&["plugins", "inspect", "pp", "--json"])
        .ok()
        .json();
    assert_eq!(trust["trust"], "trusted", "{trust:#}");
    let tmux = tui(&sandbox, &model, &["--ephemeral"]);
    let screen = tmux.wait_for("mcp 1 up");
    assert!(!screen.contains("not trusted yet"), "{screen}");
    quit(&tmux);
}

/// A yes that cannot be recorded (the trust store is a directory here) is said on screen, and
/// the plugin stays off, instead of the answer vanishing into the log.
#[test]
fn a_trust_that_cannot_be_recorded_is_said_on_screen() {
    let sandbox = Sandbox::new();
    let dir = sandbox.project_plugins().join("pp");
    make_plugin(&dir, "pp");
    make_mcp(
        &dir,
        r#"{"srv": {"type": "stdio", "command": "./bin/server"}}"#,
    );
    write_script(&dir.join("bin/server"), "#!/bin/sh\nexit 1\n");
    std::fs::create_dir_all(sandbox.rho_home.join("trusted-plugins.toml")).unwrap();
    let model = model(&sandbox, &json!([]));
    let tmux = tui_starting(&sandbox, &model, &["--ephemeral"]);
    tmux.wait_for("The project plugin pp is not trusted yet");
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("could not record your trust in pp");
    assert!(screen.contains("not a regular file"), "{screen}");
    quit(&tmux);
}

#[test]
fn a_resize_rewraps_the_conversation_and_80x24_stays_usable() {
    let sandbox = Sandbox::new();
    let long = "a long answer that wraps differently at every width ".repeat(6);
    let model = model(&sandbox, &json!([{"content": long}]));
    let tmux = tui(&sandbox, &model, &["--ephemeral"]);
    tmux.type_text("wrap please");
    tmux.keys(&["Enter"]);
    tmux.wait_for("wraps differently");
    let wide = tmux.screen();
    tmux.resize(80, 24);
    let narrow = tmux.wait_until("the status line at 80 columns", |s| {
        s.lines().count() <= 24 && s.lines().last().is_some_and(|l| l.contains("fake-model-1"))
    });
    assert_ne!(wide, narrow);
    for line in narrow.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
    // The whole answer is still there, wrapped to the new width.
    let words: usize = narrow.matches("wraps").count();
    assert_eq!(words, 6, "{narrow}");
    assert!(narrow.contains("› wrap please"), "{narrow}");
    quit(&tmux);
}

/// Runs rho on the stand-in kitty terminal (`tests/peers/graphics_terminal.py`, a real pty)
/// for a turn that calls server-everything's `get-tiny-image`; what the terminal saw.
fn on_a_kitty_terminal(answer_kitty: bool) -> Value {
    let sandbox = everything::allow_all_sandbox("");
    let tool = everything_tool("get-tiny-image");
    let model = model(
        &sandbox,
        &json!([
            {"tool_calls": [{"name": tool, "arguments": {}}]},
            {"content": "that was the tiny image"}
        ]),
    );
    let endpoint = model.endpoint();
    let project = sandbox.project.display().to_string();
    let terminal = rho_e2e::repo_root().join("tests/peers/graphics_terminal.py");
    let rho = rho_bin();
    let output = std::process::Command::new("python3")
        .arg(&terminal)
        .args([
            "--ready",
            "fake-model-1",
            "--prompt",
            "show me the tiny image",
        ])
        .args(["--done", "that was the tiny image"])
        .args(["--answer-kitty", if answer_kitty { "yes" } else { "no" }])
        .arg("--")
        .arg(&rho)
        .args([
            "--cwd",
            &project,
            "--endpoint",
            &endpoint,
            "--model",
            "fake-model-1",
        ])
        .env("HOME", &sandbox.home)
        .env("RHO_HOME", &sandbox.rho_home)
        .env_remove("NO_COLOR")
        .output()
        .expect("python3 runs the stand-in terminal");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&output.stdout));
    })
}

#[test]
fn an_image_result_is_drawn_on_a_kitty_terminal() {
    let seen = on_a_kitty_terminal(true);
    assert_eq!(seen["prompted"], true, "{seen}");
    assert_eq!(seen["timed_out"], false, "{seen}");
    assert_eq!(seen["transmitted"], true, "the image was sent: {seen}");
    assert!(seen["placeholders"].as_u64().unwrap() > 0, "{seen}");
    assert_eq!(seen["exit"], 0, "{seen}");
}

#[test]
fn an_image_result_keeps_its_descriptor_where_the_terminal_draws_no_images() {
    let seen = on_a_kitty_terminal(false);
    assert_eq!(seen["prompted"], true, "{seen}");
    assert_eq!(seen["timed_out"], false, "{seen}");
    assert_eq!(seen["transmitted"], false, "{seen}");
    assert_eq!(seen["descriptor"], true, "{seen}");
    assert_eq!(seen["exit"], 0, "{seen}");
}
