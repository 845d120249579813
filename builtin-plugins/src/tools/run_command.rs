//! `run_command`: a command in its own process group, bounded in time and output.
//!
//! The whole group is killed when the command exits, times out, is cancelled or is dropped.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::pin::pin;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use rho_component::{RiskLevel, ToolContext, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::process::Command;

use super::BuiltinTool;
use super::args::invalid;
use super::capture::{Capture, drain};
use super::paths::Sandbox;

const NAME: &str = "run_command";
/// The timeout when the call gives none.
const DEFAULT_TIMEOUT_SECONDS: u64 = 120;
/// The longest timeout a call may ask for.
const MAX_TIMEOUT_SECONDS: u64 = 600;
/// How long a killed leader gets to be reaped before the call returns anyway (the tokio
/// orphan reaper finishes the job).
const REAP_GRACE: Duration = Duration::from_secs(5);
/// How long output still buffered in the pipes is read once the group is gone. A process that
/// left the group but holds a pipe open cannot stall the call longer than this.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

const DESCRIPTION: &str = "Run a command in the workspace and return its exit code, stdout and \
stderr. Give exactly one of `command` (a shell command line, run with `/bin/sh -c`, so pipes, \
redirections and `&&` work) or `argv` (a program and its arguments, run directly without a \
shell). Runs in `cwd` (default the workspace root) with rho's environment and no stdin. The \
command is killed after `timeout_seconds` (default 120, at most 600). Background processes it \
starts are killed when it exits, so do not use it to start long-running servers. Each output \
stream keeps its first and last 32 KiB; the middle of longer output is left out and counted.";

/// The arguments (their schema is the tool's input schema).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A shell command line, run with `/bin/sh -c`. Give this or `argv`, not both.
    command: Option<String>,
    /// A program and its arguments, run directly without a shell. Give this or `command`, not both.
    #[schemars(length(min = 1))]
    argv: Option<Vec<String>>,
    /// Kill the command after this many seconds (default 120, at most 600).
    #[schemars(range(min = 1, max = MAX_TIMEOUT_SECONDS))]
    timeout_seconds: Option<u64>,
    /// The directory to run in, relative to the workspace root or absolute inside it (default: the workspace root).
    cwd: Option<String>,
}

/// Runs a shell command line or an argument vector, bounded in time and output.
#[derive(Debug, Clone, Copy)]
pub struct RunCommand;

impl BuiltinTool for RunCommand {
    type Args = Args;
    const NAME: &'static str = NAME;
    const TITLE: &'static str = "Run command";
    const DESCRIPTION: &'static str = DESCRIPTION;
    const RISK: RiskLevel = RiskLevel::Destructive;

    async fn run(&self, args: Args, context: &ToolContext) -> ToolOutput {
        let plan = match plan(&args, context) {
            Ok(plan) => plan,
            Err(failed) => return failed,
        };
        run(plan, context).await
    }
}

/// A validated call.
struct Plan {
    program: String,
    arguments: Vec<String>,
    cwd: PathBuf,
    timeout: Duration,
}

fn plan(args: &Args, context: &ToolContext) -> Result<Plan, ToolOutput> {
    let (program, arguments) = match (&args.command, &args.argv) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(ToolOutput::error(format!(
                "invalid arguments for {NAME}: give exactly one of `command` or `argv`"
            )));
        }
        (Some(line), None) if line.trim().is_empty() => {
            return Err(invalid(NAME, "command", "must not be empty"));
        }
        (Some(line), None) => ("/bin/sh".to_owned(), vec!["-c".to_owned(), line.clone()]),
        (None, Some(argv)) => match argv.split_first() {
            Some((program, rest)) if !program.is_empty() => (program.clone(), rest.to_vec()),
            _ => return Err(invalid(NAME, "argv", "needs a program name first")),
        },
    };
    let seconds = args.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS);
    if !(1..=MAX_TIMEOUT_SECONDS).contains(&seconds) {
        return Err(invalid(
            NAME,
            "timeout_seconds",
            format!("must be between 1 and {MAX_TIMEOUT_SECONDS}, got {seconds}"),
        ));
    }
    // A handful of stat calls: cheap enough to do here rather than on the blocking pool.
    let sandbox = Sandbox::new(&context.workspace, &context.extra_roots);
    let cwd = match args.cwd.as_deref() {
        None => sandbox.workspace().to_path_buf(),
        Some(raw) => sandbox.resolve("cwd", raw).map_err(ToolOutput::error)?,
    };
    if !cwd.is_dir() {
        return Err(invalid(
            NAME,
            "cwd",
            format!("`{}` is not a directory", sandbox.display(&cwd)),
        ));
    }
    Ok(Plan {
        program,
        arguments,
        cwd,
        timeout: Duration::from_secs(seconds),
    })
}

