//! The session host driven in-process with a scripted provider: aborts raced against
//! completions yield exactly one reply per operation; steering, approvals and aborts are
//! handled while a turn runs and everything else waits for it; a second prompt queues; a slow
//! reader slows the host (deltas merge, nothing else is lost); closing the input denies what
//! waits for a person and lets received work finish.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rho_component::CancelSignal;
use rho_core::host::{
    HostEvent, HostHandle, HostOptions, Operation, Response, SessionHost, SessionStart,
};
use rho_core::provider::{
    ChatRequest, ChatResponse, FinishReason, Provider, ProviderError, ProviderFuture, StreamEvent,
    ToolCall, Usage,
};
use rho_core::session::{ApprovalDecision, CallDenied, CallFinished, SessionEvent};
use rho_core::{ConfigSource, MountOptions, PathsEnv, ProviderFlags, Registry, RhoPaths};
use tokio::sync::mpsc;

/// One scripted model answer: text chunks with a pause before each, then tool calls.
#[derive(Clone, Default)]
struct Turn {
    chunks: Vec<String>,
    pause: Duration,
    calls: Vec<ToolCall>,
}

fn text(words: &str, pause_ms: u64) -> Turn {
    Turn {
        chunks: words.split_inclusive(' ').map(str::to_owned).collect(),
        pause: Duration::from_millis(pause_ms),
        calls: Vec::new(),
    }
}

/// A provider that plays its turns in order (and answers "done" once they run out).
#[derive(Default)]
struct Scripted {
    turns: Mutex<VecDeque<Turn>>,
    requests: Mutex<usize>,
}

impl Scripted {
    fn new(turns: impl IntoIterator<Item = Turn>) -> Arc<Self> {
        Arc::new(Self {
            turns: Mutex::new(turns.into_iter().collect()),
            requests: Mutex::new(0),
        })
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn complete<'a>(
        &'a self,
        _: &ChatRequest,
        on_event: &'a (dyn Fn(StreamEvent) + Send + Sync),
        cancel: &'a CancelSignal,
    ) -> ProviderFuture<'a, ChatResponse> {
        Box::pin(async move {
            *self.requests.lock().unwrap() += 1;
            let turn = self
                .turns
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| text("done", 0));
            let mut content = String::new();
            for chunk in turn.chunks {
                if turn.pause.is_zero() {
                    tokio::task::yield_now().await;
                } else {
                    tokio::select! {
                        () = tokio::time::sleep(turn.pause) => {}
                        () = cancel.cancelled() => return Err(ProviderError::Cancelled),
                    }
                }
                if cancel.is_cancelled() {
                    return Err(ProviderError::Cancelled);
                }
                content.push_str(&chunk);
                on_event(StreamEvent::Text(chunk));
            }
            Ok(ChatResponse {
                content,
                reasoning: String::new(),
                finish_reason: if turn.calls.is_empty() {
                    FinishReason::Stop
                } else {
                    FinishReason::ToolCalls
                },
                tool_calls: turn.calls,
                usage: Usage {
                    input_tokens: 10,
                    output_tokens: 5,
                    total_tokens: 15,
                    total_cost: 0.0,
                    request_count: 1,
                },
            })
        })
    }

    fn list_models(&self) -> ProviderFuture<'_, Vec<String>> {
        Box::pin(async { Ok(vec!["m".into()]) })
    }
}

/// A running host and the front-end's ends.
struct Front {
    handle: Option<HostHandle>,
    events: mpsc::Receiver<HostEvent>,
    run: tokio::task::JoinHandle<Option<std::path::PathBuf>>,
    _dir: tempfile::TempDir,
}

async fn start(provider: Arc<Scripted>) -> Front {
    start_saving(provider, false).await
}

/// A host whose session is saved to a file unless `ephemeral`.
async fn start_saving(provider: Arc<Scripted>, saved: bool) -> Front {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let env = PathsEnv {
        home: Some(dir.path().join("home").into()),
        rho_home: Some(dir.path().join("rho").into()),
    };
    let paths = RhoPaths::resolve(&env, &project).unwrap();
    let config = ConfigSource::Default(dir.path().join("rho/config.toml"));
    let (host, handle, events) = SessionHost::start(HostOptions {
        registry: Registry::load(paths, &config),
        flags: ProviderFlags {
            model: Some("m".into()),
            ..ProviderFlags::default()
        },
        ephemeral: !saved,
        start: SessionStart::New,
        mount: MountOptions::default(),
        ambient: Arc::new(|_| None),
        accepts_questions: false,
        fixed_provider: Some(provider),
        runtime: None,
    })
    .await
    .unwrap();
    let run = tokio::spawn(host.run(CancelSignal::new()));
    Front {
        handle: Some(handle),
        events,
        run,
        _dir: dir,
    }
}

