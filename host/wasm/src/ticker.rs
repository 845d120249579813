//! The epoch ticker: one thread that advances the engine's epoch every [`EPOCH_TICK`], which is
//! what lets a store's epoch callback check deadlines and cancellation while guest code runs.

use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::Engine;

use crate::error::WasmError;

/// How often the epoch advances: the granularity of deadlines and of cancellation checks, and
/// how often a running guest yields to the async executor.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Owns the ticker thread; dropping it stops the thread at once.
pub(crate) struct EpochTicker {
    // Dropping the sender disconnects the channel, which wakes the thread out of its wait.
    stop: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    /// Starts ticking `engine`.
    pub(crate) fn start(engine: Engine) -> Result<Self, WasmError> {
        let (stop, stopped) = mpsc::sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("rho-wasm-epoch".to_owned())
            .spawn(move || {
                // Anything but a timeout (the sender dropped) ends the thread.
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(EPOCH_TICK) {
                    engine.increment_epoch();
                }
            })
            .map_err(WasmError::Ticker)?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            // The thread only sleeps and increments a counter: it cannot panic, and it exits
            // within microseconds of the disconnect.
            let _ = thread.join();
        }
    }
}

impl std::fmt::Debug for EpochTicker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EpochTicker")
            .field("tick", &EPOCH_TICK)
            .finish()
    }
}
