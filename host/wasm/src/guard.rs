//! Running guest code under its limits, and naming why it stopped: the deadline and the
//! cancellation signal (checked by the epoch callback while guest code runs, and raced here
//! for when the guest waits inside a host call), the memory cap, or a trap.

use std::future::Future;
use std::time::{Duration, Instant};

use rho_component::CancelSignal;
use wasmtime::Trap;

use crate::store::{CallState, Stop};
use crate::ticker::EPOCH_TICK;

/// How long past its deadline a call that is blocked in a host call (where the epoch callback
/// cannot run) is abandoned; running guest code is stopped within one tick.
const BACKSTOP_GRACE: Duration = EPOCH_TICK.saturating_mul(5);

/// How long a cancelled guest may keep running so that it can see `is-cancelled` and stop
/// cleanly (finish a write, return its own `cancelled` error); then it is stopped.
pub const CANCEL_GRACE: Duration = Duration::from_millis(200);

/// Why guest code did not return a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The budget ran out.
    Deadline,
    /// The caller cancelled.
    Cancelled,
    /// A memory grow beyond the limit was refused.
    Memory,
    /// Anything else: a trap, or an invalid value crossing the boundary.
    Trap(String),
}

impl Failure {
    /// The message the model reads, for component `component`.
    pub(crate) fn message(&self, component: &str, timeout: Duration, memory_limit: u64) -> String {
        format!(
            "component {component} {}",
            self.detail(timeout, memory_limit)
        )
    }

    /// The message without the component: `exceeded its 100 ms budget`, `trapped: ...`.
    pub(crate) fn detail(&self, timeout: Duration, memory_limit: u64) -> String {
        match self {
            Self::Deadline => format!("exceeded its {} ms budget", timeout.as_millis()),
            Self::Cancelled => "was cancelled".to_owned(),
            Self::Memory => format!(
                "exceeded its memory limit of {} MiB",
                memory_limit.div_ceil(1024 * 1024)
            ),
            Self::Trap(message) => format!("trapped: {message}"),
        }
    }
}

/// What racing a guest future against its deadline and cancellation gave.
pub(crate) enum Guarded<T> {
    /// The future finished (with the guest's value or a wasmtime error).
    Done(T),
    /// The backstop deadline passed first.
    TimedOut,
    /// Cancellation fired first.
    Cancelled,
}

/// Races `work` against `deadline` (plus a grace period) and `cancel`. Once `cancel` fires
/// the guest has [`CANCEL_GRACE`] to return (the epoch callback stops running guest code when
/// it ends; this backstop covers a guest blocked in a host call). Dropping `work` drops the
/// guest mid-call; its store must not be used for guest code again.
pub(crate) async fn guard<T>(
    work: impl Future<Output = T>,
    deadline: Instant,
    cancel: Option<&CancelSignal>,
) -> Guarded<T> {
    let cancelled = async {
        match cancel {
            Some(cancel) => cancel.cancelled().await,
            None => std::future::pending().await,
        }
    };
    let backstop = tokio::time::sleep_until((deadline + BACKSTOP_GRACE).into());
    tokio::pin!(work, backstop);
    tokio::select! {
        biased;
        value = &mut work => return Guarded::Done(value),
        () = cancelled => {}
        () = &mut backstop => return Guarded::TimedOut,
    }
    tokio::select! {
        biased;
        value = &mut work => Guarded::Done(value),
        () = tokio::time::sleep(CANCEL_GRACE + BACKSTOP_GRACE) => Guarded::Cancelled,
        () = &mut backstop => Guarded::TimedOut,
    }
}

/// Names why the guest stopped, from what the store recorded and the error wasmtime returned.
pub(crate) fn classify(state: &CallState, error: &wasmtime::Error) -> Failure {
    match state.stop {
        Some(Stop::Cancelled) => return Failure::Cancelled,
        Some(Stop::Deadline) => return Failure::Deadline,
        None => {}
    }
    if state.limiter.memory_refused().is_some() {
        return Failure::Memory;
    }
    if let Some(elements) = state.limiter.table_refused() {
        return Failure::Trap(format!(
            "its tables grew to {elements} elements together, beyond the limit"
        ));
    }
    if let Some(trap) = error.downcast_ref::<Trap>() {
        let text = trap.to_string();
        return Failure::Trap(text.strip_prefix("wasm trap: ").unwrap_or(&text).to_owned());
    }
    Failure::Trap(error.root_cause().to_string())
}

/// Maps a race outcome to the guest's value or the failure.
pub(crate) fn outcome<T>(
    state: &CallState,
    guarded: Guarded<wasmtime::Result<T>>,
) -> Result<T, Failure> {
    match guarded {
        Guarded::Done(Ok(value)) => Ok(value),
        Guarded::Done(Err(error)) => {
            tracing::debug!(component = %state.component, error = ?error, "wasm guest stopped");
            Err(classify(state, &error))
        }
        Guarded::TimedOut => Err(Failure::Deadline),
        Guarded::Cancelled => Err(Failure::Cancelled),
    }
}
