//! The session engine: a conversation with one model over one fixed [`ToolSet`].
//!
//! [`Session::prompt`] runs the agent loop: model request → tool calls (approved by the gate,
//! read-only calls run concurrently, others one at a time) → results → next request, until the
//! model stops, the iteration budget is spent or the user aborts. Steering messages queued
//! while a prompt runs join the conversation at the next tool-batch seam. Every change to the
//! conversation is appended to the session file unless the session is ephemeral.

mod call_asker;
mod deferral;
mod events;
mod store;
mod system_prompt;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use rho_component::{
    CancelSignal, Gate, PermissionMode, RiskLevel, ToolContext, ToolOutput, ToolProgress,
};
use serde_json::Value;

use crate::ToolSet;
use crate::provider::{
    ChatMessage, ChatRequest, FinishReason, ImagePart, Provider, ProviderError, Role, StreamEvent,
    ToolCall, ToolDefinition, Usage,
};

pub use call_asker::{QuestionDesk, SAMPLING_TIME_LIMIT};
pub use deferral::{
    ASSUMED_CONTEXT_WINDOW, ContextBudget, OwnerBudget, TOOL_SEARCH, ToolBudget, definition_tokens,
};
pub use events::{
    ApprovalDecision, ApprovalFuture, Approver, CallOutcome, CallRecord, ContextSnapshot, DenyAll,
    Discard, EventSink, LoopState, QuestionAnswer, QuestionKind, QuestionRequest, SessionEvent,
    SinkFuture, ToolsChanged, TurnResult,
};
pub use store::{
    Entry, LoadedSession, SESSION_FORMAT_VERSION, SESSION_MAX_BYTES, SessionFile, SessionSummary,
    StoreError, UsagePurpose, list as list_sessions, load as load_session, project_dir,
};
pub use system_prompt::system_prompt;

/// How a session behaves.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The workspace: tools resolve paths here.
    pub workspace: PathBuf,
    /// The model id sent to the provider.
    pub model: String,
    /// What runs without asking.
    pub permission_mode: PermissionMode,
    /// Model requests per prompt.
    pub max_iterations: u32,
    /// Directories file tools may reach besides the workspace.
    pub extra_roots: Vec<PathBuf>,
    /// The model's context window, when known (for statistics).
    pub context_window: Option<u64>,
    /// Environment variables holding secrets; tools never pass them on.
    pub hidden_env: Vec<String>,
    /// When tool definitions wait behind the tool search (`[agent] tool_search`).
    pub tool_search: rho_config::ToolSearch,
    /// `auto` defers past this share of the context window, in percent.
    pub tool_search_budget_percent: u8,
}

/// Why a prompt (or a compaction) failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The model request failed.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The session file could not be written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Compaction produced nothing usable.
    #[error("compaction failed: {0}")]
    Compaction(String),
}

/// Steering messages waiting for the next tool-batch seam. Cloneable: front-ends push while
/// the session runs.
#[derive(Debug, Clone, Default)]
pub struct SteeringQueue(Arc<Mutex<VecDeque<String>>>);

impl SteeringQueue {
    /// Queues `message`.
    pub fn push(&self, message: String) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(message);
    }

    fn drain(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
            .collect()
    }

    /// Messages waiting.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What one prompt sends: the user's text, and images attached to it (a resource read from a
/// server).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptInput {
    /// The message text (attachment bodies already included).
    pub text: String,
    /// Images the model can look at, in order.
    pub images: Vec<ImagePart>,
}

impl From<&str> for PromptInput {
    fn from(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            images: Vec::new(),
        }
    }
}

/// Usage and context figures for `getSessionStats`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    /// The session id (`None` for an ephemeral session).
    pub session_id: Option<String>,
    /// The session file.
    pub session_file: Option<PathBuf>,
    /// Tokens over the session's life: the user's turns and compactions.
    pub usage: Usage,
    /// Tokens servers spent through sampling (`mcp_sampling` in the usage ledger), apart from
    /// the user's own turns.
    pub sampling_usage: Usage,
    /// The context after the last request.
    pub context: ContextSnapshot,
    /// Messages in the conversation.
    pub messages: usize,
}

/// Progress reports one call may send to the front end; later ones are dropped.
pub const PROGRESS_REPORTS_PER_CALL: u32 = 1000;

/// Longest progress message passed on, in bytes (cut at a character boundary).
const PROGRESS_MESSAGE_MAX: usize = 1024;

/// The instruction sent with the history when compacting.
const COMPACT_INSTRUCTION: &str = "Summarize the conversation so far for your own later use: \
    the user's goals, decisions made, files and commands involved, what is done and what \
    remains. Be complete but concise; do not call tools.";

