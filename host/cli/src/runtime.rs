//! The one tokio runtime of a command that runs sessions or talks to servers, and the signals
//! that end rho. Commands that do not need it (such as `mcp list` without `--connect`) never
//! build it.
//!
//! Every command's async work runs through [`run`], which listens for SIGINT, SIGTERM and
//! SIGHUP *before* the work starts anything. On the first signal the work's stop flag is raised
//! so it can wind down as it likes (abort the turn, send `notifications/cancelled`, restore the
//! terminal); if it has not finished after [`STOP_GRACE`] (or a second signal arrives) it is
//! dropped, and dropping it stops every server it started: each stdio server's owner kills its
//! process group on drop. A signal never leaves a server running.

use std::future::Future;
use std::pin::pin;
use std::process::ExitCode;
use std::time::Duration;

use rho_component::CancelSignal;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// How long the work has, after the first signal, to finish on its own.
pub const STOP_GRACE: Duration = Duration::from_secs(3);
/// How long the runtime waits for its tasks once the work is over.
const SHUTDOWN: Duration = Duration::from_millis(100);

/// A signal that ends rho.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndSignal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP: the terminal or SSH session went away.
    HangUp,
}

impl EndSignal {
    /// The signal's number.
    pub fn number(self) -> u8 {
        match self {
            Self::Interrupt => 2,
            Self::Terminate => 15,
            Self::HangUp => 1,
        }
    }

    /// The exit status of a process this signal stopped: 128 plus its number, as shells report it.
    pub fn exit_code(self) -> ExitCode {
        ExitCode::from(128 + self.number())
    }
}

/// The error a command returns when a signal ended it; `main` exits with
/// [`EndSignal::exit_code`] and prints nothing.
#[derive(Debug)]
pub struct Ended(pub EndSignal);

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stopped by signal {}", self.0.number())
    }
}

impl std::error::Error for Ended {}

/// SIGINT, SIGTERM and SIGHUP from the moment they are installed.
struct EndSignals {
    interrupt: Option<Signal>,
    terminate: Option<Signal>,
    hang_up: Option<Signal>,
}

impl EndSignals {
    /// Installs the handlers (within a runtime). A handler that cannot be installed leaves that
    /// signal's default action, which still ends rho.
    fn install() -> Self {
        Self {
            interrupt: signal(SignalKind::interrupt()).ok(),
            terminate: signal(SignalKind::terminate()).ok(),
            hang_up: signal(SignalKind::hangup()).ok(),
        }
    }

    /// The next signal.
    async fn next(&mut self) -> EndSignal {
        tokio::select! {
            () = received(self.interrupt.as_mut()) => EndSignal::Interrupt,
            () = received(self.terminate.as_mut()) => EndSignal::Terminate,
            () = received(self.hang_up.as_mut()) => EndSignal::HangUp,
        }
    }
}

/// Waits for `signal` (forever when it could not be installed).
async fn received(signal: Option<&mut Signal>) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// Runs `work` on a new runtime until it ends or a signal ends rho (see the module docs).
/// `work` gets the stop flag a signal raises. When a signal arrived, an `Ok` the work returned
/// within the grace period stands (it wound down on its own terms); anything else becomes
/// [`Ended`].
pub fn run<T, F, W>(work: W) -> anyhow::Result<T>
where
    W: FnOnce(CancelSignal) -> F,
    F: Future<Output = anyhow::Result<T>>,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = runtime.block_on(async {
        let mut signals = EndSignals::install();
        let stop = CancelSignal::new();
        let mut work = pin!(work(stop.clone()));
        let ended = tokio::select! {
            result = &mut work => return result,
            ended = signals.next() => ended,
        };
        tracing::debug!(target: "rho::signal", signal = ended.number(), "stopping");
        stop.cancel();
        let finished = tokio::select! {
            result = tokio::time::timeout(STOP_GRACE, &mut work) => result.ok(),
            _ = signals.next() => None,
        };
        match finished {
            Some(Ok(value)) => Ok(value),
            // Dropping the work (when this block returns) stops what it started.
            _ => Err(anyhow::Error::new(Ended(ended))),
        }
    });
    // Tasks still running (a reader thread blocked in read(2), a server's transport) are
    // dropped with the runtime; their owners stop the processes they hold.
    runtime.shutdown_timeout(SHUTDOWN);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_128_plus_the_signal() {
        assert_eq!(EndSignal::Interrupt.number(), 2);
        assert_eq!(EndSignal::Terminate.number(), 15);
        assert_eq!(EndSignal::HangUp.number(), 1);
        assert_eq!(
            Ended(EndSignal::Terminate).to_string(),
            "stopped by signal 15"
        );
    }

    #[test]
    fn work_that_ends_returns_its_result() {
        let value = run(|stop| async move {
            assert!(!stop.is_cancelled());
            Ok(7)
        })
        .unwrap();
        assert_eq!(value, 7);
    }
}
