//! `rho-bench rpc-ready`: the time from spawning `rho rpc` (no MCP servers, empty home and
//! project, an endpoint nothing listens on) to reading its `ready` notification, against the
//! hidden `ready-line` mode of this binary, which prints the same line and waits for EOF the same
//! way. A third series starts each run from a `$RHO_HOME` that does not exist yet (a newcomer's
//! first run), against runs on the home the earlier runs left behind. Both clocks start just before `spawn` and stop when the first line has been read; closing
//! stdin and reaping the process happen after the clock stops.
//!
//! [`LineChild`], a child spoken to line by line over pipes, is shared with `rpc-turn`,
//! `question-round-trip` and `complete-cached`.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::measure::{Probe, command_line, rho_args};
use crate::scratch::Scratch;
use crate::stats::{Summary, verdict};
use crate::{Error, Resolved, context, machine};

/// The issue's goal for the `ready` notification after start.
const GOAL_MS: f64 = 30.0;

/// The notification `rho rpc` prints once it serves requests (and the baseline prints at once).
pub fn ready_notification() -> Value {
    json!({"jsonrpc": "2.0", "method": "ready"})
}

/// [`ready_notification`] as the line rho prints, for the `ready-line` baseline: a constant, so
/// that the baseline does no more than print it (building it with serde_json cost that process
/// about 8 more page faults and 0.02 ms); the tests check it is the same notification.
const READY_LINE: &str = r#"{"jsonrpc":"2.0","method":"ready"}"#;

/// Whether `line` is [`ready_notification`] (and nothing else).
pub fn is_ready(line: &str) -> bool {
    serde_json::from_str::<Value>(line).is_ok_and(|message| message == ready_notification())
}

/// A model endpoint nothing listens on (port 1): sessions that must never call the model use it,
/// which also proves they do not.
pub const UNREACHABLE_ENDPOINT: &str = "http://127.0.0.1:1/v1";

/// Where a bench runs its `rho rpc` sessions: the binary, a scratch `HOME` (its `.rho` the
/// sessions' `RHO_HOME`), the project, and the scratch folder their stderr goes to.
pub struct RpcPlace<'a> {
    /// The rho binary.
    pub rho: &'a Path,
    /// `HOME`.
    pub home: PathBuf,
    /// The project (`--cwd`).
    pub project: PathBuf,
    /// Where `rho-<name>.stderr` is written.
    pub scratch: &'a Scratch,
}

impl<'a> RpcPlace<'a> {
    /// `home/` and `project/` made in `scratch`.
    pub fn new(rho: &'a Path, scratch: &'a Scratch) -> Result<Self, String> {
        Ok(Self {
            rho,
            home: scratch.dir("home")?,
            project: scratch.dir("project")?,
            scratch,
        })
    }

    /// The `rho rpc` session `name` with `config` against the model at `endpoint` (not started;
    /// its command line is said on stderr).
    pub fn command(
        &self,
        name: &str,
        config: &Path,
        endpoint: &str,
    ) -> Result<LineCommand, String> {
        let rho_home = self.home.join(".rho");
        let command = LineCommand::new(Probe::new(
            &format!("rho rpc ({name})"),
            self.rho,
            &rpc_args(&self.project, Some(config), &[], endpoint),
            &[("HOME", &self.home), ("RHO_HOME", rho_home.as_path())],
            &self.project,
            self.scratch.path().join(format!("rho-{name}.stderr")),
        ))?;
        eprintln!("rho-bench: {name}: `{}`", command.command_line());
        Ok(command)
    }
}

/// The arguments of an ephemeral `rho rpc` session on `project` (the one spelling every bench
/// uses): `--config` when given, extra `rpc` flags, the model endpoint and model `m`.
pub fn rpc_args<'a>(
    project: &'a Path,
    config: Option<&'a Path>,
    flags: &'a [&'a str],
    endpoint: &'a str,
) -> Vec<&'a OsStr> {
    let mut args = rho_args(project, &[]);
    if let Some(config) = config {
        args.extend([OsStr::new("--config"), config.as_os_str()]);
    }
    args.push(OsStr::new("rpc"));
    args.extend(flags.iter().map(OsStr::new));
    args.extend(
        ["--ephemeral", "--endpoint", endpoint, "--model", "m"]
            .into_iter()
            .map(OsStr::new),
    );
    args
}

/// How much of a failing child's stderr is quoted in the error.
const STDERR_QUOTE_BYTES: usize = 4096;

/// The hidden `ready-line` mode: print [`ready_notification`], then wait for EOF on stdin and
/// exit 0.
pub fn ready_line() -> Result<(), Error> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{READY_LINE}")
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("cannot write the ready line: {e}"))?;
    std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink())
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    Ok(())
}

/// A command to start as a [`LineChild`], prepared outside the timed window.
pub struct LineCommand {
    label: String,
    command: Command,
    stderr_path: PathBuf,
}

