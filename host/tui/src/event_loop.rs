//! The interactive loop: terminal events (read on their own thread) and host events go into
//! [`App`]; operations go to the host; a frame is drawn only after something changed, after
//! the events that arrived together are all applied (so a flood of streamed text costs one
//! frame, not one per delta). Host events are drawn at most once per [`FRAME_INTERVAL`]; a
//! key is drawn at once (with everything else that changed), so typing while a reply
//! streams never waits for the next paced frame.
//!
//! The screen opens before the host has started (its servers start in parallel meanwhile):
//! the first frame never waits for a server, what is typed meanwhile is kept, and operations
//! wait in the [`App`] until the host is there.
//!
//! Timing, for `rho-bench` and for anyone curious, goes to the log at debug level under the
//! target `rho_tui::timing`: `first_frame_ms` (from `Options::started_at`), and for each frame
//! `draw_us` (wall time), `draw_cpu_us` (the drawing thread's CPU time) and, after input,
//! `input_to_frame_us` (from the moment the terminal event was
//! read to the end of the frame's write); `conversation_frame_ms` (from `started_at`) for the
//! first frame that shows a resumed conversation.

use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::Event;
use rho_component::CancelSignal;
use rho_core::host::{HostEvent, HostHandle, SessionHost};
use tokio::sync::mpsc;

use crate::app::App;
use crate::images::{Graphics, TermEnv};
use crate::terminal::{self, RestoreOnDrop, Tty};
use crate::theme::Theme;

/// The shortest time between two frames (60 per second).
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// Events applied before a frame is drawn when they keep coming.
const BATCH: usize = 256;
/// How long the host may take to close its servers after the user leaves.
const CLOSE_BUDGET: Duration = Duration::from_secs(5);

/// A started session host: what [`SessionHost::start`] returns.
pub type Started = (SessionHost, HostHandle, mpsc::Receiver<HostEvent>);

/// How a session starts on screen.
#[derive(Debug, Clone)]
pub struct Options {
    /// The session was resumed (`--continue`, `--session`): show its conversation.
    pub resumed: bool,
    /// The styles.
    pub theme: Theme,
    /// When the process started (for `first_frame_ms`).
    pub started_at: Instant,
    /// The workspace, whose files the `@` palette offers.
    pub workspace: std::path::PathBuf,
}

/// A yes/no question from the embedding program, asked before the session starts (a project
/// plugin to trust, say); the answer goes back through `answer` (`false` when the user leaves
/// without answering).
#[derive(Debug)]
pub struct Confirm {
    /// What is asked, one line.
    pub title: String,
    /// What the user should know to answer (each line shown as it is, made terminal-safe).
    pub details: Vec<String>,
    /// Where the answer goes.
    pub answer: tokio::sync::oneshot::Sender<bool>,
}

/// What the embedding program sends the screen besides the host's events.
#[derive(Debug)]
pub struct Embedding {
    /// Lines to show as notices (an OAuth login's address, say).
    pub notices: mpsc::UnboundedReceiver<String>,
    /// Questions to ask, one at a time.
    pub confirms: mpsc::UnboundedReceiver<Confirm>,
}

/// A terminal event and when it was read.
type Input = (Instant, Event);

