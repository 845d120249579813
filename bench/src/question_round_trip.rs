//! `rho-bench question-round-trip`: what rho adds to one question a server asks during a tool
//! call (an MCP form, `elicitation/create`) on its way to the RPC client and back.
//!
//! The server is `fake-mcp --mode elicit-loop`: its tool `ask {rounds}` puts `rounds` one-field
//! forms to its client one after another and times each round trip itself, from writing the
//! request to reading the answer with its id, and returns the times in its result. So both
//! paths are measured by the same clock in the same place:
//!
//! - **through rho:** one `rho rpc --accept-questions --ephemeral` with that server configured
//!   (allow-all), and `fake-model` scripted to call `mcp__fake__ask` once per prompt. Each form
//!   reaches the bench as a `question/request` line, which it answers at once with
//!   `questionResponse accept {"ok": "yes"}` (rho types `yes` back to `true`). The bench also
//!   times its own answer: from reading the question line to having written the response.
//! - **baseline:** the bench is the server's whole client, on a second `fake-mcp` over pipes:
//!   `initialize` (declaring elicitation), `notifications/initialized`, then `tools/call ask`,
//!   answering each `elicitation/create` at once with `accept {"ok": true}`, its own answer
//!   timed the same way.
//!
//! Each round trip minus the client's answer time is what the path costs: two pipe hops in the
//! baseline; four hops and rho's relaying (the MCP client, the session host, JSON-RPC out and
//! in) through rho. The difference of the two medians is what rho adds. Inside the client's
//! window a question line is only parsed (serde_json, on both paths alike), its id taken and the
//! answer written; every check runs after the call.

use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fakes::{FakeModel, fake_mcp_binary, fake_model_binary, script_text as model_script};
use crate::json_lines::{self, prompt_request};
use crate::measure::Probe;
use crate::rpc_ready::{LineChild, LineCommand, rpc_args};
use crate::scratch::Scratch;
use crate::stats::{Summary, signed, verdict};
use crate::toml_text::toml_string;
use crate::{Error, Resolved, context, machine};

/// The issue's goal: a question round trip through `rho rpc` adds at most this much over the
/// client's own answer time.
const GOAL_MS: f64 = 1.0;

/// Timed rounds per tool call: rho and the baseline alternate call by call.
const ROUNDS_PER_CALL: usize = 20;

/// The server's tool as rho exports it to the model.
const TOOL: &str = "mcp__fake__ask";

/// `questionResponse` ids start here, apart from the prompts' ids (1, 2, ...).
const FIRST_ANSWER_ID: usize = 1_000_000;

/// The scripted reply of call `n` (0 is the warm-up call), which rho must return.
fn reply_of(n: usize) -> String {
    format!("call {n} done")
}

/// The model's script: per call, `ask` with that call's rounds, then the reply.
fn script_text(rounds: &[usize]) -> String {
    let turns: Vec<Value> = rounds
        .iter()
        .enumerate()
        .flat_map(|(n, r)| {
            [
                json!({"tool_calls": [{"name": TOOL, "arguments": {"rounds": r}}]}),
                json!({"content": reply_of(n)}),
            ]
        })
        .collect();
    model_script(&turns)
}

/// The rounds of each call: the warm-up call (if any), then the timed rounds in calls of
/// [`ROUNDS_PER_CALL`] (the last one shorter).
fn call_rounds(warmup: usize, runs: usize) -> Vec<usize> {
    let mut rounds = Vec::new();
    if warmup > 0 {
        rounds.push(warmup);
    }
    let mut left = runs;
    while left > 0 {
        let r = left.min(ROUNDS_PER_CALL);
        rounds.push(r);
        left -= r;
    }
    rounds
}

