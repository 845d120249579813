//! `rho-bench rpc-turn`: what one `rho rpc` turn with one tool call costs on top of the model
//! server's own time.
//!
//! Two `fake-model` servers run the same script: per turn, a `read_file` call on `notes.txt`,
//! then a one-sentence answer naming the turn. One `rho rpc` process talks to the first server;
//! each turn's clock starts before the `prompt` line is written and stops once its response line
//! has been read (two model requests, one tool call and every notification in between).
//!
//! The baseline follows each rho turn: the bench POSTs the two request bodies rho sends in that
//! turn to the second server straight over HTTP from this process (one connection per request,
//! the SSE stream read to EOF, as the server closes it), and reads `notes.txt` directly between
//! them. The bodies are recorded first, in an untimed pass of a separate `rho rpc` against a
//! logging server (rho is deterministic here: same script, directories and flags); in the timed
//! pass no server logs, and the input-token count the server reports for each of rho's requests
//! (its length ÷ 4) is checked against the recorded body. So rho turn and baseline turn carry the
//! same bytes to the same kind of server, and the difference is what rho adds: JSON-RPC, the
//! agent loop, building the requests, its HTTP client and SSE parser, the tool beyond a bare
//! read, and the notifications.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fakes::{FakeModel, fake_model_binary, script_text as model_script};
use crate::json_lines::{self, prompt_request};
use crate::rpc_ready::{LineChild, RpcPlace};
use crate::scratch::Scratch;
use crate::stats::{Summary, signed, verdict};
use crate::{Error, Resolved, context, machine};

/// The issue's goal: rho adds at most this much per turn beyond the model and the tool.
const GOAL_MS: f64 = 2.0;

/// The file the scripted tool call reads, and what it holds.
const FILE_NAME: &str = "notes.txt";
const FILE_TEXT: &str = "the answer is 42\n";

/// The scripted answer of turn `n` (1-based), which rho must return as its reply.
fn reply_of(n: usize) -> String {
    format!("Turn {n}: {FILE_NAME} says the answer is 42.")
}

/// The script both servers serve: per turn, the tool call, then the answer.
fn script_text(turns: usize) -> String {
    let turns: Vec<Value> = (1..=turns)
        .flat_map(|n| {
            [
                json!({"tool_calls": [{"name": "read_file", "arguments": {"path": FILE_NAME}}]}),
                json!({"content": reply_of(n)}),
            ]
        })
        .collect();
    model_script(&turns)
}

/// The bodies of the requests in a `fake-model --log` file, in order. fake-model logs each body
/// as serde_json wrote it back from what it parsed, which is also what it counts the input
/// tokens of; writing it back once more gives the same bytes.
fn logged_bodies(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    text.lines()
        .filter(|line| !line.is_empty())
        .map(|line| {
            let quoted = || line.chars().take(200).collect::<String>();
            let entry: Value = serde_json::from_str(line).map_err(|e| {
                format!(
                    "{}: a log line is not JSON ({e}): {}",
                    path.display(),
                    quoted()
                )
            })?;
            entry
                .get("body")
                .map(|body| body.to_string().into_bytes())
                .ok_or_else(|| {
                    format!("{}: a log line has no `body`: {}", path.display(), quoted())
                })
        })
        .collect()
}

/// An HTTP/1.1 POST of `body` to the chat-completions path, built outside the timed window.
fn http_request(port: u16, body: &[u8]) -> Vec<u8> {
    let mut request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
         Content-Type: application/json\r\nAccept: text/event-stream\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    request
}

/// Sends `request` on a new connection and reads the response to EOF (the server closes it).
fn exchange(port: u16, request: &[u8], response: &mut Vec<u8>) -> Result<(), String> {
    response.clear();
    let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port))
        .map_err(|e| format!("cannot connect to 127.0.0.1:{port}: {e}"))?;
    stream
        .set_nodelay(true)
        .and_then(|()| stream.write_all(request))
        .and_then(|()| stream.read_to_end(response).map(drop))
        .map_err(|e| format!("request to 127.0.0.1:{port} failed: {e}"))
}

/// Checks one streamed answer of the baseline server: 200, complete, holding `needle`.
fn check_stream(response: &[u8], needle: &str, what: &str) -> Result<(), String> {
    let text = String::from_utf8_lossy(response);
    let complete = text.starts_with("HTTP/1.1 200")
        && text.ends_with("0\r\n\r\n")
        && text.contains("data: [DONE]");
    if !complete || !text.contains(needle) {
        return Err(format!(
            "baseline: the {what} answer is not a complete stream with {needle}:\n{}",
            text.chars().take(2000).collect::<String>()
        ));
    }
    Ok(())
}

