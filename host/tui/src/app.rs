//! The interactive session's state and what keys and host events do to it. [`App`] is pure:
//! keys and [`HostEvent`]s go in, [`Operation`]s for the host come out through
//! [`App::take_operations`], and [`App::render`] draws a frame. The event loop
//! (`crate::event_loop`) owns the terminal and the channels.
//!
//! Key precedence: a server's form on a card, then a pending approval (or the view of its
//! arguments, which takes every key but ctrl+c), then an open palette,
//! then the global keys, then the composer.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use rho_component::{ServerResource, SkillMeta, ToolImage, ToolSpec, terminal_safe};
use rho_core::ProviderSource;
use rho_core::host::{
    Extensions, HostEvent, HostState, Operation, PromptCommand, RequestId, Response,
};
use rho_core::provider::{ChatMessage, FinishReason, Role as ChatRole};
use rho_core::session::{
    ApprovalDecision, CallOutcome, ContextSnapshot, LoopState, QuestionAnswer, SessionEvent,
    SessionSummary,
};

use crate::arguments::{ArgumentsView, ViewKey};
use crate::composer::{Composer, Outcome, TokenKind};
use crate::images::{CardImage, Graphics, ImageState};
use crate::palette::{self, Entry, EntryKind, Palette};
use crate::text::width_of;
use crate::theme::{Role, Theme};
use crate::tool_card::{CardState, FormOutcome, FormView, IMAGE_INDENT, ToolCard};
use crate::transcript::{Cell, Transcript};

/// How long a first Ctrl+C or Esc waits for its second press.
const SECOND_PRESS: Duration = Duration::from_secs(2);
/// The composer's most rows.
const COMPOSER_MAX_ROWS: u16 = 10;

/// What an operation's reply is for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Purpose {
    Prompt,
    State,
    Extensions(Report),
    Tools,
    Prompts,
    Resources,
    Sessions,
    Messages,
    Quiet,
    Model,
    Models,
    Compact,
    Session,
    /// Suggestions for one prompt argument.
    Completion(CompletionKey),
    /// A resource read ahead for an attachment: `(server, uri)`.
    Read(String, String),
}

/// What one completion request asks: `(command, argument, value typed so far)`.
type CompletionKey = (String, String, String);

/// Completion answers kept at most (the oldest half goes when full).
const COMPLETION_CACHE: usize = 256;

/// A command whose answer is a report in the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Report {
    /// Only refresh the status line and palettes.
    Silent,
    Mcp,
    Plugins,
    Skills,
    /// `/context`: what the next request costs, by part.
    Context,
}

/// A resource picked with `@` for the next message.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Attachment {
    server: String,
    uri: String,
    /// The host is still reading it.
    reading: bool,
}

/// How a turn ended, for the cards still open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TurnEnd {
    /// The model finished.
    Finished,
    /// The user stopped it.
    Aborted,
    /// It failed.
    Failed,
}

/// What taking a palette row does: one rule for what Enter and Tab do and for what the
/// footer says they do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Take {
    /// A command with nothing to add runs at once.
    Run,
    /// The row's text goes in the message (a command that takes arguments, a skill, a prompt,
    /// a suggestion).
    Insert,
    /// A workspace file's path goes in the message, for the model to read with its tools.
    InsertPath,
    /// A resource template goes in the message, to be filled in.
    InsertTemplate,
    /// A server's resource is read and sent with the next message.
    Attach,
}

impl Take {
    /// What taking `entry` from a `kind` palette does: with Enter when `enter`, else Tab.
    fn of(kind: TokenKind, entry: &Entry, enter: bool) -> Self {
        match (kind, entry.kind) {
            (TokenKind::Slash, EntryKind::Command) if enter && entry.insert != "/model" => {
                Self::Run
            }
            (TokenKind::At, EntryKind::Template) => Self::InsertTemplate,
            (TokenKind::At, EntryKind::File) => Self::InsertPath,
            (TokenKind::At, _) => Self::Attach,
            _ => Self::Insert,
        }
    }

    /// The footer's words for it.
    fn hint(self) -> &'static str {
        match self {
            Self::Run => "runs it",
            Self::Insert => "inserts it",
            Self::InsertPath => "inserts the path",
            Self::InsertTemplate => "inserts the template",
            Self::Attach => "attaches it",
        }
    }
}

/// A key that must be pressed twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Armed {
    /// Ctrl+C on an empty composer with nothing running: again to quit.
    Quit(Instant),
    /// Esc while a turn runs: again to stop it.
    Stop(Instant),
}

/// The session picker of `/resume`.
#[derive(Debug, Clone)]
struct Picker {
    sessions: Vec<SessionSummary>,
    selected: usize,
}

/// The interactive session.
pub struct App {
    theme: Theme,
    transcript: Transcript,
    composer: Composer,
    palette: Option<(TokenKind, Palette)>,
    picker: Option<Picker>,
    state: Option<HostState>,
    context: Option<ContextSnapshot>,
    tokens: u64,
    cost: f64,
    servers: (usize, usize),
    tools: BTreeMap<String, ToolSpec>,
    prompts: Vec<PromptCommand>,
    resources: Vec<(String, ServerResource)>,
    skills: Vec<SkillMeta>,
    loop_state: LoopState,
    running: bool,
    /// The card whose approval is asked, by call id.
    approval: Option<String>,
    /// The composer's text becomes the redirect message of the pending approval.
    redirecting: bool,
    /// The whole arguments of the call waiting for approval, over the conversation (`v`).
    viewing: Option<ArgumentsView>,
    /// Resources picked with `@`, sent with the next message: `(server, uri)`.
    attachments: Vec<Attachment>,
    /// A message sent while an attachment was still being read: it goes once they all are.
    waiting_message: Option<String>,
    armed: Option<Armed>,
    /// Tools the user denied whose `ToolDenied` has not arrived yet.
    user_denials: Vec<String>,
    /// A resumed conversation arrived and has not been drawn yet.
    conversation_loaded: bool,
    /// The user redirected a call of the running turn (its batch was abandoned).
    redirected: bool,
    /// Servers' suggestions for prompt arguments, by what was asked.
    completions: Vec<(CompletionKey, Vec<String>)>,
    /// The completion request in flight (at most one).
    completing: Option<CompletionKey>,
    /// The workspace's files (relative paths), for the `@` palette.
    workspace_files: Vec<String>,
    /// The embedding program's yes/no question on screen, and the answer once given.
    confirm: Option<(String, Vec<String>)>,
    confirm_answer: Option<bool>,
    next_id: RequestId,
    pending: BTreeMap<RequestId, Purpose>,
    outbox: Vec<(RequestId, Operation)>,
    /// The terminal's graphics, when it draws images.
    graphics: Option<Graphics>,
    /// Images to decode and encode off the loop.
    image_jobs: Vec<ImageJob>,
    quit: bool,
}