/// A conversation with one model over a fixed tool set.
pub struct Session {
    config: SessionConfig,
    provider: Arc<dyn Provider>,
    tools: Arc<ToolSet>,
    /// The system prompt, as the message every request starts with.
    system_message: ChatMessage,
    messages: Vec<ChatMessage>,
    usage: Usage,
    context: ContextSnapshot,
    steering: SteeringQueue,
    file: Option<SessionFile>,
    id: Option<String>,
    /// Where servers' questions go; `None`: nobody can answer, so servers are declined.
    questions: Option<Arc<dyn QuestionDesk>>,
    /// Sampling spend over the session's life.
    sampling_usage: Usage,
    /// Sampling spend of running calls not yet recorded in the file.
    sampling_pending: Arc<Mutex<Usage>>,
    /// Tools the user approved for the rest of this session (`ApproveForSession`); never
    /// saved, so a resumed session asks again.
    approved_for_session: std::collections::BTreeSet<String>,
    /// Which tool definitions wait behind the tool search, and what was loaded.
    deferral: deferral::Deferral,
    /// The system prompt without the note on waiting tools (the note follows the plan).
    base_system: String,
    /// The waiting tools the system message names now.
    waiting: Vec<(String, usize)>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("model", &self.config.model)
            .field("messages", &self.messages.len())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session that never touches the disk.
    pub fn ephemeral(
        config: SessionConfig,
        provider: Arc<dyn Provider>,
        tools: Arc<ToolSet>,
    ) -> Self {
        let base_system = system_prompt(&config.workspace, &tools);
        let deferral =
            deferral::Deferral::new(config.tool_search, config.tool_search_budget_percent);
        Self {
            config,
            provider,
            tools,
            system_message: ChatMessage::system(base_system.clone()),
            base_system,
            deferral,
            waiting: Vec::new(),
            messages: Vec::new(),
            usage: Usage::default(),
            context: ContextSnapshot::default(),
            steering: SteeringQueue::default(),
            file: None,
            id: None,
            questions: None,
            sampling_usage: Usage::default(),
            sampling_pending: Arc::default(),
            approved_for_session: std::collections::BTreeSet::new(),
        }
    }

    /// Routes servers' questions (forms, sampling) to `desk` from the next tool call on.
    pub fn set_question_desk(&mut self, desk: Option<Arc<dyn QuestionDesk>>) {
        self.questions = desk;
    }

    /// A new session. With `sessions_dir`, a session file is created there; without, the
    /// session is ephemeral (nothing touches the disk).
    pub fn new(
        config: SessionConfig,
        provider: Arc<dyn Provider>,
        tools: Arc<ToolSet>,
        sessions_dir: Option<&Path>,
    ) -> Result<Self, SessionError> {
        let file = match sessions_dir {
            Some(dir) => Some(SessionFile::create(dir, &config.workspace, &config.model)?),
            None => None,
        };
        let id = file.as_ref().and_then(SessionFile::id);
        let mut session = Self::ephemeral(config, provider, tools);
        session.file = file;
        session.id = id;
        Ok(session)
    }

    /// The same conversation over a new tool set and settings (after `reloadExtensions`): the
    /// system prompt is rebuilt for `tools`; the messages, usage, steering queue and session
    /// file stay as they are (a file not yet written is still created on the first entry).
    /// Approvals for the session are dropped, since a name may now mean another tool.
    pub fn remount(&mut self, config: SessionConfig, tools: Arc<ToolSet>) {
        self.base_system = system_prompt(&config.workspace, &tools);
        self.system_message = ChatMessage::system(self.base_system.clone());
        self.waiting.clear();
        self.deferral
            .set_mode(config.tool_search, config.tool_search_budget_percent);
        self.config = config;
        self.tools = tools;
        self.approved_for_session.clear();
    }

    /// Resumes the session saved at `path`: its conversation and usage, appending from now on.
    pub fn resume(
        path: &Path,
        config: SessionConfig,
        provider: Arc<dyn Provider>,
        tools: Arc<ToolSet>,
    ) -> Result<Self, SessionError> {
        let mut loaded = store::load(path)?;
        loaded.messages = repair_history(&loaded.messages).into_owned();
        let file = SessionFile::open(path)?;
        let base_system = system_prompt(&config.workspace, &tools);
        let deferral =
            deferral::Deferral::new(config.tool_search, config.tool_search_budget_percent);
        deferral.restore(loaded.loaded_tools);
        Ok(Self {
            context: ContextSnapshot {
                messages: loaded.messages.len(),
                ..ContextSnapshot::default()
            },
            config,
            provider,
            tools,
            system_message: ChatMessage::system(base_system.clone()),
            base_system,
            deferral,
            waiting: Vec::new(),
            messages: loaded.messages,
            usage: loaded.usage,
            steering: SteeringQueue::default(),
            file: Some(file),
            id: Some(loaded.id),
            questions: None,
            sampling_usage: loaded.sampling_usage,
            sampling_pending: Arc::default(),
            approved_for_session: std::collections::BTreeSet::new(),
        })
    }

