//! What the screen tests share: a [`Harness`] that drives an [`App`] the way the event loop
//! does (operations out, host events and keys in), fixtures for what a host reports, and
//! [`screen`], a frame drawn on a test terminal as text.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::{Buffer, CellWidth};
use rho_component::{
    Choice, Diagnostic, DiagnosticCode, FieldKind, FormField, PromptArgument, RiskLevel,
    SamplingMessage, SamplingRole, ServerPrompt, ServerResource, Severity, SkillMeta, SkillSource,
    ToolOrigin, ToolSpec, Transport,
};
use rho_core::host::{
    Extensions, HostError, HostEvent, HostState, Operation, PromptCommand, PromptReply, RequestId,
    Response,
};
use rho_core::provider::{FinishReason, Usage};
use rho_core::session::{
    ApprovalAsked, CallFinished, CallOutcome, CallStarted, ContextSnapshot, LoopState,
    QuestionKind, QuestionRequest, SessionEvent, SessionSummary, TurnResult, UsageReport,
};
use rho_core::{MountedServer, MountedTool, ServerSource, ServerStatus};
use rho_tui::app::App;
use rho_tui::theme::Theme;

/// The frame `app` draws on a `width`×`height` terminal, one quoted row a line, then where
/// the cursor is (or that it is hidden).
pub fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal.draw(|frame| app.render(frame)).expect("a frame");
    let backend = terminal.backend();
    let mut text = rows(backend.buffer());
    if backend.cursor_visible() {
        let at = backend.cursor_position();
        text.push_str(&format!("cursor at ({}, {})\n", at.x, at.y));
    } else {
        text.push_str("cursor hidden\n");
    }
    text
}

/// The buffer's rows, each quoted. A cell under the second column of a wide character is not
/// drawn; one that holds something other than a space is reported after its row (something
/// was drawn over half a wide character).
fn rows(buffer: &Buffer) -> String {
    let width = usize::from(buffer.area.width);
    let mut text = String::new();
    for cells in buffer.content.chunks(width) {
        let mut hidden = Vec::new();
        let mut skip = 0usize;
        text.push('"');
        for (x, cell) in cells.iter().enumerate() {
            if skip == 0 {
                text.push_str(cell.symbol());
            } else if cell.symbol() != " " {
                hidden.push((x, cell.symbol().to_owned()));
            }
            skip = skip.max(usize::from(cell.cell_width())).saturating_sub(1);
        }
        text.push('"');
        if !hidden.is_empty() {
            text.push_str(&format!(" hidden under wide characters: {hidden:?}"));
        }
        text.push('\n');
    }
    text
}

/// The rows of a [`screen`] above its last `below` rows (and the cursor line).
pub fn rows_above(screen: &str, below: usize) -> Vec<&str> {
    let rows: Vec<&str> = screen.lines().filter(|l| l.starts_with('"')).collect();
    rows[..rows.len() - below].to_vec()
}

/// A key without modifiers.
pub fn plain(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// Ctrl and a key.
pub fn ctrl(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::CONTROL)
}

/// An [`App`] with the plain theme, driven like the event loop drives it.
pub struct Harness {
    /// The app under test.
    pub app: App,
    /// The id of the running prompt, answered by [`Harness::end_turn`].
    prompt: Option<RequestId>,
}

impl Harness {
    /// A fresh app that has asked for its start-up state (nothing answered yet).
    pub fn new() -> Self {
        let mut app = App::new(Theme::plain());
        app.start(false);
        Self { app, prompt: None }
    }

    /// A fresh app whose start-up questions were answered with the default fixtures.
    pub fn started() -> Self {
        let mut harness = Self::new();
        harness.reply_startup(extensions(), tools(), prompts(), resources());
        harness
    }

    /// A fresh app whose host reports `state` (and the default fixtures for the rest).
    pub fn started_with(state: HostState) -> Self {
        let mut harness = Self::new();
        harness.reply_startup_as(state, extensions(), tools(), prompts(), resources());
        harness
    }

    /// Answers the start-up operations (state, extensions, tools, prompts, resources).
    pub fn reply_startup(
        &mut self,
        extensions: Extensions,
        tools: Vec<ToolSpec>,
        prompts: Vec<PromptCommand>,
        resources: Vec<(String, ServerResource)>,
    ) {
        self.reply_startup_as(state(), extensions, tools, prompts, resources);
    }

