//! rho's configuration locations.
//!
//! This crate owns `config.toml` (strict raw `*Toml` types resolved into the shared
//! [`rho_component::McpServerSpec`], plus `[agent]` and `[providers.*]`; its JSON Schema,
//! [`config_schema`], is derived from those types) and the paths rho reads and writes: `RHO_HOME` (default
//! `~/.rho`), the user and project roots for Agent Plugins and loose skills, and the activation
//! state files, and the standalone MCP servers file of `rho rpc --mcp-config`
//! ([`load_mcp_servers_file`]: the same server keys, in JSON, resolved by the same code).
//! Locations are resolved once from an explicit environment snapshot
//! ([`PathsEnv`]) so callers and tests never depend on the process environment by accident.
//!
//! It also owns the credential store under `$RHO_HOME/credentials` ([`CredentialStore`]): OAuth
//! tokens of remote MCP servers, kept as opaque JSON with the metadata rho decides on. It does
//! not speak OAuth; the MCP client does, and hands the store what to keep. Files rho keeps
//! under `RHO_HOME` are replaced atomically through [`replace_file`] and [`sync_dir`].

mod agent;
mod agent_runtime;
mod atomic_file;
mod config_file;
mod credentials;
mod error;
mod mcp_config_file;
mod paths;
mod schema;

pub use agent::{
    AgentSettings, ConfigProvider, DEFAULT_MAX_ITERATIONS, DEFAULT_TOOL_SEARCH_BUDGET_PERCENT,
    ProviderSettings, ToolSearch,
};
pub use agent_runtime::{AgentRuntime, DEFAULT_CLAUDE_COMMAND};
pub use atomic_file::{replace_file, sync_dir};
pub use config_file::{
    CONFIG_MAX_BYTES, ConfigServer, ConfigSource, MAX_TIMEOUT_SEC, McpServerToml,
    PluginServerSettings, RhoConfig, load_config, parse_config, valid_server_id,
};
pub use credentials::{
    CREDENTIAL_MAX_BYTES, Credential, CredentialStore, CredentialSummary, ListedCredential,
    REFRESH_LOCK_TIMEOUT, RefreshLock,
};
pub use error::ConfigError;
pub use mcp_config_file::{MCP_CONFIG_MAX_BYTES, McpServersFile, load_mcp_servers_file};
pub use paths::{PathsEnv, ProjectPaths, RhoPaths};
pub use schema::config_schema;
