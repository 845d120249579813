//! Whole-process timing of one child command, the way a user's shell runs it.
//!
//! The clock starts just before `spawn` and stops once the child has exited and its stdout pipe
//! has been drained to EOF (like `rho ... | jq`), so it covers exec, dynamic loading, the work
//! and the write of the output. Everything else (building the command, opening the stderr file,
//! checking the output) happens outside the timed window. The child's environment and the
//! command line quoted in messages are built here for the children `rpc_ready` drives too.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How much of a failing child's stderr is quoted in the error.
const STDERR_QUOTE_BYTES: usize = 4096;

/// The arguments of rho run on `project`: `--cwd <project>`, then `rest` (the one spelling of
/// a project every bench uses).
pub fn rho_args<'a>(project: &'a Path, rest: &[&'a str]) -> Vec<&'a OsStr> {
    let mut args = vec![OsStr::new("--cwd"), project.as_os_str()];
    args.extend(rest.iter().map(|arg| OsStr::new(*arg)));
    args
}

/// One command to time, with an explicit environment.
pub struct Probe {
    pub(crate) label: String,
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    dir: PathBuf,
    pub(crate) stderr_path: PathBuf,
}

impl Probe {
    /// A probe running `program args...` in `dir`, with only `env` (plus `PATH`) in its
    /// environment so the user's own `RHO_LOG` or `RHO_HOME` cannot leak into the figures.
    /// Its stderr goes to a file next to `dir` so it never blocks and can be quoted on failure.
    pub fn new(
        label: &str,
        program: &Path,
        args: &[&OsStr],
        env: &[(&str, &Path)],
        dir: &Path,
        stderr_path: PathBuf,
    ) -> Self {
        Self {
            label: label.to_owned(),
            program: program.to_path_buf(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: isolated_env(env),
            dir: dir.to_path_buf(),
            stderr_path,
        }
    }

    /// The command, its stderr to a new file at the stderr path, stdin closed, stdout piped.
    pub(crate) fn command(&self) -> Result<Command, String> {
        let stderr = std::fs::File::create(&self.stderr_path)
            .map_err(|e| format!("cannot create {}: {e}", self.stderr_path.display()))?;
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        Ok(command)
    }

    /// Runs the command once; `stdout` receives everything it printed. Fails unless it exits 0.
    pub fn run(&self, stdout: &mut Vec<u8>) -> Result<Duration, String> {
        let mut command = self.command()?;
        stdout.clear();

        let start = Instant::now();
        let mut child = command.spawn().map_err(|e| {
            format!(
                "{}: cannot start {}: {e}",
                self.label,
                self.program.display()
            )
        })?;
        let drained = match child.stdout.take() {
            Some(mut pipe) => pipe.read_to_end(stdout).map(drop),
            None => Ok(()),
        };
        let status = child.wait();
        let elapsed = start.elapsed();

        drained.map_err(|e| format!("{}: cannot read its stdout: {e}", self.label))?;
        let status = status.map_err(|e| format!("{}: cannot wait for it: {e}", self.label))?;
        if !status.success() {
            return Err(format!(
                "{}: `{}` failed ({status}); stderr:\n{}",
                self.label,
                self.command_line(),
                self.stderr_quote()
            ));
        }
        Ok(elapsed)
    }

    /// The command as a user would type it, for messages.
    pub fn command_line(&self) -> String {
        command_line(
            std::iter::once(self.program.as_os_str())
                .chain(self.args.iter().map(OsString::as_os_str)),
        )
    }

    fn stderr_quote(&self) -> String {
        let text = std::fs::read(&self.stderr_path).unwrap_or_default();
        let cut = text.len().min(STDERR_QUOTE_BYTES);
        match String::from_utf8_lossy(&text[..cut]).trim_end() {
            "" => "(empty)".into(),
            quoted => quoted.to_owned(),
        }
    }
}

/// The environment of a child the bench measures: exactly `env`, plus the bench's own `PATH`,
/// so the user's own `RHO_LOG` or `RHO_HOME` cannot leak into the figures.
pub fn isolated_env(env: &[(&str, &Path)]) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = env
        .iter()
        .map(|(k, v)| (OsString::from(k), v.as_os_str().to_owned()))
        .collect();
    if let Some(path) = std::env::var_os("PATH") {
        env.push(("PATH".into(), path));
    }
    env
}

/// A program and its arguments as a user would type them, for messages.
pub fn command_line<'a>(parts: impl Iterator<Item = &'a OsStr>) -> String {
    parts
        .map(OsStr::to_string_lossy)
        .collect::<Vec<_>>()
        .join(" ")
}
