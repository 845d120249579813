//! When a server whose session was lost is started again, and when rho stops trying: the
//! restart policy (`docs/mcp.md`, "Servers that come back").
//!
//! A lost session (a stdio server's process exited, an HTTP connection failed, a keep-alive
//! ping went unanswered) is started again at once by the next call that needs it. A start that
//! fails waits a backoff before the next one: [`RESTART_BACKOFF_FIRST`], doubling, at most
//! [`RESTART_BACKOFF_CAP`], each wait drawn between half and all of that (jitter, so servers
//! that failed together do not retry together). Lost sessions and failed starts both count as
//! failures: at [`RESTART_LIMIT`] of them within [`RESTART_WINDOW`], rho gives up on the server
//! for the rest of the session. This type only keeps the books; the caller starts the server.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant};

/// Failures (lost sessions and failed starts) within [`RESTART_WINDOW`] after which rho gives
/// up on a server for the rest of the session.
pub const RESTART_LIMIT: usize = 5;

/// The window [`RESTART_LIMIT`] counts failures in.
pub const RESTART_WINDOW: Duration = Duration::from_secs(300);

/// The backoff after the first failed start; it doubles after each further one.
pub const RESTART_BACKOFF_FIRST: Duration = Duration::from_secs(1);

/// The longest backoff between two starts.
pub const RESTART_BACKOFF_CAP: Duration = Duration::from_secs(30);

/// One server's failures and restarts in a session.
#[derive(Debug, Default)]
pub struct Restarts {
    /// When each failure within the window happened, oldest first.
    failures: VecDeque<Instant>,
    /// Failed starts since the last successful one (the backoff's exponent).
    failed_starts: u32,
    /// No start before this.
    next_start: Option<Instant>,
    /// Why rho gave up, once it has.
    given_up: Option<String>,
    /// Whether the session was lost and no start has succeeded since.
    down: bool,
}

impl Restarts {
    /// Records that `server`'s session was lost at `now` (`reason` says how); once per lost
    /// session (again only after a successful start). The next start may follow at once.
    /// Returns why rho gives up, when this failure is one too many (or it already gave up).
    pub fn lost(&mut self, server: &str, now: Instant, reason: &str) -> Option<String> {
        if self.down {
            return self.given_up.clone();
        }
        self.down = true;
        self.failure(server, now, reason)
    }

    /// Records that a start of `server` failed at `now` with `reason`, and sets the backoff
    /// before the next one. Returns why rho gives up, when this failure is one too many.
    pub fn start_failed(&mut self, server: &str, now: Instant, reason: &str) -> Option<String> {
        let backoff = backoff(self.failed_starts, jitter());
        self.failed_starts = self.failed_starts.saturating_add(1);
        self.next_start = Some(now + backoff);
        self.failure(server, now, reason)
    }

    /// Records a successful start: the backoff starts over (the failures stay in the window).
    pub fn started(&mut self) {
        self.failed_starts = 0;
        self.next_start = None;
        self.down = false;
    }

    /// How long from `now` until the next start may begin (zero when it may begin now).
    pub fn wait(&self, now: Instant) -> Duration {
        self.next_start
            .map_or(Duration::ZERO, |at| at.saturating_duration_since(now))
    }

    /// Why rho gave up on the server, once it has.
    pub fn given_up(&self) -> Option<&str> {
        self.given_up.as_deref()
    }

    fn failure(&mut self, server: &str, now: Instant, reason: &str) -> Option<String> {
        if let Some(given_up) = &self.given_up {
            return Some(given_up.clone());
        }
        while self
            .failures
            .front()
            .is_some_and(|at| now.saturating_duration_since(*at) > RESTART_WINDOW)
        {
            self.failures.pop_front();
        }
        self.failures.push_back(now);
        if self.failures.len() < RESTART_LIMIT {
            return None;
        }
        let message = format!(
            "rho gave up on MCP server `{server}` after {RESTART_LIMIT} failures within {} s (the last: {reason}); it is not started again in this session",
            RESTART_WINDOW.as_secs()
        );
        tracing::warn!(target: "rho::mcp", server, "{message}");
        self.given_up = Some(message.clone());
        Some(message)
    }
}

/// The wait after `failed` failed starts in a row: [`RESTART_BACKOFF_FIRST`] doubled that many
/// times, at most [`RESTART_BACKOFF_CAP`], scaled into its upper half by `jitter` (0 to 1).
fn backoff(failed: u32, jitter: f64) -> Duration {
    let full = RESTART_BACKOFF_FIRST
        .saturating_mul(1u32 << failed.min(16))
        .min(RESTART_BACKOFF_CAP);
    full.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0))
}

/// A number between 0 and 1 that differs from call to call (the standard library's per-process
/// random hash keys, mixed with the time): enough to spread retries, not for secrets.
fn jitter() -> f64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    // 53 bits fill an f64's mantissa exactly.
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_up_to_the_cap_and_jitter_stays_in_its_upper_half() {
        assert_eq!(backoff(0, 1.0), RESTART_BACKOFF_FIRST);
        assert_eq!(backoff(0, 0.0), RESTART_BACKOFF_FIRST / 2);
        assert_eq!(backoff(3, 1.0), RESTART_BACKOFF_FIRST * 8);
        assert_eq!(backoff(10, 1.0), RESTART_BACKOFF_CAP);
        assert_eq!(backoff(u32::MAX, 0.0), RESTART_BACKOFF_CAP / 2);
        for _ in 0..100 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }

    #[test]
    fn a_lost_session_restarts_at_once_and_failed_starts_back_off() {
        let mut restarts = Restarts::default();
        let t0 = Instant::now();
        assert_eq!(restarts.lost("s", t0, "exited"), None);
        assert_eq!(restarts.wait(t0), Duration::ZERO);
        assert_eq!(restarts.start_failed("s", t0, "refused"), None);
        let first = restarts.wait(t0);
        assert!(first >= RESTART_BACKOFF_FIRST / 2 && first <= RESTART_BACKOFF_FIRST);
        assert_eq!(restarts.start_failed("s", t0, "refused"), None);
        assert!(restarts.wait(t0) >= RESTART_BACKOFF_FIRST);
        restarts.started();
        assert_eq!(restarts.wait(t0), Duration::ZERO);
    }

    #[test]
    fn the_limit_within_the_window_gives_up_for_good_and_older_failures_age_out() {
        let mut restarts = Restarts::default();
        let t0 = Instant::now();
        for i in 0..RESTART_LIMIT - 1 {
            assert_eq!(
                restarts.lost("s", t0 + Duration::from_secs(i as u64), "x"),
                None
            );
            // The same lost session again is not another failure.
            assert_eq!(
                restarts.lost("s", t0 + Duration::from_secs(i as u64), "x"),
                None
            );
            restarts.started();
        }
        // The oldest failures fall out of the window: still trying.
        let later = t0 + RESTART_WINDOW + Duration::from_secs(2);
        assert_eq!(restarts.lost("s", later, "x"), None);
        assert!(restarts.given_up().is_none());
        for _ in 0..RESTART_LIMIT - 2 {
            let _ = restarts.start_failed("s", later, "refused");
        }
        let message = restarts.given_up().unwrap().to_owned();
        assert!(
            message.contains("`s`") && message.contains("refused"),
            "{message}"
        );
        restarts.started();
        assert_eq!(
            restarts.lost("s", later, "again").as_deref(),
            Some(message.as_str())
        );
    }
}
