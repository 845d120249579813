//! The `claude` child process: started in its own process group with the session's
//! environment (minus rho's secret variables), fed one JSON line per prompt, read one bounded
//! line at a time, its stderr kept as a short tail, and its whole group killed when it is
//! stopped or dropped, so no way rho ends leaves it running.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::ClaudeError;

/// The longest line rho reads from Claude (a tool result of a large file comes in one line).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// How long a stopped `claude` has after SIGTERM before its group is killed.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(1);
/// How much of Claude's stderr is kept (the end), for the error when it exits.
const STDERR_TAIL_BYTES: usize = 4 * 1024;

/// Finds the program for `command`: a bare name in `path` (the `PATH` value), a path as it is.
pub(crate) fn resolve_command(
    command: &Path,
    path: Option<&OsStr>,
) -> Result<PathBuf, ClaudeError> {
    let shown = command.display().to_string();
    let bare = !command.as_os_str().as_encoded_bytes().contains(&b'/');
    if !bare {
        return if is_executable(command) {
            Ok(command.to_path_buf())
        } else {
            Err(ClaudeError::NotInstalled {
                command: shown,
                looked: "no executable file at that path".into(),
            })
        };
    }
    std::env::split_paths(path.unwrap_or_default())
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(command))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| ClaudeError::NotInstalled {
            command: shown,
            looked: "not found in PATH".into(),
        })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A running `claude`.
pub(crate) struct ClaudeProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The process group (the child's pid), until it is killed.
    group: Option<i32>,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// The line being read: kept here so a read dropped halfway (rho stopped waiting for a
    /// line to take an approval answer) loses nothing.
    partial: Vec<u8>,
}

impl ClaudeProcess {
    /// Starts `program args` in `cwd` with `env` (the whole environment: nothing else is
    /// inherited) in a process group of its own.
    pub(crate) fn spawn(
        program: &Path,
        args: &[OsString],
        cwd: &Path,
        env: Vec<(OsString, OsString)>,
    ) -> Result<Self, ClaudeError> {
        let mut command = Command::new(program);
        command
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        let mut child = command.spawn().map_err(|e| ClaudeError::Spawn {
            command: program.display().to_string(),
            message: e.to_string(),
        })?;
        let group = child.id().and_then(|id| i32::try_from(id).ok());
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClaudeError::Spawn {
                command: program.display().to_string(),
                message: "no pipes to the process".into(),
            });
        };
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(pipe) = child.stderr.take() {
            // Ends when the process's stderr closes (it exits or is killed).
            tokio::spawn(keep_tail(pipe, stderr.clone()));
        }
        tracing::debug!(target: "rho::claude", pid = group, "claude started");
        Ok(Self {
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
            group,
            stderr,
            partial: Vec::new(),
        })
    }

    /// The process id (its group's id), while it runs.
    pub(crate) fn pid(&self) -> Option<i32> {
        self.group
    }

    /// Writes one line (a JSON message) to Claude's stdin.
    pub(crate) async fn send(&mut self, line: &str) -> Result<(), ClaudeError> {
        let stdin = self.stdin.as_mut().ok_or_else(|| ClaudeError::Pipe {
            doing: "writing to Claude's input",
            message: "stdin is closed".into(),
        })?;
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        let written = async {
            stdin.write_all(&bytes).await?;
            stdin.flush().await
        };
        written.await.map_err(|e| ClaudeError::Pipe {
            doing: "writing to Claude's input",
            message: e.to_string(),
        })
    }

    /// The next line of Claude's stdout (without its newline); `None` at end of output.
    /// Cancel-safe: a read dropped before it finished goes on where it stopped.
    pub(crate) async fn next_line(&mut self) -> Result<Option<Vec<u8>>, ClaudeError> {
        if read_line(&mut self.stdout, &mut self.partial, MAX_LINE_BYTES).await? {
            Ok(Some(std::mem::take(&mut self.partial)))
        } else {
            Ok(None)
        }
    }

    /// How the process ended (after its output ended) and the end of its stderr, for an error.
    pub(crate) async fn exit_report(&mut self) -> (String, String) {
        let status = match tokio::time::timeout(
            std::time::Duration::from_secs(2),
            self.child.wait(),
        )
        .await
        {
            Ok(Ok(status)) => status.to_string(),
            Ok(Err(e)) => format!("unknown status: {e}"),
            Err(_) => "still running with its output closed".to_owned(),
        };
        // The stderr reader may still be copying the last bytes.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let tail = self.stderr.lock().unwrap_or_else(PoisonError::into_inner);
        (status, String::from_utf8_lossy(&tail).trim().to_owned())
    }

    /// Whether [`ClaudeProcess::kill`] stopped it (its input is closed).
    pub(crate) fn was_killed(&self) -> bool {
        self.stdin.is_none()
    }

    /// Kills the process group now (an abort, an error, the end of the session).
    pub(crate) fn kill(&mut self) {
        self.stdin = None;
        if let Some(group) = self.group.take().and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            tracing::debug!(target: "rho::claude", pid = group.as_raw_nonzero().get(), "claude stopped");
        }
        let _ = self.child.start_kill();
    }

    /// Stops the process: SIGTERM to its group first (Claude then saves its session, so the
    /// next process can resume it), SIGKILL to the group after [`STOP_GRACE`] or once it
    /// exited (what it started goes too), then waits for it to be reaped.
    pub(crate) async fn stop(mut self) {
        self.stdin = None;
        if let Some(group) = self.group.and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::TERM);
            let _ = tokio::time::timeout(STOP_GRACE, self.child.wait()).await;
        }
        self.kill();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), self.child.wait()).await;
    }
}

