//! One question at a time per server: every form and sampling request a server puts to a person
//! passes through its connection's gate, which lets one be open, queues up to
//! [`MAX_QUEUED_QUESTIONS`] more in arrival order, and rejects the rest at once with a JSON-RPC
//! error, counted ([`RejectedQuestions`]) and logged at a bounded rate (`docs/mcp.md`, "Questions
//! from a server"). A server that sends a thousand questions during one call so costs the person
//! one question at a time, and rho a few bytes per rejection.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{ErrorCode, ErrorData};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Questions of one server that may wait while another of its questions is open; more are
/// rejected.
pub const MAX_QUEUED_QUESTIONS: usize = 8;

/// The JSON-RPC error code of a rejected question: the implementation-defined server error, as
/// the request is well formed and rho declines to take on more of them now.
pub const QUESTION_REJECTED_CODE: i32 = -32000;

/// The shortest time between two log lines about rejected questions of one server.
const LOG_INTERVAL: Duration = Duration::from_secs(5);

/// How many questions of a server were rejected because it had one open and
/// [`MAX_QUEUED_QUESTIONS`] waiting. A shared count: clones read the same number, and the count
/// carries across the server's restarts in a session.
#[derive(Debug, Clone, Default)]
pub struct RejectedQuestions(Arc<AtomicU64>);

impl RejectedQuestions {
    /// The rejections so far.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Adds `n` rejections; returns the new count.
    fn add(&self, n: u64) -> u64 {
        self.0.fetch_add(n, Ordering::Relaxed).saturating_add(n)
    }
}

impl From<u64> for RejectedQuestions {
    /// A count starting at `count` (a front-end showing a recorded one).
    fn from(count: u64) -> Self {
        Self(Arc::new(AtomicU64::new(count)))
    }
}

/// A question turned away because its server already had one open and the queue full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rejected {
    message: String,
}

impl Rejected {
    /// What the server is told.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }

    /// The JSON-RPC error answering the rejected request.
    pub(crate) fn error(&self) -> ErrorData {
        ErrorData::new(
            ErrorCode(QUESTION_REJECTED_CODE),
            self.message.clone(),
            None,
        )
    }
}

/// Why a question never opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotOpened {
    /// The queue was full: the request is rejected.
    Rejected(Rejected),
    /// It stopped waiting first (the call ended, was cancelled or ran out of budget, or the
    /// server cancelled the request), and why.
    Ended(&'static str),
}

/// One server's gate.
#[derive(Debug)]
pub(crate) struct QuestionGate {
    server: String,
    /// One permit: the open question. tokio hands a released permit to the longest waiter.
    open: Arc<Semaphore>,
    state: Mutex<GateState>,
}

#[derive(Debug, Default)]
struct GateState {
    /// Questions waiting for the permit.
    waiting: usize,
    rejected: RejectedQuestions,
    /// When the last log line about rejections was written.
    logged_at: Option<Instant>,
    /// Rejections not in a log line yet.
    unlogged: u64,
}

/// The open question of a server; dropping it lets the next one in.
pub(crate) struct OpenQuestion {
    gate: Arc<QuestionGate>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for OpenQuestion {
    fn drop(&mut self) {
        // A flood's rejections after its first log line are reported when a question closes,
        // so the log accounts for every one at a rate a person answering sets.
        self.gate.flush_log();
    }
}

/// Counts a waiting question until dropped.
struct Waiting<'a>(&'a QuestionGate);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.waiting = state.waiting.saturating_sub(1);
    }
}

impl QuestionGate {
    /// The gate of server `server`.
    pub(crate) fn new(server: &str) -> Arc<Self> {
        Arc::new(Self {
            server: server.to_owned(),
            open: Arc::new(Semaphore::new(1)),
            state: Mutex::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The count of rejections, shared.
    pub(crate) fn rejected(&self) -> RejectedQuestions {
        self.lock().rejected.clone()
    }

    /// Counts from now on into `earlier` (the count of the connection this one replaces),
    /// which takes over whatever this gate counted so far.
    pub(crate) fn continue_count(&self, earlier: &RejectedQuestions) {
        let mut state = self.lock();
        if Arc::ptr_eq(&state.rejected.0, &earlier.0) {
            return;
        }
        earlier.add(state.rejected.count());
        state.rejected = earlier.clone();
    }

    /// Opens a question: at once when none is open, after the questions queued before it
    /// otherwise, or never: rejected when [`MAX_QUEUED_QUESTIONS`] already wait, ended when
    /// `ends` resolves first (with its reason).
    pub(crate) async fn open(
        self: &Arc<Self>,
        ends: impl Future<Output = &'static str>,
    ) -> Result<OpenQuestion, NotOpened> {
        let open = |permit| OpenQuestion {
            gate: Arc::clone(self),
            _permit: permit,
        };
        // Permits go to waiters before anyone else, so this never overtakes the queue.
        if let Ok(permit) = Arc::clone(&self.open).try_acquire_owned() {
            return Ok(open(permit));
        }
        let waiting = {
            let mut state = self.lock();
            if state.waiting >= MAX_QUEUED_QUESTIONS {
                return Err(NotOpened::Rejected(self.reject(&mut state)));
            }
            state.waiting += 1;
            Waiting(self)
        };
        let acquired = tokio::select! {
            permit = Arc::clone(&self.open).acquire_owned() => permit,
            why = ends => return Err(NotOpened::Ended(why)),
        };
        drop(waiting);
        // The semaphore is never closed, so acquiring fails only if that changes.
        acquired
            .map(open)
            .map_err(|_| NotOpened::Ended("the server's connection closed"))
    }

    /// Counts and logs a rejection; what the server is told.
    fn reject(&self, state: &mut GateState) -> Rejected {
        state.rejected.add(1);
        state.unlogged += 1;
        let now = Instant::now();
        if state
            .logged_at
            .is_none_or(|at| now.duration_since(at) >= LOG_INTERVAL)
        {
            log(&self.server, state, now);
        }
        Rejected {
            message: format!(
                "MCP server `{}` already has a question open and {MAX_QUEUED_QUESTIONS} waiting \
                 (rho puts one question per server to the person at a time); this request is \
                 rejected",
                self.server
            ),
        }
    }

    fn flush_log(&self) {
        let mut state = self.lock();
        if state.unlogged > 0 {
            log(&self.server, &mut state, Instant::now());
        }
    }
}

impl Drop for QuestionGate {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        if state.unlogged > 0 {
            log(&self.server, state, Instant::now());
        }
    }
}

/// One line for the rejections not logged yet: counts only, never a request's content.
fn log(server: &str, state: &mut GateState, now: Instant) {
    tracing::warn!(
        target: "rho::mcp",
        server,
        rejected = state.unlogged,
        total = state.rejected.count(),
        "questions rejected: the server already had one open and {MAX_QUEUED_QUESTIONS} waiting"
    );
    state.unlogged = 0;
    state.logged_at = Some(now);
}

#[cfg(test)]
#[path = "question_gate_tests.rs"]
mod tests;
