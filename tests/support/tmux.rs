//! A real terminal for end-to-end tests of the interactive `rho`: one detached `tmux` session on
//! a private socket with no user configuration, keys sent with `send-keys`, the screen read
//! with `capture-pane`, waits that poll the screen with a deadline (never a fixed sleep). The
//! pane stays after the program exits, so its exit status and last screen can be read. The
//! server is killed when dropped.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How long a wait polls the screen by default.
pub const WAIT: Duration = Duration::from_secs(20);

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A program running in a detached tmux session.
pub struct Tmux {
    socket: String,
    /// Where the shell writes the program's exit status when it ends.
    status: tempfile::NamedTempFile,
}

/// Panics with how to install tmux when it is missing.
pub fn require_tmux() {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "tmux is not installed: bash .ci/run installs it (apt-get install -y tmux)"
    );
}

impl Tmux {
    /// Runs `program args` in a `width`×`height` pane, in `dir`, with exactly `env` (plus
    /// `TERM=xterm-256color`) as its environment.
    pub fn start(
        program: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        dir: &Path,
        width: u16,
        height: u16,
    ) -> Tmux {
        require_tmux();
        let socket = format!(
            "rho-e2e-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let tmux = Tmux {
            socket,
            status: tempfile::NamedTempFile::new().unwrap(),
        };
        let mut command = vec!["env".to_owned(), "-i".to_owned()];
        command.push("TERM=xterm-256color".to_owned());
        command.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
        command.push(program.display().to_string());
        command.extend(args.iter().map(|a| (*a).to_owned()));
        let line = command
            .iter()
            .map(|part| shell_quote(part))
            .collect::<Vec<_>>()
            .join(" ");
        // tmux does not always record a dead pane's status (the pane may be marked dead before
        // the process is reaped), so the shell writes it down.
        let line = format!(
            "{line}; echo $? > {}",
            shell_quote(&tmux.status.path().display().to_string())
        );
        let (w, h) = (width.to_string(), height.to_string());
        let dir = dir.display().to_string();
        // remain-on-exit is set in the same invocation, so a quick exit still leaves the pane.
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            &w,
            "-y",
            &h,
            "-c",
            &dir,
            &line,
            ";",
            "set-option",
            "-t",
            "t",
            "remain-on-exit",
            "on",
        ]);
        tmux
    }

    fn run(&self, args: &[&str]) -> Output {
        let output = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run tmux: {e}"));
        assert!(
            output.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// Types `text` literally.
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "t", "-l", text]);
    }

    /// Sends named keys (`Enter`, `Escape`, `C-c`, `PageUp`, ...), one at a time.
    pub fn keys(&self, keys: &[&str]) {
        for key in keys {
            self.run(&["send-keys", "-t", "t", key]);
        }
    }

    /// Pastes `text` as a terminal paste (bracketed when the program asked for it).
    pub fn paste(&self, text: &str) {
        self.run(&["set-buffer", "-b", "e2e", text]);
        self.run(&["paste-buffer", "-p", "-r", "-b", "e2e", "-t", "t"]);
    }

    /// The screen as plain text, one line per row.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    /// The screen and the scrollback above it, wrapped lines joined. What a program printed just before it exited
    /// is there: when the pane dies, tmux moves its screen into the scrollback.
    pub fn screen_and_history(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", "t"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A tmux format of the pane (`#{pane_dead}`, `#{alternate_on}`, ...).
    pub fn format(&self, format: &str) -> String {
        let out = self.run(&["display-message", "-p", "-t", "t", format]);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Waits until the screen shows `needle`; returns the screen. Panics with the screen.
    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_until(needle, |screen| screen.contains(needle))
    }

    /// Waits until `ready(screen)`; `what` names the wait in the panic message.
    pub fn wait_until(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "waited {} s for {what:?}; the screen:\n{screen}",
                WAIT.as_secs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the program to exit; returns its exit status (128 + the signal's number
    /// when a signal ended it, as the shell reports it).
    pub fn wait_exit(&self) -> i32 {
        let deadline = Instant::now() + WAIT;
        loop {
            let written = std::fs::read_to_string(self.status.path()).unwrap_or_default();
            if let Ok(code) = written.trim().parse() {
                return code;
            }
            assert!(
                Instant::now() < deadline,
                "the program did not exit; the screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Resizes the window.
    pub fn resize(&self, width: u16, height: u16) {
        self.run(&[
            "resize-window",
            "-t",
            "t",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null", "kill-server"])
            .output();
    }
}

/// `text` quoted for the shell tmux runs the command with.
fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}