/// Opens the screen, waits for `start` (the host starting its servers) while already drawing
/// and taking keys, then runs the session until the user leaves or `stop` fires (a signal);
/// lets the host close every server and restores the terminal. `embedding` carries notices
/// and questions from the program that runs the screen (its `start` may wait for the
/// answers). A host that fails to start is an error after the terminal is restored.
/// Returns the session file the conversation was saved in (`None` when nothing was saved, or
/// the host did not close in time): what `rho --continue` resumes.
pub async fn run<E: std::fmt::Display>(
    start: impl Future<Output = Result<Started, E>>,
    embedding: Embedding,
    stop: CancelSignal,
    options: Options,
) -> std::io::Result<Option<PathBuf>> {
    let Embedding {
        mut notices,
        mut confirms,
    } = embedding;
    let mut tty = terminal::enter()?;
    let _restore = RestoreOnDrop;
    let mut files = spawn_file_walk(options.workspace.clone());
    let mut screen = Screen::new(&options);
    screen.app.start(options.resumed);
    screen.draw(&mut tty)?;
    tracing::debug!(
        target: "rho_tui::timing",
        first_frame_ms = options.started_at.elapsed().as_secs_f64() * 1000.0
    );
    // Ask the terminal about images after the first frame and before the input thread reads
    // the keyboard (the answers arrive where keys do).
    let typed = if options.theme.color {
        let (graphics, typed) = Graphics::detect(&TermEnv::from_env());
        screen.app.set_graphics(graphics);
        typed
    } else {
        Vec::new()
    };
    let mut keys = spawn_input_thread(typed);
    let (images_done, mut images) = mpsc::unbounded_channel();
    // Load the highlighter's syntaxes now, off the loop, rather than in the middle of the
    // first frame that shows code (a resumed conversation, a reply streaming in).
    if options.theme.color {
        drop(tokio::task::spawn_blocking(crate::markdown::warm_up));
    }

    // The host starts; the screen already answers.
    let start = std::pin::pin!(start);
    let mut start = start;
    let started = loop {
        // Quitting while the host starts (Ctrl+C twice, or Ctrl+C on a question) leaves at
        // once: dropping the start stops what it started.
        if screen.app.should_quit() {
            return Ok(None);
        }
        tokio::select! {
            biased;
            () = stop.cancelled() => return Ok(None),
            started = &mut start => break started,
            input = keys.recv() => match input {
                Some(input) => screen.input(input, &mut keys),
                None => return Ok(None),
            },
            Some(notice) = notices.recv() => screen.notice(notice),
            Some(confirm) = confirms.recv(), if screen.confirm.is_none() => {
                screen.app.ask_confirm(&confirm.title, &confirm.details);
                screen.confirm = Some(confirm.answer);
                screen.dirty = true;
            }
            Some(list) = files.recv() => screen.app.set_workspace_files(list),
            () = screen.frame_due() => screen.draw(&mut tty)?,
        }
        screen.deliver_answer();
    };
    let (host, handle, mut events) = started.map_err(|e| std::io::Error::other(e.to_string()))?;
    let host_task = tokio::spawn(host.run(stop.clone()));
    let mut host_open = true;
    loop {
        for (id, operation) in screen.app.take_operations() {
            if handle.submit(id, operation).await.is_err() {
                host_open = false;
            }
        }
        for job in screen.app.take_image_jobs() {
            let done = images_done.clone();
            drop(tokio::task::spawn_blocking(move || {
                let _ = done.send(job.run());
            }));
        }
        if screen.app.should_quit() || !host_open {
            break;
        }
        tokio::select! {
            biased;
            () = stop.cancelled() => break,
            input = keys.recv() => match input {
                Some(input) => screen.input(input, &mut keys),
                None => break,
            },
            event = events.recv() => match event {
                Some(event) => {
                    screen.app.on_host_event(event);
                    for _ in 0..BATCH {
                        match events.try_recv() {
                            Ok(event) => screen.app.on_host_event(event),
                            Err(_) => break,
                        }
                    }
                    screen.dirty = true;
                }
                None => host_open = false,
            },
            Some(notice) = notices.recv() => screen.notice(notice),
            Some(list) = files.recv() => screen.app.set_workspace_files(list),
            Some((call_id, image)) = images.recv() => {
                screen.app.image_done(&call_id, image);
                screen.dirty = true;
            }
            () = screen.frame_due() => screen.draw(&mut tty)?,
            // The footer's "press again" hints expire.
            () = tokio::time::sleep(Duration::from_millis(500)), if !screen.dirty => {
                screen.dirty = screen.app.hint_expired();
            }
        }
    }
    // Leaving: no new work; what runs is stopped; the host closes its servers.
    drop(handle);
    stop.cancel();
    // Keep reading its events so it is never stuck on a full channel while closing.
    tokio::spawn(async move { while events.recv().await.is_some() {} });
    let saved = tokio::time::timeout(CLOSE_BUDGET, host_task).await;
    Ok(saved.ok().and_then(Result::ok).flatten())
}

/// The app and when to draw it.
struct Screen {
    app: App,
    started_at: Instant,
    dirty: bool,
    last_frame: Instant,
    /// When the oldest input not yet on screen was read.
    input_since: Option<Instant>,
    /// Where the answer to the question on screen goes.
    confirm: Option<tokio::sync::oneshot::Sender<bool>>,
}

impl Screen {
    fn new(options: &Options) -> Self {
        Self {
            app: App::new(options.theme),
            started_at: options.started_at,
            dirty: true,
            last_frame: Instant::now() - FRAME_INTERVAL,
            input_since: None,
            confirm: None,
        }
    }

    /// Sends the answer to the question on screen, once the user gave it.
    fn deliver_answer(&mut self) {
        if let Some(answer) = self.app.take_confirm_answer()
            && let Some(sender) = self.confirm.take()
        {
            let _ = sender.send(answer);
        }
    }