/// The round trips in a result text holding `rtt_us=12.5,13.25,...`, in milliseconds.
fn round_trips(text: &str) -> Result<Vec<f64>, String> {
    let Some((_, list)) = text.split_once("rtt_us=") else {
        return Err(format!("no rtt_us= in the tool result {text:?}"));
    };
    let list = list.split_whitespace().next().unwrap_or("");
    list.split(',')
        .map(|item| {
            item.parse::<f64>()
                .ok()
                .filter(|us| us.is_finite() && *us >= 0.0)
                .map(|us| us / 1e3)
                .ok_or_else(|| format!("{item:?} in the tool result is not a time in µs"))
        })
        .collect()
}

/// The `questionId` of a `question/request` message (a number; echoed as it came).
fn question_id(message: &Value) -> Option<&Value> {
    message["params"].get("questionId")
}

/// Checks one question after the call: a form from `fake`, for the call, with one boolean
/// field `ok`, asked in round `round`.
fn check_question(line: &str, round: usize) -> Result<(), String> {
    let message = json_lines::parse(line, "rho")?;
    let params = &message["params"];
    let field = |key: &str| params[key].as_str();
    let fields = params["fields"].as_array().map_or(&[][..], Vec::as_slice);
    let boolean_ok = matches!(fields, [only] if only["name"] == "ok" && only["kind"] == "boolean");
    let message_text = format!("round {round}: go on?");
    if field("kind") != Some("elicitation")
        || field("server") != Some("fake")
        || field("message") != Some(message_text.as_str())
        || field("callId").is_none()
        || !boolean_ok
    {
        return Err(format!(
            "question {round}: expected fake's form {message_text:?} with one boolean field \
             `ok`, got {line}"
        ));
    }
    Ok(())
}

/// One call's figures, in milliseconds per round.
#[derive(Default)]
struct Rounds {
    /// The round trips as the server measured them.
    rtt: Vec<f64>,
    /// The client's own answer times, in the same order.
    answer: Vec<f64>,
}

/// Runs call `n` through rho: the prompt, every question answered at once, up to the prompt's
/// response. Returns the server's round trips and the bench's answer times.
fn rho_call(
    rpc: &mut LineChild,
    n: usize,
    rounds: usize,
    next_answer_id: &mut usize,
) -> Result<Rounds, String> {
    let prompt_id = n + 1;
    let prompt = prompt_request(prompt_id, &format!("call {n}: ask me {rounds} times"));
    let mut questions: Vec<String> = Vec::with_capacity(rounds);
    let mut others: Vec<String> = Vec::with_capacity(rounds + 32);
    let mut answers: Vec<Duration> = Vec::with_capacity(rounds);
    let mut line = String::with_capacity(1024);
    rpc.write_line(&prompt)?;
    loop {
        rpc.read_line(&mut line)?;
        let start = Instant::now();
        let message = json_lines::parse(&line, "rho")?;
        if message["method"] == "question/request" {
            let id = question_id(&message)
                .ok_or_else(|| format!("a question/request without a questionId: {line}"))?;
            let response = json!({
                "jsonrpc": "2.0",
                "id": *next_answer_id,
                "method": "questionResponse",
                "params": {"questionId": id, "action": "accept", "answers": {"ok": "yes"}},
            });
            rpc.write_line(&response.to_string())?;
            answers.push(start.elapsed());
            *next_answer_id += 1;
            questions.push(std::mem::take(&mut line));
        } else {
            let done = json_lines::is_response_to(&message, prompt_id as u64);
            others.push(std::mem::take(&mut line));
            if done {
                break;
            }
        }
    }
    if questions.len() != rounds {
        return Err(format!(
            "call {n}: rho put {} questions to the client, the tool asked {rounds}",
            questions.len()
        ));
    }
    for (k, question) in questions.iter().enumerate() {
        check_question(question, k + 1)?;
    }
    let rtt = check_rho_call(&others, n, rounds, prompt_id)?;
    Ok(Rounds {
        rtt,
        answer: answers.iter().map(|d| d.as_secs_f64() * 1e3).collect(),
    })
}

