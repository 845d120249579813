//! Every MCP server a run knows about, from `config.toml` and from loaded plugins, as one list
//! of [`ServerSlot`]s: config entries first (by identity), then plugin servers in plugin
//! precedence order. Config identities never contain `/`, plugin identities always do, so the
//! two kinds never collide.

use rho_component::{DiagnosticCode, McpServerSpec};
use rho_config::RhoConfig;
use rho_plugins::{PluginInventory, PluginStatus, TrustState, TrustStore};

use super::ServerStatus;

/// Where a server entry is declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ServerSource {
    /// `[mcp.servers.<id>]` in `config.toml`.
    Config,
    /// `mcp.json` of a plugin.
    Plugin,
}

impl ServerSource {
    /// `config` or `plugin`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Config => "config",
            Self::Plugin => "plugin",
        }
    }
}

/// What the configuration alone says about a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotState {
    /// Valid and enabled: a session starts it.
    Configured,
    /// Valid but disabled (the entry, or its plugin).
    Disabled,
    /// The entry is invalid; the message names the keys.
    Invalid(String),
    /// A project plugin's server that the user has not trusted (or that changed since); the
    /// message says how to trust it. Never started.
    Untrusted(String),
}

/// One server entry.
#[derive(Debug, Clone)]
pub struct ServerSlot {
    /// The identity: the config key, or `<plugin>/<server>`.
    pub id: String,
    /// Config or plugin.
    pub source: ServerSource,
    /// The plugin, for plugin servers.
    pub plugin: Option<String>,
    /// The resolved server, when the entry is valid.
    pub spec: Option<McpServerSpec>,
    /// What the configuration says.
    pub state: SlotState,
    /// `file:line` (config) or the `mcp.json` path (plugin).
    pub defined_in: Option<String>,
}

impl ServerSlot {
    /// The state the configuration alone gives the server (before anything starts it).
    pub fn status(&self) -> ServerStatus {
        match &self.state {
            SlotState::Configured => ServerStatus::Configured,
            SlotState::Disabled => ServerStatus::Disabled,
            SlotState::Invalid(e) => ServerStatus::Invalid(e.clone()),
            SlotState::Untrusted(e) => ServerStatus::Untrusted(e.clone()),
        }
    }

    /// The state a session would give the server before starting anything: `known` for a
    /// lazy server whose tools `cache` holds (under the key `plugins` help compute), else what
    /// the configuration says. Reads the cache entry; starts nothing.
    pub fn status_before_start(
        &self,
        plugins: &PluginInventory,
        cache: &super::ToolCache,
    ) -> ServerStatus {
        let known = self
            .startable()
            .filter(|spec| spec.startup == rho_component::Startup::Lazy)
            .and_then(|_| super::CacheKey::of(self, plugins))
            .is_some_and(|key| cache.load(&key).is_some());
        if known {
            ServerStatus::Known
        } else {
            self.status()
        }
    }

    /// The spec of a valid, enabled entry.
    pub fn startable(&self) -> Option<&McpServerSpec> {
        match self.state {
            SlotState::Configured => self.spec.as_ref(),
            _ => None,
        }
    }
}

/// Why a server asked for by identity cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unstartable {
    /// No server has this identity.
    #[error("no MCP server {server:?} (try `rho mcp list`)")]
    NoServer {
        /// The identity asked for.
        server: String,
    },
    /// The server is in a state it does not start from (disabled, untrusted, invalid).
    #[error("server {server:?} is {state}")]
    NotStartable {
        /// The server identity.
        server: String,
        /// Its state, with the reason when there is one (`failed: …`).
        state: String,
    },
}

/// The entry of server `id` among `slots` when it can start, or why not.
pub fn startable<'a>(slots: &'a [ServerSlot], id: &str) -> Result<&'a McpServerSpec, Unstartable> {
    let Some(slot) = slots.iter().find(|s| s.id == id) else {
        return Err(Unstartable::NoServer {
            server: id.to_owned(),
        });
    };
    slot.startable().ok_or_else(|| {
        let status = slot.status();
        Unstartable::NotStartable {
            server: id.to_owned(),
            state: match status.error() {
                Some(reason) => format!("{}: {reason}", status.as_str()),
                None => status.as_str().to_owned(),
            },
        }
    })
}