    /// [`Harness::reply_startup`] with the host's state given.
    pub fn reply_startup_as(
        &mut self,
        state: HostState,
        extensions: Extensions,
        tools: Vec<ToolSpec>,
        prompts: Vec<PromptCommand>,
        resources: Vec<(String, ServerResource)>,
    ) {
        let operations = self.operations();
        assert_eq!(
            operations.len(),
            5,
            "start-up asks five things: {operations:?}"
        );
        for (id, operation) in operations {
            let response = match operation {
                Operation::GetState => Response::State(state.clone()),
                Operation::ListExtensions => Response::Extensions(Box::new(extensions.clone())),
                Operation::ListTools => Response::Tools(tools.clone()),
                Operation::ListPrompts => Response::Prompts(prompts.clone()),
                Operation::ListResources => Response::Resources(resources.clone()),
                other => panic!("not a start-up operation: {other:?}"),
            };
            self.reply(id, response);
        }
    }

    /// The operations the app queued, in order (taking them, as the event loop does).
    pub fn operations(&mut self) -> Vec<(RequestId, Operation)> {
        self.app.take_operations()
    }

    /// The queued operations without their ids.
    pub fn sent(&mut self) -> Vec<Operation> {
        self.operations().into_iter().map(|(_, op)| op).collect()
    }

    /// The one operation queued; fails when there is not exactly one.
    pub fn one_operation(&mut self) -> (RequestId, Operation) {
        let mut operations = self.operations();
        assert_eq!(
            operations.len(),
            1,
            "expected one operation: {operations:?}"
        );
        operations.remove(0)
    }

    /// Answers operation `id`.
    pub fn reply(&mut self, id: RequestId, response: Response) {
        self.app.on_host_event(HostEvent::Reply {
            id,
            result: Ok(response),
        });
    }

    /// Answers the one queued operation with `response`; returns that operation.
    pub fn reply_one(&mut self, response: Response) -> Operation {
        let (id, operation) = self.one_operation();
        self.reply(id, response);
        operation
    }

    /// Fails operation `id`.
    pub fn fail(&mut self, id: RequestId, error: HostError) {
        self.app.on_host_event(HostEvent::Reply {
            id,
            result: Err(error),
        });
    }

    /// Delivers a session event.
    pub fn session(&mut self, event: SessionEvent) {
        self.app.on_host_event(HostEvent::Session(event));
    }

    /// Delivers several session events.
    pub fn sessions(&mut self, events: impl IntoIterator<Item = SessionEvent>) {
        for event in events {
            self.session(event);
        }
    }

    /// Streams `parts` of the answer.
    pub fn stream(&mut self, parts: &[&str]) {
        for part in parts {
            self.session(SessionEvent::MessageDelta((*part).to_owned()));
        }
    }

    /// Presses a key without modifiers.
    pub fn key(&mut self, code: KeyCode) {
        self.app.on_key(plain(code));
    }

    /// Presses a key with its modifiers.
    pub fn press(&mut self, key: KeyEvent) {
        self.app.on_key(key);
    }

    /// Types `text`, one key a character.
    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    /// Types `text` and presses Enter.
    pub fn submit(&mut self, text: &str) {
        self.type_text(text);
        self.key(KeyCode::Enter);
    }

    /// Sends `text` as a prompt and starts its turn (the host's `AgentStart` and thinking).
    pub fn prompt(&mut self, text: &str) {
        self.submit(text);
        let (id, operation) = self.one_operation();
        assert_eq!(
            operation,
            Operation::Prompt {
                message: text.to_owned(),
                attachments: Vec::new(),
            }
        );
        self.prompt = Some(id);
        self.sessions([
            SessionEvent::AgentStart,
            SessionEvent::StateChange(LoopState::Thinking),
        ]);
    }

    /// Ends the running turn as the host does: `AgentEnd` with `finish_reason`, idle, and the
    /// prompt's reply.
    pub fn end_turn(&mut self, finish_reason: FinishReason) {
        self.sessions([
            turn_end(finish_reason.clone()),
            SessionEvent::StateChange(LoopState::Idle),
        ]);
        if let Some(id) = self.prompt.take() {
            self.reply(
                id,
                Response::Prompt(PromptReply {
                    reply: String::new(),
                    finish_reason,
                }),
            );
        }
    }

    /// Fails the running turn as the host does: idle, `AgentError`, then the prompt's reply
    /// fails with the same message.
    pub fn fail_turn(&mut self, message: &str) {
        self.sessions([
            SessionEvent::StateChange(LoopState::Idle),
            SessionEvent::AgentError(message.to_owned()),
        ]);
        if let Some(id) = self.prompt.take() {
            self.fail(id, HostError::internal(message));
        }
    }

