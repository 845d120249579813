//! The per-server refresh lock: an exclusive `flock` on `<name>.lock` beside the credentials,
//! so only one rho process at a time spends a server's refresh token.
//!
//! Authorization servers may rotate refresh tokens: each one works once. Two processes that
//! both refresh with the same token would leave one of them (and the store, if it saves last)
//! holding a dead token. Holding this lock around load, refresh and save makes the second
//! process wait, then load the token the first one saved.
//!
//! The lock is taken on an open file description, so it is released when the [`RefreshLock`]
//! is dropped, and by the kernel if the process dies. Two handles in one process exclude each
//! other like two processes do. Lock files are never removed: removing one while another
//! process waits on it would let a third lock a new file of the same name at the same time.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::ConfigError;

use super::file;

/// Longest pause between two attempts while waiting: short enough that a released lock is
/// picked up promptly, long enough not to spin.
const MAX_PAUSE: Duration = Duration::from_millis(25);

/// A held refresh lock of one server; dropping it releases the lock.
#[derive(Debug)]
#[must_use = "the lock is released as soon as it is dropped"]
pub struct RefreshLock {
    server: String,
    path: PathBuf,
    // Held for its lock only.
    _file: File,
}

impl RefreshLock {
    /// The server identity the lock belongs to.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Takes the lock at `path`, waiting at most `timeout` for whoever holds it.
pub(super) fn acquire(
    path: PathBuf,
    server: &str,
    timeout: Duration,
) -> Result<RefreshLock, ConfigError> {
    let lock_file = file::open_lock(&path, server)?;
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        // Polling, because a blocking flock cannot be given a deadline.
        match lock_file.try_lock() {
            Ok(()) => {
                return Ok(RefreshLock {
                    server: server.to_owned(),
                    path,
                    _file: lock_file,
                });
            }
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => {
                return Err(ConfigError::CredentialFile {
                    server: server.to_owned(),
                    path,
                    reason: format!("cannot take the refresh lock: {e}"),
                });
            }
        }
        let waited = started.elapsed();
        if waited >= timeout {
            return Err(ConfigError::CredentialLockTimeout {
                server: server.to_owned(),
                path,
                waited,
            });
        }
        std::thread::sleep(pause.min(timeout - waited));
        pause = (pause * 2).min(MAX_PAUSE);
    }
}