/// A result's image to decode and encode for the terminal (on a blocking thread).
#[derive(Debug)]
pub struct ImageJob {
    /// The call whose card shows it.
    pub call_id: String,
    graphics: Graphics,
    image: ToolImage,
    columns: u16,
}

impl ImageJob {
    /// Decodes and encodes the image: the call id and the image or why not.
    pub fn run(self) -> (String, Result<CardImage, String>) {
        let result = self.graphics.encode(&self.image, self.columns);
        (self.call_id, result)
    }
}

impl App {
    /// A fresh screen; [`App::start`] asks the host for what it shows.
    pub fn new(theme: Theme) -> Self {
        Self {
            theme,
            transcript: Transcript::default(),
            composer: Composer::default(),
            palette: None,
            picker: None,
            state: None,
            context: None,
            tokens: 0,
            cost: 0.0,
            servers: (0, 0),
            tools: BTreeMap::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            skills: Vec::new(),
            loop_state: LoopState::Idle,
            running: false,
            approval: None,
            redirecting: false,
            viewing: None,
            attachments: Vec::new(),
            waiting_message: None,
            armed: None,
            user_denials: Vec::new(),
            conversation_loaded: false,
            redirected: false,
            completions: Vec::new(),
            completing: None,
            workspace_files: Vec::new(),
            confirm: None,
            confirm_answer: None,
            next_id: 1,
            pending: BTreeMap::new(),
            outbox: Vec::new(),
            graphics: None,
            image_jobs: Vec::new(),
            quit: false,
        }
    }

    /// The terminal's graphics (from [`Graphics::detect`]); results' images are drawn from
    /// now on.
    pub fn set_graphics(&mut self, graphics: Option<Graphics>) {
        self.graphics = graphics;
    }

    /// The images waiting to be encoded.
    pub fn take_image_jobs(&mut self) -> Vec<ImageJob> {
        std::mem::take(&mut self.image_jobs)
    }

    /// An image job finished: the card draws the image, or says why not.
    pub fn image_done(&mut self, call_id: &str, result: Result<CardImage, String>) {
        if let Some(card) = self.transcript.card_mut(|c| c.call_id == call_id) {
            card.image = Some(match result {
                Ok(image) => ImageState::Ready(image),
                Err(reason) => ImageState::Failed(reason),
            });
        }
    }

    /// Asks the host for the state, the extensions, tools, prompts, resources and (for a
    /// resumed session) the conversation so far.
    pub fn start(&mut self, resumed: bool) {
        if !resumed {
            self.transcript.push(Cell::Welcome(Box::default()));
        }
        self.send(Operation::GetState, Purpose::State);
        self.send(
            Operation::ListExtensions,
            Purpose::Extensions(Report::Silent),
        );
        self.send(Operation::ListTools, Purpose::Tools);
        self.send(Operation::ListPrompts, Purpose::Prompts);
        self.send(Operation::ListResources, Purpose::Resources);
        if resumed {
            self.send(Operation::GetMessages, Purpose::Messages);
        }
    }

    /// The operations to send, in order.
    pub fn take_operations(&mut self) -> Vec<(RequestId, Operation)> {
        std::mem::take(&mut self.outbox)
    }

    /// Forgets a "press again" hint whose time is up; whether the screen changed.
    pub fn hint_expired(&mut self) -> bool {
        let expired = match self.armed {
            Some(Armed::Quit(at) | Armed::Stop(at)) => at.elapsed() >= SECOND_PRESS,
            None => false,
        };
        if expired {
            self.armed = None;
        }
        expired
    }

    /// Whether the user asked to leave.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// The conversation (for tests).
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    fn send(&mut self, operation: Operation, purpose: Purpose) {
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(id, purpose);
        self.outbox.push((id, operation));
    }

    /// Shows a yes/no question of the embedding program (`y` yes, `n` or Esc no); the answer
    /// comes out of [`App::take_confirm_answer`].
    pub fn ask_confirm(&mut self, title: &str, details: &[String]) {
        self.confirm = Some((title.to_owned(), details.to_vec()));
    }

    /// The answer to the question on screen, once given.
    pub fn take_confirm_answer(&mut self) -> Option<bool> {
        self.confirm_answer.take()
    }

    /// The workspace's files, listed in the background, for the `@` palette (after the
    /// servers' resources).
    pub fn set_workspace_files(&mut self, files: Vec<String>) {
        self.workspace_files = files;
    }

    /// Shows a notice from outside the session (the embedding program's).
    pub fn show_notice(&mut self, text: String) {
        self.notice(text);
        self.transcript.scroll_to_bottom();
    }

    fn notice(&mut self, text: impl Into<String>) {
        self.transcript.push(Cell::Notice(text.into()));
    }

    fn error(&mut self, text: impl Into<String>) {
        self.transcript.push(Cell::Error(text.into()));
    }

    // ---- host events ----

    /// Applies one event from the host.
    pub fn on_host_event(&mut self, event: HostEvent) {
        match event {
            HostEvent::Session(event) => self.on_session_event(event),
            HostEvent::Reply { id, result } => {
                let purpose = self.pending.remove(&id).unwrap_or(Purpose::Quiet);
                if matches!(purpose, Purpose::Completion(_)) {
                    self.completing = None;
                }
                if let (Purpose::Read(server, uri), Err(error)) = (&purpose, &result) {
                    // A resource that cannot be read leaves the message, with the reason.
                    self.attachments
                        .retain(|a| !(a.server == *server && a.uri == *uri));
                    self.error(format!("{uri} was not attached: {}", error.message));
                    // A message that waited for it comes back to the message box: sending
                    // it without the resource is the user's call.
                    if let Some(text) = self.waiting_message.take() {
                        self.composer.set_text(&text);
                    }
                    return;
                }
                match result {
                    Ok(response) => self.on_response(purpose, response),
                    Err(error) => {
                        if purpose == Purpose::Prompt {
                            self.end_turn(TurnEnd::Failed);
                            // The host reported it as the turn's error already.
                            if matches!(self.transcript.last(), Some(Cell::Error(shown)) if *shown == error.message)
                            {
                                return;
                            }
                        }
                        self.error(error.message);
                    }
                }
            }
        }
    }

