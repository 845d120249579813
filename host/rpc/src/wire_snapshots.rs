//! Snapshots of the JSON rho writes for every method result and notification, from sample host
//! values: the bytes on the wire stay what `docs/rpc.md` spells, whatever types produce them.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use rho_component::{
    Choice, Diagnostic, DiagnosticCode, FieldKind, FormField, PermissionMode, PromptArgument,
    RiskLevel, SamplingMessage, SamplingRole, Scope, ServerPrompt, ServerResource, SkillMeta,
    SkillSource, ToolOrigin, ToolSpec, Transport,
};
use rho_core::doctor::{Check, CheckKind, CheckStatus};
use rho_core::host::{
    Extensions, HostState, ModelEntry, PromptCommand, PromptReply, ProviderReport, Response,
    SessionInfo,
};
use rho_core::provider::{ChatMessage, FinishReason, ToolCall, Usage};
use rho_core::session::{
    ApprovalAsked, CallDenied, CallFinished, CallOutcome, CallProgress, CallRecord, CallStarted,
    ContextBudget, ContextSnapshot, LoopState, Notice, QuestionKind, QuestionRequest, SessionEvent,
    SessionStats, SessionSummary, ToolsChanged, TurnResult, UsageReport,
};
use rho_core::{
    PluginStatus, PluginSummary, ProviderSource, ServerRestart, ServerToolset, ToolsetChanged,
};

use crate::convert::event_line;
use crate::methods::Method;

fn usage(n: u64) -> Usage {
    Usage {
        input_tokens: n,
        output_tokens: n + 1,
        total_tokens: 2 * n + 1,
        total_cost: 0.5,
        request_count: 1,
    }
}

fn context() -> ContextSnapshot {
    ContextSnapshot {
        tokens: 1200,
        window: Some(8000),
        percent: Some(15.0),
        messages: 4,
    }
}

fn turn() -> TurnResult {
    TurnResult {
        reply: "done".to_owned(),
        iterations: 2,
        usage: usage(10),
        tool_calls: vec![
            CallRecord {
                name: "read_file".to_owned(),
                arguments: r#"{"path":"a"}"#.to_owned(),
                outcome: CallOutcome::Success,
                duration_ms: 3,
            },
            CallRecord {
                name: "mcp__s__t".to_owned(),
                arguments: "{}".to_owned(),
                outcome: CallOutcome::Error {
                    message: "boom".to_owned(),
                },
                duration_ms: 0,
            },
            CallRecord {
                name: "x".to_owned(),
                arguments: "{}".to_owned(),
                outcome: CallOutcome::Denied,
                duration_ms: 0,
            },
        ],
        duration_ms: 40,
        finish_reason: FinishReason::Stop,
    }
}

fn diagnostic(with_context: bool) -> Diagnostic {
    let mut d = Diagnostic::error(DiagnosticCode::ALL[0], "something failed");
    if with_context {
        d.path = Some(PathBuf::from("/p/plugin.json"));
        d.component = Some("p".to_owned());
    }
    d
}

