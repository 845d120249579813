//! One call's store: the WASI context built from exactly the component's declared capabilities,
//! the resource limits, and the epoch callback that enforces the deadline and cancellation
//! while guest code runs.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rho_component::{
    CancelSignal, MAX_WASM_TIMEOUT, ProgressSink, ToolContext, WasmComponentSpec, WorkspaceAccess,
};
use wasmtime::component::ResourceTable;
use wasmtime::{Engine, Store, UpdateDeadline};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::guard::CANCEL_GRACE;
use crate::guest_output::CapturedOutput;
use crate::limits::Limiter;
use crate::workspace_files::GUEST_WORKSPACE;

/// Host log messages a guest may write per call; later ones are dropped.
pub(crate) const LOG_MESSAGES_PER_CALL: u32 = 1000;
/// Progress reports a guest may send per call; later ones are dropped.
pub(crate) const PROGRESS_REPORTS_PER_CALL: u32 = 1000;

/// Why the host stopped a running guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The call's wall-clock budget ran out.
    Deadline,
    /// The caller cancelled the call.
    Cancelled,
}

/// What a call's host functions may use.
pub(crate) struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    /// Memory and table limits, with the record of a refused grow.
    pub(crate) limiter: Limiter,
    /// Set by the epoch callback when it stops the guest.
    pub(crate) stop: Option<Stop>,
    /// `<plugin>/<name>`, for log attribution.
    pub(crate) component: Arc<str>,
    /// The guest tool being called (`None` during `list-tools`).
    pub(crate) tool: Option<String>,
    /// The workspace, when the component may read it.
    pub(crate) read_root: Option<PathBuf>,
    /// The call's cancellation signal.
    pub(crate) cancel: Option<CancelSignal>,
    /// When the epoch callback first saw the cancellation (the guest's grace starts then).
    cancel_seen: Option<Instant>,
    /// Where progress goes.
    pub(crate) progress: Option<ProgressSink>,
    /// Log messages the guest may still write.
    pub(crate) logs_left: u32,
    /// Progress reports the guest may still send.
    pub(crate) progress_left: u32,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// When a call (or `list-tools`) started now must end: `timeout` from now, never more than
/// rho's largest budget (so no manifest value can overflow the clock).
pub(crate) fn deadline_after(timeout: Duration) -> Instant {
    Instant::now() + timeout.min(MAX_WASM_TIMEOUT)
}

/// The call a store is made for: `None` for `list-tools`, which runs with no capabilities.
pub(crate) struct CallSetup<'a> {
    /// The guest tool name.
    pub(crate) tool: &'a str,
    /// The caller's context.
    pub(crate) context: &'a ToolContext,
}

/// A store ready to instantiate into, and the guest's captured stdout and stderr.
pub(crate) struct PreparedStore {
    pub(crate) store: Store<CallState>,
    pub(crate) stdout: CapturedOutput,
    pub(crate) stderr: CapturedOutput,
}

/// Builds the store for one call of `spec`'s component, or the message of why it cannot be
/// built (the workspace cannot be opened).
pub(crate) fn prepare(
    engine: &Engine,
    spec: &WasmComponentSpec,
    component: &Arc<str>,
    call: Option<CallSetup<'_>>,
    deadline: Instant,
) -> Result<PreparedStore, String> {
    let stdout = CapturedOutput::default();
    let stderr = CapturedOutput::default();
    let mut wasi = WasiCtxBuilder::new();
    // Nothing is inherited: no args, no environment, stdin closed, and no network (wasmtime-wasi
    // 48 disables TCP, UDP and name lookup and denies every address unless told otherwise).
    wasi.stdout(stdout.clone()).stderr(stderr.clone());
    let mut read_root = None;
    if let Some(call) = &call {
        let perms = match spec.workspace {
            WorkspaceAccess::None => None,
            WorkspaceAccess::Read => Some(FsPerms::ReadOnly),
            WorkspaceAccess::ReadWrite => Some(FsPerms::ReadWrite),
        };
        if let Some(perms) = perms {
            let workspace = &call.context.workspace;
            wasi.preopened_dir(workspace, GUEST_WORKSPACE, perms)
                .map_err(|e| {
                    format!(
                        "cannot open the workspace `{}` for the component: {e}",
                        workspace.display()
                    )
                })?;
            wasi.initial_cwd(GUEST_WORKSPACE);
            read_root = Some(workspace.clone());
        }
        for name in &spec.env {
            if call.context.hidden_env.iter().any(|hidden| hidden == name) {
                tracing::debug!(component = %component, variable = %name, "not passing a secret variable to a wasm component");
                continue;
            }
            if let Ok(value) = std::env::var(name) {
                wasi.env(name, value);
            }
        }
    }
    let state = CallState {
        wasi: wasi.build(),
        table: ResourceTable::new(),
        limiter: Limiter::new(spec.memory_limit),
        stop: None,
        component: component.clone(),
        tool: call.as_ref().map(|c| c.tool.to_owned()),
        read_root,
        cancel: call.as_ref().map(|c| c.context.cancel.clone()),
        cancel_seen: None,
        progress: call.as_ref().and_then(|c| c.context.progress.clone()),
        logs_left: LOG_MESSAGES_PER_CALL,
        progress_left: PROGRESS_REPORTS_PER_CALL,
    };
    let mut store = Store::new(engine, state);
    store.limiter(|state| &mut state.limiter);
    // Called at every epoch tick while guest code runs: stop it when the budget is spent or
    // the call is cancelled, otherwise yield to the executor so a busy guest never holds a
    // tokio worker for more than one tick.
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |mut cx| {
        let state = cx.data_mut();
        let now = Instant::now();
        let cancelled = state
            .cancel
            .as_ref()
            .is_some_and(CancelSignal::is_cancelled);
        let stop = if cancelled && now >= *state.cancel_seen.get_or_insert(now) + CANCEL_GRACE {
            Some(Stop::Cancelled)
        } else if now >= deadline {
            Some(Stop::Deadline)
        } else {
            None
        };
        match stop {
            Some(stop) => {
                state.stop = Some(stop);
                Err(wasmtime::Error::msg(match stop {
                    Stop::Deadline => "deadline exceeded",
                    Stop::Cancelled => "cancelled",
                }))
            }
            None => Ok(UpdateDeadline::Yield(1)),
        }
    });
    Ok(PreparedStore {
        store,
        stdout,
        stderr,
    })
}