/// Collects every server entry from the configuration and the plugin inventory. Servers of
/// project plugins the user has not trusted (see `rho plugins trust`) are `Untrusted`. Plugin
/// servers get their `startup` and `defer` from `config.toml` (`[mcp.plugin_servers]`, else the
/// `[mcp] startup` default).
pub fn collect_servers(
    config: &RhoConfig,
    inventory: &PluginInventory,
    trust: &TrustStore,
) -> Vec<ServerSlot> {
    let config_path = config
        .path
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned());
    let mut slots = Vec::new();
    for server in &config.mcp_servers {
        let defined_in = config_path.as_ref().map(|p| format!("{p}:{}", server.line));
        let (spec, state) = match &server.spec {
            Ok(spec) if spec.enabled => (Some(spec.clone()), SlotState::Configured),
            Ok(spec) => (Some(spec.clone()), SlotState::Disabled),
            Err(problems) => (None, SlotState::Invalid(problems.join("; "))),
        };
        slots.push(ServerSlot {
            id: server.id.clone(),
            source: ServerSource::Config,
            plugin: None,
            spec,
            state,
            defined_in,
        });
    }
    for record in &inventory.plugins {
        let plugin_enabled = match record.status {
            PluginStatus::Loaded => true,
            PluginStatus::Disabled => false,
            PluginStatus::Rejected | PluginStatus::Shadowed => continue,
        };
        let mcp_json = record
            .path()
            .join(rho_plugins::MCP_FILE)
            .to_string_lossy()
            .into_owned();
        let trust_state = if plugin_enabled {
            trust.state(record)
        } else {
            TrustState::NotNeeded
        };
        for spec in &record.package.mcp_servers {
            // What a plugin's mcp.json cannot say (startup, defer) comes from config.toml.
            let mut spec = spec.clone();
            config.apply_to_plugin_server(&mut spec);
            let state = if !(plugin_enabled && spec.enabled) {
                SlotState::Disabled
            } else if trust_state.allows_start() {
                SlotState::Configured
            } else {
                SlotState::Untrusted(untrusted_message(&record.name, &trust_state))
            };
            slots.push(ServerSlot {
                id: spec.id.clone(),
                source: ServerSource::Plugin,
                plugin: Some(record.name.clone()),
                spec: Some(spec),
                state,
                defined_in: Some(mcp_json.clone()),
            });
        }
        for d in &record.package.diagnostics {
            if matches!(
                d.code,
                DiagnosticCode::McpServerInvalid | DiagnosticCode::McpTransportUnsupported
            ) {
                slots.push(ServerSlot {
                    id: d.component.clone().unwrap_or_default(),
                    source: ServerSource::Plugin,
                    plugin: Some(record.name.clone()),
                    spec: None,
                    state: SlotState::Invalid(d.message.clone()),
                    defined_in: Some(mcp_json.clone()),
                });
            }
        }
    }
    slots
}

/// Why a project plugin's servers do not start and its WASM tools do not load, and what to do
/// about it.
pub fn untrusted_message(plugin: &str, state: &TrustState) -> String {
    let why = if *state == TrustState::Changed {
        "changed since you trusted it"
    } else {
        "is not trusted"
    };
    format!(
        "project plugin {plugin:?} {why}: its MCP servers and WASM tools run only after `rho plugins trust {plugin}`"
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rho_component::{Scope, Startup};
    use rho_plugins::{ActivationState, PluginRoot};

    use super::*;

    /// A user plugin `p` whose `mcp.json` declares servers `s` and `t`.
    fn inventory(root: &Path) -> PluginInventory {
        let dir = root.join("p");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("plugin.json"),
            r#"{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "p"}"#,
        )
        .unwrap();
        std::fs::write(
            dir.join("mcp.json"),
            r#"{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {
                "s": {"type": "stdio", "command": "srv"},
                "t": {"type": "streamable-http", "url": "https://mcp.example.com/mcp"}}}"#,
        )
        .unwrap();
        rho_plugins::discover(&[PluginRoot {
            path: root.to_path_buf(),
            scope: Scope::User,
            state: ActivationState::default(),
        }])
    }

    fn collected(config: &str, inventory: &PluginInventory) -> Vec<(String, Startup, bool)> {
        let config = rho_config::parse_config(config, Path::new("/c.toml")).unwrap();
        collect_servers(&config, inventory, &TrustStore::default())
            .into_iter()
            .map(|slot| {
                let spec = slot.startable().unwrap();
                (slot.id.clone(), spec.startup, spec.defer)
            })
            .collect()
    }

    #[test]
    fn plugin_servers_get_startup_and_defer_from_the_users_config() {
        let root = tempfile::tempdir().unwrap();
        let inventory = inventory(root.path());
        assert_eq!(
            collected("", &inventory),
            [
                ("p/s".to_owned(), Startup::Eager, true),
                ("p/t".to_owned(), Startup::Eager, true),
            ],
            "unchanged unless asked"
        );
        assert_eq!(
            collected(
                "[mcp]\nstartup = \"lazy\"\n[mcp.servers.own]\ncommand = \"x\"\n\
                 [mcp.plugin_servers.\"p/s\"]\ndefer = false\n\
                 [mcp.plugin_servers.\"p/t\"]\nstartup = \"eager\"\n\
                 [mcp.plugin_servers.\"gone/s\"]\nstartup = \"eager\"\n",
                &inventory
            ),
            [
                ("own".to_owned(), Startup::Lazy, true),
                ("p/s".to_owned(), Startup::Lazy, false),
                ("p/t".to_owned(), Startup::Eager, true),
            ]
        );
    }
}
