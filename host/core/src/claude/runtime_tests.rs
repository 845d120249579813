//! The runtime's answers to Claude's control requests, against a scripted stand-in for
//! `claude` (a shell script writing the lines Claude Code 2.1 writes and logging rho's
//! answers): a tool approved for the session is not asked about again, a request Claude
//! withdraws stops the wait, and a request rho does not serve is answered with an error.

use std::collections::VecDeque;
use std::sync::Mutex;

use rho_component::RiskLevel;

use super::*;
use crate::provider::Role;
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

/// A runtime whose `claude` is `script` (in a temporary directory, kept while it lives), in
/// `mode`; the script appends what it reads from rho to the returned `answers` file.
fn stand_in(
    script: &str,
    mode: PermissionMode,
) -> (tempfile::TempDir, std::path::PathBuf, ClaudeRuntime) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let command = dir.path().join("claude");
    std::fs::write(&command, script).unwrap();
    std::fs::set_permissions(&command, std::fs::Permissions::from_mode(0o755)).unwrap();
    let answers = dir.path().join("answers.jsonl");
    let settings = ClaudeSettings {
        command,
        workspace: dir.path().to_path_buf(),
        permission_mode: mode,
        model: None,
        extra_roots: Vec::new(),
        hidden_env: Vec::new(),
    };
    let env = [
        ("PATH".into(), "/bin:/usr/bin".into()),
        ("ANSWERS".into(), answers.clone().into_os_string()),
    ];
    let claude = ClaudeRuntime::new(settings, env).unwrap();
    (dir, answers, claude)
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
    let (_dir, answers, mut claude) = stand_in(FAKE_CLAUDE, PermissionMode::Ask);
    let approver = Scripted(Mutex::new((
        VecDeque::from([ApprovalDecision::ApproveForSession]),
        Vec::new(),
    )));
    let sink = Collect::default();
    let turn = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        claude.prompt(
            "go",
            &SteeringQueue::default(),
            &sink,
            &approver,
            &CancelSignal::new(),
        ),
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
            SessionEvent::ApprovalRequest(ApprovalAsked {
                call_id,
                display_name,
                arguments,
                risk,
                ..
            }) => Some((
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

/// A stand-in that calls a tool, takes the steering rho sends while the call runs (echoing
/// it, as `--replay-user-messages` does, after the call's result), and answers.
const STEERED_MID_TURN: &str = r#"#!/bin/sh
read -r prompt
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m"}'
echo '{"type":"user","isReplay":true,"message":{"role":"user","content":"go"}}'
echo '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"x"}}]}}'
read -r steer; echo "$steer" >> "$ANSWERS"
echo '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"x says hi"}]}}'
echo '{"type":"user","isReplay":true,"message":{"role":"user","content":"also say banana"}}'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"hi, banana"}]}}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"hi, banana","session_id":"s1","usage":{"input_tokens":10,"output_tokens":2}}'
read -r more
"#;

/// A stand-in that answers before it takes the steering, then runs it as a turn of its own.
const STEERED_AFTER_ANSWER: &str = r#"#!/bin/sh
read -r prompt
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m"}'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"first"}]}}'
read -r steer; echo "$steer" >> "$ANSWERS"
echo '{"type":"result","subtype":"success","is_error":false,"result":"first","session_id":"s1","usage":{"input_tokens":10,"output_tokens":2}}'
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m"}'
echo '{"type":"user","isReplay":true,"message":{"role":"user","content":"also say banana"}}'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"banana"}]}}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"banana","session_id":"s1","usage":{"input_tokens":20,"output_tokens":3}}'
read -r more
"#;

/// A stand-in that answers and never takes the steering it was sent.
const STEERING_NEVER_TAKEN: &str = r#"#!/bin/sh
read -r prompt
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m"}'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"first"}]}}'
read -r steer; echo "$steer" >> "$ANSWERS"
echo '{"type":"result","subtype":"success","is_error":false,"result":"first","session_id":"s1"}'
read -r more
"#;

/// Runs `script` as `claude` in allow-all mode, pushing "also say banana" as steering a moment
/// after the prompt starts; the turn, the record, and the lines the script read after the
/// prompt.
async fn steered(script: &str) -> (TurnResult, Vec<ChatMessage>, Vec<serde_json::Value>) {
    let (_dir, answers, mut claude) = stand_in(script, PermissionMode::AllowAll);
    let approver = Scripted(Mutex::new((VecDeque::new(), Vec::new())));
    let sink = Collect::default();
    let steering = SteeringQueue::default();
    let later = steering.clone();
    let push = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        later.push("also say banana".to_owned());
    });
    let turn = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        claude.prompt("go", &steering, &sink, &approver, &CancelSignal::new()),
    )
    .await
    .unwrap()
    .unwrap();
    push.await.unwrap();
    let taken = steering.is_empty();
    if script != STEERING_NEVER_TAKEN {
        assert!(taken, "the steering was passed on");
    } else {
        assert!(
            !taken,
            "steering Claude never took waits for the next prompt"
        );
    }
    let record = claude.take_record().messages;
    claude.shutdown().await;
    let lines = std::fs::read_to_string(&answers)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (turn, record, lines)
}

#[tokio::test]
async fn steering_reaches_claude_mid_turn_and_is_recorded_where_claude_took_it() {
    let (turn, record, lines) = steered(STEERED_MID_TURN).await;
    assert_eq!(turn.reply, "hi, banana");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["type"], "user");
    assert_eq!(lines[0]["message"]["content"], "also say banana");
    let shape: Vec<(Role, &str)> = record
        .iter()
        .map(|m| (m.role, m.content.as_str()))
        .collect();
    assert_eq!(
        shape,
        [
            (Role::User, "go"),
            (Role::Assistant, ""),
            (Role::Tool, "x says hi"),
            (Role::User, "also say banana"),
            (Role::Assistant, "hi, banana"),
        ],
        "{record:#?}"
    );
}

#[tokio::test]
async fn an_answer_stands_when_claude_never_takes_the_steering_it_was_sent() {
    let started = std::time::Instant::now();
    let (turn, record, lines) = steered(STEERING_NEVER_TAKEN).await;
    assert_eq!(lines.len(), 1, "it was sent: {lines:?}");
    assert_eq!(turn.reply, "first");
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    let users: Vec<&str> = record
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(users, ["go"], "not recorded as taken: {record:#?}");
}

#[tokio::test]
async fn steering_claude_takes_after_its_answer_is_read_as_part_of_the_same_prompt() {
    let (turn, record, lines) = steered(STEERED_AFTER_ANSWER).await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(turn.reply, "banana");
    assert_eq!(turn.usage.input_tokens, 30, "both answers' spend: {turn:?}");
    let users: Vec<&str> = record
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(users, ["go", "also say banana"], "{record:#?}");
}
