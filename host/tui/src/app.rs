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
    ApprovalAsked, ApprovalDecision, CallDenied, CallFinished, CallOutcome, CallProgress,
    CallStarted, ContextSnapshot, LoopState, QuestionAnswer, SessionEvent, SessionSummary,
    UsageReport,
};

use crate::arguments::{ArgumentsView, ViewKey};
use crate::composer::{Composer, Outcome, TokenKind};
use crate::images::{CardImage, Graphics, ImageError, ImageState};
use crate::palette::{self, Entry, EntryKind, Palette};
use crate::text::width_of;
use crate::theme::{Role, Theme};
use crate::tool_card::{CardState, FormOutcome, FormView, IMAGE_INDENT, ToolCard};
use crate::transcript::{Cell, Transcript};

mod commands;
mod host_events;
mod keys;
mod palette_entries;
mod render;

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
    pub fn run(self) -> (String, Result<CardImage, ImageError>) {
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
    pub fn image_done(&mut self, call_id: &str, result: Result<CardImage, ImageError>) {
        if let Some(card) = self.transcript.card_mut(|c| c.call_id == call_id) {
            card.image = Some(match result {
                Ok(image) => ImageState::Ready(image),
                Err(reason) => ImageState::Failed(reason.to_string()),
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