fn events() -> Vec<SessionEvent> {
    vec![
        SessionEvent::AgentStart,
        SessionEvent::StateChange(LoopState::ExecutingTool),
        SessionEvent::MessageDelta("Hel".to_owned()),
        SessionEvent::ReasoningDelta("hmm".to_owned()),
        SessionEvent::ToolCall(CallStarted {
            call_id: "c1".to_owned(),
            name: "mcp__everything__echo".to_owned(),
            display_name: "everything › echo".to_owned(),
            arguments: r#"{"message":"hi"}"#.to_owned(),
        }),
        SessionEvent::ApprovalRequest(ApprovalAsked {
            call_id: "c1".to_owned(),
            tool: "write_file".to_owned(),
            display_name: "write_file".to_owned(),
            arguments: "{}".to_owned(),
            risk: RiskLevel::Write,
        }),
        SessionEvent::ToolDenied(CallDenied {
            call_id: "c1".to_owned(),
            name: "write_file".to_owned(),
            display_name: "write_file".to_owned(),
        }),
        SessionEvent::ToolProgress(CallProgress {
            call_id: "c1".to_owned(),
            name: "slow".to_owned(),
            progress: 1.0,
            total: Some(4.0),
            message: Some("one".to_owned()),
        }),
        SessionEvent::ToolProgress(CallProgress {
            call_id: "c1".to_owned(),
            name: "slow".to_owned(),
            progress: 2.5,
            total: None,
            message: None,
        }),
        SessionEvent::ToolResult(CallFinished {
            call_id: "c1".to_owned(),
            name: "slow".to_owned(),
            is_error: false,
            outcome: CallOutcome::Success,
            output: "ok".to_owned(),
            image: None,
        }),
        SessionEvent::Usage(UsageReport {
            iteration: 1,
            usage: usage(5),
            context: context(),
        }),
        SessionEvent::Usage(UsageReport {
            iteration: 2,
            usage: usage(5),
            context: ContextSnapshot::default(),
        }),
        SessionEvent::AgentEnd(turn()),
        SessionEvent::AgentError("unreachable".to_owned()),
        SessionEvent::Question(QuestionRequest {
            id: 7,
            kind: QuestionKind::Elicitation,
            server: "everything".to_owned(),
            call_id: "c2".to_owned(),
            message: "Who are you?".to_owned(),
            fields: vec![
                FormField {
                    name: "name".to_owned(),
                    title: Some("Name".to_owned()),
                    kind: FieldKind::Text,
                    choices: Vec::new(),
                    default: Some("Ann".to_owned()),
                    required: true,
                    help: Some("your name".to_owned()),
                },
                FormField {
                    name: "color".to_owned(),
                    title: None,
                    kind: FieldKind::Choice,
                    choices: vec![
                        Choice {
                            value: "red".to_owned(),
                            title: Some("Red".to_owned()),
                        },
                        Choice {
                            value: "blue".to_owned(),
                            title: None,
                        },
                    ],
                    default: None,
                    required: false,
                    help: None,
                },
            ],
            messages: Vec::new(),
            max_tokens: None,
        }),
        SessionEvent::Question(QuestionRequest {
            id: 8,
            kind: QuestionKind::Sampling,
            server: "everything".to_owned(),
            call_id: "c3".to_owned(),
            message: "Summarize".to_owned(),
            fields: Vec::new(),
            messages: vec![SamplingMessage {
                role: SamplingRole::User,
                text: "hello".to_owned(),
            }],
            max_tokens: Some(100),
        }),
        SessionEvent::ServerRestart(ServerRestart {
            server: "s".to_owned(),
            restarts: 1,
            reason: "session lost".to_owned(),
            gave_up: None,
        }),
        SessionEvent::ServerRestart(ServerRestart {
            server: "s".to_owned(),
            restarts: 5,
            reason: "session lost".to_owned(),
            gave_up: Some("5 failures in 300 s".to_owned()),
        }),
        SessionEvent::Notice(Notice {
            message: "Claude could not resume its session s1; a new Claude session starts"
                .to_owned(),
        }),
        SessionEvent::ToolsChanged(ToolsChanged {
            server: "s".to_owned(),
            revised: vec!["a".to_owned()],
            withdrawn: vec!["b".to_owned()],
            added: Vec::new(),
        }),
        SessionEvent::ToolsetInitialized(ServerToolset {
            server: "tickets".to_owned(),
            transport: Transport::Stdio,
            live: false,
            tools: 3,
            resources: 1,
            prompts: 2,
            sampling: true,
            digest: "0123456789abcdef".to_owned(),
        }),
        SessionEvent::ToolsetClosed(ServerToolset {
            server: "remote".to_owned(),
            transport: Transport::StreamableHttp,
            live: true,
            tools: 1,
            resources: 0,
            prompts: 0,
            sampling: false,
            digest: "fedcba9876543210".to_owned(),
        }),
        SessionEvent::ToolsetChanged(ToolsetChanged {
            server: "tickets".to_owned(),
            previous: "0123456789abcdef".to_owned(),
            current: "00112233aabbccdd".to_owned(),
            live: false,
        }),
    ]
}

