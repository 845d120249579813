//! What a front-end asks of the session host ([`Operation`]), what the host answers
//! ([`Response`], or a [`HostError`]), and everything the host reports ([`HostEvent`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use rho_component::{Diagnostic, ServerResource, SkillMeta, ToolSpec};

use crate::provider::{ChatMessage, FinishReason};
use crate::session::{
    ApprovalDecision, QuestionAnswer, SessionEvent, SessionStats, SessionSummary,
};
use crate::{MountedServer, PluginSummary};

pub use super::server_prompts::PromptCommand;

/// The front-end's number for one operation; the host's [`HostEvent::Reply`] carries it back.
pub type RequestId = u64;

/// Everything a front-end can ask of the host. Most operations are handled one at a time, in
/// order; the [immediate](Operation::is_immediate) ones are handled as they arrive, even while
/// a prompt runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    /// Runs a turn: the message, with server resources attached (read before the turn).
    Prompt {
        /// The user's message.
        message: String,
        /// Resources to read and attach, as `(server, uri)`.
        attachments: Vec<(String, String)>,
    },
    /// A steering message for the next tool-batch seam (immediate).
    Steer(String),
    /// Cancels what runs (immediate).
    Abort,
    /// The answer to the pending approval request (immediate).
    AnswerApproval(ApprovalDecision),
    /// The answer to a server's question (immediate).
    AnswerQuestion {
        /// The question's id.
        question: u64,
        /// The answer.
        answer: QuestionAnswer,
    },
    /// Forgets the conversation.
    Clear,
    /// Model, provider, workspace and session.
    GetState,
    /// The conversation.
    GetMessages,
    /// Switches the model (`id` or `provider:id`).
    SetModel(String),
    /// Models from configuration and reachable providers.
    ListModels,
    /// Providers and their reachability.
    ListProviders,
    /// Usage and context figures.
    GetSessionStats,
    /// This project's saved sessions.
    ListSessions,
    /// Plugins, skills, servers, tools and diagnostics.
    ListExtensions,
    /// The health report (`rho doctor`'s rows, with the session's live servers).
    Doctor,
    /// Loads every source again; the new tool set serves the next turn.
    ReloadExtensions,
    /// Replaces the history with a summary.
    Compact,
    /// Resumes a saved session.
    ResumeSession(PathBuf),
    /// Starts a fresh session (model, provider and tools stay).
    NewSession,
    /// The tools with their schemas and risk levels.
    ListTools,
    /// Every connected server's prompts, as slash commands.
    ListPrompts,
    /// Every connected server's resources and resource templates.
    ListResources,
    /// Reads a resource now, for the next prompt that attaches it (a front-end shows it as
    /// being read, and a failure before the message is sent). The host keeps what it read
    /// until that prompt; an attachment the prompt names that was not read ahead is read
    /// then.
    ReadResource {
        /// The server.
        server: String,
        /// The resource URI.
        uri: String,
    },
    /// Suggestions for one argument of a prompt command (immediate: answered while a turn
    /// runs, from the server's answer or the cache; never an error).
    Complete {
        /// The command (`/mcp:<server>:<prompt>`), possibly with what follows it.
        command: String,
        /// The argument being filled in.
        argument: String,
        /// What was typed of it so far.
        value: String,
        /// The other arguments already filled in.
        arguments: BTreeMap<String, String>,
    },
}

impl Operation {
    /// Whether the host handles it as soon as it arrives (steering, approvals, answers,
    /// aborts), rather than queued behind a running prompt.
    pub fn is_immediate(&self) -> bool {
        matches!(
            self,
            Self::Steer(_)
                | Self::Abort
                | Self::AnswerApproval(_)
                | Self::AnswerQuestion { .. }
                | Self::Complete { .. }
        )
    }

    /// Roughly how many bytes it holds (the queue is bounded by count and by bytes).
    pub fn weight(&self) -> usize {
        match self {
            Self::Prompt {
                message,
                attachments,
            } => {
                message.len()
                    + attachments
                        .iter()
                        .map(|(s, u)| s.len() + u.len())
                        .sum::<usize>()
            }
            Self::Steer(text) | Self::SetModel(text) => text.len(),
            Self::ReadResource { server, uri } => server.len() + uri.len(),
            Self::ResumeSession(path) => path.as_os_str().len(),
            _ => 0,
        }
    }
}

/// How a prompt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptReply {
    /// The model's final text.
    pub reply: String,
    /// Why the prompt ended (as [`crate::session::TurnResult::finish_reason`]).
    pub finish_reason: FinishReason,
}

/// `getState` result.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostState {
    /// The model id (`null` when no provider could be chosen).
    pub model: Option<String>,
    /// The provider identity.
    pub provider: Option<String>,
    /// Where the provider came from: `flags` (`--endpoint`), `config` (`[providers.*]`) or
    /// `builtin` (nothing configured: the model is rho's default guess, not a choice).
    pub provider_source: Option<crate::ProviderSource>,
    /// Why no provider could be chosen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_error: Option<String>,
    /// The workspace.
    #[serde(serialize_with = "rho_component::lossy_path::serialize")]
    #[schemars(with = "String")]
    pub cwd: PathBuf,
    /// The session id (`null` when ephemeral).
    pub session_id: Option<String>,
    /// The session file (`null` when ephemeral).
    #[serde(serialize_with = "rho_component::lossy_path::option::serialize")]
    #[schemars(with = "Option<String>")]
    pub session_file: Option<PathBuf>,
    /// The permission mode: `read-only`, `ask`, `ask-destructive` or `allow-all`.
    pub permission_mode: rho_component::PermissionMode,
}