    /// One whole exchange: the prompt, the streamed answer, the end of the turn.
    pub fn exchange(&mut self, prompt: &str, answer: &str) {
        self.prompt(prompt);
        self.stream(&[answer]);
        self.end_turn(FinishReason::Stop);
    }

    /// The model asks for `name` with `arguments` as call `call_id`.
    pub fn tool_call(&mut self, call_id: &str, name: &str, arguments: &str) {
        self.session(SessionEvent::ToolCall(CallStarted {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            // The TUI names a card from its tool specs, never from this field.
            display_name: name.to_owned(),
            arguments: arguments.to_owned(),
        }));
    }

    /// The gate asks about the call `call_id` of `name` with `arguments`.
    pub fn approval(&mut self, call_id: &str, name: &str, arguments: &str, risk: RiskLevel) {
        self.sessions([
            SessionEvent::StateChange(LoopState::AwaitingApproval),
            SessionEvent::ApprovalRequest(ApprovalAsked {
                call_id: call_id.to_owned(),
                tool: name.to_owned(),
                display_name: name.to_owned(),
                arguments: arguments.to_owned(),
                risk,
            }),
        ]);
    }

    /// The loop starts running tools.
    pub fn executing(&mut self) {
        self.session(SessionEvent::StateChange(LoopState::ExecutingTool));
    }

    /// Call `call_id` of `name` finished.
    pub fn tool_result(&mut self, call_id: &str, name: &str, is_error: bool, output: &str) {
        let outcome = if is_error {
            CallOutcome::Error {
                message: output.lines().next().unwrap_or_default().to_owned(),
            }
        } else {
            CallOutcome::Success
        };
        self.session(SessionEvent::ToolResult(CallFinished {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            is_error,
            outcome,
            output: output.to_owned(),
            image: None,
        }));
    }

    /// The frame at `width`×`height`.
    pub fn screen(&mut self, width: u16, height: u16) -> String {
        screen(&mut self.app, width, height)
    }
}

// ---- fixtures ----

/// The workspace the host reports (not under `$HOME`, so it is shown as it is).
pub fn state() -> HostState {
    HostState {
        model: Some("fake-model-1".to_owned()),
        provider: Some("local".to_owned()),
        provider_source: Some(rho_core::ProviderSource::Config),
        provider_error: None,
        cwd: PathBuf::from("/srv/demo"),
        session_id: Some("0197a3c2-demo".to_owned()),
        session_file: None,
        permission_mode: rho_component::PermissionMode::Ask,
    }
}

/// A tool spec.
pub fn tool(name: &str, description: &str, risk: RiskLevel, origin: ToolOrigin) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        title: None,
        description: description.to_owned(),
        input_schema: Default::default(),
        output_schema: None,
        risk,
        origin,
    }
}

/// A tool of the `everything` server, under the name a session exports it as.
pub fn everything_tool(tool_name: &str, risk: RiskLevel) -> ToolSpec {
    tool(
        &rho_component::naming::full_name("everything", tool_name),
        &format!(
            "the everything server's {tool_name}\n{}{}",
            rho_component::SERVER_HINT_PREFIX,
            if risk == RiskLevel::Read {
                "read-only (readOnlyHint: true)"
            } else {
                "may modify its environment (readOnlyHint: false)"
            }
        ),
        risk,
        ToolOrigin::Mcp {
            server: "everything".to_owned(),
            tool: tool_name.to_owned(),
            plugin: None,
        },
    )
}

/// The session's tools: three built-ins and four of the `everything` server.
pub fn tools() -> Vec<ToolSpec> {
    vec![
        tool(
            "read_file",
            "Read a file of the workspace",
            RiskLevel::Read,
            ToolOrigin::Builtin,
        ),
        tool(
            "write_file",
            "Write a file of the workspace",
            RiskLevel::Write,
            ToolOrigin::Builtin,
        ),
        tool(
            "bash",
            "Run a shell command",
            RiskLevel::Destructive,
            ToolOrigin::Builtin,
        ),
        everything_tool("echo", RiskLevel::Read),
        everything_tool("longRunningOperation", RiskLevel::Write),
        everything_tool("startElicitation", RiskLevel::Write),
        everything_tool("sampleLLM", RiskLevel::Write),
    ]
}

