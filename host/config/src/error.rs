//! Errors of the configuration crate.

use std::path::PathBuf;

/// Why rho's locations could not be determined.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Neither `RHO_HOME` nor `HOME` is set, so there is no user scope.
    #[error("cannot locate the home directory: set HOME (or RHO_HOME)")]
    NoHome,
    /// The project directory given with `--cwd` (or the working directory) is unusable.
    #[error("project directory {path}: {source}")]
    ProjectDir {
        /// The directory as given.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}