impl Front {
    async fn send(&self, id: u64, operation: Operation) {
        self.handle
            .as_ref()
            .unwrap()
            .submit(id, operation)
            .await
            .unwrap();
    }

    async fn next(&mut self) -> HostEvent {
        tokio::time::timeout(Duration::from_secs(10), self.events.recv())
            .await
            .expect("the host went quiet")
            .expect("the host stopped")
    }

    /// Events until the reply to `id`, and the reply.
    async fn reply(&mut self, id: u64) -> (Vec<SessionEvent>, Result<Response, String>) {
        let mut seen = Vec::new();
        loop {
            match self.next().await {
                HostEvent::Session(event) => seen.push(event),
                HostEvent::Reply { id: got, result } if got == id => {
                    return (seen, result.map_err(|e| e.message));
                }
                HostEvent::Reply { id: other, .. } => panic!("reply {other} before {id}"),
            }
        }
    }

    async fn until(&mut self, wanted: impl Fn(&SessionEvent) -> bool) {
        loop {
            if let HostEvent::Session(event) = self.next().await
                && wanted(&event)
            {
                return;
            }
        }
    }

    /// Closes the input and waits for the host to finish.
    async fn close(self) -> Vec<HostEvent> {
        self.finish().await.0
    }

    /// Closes the input and waits for the host to finish: the events after the input closed,
    /// and the session file the host says the conversation is saved in.
    async fn finish(mut self) -> (Vec<HostEvent>, Option<std::path::PathBuf>) {
        drop(self.handle.take());
        let mut rest = Vec::new();
        while let Some(event) = self.events.recv().await {
            rest.push(event);
        }
        let saved = tokio::time::timeout(Duration::from_secs(5), self.run)
            .await
            .expect("the host stops after its input closes")
            .unwrap();
        (rest, saved)
    }
}

fn prompt(message: &str) -> Operation {
    Operation::Prompt {
        message: message.into(),
        attachments: Vec::new(),
    }
}

