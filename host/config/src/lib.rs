//! rho's configuration locations.
//!
//! This crate owns `config.toml` (strict raw `*Toml` types resolved into the shared
//! [`rho_component::McpServerSpec`]) and the paths rho reads and writes: `RHO_HOME` (default
//! `~/.rho`), the user and project roots for Agent Plugins and loose skills, and the activation
//! state files. Locations are resolved once from an explicit environment snapshot
//! ([`PathsEnv`]) so callers and tests never depend on the process environment by accident.

mod config_file;
mod error;
mod paths;

pub use config_file::{
    CONFIG_MAX_BYTES, ConfigServer, ConfigSource, McpServerToml, RhoConfig, SERVER_KEYS,
    load_config, parse_config, valid_server_id,
};
pub use error::ConfigError;
pub use paths::{PathsEnv, ProjectPaths, RhoPaths};