/// Why the command stopped before exiting by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interrupted {
    TimedOut,
    Cancelled,
}

async fn run(plan: Plan, context: &ToolContext) -> ToolOutput {
    if context.cancel.is_cancelled() {
        return ToolOutput::error("command was cancelled before it started");
    }
    let mut command = Command::new(&plan.program);
    command
        .args(&plan.arguments)
        .current_dir(&plan.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Secrets rho holds (provider keys, MCP server credentials) are not the command's business.
    for name in &context.hidden_env {
        command.env_remove(name);
    }
    #[cfg(unix)]
    command.process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return ToolOutput::error(format!("cannot run `{}`: {e}", plan.program));
        }
    };
    // Declared after `child`, so it drops first: the group is killed while the leader is still
    // unreaped and its id cannot have been reused.
    let mut group = GroupGuard::new(child.id());
    let mut stdout = Capture::new();
    let mut stderr = Capture::new();

    let (status, interrupted) = {
        let out_pipe = child.stdout.take();
        let err_pipe = child.stderr.take();
        let mut out_reader = pin!(drain(out_pipe, &mut stdout));
        let mut err_reader = pin!(drain(err_pipe, &mut stderr));
        let (mut out_done, mut err_done) = (false, false);
        let mut wait = pin!(child.wait());
        let mut deadline = pin!(tokio::time::sleep(plan.timeout));
        let mut cancelled = pin!(context.cancel.cancelled());
        let mut status: Option<std::io::Result<ExitStatus>> = None;
        let interrupted = loop {
            tokio::select! {
                () = &mut out_reader, if !out_done => out_done = true,
                () = &mut err_reader, if !err_done => err_done = true,
                exited = &mut wait => {
                    status = Some(exited);
                    break None;
                }
                () = &mut deadline => break Some(Interrupted::TimedOut),
                () = &mut cancelled => break Some(Interrupted::Cancelled),
            }
        };
        // Whatever happened, the group goes: on a normal exit that is the background
        // processes the command left behind, which would otherwise hold the pipes open.
        group.kill();
        if status.is_none() {
            status = tokio::time::timeout(REAP_GRACE, &mut wait).await.ok();
        }
        let mut grace = pin!(tokio::time::sleep(DRAIN_GRACE));
        while !(out_done && err_done) {
            tokio::select! {
                () = &mut out_reader, if !out_done => out_done = true,
                () = &mut err_reader, if !err_done => err_done = true,
                () = &mut grace => break,
            }
        }
        (status, interrupted)
    };

    let mut text = String::new();
    let is_error = match (interrupted, &status) {
        (Some(Interrupted::TimedOut), _) => {
            let _ = writeln!(
                text,
                "command timed out after {} s; its process group was killed",
                plan.timeout.as_secs()
            );
            true
        }
        (Some(Interrupted::Cancelled), _) => {
            text.push_str("command was cancelled; its process group was killed\n");
            true
        }
        (None, Some(Ok(status))) => {
            let _ = writeln!(text, "{}", describe(*status));
            false
        }
        (None, Some(Err(e))) => {
            let _ = writeln!(text, "cannot wait for the command: {e}");
            true
        }
        (None, None) => {
            text.push_str("the command's exit status is unknown\n");
            true
        }
    };
    for (name, capture) in [("stdout", &stdout), ("stderr", &stderr)] {
        let _ = writeln!(text, "--- {name} ---");
        if capture.is_empty() {
            text.push_str("(empty)\n");
        } else {
            text.push_str(&capture.render());
            if !text.ends_with('\n') {
                text.push('\n');
            }
        }
    }
    ToolOutput {
        text,
        is_error,
        truncated: stdout.omitted() > 0 || stderr.omitted() > 0,
        ..ToolOutput::default()
    }
}