fn finish_reason(result: &Result<Response, String>) -> &FinishReason {
    match result {
        Ok(Response::Prompt(reply)) => &reply.finish_reason,
        other => panic!("not a prompt reply: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborts_raced_against_completions_get_exactly_one_reply_each() {
    const ROUNDS: u64 = 150;
    let turns = (0..ROUNDS).map(|i| text("one two three four", i % 3));
    let mut front = start(Scripted::new(turns)).await;
    let mut replies: HashMap<u64, Vec<Result<Response, String>>> = HashMap::new();
    let mut aborted = 0;
    for round in 0..ROUNDS {
        let (prompt_id, abort_id) = (round * 2, round * 2 + 1);
        front.send(prompt_id, prompt("go")).await;
        // Sweep the abort across the whole prompt: before it starts, mid-stream, after.
        tokio::time::sleep(Duration::from_micros((round * 97) % 9000)).await;
        front.send(abort_id, Operation::Abort).await;
        while !(replies.contains_key(&prompt_id) && replies.contains_key(&abort_id)) {
            if let HostEvent::Reply { id, result } = front.next().await {
                replies
                    .entry(id)
                    .or_default()
                    .push(result.map_err(|e| e.message));
            }
        }
        let finish = finish_reason(&replies[&prompt_id][0]).clone();
        assert!(
            finish == FinishReason::Stop || finish == FinishReason::Aborted,
            "round {round}: {finish}"
        );
        let abort = &replies[&abort_id][0];
        if finish == FinishReason::Aborted {
            aborted += 1;
            assert!(matches!(abort, Ok(Response::Done)), "{abort:?}");
        } else {
            // Too late to matter, or nothing left to abort.
            assert!(
                matches!(abort, Ok(Response::Done))
                    || abort.as_ref().is_err_and(|e| e == "nothing is running"),
                "{abort:?}"
            );
        }
    }
    front.send(u64::MAX, Operation::GetState).await;
    let (_, state) = front.reply(u64::MAX).await;
    assert!(matches!(state, Ok(Response::State(_))), "{state:?}");
    let rest = front.close().await;
    for event in rest {
        if let HostEvent::Reply { id, result } = event {
            replies
                .entry(id)
                .or_default()
                .push(result.map_err(|e| e.message));
        }
    }
    for (id, list) in &replies {
        assert_eq!(
            list.len(),
            1,
            "operation {id} answered {} times",
            list.len()
        );
    }
    assert_eq!(replies.len() as u64, ROUNDS * 2);
    assert!(
        aborted > 0,
        "no round was aborted: the sweep missed the prompts"
    );
    assert!(
        aborted < ROUNDS,
        "every round was aborted: the sweep missed completions"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_names_the_saved_session_only_once_something_was_saved() {
    // Nothing said: no file, nothing to resume.
    let front = start_saving(Scripted::new(Vec::new()), true).await;
    assert_eq!(front.finish().await.1, None);
    // A turn: the file is on disk, and the host names it.
    let mut front = start_saving(Scripted::new([text("hello", 0)]), true).await;
    front.send(1, prompt("hi")).await;
    let (_, result) = front.reply(1).await;
    result.unwrap();
    // (The host names only a file it found on disk; the sandbox is gone once `finish` returns.)
    let saved = front.finish().await.1.expect("the session file");
    assert!(
        saved.extension().is_some_and(|e| e == "jsonl"),
        "{}",
        saved.display()
    );
    // Ephemeral: never a file.
    let mut front = start_saving(Scripted::new([text("hello", 0)]), false).await;
    front.send(1, prompt("hi")).await;
    front.reply(1).await.1.unwrap();
    assert_eq!(front.finish().await.1, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_is_handled_mid_turn_and_other_operations_wait_for_it() {
    let mut front = start(Scripted::new([text("a b c d e f g h", 30)])).await;
    front.send(1, prompt("go")).await;
    front
        .until(|e| matches!(e, SessionEvent::MessageDelta(_)))
        .await;
    front.send(2, Operation::Steer("later".into())).await;
    front.send(3, Operation::GetMessages).await;
    let mut order = Vec::new();
    while order.len() < 3 {
        if let HostEvent::Reply { id, result } = front.next().await {
            order.push((id, result.unwrap()));
        }
    }
    let ids: Vec<u64> = order.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        ids,
        [2, 1, 3],
        "steering first, the prompt, then what queued"
    );
    let Response::Messages(messages) = &order[2].1 else {
        panic!("{:?}", order[2]);
    };
    // The steering message had no seam in this turn (no tool batch): it waits in the queue
    // and opens the next one.
    assert_eq!(messages.len(), 2, "{messages:?}");
    front.send(4, prompt("next")).await;
    let (_, next) = front.reply(4).await;
    assert_eq!(finish_reason(&next), &FinishReason::Stop);
    front.send(5, Operation::GetMessages).await;
    let (_, messages) = front.reply(5).await;
    let Ok(Response::Messages(messages)) = messages else {
        panic!("{messages:?}");
    };
    let texts: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts[2..4], ["later", "next"], "{texts:?}");
    front.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_prompt_queues_behind_the_first() {
    let mut front = start(Scripted::new([
        text("first answer", 20),
        text("second answer", 0),
    ]))
    .await;
    front.send(1, prompt("one")).await;
    front
        .until(|e| matches!(e, SessionEvent::MessageDelta(_)))
        .await;
    front.send(2, prompt("two")).await;
    let (_, first) = front.reply(1).await;
    let (_, second) = front.reply(2).await;
    match (first, second) {
        (Ok(Response::Prompt(a)), Ok(Response::Prompt(b))) => {
            assert_eq!(a.reply, "first answer");
            assert_eq!(b.reply, "second answer");
        }
        other => panic!("{other:?}"),
    }
    front.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_slows_the_host_and_loses_nothing_but_delta_boundaries() {
    // Far more chunks than the event channel holds, streamed as fast as possible.
    let words: String = (0..2000).map(|i| format!("w{i} ")).collect();
    let mut front = start(Scripted::new([text(words.trim_end(), 0)])).await;
    front.send(1, prompt("go")).await;
    // Read nothing for a while: the host must wait, not queue without bound.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (events, reply) = front.reply(1).await;
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            SessionEvent::MessageDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        streamed,
        words.trim_end(),
        "every byte of text arrives, in order"
    );
    let deltas = events
        .iter()
        .filter(|e| matches!(e, SessionEvent::MessageDelta(_)))
        .count();
    assert!(
        deltas < 2000,
        "chunks merged while the reader was behind ({deltas})"
    );
    let kinds: Vec<&str> = events
        .iter()
        .filter(|e| !matches!(e, SessionEvent::MessageDelta(_)))
        .map(|e| match e {
            SessionEvent::AgentStart => "start",
            SessionEvent::StateChange(_) => "state",
            SessionEvent::Usage(_) => "usage",
            SessionEvent::AgentEnd(_) => "end",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["start", "state", "usage", "state", "end"]);
    assert_eq!(finish_reason(&reply), &FinishReason::Stop);
    front.close().await;
}

/// A session whose model asks to run `command` (which needs approval) and then answers
/// `after`, prompted and waiting for the approval.
async fn awaiting_approval(command: &str, after: &str) -> Front {
    awaiting_approval_in([
        Turn {
            calls: vec![run_command("c1", command)],
            ..Turn::default()
        },
        text(after, 0),
    ])
    .await
}

/// A `run_command` call of `command`.
fn run_command(id: &str, command: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "run_command".into(),
        arguments: serde_json::json!({ "command": command }).to_string(),
    }
}

/// A session scripted with `turns`, prompted and waiting for its first approval.
async fn awaiting_approval_in(turns: impl IntoIterator<Item = Turn>) -> Front {
    let mut front = start(Scripted::new(turns)).await;
    front.send(1, prompt("run it")).await;
    front
        .until(|e| matches!(e, SessionEvent::ApprovalRequest(_)))
        .await;
    front
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_input_denies_a_pending_approval_and_finishes_the_turn() {
    let front = awaiting_approval("true", "after").await;
    let rest = front.close().await;
    let denied = rest
        .iter()
        .any(|e| matches!(e, HostEvent::Session(SessionEvent::ToolDenied(CallDenied { name, .. })) if name == "run_command"));
    assert!(denied, "the call was denied once nobody could answer");
    let reply = rest.iter().find_map(|e| match e {
        HostEvent::Reply { id: 1, result } => Some(result.clone()),
        _ => None,
    });
    match reply {
        Some(Ok(Response::Prompt(reply))) => assert_eq!(reply.reply, "after"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_answered_mid_turn_runs_the_call() {
    let mut front = awaiting_approval("echo approved-run", "ok").await;
    front
        .send(2, Operation::AnswerApproval(ApprovalDecision::Approve))
        .await;
    let (events, _) = front.reply(2).await;
    let (more, reply) = front.reply(1).await;
    let output = events.iter().chain(&more).find_map(|e| match e {
        SessionEvent::ToolResult(CallFinished { output, .. }) => Some(output.clone()),
        _ => None,
    });
    assert!(output.unwrap_or_default().contains("approved-run"));
    assert_eq!(finish_reason(&reply), &FinishReason::Stop);
    // No approval is pending any more.
    front
        .send(3, Operation::AnswerApproval(ApprovalDecision::Approve))
        .await;
    let (_, late) = front.reply(3).await;
    assert_eq!(late.unwrap_err(), "no approval is pending");
    front.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_for_the_session_stops_asking_for_that_tool() {
    let call = |id: &str, word: &str| run_command(id, &format!("echo {word}"));
    let mut front = awaiting_approval_in([
        Turn {
            calls: vec![call("c1", "first-run")],
            ..Turn::default()
        },
        text("ok", 0),
        Turn {
            calls: vec![call("c2", "second-run")],
            ..Turn::default()
        },
        text("ok again", 0),
    ])
    .await;
    front
        .send(
            2,
            Operation::AnswerApproval(ApprovalDecision::ApproveForSession),
        )
        .await;
    let (_, answered) = front.reply(2).await;
    answered.unwrap();
    let (_, reply) = front.reply(1).await;
    assert_eq!(finish_reason(&reply), &FinishReason::Stop);
    // The second call of the same tool runs without a question.
    front.send(3, prompt("again")).await;
    let (events, reply) = front.reply(3).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, SessionEvent::ApprovalRequest(_))),
        "asked again: {events:?}"
    );
    let output = events.iter().find_map(|e| match e {
        SessionEvent::ToolResult(CallFinished { output, .. }) => Some(output.clone()),
        _ => None,
    });
    assert!(output.unwrap_or_default().contains("second-run"));
    assert_eq!(finish_reason(&reply), &FinishReason::Stop);
    front.close().await;
}
