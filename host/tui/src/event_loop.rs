//! The interactive loop: terminal events (read on their own thread) and host events go into
//! [`App`]; operations go to the host; a frame is drawn only after something changed, at
//! most once per [`FRAME_INTERVAL`], after the events that arrived together are all applied
//! (so a flood of streamed text costs one frame, not one per delta).

use std::time::{Duration, Instant};

use crossterm::event::Event;
use rho_component::CancelSignal;
use rho_core::host::{HostEvent, HostHandle, SessionHost};
use tokio::sync::mpsc;

use crate::app::App;
use crate::terminal::{self, RestoreOnDrop};
use crate::theme::Theme;

/// The shortest time between two frames (60 per second).
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// Events applied before a frame is drawn when they keep coming.
const BATCH: usize = 256;
/// How long the host may take to close its servers after the user leaves.
const CLOSE_BUDGET: Duration = Duration::from_secs(5);

/// How a session starts on screen.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The session was resumed (`--continue`, `--session`): show its conversation.
    pub resumed: bool,
    /// The styles.
    pub theme: Theme,
}

/// Runs the interactive session until the user leaves or `stop` fires (a signal), then lets
/// the host close every server and restores the terminal.
pub async fn run(
    host: SessionHost,
    handle: HostHandle,
    mut events: mpsc::Receiver<HostEvent>,
    stop: CancelSignal,
    options: Options,
) -> std::io::Result<()> {
    let mut tty = terminal::enter()?;
    let _restore = RestoreOnDrop;
    let host_task = tokio::spawn(host.run(stop.clone()));
    let mut keys = spawn_input_thread();
    let mut app = App::new(options.theme);
    app.start(options.resumed);
    let mut dirty = true;
    let mut last_frame = Instant::now() - FRAME_INTERVAL;
    let mut handle = Some(handle);
    let mut host_open = true;
    loop {
        for (id, operation) in app.take_operations() {
            if let Some(handle) = &handle
                && handle.submit(id, operation).await.is_err()
            {
                host_open = false;
            }
        }
        if app.should_quit() || !host_open {
            break;
        }
        let frame_due = last_frame + FRAME_INTERVAL;
        tokio::select! {
            biased;
            () = stop.cancelled() => break,
            key = keys.recv() => match key {
                Some(event) => {
                    apply_input(&mut app, event);
                    while let Ok(event) = keys.try_recv() {
                        apply_input(&mut app, event);
                    }
                    dirty = true;
                }
                None => break,
            },
            event = events.recv() => match event {
                Some(event) => {
                    app.on_host_event(event);
                    for _ in 0..BATCH {
                        match events.try_recv() {
                            Ok(event) => app.on_host_event(event),
                            Err(_) => break,
                        }
                    }
                    dirty = true;
                }
                None => host_open = false,
            },
            () = tokio::time::sleep_until(frame_due.into()), if dirty => {
                tty.draw(|frame| app.render(frame))?;
                last_frame = Instant::now();
                dirty = false;
            }
            // The footer's "press again" hints expire.
            () = tokio::time::sleep(Duration::from_millis(500)), if !dirty => {
                dirty = app.hint_expired();
            }
        }
    }
    // Leaving: no new work; what runs is stopped; the host closes its servers.
    drop(handle.take());
    stop.cancel();
    // Keep reading its events so it is never stuck on a full channel while closing.
    tokio::spawn(async move { while events.recv().await.is_some() {} });
    let _ = tokio::time::timeout(CLOSE_BUDGET, host_task).await;
    Ok(())
}

fn apply_input(app: &mut App, event: Event) {
    match event {
        Event::Key(key) => app.on_key(key),
        Event::Paste(text) => app.on_paste(&text),
        _ => {}
    }
}

/// Terminal events, read on a thread of their own (crossterm's `read` blocks); the thread
/// ends when the loop stops listening.
fn spawn_input_thread() -> mpsc::Receiver<Event> {
    let (tx, rx) = mpsc::channel(1024);
    std::thread::spawn(move || {
        loop {
            match crossterm::event::read() {
                Ok(event) => {
                    if tx.blocking_send(event).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    tracing::warn!("cannot read the terminal: {e}");
                    return;
                }
            }
        }
    });
    rx
}