/// Checks one rho turn: every line JSON-RPC, the `read_file` call succeeded with the file's
/// text, and the response carries the scripted reply.
fn check_turn(lines: &[String], id: usize) -> Result<(), String> {
    let mut tool_ok = false;
    let mut response = None;
    for line in lines {
        let message = json_lines::rpc_line(line)?;
        let params = &message["params"];
        if message["method"] == "tool/result" {
            let output = params["output"].as_str().unwrap_or("");
            tool_ok = params["name"] == "read_file"
                && params["is_error"] == false
                && output.contains(FILE_TEXT.trim_end());
            if !tool_ok {
                return Err(format!("turn {id}: the read_file call failed: {line}"));
            }
        }
        if message.get("method").is_none() {
            response = Some((line, message));
        }
    }
    let Some((line, response)) = response else {
        return Err(format!("turn {id}: no response line"));
    };
    let result = &response["result"];
    let expected = reply_of(id);
    if result["reply"] != expected || result["finishReason"] != "stop" {
        return Err(format!(
            "turn {id}: expected the reply {expected:?} with finishReason \"stop\", got {line}"
        ));
    }
    if !tool_ok {
        return Err(format!(
            "turn {id}: no tool/result notification before the response"
        ));
    }
    Ok(())
}

/// One timed turn of each path.
struct Turn {
    rho: Duration,
    baseline: Duration,
    request1: Duration,
    request2: Duration,
    read: Duration,
    body_bytes: usize,
}

/// Where rho runs and what it is given.
struct Setup<'a> {
    place: RpcPlace<'a>,
    config: PathBuf,
}

impl Setup<'_> {
    /// `rho rpc` against `model`, started and past its `ready` line.
    fn start_rho(&self, model: &FakeModel, name: &str) -> Result<LineChild, String> {
        let endpoint = model.endpoint();
        let mut command = self.place.command(name, &self.config, &endpoint)?;
        command.spawn_ready()
    }
}

/// Sends prompt `n` and reads up to its response into `lines`; returns the time from writing
/// the prompt to reading the response (each line's time is taken before it is parsed).
fn rho_turn(rpc: &mut LineChild, n: usize, lines: &mut Vec<String>) -> Result<Duration, String> {
    let prompt = prompt_request(n, &format!("Turn {n}: what does {FILE_NAME} say?"));
    lines.clear();
    let start = Instant::now();
    rpc.write_line(&prompt)?;
    let elapsed = loop {
        let mut line = String::new();
        rpc.read_line(&mut line)?;
        let elapsed = start.elapsed();
        let done = json_lines::is_response(&json_lines::parse(&line, "rho")?);
        lines.push(line);
        if done {
            break elapsed;
        }
    };
    check_turn(lines, n)?;
    Ok(elapsed)
}

/// The `inputTokens` of every `usage` notification: fake-model reports a request's length in
/// bytes ÷ 4, which ties each request rho sent to the body the baseline replays.
fn input_tokens(lines: &[String]) -> Vec<Option<usize>> {
    lines
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| message["method"] == "usage")
        .map(|message| {
            let tokens = message["params"]["usage"]["inputTokens"].as_u64()?;
            usize::try_from(tokens).ok()
        })
        .collect()
}

