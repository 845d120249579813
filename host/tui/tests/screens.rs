//! Snapshot tests of what `rho-tui` draws, and of the operations its keys send: the app is
//! driven exactly as the event loop drives it (start-up operations answered, session events
//! delivered, keys pressed) and each frame is drawn on a test terminal with the plain theme.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

#[path = "screens/claude_runtime.rs"]
mod claude_runtime;

use std::collections::BTreeMap;

use crossterm::event::KeyCode;
use rho_component::{RiskLevel, ToolImage};
use rho_core::doctor::{Check, CheckKind, CheckStatus};
use rho_core::host::{Extensions, HostError, Operation, Response};
use rho_core::provider::FinishReason;
use rho_core::session::{
    ApprovalDecision, CallDenied, CallFinished, CallOutcome, CallProgress, QuestionAnswer,
    SessionEvent,
};
use rho_tui::images::{Graphics, Protocols};
use support::{Harness, ctrl, plain, rows_above};

const BASH_ARGS: &str = r#"{"command":"rm -rf build/ && cargo build --release"}"#;

/// A turn that asked for `bash` and waits for the approval.
fn awaiting_bash() -> Harness {
    let mut h = Harness::started();
    h.prompt("clean and rebuild");
    h.tool_call("call_1", "bash", BASH_ARGS);
    h.approval("call_1", "bash", BASH_ARGS, RiskLevel::Destructive);
    h
}

/// A turn whose call `call_1` of `name` runs.
fn running(name: &str, arguments: &str) -> Harness {
    let mut h = Harness::started();
    h.prompt("try the everything server");
    h.tool_call("call_1", name, arguments);
    h.executing();
    h
}

// ---- 1. the empty session ----

#[test]
fn empty_session_80x24() {
    let mut h = Harness::started();
    insta::assert_snapshot!("empty_session_80x24", h.screen(80, 24));
}

#[test]
fn empty_session_200x60() {
    let mut h = Harness::started();
    insta::assert_snapshot!("empty_session_200x60", h.screen(200, 60));
}

/// Nothing configured: rho's default provider stands in, and neither the welcome nor the
/// status line presents its model as chosen; the welcome says what to do in one line.
#[test]
fn no_model_configured() {
    let mut state = support::state();
    state.model = Some("qwen3".to_owned());
    state.provider = Some("local".to_owned());
    state.provider_source = Some(rho_core::ProviderSource::Builtin);
    let mut h = Harness::started_with(state);
    let screen = h.screen(100, 16);
    insta::assert_snapshot!("no_model_configured", screen);
    assert!(screen.contains("none configured (trying qwen3 · local, rho's default)"));
    assert!(screen.contains("no model configured (trying qwen3 · local)"));
    assert!(screen.contains("[providers.<id>]"));
}

/// A 60-column window keeps whole hints: the footer ends at the end of a hint, never inside a
/// word, whatever it says.
#[test]
fn a_narrow_window_never_cuts_a_hint_mid_word() {
    let mut h = Harness::started();
    let footer = |screen: &str| {
        let rows = rows_above(screen, 0);
        rows[rows.len() - 2].trim_matches('"').trim().to_owned()
    };
    let mut hints = vec![footer(&h.screen(60, 12))];
    h.type_text("/");
    hints.push(footer(&h.screen(60, 12)));
    h.key(KeyCode::Esc);
    h.key(KeyCode::Backspace);
    h.type_text("summarise @");
    hints.push(footer(&h.screen(60, 12)));
    for hint in &hints {
        let full = [
            "enter send · ctrl+j newline · / commands · @ resources · pgup/pgdn scroll",
            "↑/↓ choose · enter runs it · tab inserts it · esc close",
            "↑/↓ choose · enter attaches it · tab attaches it · esc close",
        ];
        assert!(
            full.iter().any(|f| f.starts_with(hint.as_str())
                && (f.len() == hint.len() || f[hint.len()..].starts_with(" · "))),
            "cut inside a hint: {hint:?}"
        );
    }
    assert_eq!(
        hints[0],
        "enter send · ctrl+j newline · / commands · @ resources"
    );
}

#[test]
fn before_the_host_answers() {
    let mut h = Harness::new();
    insta::assert_snapshot!("before_the_host_answers", h.screen(80, 6));
}

// ---- 2. an assistant message ----

const ANSWER: &[&str] = &[
    "# Release plan\n\nHere is what ",
    "changes:\n\n- bump the version to **0.2.0**\n- update `CHANGELOG.md`\n",
    "- tag the release\n\n```rust\nfn main() {\n    println!(\"hel",
    "lo\");\n}\n```\n\n",
    "| crate | version |\n|-------|---------|\n",
    "| rho-core | 0.2.0 |\n| rho-tui | 0.2.0 |\n",
];

#[test]
fn assistant_message_streaming() {
    let mut h = Harness::started();
    h.prompt("plan the release");
    h.stream(&ANSWER[..3]);
    insta::assert_snapshot!("assistant_message_streaming", h.screen(80, 32));
}

#[test]
fn assistant_message_finished() {
    let mut h = Harness::started();
    h.prompt("plan the release");
    h.stream(ANSWER);
    h.session(support::usage(1545, 3.7));
    h.end_turn(FinishReason::Stop);
    insta::assert_snapshot!("assistant_message_finished", h.screen(80, 32));
}

// ---- 3. tool cards ----

#[test]
fn card_requested() {
    let mut h = Harness::started();
    h.prompt("clean and rebuild");
    h.tool_call("call_1", "bash", BASH_ARGS);
    insta::assert_snapshot!("card_requested", h.screen(80, 12));
}

#[test]
fn card_awaiting_approval() {
    let mut h = awaiting_bash();
    insta::assert_snapshot!("card_awaiting_approval", h.screen(80, 14));
}

#[test]
fn card_running_with_progress() {
    let mut h = running(
        "mcp__everything__longRunningOperation",
        r#"{"duration":10,"steps":5}"#,
    );
    h.session(SessionEvent::ToolProgress(CallProgress {
        call_id: "call_1".to_owned(),
        name: "mcp__everything__longRunningOperation".to_owned(),
        progress: 3.0,
        total: Some(5.0),
        message: Some("step 3 of 5".to_owned()),
    }));
    insta::assert_snapshot!("card_running_with_progress", h.screen(80, 12));
}