fn responses() -> Vec<(Method, Response)> {
    let prompt = ServerPrompt {
        name: "args-prompt".to_owned(),
        title: None,
        description: Some("asks".to_owned()),
        arguments: vec![
            PromptArgument {
                name: "city".to_owned(),
                title: Some("City".to_owned()),
                description: Some("where".to_owned()),
                required: true,
            },
            PromptArgument {
                name: "state".to_owned(),
                title: None,
                description: None,
                required: false,
            },
        ],
    };
    let resource = |uri: &str, mime: Option<&str>, template: bool| ServerResource {
        uri: uri.to_owned(),
        name: "r".to_owned(),
        title: template.then(|| "T".to_owned()),
        description: None,
        mime_type: mime.map(str::to_owned),
        template,
    };
    let mut assistant = ChatMessage::assistant(
        "",
        vec![ToolCall {
            id: "c1".to_owned(),
            name: "read_file".to_owned(),
            arguments: "{}".to_owned(),
        }],
    );
    assistant.reasoning = "thinking".to_owned();
    let tool =
        ChatMessage::tool_result("c1", "read_file", "contents").with_outcome(CallOutcome::Success);
    let spec = |name: &str, origin| ToolSpec {
        name: name.to_owned(),
        title: None,
        description: "d".to_owned(),
        input_schema: serde_json::json!({"type": "object"}),
        output_schema: None,
        risk: RiskLevel::Read,
        origin,
    };
    let state = |provider: bool| HostState {
        model: provider.then(|| "m".to_owned()),
        provider: provider.then(|| "local".to_owned()),
        provider_source: provider.then_some(ProviderSource::Config),
        provider_error: (!provider).then(|| "no provider".to_owned()),
        cwd: PathBuf::from("/w"),
        session_id: provider.then(|| "s1".to_owned()),
        session_file: provider.then(|| PathBuf::from("/w/s1.jsonl")),
        permission_mode: PermissionMode::ALL[0],
    };
    vec![
        (
            Method::Prompt,
            Response::Prompt(PromptReply {
                reply: "hi".to_owned(),
                finish_reason: FinishReason::Other("weird".to_owned()),
            }),
        ),
        (Method::Prompt, Response::Done),
        (Method::Abort, Response::Done),
        (Method::GetState, Response::State(state(true))),
        (Method::GetState, Response::State(state(false))),
        (
            Method::GetMessages,
            Response::Messages(vec![ChatMessage::user("hello"), assistant, tool]),
        ),
        (
            Method::SetModel,
            Response::Model {
                model: "m".to_owned(),
                provider: "p".to_owned(),
            },
        ),
        (
            Method::ListModels,
            Response::Models {
                models: vec![ModelEntry {
                    id: "m".to_owned(),
                    provider: "p".to_owned(),
                }],
                errors: vec![("q".to_owned(), "refused".to_owned())],
            },
        ),
        (
            Method::ListProviders,
            Response::Providers(vec![
                ProviderReport {
                    id: "p".to_owned(),
                    source: ProviderSource::Builtin,
                    endpoint: "http://localhost:11434/v1".to_owned(),
                    external: false,
                    default_model: None,
                    error: None,
                    active: true,
                },
                ProviderReport {
                    id: "q".to_owned(),
                    source: ProviderSource::Flags,
                    endpoint: "https://example.com/v1".to_owned(),
                    external: true,
                    default_model: Some("big".to_owned()),
                    error: Some("refused".to_owned()),
                    active: false,
                },
            ]),
        ),
        (
            Method::GetSessionStats,
            Response::Stats(SessionStats {
                session_id: None,
                session_file: None,
                usage: usage(1),
                sampling_usage: usage(2),
                context: context(),
                messages: 3,
            }),
        ),
        (
            Method::ListSessions,
            Response::Sessions(vec![
                SessionSummary {
                    id: "s1".to_owned(),
                    path: PathBuf::from("/h/s1.jsonl"),
                    created: 1,
                    modified: 2,
                    messages: 3,
                    first_prompt: Some("hello".to_owned()),
                },
                SessionSummary {
                    id: "s2".to_owned(),
                    path: PathBuf::from("/h/s2.jsonl"),
                    created: 4,
                    modified: 5,
                    messages: 0,
                    first_prompt: None,
                },
            ]),
        ),
        (
            Method::ListExtensions,
            Response::Extensions(Box::new(Extensions {
                plugins: vec![PluginSummary {
                    name: "p".to_owned(),
                    scope: Scope::Project,
                    status: PluginStatus::Loaded,
                    path: PathBuf::from("/w/.agents/plugins/p"),
                }],
                skills: vec![SkillMeta {
                    name: "k".to_owned(),
                    description: "a skill".to_owned(),
                    license: None,
                    compatibility: None,
                    metadata: BTreeMap::new(),
                    allowed_tools: None,
                    location: PathBuf::from("/w/.agents/plugins/p/skills/k/SKILL.md"),
                    source: SkillSource::Plugin {
                        plugin: "p".to_owned(),
                        scope: Scope::Project,
                    },
                }],
                servers: Vec::new(),
                tools: vec!["read_file".to_owned()],
                auth: BTreeMap::new(),
                diagnostics: vec![diagnostic(true), diagnostic(false)],
                context: ContextBudget::default(),
            })),
        ),
        (
            Method::Doctor,
            Response::Doctor(vec![
                Check {
                    check: CheckKind::Config,
                    status: CheckStatus::Ok,
                    detail: "fine".to_owned(),
                },
                Check {
                    check: CheckKind::McpServers,
                    status: CheckStatus::Error,
                    detail: "s failed".to_owned(),
                },
            ]),
        ),
        (Method::Compact, Response::Compacted("summary".to_owned())),
        (
            Method::NewSession,
            Response::Session(SessionInfo {
                session_id: Some("s3".to_owned()),
                session_file: Some(PathBuf::from("/h/s3.jsonl")),
                messages: 0,
            }),
        ),
        (
            Method::ListTools,
            Response::Tools(vec![
                spec("read_file", ToolOrigin::Builtin),
                spec(
                    "mcp__s__t",
                    ToolOrigin::Mcp {
                        server: "p/s".to_owned(),
                        plugin: Some("p".to_owned()),
                        tool: "t".to_owned(),
                    },
                ),
                spec(
                    "wasm__p__convert",
                    ToolOrigin::Wasm {
                        plugin: "p".to_owned(),
                        component: "c".to_owned(),
                        tool: "convert".to_owned(),
                    },
                ),
            ]),
        ),
        (
            Method::ListPrompts,
            Response::Prompts(vec![PromptCommand::new("everything", prompt)]),
        ),
        (
            Method::ListResources,
            Response::Resources(vec![
                (
                    "everything".to_owned(),
                    resource("demo://a", Some("text/plain"), false),
                ),
                ("everything".to_owned(), resource("demo://{id}", None, true)),
            ]),
        ),
        (
            Method::Complete,
            Response::Completions(vec!["Alice".to_owned()]),
        ),
        (Method::QuestionResponse, Response::Done),
    ]
}

#[test]
fn every_notification_is_written_as_docs_rpc_md_spells_it() {
    let lines: Vec<String> = events().iter().map(event_line).collect();
    insta::assert_snapshot!("notifications", lines.join("\n"));
}

#[test]
fn every_result_is_written_as_docs_rpc_md_spells_it() {
    let lines: Vec<String> = responses()
        .into_iter()
        .map(|(method, response)| {
            format!("{}: {}", method.name(), method.encode(response).unwrap())
        })
        .collect();
    insta::assert_snapshot!("results", lines.join("\n"));
}
