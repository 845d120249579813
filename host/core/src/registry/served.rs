//! What `rho mcp serve` offers another MCP client (`docs/mcp.md`, "rho as an MCP server"):
//! the tools a session mounts, under their exported names, filtered by component and, for
//! built-in tools, by risk. Each call runs as a session's would (the workspace, its extra
//! roots, secrets hidden from the processes tools start); a server's questions during a call
//! go to the client that made it (answered, or declined when it cannot answer them).
//! Skills are served as prompts and their files as resources (`skill_files.rs`); upstream
//! servers' prompts, resources and resource templates pass through, a read of a templated URI
//! routed to the server whose template it matches (`uri_template.rs`). MCP tools and prompts
//! are served under rho's exported names or, with `--upstream-names`, their servers' own
//! (`names.rs`).

mod names;
mod skill_files;
mod subscriptions;
mod uri_template;

pub use names::{NameClash, ServedNames};

use std::collections::BTreeSet;
use std::sync::Arc;

use rho_component::{CancelSignal, ProgressSink, RiskLevel, ToolContext, ToolOrigin, ToolSpec};
use rho_component::{
    PromptMessage, PromptRole, ResourceBody, ServerPrompt, ServerResource, SkillMeta, SkillSource,
};
use rho_mcp::serving::{
    ArgumentCompletion, Completing, ServeInfo, Served, ServedCall, ServedChanges, ServedFuture,
    ServedList, ServedPrompt, ServedRefusal, ServedSearch,
};

use super::Registry;
use super::skill_tool::ACTIVATE_SKILL;
use super::tool_set::{MountOptions, ToolSet};
use crate::tool_search::{SearchDoc, SearchIndex};

/// How clients reach `rho mcp serve`.
#[derive(Clone)]
pub enum ServeTransport {
    /// stdin and stdout: the client started rho.
    Stdio,
    /// Streamable HTTP at `http://<addr>/mcp`.
    Http {
        /// Where to listen (port 0: any free port).
        addr: std::net::SocketAddr,
        /// Listening on an address other machines reach was asked for (`--allow-remote`).
        allow_remote: bool,
        /// The token every request must carry as `Authorization: Bearer <token>`; required
        /// with `allow_remote`.
        bearer: Option<Bearer>,
    },
}

/// A bearer token and the environment variable it came from (hidden from the processes
/// tools start, like every secret).
#[derive(Clone)]
pub struct Bearer {
    /// The variable's name.
    pub variable: String,
    /// Its value.
    pub token: String,
}

impl std::fmt::Debug for ServeTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stdio => f.write_str("Stdio"),
            // Never the token itself.
            Self::Http {
                addr,
                allow_remote,
                bearer,
            } => f
                .debug_struct("Http")
                .field("addr", addr)
                .field("allow_remote", allow_remote)
                .field("bearer", &bearer.as_ref().map(|b| &b.variable))
                .finish(),
        }
    }
}

/// Which tools `rho mcp serve` offers, and how.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// stdio or Streamable HTTP.
    pub transport: ServeTransport,
    /// Offer built-in tools (file tools, `run_command`, ...) up to `max_risk`.
    pub builtins: bool,
    /// The highest risk of a built-in tool offered.
    pub max_risk: RiskLevel,
    /// Offer only these components' tools (MCP server identities or plugin names); all when
    /// empty.
    pub only: Vec<String>,
    /// Never offer these components' tools.
    pub exclude: Vec<String>,
    /// List only `tool_search` (and what a client's searches found) instead of every tool.
    pub tool_search: bool,
    /// The names MCP tools and prompts are served under.
    pub names: ServedNames,
}

/// Why `rho mcp serve` could not serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// `--only` or `--exclude` names no component rho has.
    #[error("{flag} names no MCP server or plugin: {names} (known: {known})")]
    UnknownComponent {
        /// The flag.
        flag: &'static str,
        /// The unknown names.
        names: String,
        /// The components rho has.
        known: String,
    },
    /// `--http` names an address other machines reach without `--allow-remote`.
    #[error(
        "{0} is not a loopback address: pass --allow-remote (with --token-env VAR) to serve other machines"
    )]
    NotLoopback(std::net::SocketAddr),
    /// `--allow-remote` without a token.
    #[error("--allow-remote needs --token-env VAR: the bearer token every client must send")]
    RemoteWithoutToken,
    /// The address cannot be listened on.
    #[error("cannot listen on {addr}: {message}")]
    Listen {
        /// The address.
        addr: std::net::SocketAddr,
        /// Why.
        message: String,
    },
    /// With `--upstream-names`, two served components would get the same name.
    #[error(
        "--upstream-names: two served {kind}s would be named {name:?}: {first} and {second}; serve one of them with --only (or --exclude the other)",
        kind = .0.kind, name = .0.name, first = .0.first, second = .0.second
    )]
    NameClash(NameClash),
    /// The client side failed.
    #[error(transparent)]
    Serving(#[from] rho_mcp::serving::ServeError),
}

