//! The Claude CLI runtime: a session whose prompts the Claude Code CLI answers instead of
//! rho's own agent loop (`[agent] runtime = "claude"`, `--runtime claude`).
//!
//! rho starts one long-lived `claude -p` in stream-json mode on the session's first prompt
//! (`flags.rs`: no MCP server from anywhere, rho's permission mode as Claude's flags), writes
//! each prompt as one JSON line, and relays what Claude streams back as the
//! [`SessionEvent`]s every front-end already shows (`stream.rs`). An abort kills the process
//! group; the next prompt starts `claude` again with `--resume` on the same Claude session.
//! The process group is also killed when the runtime is dropped (`process.rs`), so no way rho
//! ends leaves `claude` running. rho's own tools, skills and MCP servers are not offered to
//! Claude (`docs/mcp.md`, "Runtime differences").

mod between_prompts;
mod control;
mod flags;
mod process;
mod stream;

use std::collections::{HashSet, VecDeque};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Instant;

use rho_component::{CancelSignal, Gate, PermissionMode};

use crate::provider::{ChatMessage, FinishReason, Usage};
use crate::session::{
    ApprovalAsked, ApprovalDecision, Approver, EventSink, LoopState, Notice, SessionEvent,
    SteeringQueue, TurnResult, UsageReport,
};

pub use process::MAX_LINE_BYTES as MAX_CLAUDE_LINE_BYTES;
pub use stream::{CLAUDE_TOOL_OWNER, display_name as claude_tool_display_name};

use control::{Answer, Control, PermissionAsk};
use flags::Launch;
use process::ClaudeProcess;
use stream::{Ending, Relay, Relayed};

/// How rho tells a user to install the Claude Code CLI.
pub const CLAUDE_INSTALL_HINT: &str = "install it with `npm install -g @anthropic-ai/claude-code`, \
     or set `[agent] claude_command` in config.toml to its path";

/// Environment variables that hold Claude's credentials: their values are hidden in any
/// error rho shows (besides the session's own secret variables).
const CLAUDE_SECRET_VARIABLES: [&str; 3] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
];

/// Why the Claude runtime could not run a prompt. Every message starts with what it is about
/// (`claude runtime: …`, or the command that was not found).
#[derive(Debug, thiserror::Error)]
pub enum ClaudeError {
    /// The Claude Code CLI is not there.
    #[error(
        "the claude runtime needs the Claude Code CLI, but `{command}` was {looked}: {hint}",
        hint = CLAUDE_INSTALL_HINT
    )]
    NotInstalled {
        /// The command rho looked for.
        command: String,
        /// Where it looked (`not found in PATH`, `no executable file at that path`).
        looked: String,
    },
    /// Starting the process failed.
    #[error("claude runtime: cannot start {command}: {message}")]
    Spawn {
        /// The program.
        command: String,
        /// The system's reason.
        message: String,
    },
    /// Writing to or reading from the process failed.
    #[error("claude runtime: {doing}: {message}")]
    Pipe {
        /// What rho was doing.
        doing: &'static str,
        /// The system's reason.
        message: String,
    },
    /// Claude wrote a line longer than rho reads.
    #[error("claude runtime: Claude wrote an output line longer than {limit} bytes")]
    LineTooLong {
        /// The cap, in bytes.
        limit: usize,
    },
    /// Claude wrote a line rho cannot read.
    #[error("claude runtime: unreadable output line ({reason})")]
    Malformed {
        /// What is wrong with it.
        reason: String,
    },
    /// The process ended before the turn did.
    #[error(
        "claude runtime: claude exited before the turn ended ({status}){}",
        stderr_part(stderr)
    )]
    Exited {
        /// How it ended.
        status: String,
        /// The end of its stderr (secret values hidden).
        stderr: String,
    },
    /// What only rho's own agent loop does.
    #[error("claude runtime: {what} is not available with the claude runtime")]
    Unsupported {
        /// What was asked for.
        what: &'static str,
    },
    /// Claude said the turn failed.
    #[error("claude runtime: the turn failed: {message}")]
    Turn {
        /// Claude's words (secret values hidden).
        message: String,
    },
    /// Claude refused a request of rho's (a model switch), or did not answer it in time.
    #[error("claude runtime: {doing}: {message}")]
    Refused {
        /// What rho asked for.
        doing: &'static str,
        /// Claude's words, or why there were none.
        message: String,
    },
    /// A model name rho does not pass on.
    #[error(
        "claude runtime: {model:?} is not a model name (1 to {max} printable characters, no spaces)",
        max = between_prompts::MAX_MODEL_NAME
    )]
    BadModel {
        /// The name given (cut).
        model: String,
    },
}

