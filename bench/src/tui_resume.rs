//! `rho-bench tui-resume`: resuming a 2,000-message session in the interactive `rho`: the time
//! to the first frame showing the conversation, the cost of paging back through it, and the
//! memory it takes, each against the same for a session with no messages.
//!
//! The bench writes both session files in rho's format (`docs/sessions.md`: a header line,
//! then one `message` line per message, and `usage` lines) and resumes each with
//! `rho --session FILE` on a pty. Figures, all from rho itself: `conversation_frame_ms` (from
//! its process start to the end of the first frame that shows the resumed conversation) from
//! its log; `draw_us` (wall) and `draw_cpu_us` (the drawing thread's CPU time, which the
//! goal is judged on: on a 2-core machine shared with the pty wrapper and the bench, a frame's
//! wall time also holds waits for a core) of the frames after each of 30 PageUp keys, one
//! every 50 ms; and `VmHWM`
//! (peak resident set) from `/proc/PID/status` before the bench quits (Ctrl-C twice).

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use crate::fakes::{FakeModel, fake_model_binary};
use crate::measure::rho_args;
use crate::scratch::Scratch;
use crate::stats::{self, verdict};
use crate::tui::{self, Log, PAGE_UP, PtyCommand, QUIT};
use crate::{Error, Resolved, context, machine};
use serde_json::{Value, json};

/// The issue's goal for the first frame of the resumed conversation.
const GOAL_CONVERSATION_MS: f64 = 150.0;
/// The goal for each frame while paging.
const GOAL_DRAW_MS: f64 = 4.0;
/// The goal for the peak resident set.
const GOAL_HWM_MIB: f64 = 80.0;
/// PageUp presses per run, and their spacing.
const PAGES: usize = 30;
const PAGE_INTERVAL: Duration = Duration::from_millis(50);
/// The model the session names and rho is given.
const MODEL: &str = "fake-model-1";
/// How long a resume may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Messages per exchange of [`exchange`].
const EXCHANGE: usize = 10;

/// One line of a session file.
fn entry_line(entry: &Value) -> String {
    format!("{entry}\n")
}

/// A `message` line of a session file.
fn message_entry(message: Value) -> String {
    entry_line(&json!({"type": "message", "message": message}))
}

/// A `message` line with only a role and text.
fn message_line(role: &str, content: &str) -> String {
    message_entry(json!({"role": role, "content": content}))
}

/// An assistant message that calls one tool (`arguments` as the model wrote them, a JSON text),
/// and the tool's result.
fn tool_round(id: &str, name: &str, arguments: &Value, result: &str) -> String {
    let call = json!({
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": id, "name": name, "arguments": arguments.to_string()}],
    });
    let answer = json!({"role": "tool", "content": result, "tool_call_id": id, "name": name});
    message_entry(call) + &message_entry(answer)
}

