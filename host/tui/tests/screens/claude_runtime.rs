//! What the TUI shows of a Claude CLI runtime session: Claude's tool calls on cards named as
//! Claude's (`claude › Read`), and `/mcp` listing rho's servers as not loaded.

use rho_core::host::Response;
use rho_core::session::{ApprovalAsked, CallDenied, CallStarted, SessionEvent};

use super::support::{self, Harness};

#[test]
fn claudes_tool_calls_are_cards_named_as_claudes_tools() {
    let mut h = Harness::started();
    h.prompt("what does note.txt say?");
    h.session(SessionEvent::ToolCall(CallStarted {
        call_id: "toolu_01".into(),
        name: "Read".into(),
        display_name: "claude › Read".into(),
        arguments: r#"{"file_path":"/srv/demo/note.txt"}"#.into(),
    }));
    h.executing();
    h.tool_result("toolu_01", "Read", false, "1\tdone\n");
    h.stream(&["The note says: ", "done."]);
    h.end_turn(rho_core::provider::FinishReason::Stop);
    let screen = h.screen(80, 20);
    insta::assert_snapshot!("claude_runtime_tool_card", screen);
    assert!(screen.contains("claude › Read"), "{screen}");
}

/// A Claude subagent's call has no card (its own messages are not relayed): its permission
/// prompt gets a card of its own, named as Claude's tool; approved, it ends as approved (its
/// result went to the subagent), and a denial lands on it.
#[test]
fn a_subagents_permission_prompt_gets_a_card_of_its_own() {
    let ask = |h: &mut Harness, call_id: &str| {
        h.session(SessionEvent::ApprovalRequest(ApprovalAsked {
            call_id: call_id.into(),
            tool: "Bash".into(),
            display_name: "claude › Bash".into(),
            arguments: r#"{"command":"rm -r build"}"#.into(),
            risk: rho_component::RiskLevel::Destructive,
        }));
    };
    let mut h = Harness::started();
    h.prompt("ask a subagent to clean up");
    ask(&mut h, "toolu_sub_7");
    let asked = h.screen(80, 20);
    insta::assert_snapshot!("claude_runtime_subagent_approval", asked);
    assert!(asked.contains("claude › Bash"), "{asked}");
    h.key(crossterm::event::KeyCode::Char('y'));
    ask(&mut h, "toolu_sub_8");
    h.session(SessionEvent::ToolDenied(CallDenied {
        call_id: "toolu_sub_8".into(),
        name: "Bash".into(),
        display_name: "claude › Bash".into(),
    }));
    h.end_turn(rho_core::provider::FinishReason::Stop);
    let ended = h.screen(80, 24);
    insta::assert_snapshot!("claude_runtime_subagent_calls_ended", ended);
    assert!(
        ended.contains("approved; its result went to Claude's subagent"),
        "{ended}"
    );
    assert!(ended.contains("denied"), "{ended}");
}

#[test]
fn mcp_lists_configured_servers_as_not_loaded_under_the_claude_runtime() {
    let mut extensions = support::extensions();
    extensions.servers = vec![support::server(
        "echoer",
        rho_component::Transport::Stdio,
        rho_core::ServerStatus::NotLoaded(rho_core::NotLoadedReason::ClaudeRuntime),
        &[],
    )];
    let mut h = Harness::new();
    h.reply_startup(extensions.clone(), Vec::new(), Vec::new(), Vec::new());
    h.submit("/mcp");
    h.reply_one(Response::Extensions(Box::new(extensions)));
    let screen = h.screen(90, 24);
    insta::assert_snapshot!("claude_runtime_mcp_report", screen);
    assert!(
        screen.contains("echoer  stdio  not loaded (Claude CLI runtime)"),
        "{screen}"
    );
}