/// What the turn still has to do besides reading lines.
#[derive(Default)]
struct Turn {
    /// Permission prompts not answered yet, in the order they came.
    asks: VecDeque<PermissionAsk>,
    /// How the turn ended, once Claude said so.
    ending: Option<Result<(String, Usage, FinishReason), ClaudeError>>,
    /// Requests Claude withdrew while rho waited for a person.
    withdrawn: HashSet<String>,
}

impl Turn {
    /// Delivers one relayed item: events to `sink`, prompts queued, withdrawn prompts
    /// forgotten, requests rho does not serve refused, the ending kept.
    async fn take(
        &mut self,
        relayed: Relayed,
        process: &mut ClaudeProcess,
        sink: &dyn EventSink,
        iterations: u32,
    ) -> Result<(), ClaudeError> {
        match relayed {
            Relayed::Delta(event) => sink.coalesce(event),
            Relayed::Event(event) => sink.send(event).await,
            Relayed::Control(Control::CanUseTool(ask)) => self.asks.push_back(ask),
            Relayed::Control(Control::Cancel { request_id }) => {
                self.asks.retain(|ask| ask.request_id != request_id);
                self.withdrawn.insert(request_id);
            }
            Relayed::Control(Control::Unsupported {
                request_id,
                subtype,
            }) => {
                process
                    .send(&control::encode_unsupported(&request_id, &subtype))
                    .await?;
            }
            Relayed::End(Ending::Answered {
                reply,
                usage,
                finish_reason,
            }) => {
                sink.send(SessionEvent::Usage(UsageReport {
                    iteration: iterations.max(1),
                    usage,
                    context: crate::session::ContextSnapshot::default(),
                }))
                .await;
                self.ending = Some(Ok((reply, usage, finish_reason)));
            }
            Relayed::End(Ending::Failed(message)) => {
                self.ending = Some(Err(ClaudeError::Turn { message }));
            }
        }
        Ok(())
    }
}

/// Puts `ask` before the user (an [`SessionEvent::ApprovalRequest`] naming Claude's tool as
/// Claude's, its input as the arguments) and waits for the answer, relaying what Claude writes
/// meanwhile. `None` when Claude withdrew the request.
async fn ask_person(
    ask: &PermissionAsk,
    process: &mut ClaudeProcess,
    sink: &dyn EventSink,
    approver: &dyn Approver,
    relay: &mut Relay,
    turn: &mut Turn,
) -> Result<Option<ApprovalDecision>, ClaudeError> {
    let risk = control::risk(&ask.tool_name);
    let arguments = ask.shown_arguments();
    sink.send(SessionEvent::StateChange(LoopState::AwaitingApproval))
        .await;
    // The approver opens the slot its answer goes to before the request is shown.
    let mut decision = approver.decide(&ask.tool_name, &arguments, risk);
    sink.send(SessionEvent::ApprovalRequest(ApprovalAsked {
        call_id: ask.tool_use_id.clone(),
        tool: ask.tool_name.clone(),
        display_name: stream::display_name(&ask.tool_name),
        arguments: arguments.clone(),
        risk,
    }))
    .await;
    let decision = loop {
        tokio::select! {
            decision = &mut decision => break decision,
            line = next_line(process) => {
                for relayed in relay.line(&line?)? {
                    turn.take(relayed, process, sink, relay.iterations).await?;
                }
                if turn.ending.is_some() {
                    return Ok(None);
                }
                if turn.withdrawn.remove(&ask.request_id) {
                    return Ok(None);
                }
            }
        }
    };
    sink.send(SessionEvent::StateChange(LoopState::ExecutingTool))
        .await;
    Ok(Some(decision))
}

/// The next non-blank line of Claude's output; its end is [`ClaudeError::Exited`].
async fn next_line(process: &mut ClaudeProcess) -> Result<Vec<u8>, ClaudeError> {
    loop {
        let Some(line) = process.next_line().await? else {
            let (status, stderr) = process.exit_report().await;
            return Err(ClaudeError::Exited { status, stderr });
        };
        if !line.iter().all(u8::is_ascii_whitespace) {
            return Ok(line);
        }
    }
}