/// The `k`th exchange: [`EXCHANGE`] messages (questions, two tool calls with their results,
/// Markdown answers with headings, lists, code, a table and a quote) and a `usage` line.
fn exchange(k: usize) -> String {
    let file = format!("src/module_{k}.rs");
    let source: String = (1..=24)
        .map(|n| {
            format!("{n:>6}\tpub fn handle_{k}_{n}(input: &str) -> usize {{ input.len() * {n} }}\n")
        })
        .collect();
    let grep: String = (1..=10)
        .map(|n| {
            format!(
                "src/module_{}.rs:{}:pub fn handle_{k}_{n}(input: &str)\n",
                k + n,
                n * 3
            )
        })
        .collect();
    let mut text = String::new();
    text.push_str(&message_line(
        "user",
        &format!(
            "Question {k}: what does `{file}` do, and where is `handle_{k}_1` called?\n\n\
             - keep it short\n- show the code"
        ),
    ));
    text.push_str(&tool_round(
        &format!("call_{k}_1"),
        "read_file",
        &json!({"path": file}),
        &source,
    ));
    text.push_str(&tool_round(
        &format!("call_{k}_2"),
        "grep",
        &json!({"pattern": format!("handle_{k}_"), "path": "src"}),
        &grep,
    ));
    text.push_str(&message_line(
        "assistant",
        &format!(
            "## What `{file}` does\n\n\
             The module defines **24 handlers**, each returning a multiple of the input's \
             length. The *first* one is called from ten places; the important ones:\n\n\
             1. `src/module_{}.rs`, line 3, on every request;\n\
             2. `src/module_{}.rs`, line 6, in the retry path;\n\
             3. the tests.\n\n\
             ```rust\npub fn handle_{k}_1(input: &str) -> usize {{\n    input.len() * 1\n}}\n```\n\n\
             | handler | factor | callers |\n| --- | ---: | ---: |\n\
             | `handle_{k}_1` | 1 | 10 |\n| `handle_{k}_2` | 2 | 4 |\n| `handle_{k}_3` | 3 | 0 |\n\n\
             See [the docs](https://example.com/docs/{k}) for the calling convention.",
            k + 1,
            k + 2
        )
    ));
    text.push_str(&message_line(
        "user",
        &format!("Thanks. Is `handle_{k}_3` dead code?"),
    ));
    text.push_str(&message_line(
        "assistant",
        &format!(
            "Yes, as far as this workspace goes:\n\n\
             > nothing calls `handle_{k}_3`, and it is not exported from the crate.\n\n\
             - remove it, or\n- mark it `#[cfg(test)]` if the tests need it.\n\n\
             Removing it changes no behaviour."
        ),
    ));
    text.push_str(&message_line(
        "user",
        "Remove it then, and explain the change in one sentence.",
    ));
    text.push_str(&message_line(
        "assistant",
        &format!(
            "Done: `handle_{k}_3` is gone from `{file}`, because nothing called it and it was \
             not part of the public interface; the build and the tests are unchanged."
        ),
    ));
    text.push_str(&entry_line(&json!({
        "type": "usage",
        "usage": {
            "inputTokens": 5200,
            "outputTokens": 310,
            "totalTokens": 5510,
            "totalCost": 0.0,
            "requestCount": 3,
        },
    })));
    text
}

/// A session file of `messages` messages (whole exchanges, then single user messages to make
/// up the count) for the workspace `cwd`.
pub fn session_text(messages: usize, cwd: &Path) -> String {
    let mut text = entry_line(&json!({
        "type": "header",
        "version": 1,
        "id": "20261201T000000-0000bench",
        "cwd": cwd.to_string_lossy(),
        "created": 1_764_547_200,
        "model": MODEL,
    }));
    for k in 0..messages / EXCHANGE {
        text.push_str(&exchange(k));
    }
    for n in 0..messages % EXCHANGE {
        text.push_str(&message_line("user", &format!("One more thing ({n}).")));
    }
    text
}

/// Text of the last message of a `messages`-message session that has no space in it, so it
/// arrives whole on screen in the first frame that shows the conversation (rho's diffs skip
/// cells that did not change, blanks included).
fn last_message_marker(messages: usize) -> Option<String> {
    match messages % EXCHANGE {
        0 if messages == 0 => None,
        0 => Some(format!("handle_{}_3", messages / EXCHANGE - 1)),
        n => Some(format!("({})", n - 1)),
    }
}

/// What one resume measured.
struct Run {
    first_frame_ms: f64,
    conversation_ms: f64,
    /// The draw time of the conversation frame itself.
    conversation_draw_ms: f64,
    /// Each paging frame's draw time: (wall, CPU) in ms.
    page_draw_ms: Vec<(f64, f64)>,
    vm_hwm_kib: u64,
}

/// One session's figures.
struct Paging {
    /// Median time to the conversation frame.
    conversation_ms: f64,
    /// Paging frames' wall draw time.
    p50: f64,
    p99: f64,
    max: f64,
    /// Paging frames' CPU draw time.
    cpu_p99: f64,
    cpu_max: f64,
    /// Median VmHWM.
    hwm_mib: f64,
}

/// One session file and its runs.
struct Case {
    name: String,
    messages: usize,
    bytes: usize,
    marker: Option<String>,
    command: PtyCommand,
    runs: Vec<Run>,
}

