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

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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
/// The tracing target of rho's timing lines, as the log file prints it.
const TIMING_TARGET: &str = "rho_tui::timing:";
/// How long rho may take to leave after the quit keys before it is killed.
pub const QUIT_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of the pty output an error quotes.
const QUOTE_BYTES: usize = 1500;

/// Ctrl-C (a key in raw mode: clears the message box, or arms quitting).
pub const CTRL_C: &[u8] = b"\x03";
/// Ctrl-C twice, which quits with an empty message box and nothing running (and, in builds
/// that ask about untrusted project plugins on screen, also while such a question waits,
/// where Ctrl-D is ignored).
pub const QUIT: [&[u8]; 2] = [CTRL_C, CTRL_C];
/// PageUp as xterm sends it.
pub const PAGE_UP: &[u8] = b"\x1b[5~";

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

#[derive(Default)]
struct Shared {
    output: Mutex<Output>,
    changed: Condvar,
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
            out = self
                .shared
                .changed
                .wait_timeout(out, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
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
                out = self
                    .shared
                    .changed
                    .wait_timeout(out, deadline - now)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
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

// ---- rho's timing log ----

/// The `name=value` fields of one `rho_tui::timing` log line; `None` for other lines.
pub fn timing_fields(line: &str) -> Option<Vec<(&str, f64)>> {
    let (_, rest) = line.split_once(TIMING_TARGET)?;
    Some(
        rest.split_whitespace()
            .filter_map(|pair| {
                let (name, value) = pair.split_once('=')?;
                Some((name, value.parse().ok()?))
            })
            .collect(),
    )
}

/// One drawn frame from the log.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// Building and writing the frame (`draw_us`, wall time).
    pub draw_us: f64,
    /// The drawing thread's CPU time for it (`draw_cpu_us`): `draw_us` less the time rho
    /// waited for a core or for the terminal to take the bytes.
    pub draw_cpu_us: Option<f64>,
    /// From the oldest input it shows to the end of its write (`input_to_frame_us`), when it
    /// shows input.
    pub input_to_frame_us: Option<f64>,
}

/// Every frame in `text` (log lines), in order.
pub fn frames(text: &str) -> Vec<Frame> {
    text.lines()
        .filter_map(timing_fields)
        .filter_map(|fields| {
            let get = |name: &str| fields.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
            Some(Frame {
                draw_us: get("draw_us")?,
                draw_cpu_us: get("draw_cpu_us"),
                input_to_frame_us: get("input_to_frame_us"),
            })
        })
        .collect()
}

/// The first value of field `name` in `text` (log lines).
pub fn first_field(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter_map(timing_fields)
        .find_map(|fields| fields.iter().find(|(n, _)| *n == name).map(|(_, v)| *v))
}

/// The `draw_us` of the frame that logged `name` (rho logs a frame's other fields just before
/// its `draw_us`).
pub fn draw_us_of(text: &str, name: &str) -> Option<f64> {
    let mut lines = text.lines().filter_map(timing_fields);
    lines.find(|fields| fields.iter().any(|(n, _)| *n == name))?;
    let next = lines.next()?;
    next.iter().find(|(n, _)| *n == "draw_us").map(|(_, v)| *v)
}

/// `$RHO_HOME/logs/rho.log`, read from offsets.
pub struct Log {
    path: PathBuf,
}

impl Log {
    /// The log of the rho whose `RHO_HOME` is `rho_home`.
    pub fn new(rho_home: &Path) -> Self {
        Self {
            path: rho_home.join("logs").join("rho.log"),
        }
    }

    /// Its size now (0 before rho created it).
    pub fn len(&self) -> usize {
        std::fs::metadata(&self.path).map_or(0, |m| usize::try_from(m.len()).unwrap_or(0))
    }

    /// What was written from `offset` on.
    pub fn read_from(&self, offset: usize) -> String {
        let bytes = std::fs::read(&self.path).unwrap_or_default();
        String::from_utf8_lossy(bytes.get(offset..).unwrap_or_default()).into_owned()
    }

