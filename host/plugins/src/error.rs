//! Errors of the plugin lifecycle operations (discovery itself reports diagnostics instead).

use std::path::PathBuf;

use rho_component::Diagnostic;

/// Why a lifecycle operation (install, link, enable, disable, remove) was refused or failed.
/// Every refusal happens before anything in a managed root changes.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The package to install or link does not pass validation.
    #[error("{path} is not a valid plugin: {}", summary(.diagnostics))]
    InvalidPackage {
        /// The package directory as given.
        path: PathBuf,
        /// The fatal diagnostics.
        diagnostics: Vec<Diagnostic>,
    },
    /// The source path is unusable (missing, not a directory, ...).
    #[error("{path}: {message}")]
    Source {
        /// The path as given.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The package name cannot be a slot in a managed root.
    #[error("plugin name {name:?} cannot be used as a package slot: {reason}")]
    ReservedName {
        /// The name.
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// The destination slot is taken and `--force` was not given.
    #[error("{path} already exists; pass --force to replace it")]
    Exists {
        /// The destination.
        path: PathBuf,
    },
    /// No plugin with that name was discovered.
    #[error("no plugin named {name:?} was found (searched {searched})")]
    NotFound {
        /// The name asked for.
        name: String,
        /// The roots searched, for the message.
        searched: String,
    },
    /// The package tree cannot be copied safely (a link out of the package, a FIFO, a cap hit).
    #[error("cannot install {path}: {message}")]
    Unsafe {
        /// The offending entry.
        path: PathBuf,
        /// Why it is refused.
        message: String,
    },
    /// A `plugins.toml` state file is unreadable or invalid.
    #[error("{path}: {message}")]
    StateFile {
        /// The file.
        path: PathBuf,
        /// The parse or IO error (names the key and line for parse errors).
        message: String,
    },
    /// A filesystem operation failed.
    #[error("{path}: {error}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The error (part of the message, so not also a `source`).
        error: std::io::Error,
    },
}

fn summary(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| format!("[{}] {}", d.code, d.message))
        .collect::<Vec<_>>()
        .join("; ")
}