/// Checks everything else rho printed in call `n`: every line JSON-RPC, each
/// `questionResponse` answered `{}`, the tool's result without error (its round trips
/// returned), and the scripted reply.
fn check_rho_call(
    lines: &[String],
    n: usize,
    rounds: usize,
    prompt_id: usize,
) -> Result<Vec<f64>, String> {
    let mut acknowledged = 0;
    let mut rtt = None;
    let mut reply = None;
    for line in lines {
        let message = json_lines::rpc_line(line)?;
        let params = &message["params"];
        match message["method"].as_str() {
            Some("tool/result") => {
                let output = params["output"].as_str().unwrap_or("");
                if params["name"] != TOOL || params["is_error"] != false {
                    return Err(format!("call {n}: the {TOOL} call failed: {line}"));
                }
                rtt = Some(round_trips(output)?);
            }
            Some(_) => {}
            None if message["id"] == prompt_id => reply = Some(message),
            None => {
                if message.get("result") != Some(&json!({})) {
                    return Err(format!(
                        "call {n}: a questionResponse was not answered {{}}: {line}"
                    ));
                }
                acknowledged += 1;
            }
        }
    }
    if acknowledged != rounds {
        return Err(format!(
            "call {n}: {acknowledged} of {rounds} questionResponse requests were answered"
        ));
    }
    let expected = reply_of(n);
    let replied = reply.and_then(|m| {
        let field = |key: &str| m["result"][key].as_str().map(str::to_owned);
        Some((field("reply")?, field("finishReason")?))
    });
    if replied != Some((expected.clone(), "stop".into())) {
        return Err(format!(
            "call {n}: expected the reply {expected:?} with finishReason \"stop\", got \
             {replied:?}"
        ));
    }
    let rtt = rtt.ok_or_else(|| format!("call {n}: no tool/result for {TOOL}"))?;
    if rtt.len() != rounds {
        return Err(format!(
            "call {n}: the server reported {} round trips, expected {rounds}",
            rtt.len()
        ));
    }
    Ok(rtt)
}

/// The bench as the server's only client: `initialize` declaring elicitation, then
/// `notifications/initialized`.
fn start_baseline(command: &mut LineCommand) -> Result<LineChild, String> {
    let mut server = command.spawn()?;
    let initialize = json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "rho-bench", "version": "0"},
        },
    });
    server.write_line(&initialize.to_string())?;
    let mut line = String::new();
    server.read_line(&mut line)?;
    let reply = json_lines::parse(&line, "fake-mcp")?;
    if reply["result"].get("capabilities").is_none() {
        return Err(format!("baseline: initialize failed: {line}"));
    }
    server.write_line(
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    )?;
    Ok(server)
}

/// Runs call `n` on the baseline server: `tools/call ask`, every `elicitation/create` answered
/// at once, up to the call's result.
fn baseline_call(server: &mut LineChild, n: usize, rounds: usize) -> Result<Rounds, String> {
    let call_id = n as u64 + 1;
    let call = json!({
        "jsonrpc": "2.0",
        "id": call_id,
        "method": "tools/call",
        "params": {"name": "ask", "arguments": {"rounds": rounds}},
    })
    .to_string();
    let mut asked: Vec<String> = Vec::with_capacity(rounds);
    let mut answers: Vec<Duration> = Vec::with_capacity(rounds);
    let mut line = String::with_capacity(512);
    server.write_line(&call)?;
    let (result, message) = loop {
        server.read_line(&mut line)?;
        let start = Instant::now();
        let message = json_lines::parse(&line, "fake-mcp")?;
        if message["method"] == "elicitation/create" {
            let id = message
                .get("id")
                .ok_or_else(|| format!("an elicitation/create without an id: {line}"))?;
            let response = json!({
                "jsonrpc": "2.0",
                "id": id,
                "result": {"action": "accept", "content": {"ok": true}},
            });
            server.write_line(&response.to_string())?;
            answers.push(start.elapsed());
            asked.push(std::mem::take(&mut line));
        } else if json_lines::is_response_to(&message, call_id) {
            break (std::mem::take(&mut line), message);
        }
    };
    if asked.len() != rounds {
        return Err(format!(
            "baseline call {n}: the server asked {} times, expected {rounds}",
            asked.len()
        ));
    }
    let outcome = &message["result"];
    let text = outcome["content"][0]["text"].as_str();
    let (Some(text), None) = (text, outcome.get("isError")) else {
        return Err(format!("baseline call {n}: the ask call failed: {result}"));
    };
    let rtt = round_trips(text)?;
    if rtt.len() != rounds {
        return Err(format!(
            "baseline call {n}: the server reported {} round trips, expected {rounds}",
            rtt.len()
        ));
    }
    Ok(Rounds {
        rtt,
        answer: answers.iter().map(|d| d.as_secs_f64() * 1e3).collect(),
    })
}

