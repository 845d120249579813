//! What the TUI shows of a Claude CLI runtime session: Claude's tool calls on cards named as
//! Claude's (`claude › Read`), and `/mcp` listing rho's servers as not loaded.

use rho_core::host::Response;
use rho_core::session::SessionEvent;

use super::support::{self, Harness};

#[test]
fn claudes_tool_calls_are_cards_named_as_claudes_tools() {
    let mut h = Harness::started();
    h.prompt("what does note.txt say?");
    h.session(SessionEvent::ToolCall {
        call_id: "toolu_01".into(),
        name: "Read".into(),
        display_name: "claude › Read".into(),
        arguments: r#"{"file_path":"/srv/demo/note.txt"}"#.into(),
    });
    h.executing();
    h.tool_result("toolu_01", "Read", false, "1\tdone\n");
    h.stream(&["The note says: ", "done."]);
    h.end_turn(rho_core::provider::FinishReason::Stop);
    let screen = h.screen(80, 20);
    insta::assert_snapshot!("claude_runtime_tool_card", screen);
    assert!(screen.contains("claude › Read"), "{screen}");
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