/// Runs the resumes and prints the comparison.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let fake = fake_model_binary(resolved)?;
    let script_path = tui::script_binary()?;
    let load_at_start = machine::load();
    let scratch = Scratch::new("tui-resume")?;
    let home = scratch.dir("home")?;
    let project = scratch.dir("project")?;
    let rho_home = home.join(".rho");
    let sessions = scratch.dir("home/.rho/sessions/bench")?;
    let script = scratch.path().join("script.json");
    std::fs::write(&script, "[]\n")
        .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
    // The host starts with a provider (the status line names the model); no request is made.
    let model = FakeModel::start(&fake, scratch.path(), "model", &script, None)?;
    let endpoint = model.endpoint();
    let env = tui::pty_env(&home, &rho_home);
    let log = Log::new(&rho_home);

    let mut cases = Vec::new();
    for messages in [0, o.messages] {
        let text = session_text(messages, &project);
        let file = sessions.join(format!("session-{messages}.jsonl"));
        std::fs::write(&file, &text)
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        let command = PtyCommand::new(
            &format!("rho --session ({messages} messages)"),
            &resolved.rho,
            &[
                rho_args(&project, &["--endpoint", &endpoint, "--model", MODEL]),
                vec![OsStr::new("--session"), file.as_os_str()],
            ]
            .concat(),
            &env,
            &project,
        );
        cases.push(Case {
            name: if messages == 0 {
                "empty session".to_owned()
            } else {
                format!("{messages} messages")
            },
            messages,
            bytes: text.len(),
            marker: last_message_marker(messages),
            command,
            runs: Vec::with_capacity(o.runs),
        });
    }
    if let Some(case) = cases.last() {
        eprintln!("rho-bench: timing `{}`", case.command.command_line());
    }
    for i in 0..o.warmup + o.runs {
        // Alternate which goes first so a slow drift in the machine favours neither.
        for k in 0..cases.len() {
            let count = cases.len();
            let case = &mut cases[(i + k) % count];
            let run = resume(&mut case.command, case.marker.as_deref(), &log, i == 0)?;
            if i >= o.warmup {
                case.runs.push(run);
            }
        }
    }
    drop(model);
    report(resolved, &script_path, &load_at_start, &cases)
}

/// One resume: the conversation frame (checked to show the last message's `marker`), 30
/// PageUps, the peak RSS, Ctrl-C twice.
fn resume(
    command: &mut PtyCommand,
    marker: Option<&str>,
    log: &Log,
    check_size: bool,
) -> Result<Run, String> {
    let offset = log.len();
    let mut pty = command.spawn()?;
    let conversation_ms = log.wait_for_field(offset, "conversation_frame_ms", TIMEOUT)?;
    let first_frame_ms = log.wait_for_field(offset, "first_frame_ms", TIMEOUT)?;
    if let Some(marker) = marker {
        pty.wait_for(marker.as_bytes(), 0, TIMEOUT)?;
    }
    pty.wait_for(MODEL.as_bytes(), 0, TIMEOUT)?;
    if check_size {
        tui::check_size(&pty.output(), "tui-resume")?;
    }
    std::thread::sleep(Duration::from_millis(200));
    let start = log.len();
    let conversation_draw_ms = tui::draw_us_of(&log.read_from(offset), "conversation_frame_ms")
        .ok_or("rho's log has no draw_us line after conversation_frame_ms")?
        / 1e3;
    for k in 0..PAGES {
        if k > 0 {
            std::thread::sleep(PAGE_INTERVAL);
        }
        pty.send(PAGE_UP)?;
    }
    std::thread::sleep(Duration::from_millis(150));
    let page_draw_ms: Vec<(f64, f64)> = tui::frames(&log.read_from(start))
        .iter()
        .filter(|f| f.input_to_frame_us.is_some())
        .map(|f| (f.draw_us / 1e3, f.draw_cpu_us.unwrap_or(f.draw_us) / 1e3))
        .collect();
    if page_draw_ms.is_empty() {
        return Err(format!(
            "{}: no frame with input_to_frame_us after {PAGES} PageUp keys",
            command.command_line()
        ));
    }
    let pid = pty.rho_pid(Duration::from_secs(2))?;
    let vm_hwm_kib = tui::vm_hwm_kib(pid)?;
    pty.quit(&QUIT)?;
    Ok(Run {
        first_frame_ms,
        conversation_ms,
        conversation_draw_ms,
        page_draw_ms,
        vm_hwm_kib,
    })
}