/// `rho rpc --accept-questions` against `model`, started and past its `ready` line.
fn start_rho(
    resolved: &Resolved,
    scratch: &Scratch,
    model: &FakeModel,
    config: &Path,
) -> Result<LineChild, Error> {
    let home = scratch.dir("home")?;
    let project = scratch.dir("project")?;
    let rho_home = home.join(".rho");
    let endpoint = model.endpoint();
    let mut command = LineCommand::new(Probe::new(
        "rho rpc",
        &resolved.rho,
        &rpc_args(&project, Some(config), &["--accept-questions"], &endpoint),
        &[("HOME", home.as_path()), ("RHO_HOME", rho_home.as_path())],
        &project,
        scratch.path().join("rho.stderr"),
    ))?;
    eprintln!("rho-bench: timing `{}`", command.command_line());
    Ok(command.spawn_ready()?)
}

/// Runs both paths call by call and prints the comparison.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let fake = fake_mcp_binary(resolved)?;
    let fake_model = fake_model_binary(resolved)?;
    let load_at_start = machine::load();
    let scratch = Scratch::new("question-round-trip")?;
    let config = scratch.path().join("config.toml");
    std::fs::write(&config, config_text(&fake))
        .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
    let rounds = call_rounds(o.warmup, o.runs);
    let script = scratch.path().join("script.json");
    std::fs::write(&script, script_text(&rounds))
        .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
    let model = FakeModel::start(&fake_model, scratch.path(), "model", &script, None)?;
    let mut rpc = start_rho(resolved, &scratch, &model, &config)?;
    let mut baseline = LineCommand::new(Probe::new(
        "baseline fake-mcp",
        &fake,
        &[OsStr::new("--mode"), OsStr::new("elicit-loop")],
        &[],
        scratch.path(),
        scratch.path().join("baseline.stderr"),
    ))?;
    let mut server = start_baseline(&mut baseline)?;

    let mut through_rho = Rounds::default();
    let mut direct = Rounds::default();
    let mut next_answer_id = FIRST_ANSWER_ID;
    for (n, &r) in rounds.iter().enumerate() {
        // Alternating which goes first keeps a slow drift in the machine from favouring either.
        let (a, b) = if n % 2 == 0 {
            let a = rho_call(&mut rpc, n, r, &mut next_answer_id)?;
            (a, baseline_call(&mut server, n, r)?)
        } else {
            let b = baseline_call(&mut server, n, r)?;
            (rho_call(&mut rpc, n, r, &mut next_answer_id)?, b)
        };
        if o.warmup == 0 || n > 0 {
            through_rho.rtt.extend(a.rtt);
            through_rho.answer.extend(a.answer);
            direct.rtt.extend(b.rtt);
            direct.answer.extend(b.answer);
        }
    }
    rpc.finish()?;
    server.finish()?;
    drop(model);
    report(resolved, &fake, &load_at_start, &through_rho, &direct)
}

/// `fake` in `elicit-loop` mode as server `fake`; every tool runs without asking.
fn config_text(fake: &Path) -> String {
    format!(
        "[agent]\npermission_mode = \"allow-all\"\n\n[mcp.servers.fake]\ncommand = {}\n\
         args = [\"--mode\", \"elicit-loop\"]\n",
        toml_string(&fake.to_string_lossy())
    )
}

