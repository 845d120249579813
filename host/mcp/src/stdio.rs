//! Starting a stdio server: the command executed directly (never a shell), its own process
//! group, an explicit environment, stderr drained into `tracing` (bounded, with secret values
//! redacted), and a shutdown that closes stdin, waits, then terminates the whole group.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rho_component::{McpServerOrigin, McpServerSpec, StdioCommand, StdioServerSpec};
use tokio::io::{AsyncBufReadExt, AsyncReadExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::McpError;

/// How long a server may take to exit after its stdin closes, and again after SIGTERM.
pub const SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);

/// The longest stderr line logged; the rest of a longer line is dropped.
const STDERR_LINE_MAX: usize = 4096;

/// The stderr kept for an error report: at most this many of the last lines...
const TAIL_LINES: usize = 20;
/// ...and at most this many bytes of them.
const TAIL_BYTES: usize = 4096;

/// How long an error report waits for a failing server's last words (its stderr to close).
const TAIL_WAIT: Duration = Duration::from_millis(300);

/// The variable every server process (and whatever it starts) inherits, so processes that
/// escape the process group (`setsid` daemons) can still be found and stopped.
pub const INSTANCE_VARIABLE: &str = "RHO_MCP_INSTANCE";

/// A running server process. Dropping it kills the process group.
pub struct ServerProcess {
    server: String,
    child: Child,
    pgid: Option<i32>,
    /// `RHO_MCP_INSTANCE=<value>` as it appears in `/proc/<pid>/environ`.
    marker: String,
    /// The server's own process id (the sweep leaves it to tokio, which owns and reaps it).
    pid: Option<i32>,
    /// The last lines of its stderr (secrets already redacted), for error reports.
    tail: StderrTail,
}

/// The last [`TAIL_LINES`] lines (at most [`TAIL_BYTES`]) a server wrote to stderr, redacted.
#[derive(Clone, Default)]
struct StderrTail {
    lines: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<String>>>,
    /// Set when stderr reached its end (the server exited or closed it).
    ended: std::sync::Arc<tokio::sync::Notify>,
    ended_flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl StderrTail {
    fn push(&self, line: &str) {
        let Ok(mut lines) = self.lines.lock() else {
            return;
        };
        let mut line = line.to_owned();
        if line.len() > TAIL_BYTES {
            let mut end = TAIL_BYTES;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line.truncate(end);
        }
        lines.push_back(line);
        while lines.len() > TAIL_LINES || lines.iter().map(String::len).sum::<usize>() > TAIL_BYTES
        {
            lines.pop_front();
        }
    }

    fn end(&self) {
        self.ended_flag
            .store(true, std::sync::atomic::Ordering::Release);
        self.ended.notify_waiters();
    }

    /// The tail, after waiting a moment for the server's stderr to end (a crashing server's
    /// last lines may still be in the pipe when the transport notices it is gone).
    async fn text(&self) -> String {
        let ended = self.ended.notified();
        tokio::pin!(ended);
        // Registered before the flag is read, so an end in between is not missed.
        ended.as_mut().enable();
        if !self.ended_flag.load(std::sync::atomic::Ordering::Acquire) {
            let _ = tokio::time::timeout(TAIL_WAIT, ended).await;
        }
        self.lines
            .lock()
            .map(|lines| lines.iter().cloned().collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    }
}

fn instance_value() -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{nanos}-{n}", std::process::id())
}

/// Starts the process of a stdio server; returns it with its stdout and stdin for the transport.
pub(crate) fn spawn(
    spec: &McpServerSpec,
    stdio: &StdioServerSpec,
    mut env: BTreeMap<OsString, OsString>,
    secrets: Vec<String>,
) -> Result<(ServerProcess, ChildStdout, ChildStdin), McpError> {
    become_subreaper();
    let instance = instance_value();
    env.insert(INSTANCE_VARIABLE.into(), instance.clone().into());
    if let McpServerOrigin::Plugin { data_dir, .. } = &spec.origin {
        prepare_data_dir(&spec.id, data_dir)?;
    }
    let program: OsString = match &stdio.command {
        StdioCommand::Bare(name) => name.into(),
        StdioCommand::Path(path) => path.clone().into_os_string(),
    };
    let mut command = Command::new(&program);
    command
        .args(&stdio.args)
        .env_clear()
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    if let Some(cwd) = &stdio.cwd {
        command.current_dir(cwd);
    }
    let mut child = command.spawn().map_err(|e| McpError::Spawn {
        server: spec.id.clone(),
        command: program.to_string_lossy().into_owned(),
        message: e.to_string(),
    })?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    if let Some(pid) = pgid {
        servers(|live| live.insert(pid));
    }
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(McpError::Spawn {
            server: spec.id.clone(),
            command: program.to_string_lossy().into_owned(),
            message: "no stdio pipes".into(),
        });
    };
    let tail = StderrTail::default();
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(drain_stderr(spec.id.clone(), stderr, secrets, tail.clone()));
    }
    let marker = format!("{INSTANCE_VARIABLE}={instance}");
    Ok((
        ServerProcess {
            server: spec.id.clone(),
            child,
            pgid,
            marker,
            pid: pgid,
            tail,
        },
        stdout,
        stdin,
    ))
}

