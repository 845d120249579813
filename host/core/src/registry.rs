//! The component registry: every source of a run loaded once and merged under one set of
//! precedence, shadowing and naming rules.
//!
//! [`Registry::load`] is synchronous and starts nothing: it reads `config.toml`, discovers
//! Agent Plugins roots, gathers skills (built-in, loose user, loose project, project plugins,
//! user plugins, in that precedence) and lists every MCP server entry. [`Registry::mount`]
//! then builds the fixed [`ToolSet`] of a session: built-in tools, `activate_skill` (only when
//! skills exist) and the tools of every MCP server that starts within its budget;
//! [`Registry::probe`] starts servers the same way for an inventory, and closes them;
//! [`Registry::call_tool`] starts one and calls one of its tools (`rho mcp call`).

mod direct_call;
mod mcp_tool;
mod mount;
mod output_contract;
mod probe;
mod served;
mod server_link;
mod server_state;
mod servers;
mod skill_tool;
mod tool_cache;
mod tool_set;
mod toolset_evidence;
mod trust_question;
mod wasm_tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rho_component::{Diagnostic, DiagnosticCode, SkillMeta, SkillSource};
use rho_config::{ConfigSource, RhoConfig, RhoPaths};
use rho_plugins::{PluginInventory, PluginLocations};

pub use direct_call::{DirectCall, DirectCallError};
pub use probe::{Probe, ProbedServer, ProbedTool, StartFailure, StartReport};
pub use served::{Bearer, NameClash, ServeError, ServeOptions, ServeTransport, ServedNames};
pub use server_link::{ServerHealth, ServerRestart};
pub use server_state::{
    MountedServer, MountedTool, NEEDS_TASKS_MARK, NotLoadedReason, ServerStatus,
};
pub use servers::{
    ServerSlot, ServerSource, SlotState, Unstartable, collect_servers, startable, untrusted_message,
};
pub use skill_tool::{ACTIVATE_SKILL, skill_catalog};
pub use tool_cache::{
    CacheKey, CacheKeys, CacheReader, CachedCatalog, MAX_TOOL_CACHE_FILE_BYTES,
    MAX_TOOL_CACHE_FILES, TOOL_CACHE_FORMAT, ToolCache,
};
pub use tool_set::{MountOptions, ToolSet};
pub use toolset_evidence::{ServerToolset, TOOLS_DIGEST_HEX, ToolsetChanged, tools_digest};
pub use trust_question::TrustQuestion;
pub use wasm_tools::{
    BUILTIN_OWNER, ComponentLoadError, LoadOutcome, load_plugin_components, wasm_cache_dir,
    wasm_tool_risk,
};

/// Everything one run knows about its components, before anything is started.
#[derive(Debug)]
pub struct Registry {
    /// The locations of the run.
    pub paths: RhoPaths,
    /// Where the configuration came from (kept for [`Registry::reload`]).
    pub config_source: ConfigSource,
    /// The configuration (empty when the file is unusable: see `config_error`).
    pub config: RhoConfig,
    /// Why `config.toml` could not be used, naming the file and line.
    pub config_error: Option<String>,
    /// Every plugin package found, with its fate (shared with `activate_skill`).
    pub plugins: Arc<PluginInventory>,
    /// Skills after precedence, and the shadowed ones.
    pub skills: rho_skills::Merged,
    /// Every MCP server entry (config first, then plugins; or the servers file's only).
    pub servers: Vec<ServerSlot>,
    /// Where the MCP servers came from (kept for [`Registry::reload`]).
    pub mcp_sources: McpSources,
    /// The user's trust decisions for project plugins (empty when the file is unusable).
    pub trust: rho_plugins::TrustStore,
    /// Everything refused, shadowed or skipped while loading.
    pub diagnostics: Vec<Diagnostic>,
}

/// Where a run's MCP servers come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum McpSources {
    /// `config.toml`'s `[mcp.servers]` and the `mcp.json` of every plugin (the default).
    #[default]
    Configured,
    /// Only the servers of this standalone file (`rho rpc --mcp-config`): neither
    /// `config.toml`'s servers nor any plugin's are read.
    File(PathBuf),
}

impl Registry {
    /// Loads every source of a run. Problems become diagnostics; nothing here fails.
    pub fn load(paths: RhoPaths, config_source: &ConfigSource) -> Self {
        Self::assemble(paths, config_source, None)
    }