/// Runs the turns and prints the comparison.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let fake = fake_model_binary(resolved)?;
    let load_at_start = machine::load();
    let scratch = Scratch::new("rpc-turn")?;
    let setup = Setup {
        place: RpcPlace::new(&resolved.rho, &scratch)?,
        config: scratch.path().join("config.toml"),
    };
    let file = setup.place.project.join(FILE_NAME);
    std::fs::write(&file, FILE_TEXT)
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    std::fs::write(&setup.config, "[agent]\npermission_mode = \"allow-all\"\n")
        .map_err(|e| format!("cannot write {}: {e}", setup.config.display()))?;
    let turns = o.warmup + o.runs;
    let script = scratch.path().join("script.json");
    std::fs::write(&script, script_text(turns))
        .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
    let mut lines: Vec<String> = Vec::with_capacity(32);

    // Pass 1, untimed: record the bodies rho sends. fake-model writes its log token by token
    // (thousands of small writes per request), so no server logs during the timed pass.
    let log = scratch.path().join("requests.jsonl");
    let recorder = FakeModel::start(&fake, scratch.path(), "recorder", &script, Some(&log))?;
    let mut rpc = setup.start_rho(&recorder, "recording pass")?;
    for n in 1..=turns {
        rho_turn(&mut rpc, n, &mut lines)?;
    }
    rpc.finish()?;
    drop(recorder);
    let bodies = logged_bodies(&log)?;
    if bodies.len() != 2 * turns {
        return Err(Error::Failed(format!(
            "rho made {} model requests in {turns} turns, expected {}",
            bodies.len(),
            2 * turns
        )));
    }

    // Pass 2, timed: a fresh rho against one server, the recorded bodies against the other.
    let rho_model = FakeModel::start(&fake, scratch.path(), "rho-model", &script, None)?;
    let base_model = FakeModel::start(&fake, scratch.path(), "baseline-model", &script, None)?;
    let mut rpc = setup.start_rho(&rho_model, "timed pass")?;
    let (mut answer1, mut answer2) = (Vec::new(), Vec::new());
    let mut timed: Vec<Turn> = Vec::with_capacity(o.runs);
    for (n, pair) in (1..=turns).zip(bodies.chunks_exact(2)) {
        let rho = rho_turn(&mut rpc, n, &mut lines)?;
        let [body1, body2] = pair else {
            return Err(Error::Failed("bodies come in pairs".into()));
        };
        let expected = vec![Some(body1.len() / 4), Some(body2.len() / 4)];
        let reported = input_tokens(&lines);
        if reported != expected {
            return Err(Error::Failed(format!(
                "turn {n}: rho's requests are not the recorded ones: the server counted \
                 {reported:?} input tokens, the recorded bodies give {expected:?}"
            )));
        }
        let request1 = http_request(base_model.port, body1);
        let request2 = http_request(base_model.port, body2);
        let start = Instant::now();
        exchange(base_model.port, &request1, &mut answer1)?;
        let after1 = Instant::now();
        let text = std::fs::read(&file);
        let after_read = Instant::now();
        exchange(base_model.port, &request2, &mut answer2)?;
        let end = Instant::now();
        let text = text.map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        if text != FILE_TEXT.as_bytes() {
            return Err(Error::Failed(format!("{} changed", file.display())));
        }
        check_stream(&answer1, r#""name":"read_file""#, "tool-call")?;
        check_stream(&answer2, &format!(r#""content":"{n}: ""#), "text")?;
        if n > o.warmup {
            timed.push(Turn {
                rho,
                baseline: end - start,
                request1: after1 - start,
                request2: end - after_read,
                read: after_read - after1,
                body_bytes: body2.len(),
            });
        }
    }
    rpc.finish()?;
    drop((rho_model, base_model));
    report(resolved, &fake, &load_at_start, &timed)
}

fn report(
    resolved: &Resolved,
    fake: &Path,
    load_at_start: &str,
    timed: &[Turn],
) -> Result<(), Error> {
    let o = &resolved.options;
    let of = |pick: fn(&Turn) -> Duration| -> Result<Summary, Error> {
        let runs: Vec<Duration> = timed.iter().map(pick).collect();
        Summary::of(&runs).ok_or_else(|| Error::Failed("no timed turns".into()))
    };
    let rho = of(|t| t.rho)?;
    let baseline = of(|t| t.baseline)?;
    let request1 = of(|t| t.request1)?;
    let request2 = of(|t| t.request2)?;
    let read = of(|t| t.read)?;
    let diffs: Vec<f64> = timed
        .iter()
        .map(|t| (t.rho.as_secs_f64() - t.baseline.as_secs_f64()) * 1e3)
        .collect();
    let (diff_median, diff_p90) = signed(&diffs);
    let added = rho.median - baseline.median;
    let (first_body, last_body) = match (timed.first(), timed.last()) {
        (Some(first), Some(last)) => (first.body_bytes, last.body_bytes),
        _ => return Err(Error::Failed("no timed turns".into())),
    };

    println!("one rho rpc turn (prompt → read_file call → answer) against fake-model on loopback");
    context::print(load_at_start, &resolved.rho);
    println!(
        "model:    {} (two instances, same script: read_file {FILE_NAME}, then a one-sentence \
         answer, per turn)",
        fake.display()
    );
    println!(
        "rho path: one `rho rpc --ephemeral` (allow-all); clock from writing the prompt line to \
         reading its response line"
    );
    println!(
        "baseline: the same 2 request bodies (recorded in an untimed pass) POSTed by the bench to \
         the second fake-model, SSE read to EOF, plus std::fs::read of {FILE_NAME} between them"
    );
    println!(
        "turns:    {} timed after {} warm-up in one session; rho and baseline alternate turn by \
         turn; request body {:.1} → {:.1} KiB as the conversation grows",
        o.runs,
        o.warmup,
        first_body as f64 / 1024.0,
        last_body as f64 / 1024.0
    );
    println!();
    println!(
        "{:<32} {:>9} {:>7} {:>7}",
        "per turn", "median ms", "min", "p90"
    );
    for (name, s) in [
        ("rho turn", rho),
        ("baseline turn", baseline),
        ("  model request 1 (tool call)", request1),
        ("  model request 2 (answer)", request2),
    ] {
        println!("{name:<32} {:>9.3} {:>7.3} {:>7.3}", s.median, s.min, s.p90);
    }
    println!(
        "{:<32} {:>9.3} {:>7.3} {:>7.3}",
        "  direct read of the file", read.median, read.min, read.p90
    );
    println!();
    println!("by quarter of the timed turns (the conversation grows by 4 messages a turn):");
    println!(
        "{:<14} {:>15} {:>9} {:>9} {:>9}",
        "turns", "body KiB", "rho ms", "base ms", "rho adds"
    );
    let quarter = timed.len().div_ceil(4).max(1);
    for (k, chunk) in timed.chunks(quarter).enumerate() {
        let median = |pick: fn(&Turn) -> Duration| {
            let runs: Vec<Duration> = chunk.iter().map(pick).collect();
            Summary::of(&runs).map_or(f64::NAN, |s| s.median)
        };
        let (r, b) = (median(|t| t.rho), median(|t| t.baseline));
        let first = o.warmup + k * quarter + 1;
        let range = format!("{first}–{}", first + chunk.len() - 1);
        let kib = |turn: Option<&Turn>| turn.map_or(0.0, |t| t.body_bytes as f64 / 1024.0);
        let size = format!("{:.1}–{:.1}", kib(chunk.first()), kib(chunk.last()));
        println!("{range:<14} {size:>15} {r:>9.3} {b:>9.3} {:>+9.3}", r - b);
    }
    println!();
    println!(
        "rho adds {added:+.3} ms per turn (median − median; {:.2}x the baseline); per-turn \
         difference median {diff_median:+.3} ms, p90 {diff_p90:+.3} ms",
        rho.median / baseline.median
    );
    let verdict = verdict(added <= GOAL_MS);
    println!(
        "goal: rho adds ≤ {GOAL_MS:.0} ms per turn beyond the model server and the tool's own \
         time: {verdict} ({added:+.3} ms)"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_is_valid_json_with_two_entries_per_turn() {
        let text = script_text(3);
        let doc: Value = serde_json::from_str(&text).unwrap();
        let turns = doc.as_array().unwrap();
        assert_eq!(turns.len(), 6);
        assert_eq!(turns[5]["content"], reply_of(3));
        assert_eq!(
            turns[4]["tool_calls"],
            json!([{"name": "read_file", "arguments": {"path": FILE_NAME}}])
        );
    }

    #[test]
    fn turn_check_wants_the_reply_and_a_good_tool_result() {
        let tool = r#"{"jsonrpc":"2.0","method":"tool/result","params":{"name":"read_file","is_error":false,"output":"     1\tthe answer is 42\n"}}"#;
        let ok = json!({
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"reply": reply_of(7), "finishReason": "stop"},
        })
        .to_string();
        let lines = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(check_turn(&lines(&[tool, &ok]), 7), Ok(()));
        assert!(check_turn(&lines(&[tool, &ok]), 8).is_err());
        assert!(check_turn(&lines(&[&ok]), 7).is_err());
        let failed = tool.replace("\"is_error\":false", "\"is_error\":true");
        assert!(check_turn(&lines(&[&failed, &ok]), 7).is_err());
    }

    #[test]
    fn logged_bodies_are_the_bytes_fake_model_counted() {
        // fake-model parses a body, logs `{"body": body, ...}` and counts `body.to_string()`.
        let sent = r#"{"model":"m","messages":[{"role":"user","content":"Turn 1: \"x\"\t\u00e9 ok"}],"temperature":0.5,"stream":true,"max_tokens":1e3}"#;
        let body: Value = serde_json::from_str(sent).unwrap();
        let counted = body.to_string();
        let log_line = json!({"method": "POST", "path": "/v1/chat/completions", "body": body});
        let scratch = crate::scratch::Scratch::new("rpc-turn-test").unwrap();
        let log = scratch.path().join("requests.jsonl");
        std::fs::write(&log, format!("{log_line}\n{log_line}\n")).unwrap();
        let bodies = logged_bodies(&log).unwrap();
        assert_eq!(bodies, vec![counted.clone().into_bytes(); 2]);
        std::fs::write(&log, "{\"method\":\"POST\"}\n").unwrap();
        assert!(logged_bodies(&log).is_err());
        std::fs::write(&log, "not json\n").unwrap();
        assert!(logged_bodies(&log).is_err());
    }

    #[test]
    fn input_tokens_come_from_usage_notifications() {
        let lines = [
            r#"{"jsonrpc":"2.0","method":"usage","params":{"usage":{"inputTokens":310,"outputTokens":2}}}"#,
            r#"{"jsonrpc":"2.0","method":"text","params":{"text":"\"method\":\"usage\""}}"#,
            r#"{"jsonrpc":"2.0","method":"usage","params":{"usage":{}}}"#,
        ]
        .map(str::to_owned);
        assert_eq!(input_tokens(&lines), vec![Some(310), None]);
    }
}
