//! rho's configuration locations.
//!
//! For now this crate owns the paths rho reads and writes: `RHO_HOME` (default `~/.rho`), the
//! user and project roots for Agent Plugins and loose skills, and the activation state files.
//! It resolves them once from an explicit environment snapshot ([`PathsEnv`]) so callers and
//! tests never depend on the process environment by accident. `config.toml` parsing arrives with
//! the MCP runtime.

mod error;
mod paths;

pub use error::ConfigError;
pub use paths::{PathsEnv, ProjectPaths, RhoPaths};