impl Registry {
    /// Serves this registry's tools as one MCP server, on stdin and stdout until the client
    /// closes stdin, or on Streamable HTTP (its address told to `listening` once bound), until
    /// `stop` fires; then closes every server it started.
    pub async fn serve_mcp(
        &self,
        options: ServeOptions,
        stop: CancelSignal,
        listening: impl FnOnce(std::net::SocketAddr),
    ) -> Result<(), ServeError> {
        self.check_components(&options)?;
        let http = match &options.transport {
            ServeTransport::Stdio => None,
            ServeTransport::Http {
                addr,
                allow_remote,
                bearer,
            } => {
                if !addr.ip().is_loopback() && !allow_remote {
                    return Err(ServeError::NotLoopback(*addr));
                }
                if *allow_remote && bearer.is_none() {
                    return Err(ServeError::RemoteWithoutToken);
                }
                let listen_error = |e: std::io::Error| ServeError::Listen {
                    addr: *addr,
                    message: e.to_string(),
                };
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(listen_error)?;
                listening(listener.local_addr().map_err(listen_error)?);
                Some(rho_mcp::serving::HttpServe {
                    listener,
                    bearer: bearer.as_ref().map(|b| b.token.clone()),
                    any_host: *allow_remote,
                })
            }
        };
        // Servers are told rho can show forms and (those with `sampling = "ask"`) sample: each
        // call passes their questions to its client, which answers them or has them declined.
        let mount = MountOptions {
            oauth_login: rho_mcp::oauth::LoginPolicy::Never,
            elicitation: true,
            sampling: true,
            ..MountOptions::default()
        };
        let set = Arc::new(self.mount(&mount).await);
        for d in &set.diagnostics {
            tracing::warn!(target: "rho::serve", code = d.code.as_str(), "{}", d.message);
        }
        let mut context = ToolContext::new(&self.paths.project.cwd);
        context.extra_roots = self.config.agent.extra_roots.clone();
        context.hidden_env = self.secret_variables();
        if let ServeTransport::Http {
            bearer: Some(bearer),
            ..
        } = &options.transport
        {
            // A command a tool runs never sees the token clients must send.
            context.hidden_env.push(bearer.variable.clone());
        }
        let (changed, changes) = tokio::sync::watch::channel(ServedChanges::default());
        let served = Arc::new(ServedTools {
            set: set.clone(),
            options,
            context,
            skills: self.skills.skills.iter().cloned().collect(),
            plugins: self.plugins.clone(),
            changes,
            subscriptions: subscriptions::Subscriptions::default(),
        });
        if let Some(clash) = served.first_clash().await {
            drop(served);
            close_when_released(set).await;
            return Err(ServeError::NameClash(clash));
        }
        let watcher = tokio::spawn(watch_changes(set.clone(), changed));
        let info = ServeInfo {
            name: "rho".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
        };
        let result = match http {
            None => rho_mcp::serving::serve_stdio(served, info, stop).await,
            Some(http) => rho_mcp::serving::serve_http(served, info, http, stop).await,
        };
        watcher.abort();
        let _ = watcher.await;
        close_when_released(set).await;
        Ok(result?)
    }

    /// Fails when `--only` or `--exclude` names a component rho does not have.
    fn check_components(&self, options: &ServeOptions) -> Result<(), ServeError> {
        let mut known: BTreeSet<&str> = self.servers.iter().map(|s| s.id.as_str()).collect();
        known.extend(self.plugins.plugins.iter().map(|p| p.name.as_str()));
        for (flag, names) in [("--only", &options.only), ("--exclude", &options.exclude)] {
            let unknown: Vec<&str> = names
                .iter()
                .map(String::as_str)
                .filter(|n| !known.contains(n))
                .collect();
            if !unknown.is_empty() {
                return Err(ServeError::UnknownComponent {
                    flag,
                    names: unknown.join(", "),
                    known: if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.iter().copied().collect::<Vec<_>>().join(", ")
                    },
                });
            }
        }
        Ok(())
    }
}

