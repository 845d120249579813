//! The credential store: OAuth credentials of remote MCP servers, one owner-only JSON file per
//! server identity under `$RHO_HOME/credentials/`.
//!
//! The store does not know OAuth libraries or what a token response looks like: it keeps the
//! token body as an opaque JSON value, plus the metadata rho itself decides on (which server
//! address it was issued for, which issuer minted it, for which client, when, until when, with
//! which scopes, and whether it can be refreshed). The MCP client turns its library's token
//! type into that value and back, and decides whether a credential fits the configured server.
//!
//! What the store guarantees:
//! - Nothing is created until the first [`CredentialStore::save`] (or [`CredentialStore::lock`]):
//!   a run that never logs in leaves no trace. The directory is created 0700; one that is a
//!   symbolic link, belongs to another user, or is writable by group or others is refused.
//! - A save replaces the file atomically (temporary file created 0600, flushed, renamed, the
//!   directory flushed): after a crash the name holds the old file or the new one, whole.
//! - Reads never follow a link, never block (a FIFO is refused at once), accept only a regular
//!   file of the user's, and stop at [`CREDENTIAL_MAX_BYTES`].
//! - A file that does not parse is reported (file, server, how to fix it) and kept: `save`
//!   refuses to overwrite it, [`CredentialStore::remove`] deletes it.
//! - A credential minted by another issuer than the one asked for is discarded
//!   ([`CredentialStore::load_for`]).
//! - Every file it writes names the resource (server address) its token was issued for; a
//!   file from before that (format 1) still reads, with no resource, and a save replaces it.
//! - Tokens never appear in `Debug` output or error messages.

mod file;
mod format;
mod lock;
mod name;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::ConfigError;

pub use lock::RefreshLock;

/// The most a credentials file may hold. Token responses are a few kilobytes at most, so this
/// only stops a file that is not one.
pub const CREDENTIAL_MAX_BYTES: usize = 64 * 1024;

/// How long [`CredentialStore::lock`] waits for another process's refresh before giving up:
/// a refresh is one HTTPS round trip, bounded well below this by the client.
pub const REFRESH_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// One server's stored OAuth credentials. `Debug` leaves the token out.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    /// The server identity (a config key, or `<plugin>/<server>`).
    pub server: String,
    /// Everything rho itself decides about the token: what a listing shows.
    pub summary: CredentialSummary,
    /// The token body, opaque to the store: everything secret belongs here.
    pub token: serde_json::Value,
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("server", &self.server)
            .field("summary", &self.summary)
            .field("token", &format_args!("<redacted>"))
            .finish()
    }
}

/// What a listing shows of a stored credential: all but the server and the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialSummary {
    /// The resource the token was issued for: the server's canonical address at login, as the
    /// MCP client decides it. `None` only for a file an older rho wrote (format 1), which
    /// names none: such a credential must never be sent. [`CredentialStore::save`] refuses a
    /// credential without one.
    pub resource: Option<String>,
    /// The issuer of the authorization server that minted the token.
    pub issuer: String,
    /// The client id the token was issued to (pre-registered or registered by rho).
    pub client_id: String,
    /// When the token was received, in seconds since the Unix epoch.
    pub received_at: u64,
    /// When the access token expires, in seconds since the Unix epoch, if the server said.
    pub expires_at: Option<u64>,
    /// The scopes the server granted.
    pub scopes: Vec<String>,
    /// Whether the token body holds a refresh token (the store cannot look inside it).
    pub refreshable: bool,
}

/// One file of the store, as [`CredentialStore::list`] found it.
#[derive(Debug)]
pub struct ListedCredential {
    /// The server identity the file belongs to.
    pub server: String,
    /// The file.
    pub path: PathBuf,
    /// Its summary, or why it cannot be read.
    pub summary: Result<CredentialSummary, ConfigError>,
}

/// The credentials directory and the operations on it. Cheap to create and clone: it holds
/// only the path, and every operation checks the directory afresh.
#[derive(Debug, Clone)]
pub struct CredentialStore {
    dir: PathBuf,
    lock_timeout: Duration,
}