    /// Applies `first` and every input already waiting.
    fn input(&mut self, first: Input, keys: &mut mpsc::Receiver<Input>) {
        self.input_since.get_or_insert(first.0);
        apply_input(&mut self.app, first.1);
        while let Ok((_, event)) = keys.try_recv() {
            apply_input(&mut self.app, event);
        }
        self.dirty = true;
    }

    fn notice(&mut self, text: String) {
        self.app.show_notice(text);
        self.dirty = true;
    }

    /// Ready when a change waits: at once for input, else once the frame interval has
    /// passed; never without a change.
    async fn frame_due(&self) {
        if !self.dirty {
            return std::future::pending().await;
        }
        if self.input_since.is_some() {
            return;
        }
        tokio::time::sleep_until((self.last_frame + FRAME_INTERVAL).into()).await;
    }

    fn draw(&mut self, tty: &mut Tty) -> std::io::Result<()> {
        let began = Instant::now();
        let began_cpu = thread_cpu_time();
        let conversation = self.app.take_conversation_loaded();
        tty.draw(|frame| self.app.render(frame))?;
        let now = Instant::now();
        let draw_cpu_us = thread_cpu_time().saturating_sub(began_cpu).as_micros() as u64;
        if conversation {
            tracing::debug!(
                target: "rho_tui::timing",
                conversation_frame_ms = (now - self.started_at).as_secs_f64() * 1000.0
            );
        }
        match self.input_since.take() {
            Some(since) => tracing::debug!(
                target: "rho_tui::timing",
                draw_us = (now - began).as_micros() as u64,
                draw_cpu_us,
                input_to_frame_us = (now - since).as_micros() as u64
            ),
            None => tracing::debug!(
                target: "rho_tui::timing",
                draw_us = (now - began).as_micros() as u64,
                draw_cpu_us
            ),
        }
        self.last_frame = now;
        self.dirty = false;
        Ok(())
    }
}

/// The CPU time the calling thread has used: a frame's `draw_cpu_us` is what drawing cost rho,
/// without the time the thread waited for a core or for the terminal.
fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        t.tv_sec.unsigned_abs(),
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

fn apply_input(app: &mut App, event: Event) {
    match event {
        Event::Key(key) => app.on_key(key),
        Event::Paste(text) => app.on_paste(&text),
        _ => {}
    }
}

/// The workspace's files, listed on a blocking thread (one message, then the channel closes).
fn spawn_file_walk(workspace: std::path::PathBuf) -> mpsc::Receiver<Vec<String>> {
    let (tx, rx) = mpsc::channel(1);
    tokio::task::spawn_blocking(move || {
        let _ = tx.blocking_send(crate::workspace_files::list(&workspace));
    });
    rx
}

/// Terminal events with the time they were read, from a thread of their own (crossterm's
/// `read` blocks), after `typed` (the keys read while the terminal answered rho's graphics
/// query); the thread ends when the loop stops listening.
fn spawn_input_thread(typed: Vec<Event>) -> mpsc::Receiver<Input> {
    let (tx, rx) = mpsc::channel(1024);
    std::thread::spawn(move || {
        for event in typed {
            if tx.blocking_send((Instant::now(), event)).is_err() {
                return;
            }
        }
        loop {
            match crossterm::event::read() {
                Ok(event) => {
                    if tx.blocking_send((Instant::now(), event)).is_err() {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn screen_after_a_frame() -> Screen {
        let mut screen = Screen::new(&Options {
            resumed: false,
            theme: Theme::plain(),
            started_at: Instant::now(),
            workspace: std::path::PathBuf::from("/nonexistent"),
        });
        screen.last_frame = Instant::now();
        screen.dirty = false;
        screen
    }

    #[tokio::test]
    async fn a_key_is_drawn_without_waiting_for_the_frame_interval() {
        let mut screen = screen_after_a_frame();
        screen.dirty = true;
        screen.input_since = Some(Instant::now());
        let due = tokio::time::timeout(FRAME_INTERVAL / 4, screen.frame_due()).await;
        assert!(
            due.is_ok(),
            "a frame showing a key waited for the frame interval"
        );
    }

    #[tokio::test]
    async fn host_events_are_paced_and_nothing_is_drawn_without_a_change() {
        let mut screen = screen_after_a_frame();
        assert!(
            tokio::time::timeout(FRAME_INTERVAL * 2, screen.frame_due())
                .await
                .is_err()
        );
        screen.dirty = true;
        screen.last_frame = Instant::now();
        let began = Instant::now();
        screen.frame_due().await;
        assert!(began.elapsed() >= FRAME_INTERVAL / 2);
    }
}