/// One model a provider offers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct ModelEntry {
    /// The model id.
    pub id: String,
    /// The provider.
    pub provider: String,
}

/// One provider, probed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderReport {
    /// The identity.
    pub id: String,
    /// `flags`, `config` or `builtin`.
    pub source: crate::ProviderSource,
    /// The endpoint.
    pub endpoint: String,
    /// Outside this machine.
    pub external: bool,
    /// The default model.
    pub default_model: Option<String>,
    /// Why it is unusable or unreachable (`None`: it answered).
    pub error: Option<String>,
    /// Whether it is the provider in use.
    pub active: bool,
}

/// `newSession` / `resumeSession` result.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session id (`null` when ephemeral).
    pub session_id: Option<String>,
    /// The session file.
    #[serde(serialize_with = "rho_component::lossy_path::option::serialize")]
    #[schemars(with = "Option<String>")]
    pub session_file: Option<PathBuf>,
    /// Messages in the conversation.
    pub messages: usize,
}

/// Everything the run loaded, and the live state of its servers.
#[derive(Debug, Clone)]
pub struct Extensions {
    /// Every plugin found.
    pub plugins: Vec<PluginSummary>,
    /// Skills after precedence.
    pub skills: Vec<SkillMeta>,
    /// Every server entry and its live state.
    pub servers: Vec<MountedServer>,
    /// Exported names of the session's tools.
    pub tools: Vec<String>,
    /// The login state of each OAuth server (`logged in, expires in 55m`, `needs login`, ...),
    /// by server identity, from the credential store alone (never a token).
    pub auth: std::collections::BTreeMap<String, String>,
    /// Everything refused, shadowed or failed.
    pub diagnostics: Vec<Diagnostic>,
    /// What the next model request costs the context (tool definitions per server, what
    /// waits behind the tool search).
    pub context: crate::session::ContextBudget,
}

/// The answer to an operation.
#[derive(Debug, Clone)]
pub enum Response {
    /// Done, nothing to report.
    Done,
    /// A prompt ended.
    Prompt(PromptReply),
    /// `GetState`.
    State(HostState),
    /// `GetMessages`.
    Messages(Vec<ChatMessage>),
    /// `SetModel`: the model and provider now in use.
    Model {
        /// The model id.
        model: String,
        /// The provider.
        provider: String,
    },
    /// `ListModels`: models, and providers that could not be asked with why.
    Models {
        /// Every model found.
        models: Vec<ModelEntry>,
        /// `(provider, error)`.
        errors: Vec<(String, String)>,
    },
    /// `ListProviders`.
    Providers(Vec<ProviderReport>),
    /// `GetSessionStats`.
    Stats(SessionStats),
    /// `ListSessions`, most recent first.
    Sessions(Vec<SessionSummary>),
    /// `Doctor`: one row per part of the setup.
    Doctor(Vec<crate::doctor::Check>),
    /// `ListExtensions` and `ReloadExtensions`.
    Extensions(Box<Extensions>),
    /// `Compact`: the summary that replaced the history.
    Compacted(String),
    /// `NewSession` and `ResumeSession`.
    Session(SessionInfo),
    /// `ListTools`.
    Tools(Vec<ToolSpec>),
    /// `ListPrompts`.
    Prompts(Vec<PromptCommand>),
    /// `ListResources`: `(server, resource)`, resources before templates per server.
    Resources(Vec<(String, ServerResource)>),
    /// `ReadResource`: what was read, as the next prompt will attach it.
    ResourceRead {
        /// The URI read.
        uri: String,
        /// Bytes of text it adds to the message.
        bytes: usize,
        /// Whether the text was cut at the server's output cap.
        truncated: bool,
    },
    /// `Complete`: suggested values, best first (empty when there are none).
    Completions(Vec<String>),
}

/// What kind of failure an operation met (front-ends map it onto their own codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostErrorKind {
    /// The operation does not fit the state (nothing to abort, no approval pending, the
    /// queue is full).
    InvalidRequest,
    /// Its arguments are wrong (an unknown model, a missing prompt argument).
    InvalidParams,
    /// It failed while running.
    Internal,
}

/// Why an operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HostError {
    /// What kind of failure.
    pub kind: HostErrorKind,
    /// What happened.
    pub message: String,
}

impl HostError {
    /// An operation that does not fit the state.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self {
            kind: HostErrorKind::InvalidRequest,
            message: message.into(),
        }
    }

    /// Wrong arguments.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self {
            kind: HostErrorKind::InvalidParams,
            message: message.into(),
        }
    }

    /// A failure while running.
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            kind: HostErrorKind::Internal,
            message: message.into(),
        }
    }
}

/// Everything the host reports, in order.
#[derive(Debug, Clone)]
pub enum HostEvent {
    /// Something the running session shows.
    Session(SessionEvent),
    /// The answer to operation `id`.
    Reply {
        /// The front-end's number for the operation.
        id: RequestId,
        /// The answer.
        result: Result<Response, HostError>,
    },
}
