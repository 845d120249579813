//! What an RPC run owns (registry, tool set, session, provider choice) and the handlers of
//! the queued methods.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rho_component::CancelSignal;
use rho_core::provider::{
    ChatRequest, ChatResponse, Provider, ProviderError, ProviderFuture, StreamEvent,
};
use rho_core::session::{Session, SessionConfig, list_sessions};
use rho_core::{MountOptions, ProviderEntry, ProviderFlags, Registry, ToolSet};

use crate::convert;
use crate::jsonrpc::{ErrorCode, Request, error_line, result_line};
use crate::server::{SessionStart, Shared};
use crate::wire::{
    CompactResult, Empty, ExtensionsResult, MessagesResult, ModelWire, ModelsResult, NoParams,
    PluginWire, PromptParams, ProviderProblem, ProviderWire, ProvidersResult, ResumeSessionParams,
    ServerWire, SessionResult, SessionWire, SessionsResult, SetModelParams, SetModelResult,
    SkillWire, StateResult, StatsResult, ToolWire, ToolsResult,
};

/// Looks an environment variable up (API keys).
pub type Ambient = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// How an RPC run starts.
pub struct RpcOptions {
    /// Every component source, loaded.
    pub registry: Registry,
    /// Provider flags from the command line.
    pub flags: ProviderFlags,
    /// No session file.
    pub ephemeral: bool,
    /// New, `--continue` or `--session <path>`.
    pub start: SessionStart,
    /// How to mount the tool set.
    pub mount: MountOptions,
    /// Where API keys are looked up (the process environment in `rho rpc`).
    pub ambient: Ambient,
}

impl std::fmt::Debug for RpcOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RpcOptions")
            .field("ephemeral", &self.ephemeral)
            .field("start", &self.start)
            .finish_non_exhaustive()
    }
}

/// A provider standing in when none could be chosen: every request fails with the reason.
struct Unavailable(String);

impl Provider for Unavailable {
    fn name(&self) -> &str {
        "none"
    }

    fn complete<'a>(
        &'a self,
        _: &'a ChatRequest<'a>,
        _: &'a (dyn Fn(StreamEvent) + Send + Sync),
        _: &'a CancelSignal,
    ) -> ProviderFuture<'a, ChatResponse> {
        Box::pin(async move {
            Err(ProviderError::Config {
                provider: "none".into(),
                message: self.0.clone(),
            })
        })
    }

    fn list_models(&self) -> ProviderFuture<'_, Vec<String>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

/// The state of one RPC run.
pub struct App {
    pub(crate) registry: Registry,
    pub(crate) tools: Arc<ToolSet>,
    pub(crate) session: Session,
    flags: ProviderFlags,
    entries: Vec<ProviderEntry>,
    active: Option<(String, String)>,
    pub(crate) provider_error: Option<String>,
    ephemeral: bool,
    mount: MountOptions,
    ambient: Ambient,
    pub(crate) shared: Option<Arc<Shared>>,
}

type Reply = Result<String, (ErrorCode, String)>;

fn ok<T: serde::Serialize>(value: &T) -> Reply {
    serde_json::to_string(value).map_err(|e| (ErrorCode::Internal, e.to_string()))
}

