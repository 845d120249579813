//! `--connect` progress on a terminal's stderr, one whole line at a time, as the probe reports
//! each server.

use super::*;

/// Whether `--connect` shows progress: only for a person watching (stderr is a terminal) and
/// never with `--json`, so scripts and logs see nothing new.
pub(super) fn live_progress(ctx: &Context) -> bool {
    !ctx.json && std::io::stderr().is_terminal()
}

/// `--connect` progress on a terminal's stderr, one whole line at a time (logs and server
/// messages that `tracing` writes to the same stream interleave cleanly, and no terminal
/// control sequence is needed): a header, one line per server as it finishes, and while any is
/// pending and nothing else was printed for a while, a line naming them:
///
/// ```text
/// connecting 3 MCP servers…
///   github ✓ 12 tools (0.4 s)
///   files ✓ 3 tools (0.9 s)
///   waiting for web (3 s, startup budget 120 s)
///   web ✗ no answer within the 120.0 s startup budget (120.0 s)
/// ```
///
/// Every server-supplied string (ids, errors) goes through `clean`, and lines are cut to the
/// terminal width.
pub(super) struct ConnectProgress {
    started: Instant,
    /// When the last line was printed, and how long to stay silent after it.
    last_line: Instant,
    quiet_for: Duration,
    /// Every server not finished yet, in listing order.
    pending: Vec<Pending>,
    width: usize,
}

/// A server `ConnectProgress` still waits for.
struct Pending {
    /// The id as configured (error messages start with it) and as shown.
    id: String,
    shown: String,
    budget: Duration,
}

/// Silence before the first "waiting for" line; it doubles after each, up to [`MAX_QUIET`].
const FIRST_QUIET: Duration = Duration::from_secs(3);

/// The longest silence while a server is pending.
const MAX_QUIET: Duration = Duration::from_secs(15);

impl ConnectProgress {
    pub(super) fn start(servers: &[&McpServerSpec]) -> Self {
        let pending: Vec<Pending> = servers
            .iter()
            .map(|spec| Pending {
                id: spec.id.clone(),
                shown: clean(&spec.id),
                budget: spec.startup_timeout,
            })
            .collect();
        let total = pending.len();
        let plural = if total == 1 { "" } else { "s" };
        error_text(&format!("connecting {total} MCP server{plural}…\n"));
        let now = Instant::now();
        Self {
            started: now,
            last_line: now,
            quiet_for: FIRST_QUIET,
            pending,
            width: terminal_width(),
        }
    }

    /// Prints the line of a server that finished.
    pub(super) fn finished(&mut self, report: &StartReport) {
        let Some(at) = self.pending.iter().position(|p| p.id == report.server) else {
            return;
        };
        let server = self.pending.remove(at);
        let seconds = format!("({:.1} s)", report.elapsed.as_secs_f64());
        let head = match &report.outcome {
            Ok(count) => {
                let count = *count;
                let plural = if count == 1 { "" } else { "s" };
                format!("  {} ✓ {count} tool{plural}", server.shown)
            }
            Err(error) => {
                // The id leads the line already; the table or JSON keeps the whole message.
                let error = error.to_string();
                let prefix = format!("server {}: ", server.id);
                let reason = error.strip_prefix(&prefix).unwrap_or(&error);
                let reason = clean(reason.lines().next().unwrap_or_default());
                format!("  {} ✗ {reason}", server.shown)
            }
        };
        self.line(&head, &seconds);
    }

    /// Names the pending servers when nothing was printed for a while (a hung server still
    /// shows that rho is waiting, on what, and for how long at most).
    pub(super) fn tick(&mut self) {
        if self.pending.is_empty() || self.last_line.elapsed() < self.quiet_for {
            return;
        }
        let names: Vec<&str> = self.pending.iter().map(|p| p.shown.as_str()).collect();
        let budget = self
            .pending
            .iter()
            .map(|p| p.budget)
            .max()
            .unwrap_or_default();
        let head = format!("  waiting for {}", names.join(", "));
        let tail = format!(
            "({} s, startup budget {} s)",
            self.started.elapsed().as_secs(),
            budget.as_secs_f64().ceil()
        );
        self.line(&head, &tail);
        self.quiet_for = (self.quiet_for * 2).min(MAX_QUIET);
    }

    /// Prints `head tail`, cutting `head` so the line fits the terminal.
    fn line(&mut self, head: &str, tail: &str) {
        let room = self.width.saturating_sub(tail.chars().count() + 1).max(20);
        error_text(&format!("{} {tail}\n", truncate(head, room)));
        self.last_line = Instant::now();
    }
}

/// The terminal's width from `COLUMNS` when the shell exports it, else the classic 80.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c >= 20)
        .unwrap_or(80)
}
