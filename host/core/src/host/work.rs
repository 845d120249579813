//! What the host owns while it runs (registry, tool set, session, provider choice) and the
//! handlers of the queued operations. Provider and model choice, new/resume/clear/reload and
//! model switching live here once, for every front-end.

mod runtime;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rho_component::CancelSignal;

use super::desk::{Desk, DeskApprover};
use super::operation::{
    Extensions, HostError, HostState, ModelEntry, Operation, PromptReply, ProviderReport, Response,
    SessionInfo,
};
use super::outbox::Outbox;
use super::server_prompts::{self, PromptCommand};
use super::{Ambient, HostOptions, SessionStart};
use crate::ProviderSource;
use crate::provider::{
    ChatRequest, ChatResponse, Provider, ProviderError, ProviderFuture, StreamEvent,
};
use crate::session::{
    PromptInput, QuestionDesk, Session, SessionConfig, SessionError, SessionEvent, list_sessions,
};
use crate::{MountOptions, ProviderEntry, ProviderFlags, Registry, ToolSet};

/// A provider standing in when none could be chosen: every request fails with the reason.
struct Unavailable(String);

impl Provider for Unavailable {
    fn name(&self) -> &str {
        "none"
    }

    // It reads none of its inputs, so its answer borrows nothing of theirs.
    fn complete(
        &self,
        _: &ChatRequest,
        _: &(dyn Fn(StreamEvent) + Send + Sync),
        _: &CancelSignal,
    ) -> ProviderFuture<'_, ChatResponse> {
        Box::pin(std::future::ready(Err(ProviderError::Config {
            provider: "none".into(),
            message: self.0.clone(),
        })))
    }

    fn list_models(&self) -> ProviderFuture<'_, Vec<String>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

/// The provider chosen for a run: the provider itself, the model and its context window.
type Choice = (Arc<dyn Provider>, String, Option<u64>);

/// Everything a running host owns besides its desk and outbox.
pub(crate) struct Work {
    pub(crate) registry: Registry,
    pub(crate) tools: Arc<ToolSet>,
    pub(crate) session: Session,
    flags: ProviderFlags,
    entries: Vec<ProviderEntry>,
    /// The provider, model and where the provider came from, once one is chosen.
    active: Option<(String, String, ProviderSource)>,
    provider_error: Option<String>,
    ephemeral: bool,
    mount: MountOptions,
    ambient: Ambient,
    fixed_provider: Option<Arc<dyn Provider>>,
    pub(crate) outbox: Arc<Outbox>,
    pub(crate) desk: Arc<Desk>,
    /// Resources read ahead for the next prompt, by `(server, uri)`.
    read_ahead: Vec<((String, String), rho_component::ResourceAttachment)>,
    /// Which agent answers prompts.
    runtime: runtime::Runtime,
}

/// Resources kept read ahead at most (the oldest goes first).
const MAX_READ_AHEAD: usize = 16;

impl Work {
    /// Chooses the provider (no network), mounts the tool set and opens the session.
    pub(crate) async fn start(
        options: HostOptions,
        outbox: Arc<Outbox>,
        desk: Arc<Desk>,
    ) -> Result<Self, SessionError> {
        let entries = crate::provider_entries(&options.registry.config, &options.flags);
        let mut work = Self {
            session: placeholder_session(&options.registry),
            tools: Arc::new(ToolSet::empty()),
            registry: options.registry,
            flags: options.flags,
            entries,
            active: None,
            provider_error: None,
            ephemeral: options.ephemeral,
            mount: options.mount,
            ambient: options.ambient,
            fixed_provider: options.fixed_provider,
            outbox,
            desk,
            read_ahead: Vec::new(),
            runtime: runtime::Runtime::Rho,
        };
        let chosen = options
            .runtime
            .unwrap_or(work.registry.config.agent.runtime);
        if chosen == crate::AgentRuntime::Claude {
            work.start_claude(&options.start).await?;
            return Ok(work);
        }
        let (provider, model, window) = work.choose(None);
        // Only what rho would answer is declared: forms where a person answers questions,
        // sampling where, besides, there is a model to spend (each request asks the person).
        work.mount.elicitation = work.desk.accepts_questions();
        work.mount.sampling = work.desk.accepts_questions() && work.provider_error.is_none();
        work.tools = Arc::new(work.registry.mount(&work.mount).await);
        work.tools.warm_components();
        let config = work.session_config(model, window);
        let dir = work.sessions_dir();
        let tools = work.tools.clone();
        let session = match &options.start {
            SessionStart::New => Session::new(config, provider, tools, dir.as_deref())?,
            SessionStart::Resume(path) => {
                resume(path.clone(), config, provider, tools, &CancelSignal::new()).await?
            }
            SessionStart::Continue => {
                let latest = list_sessions(
                    &work.registry.sessions_dir(),
                    &work.registry.paths.project.cwd,
                )
                .into_iter()
                .next();
                match latest {
                    Some(s) => {
                        resume(s.path, config, provider, tools, &CancelSignal::new()).await?
                    }
                    None => Session::new(config, provider, tools, dir.as_deref())?,
                }
            }
        };
        work.replace_session(session);
        Ok(work)
    }

