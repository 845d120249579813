//! File-system work on tokio's blocking pool, stopped when the call is cancelled or dropped.
//!
//! The stop flag fires on either, so a long walk ends instead of running on unseen.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rho_component::{CancelSignal, ToolContext, ToolOutput};

use super::paths::Sandbox;

/// What blocking work polls to learn it should stop.
#[derive(Clone)]
pub(crate) struct Stop {
    cancel: CancelSignal,
    dropped: Arc<AtomicBool>,
}

impl Stop {
    /// The call was cancelled, or nobody is waiting for the result any more.
    pub(crate) fn requested(&self) -> bool {
        self.dropped.load(Ordering::Relaxed) || self.cancel.is_cancelled()
    }
}

/// Raises the stop flag when the awaiting future goes away.
struct RaiseOnDrop(Arc<AtomicBool>);

impl Drop for RaiseOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Whether a cancellation abandons the work or waits for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnCancel {
    /// Return at once; the work sees [`Stop::requested`] and ends by itself (reads, walks).
    Abandon,
    /// Wait for the work, so the result says what really happened (writes, which are short).
    Finish,
}

/// The output of a call that was cancelled.
pub(crate) fn cancelled(tool: &str) -> ToolOutput {
    ToolOutput::error(format!("{tool} was cancelled"))
}

/// Runs `work` on the blocking pool with the call's [`Sandbox`] and [`Stop`] flag.
pub(crate) async fn run_blocking<F>(
    tool: &'static str,
    context: &ToolContext,
    on_cancel: OnCancel,
    work: F,
) -> ToolOutput
where
    F: FnOnce(&Sandbox, &Stop) -> ToolOutput + Send + 'static,
{
    if context.cancel.is_cancelled() {
        return cancelled(tool);
    }
    let dropped = Arc::new(AtomicBool::new(false));
    let _raise = RaiseOnDrop(dropped.clone());
    let stop = Stop {
        cancel: context.cancel.clone(),
        dropped,
    };
    let workspace: PathBuf = context.workspace.clone();
    let extra_roots = context.extra_roots.clone();
    let handle = tokio::task::spawn_blocking(move || {
        let sandbox = Sandbox::new(&workspace, &extra_roots);
        work(&sandbox, &stop)
    });
    let joined = match on_cancel {
        OnCancel::Finish => handle.await,
        OnCancel::Abandon => tokio::select! {
            joined = handle => joined,
            () = context.cancel.cancelled() => return cancelled(tool),
        },
    };
    joined.unwrap_or_else(|e| ToolOutput::error(format!("{tool} failed: {e}")))
}
