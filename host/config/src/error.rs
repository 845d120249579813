//! Errors of the configuration crate: locations, `config.toml` and the credential store.

use std::path::PathBuf;
use std::time::Duration;

/// Why rho's locations, its configuration file or its credential store could not be used.
/// Credential variants name the server and the file; none ever carries a token.
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
    /// The configuration file cannot be read: missing (when named with `--config`), not a
    /// regular file (a FIFO, a device, a directory), larger than its cap, or refused by the
    /// system. The error names the file.
    #[error("cannot read {0}")]
    Read(rho_component::FileError),
    /// The configuration file is not valid (syntax, unknown top-level key, wrong type).
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column and the key, never the file's text.
        message: String,
    },
    /// The credentials directory is unusable: it cannot be created or read, or someone other
    /// than the user could plant or swap files in it.
    #[error("refusing the credentials directory {path}: {reason}")]
    CredentialsDir {
        /// The directory.
        path: PathBuf,
        /// Why, and what to do about it.
        reason: String,
    },
    /// A server identity that cannot name a credentials file.
    #[error("server identity {server:?} cannot have stored credentials: {reason}")]
    CredentialIdentity {
        /// The identity as given.
        server: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A credentials file cannot be opened, read, written or removed, or is not a regular file
    /// of the user's.
    #[error("credentials of server `{server}` in {path}: {reason}")]
    CredentialFile {
        /// The server identity.
        server: String,
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// A credentials file does not parse (edited by hand, or written by a newer rho). The file
    /// is left in place and is never overwritten.
    #[error(
        "{path}: the stored credentials of server `{server}` are unreadable ({reason}); rho \
         keeps the file and will not overwrite it: fix the JSON, or remove the file with \
         `rho mcp logout {server}` and log in again"
    )]
    CredentialCorrupt {
        /// The server identity.
        server: String,
        /// The file.
        path: PathBuf,
        /// Where and what, without quoting the file.
        reason: String,
    },
    /// Another process held a server's refresh lock for longer than the store waits.
    #[error(
        "waited {:.1} s for another rho process to finish refreshing the credentials of server \
         `{server}` (lock {path})", waited.as_secs_f64()
    )]
    CredentialLockTimeout {
        /// The server identity.
        server: String,
        /// The lock file.
        path: PathBuf,
        /// How long the store waited.
        waited: Duration,
    },
}