/// How often the served set is checked for servers whose tool lists changed.
const CHANGE_CHECK: std::time::Duration = std::time::Duration::from_millis(500);

/// Takes each change of the set's tool lists (an upstream `list_changed`, a lazy server's
/// first start: what a session takes at its turn boundaries) and of its servers' prompts and
/// resources (which their connections re-list by themselves), and counts it on `changed`, for
/// the clients to be told.
async fn watch_changes(set: Arc<ToolSet>, changed: tokio::sync::watch::Sender<ServedChanges>) {
    let mut tick = tokio::time::interval(CHANGE_CHECK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut prompts = set.prompts().await;
    let mut resources = set.resources().await;
    loop {
        tick.tick().await;
        let tools = !set.reconcile_idle().await.is_empty();
        let now_prompts = set.prompts().await;
        let now_resources = set.resources().await;
        let prompts_moved = now_prompts != prompts;
        let resources_moved = now_resources != resources;
        (prompts, resources) = (now_prompts, now_resources);
        if tools || prompts_moved || resources_moved {
            changed.send_modify(|count| {
                count.tools += u64::from(tools);
                count.prompts += u64::from(prompts_moved);
                count.resources += u64::from(resources_moved);
            });
        }
        // Nobody reports restarts here (a session does, after each batch): keep the queue
        // from growing; the servers' states still show them.
        drop(set.take_restarts());
    }
}

/// Closes `set` once nothing else holds it (the service's handlers let go as their sessions
/// end), waiting half a second at most; a set still held is left to drop, which kills its
/// processes.
async fn close_when_released(mut set: Arc<ToolSet>) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(500);
    loop {
        match Arc::try_unwrap(set) {
            Ok(set) => {
                set.close().await;
                return;
            }
            Err(held) if tokio::time::Instant::now() < deadline => {
                set = held;
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            Err(_) => {
                tracing::warn!(target: "rho::serve", "the served tool set is still held; its servers are stopped as it drops");
                return;
            }
        }
    }
}

/// What `rho mcp serve` offers from a mounted set and the registry's skills.
struct ServedTools {
    set: Arc<ToolSet>,
    options: ServeOptions,
    /// What every call runs with (each gets its own cancellation and progress).
    context: ToolContext,
    /// The skills, served as prompts.
    skills: Vec<SkillMeta>,
    /// Where plugin skills' bodies are read.
    plugins: Arc<rho_plugins::PluginInventory>,
    /// Counts changes of the served lists ([`watch_changes`]).
    changes: tokio::sync::watch::Receiver<ServedChanges>,
    /// Clients' resource subscriptions, passed to the servers.
    subscriptions: subscriptions::Subscriptions,
}

/// What starts a served skill prompt's name.
const SKILL_PROMPT_PREFIX: &str = "skill:";

impl ServedTools {
    /// Whether the component named by `names` (a server identity and its plugin, or a
    /// plugin) passes `--only` and `--exclude`.
    fn offers_component(&self, names: &[&str]) -> bool {
        let named = |list: &[String]| names.iter().any(|n| list.iter().any(|l| l == n));
        (self.options.only.is_empty() || named(&self.options.only)) && !named(&self.options.exclude)
    }

    /// Whether `server`'s prompts and resources are offered.
    fn offers_server(&self, server: &str) -> bool {
        match server.split_once('/') {
            Some((plugin, _)) => self.offers_component(&[server, plugin]),
            None => self.offers_component(&[server]),
        }
    }

    /// The skills offered: a plugin's as that plugin, the others always (not with `--only`).
    fn offered_skills(&self) -> impl Iterator<Item = &SkillMeta> {
        self.skills.iter().filter(|skill| match &skill.source {
            SkillSource::Plugin { plugin, .. } => self.offers_component(&[plugin]),
            _ => self.options.only.is_empty(),
        })
    }

    /// Every offered server's prompts as `(served name, server, prompt)`, in the set's order
    /// (`<server>:<prompt>`, or the server's own name).
    async fn upstream_prompts(&self) -> Vec<(String, String, ServerPrompt)> {
        self.set
            .prompts()
            .await
            .into_iter()
            .filter(|(server, _)| self.offers_server(server))
            .map(|(server, prompt)| {
                let served = self.options.names.prompt(&server, &prompt.name);
                (served, server, prompt)
            })
            .collect()
    }

    /// The offered servers' prompts as `(served name, server, prompt)` (`<server>:<prompt>`, or
    /// the server's own name), none whose name a skill or an earlier prompt already takes.
    async fn served_prompts(&self) -> Vec<(String, String, ServerPrompt)> {
        let mut taken: BTreeSet<String> = self
            .offered_skills()
            .map(|skill| format!("{SKILL_PROMPT_PREFIX}{}", skill.name))
            .collect();
        self.upstream_prompts()
            .await
            .into_iter()
            .filter(|(served, _, _)| taken.insert(served.clone()))
            .collect()
    }

    /// `server`'s connection, started first when it is lazy; `unknown` when no such server
    /// is mounted, its start's failure otherwise.
    async fn connection(
        &self,
        server: &str,
        unknown: impl FnOnce() -> ServedRefusal,
    ) -> Result<tokio::sync::RwLockReadGuard<'_, rho_mcp::Connection>, ServedRefusal> {
        self.set
            .live_connection(server)
            .await
            .ok_or_else(unknown)?
            .map_err(ServedRefusal::Failed)
    }

    /// The served resources (`template: false`) or resource templates (`true`) of the
    /// offered servers, with their servers, first of each URI only.
    async fn served_resources(&self, template: bool) -> Vec<(String, ServerResource)> {
        let mut seen = BTreeSet::new();
        self.set
            .resources()
            .await
            .into_iter()
            .filter(|(server, r)| {
                r.template == template && self.offers_server(server) && seen.insert(r.uri.clone())
            })
            .collect()
    }

    /// The server that serves `uri`: the first to list it, else the first whose template
    /// it matches.
    async fn resource_server(&self, uri: &str) -> Option<String> {
        if let Some((server, _)) = self
            .served_resources(false)
            .await
            .into_iter()
            .find(|(_, r)| r.uri == uri)
        {
            return Some(server);
        }
        self.served_resources(true)
            .await
            .into_iter()
            .find(|(_, t)| uri_template::matches(&t.uri, uri))
            .map(|(server, _)| server)
    }

    /// The offered tools as `(served name, declaration)`, in serving order. A tool whose served
    /// name an earlier one has (a server that joined after the start check, with
    /// `--upstream-names`) is left out, with a warning.
    fn served_specs(&self) -> Vec<(String, ToolSpec)> {
        let mut taken: BTreeSet<String> = self
            .search_tool()
            .map(|search| search.name)
            .into_iter()
            .collect();
        let mut served = Vec::new();
        for spec in self.set.specs() {
            if !self.offers(&spec) {
                continue;
            }
            let name = self.options.names.tool(&spec).to_owned();
            if taken.insert(name.clone()) {
                served.push((name, spec));
            } else {
                tracing::warn!(target: "rho::serve", "tool {name:?} of {} is not served: another served tool has that name", names::tool_owner(&spec));
            }
        }
        served
    }

    /// The first name two served tools, or two served prompts, would share (checked before
    /// serving starts).
    async fn first_clash(&self) -> Option<NameClash> {
        if self.options.names == ServedNames::Exported {
            // Exported names are unique by construction.
            return None;
        }
        let search = self
            .search_tool()
            .map(|search| (search.name, "--tool-search".to_owned()));
        let tools = self
            .set
            .specs()
            .into_iter()
            .filter(|spec| self.offers(spec));
        let tools = search.into_iter().chain(tools.map(|spec| {
            (
                self.options.names.tool(&spec).to_owned(),
                names::tool_owner(&spec),
            )
        }));
        if let Some(clash) = names::first_clash("tool", tools) {
            return Some(clash);
        }
        let skills = self.offered_skills().map(|skill| {
            (
                format!("{SKILL_PROMPT_PREFIX}{}", skill.name),
                format!("skill {:?}", skill.name),
            )
        });
        let prompts = self
            .upstream_prompts()
            .await
            .into_iter()
            .map(|(served, server, _)| (served, format!("MCP server {server:?}")));
        names::first_clash("prompt", skills.chain(prompts).collect::<Vec<_>>())
    }

    /// Whether `spec` is offered.
    fn offers(&self, spec: &ToolSpec) -> bool {
        if spec.name == ACTIVATE_SKILL {
            return false;
        }
        let names = component_names(&spec.origin);
        if names.is_empty() {
            // A built-in tool.
            return self.options.builtins && spec.risk <= self.options.max_risk;
        }
        let named = |list: &[String]| names.iter().any(|n| list.iter().any(|l| l == n));
        (self.options.only.is_empty() || named(&self.options.only)) && !named(&self.options.exclude)
    }
}