impl App {
    /// Mounts the tool set, chooses the provider (no network) and opens the session.
    pub async fn start(options: RpcOptions) -> Result<Self, String> {
        let tools = Arc::new(options.registry.mount(&options.mount).await);
        let entries = rho_core::provider_entries(&options.registry.config, &options.flags);
        let mut app = Self {
            session: placeholder_session(&options.registry, tools.clone()),
            registry: options.registry,
            tools,
            flags: options.flags,
            entries,
            active: None,
            provider_error: None,
            ephemeral: options.ephemeral,
            mount: options.mount,
            ambient: options.ambient,
            shared: None,
        };
        let (provider, model, window) = app.choose(None);
        let config = app.session_config(model, window);
        let dir = app.sessions_dir();
        app.session = match &options.start {
            SessionStart::New => Session::new(config, provider, app.tools.clone(), dir.as_deref())
                .map_err(|e| e.to_string())?,
            SessionStart::Resume(path) => {
                Session::resume(path, config, provider, app.tools.clone())
                    .map_err(|e| e.to_string())?
            }
            SessionStart::Continue => {
                let latest = list_sessions(
                    &app.registry.sessions_dir(),
                    &app.registry.paths.project.cwd,
                )
                .into_iter()
                .next();
                match latest {
                    Some(s) => Session::resume(&s.path, config, provider, app.tools.clone())
                        .map_err(|e| e.to_string())?,
                    None => Session::new(config, provider, app.tools.clone(), dir.as_deref())
                        .map_err(|e| e.to_string())?,
                }
            }
        };
        Ok(app)
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
        }
    }

    /// Chooses the provider (and records the outcome); on failure a stand-in that explains.
    /// A model without a `provider:` prefix stays with the active provider.
    fn choose(&mut self, model: Option<&str>) -> (Arc<dyn Provider>, String, Option<u64>) {
        let ambient = self.ambient.clone();
        let mut agent = self.registry.config.agent.clone();
        if model.is_some()
            && let Some((provider, _)) = &self.active
        {
            agent.provider = Some(provider.clone());
        }
        match rho_core::choose_model(&self.entries, &agent, &self.flags, model, &move |name| {
            ambient(name)
        }) {
            Ok(chosen) => {
                self.provider_error = None;
                self.active = Some((chosen.entry.id.clone(), chosen.model.clone()));
                (chosen.provider, chosen.model, chosen.entry.context_window)
            }
            Err(e) => {
                tracing::warn!("no usable provider: {e}");
                self.provider_error = Some(e.clone());
                self.active = None;
                (Arc::new(Unavailable(e)), String::new(), None)
            }
        }
    }

    /// Stops keep-alives and closes every MCP server.
    pub(crate) async fn shutdown(self) {
        let Self { session, tools, .. } = self;
        drop(session);
        if let Ok(tools) = Arc::try_unwrap(tools) {
            tools.close().await;
        }
    }

    /// Handles a queued request; the line to send back (for requests with an id).
    pub(crate) async fn handle(&mut self, request: &Request) -> Option<String> {
        let reply = self.dispatch(request).await;
        let id = request.id.as_deref()?;
        Some(match reply {
            Ok(json) => match serde_json::value::RawValue::from_string(json) {
                Ok(raw) => result_line(id, &raw),
                Err(e) => error_line(Some(id), ErrorCode::Internal, &e.to_string()),
            },
            Err((code, message)) => error_line(Some(id), code, &message),
        })
    }

    fn none(request: &Request) -> Result<(), (ErrorCode, String)> {
        request
            .params::<NoParams>()
            .map(|_| ())
            .map_err(|e| (ErrorCode::InvalidParams, e))
    }

    async fn dispatch(&mut self, request: &Request) -> Reply {
        let params = |r: &Request| -> Result<(), (ErrorCode, String)> { Self::none(r) };
        match request.method.as_str() {
            "prompt" => {
                let p: PromptParams = request
                    .required_params()
                    .map_err(|e| (ErrorCode::InvalidParams, e))?;
                let result = self.run_prompt(p).await?;
                ok(&result)
            }
            "clear" => {
                params(request)?;
                self.session
                    .clear()
                    .map_err(|e| (ErrorCode::Internal, e.to_string()))?;
                ok(&Empty {})
            }
            "getState" => {
                params(request)?;
                let stats = self.session.stats();
                ok(&StateResult {
                    model: self.active.as_ref().map(|a| a.1.clone()),
                    provider: self.active.as_ref().map(|a| a.0.clone()),
                    provider_error: self.provider_error.clone(),
                    cwd: self.registry.paths.project.cwd.clone(),
                    session_id: stats.session_id,
                    session_file: stats.session_file,
                    permission_mode: self.session.config().permission_mode.as_str().to_owned(),
                })
            }
            "getMessages" => {
                params(request)?;
                ok(&MessagesResult {
                    messages: self
                        .session
                        .messages()
                        .iter()
                        .map(convert::message)
                        .collect(),
                })
            }
            "setModel" => {
                let p: SetModelParams = request
                    .required_params()
                    .map_err(|e| (ErrorCode::InvalidParams, e))?;
                let previous_error = self.provider_error.clone();
                let previous_active = self.active.clone();
                let (provider, model, window) = self.choose(Some(&p.model));
                if let Some(error) = self.provider_error.take() {
                    self.provider_error = previous_error;
                    self.active = previous_active;
                    return Err((ErrorCode::InvalidParams, error));
                }
                self.session
                    .set_model(model.clone(), Some(provider), window);
                ok(&SetModelResult {
                    model,
                    provider: self
                        .active
                        .as_ref()
                        .map(|a| a.0.clone())
                        .unwrap_or_default(),
                })
            }
            "listModels" => {
                params(request)?;
                ok(&self.list_models().await)
            }
            "listProviders" => {
                params(request)?;
                ok(&self.list_providers().await)
            }
            "getSessionStats" => {
                params(request)?;
                let s = self.session.stats();
                ok(&StatsResult {
                    session_id: s.session_id,
                    session_file: s.session_file,
                    usage: convert::usage(&s.usage),
                    context: convert::context(&s.context),
                    messages: s.messages,
                })
            }
            "listSessions" => {
                params(request)?;
                let sessions = list_sessions(
                    &self.registry.sessions_dir(),
                    &self.registry.paths.project.cwd,
                )
                .into_iter()
                .map(|s| SessionWire {
                    id: s.id,
                    path: s.path,
                    created: s.created,
                    modified: s.modified,
                    messages: s.messages,
                    first_prompt: s.first_prompt,
                })
                .collect();
                ok(&SessionsResult { sessions })
            }
            "listExtensions" => {
                params(request)?;
                ok(&self.extensions())
            }
            "reloadExtensions" => {
                params(request)?;
                self.reload().await?;
                ok(&self.extensions())
            }
            "compact" => {
                params(request)?;
                // `abort` and EOF stop a compaction like a prompt.
                let shared = self.shared.clone();
                let cancel = shared
                    .as_ref()
                    .map_or_else(CancelSignal::new, |s| s.begin(false));
                let result = self.session.compact(&cancel).await;
                if let Some(shared) = &shared {
                    shared.end();
                }
                let summary = result.map_err(|e| (ErrorCode::Internal, e.to_string()))?;
                ok(&CompactResult { summary })
            }
            "resumeSession" => {
                let p: ResumeSessionParams = request
                    .required_params()
                    .map_err(|e| (ErrorCode::InvalidParams, e))?;
                let config = self.session.config().clone();
                let path = if p.path.is_absolute() {
                    p.path.clone()
                } else {
                    self.registry.paths.project.cwd.join(&p.path)
                };
                let session = Session::resume(
                    &path,
                    config,
                    self.session.provider().clone(),
                    self.tools.clone(),
                )
                .map_err(|e| (ErrorCode::InvalidParams, e.to_string()))?;
                self.session_replaced(session);
                ok(&self.session_result())
            }
            "newSession" => {
                params(request)?;
                let config = self.session.config().clone();
                let dir = self.sessions_dir();
                let session = Session::new(
                    config,
                    self.session.provider().clone(),
                    self.tools.clone(),
                    dir.as_deref(),
                )
                .map_err(|e| (ErrorCode::Internal, e.to_string()))?;
                self.session_replaced(session);
                ok(&self.session_result())
            }
            "listTools" => {
                params(request)?;
                ok(&ToolsResult {
                    tools: self.tools.specs().map(tool_wire).collect(),
                })
            }
            other => Err((ErrorCode::MethodNotFound, format!("no method {other:?}"))),
        }
    }

    fn session_result(&self) -> SessionResult {
        let stats = self.session.stats();
        SessionResult {
            session_id: stats.session_id,
            session_file: stats.session_file,
            messages: stats.messages,
        }
    }

    /// Loads every source again and mounts a new tool set for the next turn; the old one is
    /// closed. The conversation and model stay.
    async fn reload(&mut self) -> Result<(), (ErrorCode, String)> {
        let registry = self.registry.reload();
        let tools = Arc::new(registry.mount(&self.mount).await);
        let old_registry = std::mem::replace(&mut self.registry, registry);
        // The new [agent] settings (permission mode, budget, roots) apply from the next turn;
        // the model stays.
        let current = self.session.config().clone();
        let config = self.session_config(current.model, current.context_window);
        let messages = self.session.messages().to_vec();
        let path = self.session.file_path().map(std::path::Path::to_path_buf);
        let provider = self.session.provider().clone();
        let session = match &path {
            Some(path) => Session::resume(path, config, provider, tools.clone()),
            None => Session::new(config, provider, tools.clone(), None).map(|mut s| {
                s.restore_messages(messages);
                s
            }),
        }
        .map_err(|e| (ErrorCode::Internal, e.to_string()))?;
        let old = std::mem::replace(&mut self.tools, tools);
        drop(old_registry);
        self.entries = rho_core::provider_entries(&self.registry.config, &self.flags);
        self.session_replaced(session);
        if let Ok(old) = Arc::try_unwrap(old) {
            old.close().await;
        }
        Ok(())
    }

    fn extensions(&self) -> ExtensionsResult {
        let mut diagnostics: Vec<_> = self
            .registry
            .diagnostics
            .iter()
            .map(convert::diagnostic)
            .collect();
        diagnostics.extend(self.tools.diagnostics.iter().map(convert::diagnostic));
        ExtensionsResult {
            plugins: self
                .registry
                .plugin_summaries()
                .into_iter()
                .map(|p| PluginWire {
                    name: p.name,
                    scope: p.scope.to_owned(),
                    status: p.status.to_owned(),
                    path: p.path,
                })
                .collect(),
            skills: self
                .tools
                .skills
                .iter()
                .map(|s| SkillWire {
                    name: s.name.clone(),
                    description: s.description.clone(),
                    source: s.source.kind().to_owned(),
                    plugin: s.source.plugin().map(str::to_owned),
                })
                .collect(),
            servers: self
                .tools
                .servers
                .iter()
                .map(|s| ServerWire {
                    id: s.id.clone(),
                    source: s.source.as_str().to_owned(),
                    plugin: s.plugin.clone(),
                    status: s.status.as_str().to_owned(),
                    error: s.status.error().map(str::to_owned),
                    protocol_version: s.protocol_version.clone(),
                    tools: s.tools.clone(),
                    ping_failure: s.last_ping_failure(),
                })
                .collect(),
            tools: self.tools.specs().map(|s| s.name.clone()).collect(),
            diagnostics,
        }
    }

    async fn list_models(&self) -> ModelsResult {
        let mut models = Vec::new();
        let mut errors = Vec::new();
        for entry in &self.entries {
            for id in entry.models.iter().chain(entry.default_model.iter()) {
                if !models
                    .iter()
                    .any(|m: &ModelWire| &m.id == id && m.provider == entry.id)
                {
                    models.push(ModelWire {
                        id: id.clone(),
                        provider: entry.id.clone(),
                    });
                }
            }
            match self.probe(entry).await {
                Ok(ids) => {
                    for id in ids {
                        if !models.iter().any(|m| m.id == id && m.provider == entry.id) {
                            models.push(ModelWire {
                                id,
                                provider: entry.id.clone(),
                            });
                        }
                    }
                }
                Err(error) => errors.push(ProviderProblem {
                    provider: entry.id.clone(),
                    error,
                }),
            }
        }
        ModelsResult { models, errors }
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
        rho_core::list_provider_models(entry, &move |name| ambient(name), Duration::from_secs(3))
            .await
    }

    async fn list_providers(&self) -> ProvidersResult {
        let mut providers = Vec::new();
        for entry in &self.entries {
            let probe = self.probe(entry).await;
            providers.push(ProviderWire {
                id: entry.id.clone(),
                source: entry.source.to_owned(),
                endpoint: entry.endpoint.clone(),
                external: entry.external,
                default_model: entry.default_model.clone(),
                reachable: probe.is_ok(),
                error: probe.err(),
                active: self.active.as_ref().is_some_and(|a| a.0 == entry.id),
            });
        }
        ProvidersResult { providers }
    }
}

