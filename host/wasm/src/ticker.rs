//! The epoch ticker: one thread that advances the engine's epoch every [`EPOCH_TICK`] while
//! guest code may run, which is what lets a store's epoch callback check deadlines and
//! cancellation. With no guest running the thread sleeps until one starts: an idle rho wakes
//! no core.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::Engine;

use crate::error::WasmError;

/// How often the epoch advances: the granularity of deadlines and of cancellation checks, and
/// how often a running guest yields to the async executor.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// What the thread and its owner share.
#[derive(Debug, Default)]
struct State {
    /// Guests that may be running (instantiations and calls under a [`Ticking`]).
    running: usize,
    /// The owner is gone: the thread ends.
    stopped: bool,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is two plain fields updated in one step: a panic elsewhere cannot leave it
        // half-written.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Owns the ticker thread; dropping it stops the thread at once.
pub(crate) struct EpochTicker {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// Keeps the epoch advancing while it lives: held around every instantiation and call.
#[must_use = "the epoch advances only while this is held"]
pub(crate) struct Ticking {
    shared: Arc<Shared>,
}

impl EpochTicker {
    /// Starts the thread for `engine`; it ticks only while a [`Ticking`] is held.
    pub(crate) fn start(engine: Engine) -> Result<Self, WasmError> {
        let shared = Arc::new(Shared::default());
        let thread = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("rho-wasm-epoch".to_owned())
                .spawn(move || tick(&engine, &shared))
                .map_err(WasmError::Ticker)?
        };
        Ok(Self {
            shared,
            thread: Some(thread),
        })
    }

    /// Advances the epoch from now until the returned guard is dropped.
    pub(crate) fn ticking(&self) -> Ticking {
        self.shared.lock().running += 1;
        self.shared.changed.notify_all();
        Ticking {
            shared: Arc::clone(&self.shared),
        }
    }
}

/// The thread: sleeps while nothing runs, ticks every [`EPOCH_TICK`] while something does.
fn tick(engine: &Engine, shared: &Shared) {
    let mut state = shared.lock();
    loop {
        if state.stopped {
            return;
        }
        if state.running == 0 {
            state = shared
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        }
        let (next, waited) = shared
            .changed
            .wait_timeout(state, EPOCH_TICK)
            .unwrap_or_else(PoisonError::into_inner);
        state = next;
        if waited.timed_out() && state.running > 0 {
            engine.increment_epoch();
        }
    }
}

impl Drop for Ticking {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.running = state.running.saturating_sub(1);
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.shared.lock().stopped = true;
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take() {
            // The thread only waits and increments a counter: it cannot panic, and it exits
            // as soon as it sees `stopped`.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn epoch_after(engine: &Engine, wait: Duration) -> u64 {
        // The engine's epoch is not readable; a store's deadline callback is the only
        // observer, so this counts the ticks through one.
        let mut store = wasmtime::Store::new(engine, ());
        store.set_epoch_deadline(1);
        let ticks = Arc::new(Mutex::new(0u64));
        let seen = Arc::clone(&ticks);
        store.epoch_deadline_callback(move |_| {
            *seen.lock().unwrap_or_else(PoisonError::into_inner) += 1;
            Ok(wasmtime::UpdateDeadline::Continue(1))
        });
        let started = Instant::now();
        let wasm = wat::parse_str(
            r#"(module (func (export "spin") (param i64) (local i64)
                 (loop (local.set 1 (i64.add (local.get 1) (i64.const 1)))
                       (br_if 0 (i64.lt_u (local.get 1) (local.get 0))))))"#,
        )
        .unwrap_or_else(|e| panic!("wat: {e}"));
        let module = wasmtime::Module::new(engine, wasm).unwrap_or_else(|e| panic!("module: {e}"));
        let instance = wasmtime::Instance::new(&mut store, &module, &[])
            .unwrap_or_else(|e| panic!("instance: {e}"));
        let spin = instance
            .get_typed_func::<i64, ()>(&mut store, "spin")
            .unwrap_or_else(|e| panic!("spin: {e}"));
        while started.elapsed() < wait {
            let _ = spin.call(&mut store, 1_000_000);
        }
        *ticks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn engine() -> Engine {
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        Engine::new(&config).unwrap_or_else(|e| panic!("engine: {e}"))
    }

    #[test]
    fn the_epoch_advances_only_while_something_runs() {
        let engine = engine();
        let ticker = EpochTicker::start(engine.clone()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(epoch_after(&engine, Duration::from_millis(150)), 0, "idle");
        let ticking = ticker.ticking();
        assert!(
            epoch_after(&engine, Duration::from_millis(150)) > 0,
            "running"
        );
        drop(ticking);
        // A tick already under way may still land.
        std::thread::sleep(EPOCH_TICK * 2);
        assert!(
            epoch_after(&engine, Duration::from_millis(150)) <= 1,
            "idle again"
        );
    }

    #[test]
    fn dropping_the_ticker_ends_its_thread_even_while_ticking() {
        let ticker = EpochTicker::start(engine()).unwrap_or_else(|e| panic!("{e}"));
        let _ticking = ticker.ticking();
        let started = Instant::now();
        drop(ticker);
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