impl LineCommand {
    /// `probe`'s command with stdin and stdout piped (stderr to its file, quoted when the
    /// child fails).
    pub fn new(probe: Probe) -> Result<Self, String> {
        let mut command = probe.command()?;
        command.stdin(Stdio::piped());
        Ok(Self {
            label: probe.label,
            command,
            stderr_path: probe.stderr_path,
        })
    }

    /// The command as a user would type it, for messages.
    pub fn command_line(&self) -> String {
        command_line(std::iter::once(self.command.get_program()).chain(self.command.get_args()))
    }

    /// Starts the child and reads its first line, which must be [`ready_notification`]: an
    /// `rho rpc` session that serves requests.
    pub fn spawn_ready(&mut self) -> Result<LineChild, String> {
        let mut child = self.spawn()?;
        let mut line = String::new();
        child.read_line(&mut line)?;
        if !is_ready(&line) {
            return Err(format!(
                "{}: the first line is {line:?}, expected {}",
                self.label,
                ready_notification()
            ));
        }
        Ok(child)
    }

    /// Starts the child. The command can be started again (its stderr file is reused).
    pub fn spawn(&mut self) -> Result<LineChild, String> {
        let mut child = self.command.spawn().map_err(|e| {
            format!(
                "{}: cannot start {}: {e}",
                self.label,
                self.command.get_program().to_string_lossy()
            )
        })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{}: the child has no pipes", self.label));
        };
        Ok(LineChild {
            label: self.label.clone(),
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
            stderr_path: self.stderr_path.clone(),
            finished: false,
        })
    }
}

/// A running child spoken to line by line; killed and reaped if dropped before [`finish`].
///
/// [`finish`]: LineChild::finish
pub struct LineChild {
    label: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr_path: PathBuf,
    finished: bool,
}

impl LineChild {
    /// Reads the next stdout line into `line` (cleared first, newline removed). EOF is an error
    /// that quotes the child's stderr.
    pub fn read_line(&mut self, line: &mut String) -> Result<(), String> {
        line.clear();
        match self.stdout.read_line(line) {
            Ok(0) => Err(format!(
                "{}: stdout closed early; stderr:\n{}",
                self.label,
                stderr_quote(&self.stderr_path)
            )),
            Ok(_) => {
                if line.ends_with('\n') {
                    line.pop();
                }
                Ok(())
            }
            Err(e) => Err(format!("{}: cannot read its stdout: {e}", self.label)),
        }
    }

    /// Writes `line` and a newline to stdin, flushed.
    pub fn write_line(&mut self, line: &str) -> Result<(), String> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| format!("{}: stdin is already closed", self.label))?;
        // One write: the child sees the whole line at once.
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        stdin
            .write_all(&bytes)
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("{}: cannot write to its stdin: {e}", self.label))
    }

    /// Closes stdin, reads stdout to EOF (returned) and waits; fails unless the child exits 0.
    pub fn finish(mut self) -> Result<String, String> {
        self.finished = true;
        drop(self.stdin.take());
        let mut rest = String::new();
        let drained = self.stdout.read_to_string(&mut rest);
        let status = self
            .child
            .wait()
            .map_err(|e| format!("{}: cannot wait for it: {e}", self.label))?;
        drained.map_err(|e| format!("{}: cannot read its stdout: {e}", self.label))?;
        if !status.success() {
            return Err(format!(
                "{}: exited with {status} after stdin closed; stderr:\n{}",
                self.label,
                stderr_quote(&self.stderr_path)
            ));
        }
        Ok(rest)
    }
}

impl Drop for LineChild {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The end of a child's stderr file (runs of one command append to it), for error messages.
pub fn stderr_quote(path: &Path) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let cut = text.len().saturating_sub(STDERR_QUOTE_BYTES);
    match String::from_utf8_lossy(&text[cut..]).trim() {
        "" => "(empty)".into(),
        quoted => quoted.to_owned(),
    }
}

/// Spawns `command`, reads its first line and stops the clock; then checks the line, closes
/// stdin and reaps the child, outside the timed window.
fn time_ready(command: &mut LineCommand, line: &mut String) -> Result<Duration, String> {
    let start = Instant::now();
    let mut child = command.spawn()?;
    child.read_line(line)?;
    let elapsed = start.elapsed();
    if !is_ready(line) {
        return Err(format!(
            "{}: the first stdout line is {line:?}, expected {}",
            command.label,
            ready_notification()
        ));
    }
    let rest = child.finish()?;
    if !rest.trim().is_empty() {
        return Err(format!(
            "{}: printed more after the ready line: {rest:?}",
            command.label
        ));
    }
    Ok(elapsed)
}