    /// Loads a run whose MCP servers are exactly those of the servers file `file`
    /// ([`McpSources::File`]); skills, plugins' other components and `config.toml`'s other
    /// tables load as usual. The file is strict: any problem in it fails the load, naming
    /// the file, the server and the key.
    pub fn load_with_servers_file(
        paths: RhoPaths,
        config_source: &ConfigSource,
        file: &Path,
    ) -> Result<Self, rho_config::ConfigError> {
        let servers = rho_config::load_mcp_servers_file(file)?;
        Ok(Self::assemble(paths, config_source, Some(servers)))
    }

    /// Loads every source, the MCP servers from `servers_file` alone when one is given.
    fn assemble(
        paths: RhoPaths,
        config_source: &ConfigSource,
        servers_file: Option<rho_config::McpServersFile>,
    ) -> Self {
        let (mut config, config_error) = match rho_config::load_config(config_source) {
            Ok(config) => (config, None),
            Err(e) => (RhoConfig::default(), Some(e.to_string())),
        };
        if servers_file.is_some() {
            // Nothing may read the servers config.toml names in such a run.
            config.mcp_servers.clear();
            config.plugin_servers.clear();
        }
        let mut diagnostics = Vec::new();
        if let Some(message) = &config_error {
            diagnostics.push(Diagnostic::error(
                DiagnosticCode::ConfigInvalid,
                message.clone(),
            ));
        }
        let plugins = Arc::new(plugin_locations(&paths).discover());
        diagnostics.extend(plugins.all_diagnostics().cloned());
        let (skills, skill_diagnostics) = gather_skills(&paths, &plugins);
        diagnostics.extend(skill_diagnostics);
        let trust = match rho_plugins::TrustStore::load(&paths.trust_file()) {
            Ok(store) => store,
            Err(e) => {
                diagnostics.push(Diagnostic::error(
                    DiagnosticCode::StateFileInvalid,
                    format!("{e}; no project plugin is trusted"),
                ));
                rho_plugins::TrustStore::default()
            }
        };
        let (servers, mcp_sources) = match servers_file {
            None => (
                collect_servers(&config, &plugins, &trust),
                McpSources::Configured,
            ),
            Some(file) => (file_servers(&file), McpSources::File(file.path)),
        };
        for slot in &servers {
            if let SlotState::Untrusted(message) = &slot.state {
                diagnostics.push(
                    Diagnostic::warning(DiagnosticCode::PluginUntrusted, message.clone())
                        .with_component(slot.id.clone()),
                );
            }
        }
        Self {
            paths,
            config_source: config_source.clone(),
            config,
            config_error,
            plugins,
            skills,
            servers,
            mcp_sources,
            trust,
            diagnostics,
        }
    }

    /// Loads every source again from disk (`reloadExtensions`), from the same MCP sources. A
    /// servers file that has become unusable leaves the run without servers, with a
    /// `config-invalid` diagnostic saying why.
    pub fn reload(&self) -> Self {
        match &self.mcp_sources {
            McpSources::Configured => Self::load(self.paths.clone(), &self.config_source),
            McpSources::File(file) => {
                Self::load_with_servers_file(self.paths.clone(), &self.config_source, file)
                    .unwrap_or_else(|e| {
                        let empty = rho_config::McpServersFile {
                            path: file.clone(),
                            servers: Vec::new(),
                        };
                        let mut registry =
                            Self::assemble(self.paths.clone(), &self.config_source, Some(empty));
                        registry.diagnostics.push(Diagnostic::error(
                            DiagnosticCode::ConfigInvalid,
                            format!("--mcp-config {e}"),
                        ));
                        registry
                    })
            }
        }
    }

    /// The sessions directory of this project: `$RHO_HOME/sessions/<project key>`.
    pub fn sessions_dir(&self) -> std::path::PathBuf {
        crate::session::project_dir(
            &self.paths.rho_home.join("sessions"),
            &self.paths.project.cwd,
        )
    }

    /// The environment variables that hold secrets rho uses: every provider's `api_key_env`
    /// and the variables MCP servers read credentials from (`env_from_env`,
    /// `headers_from_env`). Tools never pass them to the processes they start.
    pub fn secret_variables(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .config
            .providers
            .iter()
            .filter_map(|p| p.settings.as_ref().ok()?.api_key_env.clone())
            .collect();
        for spec in self.servers.iter().filter_map(|s| s.spec.as_ref()) {
            match &spec.transport {
                rho_component::McpTransport::Stdio(stdio) => {
                    names.extend(stdio.env_from_env.iter().map(|(_, from)| from.clone()));
                }
                rho_component::McpTransport::StreamableHttp(http) => {
                    names.extend(http.headers_from_env.iter().map(|(_, from)| from.clone()));
                }
            }
        }
        names.sort();
        names.dedup();
        names
    }

    /// The servers a session starts (valid and enabled).
    pub fn startable_servers(&self) -> impl Iterator<Item = &ServerSlot> {
        self.servers.iter().filter(|s| s.startable().is_some())
    }