fn describe(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit code: {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        if let Some(signal) = status.signal() {
            return format!("terminated by signal {signal}");
        }
    }
    format!("exit status: {status}")
}

/// Kills the command's process group once: explicitly, or when the call's future is dropped.
struct GroupGuard {
    #[cfg(unix)]
    pgid: Option<rustix::process::Pid>,
}

impl GroupGuard {
    fn new(leader: Option<u32>) -> Self {
        #[cfg(unix)]
        {
            let pgid = leader
                .and_then(|id| i32::try_from(id).ok())
                .and_then(rustix::process::Pid::from_raw);
            Self { pgid }
        }
        #[cfg(not(unix))]
        {
            let _ = leader;
            Self {}
        }
    }

    /// Sends SIGKILL to every process in the group. Later calls do nothing: once the leader is
    /// reaped its id may be reused.
    fn kill(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid.take() {
            // ESRCH (the group is already empty) is the common, harmless failure.
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Builtin;
    use crate::tools::testing::{assert_error, ok_text, run, workspace};
    use rho_component::Tool;
    use serde_json::json;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Instant;

    /// A `sleep` duration unique to this test run, so its processes can be found in /proc.
    fn marker() -> String {
        static NEXT: AtomicU32 = AtomicU32::new(1);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        format!("30.{}{n:03}", std::process::id())
    }

    /// How many live processes carry `marker` in their command line.
    fn count_marked(marker: &str) -> usize {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return 0;
        };
        entries
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            })
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .filter(|cmdline| {
                cmdline
                    .windows(marker.len())
                    .any(|w| w == marker.as_bytes())
            })
            .count()
    }

    /// Waits up to three seconds for every marked process to be gone.
    async fn assert_all_gone(marker: &str) {
        let start = Instant::now();
        while count_marked(marker) > 0 {
            assert!(
                start.elapsed() < Duration::from_secs(3),
                "processes marked {marker} survived"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn hidden_variables_never_reach_the_command() {
        let dir = tempfile::tempdir().unwrap();
        // PATH is always set for tests; hiding it proves the removal works on a real variable.
        let mut context = ToolContext::new(dir.path());
        context.hidden_env = vec!["PATH".into()];
        let output = Builtin::new(RunCommand)
            .call(json!({"argv": ["/usr/bin/env"]}), &context)
            .await;
        assert!(!output.is_error, "{}", output.text);
        assert!(
            !output.text.lines().any(|l| l.starts_with("PATH=")),
            "{}",
            output.text
        );
        let output = Builtin::new(RunCommand)
            .call(
                json!({"argv": ["/usr/bin/env"]}),
                &ToolContext::new(dir.path()),
            )
            .await;
        assert!(
            output.text.lines().any(|l| l.starts_with("PATH=")),
            "{}",
            output.text
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_argv_without_a_shell() {
        let dir = workspace();
        let output = run(
            RunCommand,
            dir.path(),
            json!({"argv": ["echo", "hello", "$HOME", "a b"]}),
        )
        .await;
        assert_eq!(
            ok_text(&output),
            "exit code: 0\n--- stdout ---\nhello $HOME a b\n--- stderr ---\n(empty)\n"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_shell_lines_and_reports_exit_codes_and_both_streams() {
        let dir = workspace();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let output = run(
            RunCommand,
            dir.path(),
            json!({"command": "echo out; echo err >&2; exit 3"}),
        )
        .await;
        assert_eq!(
            ok_text(&output),
            "exit code: 3\n--- stdout ---\nout\n--- stderr ---\nerr\n"
        );
        let output = run(
            RunCommand,
            dir.path(),
            json!({"command": "basename \"$(pwd)\"", "cwd": "sub"}),
        )
        .await;
        assert!(ok_text(&output).contains("--- stdout ---\nsub\n"));
        let output = run(RunCommand, dir.path(), json!({"command": "kill -9 $$"})).await;
        assert!(ok_text(&output).starts_with("terminated by signal 9\n"));
    }

    #[tokio::test]
    async fn rejects_bad_arguments() {
        let dir = workspace();
        std::fs::write(dir.path().join("file"), "").unwrap();
        let cases = [
            (json!({}), "exactly one of `command` or `argv`"),
            (
                json!({"command": "true", "argv": ["true"]}),
                "exactly one of `command` or `argv`",
            ),
            (json!({"command": "  "}), "field `command`"),
            (json!({"argv": []}), "field `argv`"),
            (json!({"argv": [""]}), "field `argv`"),
            (json!({"argv": "ls"}), "field `argv`"),
            (json!({"argv": ["ls", 3]}), "field `argv[1]`"),
            (
                json!({"command": "true", "timeout_seconds": 0}),
                "field `timeout_seconds`",
            ),
            (
                json!({"command": "true", "timeout_seconds": 601}),
                "field `timeout_seconds`",
            ),
            (
                json!({"command": "true", "cwd": ".."}),
                "outside the workspace",
            ),
            (json!({"command": "true", "cwd": "file"}), "field `cwd`"),
            (
                json!({"argv": ["/nonexistent/rho-test-program"]}),
                "cannot run `/nonexistent/rho-test-program`",
            ),
        ];
        for (arguments, needle) in cases {
            let output = run(RunCommand, dir.path(), arguments).await;
            assert_error(&output, needle);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_timeout_kills_the_whole_group_promptly() {
        let dir = workspace();
        let marker = marker();
        let started = Instant::now();
        let (output, seen) = tokio::join!(
            run(
                RunCommand,
                dir.path(),
                json!({
                    "command": format!("echo started; sleep {marker} & sleep {marker}"),
                    "timeout_seconds": 1,
                }),
            ),
            async {
                tokio::time::sleep(Duration::from_millis(500)).await;
                count_marked(&marker)
            }
        );
        assert!(
            seen >= 2,
            "the command's processes were not running ({seen})"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_error(&output, "timed out after 1 s; its process group was killed");
        assert!(
            output.text.contains("--- stdout ---\nstarted\n"),
            "{}",
            output.text
        );
        assert_all_gone(&marker).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cancellation_kills_the_whole_group_promptly() {
        let dir = workspace();
        let marker = marker();
        let context = ToolContext::new(dir.path());
        let tool = Builtin::new(RunCommand);
        let started = Instant::now();
        let (output, seen) = tokio::join!(
            tool.call(
                json!({"command": format!("sleep {marker} & sleep {marker}")}),
                &context,
            ),
            async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                let seen = count_marked(&marker);
                context.cancel.cancel();
                seen
            }
        );
        assert!(
            seen >= 2,
            "the command's processes were not running ({seen})"
        );
        assert!(started.elapsed() < Duration::from_secs(3));
        assert_error(&output, "command was cancelled");
        assert_all_gone(&marker).await;
    }

    #[tokio::test]
    async fn a_cancelled_call_starts_nothing() {
        let dir = workspace();
        let context = ToolContext::new(dir.path());
        context.cancel.cancel();
        let output = Builtin::new(RunCommand)
            .call(json!({"command": "touch started"}), &context)
            .await;
        assert_error(&output, "cancelled before it started");
        assert!(!dir.path().join("started").exists());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_the_call_kills_the_whole_group() {
        let dir = workspace();
        let marker = marker();
        let call = run(
            RunCommand,
            dir.path(),
            json!({"command": format!("sleep {marker} & sleep {marker}")}),
        );
        assert!(
            tokio::time::timeout(Duration::from_millis(400), call)
                .await
                .is_err()
        );
        assert_all_gone(&marker).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn background_processes_do_not_outlive_the_command() {
        let dir = workspace();
        let marker = marker();
        let started = Instant::now();
        let output = run(
            RunCommand,
            dir.path(),
            json!({"command": format!("sleep {marker} & echo launched")}),
        )
        .await;
        assert!(ok_text(&output).contains("--- stdout ---\nlaunched\n"));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_all_gone(&marker).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn huge_output_is_capped() {
        let dir = workspace();
        let output = run(
            RunCommand,
            dir.path(),
            json!({"command": "yes | head -c 10000000; yes err | head -c 3000000 >&2"}),
        )
        .await;
        assert!(output.truncated);
        let text = ok_text(&output);
        assert!(text.starts_with("exit code: 0\n--- stdout ---\ny\ny\n"));
        assert!(text.contains("bytes omitted; 10000000 bytes in all"));
        assert!(text.contains("bytes omitted; 3000000 bytes in all"));
        assert!(text.len() < 4 * 33 * 1024, "{}", text.len());
    }
}
