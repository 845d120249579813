//! `rho-bench tui-keys`: keystroke-to-frame latency of the interactive `rho` while a reply
//! streams at about 1,000 tokens per second, against the same keystrokes with nothing
//! streaming; and the CPU rho burns once the reply has ended and nothing happens.
//!
//! Per session (one pty'd `rho` against `fake-model`): once the status line names the model,
//! the bench types 200 characters into the message box, one every 15 ms (`--key-ms`; faster
//! than rho's 60 frames per second, so the latency includes waiting for a frame), and clears
//! the box with Ctrl-C (the baseline); then it sends a prompt, and as soon as the reply's
//! first word is on screen it types 200 more characters (steers-in-waiting: no Enter). The
//! latency of each frame that shows typed keys is rho's own `input_to_frame_us` (from reading
//! the key off the terminal to the end of the frame's write), read from its log between
//! offsets taken around each typing phase. The reply has ended when its last word is in the
//! session file; then the CPU time of the rho process (`utime` + `stime` of `/proc/PID/stat`,
//! and the finer `schedstat` of each of its threads) is read 3 s apart.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::fakes::{FakeModel, fake_model_binary, script_text as model_script};
use crate::measure::rho_args;
use crate::scratch::Scratch;
use crate::stats::{self, verdict};
use crate::tui::{self, CTRL_C, Frame, Log, Pty, PtyCommand, QUIT};
use crate::{Error, Resolved, context, machine};

/// The issue's goal for the p99 keystroke-to-frame latency while a reply streams.
const GOAL_P99_MS: f64 = 10.0;
/// Idle CPU below this counts as "about zero".
const GOAL_IDLE_MS_PER_S: f64 = 5.0;
/// Characters typed per phase.
const KEYS: usize = 200;
/// The model name rho is given (and shows in its status line once the host is up).
const MODEL: &str = "fake-model-1";
/// How long the bench watches the idle rho.
const IDLE_WINDOW: Duration = Duration::from_secs(3);
/// The reply's words at the default key spacing: about 10.5 bytes each, so about 2.6 tokens
/// (bytes ÷ 4) per streamed chunk; fake-model sends one chunk per word, 1 ms apart (about
/// 2.5 ms with its timer), so it streams for about 6.5 s, twice the typing. Slower typing
/// (`--key-ms`) gets a proportionally longer reply.
const REPLY_WORDS: usize = 2_600;
/// `chunk_delay_ms` of the reply.
const CHUNK_DELAY_MS: u64 = 1;
/// The reply's first word (seen on screen: the stream has started) and last word (seen in the
/// session file: the turn has ended).
const FIRST_WORD: &str = "Zanzibarian";
const LAST_WORD: &str = "Fin-de-reply-marker";
/// The prompt the bench sends.
const PROMPT: &str = "tell me a long story";
/// What the bench types into the message box (cycled; no `/` or `@`, which open palettes).
const TYPED: &[u8] = b"the quick brown fox jumps over the lazy dog ";
/// How long startup, streaming and the end of a turn may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Time for the last typed key's frame (and its log line) after the last key.
const SETTLE: Duration = Duration::from_millis(150);

/// The words of the reply for keys `key_ms` apart.
fn reply_words(key_ms: u64) -> usize {
    let scaled = REPLY_WORDS as u64 * key_ms.max(15) / 15;
    usize::try_from(scaled).unwrap_or(usize::MAX)
}

