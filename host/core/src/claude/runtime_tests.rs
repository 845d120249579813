//! The runtime's answers to Claude's control requests, against a scripted stand-in for
//! `claude` (a shell script writing the lines Claude Code 2.1 writes and logging rho's
//! answers): a tool approved for the session is not asked about again, a request Claude
//! withdraws stops the wait, and a request rho does not serve is answered with an error.

use std::collections::VecDeque;
use std::sync::Mutex;

use rho_component::RiskLevel;

use super::*;
use crate::session::{ApprovalFuture, SinkFuture};

/// Answers from a script; past its end, never answers.
struct Scripted(Mutex<(VecDeque<ApprovalDecision>, Vec<String>)>);

impl Approver for Scripted {
    fn decide<'a>(&'a self, tool: &'a str, _: &'a str, _: RiskLevel) -> ApprovalFuture<'a> {
        let mut state = self.0.lock().unwrap();
        state.1.push(tool.to_owned());
        match state.0.pop_front() {
            Some(decision) => Box::pin(async move { decision }),
            None => Box::pin(std::future::pending()),
        }
    }
}

#[derive(Default)]
struct Collect(Mutex<Vec<SessionEvent>>);

impl EventSink for Collect {
    fn send(&self, event: SessionEvent) -> SinkFuture<'_> {
        self.0.lock().unwrap().push(event);
        Box::pin(async {})
    }

    fn coalesce(&self, event: SessionEvent) {
        self.0.lock().unwrap().push(event);
    }
}

const FAKE_CLAUDE: &str = r#"#!/bin/sh
read -r prompt
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m"}'
echo '{"type":"control_request","request_id":"r0","request":{"subtype":"hook_callback"}}'
read -r answer; echo "$answer" >> "$ANSWERS"
echo '{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"a"},"tool_use_id":"t1"}}'
read -r answer; echo "$answer" >> "$ANSWERS"
echo '{"type":"control_request","request_id":"r2","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"b"},"tool_use_id":"t2"}}'
read -r answer; echo "$answer" >> "$ANSWERS"
echo '{"type":"control_request","request_id":"r3","request":{"subtype":"can_use_tool","tool_name":"Edit","input":{"file_path":"x"},"tool_use_id":"t3"}}'
sleep 0.2
echo '{"type":"control_cancel_request","request_id":"r3"}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s1"}'
read -r more
"#;

#[tokio::test]
async fn approvals_are_remembered_withdrawn_requests_dropped_and_others_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("claude");
    std::fs::write(&script, FAKE_CLAUDE).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let answers = dir.path().join("answers.jsonl");
    let settings = ClaudeSettings {
        command: script,
        workspace: dir.path().to_path_buf(),
        permission_mode: PermissionMode::Ask,
        model: None,
        extra_roots: Vec::new(),
        hidden_env: Vec::new(),
    };
    let env = [
        ("PATH".into(), "/bin:/usr/bin".into()),
        ("ANSWERS".into(), answers.clone().into_os_string()),
    ];
    let mut claude = ClaudeRuntime::new(settings, env).unwrap();
    let approver = Scripted(Mutex::new((
        VecDeque::from([ApprovalDecision::ApproveForSession]),
        Vec::new(),
    )));
    let sink = Collect::default();
    let turn = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        claude.prompt("go", &sink, &approver, &CancelSignal::new()),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(turn.reply, "ok");
    // Bash asked once (then remembered), Edit asked and withdrawn.
    assert_eq!(approver.0.lock().unwrap().1, ["Bash", "Edit"]);
    let answers: Vec<serde_json::Value> = std::fs::read_to_string(&answers)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(answers[0]["response"]["subtype"], "error");
    assert_eq!(answers[0]["response"]["request_id"], "r0");
    for (answer, (id, command)) in answers[1..].iter().zip([("r1", "a"), ("r2", "b")]) {
        assert_eq!(answer["response"]["request_id"], id);
        assert_eq!(answer["response"]["response"]["behavior"], "allow");
        assert_eq!(
            answer["response"]["response"]["updatedInput"]["command"],
            command
        );
    }
    claude.shutdown().await;
    let events = sink.0.lock().unwrap();
    let asked: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            SessionEvent::ApprovalRequest {
                call_id,
                display_name,
                arguments,
                risk,
                ..
            } => Some((
                call_id.as_str(),
                display_name.as_str(),
                arguments.as_str(),
                *risk,
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        asked,
        [
            (
                "t1",
                "claude › Bash",
                r#"{"command":"a"}"#,
                RiskLevel::Destructive
            ),
            (
                "t3",
                "claude › Edit",
                r#"{"file_path":"x"}"#,
                RiskLevel::Write
            ),
        ]
    );
}