/// Median, minimum and p90 of values in milliseconds.
fn summary(values: &[f64]) -> Result<Summary, Error> {
    let runs: Vec<Duration> = values
        .iter()
        .map(|ms| Duration::from_secs_f64(ms.max(0.0) / 1e3))
        .collect();
    Summary::of(&runs).ok_or_else(|| Error::Failed("no timed rounds".into()))
}

fn report(
    resolved: &Resolved,
    fake: &Path,
    load_at_start: &str,
    through_rho: &Rounds,
    direct: &Rounds,
) -> Result<(), Error> {
    let o = &resolved.options;
    let net =
        |r: &Rounds| -> Vec<f64> { r.rtt.iter().zip(&r.answer).map(|(t, a)| t - a).collect() };
    let (rho_net, base_net) = (net(through_rho), net(direct));
    let rho_rtt = summary(&through_rho.rtt)?;
    let rho_answer = summary(&through_rho.answer)?;
    let base_rtt = summary(&direct.rtt)?;
    let base_answer = summary(&direct.answer)?;
    let (rho_net_median, rho_net_p90) = signed(&rho_net);
    let (base_net_median, base_net_p90) = signed(&base_net);
    let added = rho_net_median - base_net_median;
    // The figure as first defined: the baseline's own answer time is left in it.
    let plain = rho_rtt.median - base_rtt.median - rho_answer.median;

    println!(
        "one MCP form question (elicitation/create → question/request → questionResponse → \
         answer) through rho rpc"
    );
    context::print(load_at_start, &resolved.rho);
    println!(
        "server:   {} --mode elicit-loop (times each round trip itself: from writing \
         elicitation/create to reading its answer)",
        fake.display()
    );
    println!(
        "rho path: one `rho rpc --accept-questions --ephemeral` (allow-all), fake-model scripted \
         to call {TOOL} {{rounds}} per prompt; the bench answers each question/request at once \
         with questionResponse accept {{\"ok\": \"yes\"}}"
    );
    println!(
        "baseline: the bench as the MCP client of a second fake-mcp over pipes (initialize, \
         tools/call ask), answering each elicitation/create at once with accept {{\"ok\": true}}"
    );
    println!(
        "answer:   the bench's own time per question, from reading the line to having written \
         its answer"
    );
    println!(
        "rounds:   {} timed per path in calls of {ROUNDS_PER_CALL}, after a warm-up call of {}; \
         rho and baseline alternate call by call",
        through_rho.rtt.len(),
        o.warmup
    );
    println!();
    // Tens of microseconds each: the table is in µs, the verdict in ms like the goal.
    println!(
        "{:<34} {:>9} {:>7} {:>7}",
        "per question", "median µs", "min", "p90"
    );
    let us = |ms: f64| ms * 1e3;
    for (name, s) in [
        ("round trip through rho (server)", rho_rtt),
        ("  client answer (bench)", rho_answer),
        ("round trip, baseline (server)", base_rtt),
        ("  client answer (bench)", base_answer),
    ] {
        println!(
            "{name:<34} {:>9.1} {:>7.1} {:>7.1}",
            us(s.median),
            us(s.min),
            us(s.p90)
        );
    }
    let min = |values: &[f64]| values.iter().copied().fold(f64::INFINITY, f64::min);
    for (name, median, p90, values) in [
        (
            "through rho less the answer",
            rho_net_median,
            rho_net_p90,
            &rho_net,
        ),
        (
            "baseline less the answer",
            base_net_median,
            base_net_p90,
            &base_net,
        ),
    ] {
        println!(
            "{name:<34} {:>9.1} {:>7.1} {:>7.1}",
            us(median),
            us(min(values)),
            us(p90)
        );
    }
    println!();
    println!(
        "rho adds {added:+.3} ms per question (median of round trip less the client's answer, \
         through rho − baseline; {:.1}x the baseline's); rho round trip − baseline round trip − \
         client answer (medians): {plain:+.3} ms",
        rho_net_median / base_net_median
    );
    let verdict = verdict(added <= GOAL_MS);
    println!(
        "goal: a question round trip through rho rpc adds ≤ {GOAL_MS:.0} ms over the client's own \
         answer time: {verdict} ({added:+.3} ms)"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_split_the_rounds_after_the_warm_up() {
        assert_eq!(call_rounds(20, 200), [vec![20], vec![20; 10]].concat());
        assert_eq!(call_rounds(0, 45), vec![20, 20, 5]);
        assert_eq!(call_rounds(3, 1), vec![3, 1]);
    }

    #[test]
    fn script_calls_the_tool_then_replies() {
        let text = script_text(&[3, 20]);
        let doc: Value = serde_json::from_str(&text).unwrap();
        let turns = doc.as_array().unwrap();
        assert_eq!(turns.len(), 4);
        let call = &turns[2]["tool_calls"][0];
        assert_eq!(call["name"], TOOL);
        assert_eq!(call["arguments"], json!({"rounds": 20}));
        assert_eq!(turns[3]["content"], reply_of(1));
    }

    #[test]
    fn round_trips_are_read_in_microseconds() {
        assert_eq!(round_trips("rtt_us=12.5,1000"), Ok(vec![0.0125, 1.0]));
        assert_eq!(round_trips("result: rtt_us=2\n"), Ok(vec![0.002]));
        assert!(round_trips("rtt_us=").is_err());
        assert!(round_trips("rtt_us=1,,2").is_err());
        assert!(round_trips("rtt_us=-1").is_err());
        assert!(round_trips("nothing").is_err());
    }

    #[test]
    fn question_ids_and_checks() {
        let line = r#"{"jsonrpc":"2.0","method":"question/request","params":{"questionId":17,"kind":"elicitation","server":"fake","callId":"call_1_1","message":"round 3: go on?","fields":[{"name":"ok","kind":"boolean","required":true}]}}"#;
        let message = json_lines::rpc_line(line).unwrap();
        assert_eq!(message["method"], "question/request");
        assert_eq!(question_id(&message), Some(&json!(17)));
        assert_eq!(check_question(line, 3), Ok(()));
        assert!(check_question(line, 4).is_err());
        assert!(check_question(&line.replace("boolean", "text"), 3).is_err());
        assert!(check_question(&line.replace("\"fake\"", "\"other\""), 3).is_err());
        assert_eq!(question_id(&json!({"params": {}})), None);
        assert_eq!(question_id(&json!({})), None);
    }

    #[test]
    fn a_call_needs_every_answer_acknowledged_and_the_reply() {
        let lines = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let ack = r#"{"jsonrpc":"2.0","id":1000000,"result":{}}"#;
        let result = json!({
            "jsonrpc": "2.0",
            "method": "tool/result",
            "params": {"name": TOOL, "is_error": false, "output": "rtt_us=40.5"},
        })
        .to_string();
        let reply =
            r#"{"jsonrpc":"2.0","id":3,"result":{"reply":"call 2 done","finishReason":"stop"}}"#;
        assert_eq!(
            check_rho_call(&lines(&[ack, &result, reply]), 2, 1, 3),
            Ok(vec![0.0405])
        );
        assert!(check_rho_call(&lines(&[&result, reply]), 2, 1, 3).is_err());
        assert!(check_rho_call(&lines(&[ack, reply]), 2, 1, 3).is_err());
        assert!(check_rho_call(&lines(&[ack, &result, reply]), 1, 1, 3).is_err());
        let failed = result.replace("\"is_error\":false", "\"is_error\":true");
        assert!(check_rho_call(&lines(&[ack, &failed, reply]), 2, 1, 3).is_err());
    }

    #[test]
    fn config_runs_the_elicit_loop_server() {
        let text = config_text(Path::new("/opt/fake \"mcp\""));
        assert!(text.contains(r#"command = "/opt/fake \"mcp\"""#));
        assert!(text.contains(r#"args = ["--mode", "elicit-loop"]"#));
        assert!(text.contains("permission_mode = \"allow-all\""));
    }
}