    /// A provider that refuses every request (a Claude runtime session has no rho provider).
    fn unavailable_provider(&self) -> Arc<dyn Provider> {
        Arc::new(Unavailable(
            "the claude runtime answers prompts itself; rho's provider is not used".into(),
        ))
    }

    fn sessions_dir(&self) -> Option<PathBuf> {
        (!self.ephemeral).then(|| self.registry.sessions_dir())
    }

    fn session_config(&self, model: String, context_window: Option<u64>) -> SessionConfig {
        let agent = &self.registry.config.agent;
        let mut hidden_env = self.registry.secret_variables();
        hidden_env.extend(self.flags.api_key_env.clone());
        SessionConfig {
            workspace: self.registry.paths.project.cwd.clone(),
            model,
            permission_mode: agent.permission_mode,
            max_iterations: agent.max_iterations,
            extra_roots: agent.extra_roots.clone(),
            context_window,
            hidden_env,
            tool_search: agent.tool_search,
            tool_search_budget_percent: agent.tool_search_budget_percent,
        }
    }

    /// Installs `session`, routing its servers' questions to the desk.
    fn replace_session(&mut self, mut session: Session) {
        session.set_question_desk(Some(self.desk.clone() as Arc<dyn QuestionDesk>));
        self.session = session;
    }

    /// Chooses the provider (and records the outcome); on failure a stand-in that explains.
    /// A model without a `provider:` prefix stays with the active provider.
    fn choose(&mut self, model: Option<&str>) -> Choice {
        if let Some(provider) = &self.fixed_provider {
            let model = model
                .or(self.flags.model.as_deref())
                .unwrap_or_default()
                .to_owned();
            self.provider_error = None;
            // A provider the embedding program fixed counts as chosen on its command line.
            self.active = Some((
                provider.name().to_owned(),
                model.clone(),
                ProviderSource::Flags,
            ));
            return (provider.clone(), model, None);
        }
        let ambient = self.ambient.clone();
        let mut agent = self.registry.config.agent.clone();
        if model.is_some()
            && let Some((provider, _, _)) = &self.active
        {
            agent.provider = Some(provider.clone());
        }
        match crate::choose_model(&self.entries, &agent, &self.flags, model, &move |name| {
            ambient(name)
        }) {
            Ok(chosen) => {
                self.provider_error = None;
                self.active = Some((
                    chosen.entry.id.clone(),
                    chosen.model.clone(),
                    chosen.entry.source,
                ));
                (chosen.provider, chosen.model, chosen.entry.context_window)
            }
            Err(e) => {
                tracing::warn!("no usable provider: {e}");
                let e = e.to_string();
                self.provider_error = Some(e.clone());
                self.active = None;
                (Arc::new(Unavailable(e)), String::new(), None)
            }
        }
    }