    /// The queue steering messages go into.
    pub fn steering(&self) -> SteeringQueue {
        self.steering.clone()
    }

    /// The conversation (without the system message).
    pub fn messages(&self) -> &[ChatMessage] {
        &self.messages
    }

    /// The system prompt.
    pub fn system_prompt(&self) -> &str {
        &self.system_message.content
    }

    /// The tool set.
    pub fn tools(&self) -> &Arc<ToolSet> {
        &self.tools
    }

    /// The configuration.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// The provider.
    pub fn provider(&self) -> &Arc<dyn Provider> {
        &self.provider
    }

    /// Switches the model (and its context window) for the next request.
    pub fn set_model(
        &mut self,
        model: String,
        provider: Option<Arc<dyn Provider>>,
        context_window: Option<u64>,
    ) {
        self.config.model = model;
        self.config.context_window = context_window;
        if let Some(provider) = provider {
            self.provider = provider;
        }
    }

    /// The session file, unless ephemeral.
    pub fn file_path(&self) -> Option<&Path> {
        self.file.as_ref().map(SessionFile::path)
    }

    /// Usage and context figures.
    pub fn stats(&self) -> SessionStats {
        SessionStats {
            session_id: self.id.clone(),
            session_file: self.file_path().map(Path::to_path_buf),
            usage: self.usage,
            sampling_usage: self.sampling_usage,
            context: self.context,
            messages: self.messages.len(),
        }
    }

    /// Forgets the conversation (the tool set and model stay).
    pub fn clear(&mut self) -> Result<(), SessionError> {
        self.messages.clear();
        self.steering.drain();
        self.context = ContextSnapshot::default();
        self.record(&Entry::Clear)
    }

    fn record(&mut self, entry: &Entry) -> Result<(), SessionError> {
        if let Some(file) = &mut self.file {
            file.append(entry)?;
        }
        Ok(())
    }

    /// Adds a message to the conversation, then to the file. The conversation keeps it even
    /// when the write fails, so a batch never loses a tool result half-way.
    fn push(&mut self, message: ChatMessage) -> Result<(), SessionError> {
        self.messages.push(message.clone());
        self.record(&Entry::Message { message })
    }

    /// The tools as the model sees them, planned before every request (so a revised MCP tool
    /// reaches the model on the next turn, and what a tool search loaded on the next request):
    /// the system message names what waits behind the tool search.
    fn definitions(&mut self) -> Vec<ToolDefinition> {
        let plan = self.deferral.plan(&self.tools, self.config.context_window);
        if plan.waiting != self.waiting {
            let text = match deferral::waiting_note(&plan.waiting) {
                Some(note) => format!("{}\n\n{note}", self.base_system),
                None => self.base_system.clone(),
            };
            self.system_message = ChatMessage::system(text);
            self.waiting = plan.waiting;
        }
        plan.definitions
    }

    /// What the next model request would cost the context, by part: the system prompt, the
    /// tool definitions (and what waits behind the tool search), the conversation.
    pub fn context_budget(&self) -> ContextBudget {
        let plan = self.deferral.plan(&self.tools, self.config.context_window);
        let note = deferral::waiting_note(&plan.waiting).map_or(0, |n| n.len() + 2);
        let conversation: usize = self
            .messages
            .iter()
            .map(|m| serde_json::to_string(m).map_or(0, |s| s.len()))
            .sum();
        ContextBudget {
            system_tokens: deferral::text_tokens(self.base_system.len() + note),
            tools: plan.budget,
            conversation_tokens: deferral::text_tokens(conversation),
        }
    }

    /// The tool the model calls `name`: the session's `tool_search`, or one of the tool set.
    fn tool(&self, name: &str) -> Option<Arc<dyn rho_component::Tool>> {
        if name == TOOL_SEARCH {
            return Some(self.deferral.tool().clone());
        }
        self.tools.get(name)
    }