impl Drop for ClaudeProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Keeps the last [`STDERR_TAIL_BYTES`] of `pipe` in `tail`.
async fn keep_tail(mut pipe: tokio::process::ChildStderr, tail: Arc<Mutex<Vec<u8>>>) {
    let mut chunk = [0u8; 4096];
    while let Ok(n) = pipe.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
        tail.extend_from_slice(&chunk[..n]);
        if tail.len() > STDERR_TAIL_BYTES {
            let cut = tail.len() - STDERR_TAIL_BYTES;
            tail.drain(..cut);
        }
    }
}

/// Reads one line into `line` (newline dropped). `false` at end of input with nothing read; a
/// line longer than `max` bytes is an error, found before more than `max` plus one buffer
/// is held.
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> Result<bool, ClaudeError> {
    loop {
        let available = reader.fill_buf().await.map_err(|e| ClaudeError::Pipe {
            doing: "reading Claude's output",
            message: e.to_string(),
        })?;
        if available.is_empty() {
            return Ok(!line.is_empty());
        }
        let (taken, done) = match available.iter().position(|b| *b == b'\n') {
            Some(at) => (at, true),
            None => (available.len(), false),
        };
        if line.len() + taken > max {
            return Err(ClaudeError::LineTooLong { limit: max });
        }
        line.extend_from_slice(&available[..taken]);
        reader.consume(if done { taken + 1 } else { taken });
        if done {
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_read_one_at_a_time_and_a_long_one_is_an_error() {
        let mut input: &[u8] = b"{\"a\":1}\n\nlast";
        let mut line = Vec::new();
        assert!(read_line(&mut input, &mut line, 100).await.unwrap());
        assert_eq!(line, b"{\"a\":1}");
        line.clear();
        assert!(read_line(&mut input, &mut line, 100).await.unwrap());
        assert!(line.is_empty());
        assert!(read_line(&mut input, &mut line, 100).await.unwrap());
        assert_eq!(line, b"last");
        line.clear();
        assert!(!read_line(&mut input, &mut line, 100).await.unwrap());

        let long = vec![b'x'; 64];
        let mut input: &[u8] = &long;
        let error = read_line(&mut input, &mut Vec::new(), 10)
            .await
            .unwrap_err();
        assert!(
            matches!(error, ClaudeError::LineTooLong { limit: 10 }),
            "{error}"
        );
    }

    #[test]
    fn a_missing_command_names_how_to_install_it() {
        let error = resolve_command(
            Path::new("claude-not-here"),
            Some(OsStr::new("/nonexistent")),
        )
        .unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("npm install -g @anthropic-ai/claude-code")
                && text.contains("[agent] claude_command"),
            "{text}"
        );
        assert!(resolve_command(Path::new("sh"), Some(OsStr::new("/bin:/usr/bin"))).is_ok());
        assert!(resolve_command(Path::new("/nonexistent/claude"), None).is_err());
    }
}
