//! The session engine: a conversation with one model over one fixed [`ToolSet`].
//!
//! [`Session::prompt`] runs the agent loop: model request → tool calls (approved by the gate,
//! read-only calls run concurrently, others one at a time) → results → next request, until the
//! model stops, the iteration budget is spent or the user aborts. Steering messages queued
//! while a prompt runs join the conversation at the next tool-batch seam. Every change to the
//! conversation is appended to the session file unless the session is ephemeral.

mod call_asker;
mod deferral;
pub(crate) use deferral::{search_call, search_spec};
mod events;
mod history;
mod lifecycle;
mod store;
mod system_prompt;
mod tool_batch;
mod turn;

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
    ApprovalAsked, ApprovalDecision, ApprovalFuture, Approver, CallDenied, CallFinished,
    CallOutcome, CallProgress, CallRecord, CallStarted, ContextSnapshot, DenyAll, Discard,
    EventSink, LoopState, Notice, QuestionAnswer, QuestionKind, QuestionRequest, SessionEvent,
    SinkFuture, ToolsChanged, TurnResult, UsageReport,
};
pub use history::repair_history;
pub use store::{
    Entry, LoadedSession, SESSION_FORMAT_VERSION, SESSION_MAX_BYTES, SessionFile, SessionSummary,
    StoreError, UsagePurpose, list as list_sessions, load as load_session, project_dir,
};
pub use system_prompt::system_prompt;
pub use tool_batch::PROGRESS_REPORTS_PER_CALL;

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
    /// The user stopped it (an abort, a stop of the host): not a failure.
    #[error("stopped by the user")]
    Cancelled,
    /// The model request failed.
    #[error(transparent)]
    Provider(ProviderError),
    /// The session file could not be written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Compaction produced nothing usable.
    #[error("compaction failed: {0}")]
    Compaction(String),
    /// The Claude CLI runtime could not start or run.
    #[error(transparent)]
    Claude(crate::claude::ClaudeError),
    /// Reading a session file to resume it stopped unexpectedly (its reader failed).
    #[error("resuming {}: the reader stopped unexpectedly", path.display())]
    ResumeFailed {
        /// The session file.
        path: PathBuf,
    },
}

impl From<ProviderError> for SessionError {
    /// A model request the user stopped is [`SessionError::Cancelled`]; anything else failed.
    fn from(error: ProviderError) -> Self {
        match error {
            ProviderError::Cancelled => Self::Cancelled,
            other => Self::Provider(other),
        }
    }
}

/// Steering messages waiting for the next tool-batch seam. Cloneable: front-ends push while
/// the session runs.
#[derive(Debug, Clone, Default)]
pub struct SteeringQueue(Arc<Steering>);

#[derive(Debug, Default)]
struct Steering {
    messages: Mutex<VecDeque<String>>,
    /// Woken by each push (the Claude runtime passes steering on as it arrives).
    arrived: tokio::sync::Notify,
}

impl SteeringQueue {
    /// Queues `message`.
    pub fn push(&self, message: String) {
        self.messages().push_back(message);
        self.0.arrived.notify_one();
    }

    /// Takes every message waiting, oldest first.
    pub(crate) fn drain(&self) -> Vec<String> {
        self.messages().drain(..).collect()
    }

    /// Takes the messages waiting, once there is at least one. Cancel-safe: nothing is taken
    /// until it returns.
    pub(crate) async fn next_batch(&self) -> Vec<String> {
        loop {
            let batch = self.drain();
            if !batch.is_empty() {
                return batch;
            }
            self.0.arrived.notified().await;
        }
    }

    fn messages(&self) -> std::sync::MutexGuard<'_, VecDeque<String>> {
        self.0
            .messages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Messages waiting.
    pub fn len(&self) -> usize {
        self.messages().len()
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
    #[serde(serialize_with = "rho_component::lossy_path::option::serialize")]
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
    /// The tools digest the resumed file recorded last for each server, until the server's
    /// current one is compared with it ([`Session::report_toolsets`]).
    resumed_digests: std::collections::BTreeMap<String, String>,
    /// Whether the file still has to record every server's current toolset (a new or resumed
    /// session over a tool set whose servers were reported to another session).
    baseline_pending: bool,
    /// The Claude Code session the conversation continues in (the Claude CLI runtime), as the
    /// file last recorded it.
    claude_session: Option<String>,
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
            resumed_digests: std::collections::BTreeMap::new(),
            baseline_pending: false,
            claude_session: None,
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
        session.baseline_pending = true;
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
        let mut session = Self::ephemeral(config, provider, tools);
        session.deferral.restore(loaded.loaded_tools);
        session.context.messages = loaded.messages.len();
        session.messages = loaded.messages;
        session.usage = loaded.usage;
        session.sampling_usage = loaded.sampling_usage;
        session.file = Some(file);
        session.id = Some(loaded.id);
        session.resumed_digests = loaded.toolset_digests;
        session.claude_session = loaded.claude_session;
        session.baseline_pending = true;
        Ok(session)
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

    /// The Claude Code session this conversation continues in (recorded by the Claude CLI
    /// runtime); `None` for a conversation of rho's own runtime.
    pub fn claude_session(&self) -> Option<&str> {
        self.claude_session.as_deref()
    }

    /// Records a turn another runtime (the Claude CLI) ran: its messages join the conversation
    /// and the file, its spend the usage ledger, and `claude_session` (Claude's session id,
    /// when it is known and new) a `claude_session` entry. Everything is kept in memory even
    /// when a write fails; the first failure is returned.
    pub fn record_external_turn(
        &mut self,
        messages: Vec<ChatMessage>,
        usage: Usage,
        claude_session: Option<&str>,
    ) -> Result<(), SessionError> {
        let mut written = Ok(());
        for message in messages {
            let pushed = self.push(message);
            written = written.and(pushed);
        }
        self.context.messages = self.messages.len();
        if usage.request_count > 0 || usage.total_tokens > 0 {
            self.usage.add(&usage);
            let recorded = self.record(&Entry::Usage {
                usage,
                purpose: UsagePurpose::Turn,
            });
            written = written.and(recorded);
        }
        if let Some(id) = claude_session
            && self.claude_session.as_deref() != Some(id)
        {
            self.claude_session = Some(id.to_owned());
            let recorded = self.record(&Entry::ClaudeSession { id: id.to_owned() });
            written = written.and(recorded);
        }
        written
    }

    /// Forgets the conversation (the tool set and model stay).
    pub fn clear(&mut self) -> Result<(), SessionError> {
        self.claude_session = None;
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

    /// The name a person reads for the tool exported as `name` (`ToolSpec::display_name`),
    /// or `name` itself when the session has no such tool (the model made it up).
    fn display_name(&self, name: &str) -> String {
        self.tool(name)
            .map_or_else(|| name.to_owned(), |tool| tool.spec().display_name())
    }

    /// The tool the model calls `name`: the session's `tool_search`, or one of the tool set.
    fn tool(&self, name: &str) -> Option<Arc<dyn rho_component::Tool>> {
        if name == TOOL_SEARCH {
            return Some(self.deferral.tool().clone());
        }
        self.tools.get(name)
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