    fn on_session_event(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::AgentStart => self.running = true,
            SessionEvent::StateChange(state) => self.loop_state = state,
            SessionEvent::MessageDelta(text) | SessionEvent::ReasoningDelta(text)
                if text.is_empty() => {}
            SessionEvent::MessageDelta(text) => {
                if let Some(Cell::Assistant(message)) = self.transcript.last_mut() {
                    message.push_str(&text);
                } else {
                    self.transcript.push(Cell::Assistant(text));
                }
            }
            SessionEvent::ReasoningDelta(text) => {
                if let Some(Cell::Reasoning { text: so_far, .. }) = self.transcript.last_mut() {
                    so_far.push_str(&text);
                } else {
                    self.transcript.push(Cell::Reasoning {
                        text,
                        expanded: false,
                    });
                }
            }
            SessionEvent::ToolCall {
                call_id,
                name,
                arguments,
                ..
            } => {
                let card = ToolCard::new(&call_id, &name, &arguments, self.tools.get(&name));
                self.transcript.push(Cell::Tool(Box::new(card)));
            }
            SessionEvent::ApprovalRequest {
                tool,
                arguments,
                risk,
                ..
            } => {
                let card = self.transcript.first_card_mut(|c| {
                    c.state == CardState::Requested && c.name == tool && c.arguments == arguments
                });
                if let Some(card) = card {
                    card.state = CardState::AwaitingApproval { risk };
                    self.approval = Some(card.call_id.clone());
                } else {
                    // No card to ask on (should not happen): ask on a new one.
                    let mut card = ToolCard::new("", &tool, &arguments, self.tools.get(&tool));
                    card.state = CardState::AwaitingApproval { risk };
                    self.approval = Some(String::new());
                    self.transcript.push(Cell::Tool(Box::new(card)));
                }
                self.transcript.scroll_to_bottom();
            }
            SessionEvent::ToolDenied { name, .. } => {
                // A denial the user just gave is already on its card; any other (the
                // permission mode's) goes on the first undecided card of that tool.
                if let Some(at) = self.user_denials.iter().position(|n| *n == name) {
                    self.user_denials.remove(at);
                } else if let Some(card) = self
                    .transcript
                    .first_card_mut(|c| c.name == name && c.state == CardState::Requested)
                {
                    card.state = CardState::Denied;
                }
            }
            SessionEvent::ToolProgress {
                call_id,
                progress,
                total,
                message,
                ..
            } => {
                if let Some(card) = self.transcript.card_mut(|c| c.call_id == call_id) {
                    card.state = CardState::Running {
                        progress: Some((progress, total, message)),
                    };
                }
            }
            SessionEvent::ToolResult {
                call_id,
                outcome,
                output,
                image,
                ..
            } => {
                let columns = self.transcript.width().saturating_sub(2 * IMAGE_INDENT);
                if let Some(card) = self.transcript.card_mut(|c| c.call_id == call_id) {
                    card.question = None;
                    if card.state != CardState::Denied {
                        card.state = CardState::ended(&outcome, output);
                        if let (Some(image), Some(graphics)) = (image, &self.graphics) {
                            card.image = Some(ImageState::Drawing);
                            self.image_jobs.push(ImageJob {
                                call_id,
                                graphics: graphics.clone(),
                                image,
                                columns,
                            });
                        }
                    }
                }
            }
            SessionEvent::Usage { usage, context, .. } => {
                self.tokens += usage.total_tokens;
                self.cost += usage.total_cost;
                self.context = Some(context);
            }
            SessionEvent::AgentEnd(result) => {
                let end = match result.finish_reason {
                    FinishReason::Aborted => TurnEnd::Aborted,
                    _ => TurnEnd::Finished,
                };
                self.end_turn(end);
                match &result.finish_reason {
                    FinishReason::Stop => {}
                    FinishReason::Aborted => self.notice("stopped"),
                    FinishReason::ToolCalls | FinishReason::MaxIterations => self.notice(
                        "the turn ended: its budget of model requests ([agent] max_iterations) \
                         ran out",
                    ),
                    other => self.notice(format!("the turn ended: {other}")),
                }
            }
            SessionEvent::AgentError(message) => {
                self.end_turn(TurnEnd::Failed);
                self.error(message);
            }
            SessionEvent::ToolsChanged(changed) => {
                let mut parts = Vec::new();
                for (what, names) in [
                    ("added", &changed.added),
                    ("withdrawn", &changed.withdrawn),
                    ("revised", &changed.revised),
                ] {
                    if !names.is_empty() {
                        parts.push(format!("{what}: {}", names.join(", ")));
                    }
                }
                self.notice(format!(
                    "MCP server {} changed its tools; {}",
                    changed.server,
                    parts.join("; ")
                ));
            }
            SessionEvent::ServerRestart(restart) => match restart.gave_up {
                Some(gave_up) => self.error(gave_up),
                None => self.notice(format!(
                    "MCP server {} started again ({}): {}",
                    restart.server, restart.restarts, restart.reason
                )),
            },
            SessionEvent::Question(request) => {
                let id = request.id;
                let call_id = request.call_id.clone();
                if let Some(card) = self.transcript.card_mut(|c| c.call_id == call_id) {
                    card.question = Some(FormView::new(request));
                } else {
                    // Not on a card we know: decline rather than guess.
                    self.send(
                        Operation::AnswerQuestion {
                            question: id,
                            answer: QuestionAnswer::Decline,
                        },
                        Purpose::Quiet,
                    );
                }
                self.transcript.scroll_to_bottom();
            }
        }
        // A tool that started running: the card says so.
        if self.loop_state == LoopState::ExecutingTool {
            self.transcript.update_cards(|card| {
                let start = card.state == CardState::Requested;
                if start {
                    card.state = CardState::Running { progress: None };
                }
                start
            });
        }
    }

    fn on_response(&mut self, purpose: Purpose, response: Response) {
        match (purpose, response) {
            (Purpose::Prompt, Response::Prompt(_)) => self.running = false,
            (_, Response::State(state)) => {
                if let Some(welcome) = self.transcript.welcome_mut() {
                    welcome.set_state(&state);
                }
                self.state = Some(state);
            }
            (Purpose::Extensions(report), Response::Extensions(extensions)) => {
                self.on_extensions(report, &extensions);
            }
            (_, Response::Tools(tools)) => {
                if let Some(welcome) = self.transcript.welcome_mut() {
                    welcome.set_tools(tools.len());
                }
                self.tools = tools.into_iter().map(|t| (t.name.clone(), t)).collect();
            }
            (_, Response::Prompts(prompts)) => self.prompts = prompts,
            (_, Response::Resources(resources)) => self.resources = resources,
            (_, Response::Sessions(sessions)) => {
                if sessions.is_empty() {
                    self.notice("no saved session of this project yet");
                } else {
                    self.picker = Some(Picker {
                        sessions,
                        selected: 0,
                    });
                }
            }
            (_, Response::Messages(messages)) => self.show_messages(&messages),
            (_, Response::Model { model, provider }) => {
                self.notice(format!("model: {model} ({provider})"));
                self.send(Operation::GetState, Purpose::State);
            }
            (_, Response::Models { models, errors }) => {
                let mut text = String::from("models (switch with /model <id>):");
                for model in &models {
                    text.push_str(&format!("\n  {} · {}", model.id, model.provider));
                }
                for (provider, error) in &errors {
                    text.push_str(&format!("\n  {provider}: {error}"));
                }
                self.notice(text);
            }
            (Purpose::Read(server, uri), Response::ResourceRead { .. }) => {
                for attachment in &mut self.attachments {
                    if attachment.server == server && attachment.uri == uri {
                        attachment.reading = false;
                    }
                }
                self.send_waiting_message();
            }
            (Purpose::Completion(key), Response::Completions(values)) => {
                self.completing = None;
                if self.completions.len() >= COMPLETION_CACHE {
                    self.completions.drain(..COMPLETION_CACHE / 2);
                }
                self.completions.push((key, values));
                self.update_palette();
            }
            (_, Response::Doctor(checks)) => self.notice(crate::reports::doctor(&checks)),
            (_, Response::Compacted(_)) => self.notice("the history was replaced by a summary"),
            (_, Response::Session(info)) => {
                self.transcript.clear();
                self.context = None;
                self.send(Operation::GetState, Purpose::State);
                if info.messages > 0 {
                    self.send(Operation::GetMessages, Purpose::Messages);
                } else {
                    self.notice("a new session");
                }
            }
            _ => {}
        }
    }

    fn on_extensions(&mut self, report: Report, extensions: &Extensions) {
        let up = extensions
            .servers
            .iter()
            .filter(|s| s.status().offers_tools())
            .count();
        let failed = extensions
            .servers
            .iter()
            .filter(|s| s.status().as_str() == "failed")
            .count();
        self.servers = (up, failed);
        self.skills = extensions.skills.clone();
        if let Some(welcome) = self.transcript.welcome_mut() {
            welcome.set_extensions(extensions);
        }
        let text = match report {
            Report::Silent => {
                if failed > 0 {
                    self.notice(format!(
                        "{failed} MCP server{} failed to start; /mcp says why",
                        if failed == 1 { "" } else { "s" }
                    ));
                }
                return;
            }
            Report::Mcp => crate::reports::mcp(extensions, &self.prompts, &self.resources),
            Report::Plugins => crate::reports::plugins(extensions),
            Report::Skills => crate::reports::skills(extensions),
            Report::Context => crate::reports::context(&extensions.context),
        };
        self.notice(text);
    }

    /// Whether a resumed conversation arrived since the last call (for the timing log).
    pub fn take_conversation_loaded(&mut self) -> bool {
        std::mem::take(&mut self.conversation_loaded)
    }

    /// Rebuilds the conversation from the host's messages (a resumed session).
    fn show_messages(&mut self, messages: &[ChatMessage]) {
        self.conversation_loaded = true;
        self.transcript.clear();
        for message in messages {
            match message.role {
                ChatRole::System => {}
                ChatRole::User => self.transcript.push(Cell::User(message.content.clone())),
                ChatRole::Assistant => {
                    if !message.content.trim().is_empty() {
                        self.transcript
                            .push(Cell::Assistant(message.content.clone()));
                    }
                    for call in &message.tool_calls {
                        let card = ToolCard::new(
                            &call.id,
                            &call.name,
                            &call.arguments,
                            self.tools.get(&call.name),
                        );
                        self.transcript.push(Cell::Tool(Box::new(card)));
                    }
                }
                ChatRole::Tool => {
                    let Some(id) = &message.tool_call_id else {
                        continue;
                    };
                    if let Some(card) = self.transcript.card_mut(|c| &c.call_id == id) {
                        // A session file written before rho kept outcomes says nothing: the
                        // call is shown as finished.
                        let outcome = message.outcome.as_ref().unwrap_or(&CallOutcome::Success);
                        card.state = CardState::ended(outcome, message.content.clone());
                    }
                }
            }
        }
        self.transcript.update_cards(|card| {
            let open = !card.is_finished();
            if open {
                card.state = CardState::Cancelled { output: None };
            }
            open
        });
    }

    /// A turn is over: nothing is asked any more, and every card still open says why it
    /// did not run.
    fn end_turn(&mut self, end: TurnEnd) {
        self.running = false;
        self.approval = None;
        self.viewing = None;
        self.redirecting = false;
        let redirected = std::mem::take(&mut self.redirected);
        self.transcript.update_cards(|card| {
            let open = !card.is_finished() || card.question.is_some();
            card.question = None;
            if !card.is_finished() {
                card.state = match end {
                    TurnEnd::Finished if redirected => CardState::Redirected,
                    _ => CardState::Cancelled { output: None },
                };
            }
            open
        });
    }

    // ---- keys ----

    /// Applies a pasted text (bracketed paste).
    pub fn on_paste(&mut self, text: &str) {
        if self.composer.paste(text) {
            self.update_palette();
        } else {
            self.error("the paste is too large for the message box (1 MiB at most)");
        }
    }

    /// Applies one key.
    pub fn on_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        if self.confirm_key(key) {
            return;
        }
        if self.form_key(key) || self.approval_key(key) || self.picker_key(key) {
            return;
        }
        if self.palette_key(key) || self.global_key(key) {
            return;
        }
        match self.composer.handle_key(key) {
            Outcome::Submitted(text) => self.submit(text),
            Outcome::Changed => {
                self.armed = None;
                self.update_palette();
            }
            Outcome::Unchanged | Outcome::Ignored => {}
        }
    }

    fn confirm_key(&mut self, key: KeyEvent) -> bool {
        if self.confirm.is_none() {
            return false;
        }
        let answer = match key.code {
            KeyCode::Char('y') => Some(true),
            KeyCode::Char('n') | KeyCode::Esc => Some(false),
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.quit = true;
                Some(false)
            }
            _ => None,
        };
        if let Some(answer) = answer {
            if let Some((title, _)) = self.confirm.take() {
                let said = if answer { "yes" } else { "no" };
                self.notice(format!("{title} {said}"));
            }
            self.confirm_answer = Some(answer);
        }
        true
    }

    /// Keys that work whatever is asked: scrolling, and ctrl+c to stop the turn.
    fn passes_through(key: &KeyEvent) -> bool {
        matches!(key.code, KeyCode::PageUp | KeyCode::PageDown)
            || (key.code == KeyCode::End && key.modifiers.contains(KeyModifiers::CONTROL))
            || (key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL))
    }

    fn form_key(&mut self, key: KeyEvent) -> bool {
        if Self::passes_through(&key) {
            return false;
        }
        let mut answer = None;
        let card = self.transcript.card_mut(|c| c.question.is_some());
        let Some(card) = card else { return false };
        let Some(form) = card.question.as_mut() else {
            return false;
        };
        match form.key(key) {
            FormOutcome::Editing => {}
            FormOutcome::Accept(values) => {
                answer = Some((form.request.id, QuestionAnswer::Accept(values)))
            }
            FormOutcome::Decline => answer = Some((form.request.id, QuestionAnswer::Decline)),
            FormOutcome::Cancel => answer = Some((form.request.id, QuestionAnswer::Cancel)),
        }
        if let Some((question, answer)) = answer {
            card.question = None;
            self.send(
                Operation::AnswerQuestion { question, answer },
                Purpose::Quiet,
            );
        }
        true
    }

    fn approval_key(&mut self, key: KeyEvent) -> bool {
        let Some(call_id) = self.approval.clone() else {
            return false;
        };
        if self.redirecting {
            match key.code {
                KeyCode::Esc => {
                    self.redirecting = false;
                    return true;
                }
                _ => return false,
            }
        }
        // The whole arguments: the view takes every key but ctrl+c (which still stops the
        // turn). The question is answered on the card, where it can be read: `y` and `n` do
        // nothing here.
        if let Some(view) = self.viewing.as_mut() {
            if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
                return false;
            }
            if view.key(key) == ViewKey::Close {
                self.viewing = None;
            }
            return true;
        }
        if Self::passes_through(&key) {
            return false;
        }
        let decision = match key.code {
            KeyCode::Char('v') => {
                let card = self.transcript.cells().find_map(|c| match c {
                    Cell::Tool(card) if card.call_id == call_id => Some(card),
                    _ => None,
                });
                if let Some(card) = card {
                    self.viewing = Some(ArgumentsView::new(
                        &card.call_id,
                        &card.label,
                        &card.arguments,
                    ));
                }
                None
            }
            KeyCode::Char('y') => Some(ApprovalDecision::Approve),
            KeyCode::Char('a') => Some(ApprovalDecision::ApproveForSession),
            KeyCode::Char('n') | KeyCode::Esc => Some(ApprovalDecision::Deny),
            KeyCode::Char('r') => {
                self.redirecting = true;
                None
            }
            _ => None,
        };
        if let Some(decision) = decision {
            self.decide(&call_id, decision);
        }
        true
    }

    fn decide(&mut self, call_id: &str, decision: ApprovalDecision) {
        if let Some(card) = self.transcript.card_mut(|c| c.call_id == call_id) {
            if decision == ApprovalDecision::Deny {
                self.user_denials.push(card.name.clone());
            }
            if matches!(decision, ApprovalDecision::Redirect(_)) {
                self.redirected = true;
            }
            card.state = match decision {
                ApprovalDecision::Deny => CardState::Denied,
                ApprovalDecision::Redirect(_) => CardState::Redirected,
                _ => CardState::Running { progress: None },
            };
        }
        self.approval = None;
        self.viewing = None;
        self.redirecting = false;
        self.send(Operation::AnswerApproval(decision), Purpose::Quiet);
    }

    fn picker_key(&mut self, key: KeyEvent) -> bool {
        let Some(picker) = self.picker.as_mut() else {
            return false;
        };
        match key.code {
            KeyCode::Up => picker.selected = picker.selected.saturating_sub(1),
            KeyCode::Down => {
                picker.selected =
                    (picker.selected + 1).min(picker.sessions.len().saturating_sub(1));
            }
            KeyCode::Esc => self.picker = None,
            KeyCode::Enter => {
                let path = picker.sessions.get(picker.selected).map(|s| s.path.clone());
                self.picker = None;
                if let Some(path) = path {
                    self.send(Operation::ResumeSession(path), Purpose::Session);
                }
            }
            _ => {}
        }
        true
    }

    fn palette_key(&mut self, key: KeyEvent) -> bool {
        let Some((kind, palette)) = self.palette.as_mut() else {
            return false;
        };
        match key.code {
            KeyCode::Up => palette.move_selection(false),
            KeyCode::Down => palette.move_selection(true),
            KeyCode::Esc => self.palette = None,
            // Suggestions for an argument are taken with Tab; Enter still sends the message.
            KeyCode::Enter if *kind == TokenKind::Word => {
                self.palette = None;
                return false;
            }
            KeyCode::Tab | KeyCode::Enter => {
                let kind = *kind;
                let Some(entry) = palette.selected().cloned() else {
                    self.palette = None;
                    return key.code == KeyCode::Tab;
                };
                self.palette = None;
                self.accept_entry(kind, &entry, key.code == KeyCode::Enter);
            }
            _ => return false,
        }
        true
    }

    fn accept_entry(&mut self, kind: TokenKind, entry: &Entry, enter: bool) {
        let token = match (kind, self.composer.token_at_cursor()) {
            (TokenKind::Word, _) => None,
            (_, Some(token)) => Some(token),
            (_, None) => return,
        };
        let token = token.unwrap_or_else(|| crate::composer::Token {
            kind: TokenKind::Word,
            start: 0,
            end: 0,
            text: String::new(),
        });
        match Take::of(kind, entry, enter) {
            Take::Run => {
                self.composer.clear();
                self.submit(entry.insert.clone());
            }
            Take::Insert if kind == TokenKind::Word => {
                let Some(word) = self.composer.word_at_cursor() else {
                    return;
                };
                let with = match entry.kind {
                    EntryKind::Argument => entry.insert.clone(),
                    _ => format!("{} ", entry.insert),
                };
                self.composer.replace_token(&word, &with);
                self.update_palette();
            }
            Take::Insert => {
                self.composer
                    .replace_token(&token, &format!("{} ", entry.insert));
            }
            Take::InsertTemplate => {
                self.composer.replace_token(&token, &entry.insert);
            }
            Take::InsertPath => {
                self.composer
                    .replace_token(&token, &format!("@{} ", entry.insert));
            }
            Take::Attach => {
                self.composer.replace_token(&token, "");
                if let Some(server) = &entry.server {
                    let known = self
                        .attachments
                        .iter()
                        .any(|a| a.server == *server && a.uri == entry.insert);
                    if !known {
                        self.attachments.push(Attachment {
                            server: server.clone(),
                            uri: entry.insert.clone(),
                            reading: true,
                        });
                        self.send(
                            Operation::ReadResource {
                                server: server.clone(),
                                uri: entry.insert.clone(),
                            },
                            Purpose::Read(server.clone(), entry.insert.clone()),
                        );
                    }
                }
            }
        }
    }

    fn update_palette(&mut self) {
        let Some(token) = self.composer.token_at_cursor() else {
            self.palette = self
                .argument_entries()
                .filter(|entries| !entries.is_empty())
                .map(|entries| (TokenKind::Word, Palette::new(entries, "")));
            return;
        };
        let query = token.text.trim_start_matches(['/', '@']).to_owned();
        if let Some((kind, palette)) = self.palette.as_mut()
            && *kind == token.kind
        {
            palette.filter(&query);
            return;
        }
        let entries = match token.kind {
            TokenKind::Slash => self.slash_entries(),
            TokenKind::At => self.resource_entries(),
            TokenKind::Word => Vec::new(),
        };
        self.palette = Some((token.kind, Palette::new(entries, &query)));
    }

    fn slash_entries(&self) -> Vec<Entry> {
        let mut entries = palette::command_entries();
        entries.extend(self.prompts.iter().map(|p| Entry {
            insert: p.command.clone(),
            description: p.prompt.description.clone().unwrap_or_default(),
            kind: EntryKind::Prompt,
            server: Some(p.server.clone()),
        }));
        entries.extend(self.skills.iter().map(|s| Entry {
            insert: format!("/{}", s.name),
            description: s.description.clone(),
            kind: EntryKind::Skill,
            server: None,
        }));
        entries
    }

    /// For the word at the cursor after a prompt command: the arguments not given yet, or
    /// the server's suggestions for the value being typed (`name=va…`; for a prompt of one
    /// argument, the word itself). Suggestions come from the cache; a miss asks the server
    /// (one request at a time, never waited for) and shows what arrives.
    fn argument_entries(&mut self) -> Option<Vec<Entry>> {
        let word = self.composer.word_at_cursor()?;
        let buffer = self.composer.buffer().to_owned();
        let command = buffer.split_whitespace().next()?.to_owned();
        if word.start == 0 || !command.starts_with(rho_core::host::PROMPT_COMMAND_PREFIX) {
            return None;
        }
        let prompt = self.prompts.iter().find(|p| p.command == command)?.clone();
        let arguments = &prompt.prompt.arguments;
        let (argument, value, prefix) = match (word.text.split_once('='), arguments.as_slice()) {
            (Some((name, value)), _) => (name.to_owned(), value.to_owned(), format!("{name}=")),
            (None, [only]) => (only.name.clone(), word.text.clone(), String::new()),
            (None, _) => {
                // Argument names not given yet.
                let given: Vec<&str> = buffer
                    .split_whitespace()
                    .filter_map(|w| w.split_once('=').map(|(k, _)| k))
                    .collect();
                return Some(
                    arguments
                        .iter()
                        .filter(|a| !given.contains(&a.name.as_str()))
                        .filter(|a| a.name.starts_with(&word.text))
                        .map(|a| Entry {
                            insert: format!("{}=", a.name),
                            description: format!(
                                "{}{}",
                                if a.required { "required · " } else { "" },
                                a.description.clone().unwrap_or_default()
                            ),
                            kind: EntryKind::Argument,
                            server: Some(prompt.server.clone()),
                        })
                        .collect(),
                );
            }
        };
        if !arguments.iter().any(|a| a.name == argument) {
            return None;
        }
        let key = (command.clone(), argument.clone(), value.clone());
        let Some(values) = self
            .completions
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
        else {
            if self.completing.is_none() {
                let others = buffer
                    .split_whitespace()
                    .skip(1)
                    .filter_map(|w| w.split_once('='))
                    .filter(|(k, _)| *k != argument)
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect();
                self.completing = Some(key.clone());
                self.send(
                    Operation::Complete {
                        command,
                        argument,
                        value,
                        arguments: others,
                    },
                    Purpose::Completion(key),
                );
            }
            return Some(Vec::new());
        };
        Some(
            values
                .into_iter()
                .map(|v| Entry {
                    insert: format!("{prefix}{v}"),
                    description: format!("suggested by {}", prompt.server),
                    kind: EntryKind::Value,
                    server: Some(prompt.server.clone()),
                })
                .collect(),
        )
    }

    fn resource_entries(&self) -> Vec<Entry> {
        let files = self.workspace_files.iter().map(|path| Entry {
            insert: path.clone(),
            description: "file".to_owned(),
            kind: EntryKind::File,
            server: None,
        });
        self.resources
            .iter()
            .map(|(server, resource)| Entry {
                insert: resource.uri.clone(),
                description: format!("{server} · {}", resource.name),
                kind: if resource.template {
                    EntryKind::Template
                } else {
                    EntryKind::Resource
                },
                server: Some(server.clone()),
            })
            .chain(files)
            .collect()
    }

    fn global_key(&mut self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let now = Instant::now();
        let armed = self.armed.take();
        match key.code {
            KeyCode::Char('c') if ctrl => {
                if !self.composer.is_empty() {
                    let draft = self.composer.take();
                    drop(draft);
                } else if self.running {
                    self.send(Operation::Abort, Purpose::Quiet);
                } else if matches!(armed, Some(Armed::Quit(at)) if now - at < SECOND_PRESS) {
                    self.quit = true;
                } else {
                    self.armed = Some(Armed::Quit(now));
                }
            }
            KeyCode::Char('d') if ctrl && self.composer.is_empty() => self.quit = true,
            KeyCode::Esc if self.running => {
                if matches!(armed, Some(Armed::Stop(at)) if now - at < SECOND_PRESS) {
                    self.send(Operation::Abort, Purpose::Quiet);
                } else {
                    self.armed = Some(Armed::Stop(now));
                }
            }
            KeyCode::Esc if !self.attachments.is_empty() => {
                self.attachments.clear();
                self.send_waiting_message();
            }
            KeyCode::PageUp => {
                let page = self.transcript.page();
                self.transcript.scroll_up(page, &self.theme);
            }
            KeyCode::PageDown => {
                let page = self.transcript.page();
                self.transcript.scroll_down(page, &self.theme);
            }
            KeyCode::End if ctrl => self.transcript.scroll_to_bottom(),
            KeyCode::Char('o') if ctrl => {
                let expand = self
                    .transcript
                    .cells()
                    .any(|c| matches!(c, Cell::Tool(card) if !card.expanded));
                self.transcript.update_cards(|card| {
                    let changed = card.expanded != expand;
                    card.expanded = expand;
                    changed
                });
            }
            KeyCode::Char('r') if ctrl => {
                self.transcript.for_each_mut(|cell| {
                    if let Cell::Reasoning { expanded, .. } = cell {
                        *expanded = !*expanded;
                    }
                });
            }
            KeyCode::Backspace if self.composer.is_empty() && !self.attachments.is_empty() => {
                self.attachments.pop();
                self.send_waiting_message();
            }
            _ => {
                self.armed = armed;
                return false;
            }
        }
        true
    }

    /// Sends the message that waited for its attachments, once none is being read.
    fn send_waiting_message(&mut self) {
        if self.attachments.iter().any(|a| a.reading) {
            return;
        }
        if let Some(text) = self.waiting_message.take() {
            self.submit(text);
        }
    }

    /// What Enter sends: a redirect, a steer, a command, or a prompt.
    fn submit(&mut self, text: String) {
        self.palette = None;
        if self.redirecting {
            if let Some(call_id) = self.approval.clone() {
                self.decide(&call_id, ApprovalDecision::Redirect(text));
            }
            return;
        }
        // rho's own commands run whatever the model is doing (the host queues those that
        // change the session behind the running turn).
        let trimmed = text.trim();
        let word = trimmed.split_whitespace().next().unwrap_or_default();
        if palette::COMMANDS.iter().any(|(name, _)| *name == word) {
            let rest = trimmed[word.len()..].trim().to_owned();
            self.command(word, &rest);
            return;
        }
        if self.running {
            self.transcript.push(Cell::User(text.clone()));
            self.send(Operation::Steer(text), Purpose::Quiet);
            return;
        }
        if self.attachments.iter().any(|a| a.reading) {
            // Sent once every attachment is read (or dropped for failing).
            self.waiting_message = Some(text);
            return;
        }
        let mut shown = text.trim_end().to_owned();
        for attachment in &self.attachments {
            shown.push_str(&format!(" [resource: {}]", attachment.uri));
        }
        self.transcript.push(Cell::User(shown));
        self.transcript.scroll_to_bottom();
        let text = self.skill_message(text.trim_end().to_owned());
        let attachments = std::mem::take(&mut self.attachments)
            .into_iter()
            .map(|a| (a.server, a.uri))
            .collect();
        self.running = true;
        self.send(
            Operation::Prompt {
                message: text,
                attachments,
            },
            Purpose::Prompt,
        );
    }

    /// `/<skill> rest` asks the model to use that skill (it reads the skill's instructions
    /// through its skill tool); any other text is sent as typed.
    fn skill_message(&self, text: String) -> String {
        let trimmed = text.trim_start();
        let word = trimmed.split_whitespace().next().unwrap_or_default();
        let Some(name) = word.strip_prefix('/') else {
            return text;
        };
        if !self.skills.iter().any(|s| s.name == name) {
            return text;
        }
        let rest = trimmed[word.len()..].trim();
        if rest.is_empty() {
            format!("Use the `{name}` skill.")
        } else {
            format!("Use the `{name}` skill. {rest}")
        }
    }

    fn command(&mut self, name: &str, rest: &str) {
        match name {
            "/help" => self.notice(crate::reports::help()),
            "/mcp" => self.send(Operation::ListExtensions, Purpose::Extensions(Report::Mcp)),
            "/doctor" => self.send(Operation::Doctor, Purpose::Quiet),
            "/context" => self.send(
                Operation::ListExtensions,
                Purpose::Extensions(Report::Context),
            ),
            "/plugins" => self.send(
                Operation::ListExtensions,
                Purpose::Extensions(Report::Plugins),
            ),
            "/skills" => self.send(
                Operation::ListExtensions,
                Purpose::Extensions(Report::Skills),
            ),
            "/tools" => {
                let text = crate::reports::tools(self.tools.values());
                self.notice(text);
            }
            "/model" if rest.is_empty() => self.send(Operation::ListModels, Purpose::Models),
            "/model" => self.send(Operation::SetModel(rest.to_owned()), Purpose::Model),
            "/new" => self.send(Operation::NewSession, Purpose::Session),
            "/resume" => self.send(Operation::ListSessions, Purpose::Sessions),
            "/compact" => self.send(Operation::Compact, Purpose::Compact),
            "/clear" => {
                self.transcript.clear();
                self.context = None;
                self.send(Operation::Clear, Purpose::Quiet);
            }
            "/quit" => self.quit = true,
            _ => {}
        }
    }

    // ---- drawing ----

    /// Draws the whole screen.
    pub fn render(&mut self, frame: &mut Frame<'_>) {
        let area = frame.area();
        let theme = self.theme;
        let composer_rows = self.composer.desired_height(area.width).clamp(
            1,
            COMPOSER_MAX_ROWS.min(area.height.saturating_sub(3).max(1)),
        );
        let chips = u16::from(!self.attachments.is_empty());
        let [body, chips_area, composer_area, footer, status] = Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(chips),
            Constraint::Length(composer_rows),
            Constraint::Length(1),
            Constraint::Length(1),
        ])
        .areas(area);
        let buf = frame.buffer_mut();
        self.transcript.render(body, buf, &theme);
        // A view of a call no longer asked about (answered, the turn stopped) is gone.
        if self.viewing.as_ref().map(|v| &v.call_id) != self.approval.as_ref() || self.redirecting {
            self.viewing = None;
        }
        if let Some(view) = self.viewing.as_mut() {
            view.render(body, buf, &theme);
        }
        if let Some((_, palette)) = &self.palette {
            let height = palette.height().min(body.height);
            let popup = Rect::new(body.x, body.bottom() - height, body.width, height);
            palette.render(popup, buf, &theme);
        }
        if let Some(picker) = &self.picker {
            render_picker(picker, body, buf, &theme);
        }
        if let Some((title, details)) = &self.confirm {
            render_confirm(title, details, body, buf, &theme);
        }
        if chips > 0 {
            let text: Vec<String> = self
                .attachments
                .iter()
                .map(|a| {
                    let reading = if a.reading { " · reading" } else { "" };
                    format!("[resource: {}{reading}]", terminal_safe(&a.uri))
                })
                .collect();
            let line = Line::from(vec![
                Span::styled(text.join(" "), theme.style(Role::Accent)),
                Span::styled(
                    "  backspace on an empty line removes · esc removes all",
                    theme.style(Role::Dim),
                ),
            ]);
            buf.set_line(chips_area.x, chips_area.y, &line, chips_area.width);
        }
        let cursor = self.composer.render(composer_area, buf, &theme);
        buf.set_line(
            footer.x,
            footer.y,
            &self.footer_line(footer.width),
            footer.width,
        );
        buf.set_line(
            status.x,
            status.y,
            &self.status_line(status.width),
            status.width,
        );
        let busy = self.approval.is_some() && !self.redirecting
            || self
                .transcript
                .cells()
                .any(|c| matches!(c, Cell::Tool(card) if card.question.is_some()));
        if let Some(cursor) =
            cursor.filter(|_| !busy && self.picker.is_none() && self.confirm.is_none())
        {
            frame.set_cursor_position(cursor);
        }
    }

    fn form_open(&self) -> bool {
        self.transcript
            .cells()
            .any(|c| matches!(c, Cell::Tool(card) if card.question.is_some()))
    }

    fn footer_line(&self, width: u16) -> Line<'static> {
        let theme = &self.theme;
        let hint = match self.armed {
            Some(Armed::Quit(_)) => "ctrl+c again to quit".to_owned(),
            Some(Armed::Stop(_)) => "esc again to stop the turn".to_owned(),
            None if self.confirm.is_some() => "answer the question above: y or n".to_owned(),
            None if self.waiting_message.is_some() => {
                "the message goes once its attachments are read · backspace drops one".to_owned()
            }
            None if self.redirecting => {
                "type what the model should do instead · enter sends · esc back".to_owned()
            }
            None if self.viewing.is_some() => {
                "↑/↓ pgup/pgdn home/end scroll · q or esc back to the question".to_owned()
            }
            None if self.approval.is_some() => {
                "answer on the card · v all arguments · pgup/pgdn scroll · ctrl+c stops the turn"
                    .to_owned()
            }
            None if self.form_open() => {
                "a server asks: answer on the card · pgup/pgdn scroll · ctrl+c stops the turn"
                    .to_owned()
            }
            None if matches!(self.palette, Some((TokenKind::Word, _))) => {
                "↑/↓ choose · tab takes a suggestion · enter sends · esc close".to_owned()
            }
            None if self.palette.is_some() => self.palette_hint(),
            None if self.running => format!(
                "{} · enter steers · esc esc stops",
                match self.loop_state {
                    LoopState::Thinking => "thinking",
                    LoopState::ExecutingTool => "running tools",
                    LoopState::AwaitingApproval => "waiting for approval",
                    LoopState::Idle => "working",
                }
            ),
            None => "enter send · ctrl+j newline · / commands · @ resources · pgup/pgdn scroll"
                .to_owned(),
        };
        Line::from(Span::styled(
            format!(" {}", fit_hint(&hint, usize::from(width).saturating_sub(1))),
            theme.style(Role::Dim),
        ))
    }

    /// What the keys of the open palette do, for its selected row.
    fn palette_hint(&self) -> String {
        match &self.palette {
            Some((kind, palette)) => match palette.selected() {
                Some(entry) => format!(
                    "↑/↓ choose · enter {} · tab {} · esc close",
                    Take::of(*kind, entry, true).hint(),
                    Take::of(*kind, entry, false).hint()
                ),
                None => "no match · esc close".to_owned(),
            },
            None => String::new(),
        }
    }

    fn status_line(&self, width: u16) -> Line<'static> {
        let mut parts = Vec::new();
        match &self.state {
            Some(state) => {
                parts.push(
                    match (&state.model, &state.provider, state.provider_source) {
                        // rho's default is a guess, not the user's choice: the line says so.
                        (Some(model), Some(provider), Some(ProviderSource::Builtin)) => {
                            format!("no model configured (trying {model} · {provider})")
                        }
                        (Some(model), Some(provider), _) => format!("{model} · {provider}"),
                        _ => "no model".to_owned(),
                    },
                );
                parts.push(short_path(&state.cwd));
            }
            None => parts.push("starting…".to_owned()),
        }
        if let Some(context) = &self.context {
            match context.percent {
                Some(percent) => parts.push(format!("context {percent:.0}%")),
                None => parts.push(format!(
                    "context {}",
                    crate::reports::tokens(context.tokens)
                )),
            }
        }
        if self.tokens > 0 {
            let mut used = format!("{} tokens", crate::reports::tokens(self.tokens));
            if self.cost > 0.0 {
                used.push_str(&format!(" · ${:.2}", self.cost));
            }
            parts.push(used);
        }
        let (up, failed) = self.servers;
        if up + failed > 0 {
            let mut servers = format!("mcp {up} up");
            if failed > 0 {
                servers.push_str(&format!(" {failed} failed"));
            }
            parts.push(servers);
        }
        if !self.transcript.follows() {
            parts.push("scrolled · ctrl+end".to_owned());
        }
        let mut text = format!(" {}", terminal_safe(&parts.join("  │  ")));
        let pad = usize::from(width).saturating_sub(width_of(&text));
        text.push_str(&" ".repeat(pad));
        Line::from(Span::styled(text, self.theme.style(Role::Status)))
    }
}