    /// Handles one queued operation. `cancel` is set for the operations `abort` stops
    /// (prompts and compactions).
    pub(crate) async fn handle(
        &mut self,
        operation: Operation,
        cancel: Option<CancelSignal>,
    ) -> Result<Response, HostError> {
        let cancel = cancel.unwrap_or_default();
        if let Some(refused) = self.refused_by_runtime(&operation) {
            return Err(refused);
        }
        match operation {
            Operation::Prompt {
                message,
                attachments,
            } => self.prompt(message, &attachments, &cancel).await,
            Operation::Clear => {
                if let Some(claude) = self.claude() {
                    claude.clear().await;
                }
                self.session
                    .clear()
                    .map_err(|e| HostError::internal(e.to_string()))?;
                Ok(Response::Done)
            }
            Operation::GetState => Ok(Response::State(self.state())),
            Operation::GetMessages => Ok(Response::Messages(self.session.messages().to_vec())),
            Operation::SetModel(model) if self.is_claude() => self.claude_set_model(&model).await,
            Operation::SetModel(model) => self.set_model(&model),
            Operation::ListModels => Ok(self.list_models().await),
            Operation::ListProviders => Ok(Response::Providers(self.list_providers().await)),
            Operation::GetSessionStats => Ok(Response::Stats(self.session.stats())),
            Operation::ListSessions => Ok(Response::Sessions(list_sessions(
                &self.registry.sessions_dir(),
                &self.registry.paths.project.cwd,
            ))),
            Operation::ListExtensions => Ok(Response::Extensions(Box::new(self.extensions()))),
            Operation::ReadResource { server, uri } => {
                let attachment = self.read_resource(&server, &uri).await?;
                let response = Response::ResourceRead {
                    uri: attachment.uri.clone(),
                    bytes: attachment.text.len(),
                    truncated: attachment.truncated,
                };
                let key = (server, uri);
                self.read_ahead.retain(|(k, _)| *k != key);
                if self.read_ahead.len() >= MAX_READ_AHEAD {
                    self.read_ahead.remove(0);
                }
                self.read_ahead.push((key, attachment));
                Ok(response)
            }
            Operation::Doctor => {
                let ambient = self.ambient.clone();
                Ok(Response::Doctor(
                    crate::doctor::checks(
                        &self.registry,
                        crate::doctor::Servers::Live(&self.tools.servers),
                        &self.flags,
                        &move |name| ambient(name),
                    )
                    .await,
                ))
            }
            Operation::ReloadExtensions => {
                self.reload().await?;
                Ok(Response::Extensions(Box::new(self.extensions())))
            }
            Operation::Compact if self.is_claude() => self.claude_compact(&cancel).await,
            Operation::Compact => {
                let summary = self
                    .session
                    .compact(&cancel)
                    .await
                    .map_err(|e| HostError::internal(e.to_string()))?;
                Ok(Response::Compacted(summary))
            }
            Operation::ResumeSession(path) => {
                let path = if path.is_absolute() {
                    path
                } else {
                    self.registry.paths.project.cwd.join(path)
                };
                if self.is_claude() {
                    self.claude_resume(path, &cancel).await?;
                    return Ok(Response::Session(self.session_info()));
                }
                let session = resume(
                    path,
                    self.session.config().clone(),
                    self.session.provider().clone(),
                    self.tools.clone(),
                    &cancel,
                )
                .await
                .map_err(|e| HostError::invalid_params(e.to_string()))?;
                self.replace_session(session);
                self.session.report_toolsets(self.outbox.as_ref()).await;
                Ok(Response::Session(self.session_info()))
            }
            Operation::NewSession => {
                if let Some(claude) = self.claude() {
                    claude.clear().await;
                }
                let dir = self.sessions_dir();
                let session = Session::new(
                    self.session.config().clone(),
                    self.session.provider().clone(),
                    self.tools.clone(),
                    dir.as_deref(),
                )
                .map_err(|e| HostError::internal(e.to_string()))?;
                self.replace_session(session);
                self.session.report_toolsets(self.outbox.as_ref()).await;
                Ok(Response::Session(self.session_info()))
            }
            Operation::ListTools => Ok(Response::Tools(self.tools.specs())),
            Operation::ListPrompts => Ok(Response::Prompts(
                self.tools
                    .prompts()
                    .await
                    .into_iter()
                    .map(|(server, prompt)| PromptCommand::new(&server, prompt))
                    .collect(),
            )),
            Operation::ListResources => Ok(Response::Resources(self.tools.resources().await)),
            Operation::Steer(_)
            | Operation::Abort
            | Operation::AnswerApproval(_)
            | Operation::AnswerQuestion { .. }
            | Operation::Complete { .. } => Err(HostError::internal(
                "an immediate operation reached the queue",
            )),
        }
    }