fn long_result() -> String {
    (1..=20)
        .map(|i| format!("{i:>3}  line {i} of Cargo.toml"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn card_succeeded_folded_then_expanded() {
    let mut h = running("read_file", r#"{"path":"Cargo.toml"}"#);
    h.tool_result("call_1", "read_file", false, &long_result());
    insta::assert_snapshot!("card_succeeded_folded", h.screen(80, 34));
    h.press(ctrl(KeyCode::Char('o')));
    insta::assert_snapshot!("card_succeeded_expanded", h.screen(80, 34));
    h.press(ctrl(KeyCode::Char('o')));
    let folded = h.screen(80, 34);
    assert!(
        folded.contains("… 14 more result lines · ctrl+o expands"),
        "{folded}"
    );
}

#[test]
fn card_failed() {
    let mut h = running("read_file", r#"{"path":"missing.txt"}"#);
    h.tool_result(
        "call_1",
        "read_file",
        true,
        "cannot read /srv/demo/missing.txt: No such file or directory (os error 2)",
    );
    insta::assert_snapshot!("card_failed", h.screen(80, 12));
}

#[test]
fn card_denied() {
    let mut h = awaiting_bash();
    h.key(KeyCode::Char('n'));
    h.session(SessionEvent::ToolDenied(CallDenied {
        call_id: "call_1".to_owned(),
        name: "bash".to_owned(),
        display_name: "bash".to_owned(),
    }));
    h.session(SessionEvent::StateChange(
        rho_core::session::LoopState::Thinking,
    ));
    insta::assert_snapshot!("card_denied", h.screen(80, 12));
}

#[test]
fn a_denial_lands_on_its_own_call_when_two_calls_look_the_same() {
    let mut h = Harness::started();
    h.tool_call("call_1", "bash", BASH_ARGS);
    h.tool_call("call_2", "bash", BASH_ARGS);
    // The second of two identical calls is refused; the first one runs.
    h.session(SessionEvent::ToolDenied(CallDenied {
        call_id: "call_2".to_owned(),
        name: "bash".to_owned(),
        display_name: "bash".to_owned(),
    }));
    h.tool_result("call_1", "bash", false, "ran once");
    let screen = h.screen(80, 20);
    let first = screen.find("ran once").expect("the first call's result");
    let denied = screen.find("denied").expect("the second call denied");
    assert!(first < denied, "{screen}");
}

#[test]
fn card_redirected() {
    let mut h = awaiting_bash();
    h.key(KeyCode::Char('r'));
    h.type_text("use cargo clean instead");
    insta::assert_snapshot!("card_redirect_typing", h.screen(80, 14));
    h.key(KeyCode::Enter);
    insta::assert_snapshot!("card_redirected", h.screen(80, 14));
}

#[test]
fn card_cancelled() {
    let mut h = running(
        "mcp__everything__longRunningOperation",
        r#"{"duration":10,"steps":5}"#,
    );
    h.end_turn(FinishReason::Aborted);
    insta::assert_snapshot!("card_cancelled", h.screen(80, 12));
}

#[test]
fn card_mcp_read_only() {
    let mut h = running("mcp__everything__echo", r#"{"message":"hello"}"#);
    let running_screen = h.screen(80, 12);
    // What a server says of its tool is the server's word, never rho's label.
    assert!(
        running_screen.contains("⋯ everything › echo  mcp__everything__echo"),
        "{running_screen}"
    );
    assert!(
        !running_screen.contains("echo  read-only"),
        "{running_screen}"
    );
    assert!(
        running_screen.contains("server says: read-only (readOnlyHint: true)"),
        "{running_screen}"
    );
    h.tool_result("call_1", "mcp__everything__echo", false, "Echo: hello");
    insta::assert_snapshot!("card_mcp_read_only", h.screen(80, 12));
}

// ---- 3a. what an approval card says, and the arguments it shows ----

/// An MCP tool of server `files` whose description carries `hints` as rho-mcp writes them.
fn files_tool(tool: &str, what: &str, hints: &[&str]) -> rho_component::ToolSpec {
    let mut description = format!("{what}\n(MCP tool `{tool}` of server `files`)");
    for hint in hints {
        description.push_str(&format!("\n{}{hint}", rho_component::SERVER_HINT_PREFIX));
    }
    support::tool(
        &format!("files_{tool}"),
        &description,
        // What rho-core gives every MCP tool, whatever its server says.
        RiskLevel::Destructive,
        rho_component::ToolOrigin::Mcp {
            server: "files".to_owned(),
            tool: tool.to_owned(),
            plugin: None,
        },
    )
}

/// A started app that also knows `run_command` and two tools of server `files`: one whose
/// server says it only reads, one whose server says it may be destructive.
fn with_more_tools() -> Harness {
    let mut tools = support::tools();
    tools.push(support::tool(
        "run_command",
        "Run a command",
        RiskLevel::Destructive,
        rho_component::ToolOrigin::Builtin,
    ));
    tools.push(files_tool(
        "read_text",
        "Reads a file.",
        &["read-only (readOnlyHint: true)"],
    ));
    tools.push(files_tool(
        "delete",
        "Deletes a file.",
        &[
            "may modify its environment (readOnlyHint: false)",
            "may be destructive (destructiveHint: true)",
        ],
    ));
    let mut h = Harness::new();
    h.reply_startup(
        support::extensions(),
        tools,
        support::prompts(),
        support::resources(),
    );
    h
}

/// `name` called with `arguments`, waiting for approval at `risk`.
fn asking(name: &str, arguments: &str, risk: RiskLevel) -> Harness {
    let mut h = with_more_tools();
    h.prompt("do it");
    h.tool_call("call_1", name, arguments);
    h.approval("call_1", name, arguments, risk);
    h
}

#[test]
fn approval_of_an_mcp_tool_the_server_says_only_reads() {
    let mut h = asking(
        "files_read_text",
        r#"{"path":"notes.txt"}"#,
        RiskLevel::Destructive,
    );
    let screen = h.screen(80, 12);
    // The claim is the server's, and no level contradicts it.
    assert!(
        screen.contains("The server says this tool only reads (unverified). Allow this call?"),
        "{screen}"
    );
    assert!(!screen.contains("destructive"), "{screen}");
    insta::assert_snapshot!("approval_mcp_read_only_hint", screen);
}

#[test]
fn approval_of_an_mcp_tool_the_server_says_is_destructive() {
    let mut h = asking(
        "files_delete",
        r#"{"path":"notes.txt"}"#,
        RiskLevel::Destructive,
    );
    let screen = h.screen(80, 12);
    assert!(
        screen.contains("The server says this tool may be destructive. Allow this call?"),
        "{screen}"
    );
    insta::assert_snapshot!("approval_mcp_destructive_hint", screen);
}

#[test]
fn approval_of_run_command() {
    let mut h = asking(
        "run_command",
        r#"{"command":"cargo build --release"}"#,
        RiskLevel::Destructive,
    );
    let screen = h.screen(80, 12);
    assert!(screen.contains("Allow this destructive call?"), "{screen}");
    insta::assert_snapshot!("approval_run_command", screen);
}

/// `touch X`, 300 line breaks, then `echo hello`: one command, two things run.
fn hidden_touch() -> String {
    serde_json::json!({ "command": format!("touch X\n{}echo hello", "\n".repeat(300)) }).to_string()
}

#[test]
fn approval_shows_the_start_of_a_command_and_its_blank_lines_counted() {
    let arguments = hidden_touch();
    let mut h = asking("run_command", &arguments, RiskLevel::Destructive);
    let screen = h.screen(80, 20);
    // Everything that runs is on screen above the question, the blank lines as a count.
    for shown in [
        "? run_command",
        "command:",
        "touch X",
        "⋯ 300 blank lines ⋯",
        "echo hello",
        "Allow this destructive call?",
    ] {
        assert!(screen.contains(shown), "{shown:?} missing:\n{screen}");
    }
    insta::assert_snapshot!("approval_hidden_touch", screen);
}

#[test]
fn approval_counts_what_it_leaves_out_and_v_shows_all_of_it() {
    let command: String = (1..=40).map(|i| format!("echo step {i}\n")).collect();
    let command = format!("{command}rm -rf{}~", " ".repeat(40));
    let arguments = serde_json::json!({ "command": command }).to_string();
    let mut h = asking("run_command", &arguments, RiskLevel::Destructive);
    let card = h.screen(80, 24);
    assert!(card.contains("echo step 9"), "{card}");
    assert!(!card.contains("echo step 10"), "{card}");
    assert!(
        card.contains("+32 lines hidden (451 bytes) — v to view all"),
        "{card}"
    );
    insta::assert_snapshot!("approval_with_hidden_lines", card);

    // `v`: the whole arguments, scrolled by rows; the question's keys do nothing there.
    h.key(KeyCode::Char('v'));
    let view = h.screen(80, 24);
    assert!(view.contains("arguments of run_command"), "{view}");
    assert!(view.contains("q or esc back to the question"), "{view}");
    insta::assert_snapshot!("arguments_view_top", view);
    h.key(KeyCode::Char('y'));
    h.key(KeyCode::Char('n'));
    assert!(
        h.sent().is_empty(),
        "a key in the view answered the approval"
    );
    h.key(KeyCode::End);
    let bottom = h.screen(80, 24);
    assert!(bottom.contains("echo step 40"), "{bottom}");
    assert!(bottom.contains("rm -rf␠×40~"), "{bottom}");
    insta::assert_snapshot!("arguments_view_bottom", bottom);
    assert!(!bottom.contains("echo step 2 "), "{bottom}");
    h.key(KeyCode::PageUp);
    let up = h.screen(80, 24);
    assert!(up.contains("echo step 2 "), "a page up from the end:\n{up}");

    // `q` goes back to the card and its question; `y` answers it there.
    h.key(KeyCode::Char('q'));
    assert_eq!(h.screen(80, 24), card);
    h.key(KeyCode::Char('y'));
    assert_eq!(
        h.sent(),
        [Operation::AnswerApproval(ApprovalDecision::Approve)]
    );
}

#[test]
fn the_view_closes_when_the_turn_stops() {
    let arguments = hidden_touch();
    let mut h = asking("run_command", &arguments, RiskLevel::Destructive);
    h.key(KeyCode::Char('v'));
    assert!(h.screen(80, 20).contains("arguments of run_command"));
    h.end_turn(FinishReason::Aborted);
    let screen = h.screen(80, 20);
    assert!(!screen.contains("arguments of run_command"), "{screen}");
    assert!(screen.contains("⊘ run_command  cancelled"), "{screen}");
}

// ---- 3b. a call stopped while it ran, and a resumed session's calls ----

#[test]
fn a_call_stopped_while_it_ran_says_so_and_keeps_its_output() {
    let mut h = running("bash", r#"{"command":"sleep 60"}"#);
    h.session(SessionEvent::ToolResult(CallFinished {
        call_id: "call_1".into(),
        name: "bash".into(),
        is_error: true,
        outcome: CallOutcome::Cancelled,
        output: "command was cancelled; its process group was killed".into(),
        image: None,
    }));
    let screen = h.screen(80, 12);
    assert!(screen.contains("⊘ bash  cancelled"), "{screen}");
    assert!(
        screen.contains("└ command was cancelled; its process group was killed"),
        "{screen}"
    );
}

#[test]
fn a_resumed_session_shows_each_call_as_it_ended() {
    use rho_core::provider::{ChatMessage, ToolCall};
    let call = |id: &str| ToolCall {
        id: id.to_owned(),
        name: "bash".to_owned(),
        arguments: format!(r#"{{"command":"echo {id}"}}"#),
    };
    let result = |id: &str, content: &str, outcome: Option<CallOutcome>| {
        let message = ChatMessage::tool_result(id, "bash", content);
        match outcome {
            Some(outcome) => message.with_outcome(outcome),
            None => message,
        }
    };
    let messages = vec![
        ChatMessage::user("five calls"),
        ChatMessage::assistant(
            "",
            ["ok", "failed", "denied", "stopped", "redirected", "old"]
                .map(call)
                .to_vec(),
        ),
        result("ok", "ok", Some(CallOutcome::Success)),
        result(
            "failed",
            "Error: exit code: 1",
            Some(CallOutcome::Error {
                message: "exit code: 1".into(),
            }),
        ),
        result(
            "denied",
            "Error: the user denied this tool call",
            Some(CallOutcome::Denied),
        ),
        result(
            "stopped",
            "Not run: the user aborted.",
            Some(CallOutcome::Cancelled),
        ),
        result(
            "redirected",
            "Not run: the user redirected with new instructions.",
            Some(CallOutcome::Redirected),
        ),
        // A session file written before outcomes were kept.
        result("old", "old output", None),
    ];
    let mut h = Harness::started();
    h.reply(1000, Response::Messages(messages));
    let screen = h.screen(80, 40);
    for line in [
        "✓ bash",
        "✗ bash",
        "⊘ bash  denied",
        "⊘ bash  cancelled",
        "↪ bash  redirected",
    ] {
        assert!(screen.contains(line), "{line:?} missing:\n{screen}");
    }
    assert!(!screen.contains("the user denied"), "{screen}");
    insta::assert_snapshot!("resumed_outcomes", screen);
}

// ---- 4 and 5. a server's questions on a card ----

#[test]
fn form_on_card() {
    let mut h = running("mcp__everything__startElicitation", "{}");
    h.session(SessionEvent::Question(support::form(7, "call_1")));
    insta::assert_snapshot!("form_on_card", h.screen(80, 24));
    h.type_text("Ada Lovelace");
    h.key(KeyCode::Tab);
    insta::assert_snapshot!("form_after_typing_and_tab", h.screen(80, 24));
}

#[test]
fn sampling_on_card() {
    let mut h = running(
        "mcp__everything__sampleLLM",
        r#"{"prompt":"fox","maxTokens":100}"#,
    );
    h.session(SessionEvent::Question(support::sampling(8, "call_1")));
    insta::assert_snapshot!("sampling_on_card", h.screen(80, 20));
}

// ---- 6. palettes ----

#[test]
fn slash_palette() {
    let mut h = Harness::started();
    h.type_text("/");
    insta::assert_snapshot!("slash_palette", h.screen(80, 24));
    h.type_text("mo");
    insta::assert_snapshot!("slash_palette_mo", h.screen(80, 24));
}

#[test]
fn at_palette_and_attachment_chip() {
    let mut h = Harness::started();
    h.type_text("summarise @");
    insta::assert_snapshot!("at_palette", h.screen(80, 24));
    h.key(KeyCode::Tab);
    read_ahead(&mut h);
    insta::assert_snapshot!("attachment_chip", h.screen(80, 24));
    h.key(KeyCode::Enter);
    let (_, operation) = h.one_operation();
    assert_eq!(
        operation,
        Operation::Prompt {
            message: "summarise".to_owned(),
            attachments: vec![(
                "everything".to_owned(),
                "test://static/resource/1".to_owned()
            )],
        }
    );
}

// ---- 7. reports ----

#[test]
fn mcp_report() {
    let mut h = Harness::new();
    h.reply_startup(
        support::three_servers(),
        support::tools(),
        support::prompts(),
        support::resources(),
    );
    h.submit("/mcp");
    assert!(matches!(
        h.reply_one(Response::Extensions(Box::new(support::three_servers()))),
        Operation::ListExtensions
    ));
    insta::assert_snapshot!("mcp_report", h.screen(80, 24));
}

#[test]
fn mcp_report_shows_the_four_states_of_a_server() {
    let mut extensions = support::extensions();
    let server = |id: &str, status: rho_core::ServerStatus, tools: &[&str]| {
        support::server(id, rho_component::Transport::Stdio, status, tools)
    };
    extensions.servers = vec![
        server("filling", rho_core::ServerStatus::Configured, &[]),
        server("cached", rho_core::ServerStatus::Known, &["lookup"]),
        server("idle", rho_core::ServerStatus::Started, &["ping"]),
        server("busy", rho_core::ServerStatus::Used, &["work"]),
    ];
    let mut h = Harness::new();
    h.reply_startup(
        extensions.clone(),
        support::tools(),
        support::prompts(),
        support::resources(),
    );
    h.submit("/mcp");
    h.reply_one(Response::Extensions(Box::new(extensions)));
    let screen = h.screen(90, 40);
    insta::assert_snapshot!("mcp_report_four_states", screen);
    for line in [
        "filling  stdio  configured",
        "cached  stdio  known",
        "idle  stdio  started",
        "busy  stdio  used",
    ] {
        assert!(screen.contains(line), "{line}: {screen}");
    }
}

#[test]
fn context_report_and_mcp_show_what_definitions_cost_and_what_waits() {
    let mut extensions = support::extensions();
    extensions.context = support::context_budget(true);
    let mut h = Harness::new();
    h.reply_startup(
        extensions.clone(),
        support::tools(),
        support::prompts(),
        support::resources(),
    );
    h.submit("/context");
    assert!(matches!(
        h.reply_one(Response::Extensions(Box::new(extensions.clone()))),
        Operation::ListExtensions
    ));
    let screen = h.screen(100, 30);
    insta::assert_snapshot!("context_report", screen);
    assert!(
        screen.contains("2 tools wait behind tool_search"),
        "{screen}"
    );
    h.submit("/mcp");
    h.reply_one(Response::Extensions(Box::new(extensions)));
    let screen = h.screen(100, 30);
    assert!(
        screen.contains(
            "definitions: ≈1.5k tokens for 3 tools; 2 waiting behind tool_search, 1 loaded"
        ),
        "{screen}"
    );
    assert!(
        screen.contains("tool search: on (always): the next request sends ≈3.0k of ≈3.8k tokens"),
        "{screen}"
    );
}

#[test]
fn mcp_report_shows_restarts_rejected_questions_and_servers_given_up_on() {
    let mut extensions = support::three_servers();
    // A server that restarted twice and asked far more questions at once than rho lets wait.
    let restarted = extensions.servers.remove(0);
    let restarted = restarted
        .with_health(rho_core::ServerHealth {
            restarts: 2,
            last_restart: Some("the server's process exited".into()),
            ping_failure: None,
            given_up: None,
        })
        .with_rejected_questions(rho_core::RejectedQuestions::from(1391));
    extensions.servers.insert(0, restarted);
    let given_up = support::server(
        "files",
        rho_component::Transport::Stdio,
        rho_core::ServerStatus::Used,
        &[],
    )
    .with_health(rho_core::ServerHealth {
        restarts: 5,
        last_restart: Some("the server's process exited".into()),
        ping_failure: None,
        given_up: Some("it failed 5 times in 300 s; not started again this session".into()),
    });
    extensions.servers.push(given_up);
    let mut h = Harness::new();
    h.reply_startup(
        extensions.clone(),
        support::tools(),
        support::prompts(),
        support::resources(),
    );
    h.submit("/mcp");
    h.reply_one(Response::Extensions(Box::new(extensions)));
    let screen = h.screen(100, 30);
    insta::assert_snapshot!("mcp_report_restarts", screen);
    assert!(
        screen.contains("1391 questions rejected: more than one open and 8 waiting at once"),
        "{screen}"
    );
    assert!(screen.contains("files  stdio  failed"), "{screen}");
    assert!(screen.contains("mcp 1 up 2 failed"), "{screen}");
}

#[test]
fn mcp_report_marks_a_tool_that_needs_tasks() {
    let mut extensions = support::extensions();
    let mut tools = support::server(
        "jobs",
        rho_component::Transport::Stdio,
        rho_core::ServerStatus::Started,
        &["export", "status"],
    )
    .tools();
    tools[0].needs_tasks = true;
    extensions.servers = vec![rho_core::MountedServer::new(
        "jobs",
        rho_core::ServerSource::Config,
        None,
        Some(rho_component::Transport::Stdio),
        rho_core::ServerStatus::Started,
        tools,
    )];
    let mut h = Harness::new();
    h.reply_startup(extensions.clone(), support::tools(), Vec::new(), Vec::new());
    h.submit("/mcp");
    h.reply_one(Response::Extensions(Box::new(extensions)));
    let screen = h.screen(100, 24);
    let row = |tool: &str| {
        screen
            .lines()
            .find(|l| l.contains(&format!("jobs › {tool}")))
            .unwrap_or_else(|| panic!("no row for {tool}: {screen}"))
            .to_owned()
    };
    assert!(
        row("export").contains("mcp__jobs__export  needs task support"),
        "{screen}"
    );
    assert!(!row("status").contains("needs task support"), "{screen}");
}

/// The `local-files` server (its id has a hyphen, so its exported names are hex) serving
/// `get-env` (a hyphen too) and `read_text`, as a session mounts it.
fn hyphenated_server() -> (Extensions, Vec<rho_component::ToolSpec>) {
    let mut extensions = support::extensions();
    extensions.servers = vec![support::server(
        "local-files",
        rho_component::Transport::Stdio,
        rho_core::ServerStatus::Used,
        &["get-env", "read_text"],
    )];
    let mut tools = support::tools();
    for tool in ["get-env", "read_text"] {
        tools.push(support::tool(
            &rho_component::naming::full_name("local-files", tool),
            &format!("the local-files server's {tool}"),
            RiskLevel::Destructive,
            rho_component::ToolOrigin::Mcp {
                server: "local-files".to_owned(),
                plugin: None,
                tool: tool.to_owned(),
            },
        ));
    }
    extensions.tools = tools.iter().map(|t| t.name.clone()).collect();
    (extensions, tools)
}

/// The exported name of `get-env` on `local-files`: what the model calls, hex and all.
const GET_ENV: &str = "mcp___rho_6c6f63616c2d66696c6573___rho_6765742d656e76";

#[test]
fn mcp_report_names_tools_as_server_and_tool_then_the_exported_name() {
    let (extensions, tools) = hyphenated_server();
    assert_eq!(
        tools.last().map(|t| t.name.as_str()),
        Some("mcp___rho_6c6f63616c2d66696c6573__read_text")
    );
    let mut h = Harness::new();
    h.reply_startup(extensions.clone(), tools, Vec::new(), Vec::new());
    h.submit("/mcp");
    h.reply_one(Response::Extensions(Box::new(extensions)));
    let screen = h.screen(100, 24);
    insta::assert_snapshot!("mcp_report_hyphenated_names", screen);
    // What a person reads comes first; the exported name follows on the same row.
    let row = screen
        .lines()
        .find(|l| l.contains("local-files › get-env"))
        .unwrap_or_else(|| panic!("no `local-files › get-env` row: {screen}"));
    let (before, after) = row.split_once("local-files › get-env").unwrap();
    assert!(!before.contains("mcp__"), "{row}");
    assert!(after.contains(GET_ENV), "{row}");
}

#[test]
fn tool_and_approval_cards_name_server_and_tool_then_the_exported_name() {
    let (extensions, tools) = hyphenated_server();
    let mut h = Harness::new();
    h.reply_startup(extensions, tools, Vec::new(), Vec::new());
    h.prompt("what is in the environment?");
    h.tool_call("call_1", GET_ENV, "{}");
    let header = format!("◦ local-files › get-env  {GET_ENV}");
    let screen = h.screen(100, 12);
    assert!(screen.contains(&header), "{screen}");
    h.approval("call_1", GET_ENV, "{}", RiskLevel::Destructive);
    let screen = h.screen(100, 12);
    insta::assert_snapshot!("approval_hyphenated_names", screen);
    assert!(
        screen.contains(&format!("? local-files › get-env  {GET_ENV}")),
        "{screen}"
    );
    // The full view of the arguments names the tool the same way.
    h.key(KeyCode::Char('v'));
    let screen = h.screen(100, 12);
    assert!(
        screen.contains("arguments of local-files › get-env"),
        "{screen}"
    );
}

#[test]
fn tools_report_names_tools_as_people_read_them_then_the_exported_name() {
    let (extensions, tools) = hyphenated_server();
    let mut h = Harness::new();
    h.reply_startup(extensions, tools, Vec::new(), Vec::new());
    h.submit("/tools");
    let screen = h.screen(120, 24);
    insta::assert_snapshot!("tools_report_hyphenated_names", screen);
    let row = screen
        .lines()
        .find(|l| l.contains("local-files › get-env"))
        .unwrap_or_else(|| panic!("no `local-files › get-env` row: {screen}"));
    let (before, after) = row.split_once("local-files › get-env").unwrap();
    assert!(!before.contains("mcp__"), "{row}");
    assert!(after.trim_start().starts_with(GET_ENV), "{row}");
    // A built-in tool is its own name in both columns.
    assert!(screen.contains("read_file"), "{screen}");
}

#[test]
fn doctor_report() {
    let mut h = Harness::started();
    h.submit("/doctor");
    let asked = h.reply_one(Response::Doctor(vec![
        Check {
            check: CheckKind::Config,
            status: CheckStatus::Ok,
            detail: "/srv/home/.rho/config.toml (permission mode ask)".to_owned(),
        },
        Check {
            check: CheckKind::AgentPlugins,
            status: CheckStatus::Warning,
            detail: "2 loaded, 0 disabled, 0 rejected, 1 shadowed; 0 problem(s)".to_owned(),
        },
        Check {
            check: CheckKind::McpServers,
            status: CheckStatus::Error,
            detail: "1/2 connected, 3 tool(s), 0 invalid; failed: broken: connection refused"
                .to_owned(),
        },
        Check {
            check: CheckKind::Provider,
            status: CheckStatus::Ok,
            detail: "local at http://127.0.0.1:11434/v1: reachable, 2 model(s)".to_owned(),
        },
    ]));
    assert_eq!(asked, Operation::Doctor);
    insta::assert_snapshot!("doctor_report", h.screen(80, 20));
}

#[test]
fn help_report() {
    let mut h = Harness::started();
    h.submit("/help");
    assert!(h.sent().is_empty(), "/help asks the host nothing");
    insta::assert_snapshot!("help_report", h.screen(80, 30));
}

// ---- 8. errors ----

#[test]
fn agent_error() {
    let mut h = Harness::started();
    h.prompt("hello");
    h.session(SessionEvent::AgentError(
        "provider unreachable: connection refused".to_owned(),
    ));
    insta::assert_snapshot!("agent_error", h.screen(80, 12));
}

/// Reported: the host follows `AgentError` with the prompt's failed reply carrying the same
/// message, and both are shown.
#[test]
fn agent_error_then_the_failed_prompt_reply() {
    let mut h = Harness::started();
    h.prompt("hello");
    h.fail_turn("provider unreachable: connection refused");
    insta::assert_snapshot!("agent_error_then_failed_prompt_reply", h.screen(80, 12));
}

/// A failed turn ends its approval: the card stops asking, and keys go to the composer again.
#[test]
fn agent_error_with_an_approval_pending() {
    let mut h = awaiting_bash();
    h.fail_turn("the session history is too large to save");
    h.type_text("hi");
    insta::assert_snapshot!("agent_error_with_an_approval_pending", h.screen(80, 14));
    h.key(KeyCode::Char('y'));
    assert!(h.sent().is_empty(), "the stale approval answered");
}

#[test]
fn failed_reply() {
    let mut h = Harness::started();
    h.submit("/model nope");
    let (id, operation) = h.one_operation();
    assert_eq!(operation, Operation::SetModel("nope".to_owned()));
    h.fail(
        id,
        HostError::invalid_params("unknown model `nope` (rho models lists them)"),
    );
    insta::assert_snapshot!("failed_reply", h.screen(80, 12));
}

#[test]
fn failed_prompt_reply_ends_the_turn() {
    let mut h = Harness::started();
    h.submit("hello");
    let (id, _) = h.one_operation();
    h.fail(id, HostError::invalid_request("the queue is full"));
    let screen = h.screen(80, 12);
    assert!(screen.contains("✗ the queue is full"), "{screen}");
    assert!(screen.contains("enter send"), "idle again: {screen}");
}

// ---- 9. the session picker ----

#[test]
fn resume_picker() {
    let mut h = Harness::started();
    h.exchange("hello", "Hello! What shall we do?");
    h.submit("/resume");
    assert!(matches!(
        h.reply_one(Response::Sessions(support::saved_sessions())),
        Operation::ListSessions
    ));
    insta::assert_snapshot!("resume_picker", h.screen(80, 16));
    h.key(KeyCode::Down);
    insta::assert_snapshot!("resume_picker_second", h.screen(80, 16));
    h.key(KeyCode::Enter);
    assert_eq!(
        h.sent(),
        [Operation::ResumeSession(
            "/home/dev/.rho/sessions/srv-demo/b2.jsonl".into()
        )]
    );
}

// ---- 10. press-again hints ----

#[test]
fn ctrl_c_hint() {
    let mut h = Harness::started();
    h.press(ctrl(KeyCode::Char('c')));
    insta::assert_snapshot!("ctrl_c_hint", h.screen(80, 8));
    assert!(!h.app.should_quit());
}

#[test]
fn esc_hint_while_running() {
    let mut h = Harness::started();
    h.prompt("write a long essay");
    h.stream(&["Once upon a time"]);
    h.key(KeyCode::Esc);
    insta::assert_snapshot!("esc_hint_while_running", h.screen(80, 8));
    assert!(h.sent().is_empty(), "one Esc does not stop the turn");
}

// ---- 11. scrolling ----

#[test]
fn scrolled_away_stays_put() {
    let mut h = Harness::started();
    for i in 1..=30 {
        h.exchange(
            &format!("question {i}"),
            &format!("Answer {i}: the short reply to question {i}."),
        );
    }
    h.prompt("question 31");
    h.stream(&["Answer 31 begins"]);
    h.screen(80, 24);
    h.key(KeyCode::PageUp);
    h.screen(80, 24);
    h.key(KeyCode::PageUp);
    let before = h.screen(80, 24);
    insta::assert_snapshot!("scrolled_away", before);
    assert!(before.contains("scrolled · ctrl+end"), "{before}");

    h.stream(&[" and goes on,\n\nand on, with a second paragraph."]);
    h.session(SessionEvent::MessageDelta("\n\n- and a list".to_owned()));
    let after = h.screen(80, 24);
    // The composer, the footer and the status line are the last three rows.
    assert_eq!(rows_above(&before, 3), rows_above(&after, 3));
    assert!(after.contains("scrolled · ctrl+end"), "{after}");

    h.press(ctrl(KeyCode::End));
    let following = h.screen(80, 24);
    assert!(!following.contains("scrolled"), "{following}");
    assert!(following.contains("- and a list") || following.contains("and a list"));
    insta::assert_snapshot!("scrolled_back_to_the_newest", following);
}

#[test]
fn page_down_to_the_bottom_follows_again() {
    let mut h = Harness::started();
    for i in 1..=20 {
        h.exchange(&format!("question {i}"), &format!("Answer {i}."));
    }
    h.screen(80, 24);
    h.key(KeyCode::PageUp);
    h.screen(80, 24);
    assert!(!h.app.transcript().follows());
    h.key(KeyCode::PageDown);
    assert!(h.app.transcript().follows());
    let screen = h.screen(80, 24);
    assert!(!screen.contains("scrolled"), "{screen}");
}

// ---- 12. wide and combining characters ----

#[test]
fn wide_and_combining_characters() {
    let mut h = Harness::started();
    h.prompt("你好，世界！請解釋 Rust 的所有權 🦀 — Zoe\u{308} and cafe\u{301}");
    h.stream(&[
        "## 所有権（ownership）\n\n",
        "Rust の値にはそれぞれ**所有者**がひとつだけあります。所有者がスコープを抜けると値は破棄されます。",
        "これを繰り返し説明すると長い行になり、折り返しが全角文字の境界で起きます。\n\n",
        "- 借用 👩‍💻 borrow\n- Zoe\u{308}, nai\u{308}ve, cafe\u{301}\n\n",
        "| 名前 | 意味 |\n|---|---|\n| 所有 | owner 🦀 |\n| 借用 | borrow |\n",
    ]);
    h.end_turn(FinishReason::Stop);
    h.type_text("次は🦀ライフタイム");
    insta::assert_snapshot!("wide_and_combining_characters", h.screen(80, 24));
}

// ---- behaviour: the operations keys send ----

#[test]
fn approval_keys_send_their_decisions() {
    let cases = [
        ('y', ApprovalDecision::Approve),
        ('a', ApprovalDecision::ApproveForSession),
        ('n', ApprovalDecision::Deny),
    ];
    for (key, decision) in cases {
        let mut h = awaiting_bash();
        h.key(KeyCode::Char(key));
        assert_eq!(h.sent(), [Operation::AnswerApproval(decision)], "key {key}");
        // The decision is made: the footer no longer asks.
        let screen = h.screen(80, 12);
        assert!(!screen.contains("y approve"), "key {key}: {screen}");
    }

    let mut h = awaiting_bash();
    h.key(KeyCode::Char('r'));
    assert!(h.sent().is_empty(), "r only starts the redirect");
    h.type_text("use cargo clean instead");
    assert!(h.sent().is_empty(), "typing sends nothing");
    h.key(KeyCode::Enter);
    assert_eq!(
        h.sent(),
        [Operation::AnswerApproval(ApprovalDecision::Redirect(
            "use cargo clean instead".to_owned()
        ))]
    );
}

#[test]
fn approved_card_runs() {
    let mut h = awaiting_bash();
    h.key(KeyCode::Char('y'));
    h.sent();
    h.executing();
    let screen = h.screen(80, 12);
    assert!(screen.contains("⋯ bash"), "{screen}");
    assert!(screen.contains("running…"), "{screen}");
}

#[test]
fn form_answers() {
    // Accept: every field filled in; Enter on the last field submits.
    let mut h = running("mcp__everything__startElicitation", "{}");
    h.session(SessionEvent::Question(support::form(7, "call_1")));
    h.type_text("Ada");
    h.key(KeyCode::Tab);
    h.key(KeyCode::Char(' '));
    h.key(KeyCode::Tab);
    h.key(KeyCode::Right);
    h.key(KeyCode::Enter);
    assert!(
        h.sent().is_empty(),
        "enter on a field before the last moves on"
    );
    h.key(KeyCode::Enter);
    let answers: BTreeMap<String, String> = [
        ("name", "Ada"),
        ("subscribe", "true"),
        ("color", "green"),
        ("count", "3"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(
        h.sent(),
        [Operation::AnswerQuestion {
            question: 7,
            answer: QuestionAnswer::Accept(answers),
        }]
    );
    let screen = h.screen(80, 24);
    assert!(
        !screen.contains("everything asks:"),
        "the form is gone: {screen}"
    );

    // Accept with only the required name typed: the blank optional boolean is left out,
    // defaults are sent.
    let mut h = running("mcp__everything__startElicitation", "{}");
    h.session(SessionEvent::Question(support::form(9, "call_1")));
    h.type_text("Ada");
    for _ in 0..4 {
        h.key(KeyCode::Enter);
    }
    let answers: BTreeMap<String, String> = [("name", "Ada"), ("color", "red"), ("count", "3")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    assert_eq!(
        h.sent(),
        [Operation::AnswerQuestion {
            question: 9,
            answer: QuestionAnswer::Accept(answers),
        }]
    );

    // Decline and cancel.
    for (key, answer) in [
        (ctrl(KeyCode::Char('d')), QuestionAnswer::Decline),
        (support::plain(KeyCode::Esc), QuestionAnswer::Cancel),
    ] {
        let mut h = running("mcp__everything__startElicitation", "{}");
        h.session(SessionEvent::Question(support::form(7, "call_1")));
        h.press(key);
        assert_eq!(
            h.sent(),
            [Operation::AnswerQuestion {
                question: 7,
                answer,
            }]
        );
    }
}

#[test]
fn sampling_answers() {
    for (key, answer) in [
        (
            support::plain(KeyCode::Enter),
            QuestionAnswer::Accept(BTreeMap::new()),
        ),
        (ctrl(KeyCode::Char('d')), QuestionAnswer::Decline),
        (support::plain(KeyCode::Esc), QuestionAnswer::Cancel),
    ] {
        let mut h = running("mcp__everything__sampleLLM", "{}");
        h.session(SessionEvent::Question(support::sampling(8, "call_1")));
        h.type_text("xyz");
        assert!(h.sent().is_empty());
        h.press(key);
        assert_eq!(
            h.sent(),
            [Operation::AnswerQuestion {
                question: 8,
                answer,
            }]
        );
    }
}

#[test]
fn question_without_a_card_is_declined() {
    let mut h = running("mcp__everything__startElicitation", "{}");
    h.session(SessionEvent::Question(support::form(11, "call_unknown")));
    assert_eq!(
        h.sent(),
        [Operation::AnswerQuestion {
            question: 11,
            answer: QuestionAnswer::Decline,
        }]
    );
}

#[test]
fn enter_while_running_steers() {
    let mut h = Harness::started();
    h.prompt("refactor the parser");
    h.submit("also keep the tests green");
    assert_eq!(
        h.sent(),
        [Operation::Steer("also keep the tests green".to_owned())]
    );
}

#[test]
fn clear_command() {
    let mut h = Harness::started();
    h.exchange("hello", "Hello!");
    assert!(!h.app.transcript().is_empty());
    h.submit("/clear");
    assert_eq!(h.sent(), [Operation::Clear]);
    assert!(h.app.transcript().is_empty());
}

#[test]
fn esc_esc_while_running_aborts() {
    let mut h = Harness::started();
    h.prompt("write a long essay");
    h.key(KeyCode::Esc);
    h.key(KeyCode::Esc);
    assert_eq!(h.sent(), [Operation::Abort]);
}

#[test]
fn ctrl_c_twice_when_idle_quits() {
    let mut h = Harness::started();
    h.press(ctrl(KeyCode::Char('c')));
    assert!(!h.app.should_quit());
    h.press(ctrl(KeyCode::Char('c')));
    assert!(h.app.should_quit());
    assert!(h.sent().is_empty());
}

#[test]
fn ctrl_c_clears_a_draft_first() {
    let mut h = Harness::started();
    h.type_text("a draft");
    h.press(ctrl(KeyCode::Char('c')));
    h.press(ctrl(KeyCode::Char('c')));
    assert!(
        !h.app.should_quit(),
        "the first ctrl+c only cleared the draft"
    );
    let screen = h.screen(80, 6);
    assert!(screen.contains("ctrl+c again to quit"), "{screen}");
}

// ---- more screens: reasoning, a sent attachment, cards left at the end of a turn ----

#[test]
fn reasoning_folded_and_shown() {
    let mut h = Harness::started();
    h.prompt("why is the sky blue?");
    h.sessions([
        SessionEvent::ReasoningDelta("The user asks about Rayleigh ".to_owned()),
        SessionEvent::ReasoningDelta("scattering; keep it short.".to_owned()),
    ]);
    h.stream(&["Because air scatters blue light more than red."]);
    insta::assert_snapshot!("reasoning_folded", h.screen(80, 10));
    h.press(ctrl(KeyCode::Char('r')));
    insta::assert_snapshot!("reasoning_shown", h.screen(80, 10));
}

#[test]
fn attachment_sent() {
    let mut h = Harness::started();
    h.type_text("summarise @res");
    h.key(KeyCode::Down);
    h.key(KeyCode::Tab);
    read_ahead(&mut h);
    h.key(KeyCode::Enter);
    let (_, operation) = h.one_operation();
    assert_eq!(
        operation,
        Operation::Prompt {
            message: "summarise".to_owned(),
            attachments: vec![(
                "everything".to_owned(),
                "test://static/resource/2".to_owned()
            )],
        }
    );
    insta::assert_snapshot!("attachment_sent", h.screen(80, 8));
}

#[test]
fn template_is_inserted_as_text() {
    let mut h = Harness::started();
    h.type_text("read @{id");
    h.key(KeyCode::Tab);
    let screen = h.screen(80, 8);
    assert!(
        screen.contains("› read test://static/resource/{id}"),
        "{screen}"
    );
    assert!(
        !screen.contains("[resource:"),
        "a template is no attachment"
    );
}

/// Reported: a card the model asked for but that never ran when the iteration budget ran out
/// (`finish_reason` `tool_calls`) is marked "redirected", and no notice says why the turn
/// ended.
#[test]
fn card_left_when_the_budget_ran_out() {
    let mut h = Harness::started();
    h.prompt("clean and rebuild");
    h.tool_call("call_1", "bash", BASH_ARGS);
    h.end_turn(FinishReason::ToolCalls);
    insta::assert_snapshot!("card_left_when_the_budget_ran_out", h.screen(80, 10));
}

#[test]
fn turn_ended_by_the_length_limit() {
    let mut h = Harness::started();
    h.prompt("write a long essay");
    h.stream(&["Once upon a time"]);
    h.end_turn(FinishReason::Length);
    let screen = h.screen(80, 10);
    assert!(screen.contains("• the turn ended: length"), "{screen}");
}

// ---- more behaviour: what keys do while something waits ----

/// Enter does not approve (a message being typed must never run a call); Esc denies.
#[test]
fn enter_and_esc_answer_an_approval() {
    let mut h = awaiting_bash();
    h.key(KeyCode::Enter);
    assert!(h.sent().is_empty(), "Enter approved");
    h.key(KeyCode::Esc);
    assert_eq!(
        h.sent(),
        [Operation::AnswerApproval(ApprovalDecision::Deny)]
    );
}

/// While an approval waits, PageUp still scrolls and ctrl+c stops the turn; letters are not
/// typed into the composer.
#[test]
fn keys_while_an_approval_waits() {
    let mut h = Harness::started();
    for i in 1..=10 {
        h.exchange(&format!("question {i}"), &format!("Answer {i}."));
    }
    h.prompt("clean and rebuild");
    h.tool_call("call_1", "bash", BASH_ARGS);
    h.approval("call_1", "bash", BASH_ARGS, RiskLevel::Destructive);
    h.screen(80, 24);
    h.key(KeyCode::PageUp);
    assert!(!h.app.transcript().follows(), "PageUp did not scroll");
    h.type_text("xz");
    assert!(h.sent().is_empty());
    let screen = h.screen(80, 24);
    assert!(
        screen.contains("Ask rho anything"),
        "something was typed: {screen}"
    );
    h.press(ctrl(KeyCode::Char('c')));
    assert_eq!(h.sent(), [Operation::Abort]);
}

/// While a form waits, ctrl+c stops the turn and PageUp scrolls; the footer says the card
/// asks; one Esc cancels the form (and so the turn).
#[test]
fn keys_while_a_form_waits() {
    let mut h = running("mcp__everything__startElicitation", "{}");
    h.session(SessionEvent::Question(support::form(7, "call_1")));
    let screen = h.screen(80, 24);
    assert!(
        screen.contains("a server asks: answer on the card"),
        "{screen}"
    );
    h.press(ctrl(KeyCode::Char('c')));
    assert_eq!(h.sent(), [Operation::Abort]);
    h.key(KeyCode::Esc);
    assert_eq!(
        h.sent(),
        [Operation::AnswerQuestion {
            question: 7,
            answer: QuestionAnswer::Cancel,
        }]
    );
}

/// rho's commands run while a turn runs; they are not sent to the model.
#[test]
fn commands_while_running_run() {
    let mut h = Harness::started();
    h.prompt("refactor the parser");
    h.submit("/help");
    assert!(h.sent().is_empty(), "/help asks the host nothing");
    insta::assert_snapshot!("commands_while_running", h.screen(80, 12));
    h.submit("/quit");
    assert!(h.app.should_quit());
}

/// PageUp on a conversation that fits the screen changes nothing.
#[test]
fn page_up_on_a_short_session() {
    let mut h = Harness::started();
    h.exchange("hello", "Hello!");
    h.screen(80, 24);
    h.key(KeyCode::PageUp);
    let screen = h.screen(80, 24);
    assert!(!screen.contains("scrolled"), "{screen}");
    assert!(h.app.transcript().follows());
}

/// A form with a required field left blank is not sent: the focus goes to that field and
/// the card says why.
#[test]
fn form_refuses_a_blank_required_field() {
    let mut h = running("mcp__everything__startElicitation", "{}");
    h.session(SessionEvent::Question(support::form(7, "call_1")));
    h.press(support::plain(KeyCode::Tab));
    h.press(support::plain(KeyCode::Tab));
    h.press(support::plain(KeyCode::Tab));
    h.key(KeyCode::Enter);
    assert!(h.sent().is_empty(), "sent with a blank required field");
    let screen = h.screen(80, 30);
    assert!(screen.contains("this field is required"), "{screen}");
    h.type_text("Ada");
    for _ in 0..4 {
        h.key(KeyCode::Enter);
    }
    let sent = h.sent();
    let [
        Operation::AnswerQuestion {
            answer: QuestionAnswer::Accept(answers),
            ..
        },
    ] = sent.as_slice()
    else {
        panic!("expected an accepted form: {sent:?}");
    };
    assert_eq!(answers.get("name").map(String::as_str), Some("Ada"));
}

/// After a prompt command the palette offers its arguments, then the server's suggestions for
/// the value being typed: one request at a time, answers cached, Tab takes one.
#[test]
fn prompt_argument_suggestions() {
    let mut h = Harness::started();
    h.type_text("/mcp:everything:args-prompt ");
    insta::assert_snapshot!("prompt_arguments", h.screen(80, 12));
    h.type_text("city=Pa");
    // The first keystroke of the value asked; the ones typed while it was in flight did not.
    let ops = h.operations();
    let [
        (
            id,
            Operation::Complete {
                argument, value, ..
            },
        ),
    ] = ops.as_slice()
    else {
        panic!("one request expected: {ops:?}");
    };
    assert_eq!((argument.as_str(), value.as_str()), ("city", ""));
    h.reply(*id, Response::Completions(vec!["Boston".to_owned()]));
    // That answer was for ``; `Pa` is asked now.
    let ops = h.operations();
    let [(id, Operation::Complete { value, .. })] = ops.as_slice() else {
        panic!("one request expected: {ops:?}");
    };
    assert_eq!(value, "Pa");
    h.reply(
        *id,
        Response::Completions(vec!["Paris".to_owned(), "Pasadena".to_owned()]),
    );
    assert!(h.sent().is_empty(), "an answer in the cache asks nothing");
    insta::assert_snapshot!("prompt_argument_values", h.screen(80, 12));
    h.key(KeyCode::Tab);
    let screen = h.screen(80, 12);
    assert!(
        screen.contains("› /mcp:everything:args-prompt city=Paris"),
        "{screen}"
    );
}

/// A picked resource is read at once: the chip says so, a message sent meanwhile waits for it,
/// and a failed read drops the chip with the reason and gives the message back.
#[test]
fn attachments_are_read_when_picked() {
    let mut h = Harness::started();
    h.type_text("summarise @res");
    h.key(KeyCode::Tab);
    let ops = h.operations();
    let [(id, Operation::ReadResource { server, uri })] = ops.as_slice() else {
        panic!("expected a read: {ops:?}");
    };
    assert_eq!(server, "everything");
    let (id, uri) = (*id, uri.clone());
    insta::assert_snapshot!("attachment_reading", h.screen(80, 10));
    h.key(KeyCode::Enter);
    assert!(h.sent().is_empty(), "sent before the attachment was read");
    h.reply(
        id,
        Response::ResourceRead {
            uri: uri.clone(),
            bytes: 12,
            truncated: false,
        },
    );
    let sent = h.sent();
    assert!(
        matches!(sent.as_slice(), [Operation::Prompt { message, attachments }]
            if message == "summarise" && attachments == &[("everything".to_owned(), uri.clone())]),
        "{sent:?}"
    );

    let mut h = Harness::started();
    h.type_text("summarise @res");
    h.key(KeyCode::Tab);
    let (id, _) = h.one_operation();
    h.key(KeyCode::Enter);
    h.fail(id, HostError::invalid_params("resource not found"));
    assert!(h.sent().is_empty(), "sent without its attachment");
    insta::assert_snapshot!("attachment_failed", h.screen(80, 10));
}

/// Answers the read the pick of a resource asked for.
fn read_ahead(h: &mut Harness) {
    let (id, operation) = h.one_operation();
    let Operation::ReadResource { uri, .. } = operation else {
        panic!("expected a read: {operation:?}");
    };
    h.reply(
        id,
        Response::ResourceRead {
            uri,
            bytes: 10,
            truncated: false,
        },
    );
}

/// The embedding program's question (a project plugin to trust), answered with y or n.
#[test]
fn a_question_from_the_program() {
    let mut h = Harness::started();
    h.app.ask_confirm(
        "The project plugin pp is not trusted yet. Trust it, so these run?",
        &[
            "from /srv/demo/.agents/plugins/pp".to_owned(),
            "MCP server pp/srv: runs /srv/demo/.agents/plugins/pp/bin/server --stdio".to_owned(),
            "WASM component stats: workspace read, env [], risk read".to_owned(),
        ],
    );
    insta::assert_snapshot!("confirm_trust", h.screen(80, 14));
    h.type_text("x");
    assert_eq!(h.app.take_confirm_answer(), None, "another key answered");
    h.key(KeyCode::Char('y'));
    assert_eq!(h.app.take_confirm_answer(), Some(true));
    h.app.ask_confirm("Trust qq?", &[]);
    h.key(KeyCode::Esc);
    assert_eq!(h.app.take_confirm_answer(), Some(false));
}

// ---- images on cards ----

/// A 2×2 PNG, as a server would send it.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8DAAMIM/4EAAB/uBfsL2WiLAAAAAElFTkSuQmCC";

/// A turn whose `get-tiny-image` call returned `data` as an image, on a terminal that speaks
/// `protocol`.
fn image_result(protocol: Option<Protocols>, data: &str) -> Harness {
    let mut h = running("everything__get-tiny-image", "{}");
    h.app
        .set_graphics(protocol.map(|p| Graphics::new(p, ratatui::layout::Size::new(10, 20))));
    h.session(SessionEvent::ToolResult(CallFinished {
        call_id: "call_1".into(),
        name: "everything__get-tiny-image".into(),
        is_error: false,
        outcome: CallOutcome::Success,
        output: "This is a tiny image:\n[image image/png, 75 B]".into(),
        image: Some(ToolImage {
            mime_type: "image/png".into(),
            data: data.into(),
        }),
    }));
    h
}

#[test]
fn card_image_is_drawn_with_the_terminals_protocol() {
    let mut h = image_result(Some(Protocols::Kitty), PNG);
    insta::assert_snapshot!("card_image_drawing", h.screen(80, 14));
    let jobs = h.app.take_image_jobs();
    assert_eq!(jobs.len(), 1, "one image to encode");
    for job in jobs {
        let (call_id, image) = job.run();
        h.app.image_done(&call_id, image);
    }
    let screen = h.screen(80, 14);
    assert!(
        screen.contains("\u{1b}_G"),
        "the kitty transmission is drawn:\n{screen}"
    );
    assert!(!screen.contains("drawing the image"), "{screen}");
    // Scrolled so the image is only partly in view: nothing of it is drawn.
    h.press(plain(KeyCode::PageUp));
    let scrolled = h.screen(80, 6);
    assert!(!scrolled.contains("\u{1b}_G"), "{scrolled}");
}

#[test]
fn card_image_that_cannot_be_decoded_says_why() {
    let mut h = image_result(Some(Protocols::Sixel), &PNG[..40]);
    for job in h.app.take_image_jobs() {
        let (call_id, image) = job.run();
        h.app.image_done(&call_id, image);
    }
    insta::assert_snapshot!("card_image_failed", h.screen(80, 14));
}

#[test]
fn card_image_on_a_terminal_without_graphics_keeps_the_descriptor() {
    let mut h = image_result(None, PNG);
    assert!(h.app.take_image_jobs().is_empty());
    insta::assert_snapshot!("card_image_descriptor", h.screen(80, 14));
}

#[test]
fn mcp_report_and_a_notice_say_a_servers_tools_changed_since_the_session_last_ran() {
    let changed = rho_core::ToolsetChanged {
        server: "everything".into(),
        previous: "0123456789abcdef".into(),
        current: "00112233aabbccdd".into(),
        live: false,
    };
    let mut extensions = support::three_servers();
    let first = extensions.servers.remove(0);
    let id = first.id.clone();
    extensions.servers.insert(
        0,
        first.with_digest_changed(rho_core::ToolsetChanged {
            server: id,
            ..changed.clone()
        }),
    );
    let mut h = Harness::new();
    h.reply_startup(
        extensions.clone(),
        support::tools(),
        support::prompts(),
        support::resources(),
    );
    h.session(SessionEvent::ToolsetChanged(changed));
    let screen = h.screen(120, 30);
    assert!(
        screen.contains(
            "MCP server everything offers other tools than when this session last ran (digest \
             0123456789abcdef → 00112233aabbccdd)"
        ),
        "{screen}"
    );
    h.submit("/mcp");
    h.reply_one(Response::Extensions(Box::new(extensions)));
    let screen = h.screen(120, 40);
    assert!(
        screen.contains(
            "tools changed since this session last ran (digest 0123456789abcdef → 00112233aabbccdd)"
        ),
        "{screen}"
    );
}
