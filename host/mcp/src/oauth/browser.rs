//! Putting the authorization page in front of a person: the system browser (`$BROWSER` when
//! set, as `xdg-open` and Python's `webbrowser` honour it, else the platform opener), run
//! directly with the URL as its one argument and never through a shell; or, for machines
//! without one, the URL printed and the redirected URL pasted back.

use std::future::Future;
use std::io::{BufRead, Read, Write};
use std::pin::Pin;
use std::process::{Command, Stdio};

use rho_component::terminal_safe;

/// What [`Browser::open`] gives back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handover {
    /// The page was opened; the browser comes back to rho's loopback listener by itself.
    Opened,
    /// The person pasted the URL the browser was sent back to (a browser elsewhere).
    Pasted(String),
}

/// Why [`Browser::open`] could not hand the authorization page over; names the browser
/// command or the pasted address.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// The browser command could not be started.
    #[error(
        "cannot run the browser {command:?}: {reason} (set BROWSER, or log in with --no-browser)"
    )]
    Launch {
        /// The command (`$BROWSER`, else the platform opener).
        command: String,
        /// The operating system's reason.
        reason: std::io::Error,
    },
    /// The pasted address could not be read from stdin.
    #[error("cannot read the pasted address: {reason}")]
    PasteUnreadable {
        /// Why the read failed.
        reason: String,
    },
    /// The pasted line is longer than [`PASTE_MAX_BYTES`].
    #[error("the pasted address is longer than {max} bytes")]
    PasteTooLong {
        /// The limit ([`PASTE_MAX_BYTES`]).
        max: usize,
    },
    /// The pasted line is not UTF-8.
    #[error("the pasted address is not UTF-8")]
    PasteNotUtf8,
    /// An empty line was pasted.
    #[error("nothing was pasted")]
    NothingPasted,
    /// A reason from a [`Browser`] implemented outside this crate, said in its own words.
    #[error("{0}")]
    Other(String),
}

/// The future of [`Browser::open`].
pub type BrowserFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Handover, BrowserError>> + Send + 'a>>;

/// Shows a person an authorization URL. Implementations decide how; rho checks the URL first
/// (`https`, or `http` to loopback).
pub trait Browser: Send + Sync {
    /// Opens `url`: returns once it is handed over (or, for a pasting browser, once the person
    /// pasted where the browser went).
    fn open<'a>(&'a self, url: &'a str) -> BrowserFuture<'a>;
}

/// The system browser: `$BROWSER <url>` where `BROWSER` is set and not empty, else `xdg-open`
/// (`open` on macOS). Started detached, with no stdin and its output discarded, so it can
/// never draw on rho's terminal or wait on its input. The URL is also printed on stderr, for
/// when no browser window appears.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemBrowser;

impl SystemBrowser {
    fn command() -> String {
        match std::env::var("BROWSER") {
            Ok(command) if !command.trim().is_empty() => command,
            _ if cfg!(target_os = "macos") => "open".into(),
            _ => "xdg-open".into(),
        }
    }

    /// Starts the browser on `url` without printing anything (for front-ends that show the
    /// URL their own way).
    pub fn launch(url: &str) -> Result<(), BrowserError> {
        let command = Self::command();
        let spawned = Command::new(&command)
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let mut child = spawned.map_err(|reason| BrowserError::Launch { command, reason })?;
        // Reap it in the background: openers usually exit at once, browsers may not.
        std::thread::spawn(move || child.wait());
        Ok(())
    }
}

/// What a person is told when the authorization page opens (the URL made terminal-safe).
pub fn opening_message(url: &str) -> String {
    format!(
        "Opening the authorization page in your browser. If none opens, visit this address in \
         a browser on this machine:\n\n  {}\n",
        terminal_safe(url)
    )
}

impl Browser for SystemBrowser {
    fn open<'a>(&'a self, url: &'a str) -> BrowserFuture<'a> {
        Box::pin(async move {
            let _ = writeln!(std::io::stderr(), "{}", opening_message(url));
            Self::launch(url)?;
            Ok(Handover::Opened)
        })
    }
}

/// For a machine without a browser (an SSH session): prints the URL on stderr and reads the
/// URL the browser ended on, pasted on stdin (one line, at most [`PASTE_MAX_BYTES`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct PasteBrowser;

/// The longest line [`PasteBrowser`] reads.
pub const PASTE_MAX_BYTES: usize = 16 * 1024;

impl Browser for PasteBrowser {
    fn open<'a>(&'a self, url: &'a str) -> BrowserFuture<'a> {
        Box::pin(async move {
            let _ = writeln!(
                std::io::stderr(),
                "Open this URL in a browser and log in:\n\n  {}\n\nThe browser then goes to a \
                 page on 127.0.0.1 that may not load. Copy that page's whole address from the \
                 address bar and paste it here:",
                terminal_safe(url)
            );
            // A blocking read on its own thread: the login's time limit ends the wait (and a
            // line nobody pastes keeps only that thread, until rho exits).
            let line = tokio::task::spawn_blocking(|| {
                let mut line = Vec::new();
                std::io::stdin()
                    .lock()
                    .take(PASTE_MAX_BYTES as u64 + 1)
                    .read_until(b'\n', &mut line)
                    .map(|_| line)
            })
            .await
            .map_err(|e| unreadable(&e))?
            .map_err(|e| unreadable(&e))?;
            if line.len() > PASTE_MAX_BYTES {
                return Err(BrowserError::PasteTooLong {
                    max: PASTE_MAX_BYTES,
                });
            }
            let pasted = String::from_utf8(line).map_err(|_| BrowserError::PasteNotUtf8)?;
            let pasted = pasted.trim();
            if pasted.is_empty() {
                return Err(BrowserError::NothingPasted);
            }
            Ok(Handover::Pasted(pasted.to_owned()))
        })
    }
}

fn unreadable(reason: &dyn std::fmt::Display) -> BrowserError {
    BrowserError::PasteUnreadable {
        reason: reason.to_string(),
    }
}
