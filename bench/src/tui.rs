//! What the interactive-session benchmarks (`tui-first-frame`, `tui-keys`, `tui-resume`)
//! share: plain `rho` run on a pseudo-terminal through util-linux `script`, the bench playing
//! the terminal (it reads everything rho draws, answers the terminal queries a real terminal
//! answers, and types keys), rho's own frame timing read back from its log file, and the
//! `/proc` figures of the rho process (CPU time, peak RSS).
//!
//! `script -qfec "stty cols 120 rows 40; exec rho ..." /dev/null` gives rho a 120×40 pty:
//! `script` copies the pty's output to its stdout (drained here on a thread) and its stdin to
//! the pty. rho's timing lines go to `$RHO_HOME/logs/rho.log` with
//! `RHO_LOG=rho_tui::timing=debug` (`host/tui/src/event_loop.rs` says what each field means).
//!
//! This file holds the terminal's settings and the environment of a pty'd run; the pty itself
//! is in `tui/pty.rs`, the timing log in `tui/timing_log.rs`, the `/proc` figures in
//! `tui/proc_figures.rs`.

mod proc_figures;
mod pty;
mod timing_log;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use proc_figures::{TICKS_PER_SECOND, cpu_ticks, threads_cpu, threads_delta, vm_hwm_kib};
pub use pty::{Pty, PtyCommand, check_size};
pub use timing_log::{Frame, Log, draw_us_of, frames};

use crate::Error;

/// util-linux `script`, which runs a command on a new pty.
pub const SCRIPT: &str = "/usr/bin/script";
/// The terminal size rho is given (and must see).
pub const COLS: u16 = 120;
/// Rows of the terminal.
pub const ROWS: u16 = 40;
/// `TERM` for rho.
pub const TERM: &str = "xterm-256color";
/// `RHO_LOG` for rho: its frame timing, nothing else.
pub const RHO_LOG: &str = "rho_tui::timing=debug";
/// How long rho may take to leave after the quit keys before it is killed.
pub const QUIT_TIMEOUT: Duration = Duration::from_secs(10);

/// Ctrl-C (a key in raw mode: clears the message box, or arms quitting).
pub const CTRL_C: &[u8] = b"\x03";
/// Ctrl-C twice, which quits with an empty message box and nothing running (and, in builds
/// that ask about untrusted project plugins on screen, also while such a question waits,
/// where Ctrl-D is ignored).
pub const QUIT: [&[u8]; 2] = [CTRL_C, CTRL_C];
/// PageUp as xterm sends it.
pub const PAGE_UP: &[u8] = b"\x1b[5~";

/// The `pty:` line of a result table: how rho was run on the pty (`rho_args` after `rho`),
/// then `note`.
pub fn print_pty(script: &Path, rho_args: &str, note: &str) {
    println!(
        "pty:      {} -qfec \"stty cols {COLS} rows {ROWS}; exec rho {rho_args}\" /dev/null, \
         TERM={TERM}{note}",
        script.display(),
    );
}

/// `/usr/bin/script`, checked to exist.
pub fn script_binary() -> Result<PathBuf, Error> {
    let script = PathBuf::from(SCRIPT);
    if script.is_file() {
        Ok(script)
    } else {
        Err(Error::Failed(format!(
            "{SCRIPT} not found: the TUI benchmarks run rho on a pty through util-linux \
             `script` (Debian: apt-get install bsdutils)"
        )))
    }
}

/// `text` quoted for `/bin/sh` (single quotes; a single quote as `'\''`).
pub fn sh_quote(text: &OsStr) -> String {
    format!("'{}'", text.to_string_lossy().replace('\'', r"'\''"))
}

/// The environment of every pty'd run: `HOME`, `RHO_HOME`, `TERM`, `RHO_LOG` and the bench's
/// own `PATH` (for `script`, `sh` and `stty`), nothing else.
pub fn pty_env(home: &Path, rho_home: &Path) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = vec![
        ("HOME".into(), home.as_os_str().to_owned()),
        ("RHO_HOME".into(), rho_home.as_os_str().to_owned()),
        ("TERM".into(), TERM.into()),
        ("RHO_LOG".into(), RHO_LOG.into()),
    ];
    if let Some(path) = std::env::var_os("PATH") {
        env.push(("PATH".into(), path));
    }
    env
}