/// How long rho waits, after Claude answered with steering still untaken, for the turn that
/// takes it to begin.
const FOLLOW_UP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// What the turn's loop takes next: a line of Claude's, or steering to pass on.
enum Next {
    Line(Vec<u8>),
    Steering(Vec<String>),
}

/// A prompt's opening message: the steering queued before it, then its text.
struct Opening<'a> {
    before: Vec<String>,
    text: &'a str,
}

impl Opening<'_> {
    /// The user message Claude is sent: the text alone, or each message a text block.
    fn message(&self) -> serde_json::Value {
        if self.before.is_empty() {
            return user_message(self.text);
        }
        let blocks: Vec<serde_json::Value> = self
            .before
            .iter()
            .map(String::as_str)
            .chain(std::iter::once(self.text))
            .map(|text| serde_json::json!({"type": "text", "text": text}))
            .collect();
        serde_json::json!({
            "type": "user",
            "message": {"role": "user", "content": blocks},
        })
    }
}

/// One stream-json user message holding `text`.
fn user_message(text: &str) -> serde_json::Value {
    serde_json::json!({
        "type": "user",
        "message": {"role": "user", "content": text},
    })
}

/// What Claude's model reads when a call is refused: by the mode, or by the user.
fn denial(mode: PermissionMode, ask: &PermissionAsk) -> String {
    if mode.gate(control::risk(&ask.tool_name)) == Gate::Deny {
        format!(
            "the permission mode {} does not allow {} tools",
            mode.as_str(),
            control::risk(&ask.tool_name)
        )
    } else {
        "the user denied this tool call".to_owned()
    }
}

fn not_started() -> ClaudeError {
    ClaudeError::Pipe {
        doing: "starting claude",
        message: "no process".into(),
    }
}

fn stderr_part(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    }
}

/// How a Claude runtime runs.
#[derive(Debug, Clone)]
pub struct ClaudeSettings {
    /// `[agent] claude_command`: a bare name looked up in `PATH`, or a path.
    pub command: PathBuf,
    /// The workspace: Claude runs there.
    pub workspace: PathBuf,
    /// rho's permission mode (mapped onto Claude's flags, never wider).
    pub permission_mode: PermissionMode,
    /// `--model` for Claude, when one was asked for.
    pub model: Option<String>,
    /// Directories besides the workspace Claude may reach.
    pub extra_roots: Vec<PathBuf>,
    /// Environment variables Claude does not get (rho's MCP servers' secrets).
    pub hidden_env: Vec<String>,
}

/// A session's Claude Code CLI: the process (started on the first prompt, kept between
/// prompts) and the Claude session it continues.
pub struct ClaudeRuntime {
    settings: ClaudeSettings,
    program: PathBuf,
    env: Vec<(OsString, OsString)>,
    process: Option<ClaudeProcess>,
    session_id: Option<String>,
    model: Option<String>,
    /// Claude's tools the user approved for the session (`ApproveForSession`), by name.
    approved_for_session: HashSet<String>,
    /// What the last prompt added to the conversation, for rho's session file.
    record: TurnRecord,
    /// A note for the user, shown at the start of the next prompt.
    notice: Option<String>,
}

/// What one prompt added to the conversation, as rho records it: the prompt, Claude's messages
/// (text, reasoning, calls and their results with their outcome) and what it spent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnRecord {
    /// The prompt, then Claude's messages in order.
    pub messages: Vec<ChatMessage>,
    /// The turn's spend (zero when it did not end with an answer).
    pub usage: Usage,
}

impl std::fmt::Debug for ClaudeRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClaudeRuntime")
            .field("program", &self.program)
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