    /// Records the sampling spend of the calls that just ran.
    fn record_sampling(&mut self) -> Result<(), SessionError> {
        let spent = std::mem::take(
            &mut *self
                .sampling_pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        if spent.request_count == 0 {
            return Ok(());
        }
        self.sampling_usage.add(&spent);
        self.record(&Entry::Usage {
            usage: spent,
            purpose: UsagePurpose::McpSampling,
        })
    }

    /// A request over `history` (the repaired conversation) and `extra`, borrowing everything.
    fn request<'a>(
        &'a self,
        history: &'a [ChatMessage],
        tools: &'a [ToolDefinition],
        extra: Option<&'a ChatMessage>,
    ) -> ChatRequest<'a> {
        let mut messages = Vec::with_capacity(history.len() + 2);
        messages.push(&self.system_message);
        messages.extend(history.iter());
        messages.extend(extra);
        ChatRequest {
            model: &self.config.model,
            messages,
            tools,
        }
    }

    fn snapshot(&self, usage: &Usage) -> ContextSnapshot {
        let tokens = usage.input_tokens + usage.output_tokens;
        let window = self.config.context_window;
        #[allow(clippy::cast_precision_loss)] // a percentage for display
        let percent = window
            .filter(|w| *w > 0)
            .map(|w| (tokens as f64 / w as f64 * 1000.0).round() / 10.0);
        ContextSnapshot {
            tokens,
            window,
            percent,
            messages: self.messages.len(),
        }
    }

    /// Runs one prompt to the end. Events go to `emit`; calls the gate cannot decide go to
    /// `approver`; `cancel` aborts (the model request stops, running tools are cancelled and
    /// MCP servers are told). A failed model request ends the prompt with an error after
    /// [`SessionEvent::AgentError`]; everything up to it stays in the conversation.
    pub async fn prompt(
        &mut self,
        input: PromptInput,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancelSignal,
    ) -> Result<TurnResult, SessionError> {
        let started = Instant::now();
        sink.send(SessionEvent::AgentStart).await;
        // Restarts since the last turn (a prompt command or an attachment found its server
        // lost) are reported before anything else.
        self.report_restarts(sink).await;
        // A turn boundary: servers that announced new tool lists, or were started again, are
        // reconciled now.
        for (server, changes) in self.tools.reconcile().await {
            tracing::info!(target: "rho::mcp", server = server.as_str(), revised = changes.revised.len(), withdrawn = changes.withdrawn.len(), added = changes.added.len(), "tool list changed");
            sink.send(SessionEvent::ToolsChanged(ToolsChanged {
                server,
                revised: changes.revised,
                withdrawn: changes.withdrawn,
                added: changes.added,
            }))
            .await;
        }
        let mut turn = TurnResult {
            reply: String::new(),
            iterations: 0,
            usage: Usage::default(),
            tool_calls: Vec::new(),
            duration_ms: 0,
            finish_reason: FinishReason::Stop,
        };
        let outcome = match self.open_turn(input) {
            Ok(()) => self.run_loop(&mut turn, sink, approver, cancel).await,
            Err(e) => Err(e),
        };
        turn.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        sink.send(SessionEvent::StateChange(LoopState::Idle)).await;
        match outcome {
            Ok(()) => {
                sink.send(SessionEvent::AgentEnd(turn.clone())).await;
                Ok(turn)
            }
            Err(SessionError::Provider(ProviderError::Cancelled)) => {
                turn.finish_reason = FinishReason::Aborted;
                sink.send(SessionEvent::AgentEnd(turn.clone())).await;
                Ok(turn)
            }
            Err(e) => {
                sink.send(SessionEvent::AgentError(e.to_string())).await;
                Err(e)
            }
        }
    }

    /// Steering sent while nothing ran comes first (it was written before this prompt), then
    /// the prompt itself.
    fn open_turn(&mut self, input: PromptInput) -> Result<(), SessionError> {
        for message in self.steering.drain() {
            self.push(ChatMessage::user(message))?;
        }
        let mut message = ChatMessage::user(input.text);
        message.images = input.images;
        self.push(message)
    }

    async fn run_loop(
        &mut self,
        turn: &mut TurnResult,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancelSignal,
    ) -> Result<(), SessionError> {
        loop {
            // The seam: steering queued since the last request joins before the next one.
            for message in self.steering.drain() {
                self.push(ChatMessage::user(message))?;
            }
            if cancel.is_cancelled() {
                return Err(ProviderError::Cancelled.into());
            }
            if turn.iterations >= self.config.max_iterations {
                turn.finish_reason = FinishReason::MaxIterations;
                return Ok(());
            }
            turn.iterations += 1;
            sink.send(SessionEvent::StateChange(LoopState::Thinking))
                .await;
            let on_event = |event: StreamEvent| match event {
                StreamEvent::Text(delta) => sink.coalesce(SessionEvent::MessageDelta(delta)),
                StreamEvent::Reasoning(delta) => {
                    sink.coalesce(SessionEvent::ReasoningDelta(delta));
                }
            };
            let definitions = self.definitions();
            let response = {
                let history = repair_history(&self.messages);
                let request = self.request(&history, &definitions, None);
                self.provider.complete(&request, &on_event, cancel).await?
            };
            let mut usage = response.usage;
            usage.request_count = usage.request_count.max(1);
            turn.usage.add(&usage);
            self.usage.add(&usage);
            self.record(&Entry::Usage {
                usage,
                purpose: UsagePurpose::Turn,
            })?;
            let mut assistant =
                ChatMessage::assistant(response.content.clone(), response.tool_calls.clone());
            assistant.reasoning = response.reasoning;
            self.push(assistant)?;
            self.context = self.snapshot(&usage);
            sink.send(SessionEvent::Usage {
                iteration: turn.iterations,
                usage,
                context: self.context,
            })
            .await;
            if !response.content.is_empty() {
                turn.reply = response.content;
            }
            if response.tool_calls.is_empty() {
                turn.finish_reason = response.finish_reason;
                return Ok(());
            }
            let batch = self
                .run_batch(response.tool_calls, turn, sink, approver, cancel)
                .await;
            self.record_sampling()?;
            let names = self.deferral.take_unrecorded();
            if !names.is_empty() {
                self.record(&Entry::ToolsLoaded { names })?;
            }
            batch?;
            turn.finish_reason = FinishReason::ToolCalls;
        }
    }

    /// The name a person reads for the tool exported as `name` (`ToolSpec::display_name`),
    /// or `name` itself when the session has no such tool (the model made it up).
    fn display_name(&self, name: &str) -> String {
        self.tool(name)
            .map_or_else(|| name.to_owned(), |tool| tool.spec().display_name())
    }

    /// One tool batch: every call is announced, then the gate decides each (asking the user
    /// when needed) before anything runs, so a redirect abandons the whole batch.
    async fn run_batch(
        &mut self,
        calls: Vec<ToolCall>,
        turn: &mut TurnResult,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancelSignal,
    ) -> Result<(), SessionError> {
        for call in &calls {
            sink.send(SessionEvent::ToolCall {
                call_id: call.id.clone(),
                name: call.name.clone(),
                display_name: self.display_name(&call.name),
                arguments: call.arguments.clone(),
            })
            .await;
        }
        let mut verdicts: Vec<Verdict> = Vec::with_capacity(calls.len());
        let mut redirect = None;
        for call in &calls {
            if cancel.is_cancelled() {
                // Aborted: nothing more is asked or run.
                break;
            }
            self.deferral.called(&call.name);
            let Some(tool) = self.tool(&call.name) else {
                verdicts.push(Verdict::Fail(format!(
                    "there is no tool named {:?}; use one of the tools offered",
                    call.name
                )));
                continue;
            };
            let risk = tool.spec().risk;
            let gate = match self.config.permission_mode.gate(risk) {
                Gate::Ask if self.approved_for_session.contains(&call.name) => Gate::Allow,
                gate => gate,
            };
            let verdict = match gate {
                Gate::Allow => Verdict::Run(risk),
                Gate::Deny => Verdict::Deny(format!(
                    "the permission mode {} does not allow {} tools",
                    self.config.permission_mode.as_str(),
                    risk
                )),
                Gate::Ask => {
                    sink.send(SessionEvent::StateChange(LoopState::AwaitingApproval))
                        .await;
                    // The approver opens the slot its answer goes to before the request is
                    // shown, so an answer can never arrive before rho is ready for it.
                    let decision = approver.decide(&call.name, &call.arguments, risk);
                    sink.send(SessionEvent::ApprovalRequest {
                        tool: call.name.clone(),
                        display_name: tool.spec().display_name(),
                        arguments: call.arguments.clone(),
                        risk,
                    })
                    .await;
                    let decision = tokio::select! {
                        decision = decision => decision,
                        () = cancel.cancelled() => ApprovalDecision::Deny,
                    };
                    match decision {
                        ApprovalDecision::Approve => Verdict::Run(risk),
                        ApprovalDecision::ApproveForSession => {
                            self.approved_for_session.insert(call.name.clone());
                            Verdict::Run(risk)
                        }
                        ApprovalDecision::Deny => {
                            Verdict::Deny("the user denied this tool call".into())
                        }
                        ApprovalDecision::Redirect(message) => {
                            redirect = Some(message);
                            break;
                        }
                    }
                }
            };
            verdicts.push(verdict);
        }
        if let Some(message) = redirect {
            // Every call still needs a result for the conversation to stay well-formed.
            for call in &calls {
                turn.tool_calls.push(CallRecord {
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    outcome: CallOutcome::Redirected,
                    duration_ms: 0,
                });
                self.push(
                    ChatMessage::tool_result(
                        &call.id,
                        &call.name,
                        "Not run: the user redirected with new instructions.",
                    )
                    .with_outcome(CallOutcome::Redirected),
                )?;
            }
            self.push(ChatMessage::user(message))?;
            return Ok(());
        }
        if cancel.is_cancelled() {
            for call in &calls {
                turn.tool_calls.push(CallRecord {
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    outcome: CallOutcome::Cancelled,
                    duration_ms: 0,
                });
                self.push(
                    ChatMessage::tool_result(&call.id, &call.name, "Not run: the user aborted.")
                        .with_outcome(CallOutcome::Cancelled),
                )?;
            }
            return Err(ProviderError::Cancelled.into());
        }
        let outputs = self.execute(&calls, &verdicts, sink, cancel).await;
        self.report_restarts(sink).await;
        for ((call, verdict), (output, duration_ms)) in calls.iter().zip(&verdicts).zip(outputs) {
            let outcome = match verdict {
                Verdict::Deny(_) => {
                    sink.send(SessionEvent::ToolDenied {
                        name: call.name.clone(),
                        display_name: self.display_name(&call.name),
                    })
                    .await;
                    CallOutcome::Denied
                }
                _ if output.is_error && cancel.is_cancelled() => CallOutcome::Cancelled,
                _ if output.is_error => CallOutcome::Error {
                    message: output.text.lines().next().unwrap_or_default().to_owned(),
                },
                _ => CallOutcome::Success,
            };
            if !matches!(verdict, Verdict::Deny(_)) {
                sink.send(SessionEvent::ToolResult {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    is_error: output.is_error,
                    outcome: outcome.clone(),
                    output: output.text.clone(),
                    image: output.image.clone(),
                })
                .await;
            }
            turn.tool_calls.push(CallRecord {
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                outcome: outcome.clone(),
                duration_ms,
            });
            let content = if output.is_error {
                format!("Error: {}", output.text)
            } else {
                output.text
            };
            self.push(
                ChatMessage::tool_result(&call.id, &call.name, content).with_outcome(outcome),
            )?;
        }
        Ok(())
    }

    /// Reports the MCP servers started again (or given up on) since the last report.
    async fn report_restarts(&self, sink: &dyn EventSink) {
        for restart in self.tools.take_restarts() {
            sink.send(SessionEvent::ServerRestart(restart)).await;
        }
    }

    /// Runs the approved calls: consecutive read-only calls together, anything that may
    /// change state alone and in order. Returns one output per call, in call order.
    async fn execute(
        &self,
        calls: &[ToolCall],
        verdicts: &[Verdict],
        sink: &dyn EventSink,
        cancel: &CancelSignal,
    ) -> Vec<(ToolOutput, u64)> {
        let mut outputs: Vec<Option<(ToolOutput, u64)>> = vec![None; calls.len()];
        let context = ToolContext {
            workspace: self.config.workspace.clone(),
            extra_roots: self.config.extra_roots.clone(),
            hidden_env: self.config.hidden_env.clone(),
            cancel: cancel.clone(),
            progress: None,
            asker: None,
        };
        // Progress from running tools waits in one slot per call (the latest report wins), so
        // a tool that reports faster than the front end reads costs neither memory nor the
        // newest figure.
        let progress = Arc::new(ProgressSlots::new(calls.len()));
        let delivered: Vec<AtomicU32> = calls.iter().map(|_| AtomicU32::new(0)).collect();
        let deliver = |slots: &ProgressSlots| {
            for (i, report) in slots.take() {
                let (Some(count), Some(call)) = (delivered.get(i), calls.get(i)) else {
                    continue;
                };
                if count.fetch_add(1, Ordering::Relaxed) >= PROGRESS_REPORTS_PER_CALL {
                    continue;
                }
                sink.coalesce(SessionEvent::ToolProgress {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    progress: report.progress,
                    total: report.total,
                    message: report.message.map(|m| cut_message(m, PROGRESS_MESSAGE_MAX)),
                });
            }
        };
        let mut index = 0;
        let mut announced = false;
        while index < calls.len() {
            let group_end = match verdicts[index] {
                Verdict::Run(RiskLevel::Read) => {
                    let mut end = index + 1;
                    while end < calls.len() && verdicts[end] == Verdict::Run(RiskLevel::Read) {
                        end += 1;
                    }
                    end
                }
                _ => index + 1,
            };
            let mut running = tokio::task::JoinSet::new();
            for (i, call) in calls.iter().enumerate().take(group_end).skip(index) {
                match &verdicts[i] {
                    Verdict::Fail(message) | Verdict::Deny(message) => {
                        outputs[i] = Some((ToolOutput::error(message.clone()), 0));
                    }
                    Verdict::Run(_) => {
                        let Some(tool) = self.tool(&call.name) else {
                            continue;
                        };
                        if !announced {
                            sink.send(SessionEvent::StateChange(LoopState::ExecutingTool))
                                .await;
                            announced = true;
                        }
                        let arguments = parse_arguments(&call.arguments);
                        let mut context = context.clone();
                        let slots = progress.clone();
                        context.progress = Some(Arc::new(move |report| slots.put(i, report)));
                        context.asker = self.call_asker(&call.id, cancel);
                        running.spawn(async move {
                            let started = Instant::now();
                            let output = match arguments {
                                Ok(arguments) => tool.call(arguments, &context).await,
                                Err(message) => ToolOutput::error(message),
                            };
                            let ms =
                                u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                            (i, output, ms)
                        });
                    }
                }
            }
            loop {
                tokio::select! {
                    joined = running.join_next() => match joined {
                        Some(Ok((i, output, ms))) => outputs[i] = Some((output, ms)),
                        Some(Err(e)) => tracing::error!("a tool task failed: {e}"),
                        None => break,
                    },
                    () = progress.ready() => deliver(&progress),
                }
            }
            // Reports left just before their tool finished still precede its result.
            deliver(&progress);
            index = group_end;
        }
        outputs
            .into_iter()
            .map(|o| o.unwrap_or_else(|| (ToolOutput::error("the tool stopped unexpectedly"), 0)))
            .collect()
    }

    /// The asker of one call: questions go to the desk (when someone can answer), sampling
    /// spends the session's model and is recorded under `mcp_sampling`.
    fn call_asker(
        &self,
        call_id: &str,
        cancel: &CancelSignal,
    ) -> Option<Arc<dyn rho_component::Asker>> {
        let desk = self.questions.clone()?;
        Some(Arc::new(call_asker::CallAsker {
            desk,
            call_id: call_id.to_owned(),
            provider: self.provider.clone(),
            model: self.config.model.clone(),
            ledger: self.sampling_pending.clone(),
            turn: cancel.clone(),
        }))
    }

    /// Replaces the history with a summary written by the model. Activated skill content is
    /// kept verbatim after the summary (the Agent Skills guide asks to protect it).
    pub async fn compact(&mut self, cancel: &CancelSignal) -> Result<String, SessionError> {
        if self.messages.is_empty() {
            return Ok(String::new());
        }
        // The tool definitions go along: some endpoints refuse a history with tool calls when
        // no tools are declared.
        let definitions = self.definitions();
        let instruction = ChatMessage::user(COMPACT_INSTRUCTION);
        let response = {
            let history = repair_history(&self.messages);
            let request = self.request(&history, &definitions, Some(&instruction));
            self.provider.complete(&request, &|_| {}, cancel).await?
        };
        let mut usage = response.usage;
        usage.request_count = usage.request_count.max(1);
        self.usage.add(&usage);
        self.record(&Entry::Usage {
            usage,
            purpose: UsagePurpose::Turn,
        })?;
        if response.content.trim().is_empty() || response.finish_reason == FinishReason::Length {
            return Err(SessionError::Compaction(
                "the model returned an empty or cut-off summary; the history is unchanged".into(),
            ));
        }
        let mut summary = format!(
            "[Summary of the earlier conversation]\n{}",
            response.content.trim()
        );
        for message in &self.messages {
            if message.role == Role::Tool && message.content.starts_with("<skill_content") {
                summary.push_str("\n\n");
                summary.push_str(&message.content);
            }
        }
        self.record(&Entry::Compaction {
            summary: summary.clone(),
        })?;
        self.messages = vec![ChatMessage::user(summary.clone())];
        self.context = ContextSnapshot {
            messages: 1,
            ..self.context
        };
        Ok(summary)
    }
}

