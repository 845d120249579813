//! A cancellation signal that needs no async runtime: one side calls [`CancelSignal::cancel`],
//! any number of clones poll [`CancelSignal::is_cancelled`] or await
//! [`CancelSignal::cancelled`]. Adapters bridge it to their runtime's own token.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

#[derive(Default)]
struct Shared {
    cancelled: AtomicBool,
    wakers: Mutex<Vec<Waker>>,
}

/// A cloneable, one-way cancellation flag. Once cancelled it stays cancelled.
#[derive(Clone, Default)]
pub struct CancelSignal(Arc<Shared>);

impl CancelSignal {
    /// A signal that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the signal and wakes every waiter. Idempotent.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
        let wakers =
            std::mem::take(&mut *self.0.wakers.lock().unwrap_or_else(PoisonError::into_inner));
        for waker in wakers {
            waker.wake();
        }
    }

    /// Whether the signal has fired.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// Completes when the signal fires (at once if it already has).
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled { signal: self }
    }
}

impl std::fmt::Debug for CancelSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CancelSignal")
            .field(&self.is_cancelled())
            .finish()
    }
}

/// The future of [`CancelSignal::cancelled`].
#[derive(Debug)]
pub struct Cancelled<'a> {
    signal: &'a CancelSignal,
}

impl Future for Cancelled<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.signal.is_cancelled() {
            return Poll::Ready(());
        }
        let mut wakers = self
            .signal
            .0
            .wakers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Checked again under the lock: `cancel` stores the flag before taking the wakers, so
        // either it sees this waker or this check sees the flag.
        if self.signal.is_cancelled() {
            return Poll::Ready(());
        }
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Wake;

    struct Flag(AtomicBool);
    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn waiters_are_woken_once_and_late_waiters_complete_at_once() {
        let signal = CancelSignal::new();
        let flag = Arc::new(Flag(AtomicBool::new(false)));
        let waker = Waker::from(flag.clone());
        let mut cx = Context::from_waker(&waker);
        let clone = signal.clone();
        let mut pending = Box::pin(clone.cancelled());
        assert!(pending.as_mut().poll(&mut cx).is_pending());
        assert!(pending.as_mut().poll(&mut cx).is_pending());
        assert_eq!(signal.0.wakers.lock().map(|w| w.len()).unwrap_or(0), 1);
        signal.cancel();
        assert!(flag.0.load(Ordering::SeqCst));
        assert!(pending.as_mut().poll(&mut cx).is_ready());
        assert!(
            Box::pin(signal.cancelled())
                .as_mut()
                .poll(&mut cx)
                .is_ready()
        );
        assert!(clone.is_cancelled());
    }
}