impl ClaudeRuntime {
    /// Finds the Claude Code CLI (a missing one is [`ClaudeError::NotInstalled`], saying how
    /// to install it) and takes `env` (the process environment) as Claude's, without the
    /// session's secret variables. Starts nothing.
    pub fn new(
        settings: ClaudeSettings,
        env: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Result<Self, ClaudeError> {
        let env: Vec<(OsString, OsString)> = env
            .into_iter()
            .filter(|(name, _)| {
                !settings
                    .hidden_env
                    .iter()
                    .any(|hidden| OsString::from(hidden) == *name)
            })
            .collect();
        let path = env
            .iter()
            .find(|(name, _)| name == "PATH")
            .map(|(_, v)| v.as_os_str());
        let program = process::resolve_command(&settings.command, path)?;
        Ok(Self {
            settings,
            program,
            env,
            process: None,
            session_id: None,
            model: None,
            approved_for_session: HashSet::new(),
            record: TurnRecord::default(),
            notice: None,
        })
    }

    /// Continues Claude's session `id` (recorded in a resumed session file): the next prompt
    /// starts `claude --resume <id>`. When Claude no longer has it, a new Claude session starts
    /// and the user is told.
    pub fn resume_session(&mut self, id: String) {
        self.session_id = Some(id);
    }

    /// Shows `text` to the user at the start of the next prompt (a [`SessionEvent::Notice`],
    /// never part of Claude's reply).
    pub fn notify(&mut self, text: String) {
        self.notice = Some(text);
    }

    /// What the last prompt added to the conversation (taken: a second call is empty).
    pub fn take_record(&mut self) -> TurnRecord {
        std::mem::take(&mut self.record)
    }

    /// The model Claude reported for this session, once it has run.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref().or(self.settings.model.as_deref())
    }

    /// Claude's session id, once a prompt has run.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The pid of the running `claude` (its process group), if one runs.
    pub fn pid(&self) -> Option<i32> {
        self.process.as_ref().and_then(ClaudeProcess::pid)
    }

    /// Forgets the conversation: the process stops, the next prompt starts a new Claude
    /// session, and tools approved for the session ask again.
    pub async fn clear(&mut self) {
        if let Some(process) = self.process.take() {
            process.stop().await;
        }
        self.session_id = None;
        self.approved_for_session.clear();
        self.notice = None;
    }

    /// Stops the process (the end of the session).
    pub async fn shutdown(mut self) {
        if let Some(process) = self.process.take() {
            process.stop().await;
        }
    }

