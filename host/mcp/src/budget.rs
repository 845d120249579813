//! The budget of one request (a tool call, a prompt expansion, a resource read): a deadline
//! that stands still while a question to the user is open, because the budget bounds an
//! unresponsive server, and a call waiting on a person is not unresponsive.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// A request's budget, shared by the request and whoever asks the user on its behalf.
#[derive(Debug)]
pub(crate) struct Budget {
    started: Instant,
    limit: Duration,
    state: Mutex<PauseState>,
    /// Bumped whenever a question opens or closes, so a waiting request re-reads its deadline.
    changed: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct PauseState {
    /// Questions open right now (legacy server requests and MRTR rounds can overlap).
    open: usize,
    /// When the first of the open questions opened.
    since: Option<Instant>,
    /// Time spent with at least one question open, added back to the deadline.
    paused: Duration,
}

impl Budget {
    /// A budget of `limit`, starting now.
    pub(crate) fn start(limit: Duration) -> Arc<Self> {
        Arc::new(Self {
            started: Instant::now(),
            limit,
            state: Mutex::new(PauseState::default()),
            changed: watch::channel(0).0,
        })
    }

    /// The budget's length (also the longest one question may stay open).
    pub(crate) fn limit(&self) -> Duration {
        self.limit
    }

    /// How long the request has run, pauses included.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The deadline, or `None` while a question is open (the clock stands still).
    fn deadline(&self) -> Option<Instant> {
        let state = self.state.lock().ok()?;
        if state.open > 0 {
            return None;
        }
        Some(self.started + self.limit + state.paused)
    }

    /// Marks a question open until the returned guard is dropped.
    pub(crate) fn question(self: &Arc<Self>) -> OpenQuestion {
        if let Ok(mut state) = self.state.lock() {
            if state.open == 0 {
                state.since = Some(Instant::now());
            }
            state.open += 1;
        }
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
        OpenQuestion(Arc::clone(self))
    }

    /// Resolves when the budget has run out (never while a question is open).
    pub(crate) async fn expired(&self) {
        let mut changes = self.changed.subscribe();
        loop {
            changes.borrow_and_update();
            match self.deadline() {
                Some(deadline) if Instant::now() >= deadline => return,
                Some(deadline) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(deadline) => {}
                        changed = changes.changed() => if changed.is_err() { return },
                    }
                }
                None => {
                    if changes.changed().await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// An open question; dropping it closes the question and gives its time back to the budget.
pub(crate) struct OpenQuestion(Arc<Budget>);

impl Drop for OpenQuestion {
    fn drop(&mut self) {
        if let Ok(mut state) = self.0.state.lock() {
            state.open = state.open.saturating_sub(1);
            if state.open == 0
                && let Some(since) = state.since.take()
            {
                state.paused += since.elapsed();
            }
        }
        self.0.changed.send_modify(|n| *n = n.wrapping_add(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_open_question_stops_the_clock_and_gives_its_time_back() {
        let budget = Budget::start(Duration::from_secs(10));
        tokio::time::sleep(Duration::from_secs(4)).await;
        let question = budget.question();
        let expired = tokio::time::timeout(Duration::from_secs(30), budget.expired()).await;
        assert!(
            expired.is_err(),
            "the budget never runs out while a question is open"
        );
        drop(question);
        let waited = Instant::now();
        budget.expired().await;
        // 6 s of the budget were left when the question opened.
        assert_eq!(waited.elapsed().as_secs(), 6);
    }

    #[tokio::test(start_paused = true)]
    async fn without_questions_the_budget_is_a_plain_deadline() {
        let budget = Budget::start(Duration::from_secs(3));
        let waited = Instant::now();
        budget.expired().await;
        assert_eq!(waited.elapsed().as_secs(), 3);
    }
}
