//! Every RPC method and notification, each defined once. A method's entry names it, says what it
//! does (its doc comment is also its OpenRPC summary: each line's text after `///` begins with a
//! space, so the lines joined need only their ends trimmed), and ties its params type to the host
//! [`Operation`] it becomes and its result type to the host [`Response`] it answers with; dispatch
//! ([`Method::decode`], [`Method::encode`]), the method list ([`METHODS`]) and the OpenRPC document
//! (`openrpc.rs`) all come from these entries, so a method cannot exist in one place and be missing
//! in another.

use rho_core::host::{HostState, Operation, PromptCommand, Response, SessionInfo};
use rho_core::session::{
    ApprovalAsked, ApprovalDecision, CallDenied, CallFinished, CallProgress, CallStarted, Notice,
    QuestionAnswer, QuestionRequest, ToolsChanged, TurnResult, UsageReport,
};
use rho_core::{ServerRestart, ServerToolset, ToolsetChanged};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::convert;
use crate::jsonrpc::{ParamsError, Request};
use crate::wire::{
    AgentErrorParams, ApprovalResponseParams, CompactResult, CompleteParams, CompleteResult,
    DeltaParams, DoctorResult, Empty, ExtensionsResult, MessagesResult, ModelsResult, NoParams,
    PromptAnswer, PromptParams, PromptResult, ProvidersResult, QuestionResponseParams,
    ResourceEntry, ResumeSessionParams, SessionsResult, SetModelParams, SetModelResult,
    StateChangeParams, StatsResult, ToolsResult,
};

/// A method's params: how they are read from a request.
pub(crate) trait MethodParams: DeserializeOwned + JsonSchema {
    /// Reads the params (required ones by default).
    fn read(request: &Request) -> Result<Self, ParamsError> {
        request.required_params()
    }
}

impl MethodParams for NoParams {
    /// No params, `null`, `{}` or `[]`.
    fn read(request: &Request) -> Result<Self, ParamsError> {
        request.params()
    }
}
impl MethodParams for PromptParams {}
impl MethodParams for SetModelParams {}
impl MethodParams for ResumeSessionParams {}
impl MethodParams for ApprovalResponseParams {}
impl MethodParams for QuestionResponseParams {}
impl MethodParams for CompleteParams {}

/// The host's answer did not fit the method (a defect in rho, reported as an internal error).
#[derive(Debug, thiserror::Error)]
#[error("the session host answered {method} with an unexpected response")]
pub(crate) struct Mismatch {
    method: &'static str,
}

macro_rules! methods {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $name:literal {
            params: $params:ty => $decode:expr,
            result: $result_name:literal, $result:ty => $encode:expr $(,)?
        }
    )*) => {
        /// One RPC method.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Method {
            $( $(#[doc = $doc])* $variant, )*
        }

        /// Every method rho answers, in the order the OpenRPC document lists them.
        pub const METHODS: &[Method] = &[$(Method::$variant),*];

        impl Method {
            /// The method's name on the wire.
            pub fn name(self) -> &'static str {
                match self { $(Self::$variant => $name,)* }
            }

            /// The method named `name`.
            pub fn from_name(name: &str) -> Option<Self> {
                match name { $($name => Some(Self::$variant),)* _ => None }
            }

            /// What it does (the OpenRPC summary): its doc comment.
            pub fn summary(self) -> &'static str {
                match self { $(Self::$variant => concat!($($doc),*).trim(),)* }
            }

            /// The host operation a request becomes, or why its params do not fit. Params by
            /// position are named after the method's params in the OpenRPC document's order.
            pub(crate) fn decode(self, request: &Request) -> Result<Operation, ParamsError> {
                let request = request.named(&crate::openrpc::param_slots(self.name()))?;
                let request = request.as_ref();
                match self {
                    $(Self::$variant => {
                        let params = <$params as MethodParams>::read(request)?;
                        let decode: fn($params) -> Result<Operation, ParamsError> = $decode;
                        decode(params)
                    })*
                }
            }

            /// The result JSON of the host's response.
            pub(crate) fn encode(self, response: Response) -> Result<String, Mismatch> {
                match self {
                    $(Self::$variant => {
                        let encode: fn(Response) -> Option<$result> = $encode;
                        let result = encode(response).ok_or(Mismatch { method: $name })?;
                        serde_json::to_string(&result).map_err(|_| Mismatch { method: $name })
                    })*
                }
            }

            /// The params' schema and the result's name and schema (for the OpenRPC document).
            pub(crate) fn schemas(self) -> (Value, &'static str, Value) {
                match self {
                    $(Self::$variant => (
                        crate::openrpc::params_of::<$params>(),
                        $result_name,
                        crate::openrpc::schema::<$result>(),
                    ),)*
                }
            }
        }
    };
}