/// A server entry; `tools` are the server's own names, exported as a session exports them.
pub fn server(
    id: &str,
    transport: Transport,
    status: ServerStatus,
    tools: &[&str],
) -> MountedServer {
    let tools = tools
        .iter()
        .map(|t| MountedTool {
            name: rho_component::naming::full_name(id, t),
            tool: (*t).to_owned(),
            needs_tasks: false,
        })
        .collect();
    MountedServer::new(
        id,
        ServerSource::Config,
        None,
        Some(transport),
        status,
        tools,
    )
    .with_protocol_version("2025-06-18")
}

/// The `everything` server, running and used.
pub fn everything() -> MountedServer {
    server(
        "everything",
        Transport::Stdio,
        ServerStatus::Used,
        &[
            "echo",
            "longRunningOperation",
            "startElicitation",
            "sampleLLM",
        ],
    )
}

/// A project skill.
pub fn skill(name: &str, description: &str) -> SkillMeta {
    SkillMeta {
        name: name.to_owned(),
        description: description.to_owned(),
        license: None,
        compatibility: None,
        metadata: Default::default(),
        allowed_tools: None,
        location: PathBuf::from(format!("/srv/demo/.rho/skills/{name}/SKILL.md")),
        source: SkillSource::Project,
    }
}

/// What the run loaded: one connected server and one skill.
pub fn extensions() -> Extensions {
    Extensions {
        plugins: Vec::new(),
        skills: vec![skill(
            "monorepo-release",
            "cut a release of every crate in the workspace",
        )],
        servers: vec![everything()],
        tools: tools().into_iter().map(|t| t.name).collect(),
        auth: BTreeMap::new(),
        diagnostics: Vec::new(),
        context: context_budget(false),
    }
}

/// What the next request costs with the `everything` server's 3 tools and rho's own: all sent,
/// or (`deferring`) the server's tools waiting behind the tool search but one.
pub fn context_budget(deferring: bool) -> rho_core::session::ContextBudget {
    use rho_core::session::{ContextBudget, OwnerBudget, ToolBudget};
    let everything = OwnerBudget {
        tools: 3,
        tokens: 1_520,
        waiting: if deferring { 2 } else { 0 },
        loaded: usize::from(deferring),
    };
    let builtin = OwnerBudget {
        tools: 8,
        tokens: 2_310,
        waiting: 0,
        loaded: 0,
    };
    ContextBudget {
        system_tokens: 812,
        tools: ToolBudget {
            mode: if deferring {
                rho_core::ToolSearch::Always
            } else {
                rho_core::ToolSearch::Auto
            },
            deferring,
            context_window: 128_000,
            window_known: true,
            budget_tokens: 12_800,
            all_tokens: 3_830,
            sent_tokens: if deferring { 2_950 } else { 3_830 },
            owners: [
                ("everything".to_owned(), everything),
                ("rho".to_owned(), builtin),
            ]
            .into_iter()
            .collect(),
        },
        conversation_tokens: 4_204,
    }
}

/// Three servers: connected with tools, failed with an error, disabled.
pub fn three_servers() -> Extensions {
    let mut extensions = extensions();
    extensions.servers = vec![
        everything(),
        server(
            "github",
            Transport::StreamableHttp,
            ServerStatus::Failed(
                "the server did not finish its handshake within 10s (connection refused)"
                    .to_owned(),
            ),
            &[],
        ),
        server("sqlite", Transport::Stdio, ServerStatus::Disabled, &[]),
    ];
    extensions.auth = BTreeMap::from([("github".to_owned(), "needs login".to_owned())]);
    extensions.diagnostics = vec![
        Diagnostic::new(
            Severity::Error,
            DiagnosticCode::McpServerFailed,
            "server `github` did not start: connection refused",
        ),
        Diagnostic::new(
            Severity::Warning,
            DiagnosticCode::SkillShadowed,
            "skill `monorepo-release` in ~/.rho/skills is shadowed by the project's",
        ),
    ];
    extensions
}

/// The `everything` server's `args-prompt`.
pub fn prompts() -> Vec<PromptCommand> {
    vec![PromptCommand::new(
        "everything",
        ServerPrompt {
            name: "args-prompt".to_owned(),
            title: None,
            description: Some("a prompt with arguments".to_owned()),
            arguments: vec![
                PromptArgument {
                    name: "city".to_owned(),
                    title: None,
                    description: Some("the city".to_owned()),
                    required: true,
                },
                PromptArgument {
                    name: "state".to_owned(),
                    title: None,
                    description: Some("the state".to_owned()),
                    required: false,
                },
            ],
        },
    )]
}