/// The latest progress report of each running call, and a signal that one arrived. Reports
/// only go forward: one that arrives after a later one (the MCP runtime hands notifications
/// to tasks of their own, so neighbours can swap) is stale and dropped, as the protocol has
/// progress only increase.
struct ProgressSlots {
    latest: Mutex<Vec<ProgressSlot>>,
    arrived: tokio::sync::Notify,
}

#[derive(Clone, Default)]
struct ProgressSlot {
    /// Not yet delivered.
    waiting: Option<ToolProgress>,
    /// The furthest report accepted so far.
    furthest: Option<f64>,
}

impl ProgressSlots {
    fn new(calls: usize) -> Self {
        Self {
            latest: Mutex::new(vec![ProgressSlot::default(); calls]),
            arrived: tokio::sync::Notify::new(),
        }
    }

    /// Keeps `report` as call `i`'s latest (replacing an undelivered one), unless it is behind
    /// one already accepted.
    fn put(&self, i: usize, report: ToolProgress) {
        {
            let mut slots = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(slot) = slots.get_mut(i) else {
                return;
            };
            if slot.furthest.is_some_and(|f| report.progress <= f) {
                return;
            }
            slot.furthest = Some(report.progress);
            slot.waiting = Some(report);
        }
        self.arrived.notify_one();
    }