/// Times both commands and prints the comparison.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let load_at_start = machine::load();
    let scratch = Scratch::new("rpc-ready")?;
    let home = scratch.dir("home")?;
    let project = scratch.dir("project")?;
    let rho_home = home.join(".rho");
    let env = [("HOME", home.as_path()), ("RHO_HOME", rho_home.as_path())];
    // Nothing listens on port 1: startup makes no network call, so this proves it never waits
    // on the model.
    let mut rho = LineCommand::new(Probe::new(
        "rho rpc",
        &resolved.rho,
        &rpc_args(&project, None, &[], UNREACHABLE_ENDPOINT),
        &env,
        &project,
        scratch.path().join("rho.stderr"),
    ))?;
    let mut baseline = LineCommand::new(Probe::new(
        "baseline",
        &resolved.bench,
        &[OsStr::new("ready-line")],
        &env,
        &project,
        scratch.path().join("baseline.stderr"),
    ))?;
    eprintln!("rho-bench: timing `{}`", rho.command_line());

    let mut line = String::new();
    let mut rho_runs: Vec<Duration> = Vec::with_capacity(o.runs);
    let mut base_runs: Vec<Duration> = Vec::with_capacity(o.runs);
    let mut fresh_runs: Vec<Duration> = Vec::with_capacity(o.runs);
    for i in 0..o.warmup + o.runs {
        // The first run on a new machine: nothing under $RHO_HOME (no compile cache, no state).
        // Removed before the clock starts; the used home is back by the next iteration's runs.
        std::fs::remove_dir_all(&rho_home)
            .or_else(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            })
            .map_err(|e| format!("cannot remove {}: {e}", rho_home.display()))?;
        let f = time_ready(&mut rho, &mut line)?;
        // Alternating which goes first keeps a slow drift in the machine from favouring either.
        let (r, b) = if i % 2 == 0 {
            let r = time_ready(&mut rho, &mut line)?;
            (r, time_ready(&mut baseline, &mut line)?)
        } else {
            let b = time_ready(&mut baseline, &mut line)?;
            (time_ready(&mut rho, &mut line)?, b)
        };
        if i >= o.warmup {
            rho_runs.push(r);
            base_runs.push(b);
            fresh_runs.push(f);
        }
    }
    let (Some(rho_ms), Some(base_ms), Some(fresh_ms)) = (
        Summary::of(&rho_runs),
        Summary::of(&base_runs),
        Summary::of(&fresh_runs),
    ) else {
        return Err(Error::Failed("no timed runs".into()));
    };

    println!("rho rpc: spawn to the `ready` line (no MCP servers, empty home and project)");
    context::print(&load_at_start, &resolved.rho);
    println!(
        "command:  rho --cwd <tmp>/project rpc --ephemeral --endpoint http://127.0.0.1:1/v1 --model m"
    );
    println!(
        "baseline: rho-bench ready-line (spawn and exec of a Rust binary that prints the same line)"
    );
    println!(
        "runs:     {} timed after {} warm-up; each iteration runs rho on a removed $RHO_HOME, \
         then rho and the baseline (alternating order) on the home it left; stdin closed and the \
         process reaped after the clock stops",
        o.runs, o.warmup
    );
    println!();
    println!(
        "{:<22} {:>9} {:>7} {:>7}",
        "command", "median ms", "min", "p90"
    );
    for (name, s) in [
        ("rho rpc → ready", rho_ms),
        ("  (fresh $RHO_HOME)", fresh_ms),
        ("rho-bench ready-line", base_ms),
    ] {
        println!("{name:<22} {:>9.2} {:>7.2} {:>7.2}", s.median, s.min, s.p90);
    }
    println!();
    println!(
        "rho/baseline: {:.2}x ({:+.2} ms over a process that only prints the line)",
        rho_ms.median / base_ms.median,
        rho_ms.median - base_ms.median
    );
    println!(
        "fresh/used home: {:.2}x ({:+.2} ms for a first run; the goal is a first run as fast as the next)",
        fresh_ms.median / rho_ms.median,
        fresh_ms.median - rho_ms.median
    );
    let verdict = verdict(rho_ms.median <= GOAL_MS);
    println!(
        "goal: ready ≤ {GOAL_MS:.0} ms after start (median): {verdict} ({:.2} ms; p90 {:.2} ms)",
        rho_ms.median, rho_ms.p90
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ready_line_is_rhos() {
        // What `rho rpc` prints, byte for byte: the baseline prints the same.
        let rho = r#"{"jsonrpc":"2.0","method":"ready"}"#;
        assert_eq!(ready_notification().to_string(), rho);
        assert_eq!(READY_LINE, rho);
        assert!(is_ready(rho));
        assert!(is_ready(r#"{"method": "ready", "jsonrpc": "2.0"}"#));
        assert!(!is_ready(
            r#"{"jsonrpc":"2.0","method":"ready","params":{}}"#
        ));
        assert!(!is_ready(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        assert!(!is_ready("ready"));
    }
}
