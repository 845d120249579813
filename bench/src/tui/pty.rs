//! rho on a pseudo-terminal: the `script` command line ([`PtyCommand`]), the running pty
//! ([`Pty`]) whose output a thread drains while the bench answers the terminal queries a real
//! terminal answers and types keys, and the checks of what rho drew.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::proc_figures::{children, comm};
use super::{COLS, QUIT_TIMEOUT, ROWS, SCRIPT, sh_quote};

/// How much of the pty output an error quotes.
const QUOTE_BYTES: usize = 1500;

/// A command to run on a `COLS`×`ROWS` pty, prepared outside any timed window.
pub struct PtyCommand {
    label: String,
    command: Command,
    line: String,
}

impl PtyCommand {
    /// `program args...` in `dir` on a fresh pty, with exactly `env`.
    pub fn new(
        label: &str,
        program: &Path,
        args: &[&OsStr],
        env: &[(OsString, OsString)],
        dir: &Path,
    ) -> Self {
        let mut line = format!(
            "stty cols {COLS} rows {ROWS}; exec {}",
            sh_quote(program.as_os_str())
        );
        for arg in args {
            line.push(' ');
            line.push_str(&sh_quote(arg));
        }
        let mut command = Command::new(SCRIPT);
        command
            .args(["-q", "-f", "-e", "-c"])
            .arg(&line)
            .arg("/dev/null")
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        Self {
            label: label.to_owned(),
            command,
            line,
        }
    }

    /// The command as typed into a shell, for messages.
    pub fn command_line(&self) -> String {
        format!(
            "{SCRIPT} -qfec {} /dev/null",
            sh_quote(OsStr::new(&self.line))
        )
    }

    /// Starts it; the returned [`Pty`] drains its output from now on. Its `started` instant
    /// is taken just before `spawn`.
    pub fn spawn(&mut self) -> Result<Pty, String> {
        let started = Instant::now();
        let mut child = self
            .command
            .spawn()
            .map_err(|e| format!("{}: cannot start {SCRIPT}: {e}", self.label))?;
        let (Some(stdin), Some(mut stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{}: script has no pipes", self.label));
        };
        let stdin = Arc::new(Mutex::new(stdin));
        let shared = Arc::new(Shared::default());
        let reader = {
            let shared = Arc::clone(&shared);
            let stdin = Arc::clone(&stdin);
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = match stdout.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let at = Instant::now();
                    let replies = {
                        let mut out = lock(&shared.output);
                        out.bytes.extend_from_slice(&buf[..n]);
                        let end = out.bytes.len();
                        out.arrivals.push((end, at));
                        let replies = terminal_replies(&out.bytes, out.scanned);
                        out.scanned = end;
                        replies
                    };
                    // Answer as a terminal does, at once.
                    if !replies.is_empty() {
                        let mut stdin = lock(&stdin);
                        for reply in replies {
                            let _ = stdin.write_all(reply);
                        }
                        let _ = stdin.flush();
                    }
                    shared.changed.notify_all();
                }
                lock(&shared.output).eof = Some(Instant::now());
                shared.changed.notify_all();
            })
        };
        Ok(Pty {
            label: self.label.clone(),
            child,
            stdin,
            shared,
            reader: Some(reader),
            started,
            rho_pid: None,
            finished: false,
        })
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the pty printed so far.
#[derive(Default)]
struct Output {
    bytes: Vec<u8>,
    /// `(end offset, when it was read)` per read.
    arrivals: Vec<(usize, Instant)>,
    /// Bytes already searched for terminal queries.
    scanned: usize,
    /// When the output ended (script exited).
    eof: Option<Instant>,
}

/// The output and its change signal, shared with the thread that drains the pty.
#[derive(Default)]
struct Shared {
    output: Mutex<Output>,
    changed: Condvar,
}

impl Shared {
    /// Waits up to `timeout` for the output to change; the guard back.
    fn wait<'a>(&self, out: MutexGuard<'a, Output>, timeout: Duration) -> MutexGuard<'a, Output> {
        self.changed
            .wait_timeout(out, timeout)
            .unwrap_or_else(PoisonError::into_inner)
            .0
    }
}