    /// Completes when a report arrived since the last [`ProgressSlots::take`].
    async fn ready(&self) {
        self.arrived.notified().await;
    }

    /// Every undelivered report, by call.
    fn take(&self) -> Vec<(usize, ToolProgress)> {
        self.latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter_mut()
            .enumerate()
            .filter_map(|(i, slot)| Some((i, slot.waiting.take()?)))
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    Run(RiskLevel),
    Deny(String),
    Fail(String),
}

/// The model's argument text as JSON: empty means `{}`; anything invalid is a failure the
/// model reads.
fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(text).map_err(|e| format!("the arguments are not valid JSON: {e}"))
}

/// The conversation as a provider accepts it: every tool call of an assistant message gets
/// exactly one result right after it (a synthetic "not run" result when the session ended
/// before the call finished, e.g. after a crash), and tool results that answer no pending
/// call are dropped.
pub fn repair_history(messages: &[ChatMessage]) -> std::borrow::Cow<'_, [ChatMessage]> {
    if is_well_formed(messages) {
        return std::borrow::Cow::Borrowed(messages);
    }
    let mut out: Vec<ChatMessage> = Vec::with_capacity(messages.len());
    let mut pending: Vec<(String, String)> = Vec::new();
    let close = |out: &mut Vec<ChatMessage>, pending: &mut Vec<(String, String)>| {
        for (id, name) in pending.drain(..) {
            out.push(
                ChatMessage::tool_result(
                    id,
                    name,
                    "Not run: the session ended before this call finished.",
                )
                .with_outcome(CallOutcome::Cancelled),
            );
        }
    };
    for message in messages {
        match message.role {
            Role::Tool => {
                let id = message.tool_call_id.as_deref().unwrap_or_default();
                if let Some(at) = pending.iter().position(|(p, _)| p == id) {
                    pending.remove(at);
                    out.push(message.clone());
                }
            }
            _ => {
                close(&mut out, &mut pending);
                if message.role == Role::Assistant {
                    pending = message
                        .tool_calls
                        .iter()
                        .map(|c| (c.id.clone(), c.name.clone()))
                        .collect();
                }
                out.push(message.clone());
            }
        }
    }
    close(&mut out, &mut pending);
    std::borrow::Cow::Owned(out)
}