    async fn prompt(
        &mut self,
        message: String,
        attachments: &[(String, String)],
        cancel: &CancelSignal,
    ) -> Result<Response, HostError> {
        if self.is_claude() {
            return self.claude_prompt(&message, cancel).await;
        }
        if let Some(error) = self.provider_error.clone() {
            self.outbox
                .deliver(super::HostEvent::Session(SessionEvent::AgentError(
                    error.clone(),
                )))
                .await;
            return Err(HostError::internal(error));
        }
        // Everything that can fail happens before the turn starts: no turn for a bad command
        // or an unreadable attachment.
        let mut input = match server_prompts::split_command(&message) {
            Some((server, prompt, rest)) => self.expand(server, prompt, rest).await?,
            None => PromptInput {
                text: message,
                images: Vec::new(),
            },
        };
        // What was read ahead (`ReadResource`) is used once; the rest is read now.
        let mut ahead = std::mem::take(&mut self.read_ahead);
        let mut read = Vec::with_capacity(attachments.len());
        for (server, uri) in attachments {
            let key = (server.clone(), uri.clone());
            match ahead.iter().position(|(k, _)| *k == key) {
                Some(at) => read.push(ahead.swap_remove(at).1),
                None => read.push(self.read_resource(server, uri).await?),
            }
        }
        server_prompts::attach(&mut input, read);
        let approver = DeskApprover(self.desk.clone());
        let outbox = self.outbox.clone();
        let turn = self
            .session
            .prompt(input, outbox.as_ref(), &approver, cancel)
            .await
            .map_err(|e| HostError::internal(e.to_string()))?;
        Ok(Response::Prompt(PromptReply {
            reply: turn.reply,
            finish_reason: turn.finish_reason,
        }))
    }

    /// A prompt command expanded by its server (`prompts/get` at submit).
    async fn expand(&self, server: &str, name: &str, rest: &str) -> Result<PromptInput, HostError> {
        let command = server_prompts::command_name(server, name);
        let connection = self
            .live_connection(server, &command)
            .await?
            .map_err(HostError::internal)?;
        let prompt = connection
            .prompts()
            .into_iter()
            .find(|p| p.name == name)
            .ok_or_else(|| {
                HostError::invalid_params(format!(
                    "{command}: the server {server} offers no prompt {name:?}"
                ))
            })?;
        let arguments = server_prompts::parse_arguments(&command, &prompt, rest)?;
        let messages = connection
            .get_prompt(name, arguments, None)
            .await
            .map_err(|e| HostError::internal(e.to_string()))?;
        Ok(PromptInput {
            text: server_prompts::turn_text(&messages),
            images: Vec::new(),
        })
    }

    /// `server`'s connection, started if it is lazy (the inner error says why it could not
    /// start); a server not mounted is refused with `doing` opening the message.
    async fn live_connection(
        &self,
        server: &str,
        doing: &str,
    ) -> Result<Result<tokio::sync::RwLockReadGuard<'_, rho_mcp::Connection>, String>, HostError>
    {
        self.tools.live_connection(server).await.ok_or_else(|| {
            HostError::invalid_params(format!(
                "{doing}: no connected MCP server is called {server:?}"
            ))
        })
    }

    /// One attachment, read from its server.
    async fn read_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<rho_component::ResourceAttachment, HostError> {
        let connection = self
            .live_connection(server, &format!("cannot read {uri}"))
            .await?
            .map_err(HostError::invalid_params)?;
        connection
            .read_resource(uri)
            .await
            .map_err(|e| HostError::invalid_params(e.to_string()))
    }

    fn state(&self) -> HostState {
        let stats = self.session.stats();
        if let runtime::Runtime::Claude(claude) = &self.runtime {
            return HostState {
                model: claude.model().map(str::to_owned),
                provider: Some(runtime::CLAUDE_PROVIDER.to_owned()),
                provider_source: None,
                provider_error: None,
                cwd: self.registry.paths.project.cwd.clone(),
                session_id: claude.session_id().map(str::to_owned),
                session_file: stats.session_file,
                permission_mode: self.session.config().permission_mode,
            };
        }
        HostState {
            model: self.active.as_ref().map(|a| a.1.clone()),
            provider: self.active.as_ref().map(|a| a.0.clone()),
            provider_source: self.active.as_ref().map(|a| a.2),
            provider_error: self.provider_error.clone(),
            cwd: self.registry.paths.project.cwd.clone(),
            session_id: stats.session_id,
            session_file: stats.session_file,
            permission_mode: self.session.config().permission_mode,
        }
    }

