//! A WASM tool component as a plugin declares it: the `.wasm` file under the plugin's
//! `dev.rho/tools/` directory plus its settings from `plugin.json`
//! `extensions["dev.rho"].tools.<name>` (capabilities, limits, risk level).

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::RiskLevel;

/// rho's reverse-domain namespace for Agent Plugins client extensions: the `extensions` key in
/// `plugin.json` and the top-level directory of a plugin.
pub const RHO_NAMESPACE: &str = "dev.rho";

/// Call budget when the manifest sets none.
pub const DEFAULT_WASM_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest call budget a manifest may set.
pub const MAX_WASM_TIMEOUT: Duration = Duration::from_secs(600);
/// Linear-memory cap when the manifest sets none.
pub const DEFAULT_WASM_MEMORY: u64 = 64 * 1024 * 1024;
/// The largest memory cap a manifest may set.
pub const MAX_WASM_MEMORY: u64 = 4 * 1024 * 1024 * 1024;
/// Output cap of one call (what the model reads), like MCP's default.
pub const DEFAULT_WASM_MAX_OUTPUT_BYTES: u64 = 64 * 1024;

/// What a component may do with the session workspace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkspaceAccess {
    /// Nothing: no file system at all.
    #[default]
    None,
    /// Read files of the workspace.
    Read,
    /// Read and write files of the workspace.
    ReadWrite,
}

impl WorkspaceAccess {
    /// `none`, `read` or `read-write`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Read => "read",
            Self::ReadWrite => "read-write",
        }
    }

    /// The lowest risk level a component with this access can have.
    pub fn least_risk(self) -> RiskLevel {
        match self {
            Self::None | Self::Read => RiskLevel::Read,
            Self::ReadWrite => RiskLevel::Write,
        }
    }
}

/// One tool component of a plugin, resolved and validated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WasmComponentSpec {
    /// The owning plugin.
    pub plugin: String,
    /// The component name (the file stem under `dev.rho/tools/`).
    pub name: String,
    /// The resolved `.wasm` path, inside the plugin root (written as text, U+FFFD for bytes
    /// that are not).
    #[serde(serialize_with = "crate::lossy_path::serialize")]
    pub path: PathBuf,
    /// Workspace access (default: none).
    pub workspace: WorkspaceAccess,
    /// Environment variables passed to the component by name (values from rho's
    /// environment; nothing else is inherited).
    pub env: Vec<String>,
    /// Wall-clock budget of one call.
    pub timeout: Duration,
    /// Linear-memory cap in bytes.
    pub memory_limit: u64,
    /// The risk level of its tools: the manifest's, never below what the access allows.
    pub risk: RiskLevel,
    /// Output cap of one call.
    pub max_output_bytes: u64,
}