/// `hint` (parts joined by ` · `) in `width` columns: whole parts from the start while they
/// fit, so a narrow window loses the last parts rather than cutting one mid-word; a first part
/// wider than the window is cut at a word with `…`.
fn fit_hint(hint: &str, width: usize) -> String {
    let mut fitted = String::new();
    for part in hint.split(" · ") {
        let candidate = if fitted.is_empty() {
            part.to_owned()
        } else {
            format!("{fitted} · {part}")
        };
        if width_of(&candidate) > width {
            break;
        }
        fitted = candidate;
    }
    if fitted.is_empty() {
        let mut words = String::new();
        for word in hint.split(' ') {
            let candidate = if words.is_empty() {
                word.to_owned()
            } else {
                format!("{words} {word}")
            };
            if width_of(&candidate) + 1 > width {
                break;
            }
            words = candidate;
        }
        if !words.is_empty() {
            fitted = format!("{words}…");
        }
    }
    fitted
}

fn render_picker(picker: &Picker, body: Rect, buf: &mut ratatui::buffer::Buffer, theme: &Theme) {
    let rows = picker
        .sessions
        .len()
        .min(usize::from(body.height.saturating_sub(1)))
        .max(1);
    let height = u16::try_from(rows + 1)
        .unwrap_or(body.height)
        .min(body.height);
    let area = Rect::new(body.x, body.bottom() - height, body.width, height);
    ratatui::widgets::Widget::render(ratatui::widgets::Clear, area, buf);
    buf.set_line(
        area.x,
        area.y,
        &Line::from(Span::styled(
            " resume a session · ↑/↓ · enter · esc",
            theme.style(Role::Accent),
        )),
        area.width,
    );
    let first = picker.selected.saturating_sub(rows.saturating_sub(1));
    for (row, (i, session)) in picker
        .sessions
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .enumerate()
    {
        let marker = if i == picker.selected { "› " } else { "  " };
        let prompt = session.first_prompt.as_deref().unwrap_or("(no prompt)");
        let line = Line::from(vec![
            Span::styled(marker, theme.style(Role::Accent)),
            Span::styled(
                format!(
                    "{}  {:>5} messages  ",
                    day(session.modified),
                    session.messages
                ),
                theme.style(Role::Dim),
            ),
            Span::styled(terminal_safe(prompt), theme.style(Role::Text)),
        ]);
        let y = area.y + 1 + u16::try_from(row).unwrap_or(0);
        buf.set_line(area.x, y, &line, area.width);
    }
}