/// Whether every tool call is answered exactly once before the next non-tool message, and no
/// tool result answers nothing (the common case: then nothing is copied).
fn is_well_formed(messages: &[ChatMessage]) -> bool {
    let mut pending: Vec<&str> = Vec::new();
    for message in messages {
        if message.role == Role::Tool {
            let id = message.tool_call_id.as_deref().unwrap_or_default();
            match pending.iter().position(|p| *p == id) {
                Some(at) => {
                    pending.remove(at);
                }
                None => return false,
            }
        } else {
            if !pending.is_empty() {
                return false;
            }
            if message.role == Role::Assistant {
                pending = message.tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
        }
    }
    pending.is_empty()
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut_message(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "t".into(),
            arguments: "{}".into(),
        }
    }

    #[test]
    fn progress_only_goes_forward_and_the_latest_waiting_report_wins() {
        let slots = ProgressSlots::new(1);
        let report = |progress: f64| ToolProgress {
            progress,
            total: Some(10.0),
            message: None,
        };
        slots.put(0, report(1.0));
        slots.put(0, report(3.0));
        // Arrived late, behind 3: dropped.
        slots.put(0, report(2.0));
        assert_eq!(slots.take(), vec![(0, report(3.0))]);
        slots.put(0, report(3.0));
        assert!(slots.take().is_empty(), "no repeat of an accepted figure");
        slots.put(0, report(4.0));
        assert_eq!(slots.take(), vec![(0, report(4.0))]);
        slots.put(5, report(1.0));
        assert!(slots.take().is_empty(), "an unknown call is ignored");
    }

    #[test]
    fn histories_cut_by_a_crash_are_repaired() {
        let history = vec![
            ChatMessage::user("go"),
            ChatMessage::assistant("", vec![call("a"), call("b")]),
            ChatMessage::tool_result("b", "t", "done b"),
            // The session ended here: "a" never got a result.
            ChatMessage::user("again"),
            ChatMessage::tool_result("zombie", "t", "answers nothing"),
            ChatMessage::assistant("", vec![call("c")]),
        ];
        let repaired = repair_history(&history).into_owned();
        let shape: Vec<(Role, Option<&str>)> = repaired
            .iter()
            .map(|m| (m.role, m.tool_call_id.as_deref()))
            .collect();
        assert_eq!(
            shape,
            [
                (Role::User, None),
                (Role::Assistant, None),
                (Role::Tool, Some("b")),
                (Role::Tool, Some("a")),
                (Role::User, None),
                (Role::Assistant, None),
                (Role::Tool, Some("c")),
            ]
        );
        assert!(repaired[3].content.starts_with("Not run"));
        // A well-formed history is left as it is.
        assert!(matches!(
            repair_history(&repaired),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