fn done(response: Response) -> Option<Empty> {
    matches!(response, Response::Done).then_some(Empty {})
}

methods! {
    /// Send a user message to the agent (or a mid-turn steering nudge when steer is true);
    /// attachments are server resources read before the turn
    Prompt = "prompt" {
        params: PromptParams => |p| Ok(if p.steer {
            Operation::Steer(p.message)
        } else {
            Operation::Prompt {
                message: p.message,
                attachments: p.attachments.into_iter().map(|a| (a.server, a.uri)).collect(),
            }
        }),
        result: "reply", PromptAnswer => |r| match r {
            Response::Prompt(reply) => Some(PromptAnswer::Turn(PromptResult {
                reply: reply.reply,
                finish_reason: reply.finish_reason,
            })),
            Response::Done => Some(PromptAnswer::Steered(Empty {})),
            _ => None,
        },
    }
    /// Cancel the current operation
    Abort = "abort" {
        params: NoParams => |_| Ok(Operation::Abort),
        result: "empty", Empty => done,
    }
    /// Clear conversation history
    Clear = "clear" {
        params: NoParams => |_| Ok(Operation::Clear),
        result: "empty", Empty => done,
    }
    /// Return model, provider, and cwd
    GetState = "getState" {
        params: NoParams => |_| Ok(Operation::GetState),
        result: "state", HostState => |r| match r {
            Response::State(state) => Some(state),
            _ => None,
        },
    }
    /// Return all messages on active path
    GetMessages = "getMessages" {
        params: NoParams => |_| Ok(Operation::GetMessages),
        result: "messages", MessagesResult => |r| match r {
            Response::Messages(messages) => Some(MessagesResult {
                messages: messages.iter().map(convert::message).collect(),
            }),
            _ => None,
        },
    }
    /// Switch model (id or provider:id)
    SetModel = "setModel" {
        params: SetModelParams => |p| Ok(Operation::SetModel(p.model)),
        result: "model", SetModelResult => |r| match r {
            Response::Model { model, provider } => Some(SetModelResult { model, provider }),
            _ => None,
        },
    }
    /// List available models from providers
    ListModels = "listModels" {
        params: NoParams => |_| Ok(Operation::ListModels),
        result: "models", ModelsResult => |r| match r {
            Response::Models { models, errors } => Some(convert::models(models, errors)),
            _ => None,
        },
    }
    /// List configured providers with reachability
    ListProviders = "listProviders" {
        params: NoParams => |_| Ok(Operation::ListProviders),
        result: "providers", ProvidersResult => |r| match r {
            Response::Providers(providers) => Some(convert::providers(providers)),
            _ => None,
        },
    }
    /// Return token budget / usage info
    GetSessionStats = "getSessionStats" {
        params: NoParams => |_| Ok(Operation::GetSessionStats),
        result: "stats", StatsResult => |r| match r {
            Response::Stats(stats) => Some(convert::stats(&stats)),
            _ => None,
        },
    }
    /// List previous sessions for project
    ListSessions = "listSessions" {
        params: NoParams => |_| Ok(Operation::ListSessions),
        result: "sessions", SessionsResult => |r| match r {
            Response::Sessions(sessions) => Some(SessionsResult { sessions }),
            _ => None,
        },
    }
    /// List loaded extensions and tools
    ListExtensions = "listExtensions" {
        params: NoParams => |_| Ok(Operation::ListExtensions),
        result: "extensions", ExtensionsResult => |r| match r {
            Response::Extensions(extensions) => Some(convert::extensions(*extensions)),
            _ => None,
        },
    }
    /// Health report: config, plugins, trust, skills, the session's MCP servers, providers
    Doctor = "doctor" {
        params: NoParams => |_| Ok(Operation::Doctor),
        result: "report", DoctorResult => |r| match r {
            Response::Doctor(checks) => Some(convert::doctor(checks)),
            _ => None,
        },
    }
    /// Reload extensions from disk (a new tool set for the next turn)
    ReloadExtensions = "reloadExtensions" {
        params: NoParams => |_| Ok(Operation::ReloadExtensions),
        result: "extensions", ExtensionsResult => |r| match r {
            Response::Extensions(extensions) => Some(convert::extensions(*extensions)),
            _ => None,
        },
    }
    /// Trigger context compaction
    Compact = "compact" {
        params: NoParams => |_| Ok(Operation::Compact),
        result: "summary", CompactResult => |r| match r {
            Response::Compacted(summary) => Some(CompactResult { summary }),
            _ => None,
        },
    }
    /// Resume a previous session from JSONL
    ResumeSession = "resumeSession" {
        params: ResumeSessionParams => |p| Ok(Operation::ResumeSession(p.path)),
        result: "session", SessionInfo => |r| match r {
            Response::Session(info) => Some(info),
            _ => None,
        },
    }
    /// Start a fresh session (preserves model, provider, tools)
    NewSession = "newSession" {
        params: NoParams => |_| Ok(Operation::NewSession),
        result: "session", SessionInfo => |r| match r {
            Response::Session(info) => Some(info),
            _ => None,
        },
    }
    /// List registered tools with schemas and risk levels
    ListTools = "listTools" {
        params: NoParams => |_| Ok(Operation::ListTools),
        result: "tools", ToolsResult => |r| match r {
            Response::Tools(specs) => Some(ToolsResult {
                tools: specs.iter().map(convert::tool).collect(),
            }),
            _ => None,
        },
    }
    /// List every connected server's prompts as `/mcp:<server>:<prompt>` commands (listed at
    /// connect, refreshed on prompts/list_changed)
    ListPrompts = "listPrompts" {
        params: NoParams => |_| Ok(Operation::ListPrompts),
        result: "prompts", Vec<PromptCommand> => |r| match r {
            Response::Prompts(commands) => Some(commands),
            _ => None,
        },
    }
    /// List every connected server's resources and resource templates (listed at connect, refreshed
    /// on resources/list_changed)
    ListResources = "listResources" {
        params: NoParams => |_| Ok(Operation::ListResources),
        result: "resources", Vec<ResourceEntry> => |r| match r {
            Response::Resources(resources) => Some(
                resources
                    .into_iter()
                    .map(|(server, resource)| ResourceEntry { server, resource })
                    .collect(),
            ),
            _ => None,
        },
    }
    /// Suggest values for one argument of a prompt command (answered while a turn runs; one request
    /// in flight per server, answers cached; `[]` on failure)
    Complete = "complete" {
        params: CompleteParams => |p| Ok(Operation::Complete {
            command: p.command,
            argument: p.argument,
            value: p.value,
            arguments: p.filled_arguments,
        }),
        result: "completions", CompleteResult => |r| match r {
            Response::Completions(values) => Some(CompleteResult { values }),
            _ => None,
        },
    }
    /// Respond to an approval/request; approved false with a message is a redirect
    ApprovalResponse = "approvalResponse" {
        params: ApprovalResponseParams => |p| Ok(Operation::AnswerApproval(
            match (p.approved, p.message) {
                (true, _) => ApprovalDecision::Approve,
                (false, Some(message)) if !message.trim().is_empty() => {
                    ApprovalDecision::Redirect(message)
                }
                (false, _) => ApprovalDecision::Deny,
            },
        )),
        result: "empty", Empty => done,
    }
    /// Answer a question/request: accept (with answers as text), decline, or cancel (which also
    /// ends the turn)
    QuestionResponse = "questionResponse" {
        params: QuestionResponseParams => |p| Ok(Operation::AnswerQuestion {
            question: p.question_id,
            answer: QuestionAnswer::from_action(p.action, p.answers),
        }),
        result: "empty", Empty => done,
    }
}

