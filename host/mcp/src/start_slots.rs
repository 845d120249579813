//! How many servers start at once, and the open-file limit they start under.
//!
//! Every start (transport, handshake, discovery) holds one of [`MAX_CONCURRENT_STARTS`] slots,
//! process-wide and first come, first served, so ten thousand configured servers do not spawn
//! ten thousand processes (and thirty thousand pipes) in the same instant. A server's startup
//! budget counts from when it gets its slot, not while it waits for one: waiting in line is not
//! the server being slow. Before the first start the soft `RLIMIT_NOFILE` is raised towards the
//! hard limit ([`raise_open_file_limit`]), because every running stdio server keeps three pipes
//! open in rho.

use std::sync::OnceLock;

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use tokio::sync::{Semaphore, SemaphorePermit};

/// At most this many servers are starting at any moment (the rest wait for a slot).
pub const MAX_CONCURRENT_STARTS: usize = 32;

/// The soft open-file limit is raised at most this far (even when the hard limit is higher):
/// enough for about 20,000 running stdio servers, and low enough that a server which closes
/// every descriptor up to its (inherited) soft limit does not loop over a million.
pub const OPEN_FILE_TARGET: u64 = 65_536;

static SLOTS: Semaphore = Semaphore::const_new(MAX_CONCURRENT_STARTS);

/// Waits for a start slot; the start runs while the permit lives. Raises the open-file limit
/// first (once per process).
pub(crate) async fn start_slot() -> Option<SemaphorePermit<'static>> {
    raise_open_file_limit();
    // The semaphore is never closed, so this only fails if that changes; starting without a
    // slot is then the safe fallback.
    SLOTS.acquire().await.ok()
}

/// The open-file limits before and after [`raise_open_file_limit`] (soft limits; `None` is
/// unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFileLimit {
    /// The soft limit rho started with.
    pub before: Option<u64>,
    /// The soft limit now.
    pub after: Option<u64>,
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit, or to [`OPEN_FILE_TARGET`] when the hard
/// limit is higher; never lowers it. Runs once per process (later calls return the first
/// outcome); the first server start calls it, and a binary may call it at startup. A refusal
/// is logged and leaves the limit as it was. Servers started afterwards inherit the raised
/// limit.
pub fn raise_open_file_limit() -> OpenFileLimit {
    static RAISED: OnceLock<OpenFileLimit> = OnceLock::new();
    *RAISED.get_or_init(|| {
        let limit = getrlimit(Resource::Nofile);
        let Some(wanted) = raised_soft_limit(limit) else {
            return OpenFileLimit {
                before: limit.current,
                after: limit.current,
            };
        };
        let new = Rlimit {
            current: Some(wanted),
            maximum: limit.maximum,
        };
        match setrlimit(Resource::Nofile, new) {
            Ok(()) => {
                tracing::debug!(target: "rho::mcp", before = ?limit.current, after = wanted, "raised the open-file limit");
                OpenFileLimit {
                    before: limit.current,
                    after: Some(wanted),
                }
            }
            Err(e) => {
                tracing::warn!(target: "rho::mcp", soft = ?limit.current, wanted, "could not raise the open-file limit: {e}");
                OpenFileLimit {
                    before: limit.current,
                    after: limit.current,
                }
            }
        }
    })
}

/// The soft limit to set for `limit`, or `None` when it should stay (already unlimited, or
/// already at or above what rho would raise it to).
fn raised_soft_limit(limit: Rlimit) -> Option<u64> {
    let soft = limit.current?;
    let ceiling = limit
        .maximum
        .map_or(OPEN_FILE_TARGET, |hard| hard.min(OPEN_FILE_TARGET));
    (ceiling > soft).then_some(ceiling)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(current: Option<u64>, maximum: Option<u64>) -> Rlimit {
        Rlimit { current, maximum }
    }

    #[test]
    fn the_soft_limit_rises_to_the_hard_limit_up_to_the_target() {
        assert_eq!(raised_soft_limit(limit(Some(256), Some(4096))), Some(4096));
        assert_eq!(
            raised_soft_limit(limit(Some(1024), Some(1 << 20))),
            Some(OPEN_FILE_TARGET)
        );
        assert_eq!(
            raised_soft_limit(limit(Some(1024), None)),
            Some(OPEN_FILE_TARGET)
        );
    }

    #[test]
    fn a_limit_already_high_enough_is_never_lowered() {
        assert_eq!(raised_soft_limit(limit(Some(4096), Some(4096))), None);
        assert_eq!(raised_soft_limit(limit(Some(100_000), None)), None);
        assert_eq!(raised_soft_limit(limit(None, None)), None);
    }

    #[test]
    fn raising_the_limit_leaves_it_at_least_as_high() {
        let outcome = raise_open_file_limit();
        match (outcome.before, outcome.after) {
            (Some(before), Some(after)) => assert!(after >= before),
            (before, after) => assert!(after.is_none() || before.is_some(), "{outcome:?}"),
        }
        assert_eq!(getrlimit(Resource::Nofile).current, outcome.after);
        assert_eq!(raise_open_file_limit(), outcome, "it runs once");
    }

    #[tokio::test]
    async fn no_more_than_the_bound_start_at_once() {
        let mut held = Vec::new();
        for _ in 0..MAX_CONCURRENT_STARTS {
            held.push(start_slot().await);
        }
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), start_slot());
        assert!(waiting.await.is_err(), "a slot beyond the bound waits");
        held.pop();
        let next = tokio::time::timeout(std::time::Duration::from_millis(50), start_slot()).await;
        assert!(next.is_ok(), "a freed slot goes to the next start");
    }
}