/// The answers of an xterm-like terminal to the queries in `bytes` that end after `scanned`:
/// primary device attributes (`ESC [ c`, which crossterm sends after its keyboard-protocol
/// query `ESC [ ? u` and waits up to 2 s for), the cursor position (`ESC [ 6 n`) and device
/// status (`ESC [ 5 n`, which ends rho's graphics query). The keyboard-protocol, kitty
/// graphics and cell-size queries get no answer, as from xterm.
pub fn terminal_replies(bytes: &[u8], scanned: usize) -> Vec<&'static [u8]> {
    const QUERIES: [(&[u8], &[u8]); 4] = [
        (b"\x1b[c", b"\x1b[?62;22c"),
        (b"\x1b[0c", b"\x1b[?62;22c"),
        (b"\x1b[6n", b"\x1b[1;1R"),
        (b"\x1b[5n", b"\x1b[0n"),
    ];
    let from = scanned.saturating_sub(3);
    let mut found: Vec<(usize, &'static [u8])> = Vec::new();
    for (query, reply) in QUERIES {
        let mut at = from;
        while let Some(pos) = find(&bytes[at.min(bytes.len())..], query) {
            let end = at + pos + query.len();
            if end > scanned {
                found.push((end, reply));
            }
            at = end;
        }
    }
    found.sort_by_key(|(end, _)| *end);
    found.into_iter().map(|(_, reply)| reply).collect()
}

/// The first position of `needle` in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// When something appeared in the pty output.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    /// When the bench read the bytes that completed it.
    pub at: Instant,
}

/// A running `script` with rho on its pty; killed (with rho) if dropped before [`Pty::quit`].
pub struct Pty {
    label: String,
    child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    shared: Arc<Shared>,
    reader: Option<JoinHandle<()>>,
    started: Instant,
    rho_pid: Option<u32>,
    finished: bool,
}

impl Pty {
    /// Just before `spawn`.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Bytes of output so far.
    pub fn len(&self) -> usize {
        lock(&self.shared.output).bytes.len()
    }

    /// When the bench read the latest output.
    pub fn last_output(&self) -> Option<Instant> {
        lock(&self.shared.output).arrivals.last().map(|(_, at)| *at)
    }

    /// A copy of the output so far.
    pub fn output(&self) -> Vec<u8> {
        lock(&self.shared.output).bytes.clone()
    }

    /// Waits until the output after `from` contains `needle`.
    pub fn wait_for(&self, needle: &[u8], from: usize, timeout: Duration) -> Result<Seen, String> {
        let deadline = Instant::now() + timeout;
        let mut out = lock(&self.shared.output);
        let mut pos = from;
        loop {
            if let Some(at) = find(&out.bytes[pos.min(out.bytes.len())..], needle) {
                let end = pos + at + needle.len();
                let at = out
                    .arrivals
                    .iter()
                    .find(|(offset, _)| *offset >= end)
                    .map_or_else(Instant::now, |(_, at)| *at);
                return Ok(Seen { at });
            }
            pos = out.bytes.len().saturating_sub(needle.len()).max(from);
            let now = Instant::now();
            if out.eof.is_some() || now >= deadline {
                let why = if out.eof.is_some() {
                    "the pty closed (rho exited)"
                } else {
                    "timed out"
                };
                return Err(format!(
                    "{}: {why} after {:.1} s waiting for {:?} on screen; the screen's last \
                     bytes:\n{}",
                    self.label,
                    (now - self.started).as_secs_f64(),
                    String::from_utf8_lossy(needle),
                    printable_tail(&out.bytes, QUOTE_BYTES)
                ));
            }
            out = self.shared.wait(out, deadline - now);
        }
    }