/// The streamed reply of `words_in_reply` words: Markdown prose with headings, emphasis,
/// lists, code blocks and quotes.
fn reply_text(words_in_reply: usize) -> String {
    const PROSE: [&str; 12] = [
        "streaming",
        "terminal",
        "renderer",
        "**bolded**",
        "paragraph",
        "`inline`",
        "keystroke",
        "latencies",
        "*emphasis*",
        "measuring",
        "framebuffer",
        "composing",
    ];
    let mut words: Vec<String> = vec![FIRST_WORD.to_owned()];
    let mut n = 1;
    while words.len() < words_in_reply.saturating_sub(1) {
        let section = n / 120;
        match n % 120 {
            0 => words.push(format!("\n\n## Section {section}\n\n")),
            40 => words.push("\n\n- listed".to_owned()),
            44 | 48 => words.push("\n- listed".to_owned()),
            60 => words
                .push("\n\n```rust\nfn frame(n: u32) -> u32 {\n    n + 1\n}\n```\n\n".to_owned()),
            80 => words.push("\n\n> quoted".to_owned()),
            90 => words.push("\n\n".to_owned() + PROSE[n % PROSE.len()]),
            _ => words.push(PROSE[(n * 7) % PROSE.len()].to_owned()),
        }
        n += 1;
    }
    words.push(LAST_WORD.to_owned());
    words.join(" ")
}

/// fake-model's script: one reply per session.
fn script_text(sessions: usize, reply: &str) -> String {
    let turn = json!({"content": reply, "chunk_delay_ms": CHUNK_DELAY_MS});
    model_script(&vec![turn; sessions])
}

/// `KEYS` characters of [`TYPED`].
fn typed_text() -> Vec<u8> {
    TYPED.iter().copied().cycle().take(KEYS).collect()
}

/// What one session measured.
struct Session {
    idle: Vec<Frame>,
    streaming: Vec<Frame>,
    /// The streaming typing phase, first key to the end of the settle time.
    typing: Duration,
    /// The reply's first word on screen to its end in the session file.
    stream: Duration,
    idle_cpu_ms_per_s: f64,
    idle_cpu_ns_per_s: f64,
    /// Per thread name: CPU ms and wake-ups per second while idle.
    idle_threads: Vec<(String, f64, f64)>,
    vm_hwm_kib: u64,
}

/// Runs the sessions and prints the comparison.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let fake = fake_model_binary(resolved)?;
    let script_path = tui::script_binary()?;
    let load_at_start = machine::load();
    let scratch = Scratch::new("tui-keys")?;
    let home = scratch.dir("home")?;
    let project = scratch.dir("project")?;
    let rho_home = home.join(".rho");
    let script = scratch.path().join("script.json");
    let reply = reply_text(reply_words(o.key_ms));
    std::fs::write(&script, script_text(o.warmup + o.runs, &reply))
        .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
    let model = FakeModel::start(&fake, scratch.path(), "model", &script, None)?;
    let endpoint = model.endpoint();
    let env = tui::pty_env(&home, &rho_home);
    let mut command = PtyCommand::new(
        "rho (tui-keys)",
        &resolved.rho,
        &rho_args(&project, &["--endpoint", &endpoint, "--model", MODEL]),
        &env,
        &project,
    );
    eprintln!("rho-bench: timing `{}`", command.command_line());
    let log = Log::new(&rho_home);
    let sessions_dir = rho_home.join("sessions");
    let interval = Duration::from_millis(o.key_ms);

    let mut timed = Vec::with_capacity(o.runs);
    for i in 0..o.warmup + o.runs {
        let session = one_session(&mut command, &log, &sessions_dir, interval, i == 0)?;
        eprintln!(
            "rho-bench: session {}: {} idle and {} streaming frames with keys",
            i + 1,
            session
                .idle
                .iter()
                .filter(|f| f.input_to_frame_us.is_some())
                .count(),
            session
                .streaming
                .iter()
                .filter(|f| f.input_to_frame_us.is_some())
                .count()
        );
        if i >= o.warmup {
            timed.push(session);
        }
    }
    drop(model);
    report(
        resolved,
        &fake,
        &script_path,
        &load_at_start,
        interval,
        &reply,
        &timed,
    )
}

/// The session files' text, concatenated (rho writes one per session).
fn sessions_text(dir: &Path) -> String {
    let mut text = String::new();
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(part) = std::fs::read_to_string(&path) {
                text.push_str(&part);
            }
        }
    }
    text
}