fn tool_wire(spec: &rho_component::ToolSpec) -> ToolWire {
    let (server, plugin) = match &spec.origin {
        rho_component::ToolOrigin::Mcp { server, plugin, .. } => {
            (Some(server.clone()), plugin.clone())
        }
        rho_component::ToolOrigin::Wasm { plugin, .. } => (None, Some(plugin.clone())),
        rho_component::ToolOrigin::Builtin => (None, None),
    };
    ToolWire {
        name: spec.name.clone(),
        title: spec.title.clone(),
        description: spec.description.clone(),
        input_schema: spec.input_schema.clone(),
        risk: spec.risk.as_str().to_owned(),
        source: spec.origin.kind().to_owned(),
        server,
        plugin,
    }
}

/// A session that is replaced before `App::start` returns (it needs `self` to choose the
/// provider first).
fn placeholder_session(registry: &Registry, tools: Arc<ToolSet>) -> Session {
    let config = SessionConfig {
        workspace: registry.paths.project.cwd.clone(),
        model: String::new(),
        permission_mode: registry.config.agent.permission_mode,
        max_iterations: registry.config.agent.max_iterations,
        extra_roots: Vec::new(),
        context_window: None,
        hidden_env: Vec::new(),
    };
    Session::ephemeral(config, Arc::new(Unavailable(String::new())), tools)
}