    /// The instructions of skill `name`: built-ins from the binary, plugin skills re-opened
    /// under their plugin's containment rules, loose skills from disk.
    pub fn skill_body(&self, name: &str) -> Result<String, SkillBodyError> {
        let Some(skill) = self.skills.skills.get(name) else {
            return Err(SkillBodyError::Unknown(name.to_owned()));
        };
        skill_body(skill, &self.plugins)
    }
}

/// The slots of a servers file's servers: config servers defined in that file.
fn file_servers(file: &rho_config::McpServersFile) -> Vec<ServerSlot> {
    let defined_in = file.path.to_string_lossy().into_owned();
    file.servers
        .iter()
        .map(|spec| ServerSlot {
            id: spec.id.clone(),
            source: ServerSource::Config,
            plugin: None,
            spec: Some(spec.clone()),
            state: if spec.enabled {
                SlotState::Configured
            } else {
                SlotState::Disabled
            },
            defined_in: Some(defined_in.clone()),
        })
        .collect()
}

/// Why a skill's instructions could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SkillBodyError {
    /// No skill has that name.
    #[error("no skill named {0:?}")]
    Unknown(String),
    /// A built-in skill without a body (a build defect).
    #[error("built-in skill {0:?} has no body")]
    NoBuiltinBody(String),
    /// The plugin that offered the skill is gone.
    #[error("plugin {0:?} is no longer loaded")]
    PluginGone(String),
    /// The plugin's skill file could not be read under its containment rules.
    #[error(transparent)]
    Plugin(#[from] rho_plugins::PluginError),
    /// A loose skill's file could not be read.
    #[error(transparent)]
    Skill(#[from] rho_skills::SkillError),
}

/// One plugin as inventories list it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSummary {
    /// The manifest name.
    pub name: String,
    /// `user` or `project`.
    pub scope: rho_component::Scope,
    /// `loaded`, `disabled`, `rejected` or `shadowed`.
    pub status: rho_plugins::PluginStatus,
    /// The resolved plugin root.
    pub path: std::path::PathBuf,
}

impl Registry {
    /// Every plugin found, in precedence order.
    pub fn plugin_summaries(&self) -> Vec<PluginSummary> {
        self.plugins
            .plugins
            .iter()
            .map(|r| PluginSummary {
                name: r.name.clone(),
                scope: r.scope,
                status: r.status,
                path: r.path().to_path_buf(),
            })
            .collect()
    }
}

/// The plugin roots and state files of a run.
pub fn plugin_locations(paths: &RhoPaths) -> PluginLocations {
    PluginLocations {
        project_roots: paths.project_plugin_roots(),
        project_install_root: paths.project_install_root(),
        project_state_file: paths.project_state_file(),
        user_root: paths.user_plugins_root(),
        user_state_file: paths.user_state_file(),
    }
}

pub(super) fn skill_body(
    skill: &SkillMeta,
    plugins: &PluginInventory,
) -> Result<String, SkillBodyError> {
    match &skill.source {
        SkillSource::BuiltIn => rho_builtin_plugins::builtin_skill_body(&skill.name)
            .map(str::to_owned)
            .ok_or_else(|| SkillBodyError::NoBuiltinBody(skill.name.clone())),
        SkillSource::Plugin { plugin, .. } => {
            let record = plugins
                .loaded()
                .find(|r| &r.name == plugin)
                .ok_or_else(|| SkillBodyError::PluginGone(plugin.clone()))?;
            Ok(record.read_skill_body(&skill.name)?)
        }
        SkillSource::User | SkillSource::Project => Ok(rho_skills::read_body(skill)?),
    }
}

/// Every skill candidate in precedence order, merged, plus the skill diagnostics.
fn gather_skills(
    paths: &RhoPaths,
    plugins: &PluginInventory,
) -> (rho_skills::Merged, Vec<Diagnostic>) {
    let (mut candidates, mut diagnostics) = rho_builtin_plugins::builtin_skills();
    for root in paths.user_skill_roots() {
        let (skills, d) = rho_skills::discover_root(&root, SkillSource::User);
        candidates.extend(skills);
        diagnostics.extend(d);
    }
    for root in paths.project_skill_roots() {
        let (skills, d) = rho_skills::discover_root(&root, SkillSource::Project);
        candidates.extend(skills);
        diagnostics.extend(d);
    }
    for record in plugins.loaded() {
        candidates.extend(record.package.skills.iter().cloned());
    }
    let merged = rho_skills::merge(candidates);
    diagnostics.extend(merged.diagnostics.iter().cloned());
    (merged, diagnostics)
}