fn render_confirm(
    title: &str,
    details: &[String],
    body: Rect,
    buf: &mut ratatui::buffer::Buffer,
    theme: &Theme,
) {
    let width = body.width.saturating_sub(4).max(1);
    let mut lines = vec![Line::from(Span::styled(
        format!(" {}", terminal_safe(title)),
        theme.style(Role::Warning),
    ))];
    for detail in details {
        for row in crate::text::wrap_hanging(detail, width) {
            lines.push(Line::from(Span::styled(
                format!("   {row}"),
                theme.style(Role::Text),
            )));
        }
    }
    lines.push(Line::from(Span::styled(
        " y yes · n or esc no",
        theme.style(Role::Accent),
    )));
    let height = u16::try_from(lines.len())
        .unwrap_or(body.height)
        .min(body.height);
    let area = Rect::new(body.x, body.bottom() - height, body.width, height);
    ratatui::widgets::Widget::render(ratatui::widgets::Clear, area, buf);
    let skip = lines.len().saturating_sub(usize::from(height));
    for (row, line) in lines.iter().skip(skip).enumerate() {
        let y = area.y + u16::try_from(row).unwrap_or(0);
        buf.set_line(area.x, y, line, area.width);
    }
}

/// Seconds since the epoch as a UTC `YYYY-MM-DD HH:MM`.
fn day(seconds: u64) -> String {
    let t = rho_component::CivilTime::from_unix(seconds);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute
    )
}

/// `~/x` for paths under the home directory.
fn short_path(path: &std::path::Path) -> String {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match home.and_then(|h| path.strip_prefix(&h).ok().map(|p| p.to_path_buf())) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_utc_calendar_dates() {
        assert_eq!(day(0), "1970-01-01 00:00");
        assert_eq!(day(1_700_000_000), "2023-11-14 22:13");
        assert_eq!(day(951_782_400), "2000-02-29 00:00");
    }
}