    /// Writes `bytes` to the pty (keys, as typed).
    pub fn send(&self, bytes: &[u8]) -> Result<(), String> {
        let mut stdin = lock(&self.stdin);
        stdin
            .write_all(bytes)
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("{}: cannot write to the pty: {e}", self.label))
    }

    /// Types `text` one byte every `interval`, on a fixed schedule from the first.
    pub fn type_text(&self, text: &[u8], interval: Duration) -> Result<(), String> {
        let start = Instant::now();
        for (k, byte) in text.iter().enumerate() {
            let due = start + interval * u32::try_from(k).unwrap_or(u32::MAX);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            self.send(std::slice::from_ref(byte))?;
        }
        Ok(())
    }

    /// The rho process: `script`'s child once it has exec'd rho.
    pub fn rho_pid(&mut self, timeout: Duration) -> Result<u32, String> {
        if let Some(pid) = self.rho_pid {
            return Ok(pid);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let found = children(self.child.id())
                .into_iter()
                .find(|pid| comm(*pid).as_deref() == Some("rho"));
            if let Some(pid) = found {
                self.rho_pid = Some(pid);
                return Ok(pid);
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "{}: no `rho` child of script (pid {}) within {timeout:?}",
                    self.label,
                    self.child.id()
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Sends each of `keys` 100 ms apart, then waits for rho (and script) to exit; kills both
    /// after [`QUIT_TIMEOUT`]. Fails unless rho exits 0.
    pub fn quit(mut self, keys: &[&[u8]]) -> Result<(), String> {
        for (k, key) in keys.iter().enumerate() {
            if k > 0 {
                std::thread::sleep(Duration::from_millis(100));
            }
            // rho may leave before the last key (Ctrl+C on a question quits at once).
            if self.send(key).is_err() && k > 0 {
                break;
            }
        }
        self.finish(QUIT_TIMEOUT).map(drop)
    }

    /// Waits for the pty's output to end (`script` closes it when rho has exited; `-e` passes
    /// rho's status on) and for `script` to exit; returns when the output ended. Kills both
    /// after `timeout`; fails unless rho exited 0.
    pub fn finish(&mut self, timeout: Duration) -> Result<Instant, String> {
        let deadline = Instant::now() + timeout;
        let ended = {
            let mut out = lock(&self.shared.output);
            loop {
                if let Some(at) = out.eof {
                    break Some(at);
                }
                let now = Instant::now();
                if now >= deadline {
                    break None;
                }
                out = self.shared.wait(out, deadline - now);
            }
        };
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if ended.is_some() && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Ok(None) => break None,
                Err(e) => return Err(format!("{}: cannot wait for script: {e}", self.label)),
            }
        };
        let (Some(ended), Some(status)) = (ended, status) else {
            self.kill();
            return Err(format!(
                "{}: rho did not exit within {timeout:?} (killed); the screen's last bytes:\n{}",
                self.label,
                printable_tail(&self.output(), QUOTE_BYTES)
            ));
        };
        self.finished = true;
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        if !status.success() {
            return Err(format!(
                "{}: rho exited with {status}; the screen's last bytes:\n{}",
                self.label,
                printable_tail(&self.output(), QUOTE_BYTES)
            ));
        }
        Ok(ended)
    }

    fn kill(&mut self) {
        self.finished = true;
        let _ = self.child.kill();
        let _ = self.child.wait();
        // rho gets SIGHUP when the pty closes; make sure it is gone.
        if let Some(pid) = self.rho_pid
            && comm(pid).as_deref() == Some("rho")
        {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        if !self.finished {
            self.kill();
        }
    }
}

/// The end of `bytes` with escape characters shown as `␛`, for messages.
pub fn printable_tail(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(max)..]);
    match text.replace('\x1b', "␛").trim() {
        "" => "(nothing)".into(),
        text => text.to_owned(),
    }
}

/// Whether rho drew for a `COLS`×`ROWS` terminal: its status line (the last row) was written
/// from column 1 of row `ROWS`, and no row below it was addressed.
pub fn check_size(output: &[u8], label: &str) -> Result<(), String> {
    let last_row = format!("\x1b[{ROWS};1H");
    let below = format!("\x1b[{};", ROWS + 1);
    if find(output, last_row.as_bytes()).is_none() || find(output, below.as_bytes()).is_some() {
        return Err(format!(
            "{label}: rho did not draw for a {COLS}×{ROWS} terminal (no status line at row \
             {ROWS}); `stty cols {COLS} rows {ROWS}` on the pty did not take"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_queries_are_answered_once() {
        let out = b"\x1b[?1049h\x1b[?u\x1b[c";
        assert_eq!(terminal_replies(out, 0), vec![b"\x1b[?62;22c" as &[u8]]);
        assert!(terminal_replies(out, out.len()).is_empty());
        // A query split across two reads is answered when its last byte arrives.
        assert!(terminal_replies(&out[..out.len() - 1], 0).is_empty());
        assert_eq!(terminal_replies(out, out.len() - 1).len(), 1);
        assert_eq!(terminal_replies(b"\x1b[6n..\x1b[0c", 0).len(), 2);
    }

    #[test]
    fn shell_quoting_and_size_check() {
        assert_eq!(sh_quote(OsStr::new("/a b/it's")), r"'/a b/it'\''s'");
        let good = b"\x1b[1;1Hx\x1b[40;1H starting";
        assert_eq!(check_size(good, "t"), Ok(()));
        assert!(check_size(b"\x1b[24;1H starting", "t").is_err());
        assert!(check_size(b"\x1b[40;1H\x1b[41;1H", "t").is_err());
    }
}