fn report(
    resolved: &Resolved,
    script: &Path,
    load_at_start: &str,
    cases: &[Case],
) -> Result<(), Error> {
    let o = &resolved.options;
    println!(
        "interactive rho: resuming a session on a {}×{} pty (rho --session FILE)",
        tui::COLS,
        tui::ROWS
    );
    context::print(load_at_start, &resolved.rho);
    tui::print_pty(
        script,
        &format!(
            "--cwd <tmp>/project --endpoint http://127.0.0.1:PORT/v1 --model {MODEL} \
             --session FILE"
        ),
        "",
    );
    println!(
        "session:  exchanges of {EXCHANGE} messages: 3 user, 2 read_file/grep calls with their \
         results, 3 Markdown answers (heading, list, code block, table, quote, link)"
    );
    println!(
        "figures:  rho's first_frame_ms and conversation_frame_ms (process start → first frame \
         showing the conversation) and that frame's draw_us; draw_us and draw_cpu_us of the \
         frames after \
         {PAGES} PageUp, one every {} ms; VmHWM before quitting",
        PAGE_INTERVAL.as_millis()
    );
    println!("baseline: the same with a session file holding no messages (header only)");
    println!(
        "runs:     {} timed after {} warm-up per session; the two alternate",
        o.runs, o.warmup
    );
    println!();
    println!(
        "{:<14} {:>9} | {:>11} | {:>10} {:>7} {:>7} | {:>10}",
        "session", "file KiB", "first frame", "conv. ms", "min", "p90", "its draw"
    );
    let mut rows = Vec::new();
    for case in cases {
        let pick = |f: fn(&Run) -> f64| case.runs.iter().map(f).collect::<Vec<f64>>();
        let conversation = pick(|r| r.conversation_ms);
        let draws: Vec<f64> = case
            .runs
            .iter()
            .flat_map(|r| r.page_draw_ms.iter().map(|d| d.0))
            .collect();
        let cpu: Vec<f64> = case
            .runs
            .iter()
            .flat_map(|r| r.page_draw_ms.iter().map(|d| d.1))
            .collect();
        let row = Paging {
            conversation_ms: stats::median(&conversation),
            p50: stats::percentile(&draws, 50),
            p99: stats::percentile(&draws, 99),
            max: stats::max(&draws),
            cpu_p99: stats::percentile(&cpu, 99),
            cpu_max: stats::max(&cpu),
            hwm_mib: stats::median(&pick(|r| r.vm_hwm_kib as f64 / 1024.0)),
        };
        println!(
            "{:<14} {:>9.1} | {:>11.2} | {:>10.2} {:>7.2} {:>7.2} | {:>10.2}",
            case.name,
            case.bytes as f64 / 1024.0,
            stats::median(&pick(|r| r.first_frame_ms)),
            row.conversation_ms,
            conversation
                .iter()
                .copied()
                .reduce(f64::min)
                .unwrap_or(f64::NAN),
            stats::percentile(&conversation, 90),
            stats::median(&pick(|r| r.conversation_draw_ms)),
        );
        rows.push((case, draws.len(), row));
    }
    println!();
    println!(
        "{:<14} | {:>13} {:>9} {:>8} {:>8} | {:>8} {:>8} | {:>9}",
        "session", "PageUp frames", "draw p50", "p99", "max ms", "CPU p99", "CPU max", "VmHWM MiB"
    );
    for (case, frames, row) in &rows {
        println!(
            "{:<14} | {:>13} {:>9.3} {:>8.3} {:>8.3} | {:>8.3} {:>8.3} | {:>9.1}",
            case.name, frames, row.p50, row.p99, row.max, row.cpu_p99, row.cpu_max, row.hwm_mib
        );
    }
    println!();
    let [(_, _, empty), (big_case, _, big)] = &rows[..] else {
        return Err(Error::Failed("expected two sessions".into()));
    };
    let messages = big_case.messages;
    let (empty_ms, empty_draw, empty_hwm) = (empty.conversation_ms, empty.p50, empty.hwm_mib);
    let (big_ms, big_draw, big_hwm) = (big.conversation_ms, big.p50, big.hwm_mib);
    println!(
        "{messages} messages / empty: conversation frame {:.2}x ({:+.2} ms), paging draw p50 \
         {:.2}x, VmHWM {:+.1} MiB",
        big_ms / empty_ms,
        big_ms - empty_ms,
        big_draw / empty_draw,
        big_hwm - empty_hwm
    );
    println!(
        "goal: conversation frame ≤ {GOAL_CONVERSATION_MS:.0} ms ({messages} messages, median): \
         {} ({big_ms:.2} ms; empty session {empty_ms:.2} ms)",
        verdict(big_ms <= GOAL_CONVERSATION_MS)
    );
    println!(
        "goal: every paging frame ≤ {GOAL_DRAW_MS:.0} ms of rho's drawing: {} (CPU max {:.3} \
         ms; wall p99 {:.3} ms, median {big_draw:.3} ms, max {:.3} ms, which add the waits for \
         a core and for the pty)",
        verdict(big.cpu_max <= GOAL_DRAW_MS),
        big.cpu_max,
        big.p99,
        big.max
    );
    println!(
        "goal: VmHWM ≤ {GOAL_HWM_MIB:.0} MiB: {} ({big_hwm:.1} MiB; empty session \
         {empty_hwm:.1} MiB)",
        verdict(big_hwm <= GOAL_HWM_MIB)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (role, content, id of its first tool call, the call it answers, tool name).
    type Fields = (
        String,
        String,
        Option<String>,
        Option<String>,
        Option<String>,
    );

    fn fields(message: &Value) -> Fields {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let call = message
            .get("tool_calls")
            .and_then(Value::as_array)
            .and_then(|calls| calls.first());
        (
            text(message.get("role")).unwrap_or_default(),
            text(message.get("content")).unwrap_or_default(),
            text(call.and_then(|c| c.get("id"))),
            text(message.get("tool_call_id")),
            text(call.and_then(|c| c.get("name"))).or(text(message.get("name"))),
        )
    }

    #[test]
    fn session_file_round_trips_through_the_json_reader() {
        let text = session_text(2003, Path::new("/tmp/a \"b\""));
        let mut lines = text.lines();
        let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
        assert_eq!(header["type"], "header");
        assert_eq!(header["version"], 1);
        assert_eq!(header["model"], MODEL);
        assert_eq!(header["cwd"], "/tmp/a \"b\"");
        let mut messages = Vec::new();
        let mut usage = 0;
        for line in lines {
            let entry: Value = serde_json::from_str(line).unwrap();
            match entry["type"].as_str() {
                Some("message") => messages.push(fields(&entry["message"])),
                Some("usage") => usage += 1,
                other => panic!("unexpected entry {other:?}"),
            }
        }
        assert_eq!(messages.len(), 2003);
        assert_eq!(usage, 200);
        // Every tool result answers the call just before it, by id and name.
        let mut results = 0;
        for pair in messages.windows(2) {
            if let [call, result] = pair
                && result.0 == "tool"
            {
                results += 1;
                assert_eq!(call.0, "assistant");
                assert!(call.2.is_some());
                assert_eq!(call.2, result.3);
                assert_eq!(call.4, result.4);
            }
        }
        assert_eq!(results, 400);
        // A tool call's arguments are the JSON text the model wrote.
        let first_call = text
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .find_map(|entry| {
                entry["message"]["tool_calls"][0]["arguments"]
                    .as_str()
                    .map(str::to_owned)
            })
            .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&first_call).unwrap(),
            json!({"path": "src/module_0.rs"})
        );
        assert!(messages[5].1.contains("```rust\n"));
        assert!(
            messages
                .iter()
                .all(|m| ["user", "assistant", "tool"].contains(&m.0.as_str()))
        );
        assert_eq!(session_text(0, Path::new("/p")).lines().count(), 1);
        assert_eq!(messages[2002].1, "One more thing (2).");
        assert_eq!(last_message_marker(2003).as_deref(), Some("(2)"));
        let text = session_text(2000, Path::new("/p"));
        let last = text
            .lines()
            .rev()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .find(|entry| entry["type"] == "message")
            .unwrap();
        let last = fields(&last["message"]);
        assert!(last.1.contains(&last_message_marker(2000).unwrap()));
        assert_eq!(last_message_marker(0), None);
    }
}
