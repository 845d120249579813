//! The relay over lines as Claude Code 2.1 writes them (recorded against a scripted Messages
//! endpoint, trimmed to the keys rho reads).

use super::*;

fn relay_all(relay: &mut Relay, lines: &[&str]) -> Vec<Relayed> {
    lines
        .iter()
        .flat_map(|line| relay.line(line.as_bytes()).unwrap())
        .collect()
}

const SESSION: &str = "8d26adaf-1760-4c56-afbb-42d524097c16";

#[test]
fn a_turn_with_a_tool_call_becomes_the_usual_events() {
    let lines = [
        r#"{"type":"system","subtype":"init","cwd":"/p","session_id":"8d26adaf-1760-4c56-afbb-42d524097c16","tools":["Read"],"mcp_servers":[],"model":"claude-test"}"#,
        r#"{"type":"system","subtype":"status","status":"requesting","session_id":"8d26adaf-1760-4c56-afbb-42d524097c16"}"#,
        r#"{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_1"}},"session_id":"8d26adaf-1760-4c56-afbb-42d524097c16","parent_tool_use_id":null}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}},"parent_tool_use_id":null}"#,
        r#"{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"Read","input":{"file_path":"/p/note.txt"}}]},"parent_tool_use_id":null}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":"1\tdone\n"}]},"parent_tool_use_id":null}"#,
        r#"{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_2"}},"parent_tool_use_id":null}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The fi"}},"parent_tool_use_id":null}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"le says: done."}},"parent_tool_use_id":null}"#,
        r#"{"type":"assistant","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"The file says: done."}]},"parent_tool_use_id":null}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"result":"The file says: done.","stop_reason":"end_turn","num_turns":2,"total_cost_usd":0.5,"usage":{"input_tokens":24,"output_tokens":14},"session_id":"8d26adaf-1760-4c56-afbb-42d524097c16"}"#,
    ];
    let mut relay = Relay::default();
    let relayed = relay_all(&mut relay, &lines);
    assert_eq!(relay.session_id.as_deref(), Some(SESSION));
    assert_eq!(relay.model.as_deref(), Some("claude-test"));
    assert_eq!(relay.iterations, 2);
    let thinking = Relayed::Event(SessionEvent::StateChange(LoopState::Thinking));
    let mut expected = vec![
        thinking.clone(),
        Relayed::Event(SessionEvent::ToolCall(CallStarted {
            call_id: "toolu_01".into(),
            name: "Read".into(),
            display_name: "claude › Read".into(),
            arguments: r#"{"file_path":"/p/note.txt"}"#.into(),
        })),
        Relayed::Event(SessionEvent::StateChange(LoopState::ExecutingTool)),
        Relayed::Event(SessionEvent::ToolResult(CallFinished {
            call_id: "toolu_01".into(),
            name: "Read".into(),
            is_error: false,
            outcome: CallOutcome::Success,
            output: "1\tdone\n".into(),
            image: None,
        })),
        thinking,
        Relayed::Delta(SessionEvent::MessageDelta("The fi".into())),
        Relayed::Delta(SessionEvent::MessageDelta("le says: done.".into())),
    ];
    expected.push(Relayed::End(Ending::Answered {
        reply: "The file says: done.".into(),
        usage: Usage {
            input_tokens: 24,
            output_tokens: 14,
            total_tokens: 38,
            total_cost: 0.5,
            request_count: 2,
        },
        finish_reason: FinishReason::Stop,
    }));
    assert_eq!(relayed, expected);
    assert_eq!(relay.tool_calls.len(), 1);
    assert_eq!(relay.tool_calls[0].outcome, CallOutcome::Success);
}

#[test]
fn text_that_was_not_streamed_arrives_whole_and_errors_are_results() {
    let mut relay = Relay::default();
    let relayed = relay_all(
        &mut relay,
        &[
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"whole"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"rm x"}}]},"parent_tool_use_id":null}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"Permission to use Bash has been denied"}]}]},"parent_tool_use_id":null}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Read","input":{}}]},"parent_tool_use_id":"t0"}"#,
        ],
    );
    assert_eq!(
        relayed[0],
        Relayed::Delta(SessionEvent::MessageDelta("whole".into()))
    );
    let Relayed::Event(SessionEvent::ToolResult(CallFinished {
        is_error, outcome, ..
    })) = &relayed[3]
    else {
        panic!("{relayed:?}")
    };
    assert!(is_error);
    assert_eq!(
        *outcome,
        CallOutcome::Error {
            message: "Permission to use Bash has been denied".into()
        }
    );
    // A subagent's own call is not relayed.
    assert_eq!(relayed.len(), 4, "{relayed:?}");
}

#[test]
fn a_failed_result_ends_the_turn_with_claudes_words() {
    let mut relay = Relay::default();
    let relayed = relay_all(
        &mut relay,
        &[
            r#"{"type":"result","subtype":"error_during_execution","is_error":true,"result":"","errors":["API Error: 500"]}"#,
        ],
    );
    assert_eq!(
        relayed,
        [Relayed::End(Ending::Failed("API Error: 500".into()))]
    );
}

#[test]
fn a_line_that_is_not_a_typed_json_object_is_an_error_naming_the_runtime() {
    let mut relay = Relay::default();
    for line in ["not json", "{\"no\":\"type\"}", "[1]"] {
        let error = relay.line(line.as_bytes()).unwrap_err();
        let text = error.to_string();
        assert!(text.starts_with("claude runtime: "), "{text}");
        assert!(!text.contains("not json\""), "{text}");
    }
    // Kinds rho does not use are skipped.
    assert!(
        relay
            .line(br#"{"type":"rate_limit_event"}"#)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn permission_prompts_are_relayed_and_a_denied_calls_result_is_a_denial() {
    let mut relay = Relay::default();
    let relayed = relay_all(
        &mut relay,
        &[
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"touch x"}}]},"parent_tool_use_id":null}"#,
            r#"{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"touch x"},"tool_use_id":"toolu_1"}}"#,
            r#"{"type":"control_cancel_request","request_id":"r0"}"#,
        ],
    );
    assert!(
        matches!(&relayed[2], Relayed::Control(control::Control::CanUseTool(ask)) if ask.request_id == "r1"),
        "{relayed:?}"
    );
    assert_eq!(
        relayed[3],
        Relayed::Control(control::Control::Cancel {
            request_id: "r0".into()
        })
    );
    relay.denied("toolu_1");
    let relayed = relay_all(
        &mut relay,
        &[
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"the user denied this tool call","is_error":true,"tool_use_id":"toolu_1"}]},"parent_tool_use_id":null}"#,
        ],
    );
    assert_eq!(
        relayed,
        [Relayed::Event(SessionEvent::ToolDenied(CallDenied {
            call_id: "toolu_1".into(),
            name: "Bash".into(),
            display_name: "claude › Bash".into(),
        }))]
    );
    assert_eq!(relay.tool_calls[0].outcome, CallOutcome::Denied);
}
