//! Errors of the configuration crate.

use std::path::PathBuf;

/// Why rho's locations could not be determined.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Neither `RHO_HOME` nor `HOME` is set, so there is no user scope.
    #[error("cannot locate the home directory: set HOME (or RHO_HOME)")]
    NoHome,
    /// The project directory given with `--cwd` (or the working directory) is unusable.
    #[error("project directory {path}: {error}")]
    ProjectDir {
        /// The directory as given.
        path: PathBuf,
        /// The underlying error (part of the message, so not also a `source`).
        error: std::io::Error,
    },
    /// The configuration file cannot be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The IO error (part of the message, so not also a `source`).
        error: std::io::Error,
    },
    /// The configuration file is not valid (syntax, unknown top-level key, wrong type).
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column and the key, never the file's text.
        message: String,
    },
}