fn one_session(
    command: &mut PtyCommand,
    log: &Log,
    sessions_dir: &Path,
    interval: Duration,
    check_size: bool,
) -> Result<Session, String> {
    let typed = typed_text();
    let mut pty = command.spawn()?;
    pty.wait_for(MODEL.as_bytes(), 0, TIMEOUT)?;
    if check_size {
        tui::check_size(&pty.output(), "tui-keys")?;
    }
    std::thread::sleep(Duration::from_millis(300));

    // Baseline: the same typing with nothing streaming.
    let start = log.len();
    pty.type_text(&typed, interval)?;
    std::thread::sleep(SETTLE);
    log.wait_for_field(start, "input_to_frame_us", Duration::from_secs(2))?;
    let idle = tui::frames(&log.read_from(start));
    pty.send(CTRL_C)?;
    std::thread::sleep(Duration::from_millis(100));

    // The prompt; then typing while the reply streams.
    let ended_before = sessions_text(sessions_dir).matches(LAST_WORD).count();
    pty.type_text(PROMPT.as_bytes(), Duration::from_millis(5))?;
    let from = pty.len();
    pty.send(b"\r")?;
    let first = pty.wait_for(FIRST_WORD.as_bytes(), from, TIMEOUT)?;
    let start = log.len();
    let typing_began = Instant::now();
    pty.type_text(&typed, interval)?;
    std::thread::sleep(SETTLE);
    let typing = typing_began.elapsed();
    let streaming = tui::frames(&log.read_from(start));
    if sessions_text(sessions_dir).matches(LAST_WORD).count() > ended_before {
        return Err(format!(
            "the reply ended before the bench had typed its {KEYS} characters; the streaming \
             figures would include idle frames (fake-model streamed faster than expected)"
        ));
    }
    let deadline = Instant::now() + TIMEOUT;
    let ended = loop {
        if sessions_text(sessions_dir).matches(LAST_WORD).count() > ended_before {
            break Instant::now();
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the reply did not end (its last word is not in any session file under {}) \
                 within {TIMEOUT:?}",
                sessions_dir.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };

    // Idle: the reply has ended, the last frames are drawn; nothing happens for 3 s.
    std::thread::sleep(Duration::from_millis(500));
    let pid = pty.rho_pid(Duration::from_secs(2))?;
    let (ticks0, threads0, t0) = (tui::cpu_ticks(pid)?, tui::threads_cpu(pid)?, Instant::now());
    std::thread::sleep(IDLE_WINDOW);
    let (ticks1, threads1, t1) = (tui::cpu_ticks(pid)?, tui::threads_cpu(pid)?, Instant::now());
    let seconds = (t1 - t0).as_secs_f64();
    let threads = tui::threads_delta(&threads0, &threads1);
    let idle_ns: u64 = threads.iter().map(|(_, ns, _)| ns).sum();
    let vm_hwm_kib = tui::vm_hwm_kib(pid)?;
    quit(pty)?;
    Ok(Session {
        idle,
        streaming,
        typing,
        stream: ended - first.at,
        idle_cpu_ms_per_s: (ticks1 - ticks0) as f64 * 1e3 / tui::TICKS_PER_SECOND / seconds,
        idle_cpu_ns_per_s: idle_ns as f64 / seconds,
        idle_threads: threads
            .into_iter()
            .map(|(name, ns, slices)| (name, ns as f64 / 1e6 / seconds, slices as f64 / seconds))
            .collect(),
        vm_hwm_kib,
    })
}

/// Ctrl-C clears the typed text, Ctrl-C twice quits.
fn quit(pty: Pty) -> Result<(), String> {
    pty.quit(&[CTRL_C, QUIT[0], QUIT[1]])
}

/// Latency figures of the frames that showed keys, in ms: (count, p50, p99, max, p99 of
/// draw_us among them).
fn latency(frames: &[Frame]) -> (usize, f64, f64, f64, f64) {
    let input: Vec<&Frame> = frames
        .iter()
        .filter(|f| f.input_to_frame_us.is_some())
        .collect();
    let ms: Vec<f64> = input
        .iter()
        .filter_map(|f| f.input_to_frame_us)
        .map(|us| us / 1e3)
        .collect();
    let draw: Vec<f64> = input.iter().map(|f| f.draw_us / 1e3).collect();
    (
        ms.len(),
        stats::percentile(&ms, 50),
        stats::percentile(&ms, 99),
        stats::max(&ms),
        stats::percentile(&draw, 99),
    )
}

fn report(
    resolved: &Resolved,
    fake: &Path,
    script: &Path,
    load_at_start: &str,
    interval: Duration,
    reply: &str,
    sessions: &[Session],
) -> Result<(), Error> {
    let o = &resolved.options;
    if sessions.is_empty() {
        return Err(Error::Failed("no timed sessions".into()));
    }
    let all = |pick: fn(&Session) -> &Vec<Frame>| -> Vec<Frame> {
        sessions
            .iter()
            .flat_map(|s| pick(s).iter().copied())
            .collect()
    };
    let idle = all(|s| &s.idle);
    let streaming = all(|s| &s.streaming);
    let tokens = reply.len() as f64 / 4.0;
    let stream_s = stats::median(
        &sessions
            .iter()
            .map(|s| s.stream.as_secs_f64())
            .collect::<Vec<_>>(),
    );
    let typing_s = stats::median(
        &sessions
            .iter()
            .map(|s| s.typing.as_secs_f64())
            .collect::<Vec<_>>(),
    );
    let stream_frames: Vec<f64> = streaming.iter().map(|f| f.draw_us / 1e3).collect();

    println!(
        "interactive rho: keystroke → frame while a reply streams, on a {}×{} pty",
        tui::COLS,
        tui::ROWS
    );
    context::print(load_at_start, &resolved.rho);
    tui::print_pty(
        script,
        &format!("--cwd <tmp>/project --endpoint http://127.0.0.1:PORT/v1 --model {MODEL}"),
        "",
    );
    println!(
        "model:    {} streaming a {:.1} KiB Markdown reply (≈{tokens:.0} tokens at 4 bytes each) \
         in {} chunks: {stream_s:.2} s from its first word on screen to its end \
         (≈{:.0} tokens/s)",
        fake.display(),
        reply.len() as f64 / 1024.0,
        reply.split(' ').count(),
        tokens / stream_s
    );
    println!(
        "keys:     {KEYS} characters, one every {} ms ({typing_s:.2} s), into the message box \
         (no Enter); latency = rho's input_to_frame_us (key read → frame written) per frame \
         showing keys, from its log",
        interval.as_millis()
    );
    println!("baseline: the same typing in the same session before the prompt, nothing streaming");
    println!(
        "sessions: {} timed after {} warm-up (a fresh rho each)",
        o.runs, o.warmup
    );
    println!();
    println!(
        "{:<22} {:>7} {:>8} {:>8} {:>8} | {:>14}",
        "input → frame", "frames", "p50 ms", "p99 ms", "max ms", "draw p99 ms"
    );
    let (n_idle, idle50, idle99, idle_max, idle_draw) = latency(&idle);
    let (n_stream, s50, s99, s_max, s_draw) = latency(&streaming);
    println!(
        "{:<22} {n_idle:>7} {idle50:>8.2} {idle99:>8.2} {idle_max:>8.2} | {idle_draw:>14.2}",
        "nothing streaming"
    );
    println!(
        "{:<22} {n_stream:>7} {s50:>8.2} {s99:>8.2} {s_max:>8.2} | {s_draw:>14.2}",
        "reply streaming"
    );
    println!();
    println!(
        "every frame while streaming: {} frames, draw p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; \
         {:.0} frames/s",
        stream_frames.len(),
        stats::percentile(&stream_frames, 50),
        stats::percentile(&stream_frames, 99),
        stats::max(&stream_frames),
        stream_frames.len() as f64 / sessions.len() as f64 / typing_s
    );
    let idle_ms: Vec<f64> = sessions.iter().map(|s| s.idle_cpu_ms_per_s).collect();
    let idle_fine: Vec<f64> = sessions.iter().map(|s| s.idle_cpu_ns_per_s / 1e6).collect();
    let hwm: Vec<f64> = sessions
        .iter()
        .map(|s| s.vm_hwm_kib as f64 / 1024.0)
        .collect();
    println!(
        "idle after the reply ({} s): {:.2} ms CPU per s by /proc/PID/stat (10 ms ticks), \
         {:.3} ms per s by the threads' schedstat (median of sessions; max {:.3}); VmHWM {:.1} MiB",
        IDLE_WINDOW.as_secs(),
        stats::median(&idle_ms),
        stats::median(&idle_fine),
        stats::max(&idle_fine),
        stats::median(&hwm)
    );
    if let Some(last) = sessions.last() {
        let threads: Vec<String> = last
            .idle_threads
            .iter()
            .filter(|(_, ms, wakeups)| *ms > 0.0 || *wakeups > 0.0)
            .map(|(name, ms, wakeups)| format!("{name} {ms:.3} ms/s, {wakeups:.0} wake-ups/s"))
            .collect();
        println!("idle CPU by thread (last session): {}", threads.join("; "));
    }
    println!();
    println!(
        "draw time of every frame while typing during the stream, by quarter of the typing phase \
         (the reply grows at ≈{:.1} KiB/s):",
        reply.len() as f64 / 1024.0 / stream_s
    );
    println!(
        "{:<10} {:>14} {:>7} {:>9} {:>8} {:>8}",
        "quarter", "reply KiB", "frames", "draw p50", "p99", "max ms"
    );
    let per_quarter = |session: &Session, q: usize| -> Vec<f64> {
        let n = session.streaming.len();
        session.streaming[n * q / 4..n * (q + 1) / 4]
            .iter()
            .map(|f| f.draw_us / 1e3)
            .collect()
    };
    for q in 0..4 {
        let draws: Vec<f64> = sessions.iter().flat_map(|s| per_quarter(s, q)).collect();
        let kib = |at: f64| at * typing_s * reply.len() as f64 / 1024.0 / stream_s;
        println!(
            "{:<10} {:>14} {:>7} {:>9.2} {:>8.2} {:>8.2}",
            q + 1,
            format!(
                "{:.1}–{:.1}",
                kib(q as f64 / 4.0),
                kib((q + 1) as f64 / 4.0)
            ),
            draws.len(),
            stats::percentile(&draws, 50),
            stats::percentile(&draws, 99),
            stats::max(&draws)
        );
    }
    println!();
    println!(
        "streaming/baseline p99: {:.2}x ({:+.2} ms)",
        s99 / idle99,
        s99 - idle99
    );
    println!(
        "goal: keystroke → frame p99 ≤ {GOAL_P99_MS:.0} ms while a reply streams: {} ({s99:.2} \
         ms; {idle99:.2} ms with nothing streaming)",
        verdict(s99 <= GOAL_P99_MS)
    );
    let idle_cpu = stats::median(&idle_fine);
    println!(
        "goal: idle CPU ≈ 0 (< {GOAL_IDLE_MS_PER_S:.0} ms per s): {} ({idle_cpu:.3} ms per s by \
         schedstat; {:.2} by /proc/PID/stat)",
        verdict(idle_cpu < GOAL_IDLE_MS_PER_S),
        stats::median(&idle_ms)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn script_is_json_with_one_reply_per_session() {
        let reply = reply_text(reply_words(15));
        let doc: Value = serde_json::from_str(&script_text(3, &reply)).unwrap();
        let turns = doc.as_array().unwrap();
        assert_eq!(turns.len(), 3);
        assert_eq!(turns[2]["chunk_delay_ms"], CHUNK_DELAY_MS);
        let content = turns[2]["content"].as_str().unwrap();
        assert_eq!(content, reply);
        assert!(content.starts_with(FIRST_WORD) && content.ends_with(LAST_WORD));
        assert_eq!(content.matches(LAST_WORD).count(), 1);
        assert!(content.split(' ').count() >= REPLY_WORDS);
        assert_eq!(reply_words(45), 3 * REPLY_WORDS);
        assert_eq!(reply_words(5), REPLY_WORDS);
    }
}