/// Creates `PLUGIN_DATA` right before a plugin server starts (Agent Plugins §9.1). Failure
/// disables only this server.
fn prepare_data_dir(server: &str, data_dir: &Path) -> Result<(), McpError> {
    let fail = |message: String| McpError::DataDir {
        server: server.to_owned(),
        path: data_dir.display().to_string(),
        message,
    };
    // The data directory sits in `<plugins root>/data/`; a link planted there would move it.
    if let Some(parent) = data_dir.parent()
        && std::fs::symlink_metadata(parent).is_ok_and(|m| m.file_type().is_symlink())
    {
        return Err(fail("data/ is a symbolic link".into()));
    }
    if std::fs::symlink_metadata(data_dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(fail("it is a symbolic link".into()));
    }
    std::fs::create_dir_all(data_dir).map_err(|e| fail(e.to_string()))
}

async fn drain_stderr(
    server: String,
    stderr: tokio::process::ChildStderr,
    secrets: Vec<String>,
    tail: StderrTail,
) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        // `read_until` on a capped reader: a 1 GB line without a newline costs at most the cap.
        let mut capped = (&mut reader).take(STDERR_LINE_MAX as u64);
        match capped.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let complete = line.ends_with(b"\n");
                let text = redact(&String::from_utf8_lossy(&line), &secrets, !complete);
                let text = text.trim_end();
                tracing::debug!(target: "rho::mcp::server", server = server.as_str(), stream = "stderr", "{text}");
                tail.push(text);
                if !complete && !skip_rest_of_line(&mut reader).await {
                    break;
                }
            }
        }
    }
    tail.end();
}

/// Replaces every secret value in `text`; when the text was cut (`cut`), a tail that could be
/// the start of a secret is replaced too, so a secret split at the cut never shows in part.
fn redact(text: &str, secrets: &[String], cut: bool) -> String {
    let mut out = text.to_owned();
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        out = out.replace(secret.as_str(), "[redacted]");
        if cut {
            for len in (1..secret.len()).rev() {
                if secret.is_char_boundary(len) && out.ends_with(&secret[..len]) {
                    out.truncate(out.len() - len);
                    out.push_str("[redacted]");
                    break;
                }
            }
        }
    }
    out
}

/// Discards the rest of an over-long line without keeping it; false at end of stream.
async fn skip_rest_of_line(reader: &mut BufReader<tokio::process::ChildStderr>) -> bool {
    loop {
        let (used, found) = match reader.fill_buf().await {
            Ok([]) | Err(_) => return false,
            Ok(buffer) => match buffer.iter().position(|b| *b == b'\n') {
                Some(at) => (at + 1, true),
                None => (buffer.len(), false),
            },
        };
        reader.consume(used);
        if found {
            return true;
        }
    }
}

impl ServerProcess {
    /// The last lines the server wrote to stderr (bounded, secrets redacted), for the report
    /// of a server that failed to start; empty when it wrote nothing.
    pub async fn stderr_tail(&self) -> String {
        self.tail.text().await
    }

    /// Stops the server: waits for it to exit after its stdin was closed (by the caller
    /// dropping the transport), then SIGTERM to the whole group, then SIGKILL.
    pub async fn shutdown(mut self) {
        if tokio::time::timeout(SHUTDOWN_GRACE, self.child.wait())
            .await
            .is_err()
        {
            self.signal_group(Signal::Term);
            if tokio::time::timeout(SHUTDOWN_GRACE, self.child.wait())
                .await
                .is_err()
            {
                self.signal_group(Signal::Kill);
                let server = self.server.as_str();
                match tokio::time::timeout(SHUTDOWN_GRACE, self.child.wait()).await {
                    Ok(Ok(_)) => {
                        tracing::warn!(target: "rho::mcp", server, "the server ignored its stdin closing and SIGTERM; killed");
                    }
                    // Not claimed stopped: what was seen is said.
                    Ok(Err(e)) => {
                        tracing::warn!(target: "rho::mcp", server, "the server was sent SIGKILL, but waiting for it failed: {e}");
                    }
                    Err(_) => {
                        tracing::warn!(target: "rho::mcp", server, "the server did not exit even after SIGKILL");
                    }
                }
            }
        }
        if let Some(pid) = self.pid {
            servers(|live| live.remove(&pid));
        }
        // Grandchildren left in the group (npx -> node) go too, and so do processes that left
        // the group but still carry this server's instance marker.
        self.signal_group(Signal::Kill);
        self.pgid = None;
        kill_marked(&self.marker, self.pid);
        tracing::debug!(target: "rho::mcp", server = self.server.as_str(), "stopped");
    }