/// A resource (or template) of `everything`.
pub fn resource(uri: &str, name: &str, template: bool) -> (String, ServerResource) {
    (
        "everything".to_owned(),
        ServerResource {
            uri: uri.to_owned(),
            name: name.to_owned(),
            title: None,
            description: None,
            mime_type: Some("text/plain".to_owned()),
            template,
        },
    )
}

/// Three resources and a template.
pub fn resources() -> Vec<(String, ServerResource)> {
    vec![
        resource("test://static/resource/1", "Resource 1", false),
        resource("test://static/resource/2", "Resource 2", false),
        resource("test://static/resource/3", "Resource 3", false),
        resource("test://static/resource/{id}", "Static resource", true),
    ]
}

/// How a turn ended.
pub fn turn_end(finish_reason: FinishReason) -> SessionEvent {
    SessionEvent::AgentEnd(TurnResult {
        reply: String::new(),
        iterations: 1,
        usage: Usage::default(),
        tool_calls: Vec::new(),
        duration_ms: 1200,
        finish_reason,
    })
}

/// One model request's usage.
pub fn usage(total_tokens: u64, percent: f64) -> SessionEvent {
    SessionEvent::Usage(UsageReport {
        iteration: 1,
        usage: Usage {
            input_tokens: total_tokens - 200,
            output_tokens: 200,
            total_tokens,
            total_cost: 0.0,
            request_count: 1,
        },
        context: ContextSnapshot {
            tokens: total_tokens - 200,
            window: Some(32_768),
            percent: Some(percent),
            messages: 2,
        },
    })
}

/// A form field.
pub fn field(name: &str, title: &str, kind: FieldKind) -> FormField {
    FormField {
        name: name.to_owned(),
        title: Some(title.to_owned()),
        kind,
        choices: Vec::new(),
        default: None,
        required: false,
        help: None,
    }
}

/// The `everything` server's form about call `call_id`: a required text field with help, a
/// boolean, a choice of three with titles, an integer with a default.
pub fn form(id: u64, call_id: &str) -> QuestionRequest {
    let name = FormField {
        required: true,
        help: Some("as it should appear on the invoice".to_owned()),
        ..field("name", "Full name", FieldKind::Text)
    };
    let subscribe = field("subscribe", "Subscribe to updates", FieldKind::Boolean);
    let color = FormField {
        choices: [("red", "Red"), ("green", "Green"), ("blue", "Blue")]
            .into_iter()
            .map(|(value, title)| Choice {
                value: value.to_owned(),
                title: Some(title.to_owned()),
            })
            .collect(),
        ..field("color", "Favourite colour", FieldKind::Choice)
    };
    let count = FormField {
        default: Some("3".to_owned()),
        help: Some("minimum 1, maximum 10".to_owned()),
        ..field("count", "How many", FieldKind::Integer)
    };
    QuestionRequest {
        id,
        kind: QuestionKind::Elicitation,
        server: "everything".to_owned(),
        call_id: call_id.to_owned(),
        message: "Please tell us about yourself.".to_owned(),
        fields: vec![name, subscribe, color, count],
        messages: Vec::new(),
        max_tokens: None,
    }
}

/// The `everything` server asks to use the model during call `call_id`.
pub fn sampling(id: u64, call_id: &str) -> QuestionRequest {
    QuestionRequest {
        id,
        kind: QuestionKind::Sampling,
        server: "everything".to_owned(),
        call_id: call_id.to_owned(),
        message: "Resource sampleLLM context: summarise the text below in one sentence.".to_owned(),
        fields: Vec::new(),
        messages: vec![SamplingMessage {
            role: SamplingRole::User,
            text: "The quick brown fox jumps over the lazy dog. It does so every morning, \
                   before breakfast, to the great annoyance of the dog."
                .to_owned(),
        }],
        max_tokens: Some(100),
    }
}

/// Three saved sessions, most recent first.
pub fn saved_sessions() -> Vec<SessionSummary> {
    [
        ("a1", 12, Some("fix the flaky integration test in rho-mcp")),
        ("b2", 4, Some("explain how the approval gate decides")),
        ("c3", 0, None),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (id, messages, prompt))| SessionSummary {
        id: id.to_owned(),
        path: PathBuf::from(format!("/home/dev/.rho/sessions/srv-demo/{id}.jsonl")),
        created: 1_750_000_000 + i as u64,
        modified: 1_750_000_100 + i as u64,
        messages,
        first_prompt: prompt.map(str::to_owned),
    })
    .collect()
}
