//! The gate on its own: one open, eight waiting in order, the rest rejected and counted; a
//! waiter that stops waiting leaves no trace.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::future::pending;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::*;

/// A question that waits at `gate` until `stop` fires, then holds the turn until `close`
/// fires, recording its number in `opened` when it opens.
fn asker(
    gate: &Arc<QuestionGate>,
    n: usize,
    opened: &Arc<Mutex<Vec<usize>>>,
) -> (JoinHandle<Result<(), NotOpened>>, oneshot::Sender<()>) {
    let (close, closed) = oneshot::channel::<()>();
    let gate = Arc::clone(gate);
    let opened = Arc::clone(opened);
    let task = tokio::spawn(async move {
        let turn = gate.open(pending()).await?;
        opened.lock().unwrap().push(n);
        let _ = closed.await;
        drop(turn);
        Ok(())
    });
    (task, close)
}

/// Lets every spawned task run until it waits.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn one_question_opens_eight_wait_in_order_and_the_rest_are_rejected_at_once() {
    let gate = QuestionGate::new("flood");
    let opened = Arc::new(Mutex::new(Vec::new()));
    let mut closers = Vec::new();
    let mut tasks = Vec::new();
    for n in 0..=MAX_QUEUED_QUESTIONS {
        let (task, close) = asker(&gate, n, &opened);
        tasks.push(task);
        closers.push(close);
        settle().await;
    }
    assert_eq!(*opened.lock().unwrap(), vec![0], "one open, eight waiting");
    // The tenth and later: rejected without waiting, each counted.
    for _ in 0..100 {
        match gate.open(pending()).await {
            Err(NotOpened::Rejected(rejected)) => {
                assert!(rejected.message().contains("`flood`"), "{rejected:?}");
                assert!(rejected.message().contains("8 waiting"), "{rejected:?}");
                assert_eq!(rejected.error().code.0, QUESTION_REJECTED_CODE);
            }
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("a tenth question opened"),
        }
    }
    assert_eq!(gate.rejected().count(), 100);
    // Closing each open question lets the next in, first come first served.
    for (n, close) in closers.into_iter().enumerate() {
        assert_eq!(opened.lock().unwrap().len(), n + 1);
        assert_eq!(opened.lock().unwrap()[n], n);
        close.send(()).unwrap();
        settle().await;
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    // Drained: the next question opens at once and nothing more was counted.
    let turn = gate.open(pending()).await;
    assert!(turn.is_ok());
    assert_eq!(gate.rejected().count(), 100);
}

#[tokio::test]
async fn a_waiter_that_stops_waiting_frees_its_place_and_says_why() {
    let gate = QuestionGate::new("s");
    let open = gate.open(pending()).await.unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let waiting = {
        let gate = Arc::clone(&gate);
        tokio::spawn(async move {
            gate.open(async {
                let _ = stopped.await;
                "the call ended"
            })
            .await
            .map(drop)
        })
    };
    settle().await;
    // Seven more fill the queue; the one after them is rejected.
    let opened = Arc::new(Mutex::new(Vec::new()));
    let mut queued: Vec<_> = (1..MAX_QUEUED_QUESTIONS)
        .map(|n| asker(&gate, n, &opened))
        .collect();
    settle().await;
    assert!(matches!(
        gate.open(pending()).await,
        Err(NotOpened::Rejected(_))
    ));
    stop.send(()).unwrap();
    assert_eq!(
        waiting.await.unwrap(),
        Err(NotOpened::Ended("the call ended"))
    );
    // Its place is free again.
    let (task, close) = asker(&gate, 99, &opened);
    queued.push((task, close));
    settle().await;
    assert!(matches!(
        gate.open(pending()).await,
        Err(NotOpened::Rejected(_))
    ));
    assert_eq!(gate.rejected().count(), 2);
    drop(open);
    for (task, close) in queued {
        settle().await;
        close.send(()).unwrap();
        task.await.unwrap().unwrap();
    }
    assert_eq!(opened.lock().unwrap().last(), Some(&99));
}

#[tokio::test]
async fn a_turn_handed_to_a_waiter_that_gave_up_goes_to_the_next_one() {
    let gate = QuestionGate::new("s");
    let open = gate.open(pending()).await.unwrap();
    // The first waiter is dropped (its handler task aborted) while it waits; the second must
    // still get the turn when the open question closes.
    let first = {
        let gate = Arc::clone(&gate);
        tokio::spawn(async move { gate.open(pending()).await.map(drop) })
    };
    settle().await;
    let opened = Arc::new(Mutex::new(Vec::new()));
    let (second, close) = asker(&gate, 2, &opened);
    settle().await;
    // The turn goes to the first waiter, whose task is cancelled before it runs again.
    drop(open);
    first.abort();
    settle().await;
    assert_eq!(*opened.lock().unwrap(), vec![2]);
    close.send(()).unwrap();
    second.await.unwrap().unwrap();
    assert!(gate.open(pending()).await.is_ok(), "no turn leaked");
}

#[tokio::test]
async fn the_count_carries_across_a_new_connection_of_the_server() {
    let first = QuestionGate::new("s");
    let _open = first.open(pending()).await.unwrap();
    let waiters: Vec<_> = (0..MAX_QUEUED_QUESTIONS)
        .map(|_| {
            let gate = Arc::clone(&first);
            tokio::spawn(async move { gate.open(pending()).await.map(drop) })
        })
        .collect();
    settle().await;
    assert!(first.open(pending()).await.is_err());
    let shown = first.rejected();
    assert_eq!(shown.count(), 1);
    // The server starts again: its new gate counts into the handle inventories hold.
    let second = QuestionGate::new("s");
    let _held = second.open(pending()).await.unwrap();
    second.continue_count(&shown);
    let waiters2: Vec<_> = (0..MAX_QUEUED_QUESTIONS)
        .map(|_| {
            let gate = Arc::clone(&second);
            tokio::spawn(async move { gate.open(pending()).await.map(drop) })
        })
        .collect();
    settle().await;
    assert!(second.open(pending()).await.is_err());
    assert_eq!(shown.count(), 2);
    assert_eq!(second.rejected().count(), 2);
    for waiter in waiters.into_iter().chain(waiters2) {
        waiter.abort();
    }
}