    /// Runs one prompt. Events go to `sink` as for a rho turn (`agent/start` … `agent/end`);
    /// Claude's permission prompts go to `approver` as rho's own calls' do (an
    /// [`SessionEvent::ApprovalRequest`] first); `cancel` kills the process (no call waiting
    /// for an answer runs) and ends the turn as aborted. A failure is reported as
    /// [`SessionEvent::AgentError`] and returned; the process is then stopped, and the next
    /// prompt resumes the Claude session in a new one.
    ///
    /// `steering` is passed on as it arrives: Claude takes each message with its next model
    /// request, or, once it has answered, as a turn of its own that this prompt reads too.
    /// Messages queued before the prompt go first, in its opening message.
    pub async fn prompt(
        &mut self,
        text: &str,
        steering: &SteeringQueue,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancelSignal,
    ) -> Result<TurnResult, ClaudeError> {
        let started = Instant::now();
        sink.send(SessionEvent::AgentStart).await;
        sink.send(SessionEvent::StateChange(LoopState::Thinking))
            .await;
        if let Some(message) = self.notice.take() {
            sink.send(SessionEvent::Notice(Notice { message })).await;
        }
        let mut relay = Relay::default();
        let resuming = self.process.is_none() && self.session_id.is_some();
        let opening = Opening {
            before: steering.drain(),
            text,
        };
        let mut outcome = tokio::select! {
            outcome = self.run(&opening, steering, sink, approver, &mut relay) => Some(outcome),
            () = cancel.cancelled() => None,
        };
        // A process killed early in its first turn (an abort) may not have saved the Claude
        // session: when resuming it fails before any model request, a new session starts.
        if resuming
            && relay.iterations == 0
            && matches!(
                outcome,
                Some(Err(ClaudeError::Turn { .. } | ClaudeError::Exited { .. }))
            )
        {
            let lost = self.session_id.clone().unwrap_or_default();
            tracing::warn!(target: "rho::claude", "claude could not resume its session {lost}; starting a new one");
            let message = format!(
                "Claude could not resume its session {lost}; a new Claude session starts, \
                 without the earlier conversation (rho's history still shows it)"
            );
            sink.send(SessionEvent::Notice(Notice { message })).await;
            if let Some(process) = self.process.take() {
                process.stop().await;
            }
            self.session_id = None;
            for text in relay.take_untaken_steering() {
                steering.push(text);
            }
            relay = Relay::default();
            outcome = tokio::select! {
                outcome = self.run(&opening, steering, sink, approver, &mut relay) => Some(outcome),
                () = cancel.cancelled() => None,
            };
        }
        if let Some(id) = relay.session_id.take() {
            self.session_id = Some(id);
        }
        if let Some(model) = relay.model.take() {
            self.model = Some(model);
        }
        // Steering a stopped Claude never took waits for the next prompt, and a process stopped
        // for it is let go (the next prompt resumes the session in a new one).
        for text in relay.take_untaken_steering() {
            steering.push(text);
        }
        if self.process.as_ref().is_some_and(ClaudeProcess::was_killed)
            && let Some(process) = self.process.take()
        {
            process.stop().await;
        }
        let mut messages: Vec<ChatMessage> = opening
            .before
            .iter()
            .chain(std::iter::once(&text.to_owned()))
            .map(|text| ChatMessage::user(text.clone()))
            .collect();
        messages.extend(relay.take_transcript());
        self.record = TurnRecord {
            messages,
            usage: match &outcome {
                Some(Ok((_, usage, _))) => *usage,
                _ => Usage::default(),
            },
        };
        let mut turn = TurnResult {
            reply: String::new(),
            iterations: relay.iterations,
            usage: Usage::default(),
            tool_calls: std::mem::take(&mut relay.tool_calls),
            duration_ms: 0,
            finish_reason: FinishReason::Aborted,
        };
        let result = match outcome {
            None => {
                tracing::info!(target: "rho::claude", "turn aborted: stopping claude");
                if let Some(process) = self.process.take() {
                    process.stop().await;
                }
                Ok(())
            }
            Some(Ok((reply, usage, finish_reason))) => {
                turn.reply = reply;
                turn.usage = usage;
                turn.finish_reason = finish_reason;
                Ok(())
            }
            Some(Err(error)) => {
                if let Some(process) = self.process.take() {
                    process.stop().await;
                }
                Err(error)
            }
        };
        turn.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        sink.send(SessionEvent::StateChange(LoopState::Idle)).await;
        match result {
            Ok(()) => {
                sink.send(SessionEvent::AgentEnd(turn.clone())).await;
                Ok(turn)
            }
            Err(error) => {
                let error = self.hide_secrets(error);
                sink.send(SessionEvent::AgentError(error.to_string())).await;
                Err(error)
            }
        }
    }