impl CredentialStore {
    /// The store in `dir`, normally [`RhoPaths::credentials_dir`](crate::RhoPaths::credentials_dir).
    /// Nothing is created or read yet.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            lock_timeout: REFRESH_LOCK_TIMEOUT,
        }
    }

    /// The same store with another bound on how long [`lock`](Self::lock) waits.
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// The credentials directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds (or would hold) `server`'s credentials.
    ///
    /// # Errors
    ///
    /// [`ConfigError::CredentialIdentity`] when `server` is not a server identity.
    pub fn file_of(&self, server: &str) -> Result<PathBuf, ConfigError> {
        Ok(self.dir.join(format!("{}.json", stem(server)?)))
    }

    /// `server`'s stored credential, whoever issued it; `None` when there is none.
    ///
    /// # Errors
    ///
    /// An unsafe directory, a file that cannot be read or is not a regular file of the user's,
    /// or [`ConfigError::CredentialCorrupt`] for a file that does not parse.
    pub fn load(&self, server: &str) -> Result<Option<Credential>, ConfigError> {
        let path = self.file_of(server)?;
        if !file::check_dir(&self.dir)? {
            return Ok(None);
        }
        Ok(read(server, &path)?.map(|(credential, _)| credential))
    }

    /// `server`'s stored credential if `issuer` minted it. A credential from another issuer
    /// (the server now points at another authorization server) must never be sent, so it is
    /// removed and `None` returned, as if there were none; the removal skips a file another
    /// process saved in the meantime.
    ///
    /// # Errors
    ///
    /// As [`load`](Self::load), and a failed removal.
    pub fn load_for(&self, server: &str, issuer: &str) -> Result<Option<Credential>, ConfigError> {
        let path = self.file_of(server)?;
        if !file::check_dir(&self.dir)? {
            return Ok(None);
        }
        match read(server, &path)? {
            Some((credential, _)) if credential.summary.issuer == issuer => Ok(Some(credential)),
            Some((_, id)) => {
                file::remove_if_unchanged(&path, id, server)?;
                Ok(None)
            }
            None => Ok(None),
        }
    }

    /// Stores `credential` under `credential.server`, replacing what was stored (a file in an
    /// older format rho reads included). Creates the directory on first use.
    ///
    /// # Errors
    ///
    /// An invalid identity, a credential without a resource, a credential larger than
    /// [`CREDENTIAL_MAX_BYTES`] as JSON, an unsafe directory, a failed write; and any error
    /// reading the file already there (a file that does not parse, a link, a FIFO...), which
    /// is left untouched.
    pub fn save(&self, credential: &Credential) -> Result<(), ConfigError> {
        let server = credential.server.as_str();
        let stem = stem(server)?;
        let path = self.dir.join(format!("{stem}.json"));
        let fail = |reason: String| ConfigError::CredentialFile {
            server: server.to_owned(),
            path: path.clone(),
            reason,
        };
        let Some(resource) = credential.summary.resource.as_deref() else {
            return Err(fail(
                "they name no resource (the server address the token was issued for), and every \
                 credential rho stores must"
                    .into(),
            ));
        };
        let bytes = format::to_bytes(credential, resource)
            .map_err(|e| fail(format!("cannot be written as JSON: {e}")))?;
        if bytes.len() > CREDENTIAL_MAX_BYTES {
            return Err(fail(format!(
                "they take {} bytes as JSON, more than the {} KiB a credentials file may hold",
                bytes.len(),
                CREDENTIAL_MAX_BYTES / 1024
            )));
        }
        file::ensure_dir(&self.dir)?;
        // Only a file rho can read is replaced: a hand edit that broke it, or a newer rho's
        // format, stays until the user fixes or removes it.
        read(server, &path)?;
        file::write_atomically(&self.dir, &stem, &path, &bytes, server)
    }

    /// Deletes `server`'s credentials file, whatever it holds (this is how a corrupt one goes).
    /// Only the entry of that name inside the directory is removed; a link is removed, never
    /// followed. `false` when there was none.
    ///
    /// # Errors
    ///
    /// An invalid identity, an unsafe directory, or a failed removal (a directory of that name,
    /// for instance).
    pub fn remove(&self, server: &str) -> Result<bool, ConfigError> {
        let path = self.file_of(server)?;
        if !file::check_dir(&self.dir)? {
            return Ok(false);
        }
        file::remove(&path, server)
    }

    /// Every stored credential, sorted by server identity, each with its summary or the reason
    /// its file cannot be read. Entries rho does not write (other names, temporary and lock
    /// files) are left out and left alone.
    ///
    /// # Errors
    ///
    /// An unsafe or unreadable directory. A missing one is an empty list.
    pub fn list(&self) -> Result<Vec<ListedCredential>, ConfigError> {
        if !file::check_dir(&self.dir)? {
            return Ok(Vec::new());
        }
        let entries = std::fs::read_dir(&self.dir).map_err(|e| ConfigError::CredentialsDir {
            path: self.dir.clone(),
            reason: format!("cannot list it: {e}"),
        })?;
        let mut listed = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| ConfigError::CredentialsDir {
                path: self.dir.clone(),
                reason: format!("cannot list it: {e}"),
            })?;
            let file_name = entry.file_name();
            let Some(server) = file_name
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(name::decode)
            else {
                continue;
            };
            let path = entry.path();
            let summary = read(&server, &path).and_then(|found| match found {
                Some((credential, _)) => Ok(credential.summary),
                // Removed between the listing and the read.
                None => Err(ConfigError::CredentialFile {
                    server: server.clone(),
                    path: path.clone(),
                    reason: "it was removed while being listed".into(),
                }),
            });
            listed.push(ListedCredential {
                server,
                path,
                summary,
            });
        }
        listed.sort_by(|a, b| a.server.cmp(&b.server));
        Ok(listed)
    }

    /// Takes `server`'s refresh lock, waiting up to [`REFRESH_LOCK_TIMEOUT`] (or the bound
    /// given to [`with_lock_timeout`](Self::with_lock_timeout)) for another holder. Hold it
    /// from loading the credential to saving the refreshed one; then load again after taking
    /// it, since the previous holder may have just saved. Creates the directory if needed.
    /// Blocks the calling thread: call it from a blocking task in async code.
    ///
    /// # Errors
    ///
    /// [`ConfigError::CredentialLockTimeout`] when the wait runs out; an invalid identity, an
    /// unsafe directory, or a lock file that cannot be used.
    pub fn lock(&self, server: &str) -> Result<RefreshLock, ConfigError> {
        let stem = stem(server)?;
        file::ensure_dir(&self.dir)?;
        lock::acquire(
            self.dir.join(format!("{stem}.lock")),
            server,
            self.lock_timeout,
        )
    }
}

fn stem(server: &str) -> Result<String, ConfigError> {
    name::encode(server).map_err(|reason| ConfigError::CredentialIdentity {
        server: server.to_owned(),
        reason,
    })
}

/// The credential in `path` and which file it came from; `None` when there is no file.
fn read(server: &str, path: &Path) -> Result<Option<(Credential, file::FileId)>, ConfigError> {
    let Some(found) = file::read_bounded(path, server)? else {
        return Ok(None);
    };
    let credential =
        format::parse(&found.bytes, server).map_err(|reason| ConfigError::CredentialCorrupt {
            server: server.to_owned(),
            path: path.to_path_buf(),
            reason,
        })?;
    Ok(Some((credential, found.id)))
}