    /// Waits until a timing line after `offset` carries `name`; returns its value.
    pub fn wait_for_field(
        &self,
        offset: usize,
        name: &str,
        timeout: Duration,
    ) -> Result<f64, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let text = self.read_from(offset);
            if let Some(value) = first_field(&text, name) {
                return Ok(value);
            }
            if Instant::now() >= deadline {
                let why = if text.contains(TIMING_TARGET) {
                    format!("it has timing lines, but none with `{name}`")
                } else {
                    "it has no `rho_tui::timing` lines".to_owned()
                };
                return Err(format!(
                    "{}: {why} within {timeout:?} (RHO_LOG={RHO_LOG}); the rho build may \
                     predate the timing log: rebuild it with `cargo build --release -p rho-cli`",
                    self.path.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

// ---- /proc ----

/// The children of every thread of `pid`.
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// The command name of `pid`.
pub fn comm(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|text| text.trim_end().to_owned())
}

/// User plus system CPU time of `pid` in clock ticks (`utime` + `stime` of `/proc/PID/stat`).
pub fn cpu_ticks(pid: u32) -> Result<u64, String> {
    let path = format!("/proc/{pid}/stat");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    stat_cpu_ticks(&text).ok_or_else(|| format!("{path}: no utime/stime in {text:?}"))
}

/// `utime` + `stime` (fields 14 and 15) of a `/proc/PID/stat` text; the command name in
/// parentheses may hold spaces, so fields are counted after its closing parenthesis.
pub fn stat_cpu_ticks(text: &str) -> Option<u64> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state).
    let utime: u64 = fields.get(14 - 3)?.parse().ok()?;
    let stime: u64 = fields.get(15 - 3)?.parse().ok()?;
    Some(utime + stime)
}

/// Clock ticks per second of `/proc/PID/stat` (`USER_HZ`, 100 on Linux).
pub const TICKS_PER_SECOND: f64 = 100.0;

/// One thread's CPU figures from `/proc/PID/task/TID/schedstat`, far finer than the ticks of
/// `stat`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadCpu {
    /// The thread id.
    pub tid: u32,
    /// Its name (`comm`).
    pub name: String,
    /// Time on a CPU, in nanoseconds (the first field).
    pub ns: u64,
    /// Times it was scheduled onto a CPU (the third field): wake-ups, near enough.
    pub slices: u64,
}

/// The CPU figures of every thread of `pid`.
pub fn threads_cpu(pid: u32) -> Result<Vec<ThreadCpu>, String> {
    let dir = format!("/proc/{pid}/task");
    let tasks = std::fs::read_dir(&dir).map_err(|e| format!("cannot read {dir}: {e}"))?;
    Ok(tasks
        .flatten()
        .filter_map(|task| {
            let tid = task.file_name().to_str()?.parse().ok()?;
            let name = std::fs::read_to_string(task.path().join("comm")).ok()?;
            let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            let fields: Vec<u64> = stat
                .split_whitespace()
                .filter_map(|f| f.parse().ok())
                .collect();
            Some(ThreadCpu {
                tid,
                name: name.trim_end().to_owned(),
                ns: *fields.first()?,
                slices: *fields.get(2)?,
            })
        })
        .collect())
}

/// Per thread name, the CPU nanoseconds and slices between two readings (threads that came or
/// went in between count from zero), busiest first.
pub fn threads_delta(before: &[ThreadCpu], after: &[ThreadCpu]) -> Vec<(String, u64, u64)> {
    let mut by_name: Vec<(String, u64, u64)> = Vec::new();
    for thread in after {
        let (ns0, slices0) = before
            .iter()
            .find(|t| t.tid == thread.tid)
            .map_or((0, 0), |t| (t.ns, t.slices));
        let (ns, slices) = (
            thread.ns.saturating_sub(ns0),
            thread.slices.saturating_sub(slices0),
        );
        match by_name.iter_mut().find(|(name, _, _)| *name == thread.name) {
            Some(entry) => {
                entry.1 += ns;
                entry.2 += slices;
            }
            None => by_name.push((thread.name.clone(), ns, slices)),
        }
    }
    by_name.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    by_name
}

/// The peak resident set of `pid` in KiB (`VmHWM` of `/proc/PID/status`).
pub fn vm_hwm_kib(pid: u32) -> Result<u64, String> {
    let path = format!("/proc/{pid}/status");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    text.lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("{path} has no VmHWM line"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_lines_are_parsed() {
        let line = "2026-12-02T01:13:00.123456Z DEBUG rho_tui::timing: draw_us=850 \
                    input_to_frame_us=2300";
        assert_eq!(
            timing_fields(line),
            Some(vec![("draw_us", 850.0), ("input_to_frame_us", 2300.0)])
        );
        assert_eq!(timing_fields("2026 WARN rho_core: draw_us=1"), None);
        let log = "x DEBUG rho_tui::timing: first_frame_ms=12.3\n\
                   x WARN rho_mcp: something\n\
                   x DEBUG rho_tui::timing: draw_us=900\n\
                   x DEBUG rho_tui::timing: draw_us=850 draw_cpu_us=700 input_to_frame_us=2300\n\
                   x DEBUG rho_tui::timing: conversation_frame_ms=95.1\n";
        assert_eq!(first_field(log, "first_frame_ms"), Some(12.3));
        assert_eq!(first_field(log, "conversation_frame_ms"), Some(95.1));
        assert_eq!(first_field(log, "nothing"), None);
        assert_eq!(draw_us_of(log, "first_frame_ms"), Some(900.0));
        assert_eq!(draw_us_of(log, "conversation_frame_ms"), None);
        assert_eq!(
            frames(log),
            vec![
                Frame {
                    draw_us: 900.0,
                    draw_cpu_us: None,
                    input_to_frame_us: None
                },
                Frame {
                    draw_us: 850.0,
                    draw_cpu_us: Some(700.0),
                    input_to_frame_us: Some(2300.0)
                }
            ]
        );
    }

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
    fn proc_stat_cpu_fields() {
        let stat = "4242 (rho (x) y) S 1 4242 4242 34816 4242 4194304 900 0 0 0 17 5 0 0 20 0 \
                    9 0 12345 100000 2000";
        assert_eq!(stat_cpu_ticks(stat), Some(22));
        assert_eq!(stat_cpu_ticks("4242 (rho) S 1"), None);
    }

    #[test]
    fn thread_deltas_are_summed_by_name() {
        let thread = |tid, name: &str, ns, slices| ThreadCpu {
            tid,
            name: name.to_owned(),
            ns,
            slices,
        };
        let before = [thread(1, "rho", 100, 5), thread(2, "worker", 50, 1)];
        let after = [
            thread(1, "rho", 150, 7),
            thread(2, "worker", 60, 2),
            thread(3, "worker", 200, 9),
        ];
        assert_eq!(
            threads_delta(&before, &after),
            vec![("worker".to_owned(), 210, 10), ("rho".to_owned(), 50, 2)]
        );
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