    fn set_model(&mut self, model: &str) -> Result<Response, HostError> {
        let previous_error = self.provider_error.clone();
        let previous_active = self.active.clone();
        let (provider, model, window) = self.choose(Some(model));
        if let Some(error) = self.provider_error.take() {
            self.provider_error = previous_error;
            self.active = previous_active;
            return Err(HostError::invalid_params(error));
        }
        self.session
            .set_model(model.clone(), Some(provider), window);
        Ok(Response::Model {
            model,
            provider: self
                .active
                .as_ref()
                .map(|a| a.0.clone())
                .unwrap_or_default(),
        })
    }

    fn session_info(&self) -> SessionInfo {
        let stats = self.session.stats();
        SessionInfo {
            session_id: stats.session_id,
            session_file: stats.session_file,
            messages: stats.messages,
        }
    }

    /// Loads every source again and mounts a new tool set for the next turn; the old one is
    /// closed. The conversation and model stay.
    async fn reload(&mut self) -> Result<(), HostError> {
        let registry = self.registry.reload();
        let old_registry = std::mem::replace(&mut self.registry, registry);
        let tools = match self.claude_tools() {
            Some(tools) => tools,
            None => {
                let tools = Arc::new(self.registry.mount(&self.mount).await);
                tools.warm_components();
                tools
            }
        };
        // The new [agent] settings (permission mode, budget, roots) apply from the next turn;
        // the model stays.
        let current = self.session.config().clone();
        let config = self.session_config(current.model, current.context_window);
        self.session.remount(config, tools.clone());
        let old = std::mem::replace(&mut self.tools, tools);
        drop(old_registry);
        self.entries = crate::provider_entries(&self.registry.config, &self.flags);
        if let Ok(old) = Arc::try_unwrap(old) {
            let closed = old.close().await;
            self.session
                .report_closed(closed, self.outbox.as_ref())
                .await;
        }
        self.session.report_toolsets(self.outbox.as_ref()).await;
        Ok(())
    }

    fn extensions(&self) -> Extensions {
        let mut diagnostics = self.registry.diagnostics.clone();
        diagnostics.extend(self.tools.diagnostics.iter().cloned());
        Extensions {
            plugins: self.registry.plugin_summaries(),
            skills: self.tools.skills.clone(),
            servers: self.tools.servers.clone(),
            tools: self.tools.specs().into_iter().map(|s| s.name).collect(),
            auth: self.auth_states(),
            diagnostics,
            context: self.session.context_budget(),
        }
    }

    /// Each OAuth server's login state, from the credential store.
    fn auth_states(&self) -> std::collections::BTreeMap<String, String> {
        let store = rho_config::CredentialStore::new(self.registry.paths.credentials_dir());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.registry
            .servers
            .iter()
            .filter_map(|slot| {
                let spec = slot
                    .spec
                    .as_ref()
                    .filter(|spec| rho_mcp::oauth::oauth_of(spec).is_some())?;
                let state = rho_mcp::oauth::auth_state(&store, spec, now);
                Some((slot.id.clone(), state.to_string()))
            })
            .collect()
    }

    async fn list_models(&self) -> Response {
        let mut models: Vec<ModelEntry> = Vec::new();
        let mut errors = Vec::new();
        let add = |models: &mut Vec<ModelEntry>, id: &str, provider: &str| {
            if !models.iter().any(|m| m.id == id && m.provider == provider) {
                models.push(ModelEntry {
                    id: id.to_owned(),
                    provider: provider.to_owned(),
                });
            }
        };
        for entry in &self.entries {
            for id in entry.models.iter().chain(entry.default_model.iter()) {
                add(&mut models, id, &entry.id);
            }
            match self.probe(entry).await {
                Ok(ids) => {
                    for id in ids {
                        add(&mut models, &id, &entry.id);
                    }
                }
                Err(error) => errors.push((entry.id.clone(), error)),
            }
        }
        Response::Models { models, errors }
    }