    fn signal_group(&self, signal: Signal) {
        #[cfg(unix)]
        if let Some(pid) = self.pgid.and_then(rustix::process::Pid::from_raw) {
            let signal = match signal {
                Signal::Term => rustix::process::Signal::TERM,
                Signal::Kill => rustix::process::Signal::KILL,
            };
            let _ = rustix::process::kill_process_group(pid, signal);
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Some(pid) = self.pid {
            servers(|live| live.remove(&pid));
        }
        if self.pgid.is_some() {
            self.signal_group(Signal::Kill);
            kill_marked(&self.marker, self.pid);
        }
    }
}

/// Makes this process the subreaper of everything it starts (Linux), once: a daemon that a
/// server double-forks or `setsid`s away is re-parented to rho when its parent dies, instead of
/// to init, so [`kill_marked`] finds it among rho's own children.
pub(crate) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            if let Err(e) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
                tracing::debug!(target: "rho::mcp", "cannot become a subreaper: {e}");
            }
        });
    }
}

/// Runs `f` on the process ids of the servers rho started and has not stopped yet.
fn servers<T>(f: impl FnOnce(&mut std::collections::HashSet<i32>) -> T) -> T {
    static LIVE: std::sync::Mutex<Option<std::collections::HashSet<i32>>> =
        std::sync::Mutex::new(None);
    let mut live = LIVE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    f(live.get_or_insert_with(Default::default))
}

/// SIGKILLs (and reaps) rho's own children whose environment holds `marker` exactly: processes
/// a server left behind outside its process group. Only rho's children are examined, and
/// not the servers still running (each has its own marker), so stopping 2,000 servers reads
/// a few files each rather than 2,000; never every process on the machine. Escaping both
/// the group and the marker (`setsid` plus a cleared environment) is the residual case.
fn kill_marked(marker: &str, own: Option<i32>) {
    #[cfg(target_os = "linux")]
    {
        let needle = marker.as_bytes();
        let children = own_children();
        let children: Vec<i32> = servers(|live| {
            children
                .into_iter()
                .filter(|p| Some(*p) != own && !live.contains(p))
                .collect()
        });
        for pid in children {
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
                continue;
            };
            if environ.split(|b| *b == 0).any(|var| var == needle)
                && let Some(pid) = rustix::process::Pid::from_raw(pid)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                // Re-parented orphans are ours to reap; a blocking wait would be wrong here,
                // so give it a moment and leave a straggler to the next sweep.
                for _ in 0..20 {
                    match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG)
                    {
                        Ok(Some(_)) | Err(_) => break,
                        Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (marker, own);
}

/// The process ids of rho's direct children, from `/proc/self/task/*/children`.
#[cfg(target_os = "linux")]
fn own_children() -> Vec<i32> {
    let mut pids = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return pids;
    };
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            pids.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    pids.sort_unstable();
    pids.dedup();
    pids
}

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_tail_keeps_the_last_lines_within_its_bounds() {
        let tail = StderrTail::default();
        for n in 0..30 {
            tail.push(&format!("line {n}"));
        }
        tail.end();
        let text = tail.text().await;
        assert!(text.starts_with("line 10\n"), "{text}");
        assert!(text.ends_with("line 29"), "{text}");
        let tail = StderrTail::default();
        tail.push(&"x".repeat(10_000));
        tail.push("last");
        tail.end();
        let text = tail.text().await;
        assert!(text.len() <= TAIL_BYTES + 1, "{}", text.len());
        assert!(text.ends_with("last"));
    }

    #[test]
    fn secrets_are_redacted_whole_and_at_a_cut() {
        let secrets = vec!["s3cr3t-value".to_owned()];
        assert_eq!(
            redact("token=s3cr3t-value ok", &secrets, false),
            "token=[redacted] ok"
        );
        assert_eq!(redact("token=s3cr3", &secrets, true), "token=[redacted]");
        assert_eq!(redact("token=s3cr3", &secrets, false), "token=s3cr3");
        assert_eq!(
            redact("value ", &[" ".to_owned()], false),
            "value[redacted]"
        );
    }
}