    /// Sends the prompt and relays lines until Claude's `result` line, answering Claude's
    /// permission prompts one at a time (in the order they came) on the way.
    async fn run(
        &mut self,
        opening: &Opening<'_>,
        steering: &SteeringQueue,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        relay: &mut Relay,
    ) -> Result<(String, Usage, FinishReason), ClaudeError> {
        let message = opening.message();
        let mode = self.settings.permission_mode;
        self.ensure_started()?;
        let Self {
            process,
            approved_for_session,
            ..
        } = self;
        let Some(process) = process.as_mut() else {
            return Err(not_started());
        };
        process.send(&message.to_string()).await?;
        let mut turn = Turn::default();
        let mut spent = Usage::default();
        // An answer given while steering waited: Claude runs the steering as a turn of its
        // own next, which this prompt reads too, unless it does not start at once.
        let mut answered: Option<(String, FinishReason)> = None;
        loop {
            match turn.ending.take() {
                // Claude answers steering it had not taken with a turn of its own: read on.
                Some(Ok((reply, usage, finish_reason))) if relay.steering_waits() => {
                    spent.add(&usage);
                    answered = Some((reply, finish_reason));
                }
                Some(Ok((reply, usage, finish_reason))) => {
                    spent.add(&usage);
                    return Ok((reply, spent, finish_reason));
                }
                Some(Err(error)) => return Err(error),
                None => {}
            }
            if let Some(ask) = turn.asks.pop_front() {
                turn.withdrawn.clear();
                let decision = match mode.gate(control::risk(&ask.tool_name)) {
                    Gate::Deny => Some(ApprovalDecision::Deny),
                    _ if approved_for_session.contains(&ask.tool_name) => {
                        Some(ApprovalDecision::Approve)
                    }
                    // Claude asks only about what its flags and rules leave to a person; rho
                    // asks its own user even when its mode would allow the tool (a read
                    // outside the workspace), so nothing runs that neither allowed.
                    Gate::Ask | Gate::Allow => {
                        ask_person(&ask, process, sink, approver, relay, &mut turn).await?
                    }
                };
                let answer = match decision {
                    None => continue, // withdrawn, or the turn ended meanwhile
                    Some(ApprovalDecision::Approve) => Answer::Allow,
                    Some(ApprovalDecision::ApproveForSession) => {
                        approved_for_session.insert(ask.tool_name.clone());
                        Answer::Allow
                    }
                    Some(ApprovalDecision::Deny) => Answer::Deny(denial(mode, &ask)),
                    Some(ApprovalDecision::Redirect(message)) => Answer::Deny(format!(
                        "the user denied this tool call and says instead: {message}"
                    )),
                };
                if matches!(answer, Answer::Deny(_)) {
                    relay.denied(&ask.tool_use_id);
                }
                process.send(&control::encode_answer(&ask, &answer)).await?;
                continue;
            }
            let guarded = answered.take();
            let next = match &guarded {
                // The turn that takes the steering starts right after the answer; while it has
                // not taken it, each line must come within the wait. When none comes, Claude did
                // not take it as rho thought: the answer stands, the process is stopped (so it
                // cannot answer the steering into the next prompt; that prompt resumes the
                // Claude session) and the steering goes back to the queue.
                Some((reply, finish_reason)) => {
                    match tokio::time::timeout(FOLLOW_UP_WAIT, next_line(process)).await {
                        Ok(line) => Next::Line(line?),
                        Err(_) => {
                            tracing::warn!(target: "rho::claude", "claude took no turn for the steering it was sent; stopping it");
                            process.kill();
                            return Ok((reply.clone(), spent, finish_reason.clone()));
                        }
                    }
                }
                None => tokio::select! {
                    biased;
                    line = next_line(process) => Next::Line(line?),
                    batch = steering.next_batch() => Next::Steering(batch),
                },
            };
            match next {
                Next::Line(line) => {
                    for relayed in relay.line(&line)? {
                        turn.take(relayed, process, sink, relay.iterations).await?;
                    }
                }
                Next::Steering(batch) => {
                    for text in batch {
                        process.send(&user_message(&text).to_string()).await?;
                        relay.steered(text);
                    }
                }
            }
            if relay.steering_waits() && turn.ending.is_none() {
                answered = answered.or(guarded);
            }
        }
    }

    /// The running process, started (resuming the Claude session, after a stop) if none runs.
    fn ensure_started(&mut self) -> Result<&mut ClaudeProcess, ClaudeError> {
        if self.process.is_none() {
            let launch = Launch {
                permission_mode: self.settings.permission_mode,
                model: self.settings.model.clone(),
                extra_roots: self.settings.extra_roots.clone(),
                resume: self.session_id.clone(),
            };
            let process = ClaudeProcess::spawn(
                &self.program,
                &flags::args(&launch),
                &self.settings.workspace,
                self.env.clone(),
            )?;
            self.process = Some(process);
        }
        self.process.as_mut().ok_or_else(not_started)
    }

    /// `error` with the values of Claude's credential variables replaced by `***` (the
    /// session's own secret variables never reach Claude).
    fn hide_secrets(&self, error: ClaudeError) -> ClaudeError {
        let secrets: Vec<String> = self
            .env
            .iter()
            .filter(|(name, _)| CLAUDE_SECRET_VARIABLES.iter().any(|s| name == s))
            .map(|(_, value)| value.to_string_lossy().into_owned())
            .filter(|value| value.len() >= 4)
            .collect();
        let hide = |text: String| {
            secrets
                .iter()
                .fold(text, |text, secret| text.replace(secret.as_str(), "***"))
        };
        match error {
            ClaudeError::Exited { status, stderr } => ClaudeError::Exited {
                status,
                stderr: hide(stderr),
            },
            ClaudeError::Turn { message } => ClaudeError::Turn {
                message: hide(message),
            },
            ClaudeError::Refused { doing, message } => ClaudeError::Refused {
                doing,
                message: hide(message),
            },
            other => other,
        }
    }
}

#[cfg(test)]
#[path = "claude/runtime_tests.rs"]
mod tests;