    /// Asks a provider for its models within 3 s (external providers only with consent).
    async fn probe(&self, entry: &ProviderEntry) -> Result<Vec<String>, String> {
        if let Some(problem) = &entry.problem {
            return Err(problem.clone());
        }
        if entry.external && !self.flags.accept_external_provider {
            return Err(
                "external provider: not contacted without --accept-external-provider".into(),
            );
        }
        let ambient = self.ambient.clone();
        crate::list_provider_models(entry, &move |name| ambient(name), Duration::from_secs(3))
            .await
            .map_err(|e| e.to_string())
    }

    async fn list_providers(&self) -> Vec<ProviderReport> {
        let mut providers = Vec::new();
        for entry in &self.entries {
            let probe = self.probe(entry).await;
            providers.push(ProviderReport {
                id: entry.id.clone(),
                source: entry.source,
                endpoint: entry.endpoint.clone(),
                external: entry.external,
                default_model: entry.default_model.clone(),
                error: probe.err(),
                active: self.active.as_ref().is_some_and(|a| a.0 == entry.id),
            });
        }
        providers
    }

    /// The session file, when it exists on disk.
    pub(crate) fn saved_session(&self) -> Option<PathBuf> {
        self.session
            .file_path()
            .filter(|path| path.is_file())
            .map(Path::to_path_buf)
    }

    /// Reports the servers' toolsets the session start made usable (after `ready`: the
    /// front-end reads events from now on).
    pub(crate) async fn report_start(&mut self) {
        self.session.report_toolsets(self.outbox.as_ref()).await;
    }

    /// Stops keep-alives and closes every MCP server, reporting each closed
    /// (`toolset/closed`).
    pub(crate) async fn shutdown(self) {
        let Self {
            mut session,
            tools,
            outbox,
            runtime,
            ..
        } = self;
        if let runtime::Runtime::Claude(claude) = runtime {
            claude.shutdown().await;
        }
        drop(session.release_tools());
        if let Ok(tools) = Arc::try_unwrap(tools) {
            let closed = tools.close().await;
            session.report_closed(closed, outbox.as_ref()).await;
        }
    }
}

/// Resumes the session saved at `path` on a blocking thread: the file is read (and checked to
/// be a regular file of at most `SESSION_MAX_BYTES`) off the host's task, so operations that
/// answer at once, and a stop, are never held up by the disk. `cancel` (a stop, or `abort`)
/// ends the wait; the read then finishes on its own and is dropped.
async fn resume(
    path: PathBuf,
    config: SessionConfig,
    provider: Arc<dyn Provider>,
    tools: Arc<ToolSet>,
    cancel: &CancelSignal,
) -> Result<Session, SessionError> {
    let file = path.clone();
    let read = tokio::task::spawn_blocking(move || Session::resume(&file, config, provider, tools));
    tokio::select! {
        joined = read => match joined {
            Ok(resumed) => resumed,
            Err(_) => Err(SessionError::ResumeFailed { path }),
        },
        () = cancel.cancelled() => Err(SessionError::Cancelled),
    }
}

/// A session that is replaced before [`Work::start`] returns (the provider is chosen first).
fn placeholder_session(registry: &Registry) -> Session {
    let config = SessionConfig {
        workspace: registry.paths.project.cwd.clone(),
        model: String::new(),
        permission_mode: registry.config.agent.permission_mode,
        max_iterations: registry.config.agent.max_iterations,
        extra_roots: Vec::new(),
        context_window: None,
        hidden_env: Vec::new(),
        tool_search: registry.config.agent.tool_search,
        tool_search_budget_percent: registry.config.agent.tool_search_budget_percent,
    };
    Session::ephemeral(
        config,
        Arc::new(Unavailable(String::new())),
        Arc::new(ToolSet::empty()),
    )
}

/// Suggestions for one argument of a prompt command: what the command's server answers (or
/// has cached); nothing for an unknown server or prompt.
pub(crate) async fn complete(
    tools: &ToolSet,
    command: &str,
    argument: &str,
    value: &str,
    arguments: std::collections::BTreeMap<String, String>,
) -> Vec<String> {
    let Some((server, prompt, _)) = server_prompts::split_command(command) else {
        return Vec::new();
    };
    let Some(connection) = tools.connection(server) else {
        return Vec::new();
    };
    // A server that has not started has no suggestions yet: typing never starts one.
    let connection = connection.read().await;
    let Some(connection) = connection.as_ref() else {
        return Vec::new();
    };
    connection
        .complete(prompt, argument, value, arguments)
        .await
}