macro_rules! notifications {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $name:literal => $params:ty,
    )*) => {
        /// One notification rho sends.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Notification {
            $( $(#[doc = $doc])* $variant, )*
        }

        /// Every notification rho sends, in the order the OpenRPC document lists them.
        pub const NOTIFICATIONS: &[Notification] = &[$(Notification::$variant),*];

        impl Notification {
            /// The notification's name on the wire.
            pub fn name(self) -> &'static str {
                match self { $(Self::$variant => $name,)* }
            }

            /// What it reports (the OpenRPC summary): its doc comment.
            pub fn summary(self) -> &'static str {
                match self { $(Self::$variant => concat!($($doc),*).trim(),)* }
            }

            /// The params' schema (for the OpenRPC document).
            pub(crate) fn params_schema(self) -> Value {
                match self { $(Self::$variant => crate::openrpc::params_of::<$params>(),)* }
            }
        }
    };
}

notifications! {
    /// Emitted once on startup
    Ready = "ready" => NoParams,
    /// Agent began processing a prompt
    AgentStart = "agent/start" => NoParams,
    /// Agent finished with full result
    AgentEnd = "agent/end" => TurnResult,
    /// Agent loop encountered an error
    AgentError = "agent/error" => AgentErrorParams,
    /// Loop state transition (thinking, executing_tool, awaiting_approval, idle)
    StateChange = "state/change" => StateChangeParams,
    /// Streaming text chunk (chunks merge when the reader falls behind)
    MessageDelta = "message/delta" => DeltaParams,
    /// Streaming reasoning chunk (chunks merge when the reader falls behind)
    ReasoningDelta = "reasoning/delta" => DeltaParams,
    /// Model requested a tool call
    ToolCall = "tool/call" => CallStarted,
    /// A running tool reported progress (rho's addition; the latest report wins when the reader
    /// falls behind)
    ToolProgress = "tool/progress" => CallProgress,
    /// Tool finished executing
    ToolResult = "tool/result" => CallFinished,
    /// Tool call denied by approval gate
    ToolDenied = "tool/denied" => CallDenied,
    /// Approval required — send approvalResponse
    ApprovalRequest = "approval/request" => ApprovalAsked,
    /// A server asks the user during one of its tool calls (rho's addition) — send questionResponse
    QuestionRequest = "question/request" => QuestionRequest,
    /// rho started an MCP server again after its session was lost, or (gaveUp) stopped trying
    /// (rho's addition)
    ServerRestart = "server/restart" => ServerRestart,
    /// An MCP server's tool list changed (it said so, was started again, or a lazy server listed
    /// other tools than the tool cache); used from this turn on (rho's addition)
    ToolsChanged = "tools/changed" => ToolsChanged,
    /// An MCP server's tool list became usable in the session: at start (live, or from the tool
    /// cache for a lazy server) and, live, at the turn boundary after a lazy server's first start;
    /// counts and a credential-free digest of its tools (rho's addition)
    ToolsetInitialized = "toolset/initialized" => ServerToolset,
    /// The session closed an MCP server (end of input, a signal, reloadExtensions); live says
    /// whether it was running (rho's addition)
    ToolsetClosed = "toolset/closed" => ServerToolset,
    /// An MCP server's tools digest differs from the one the resumed session file recorded (rho's
    /// addition)
    ToolsetChanged = "toolset/changed" => ToolsetChanged,
    /// A note from rho itself to the user about the turn, never part of the model's reply: a Claude
    /// runtime session that could not be resumed (rho's addition)
    Notice = "notice" => Notice,
    /// Per-iteration token/cost delta and live context snapshot
    Usage = "usage" => UsageReport,
}