/// The component names a tool answers to in `--only` and `--exclude`: its MCP server
/// identity and the plugin that declares it, or the plugin of a WASM tool; none for a
/// built-in tool.
fn component_names(origin: &ToolOrigin) -> Vec<&str> {
    match origin {
        ToolOrigin::Builtin => Vec::new(),
        ToolOrigin::Mcp { server, plugin, .. } => std::iter::once(server.as_str())
            .chain(plugin.as_deref())
            .collect(),
        ToolOrigin::Wasm { plugin, .. } => vec![plugin.as_str()],
    }
}

impl Served for ServedTools {
    fn tools(&self) -> ServedList<'_> {
        Box::pin(async move {
            // Changes join through `watch_changes`, which tells every client.
            self.served_specs()
                .into_iter()
                .map(|(name, spec)| ToolSpec { name, ..spec })
                .collect()
        })
    }

    fn changes(&self) -> tokio::sync::watch::Receiver<ServedChanges> {
        self.changes.clone()
    }

    fn search_tool(&self) -> Option<ToolSpec> {
        self.options.tool_search.then(crate::session::search_spec)
    }

    fn search(&self, arguments: serde_json::Value) -> ServedSearch<'_> {
        Box::pin(async move {
            let docs = self
                .tools()
                .await
                .iter()
                .map(SearchDoc::from_spec)
                .collect();
            crate::session::search_call(&SearchIndex::new(docs), &arguments)
        })
    }

    fn prompts(&self) -> ServedFuture<'_, Vec<ServerPrompt>> {
        Box::pin(async move {
            let skills = self.offered_skills().map(|skill| ServerPrompt {
                name: format!("{SKILL_PROMPT_PREFIX}{}", skill.name),
                title: None,
                description: Some(skill.description.clone()),
                arguments: Vec::new(),
            });
            let servers = self
                .served_prompts()
                .await
                .into_iter()
                .map(|(served, _, prompt)| ServerPrompt {
                    name: served,
                    ..prompt
                });
            skills.chain(servers).collect()
        })
    }

    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: std::collections::BTreeMap<String, String>,
        asker: Arc<dyn rho_component::Asker>,
    ) -> ServedFuture<'a, Result<ServedPrompt, ServedRefusal>> {
        Box::pin(async move {
            let unknown = || ServedRefusal::Unknown(format!("no prompt named {name:?}"));
            if let Some(skill) = self
                .offered_skills()
                .find(|s| name.strip_prefix(SKILL_PROMPT_PREFIX) == Some(s.name.as_str()))
            {
                let body = super::skill_body(skill, &self.plugins)
                    .map_err(|e| ServedRefusal::Failed(e.to_string()))?;
                return Ok(ServedPrompt::Messages(vec![PromptMessage {
                    role: PromptRole::User,
                    text: body,
                }]));
            }
            // Looked up by the name it is listed under (a server identity may hold `:`).
            let (server, prompt) = self
                .served_prompts()
                .await
                .into_iter()
                .find(|(served, _, _)| served == name)
                .map(|(_, server, prompt)| (server, prompt.name))
                .ok_or_else(unknown)?;
            self.connection(&server, unknown)
                .await?
                .get_prompt_as_sent(&prompt, arguments, Some(asker))
                .await
                .map(ServedPrompt::AsSent)
                .map_err(|e| ServedRefusal::Failed(e.to_string()))
        })
    }

    fn complete(&self, asked: ArgumentCompletion) -> ServedFuture<'_, Option<Vec<String>>> {
        Box::pin(async move {
            let ArgumentCompletion {
                of,
                argument,
                value,
                context,
            } = asked;
            let (server, upstream) = match &of {
                Completing::Prompt(prompt) => {
                    // A skill's prompt takes no arguments: nothing to suggest.
                    if self
                        .offered_skills()
                        .any(|s| prompt.strip_prefix(SKILL_PROMPT_PREFIX) == Some(s.name.as_str()))
                    {
                        return Some(Vec::new());
                    }
                    self.served_prompts()
                        .await
                        .into_iter()
                        .find(|(served, _, _)| served == prompt)
                        .map(|(_, server, upstream)| (server, upstream.name))?
                }
                // Templates pass through under their own URI templates.
                Completing::ResourceTemplate(template) => self
                    .served_resources(true)
                    .await
                    .into_iter()
                    .find(|(_, t)| t.uri == *template)
                    .map(|(server, t)| (server, t.uri))?,
            };
            // A server that cannot be started suggests nothing, as a quiet one does.
            let connection = self
                .connection(&server, || ServedRefusal::Unknown(String::new()))
                .await
                .ok()?;
            Some(match of {
                Completing::Prompt(_) => {
                    connection
                        .complete(&upstream, &argument, &value, context)
                        .await
                }
                Completing::ResourceTemplate(_) => {
                    connection
                        .complete_template(&upstream, &argument, &value, context)
                        .await
                }
            })
        })
    }

    fn resources(&self) -> ServedFuture<'_, Vec<ServerResource>> {
        Box::pin(async move {
            // Listing skill folders reads the disk: not on the runtime's threads.
            let offered: Vec<SkillMeta> = self.offered_skills().cloned().collect();
            let skills = tokio::task::spawn_blocking(move || {
                offered
                    .iter()
                    .flat_map(skill_files::resources)
                    .collect::<Vec<_>>()
            })
            .await
            .unwrap_or_default();
            let mut seen = BTreeSet::new();
            skills
                .into_iter()
                .chain(
                    self.served_resources(false)
                        .await
                        .into_iter()
                        .map(|(_, resource)| resource),
                )
                .filter(|r| seen.insert(r.uri.clone()))
                .collect()
        })
    }

    fn resource_templates(&self) -> ServedFuture<'_, Vec<ServerResource>> {
        Box::pin(async move {
            self.served_resources(true)
                .await
                .into_iter()
                .map(|(_, template)| template)
                .collect()
        })
    }

    fn subscribe<'a>(&'a self, uri: &'a str) -> ServedFuture<'a, Result<(), ServedRefusal>> {
        Box::pin(self.hold_subscription(uri))
    }

    fn unsubscribe<'a>(&'a self, uri: &'a str) -> ServedFuture<'a, ()> {
        Box::pin(self.release_subscription(uri))
    }

    fn resource_updates(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.subscriptions.updates()
    }

    fn read_resource<'a>(
        &'a self,
        uri: &'a str,
    ) -> ServedFuture<'a, Result<Vec<ResourceBody>, ServedRefusal>> {
        Box::pin(async move {
            let unknown = || ServedRefusal::Unknown(format!("no resource at {uri:?}"));
            if uri.starts_with(skill_files::SCHEME) {
                // Read off the disk: not on the runtime's threads.
                let skills: Vec<SkillMeta> = self.offered_skills().cloned().collect();
                let owned = uri.to_owned();
                let read =
                    tokio::task::spawn_blocking(move || skill_files::read(skills.iter(), &owned))
                        .await
                        .map_err(|e| ServedRefusal::Failed(e.to_string()))?;
                return match read {
                    Some(body) => body.map(|b| vec![b]).map_err(ServedRefusal::Failed),
                    None => Err(unknown()),
                };
            }
            let server = self.resource_server(uri).await.ok_or_else(unknown)?;
            self.connection(&server, unknown)
                .await?
                .read_resource_bodies(uri)
                .await
                .map_err(|e| ServedRefusal::Failed(e.to_string()))
        })
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: serde_json::Value,
        cancel: CancelSignal,
        progress: Option<ProgressSink>,
        asker: Arc<dyn rho_component::Asker>,
    ) -> ServedCall<'a> {
        Box::pin(async move {
            let exported = match self.options.names {
                ServedNames::Exported => name.to_owned(),
                ServedNames::Upstream => {
                    self.served_specs()
                        .into_iter()
                        .find(|(served, _)| served == name)?
                        .1
                        .name
                }
            };
            let tool = self.set.get(&exported).filter(|t| self.offers(t.spec()))?;
            let mut context = self.context.clone();
            context.cancel = cancel;
            context.progress = progress;
            context.asker = Some(asker);
            Some(tool.call_as_sent(arguments, &context).await)
        })
    }
}
