//! Every RPC method and notification, each defined once. A method's entry names it, says what
//! it does, and ties its params type to the host [`Operation`] it becomes and its result type
//! to the host [`Response`] it answers with; dispatch ([`Method::decode`], [`Method::encode`]),
//! the method list ([`METHODS`]) and the OpenRPC document (`openrpc.rs`) all come from these
//! entries, so a method cannot exist in one place and be missing in another.

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
            summary: $summary:literal,
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

            /// What it does (the OpenRPC summary).
            pub fn summary(self) -> &'static str {
                match self { $(Self::$variant => $summary,)* }
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
    /// Sends a user message (or a steering nudge).
    Prompt = "prompt" {
        summary: "Send a user message to the agent (or a mid-turn steering nudge when steer is true); attachments are server resources read before the turn",
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
    /// Cancels what runs.
    Abort = "abort" {
        summary: "Cancel the current operation",
        params: NoParams => |_| Ok(Operation::Abort),
        result: "empty", Empty => done,
    }
    /// Forgets the conversation.
    Clear = "clear" {
        summary: "Clear conversation history",
        params: NoParams => |_| Ok(Operation::Clear),
        result: "empty", Empty => done,
    }
    /// Model, provider, workspace.
    GetState = "getState" {
        summary: "Return model, provider, and cwd",
        params: NoParams => |_| Ok(Operation::GetState),
        result: "state", HostState => |r| match r {
            Response::State(state) => Some(state),
            _ => None,
        },
    }
    /// The conversation.
    GetMessages = "getMessages" {
        summary: "Return all messages on active path",
        params: NoParams => |_| Ok(Operation::GetMessages),
        result: "messages", MessagesResult => |r| match r {
            Response::Messages(messages) => Some(MessagesResult {
                messages: messages.iter().map(convert::message).collect(),
            }),
            _ => None,
        },
    }
    /// Switches the model.
    SetModel = "setModel" {
        summary: "Switch model (id or provider:id)",
        params: SetModelParams => |p| Ok(Operation::SetModel(p.model)),
        result: "model", SetModelResult => |r| match r {
            Response::Model { model, provider } => Some(SetModelResult { model, provider }),
            _ => None,
        },
    }
    /// Models of every provider.
    ListModels = "listModels" {
        summary: "List available models from providers",
        params: NoParams => |_| Ok(Operation::ListModels),
        result: "models", ModelsResult => |r| match r {
            Response::Models { models, errors } => Some(convert::models(models, errors)),
            _ => None,
        },
    }
    /// Providers and reachability.
    ListProviders = "listProviders" {
        summary: "List configured providers with reachability",
        params: NoParams => |_| Ok(Operation::ListProviders),
        result: "providers", ProvidersResult => |r| match r {
            Response::Providers(providers) => Some(convert::providers(providers)),
            _ => None,
        },
    }
    /// Usage and context.
    GetSessionStats = "getSessionStats" {
        summary: "Return token budget / usage info",
        params: NoParams => |_| Ok(Operation::GetSessionStats),
        result: "stats", StatsResult => |r| match r {
            Response::Stats(stats) => Some(convert::stats(&stats)),
            _ => None,
        },
    }
    /// Saved sessions.
    ListSessions = "listSessions" {
        summary: "List previous sessions for project",
        params: NoParams => |_| Ok(Operation::ListSessions),
        result: "sessions", SessionsResult => |r| match r {
            Response::Sessions(sessions) => Some(SessionsResult { sessions }),
            _ => None,
        },
    }
    /// Plugins, skills, servers, tools, diagnostics.
    ListExtensions = "listExtensions" {
        summary: "List loaded extensions and tools",
        params: NoParams => |_| Ok(Operation::ListExtensions),
        result: "extensions", ExtensionsResult => |r| match r {
            Response::Extensions(extensions) => Some(convert::extensions(*extensions)),
            _ => None,
        },
    }
    /// The health report.
    Doctor = "doctor" {
        summary: "Health report: config, plugins, trust, skills, the session's MCP servers, providers",
        params: NoParams => |_| Ok(Operation::Doctor),
        result: "report", DoctorResult => |r| match r {
            Response::Doctor(checks) => Some(convert::doctor(checks)),
            _ => None,
        },
    }
    /// Loads every source again.
    ReloadExtensions = "reloadExtensions" {
        summary: "Reload extensions from disk (a new tool set for the next turn)",
        params: NoParams => |_| Ok(Operation::ReloadExtensions),
        result: "extensions", ExtensionsResult => |r| match r {
            Response::Extensions(extensions) => Some(convert::extensions(*extensions)),
            _ => None,
        },
    }
    /// Summarizes the history.
    Compact = "compact" {
        summary: "Trigger context compaction",
        params: NoParams => |_| Ok(Operation::Compact),
        result: "summary", CompactResult => |r| match r {
            Response::Compacted(summary) => Some(CompactResult { summary }),
            _ => None,
        },
    }
    /// Resumes a saved session.
    ResumeSession = "resumeSession" {
        summary: "Resume a previous session from JSONL",
        params: ResumeSessionParams => |p| Ok(Operation::ResumeSession(p.path)),
        result: "session", SessionInfo => |r| match r {
            Response::Session(info) => Some(info),
            _ => None,
        },
    }
    /// Starts a fresh session.
    NewSession = "newSession" {
        summary: "Start a fresh session (preserves model, provider, tools)",
        params: NoParams => |_| Ok(Operation::NewSession),
        result: "session", SessionInfo => |r| match r {
            Response::Session(info) => Some(info),
            _ => None,
        },
    }
    /// The tools.
    ListTools = "listTools" {
        summary: "List registered tools with schemas and risk levels",
        params: NoParams => |_| Ok(Operation::ListTools),
        result: "tools", ToolsResult => |r| match r {
            Response::Tools(specs) => Some(ToolsResult {
                tools: specs.iter().map(convert::tool).collect(),
            }),
            _ => None,
        },
    }
    /// Servers' prompts as slash commands.
    ListPrompts = "listPrompts" {
        summary: "List every connected server's prompts as /mcp:<server>:<prompt> commands (listed at connect, refreshed on prompts/list_changed)",
        params: NoParams => |_| Ok(Operation::ListPrompts),
        result: "prompts", Vec<PromptCommand> => |r| match r {
            Response::Prompts(commands) => Some(commands),
            _ => None,
        },
    }
    /// Servers' resources and templates.
    ListResources = "listResources" {
        summary: "List every connected server's resources and resource templates (listed at connect, refreshed on resources/list_changed)",
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
    /// Suggestions for a prompt argument.
    Complete = "complete" {
        summary: "Suggest values for one argument of a prompt command (answered while a turn runs; one request in flight per server, answers cached; [] on failure)",
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
    /// Answers an approval request.
    ApprovalResponse = "approvalResponse" {
        summary: "Respond to an approval/request; approved false with a message is a redirect",
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
    /// Answers a server's question.
    QuestionResponse = "questionResponse" {
        summary: "Answer a question/request: accept (with answers as text), decline, or cancel (which also ends the turn)",
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
        $variant:ident = $name:literal { summary: $summary:literal, params: $params:ty $(,)? }
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

            /// What it reports (the OpenRPC summary).
            pub fn summary(self) -> &'static str {
                match self { $(Self::$variant => $summary,)* }
            }

            /// The params' schema (for the OpenRPC document).
            pub(crate) fn params_schema(self) -> Value {
                match self { $(Self::$variant => crate::openrpc::params_of::<$params>(),)* }
            }
        }
    };
}

notifications! {
    /// The host is serving.
    Ready = "ready" { summary: "Emitted once on startup", params: NoParams }
    /// A prompt began.
    AgentStart = "agent/start" { summary: "Agent began processing a prompt", params: NoParams }
    /// A prompt finished.
    AgentEnd = "agent/end" { summary: "Agent finished with full result", params: TurnResult }
    /// The loop failed.
    AgentError = "agent/error" { summary: "Agent loop encountered an error", params: AgentErrorParams }
    /// The loop's state changed.
    StateChange = "state/change" {
        summary: "Loop state transition (thinking, executing_tool, awaiting_approval, idle)",
        params: StateChangeParams,
    }
    /// Answer text.
    MessageDelta = "message/delta" {
        summary: "Streaming text chunk (chunks merge when the reader falls behind)",
        params: DeltaParams,
    }
    /// Reasoning text.
    ReasoningDelta = "reasoning/delta" {
        summary: "Streaming reasoning chunk (chunks merge when the reader falls behind)",
        params: DeltaParams,
    }
    /// The model asked for a call.
    ToolCall = "tool/call" { summary: "Model requested a tool call", params: CallStarted }
    /// A call reported progress.
    ToolProgress = "tool/progress" {
        summary: "A running tool reported progress (rho's addition; the latest report wins when the reader falls behind)",
        params: CallProgress,
    }
    /// A call finished.
    ToolResult = "tool/result" { summary: "Tool finished executing", params: CallFinished }
    /// A call was refused.
    ToolDenied = "tool/denied" { summary: "Tool call denied by approval gate", params: CallDenied }
    /// The gate needs the user.
    ApprovalRequest = "approval/request" {
        summary: "Approval required — send approvalResponse",
        params: ApprovalAsked,
    }
    /// A server asks the user.
    QuestionRequest = "question/request" {
        summary: "A server asks the user during one of its tool calls (rho's addition) — send questionResponse",
        params: QuestionRequest,
    }
    /// An MCP server was started again, or given up on.
    ServerRestart = "server/restart" {
        summary: "rho started an MCP server again after its session was lost, or (gaveUp) stopped trying (rho's addition)",
        params: ServerRestart,
    }
    /// A server's tool list changed.
    ToolsChanged = "tools/changed" {
        summary: "An MCP server's tool list changed (it said so, was started again, or a lazy server listed other tools than the tool cache); used from this turn on (rho's addition)",
        params: ToolsChanged,
    }
    /// An MCP server's tool list became usable.
    ToolsetInitialized = "toolset/initialized" {
        summary: "An MCP server's tool list became usable in the session: at start (live, or from the tool cache for a lazy server) and, live, at the turn boundary after a lazy server's first start; counts and a credential-free digest of its tools (rho's addition)",
        params: ServerToolset,
    }
    /// The session closed an MCP server.
    ToolsetClosed = "toolset/closed" {
        summary: "The session closed an MCP server (end of input, a signal, reloadExtensions); live says whether it was running (rho's addition)",
        params: ServerToolset,
    }
    /// A server's tools digest differs from the resumed session file's.
    ToolsetChanged = "toolset/changed" {
        summary: "An MCP server's tools digest differs from the one the resumed session file recorded (rho's addition)",
        params: ToolsetChanged,
    }
    /// A note from rho to the user.
    Notice = "notice" {
        summary: "A note from rho itself to the user about the turn, never part of the model's reply: a Claude runtime session that could not be resumed (rho's addition)",
        params: Notice,
    }
    /// One model request's usage.
    Usage = "usage" {
        summary: "Per-iteration token/cost delta and live context snapshot",
        params: UsageReport,
    }
}
