//! `rho-bench complete-cached`: how fast `rho rpc` answers a `complete` request (argument
//! suggestions for an MCP prompt command) that its cache already holds.
//!
//! One `rho rpc` runs with two `fake-mcp --mode completions` servers, `fake` and `fresh` (each
//! connection has its own cache). A first `complete` for `/mcp:fake:pick` fills the cache and
//! must return the server's values; then the bench sends, in rotating order per iteration:
//!
//! - **cached:** the same `complete` again. fake-mcp's last value counts the completion
//!   requests it has answered (`#1`), so an answer equal to the first proves the server was not
//!   asked.
//! - **baseline:** `abort` with nothing running, which rho's host answers `-32600` without
//!   touching a server: the cost of one JSON-RPC round trip through rho itself.
//! - **uncached (reference):** `complete` for `/mcp:fresh:pick` with a value never sent before,
//!   so each one asks that server (its count must go up by one each time).
//!
//! Each request is timed from writing its line to reading its response line (each line is
//! parsed only after its time is taken), and every response is checked after that.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fakes::fake_mcp_binary;
use crate::json_lines;
use crate::measure::Probe;
use crate::rpc_ready::{LineChild, LineCommand, UNREACHABLE_ENDPOINT, rpc_args};
use crate::scratch::Scratch;
use crate::stats::{Summary, verdict};
use crate::toml_text::toml_string;
use crate::{Error, Resolved, context, machine};

/// The issue's goal for a `complete` answered from the cache.
const GOAL_MS: f64 = 0.2;

/// What the cached requests type.
const CACHED_VALUE: &str = "a";

/// The three kinds of request, in the order of the table.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Cached,
    Abort,
    Uncached,
}

const KINDS: [Kind; 3] = [Kind::Cached, Kind::Abort, Kind::Uncached];

/// The request line for `kind` with JSON-RPC id `id`; `n` numbers the uncached values.
fn request_line(kind: Kind, id: usize, n: usize) -> String {
    match kind {
        Kind::Cached => complete_line(id, "fake", CACHED_VALUE),
        Kind::Abort => json!({"jsonrpc": "2.0", "id": id, "method": "abort"}).to_string(),
        Kind::Uncached => complete_line(id, "fresh", &format!("v{n}")),
    }
}

fn complete_line(id: usize, server: &str, value: &str) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "complete",
        "params": {"command": format!("/mcp:{server}:pick"), "argument": "item", "value": value},
    })
    .to_string()
}

/// What fake-mcp suggests for `value` when it answers its `n`-th completion request.
fn suggestions(value: &str, n: usize) -> Vec<String> {
    vec![
        format!("{value}-alpha"),
        format!("{value}-beta"),
        format!("{value}-gamma"),
        format!("#{n}"),
    ]
}

/// Checks one response line: its id, and for `complete` exactly `expected`, for `abort` the
/// error `-32600`.
fn check_response(line: &str, id: usize, expected: Option<&[String]>) -> Result<(), String> {
    let message = json_lines::parse(line, "rho")?;
    if message["id"] != id {
        return Err(format!("expected the response to request {id}, got {line}"));
    }
    let Some(expected) = expected else {
        return if message["error"]["code"] == -32600 {
            Ok(())
        } else {
            Err(format!(
                "abort with nothing running: expected error -32600, got {line}"
            ))
        };
    };
    let values: Option<Vec<&str>> = message["result"]["values"]
        .as_array()
        .and_then(|values| values.iter().map(Value::as_str).collect());
    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    if values.as_ref() != Some(&expected) {
        return Err(format!(
            "request {id}: expected the values {expected:?}, got {line}"
        ));
    }
    Ok(())
}

/// Writes `request` and reads up to its response line (notifications before it are counted in
/// `skipped`); returns the time from the write to reading the response, taken before the line
/// is parsed.
fn exchange(
    rpc: &mut LineChild,
    request: &str,
    line: &mut String,
    skipped: &mut usize,
) -> Result<Duration, String> {
    let start = Instant::now();
    rpc.write_line(request)?;
    loop {
        rpc.read_line(line)?;
        let elapsed = start.elapsed();
        if json_lines::is_response(&json_lines::parse(line, "rho")?) {
            return Ok(elapsed);
        }
        *skipped += 1;
    }
}

/// Two `completions` servers, `fake` (cached requests) and `fresh` (uncached ones).
fn config_text(fake: &Path) -> String {
    let command = toml_string(&fake.to_string_lossy());
    ["fake", "fresh"]
        .iter()
        .map(|name| {
            format!(
                "[mcp.servers.{name}]\ncommand = {command}\nargs = [\"--mode\", \"completions\"]\n"
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Times the three kinds of request and prints the comparison.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let fake = fake_mcp_binary(resolved)?;
    let load_at_start = machine::load();
    let scratch = Scratch::new("complete-cached")?;
    let (home, project, rho_home) = scratch.layout()?;
    let config = scratch.path().join("config.toml");
    std::fs::write(&config, config_text(&fake))
        .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
    // No turn runs: nothing listens on port 1.
    let mut command = LineCommand::new(Probe::new(
        "rho rpc",
        &resolved.rho,
        &rpc_args(&project, Some(&config), &[], UNREACHABLE_ENDPOINT),
        &[("HOME", home.as_path()), ("RHO_HOME", rho_home.as_path())],
        &project,
        scratch.path().join("rho.stderr"),
    ))?;
    eprintln!("rho-bench: timing `{}`", command.command_line());
    let mut rpc = command.spawn_ready()?;
    let mut line = String::with_capacity(256);

    // Fill the cache: the server's first answer, which every cached request must repeat.
    let mut skipped = 0;
    let cached_values = suggestions(CACHED_VALUE, 1);
    let fill = exchange(
        &mut rpc,
        &request_line(Kind::Cached, 1, 0),
        &mut line,
        &mut skipped,
    )?;
    check_response(&line, 1, Some(&cached_values))
        .map_err(|e| format!("filling the cache: {e}"))?;

    let mut timed: [Vec<Duration>; 3] = Default::default();
    let mut id = 1;
    for i in 0..o.warmup + o.runs {
        // Rotating the order keeps a slow drift in the machine from favouring any kind.
        for k in 0..KINDS.len() {
            let slot = (i + k) % KINDS.len();
            let kind = KINDS[slot];
            id += 1;
            let request = request_line(kind, id, i);
            let uncached;
            let expected = match kind {
                Kind::Cached => Some(cached_values.as_slice()),
                Kind::Abort => None,
                Kind::Uncached => {
                    uncached = suggestions(&format!("v{i}"), i + 1);
                    Some(uncached.as_slice())
                }
            };
            let elapsed = exchange(&mut rpc, &request, &mut line, &mut skipped)?;
            check_response(&line, id, expected)?;
            if i >= o.warmup {
                timed[slot].push(elapsed);
            }
        }
    }
    rpc.finish()?;
    let [cached, abort, uncached] = timed.map(|runs| Summary::of(&runs));
    let (Some(cached), Some(abort), Some(uncached)) = (cached, abort, uncached) else {
        return Err(Error::Failed("no timed requests".into()));
    };

    println!("rho rpc `complete` (MCP prompt argument suggestions) answered from rho's cache");
    context::print(&load_at_start, &resolved.rho);
    println!(
        "servers:  {} --mode completions, twice (`fake` for the cached requests, `fresh` for \
         the uncached ones)",
        fake.display()
    );
    println!(
        "rho path: one `rho rpc --ephemeral`; clock from writing a request line to reading its \
         response line; the cache filled by a first request ({:.3} ms)",
        fill.as_secs_f64() * 1e3
    );
    println!(
        "cached:   complete /mcp:fake:pick item={CACHED_VALUE:?}, the same request each time \
         (the server's count in the answer proves it was not asked)"
    );
    println!(
        "baseline: abort with nothing running (-32600 from rho's host; no server): one RPC round \
         trip through rho"
    );
    println!(
        "uncached: complete /mcp:fresh:pick with a new value each time (one completion/complete \
         to the server each), for reference"
    );
    println!(
        "requests: {} timed of each kind after {} warm-up; the three kinds rotate request by \
         request",
        o.runs, o.warmup
    );
    if skipped > 0 {
        println!("note:     {skipped} notification line(s) arrived before responses");
    }
    println!();
    println!(
        "{:<30} {:>9} {:>7} {:>7}",
        "per request", "median µs", "min", "p90"
    );
    for (name, s) in [
        ("complete, cached", cached),
        ("abort, nothing running", abort),
        ("complete, uncached", uncached),
    ] {
        // Tens of microseconds each: the table is in µs, the verdict in ms like the goal.
        println!(
            "{name:<30} {:>9.1} {:>7.1} {:>7.1}",
            s.median * 1e3,
            s.min * 1e3,
            s.p90 * 1e3
        );
    }
    println!();
    println!(
        "cached/abort: {:.2}x ({:+.3} ms over rho's own RPC round trip); uncached/cached: {:.2}x",
        cached.median / abort.median,
        cached.median - abort.median,
        uncached.median / cached.median
    );
    let verdict = verdict(cached.median <= GOAL_MS);
    println!(
        "goal: a cached complete answers in ≤ {GOAL_MS:.1} ms (median): {verdict} ({:.3} ms; p90 \
         {:.3} ms)",
        cached.median, cached.p90
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_json_rpc_lines() {
        for (kind, method) in [
            (Kind::Cached, "complete"),
            (Kind::Abort, "abort"),
            (Kind::Uncached, "complete"),
        ] {
            let doc = json_lines::rpc_line(&request_line(kind, 7, 3)).unwrap();
            assert_eq!(doc["method"], method);
            assert_eq!(doc["id"], 7);
        }
        let uncached = json_lines::rpc_line(&request_line(Kind::Uncached, 7, 3)).unwrap();
        assert_eq!(uncached["params"]["command"], "/mcp:fresh:pick");
        assert_eq!(uncached["params"]["argument"], "item");
        assert_eq!(uncached["params"]["value"], "v3");
        let cached = json_lines::rpc_line(&request_line(Kind::Cached, 7, 3)).unwrap();
        assert_eq!(cached["params"]["command"], "/mcp:fake:pick");
        assert_eq!(cached["params"]["value"], CACHED_VALUE);
    }

    #[test]
    fn responses_are_checked_by_id_and_content() {
        let values = suggestions("a", 1);
        let ok =
            r##"{"jsonrpc":"2.0","id":5,"result":{"values":["a-alpha","a-beta","a-gamma","#1"]}}"##;
        assert_eq!(check_response(ok, 5, Some(&values)), Ok(()));
        assert!(check_response(ok, 6, Some(&values)).is_err());
        assert!(check_response(ok, 5, Some(&suggestions("a", 2))).is_err());
        assert!(check_response(&ok.replace("#1", "#2"), 5, Some(&values)).is_err());
        let refused =
            r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"nothing to abort"}}"#;
        assert_eq!(check_response(refused, 9, None), Ok(()));
        assert!(check_response(&refused.replace("32600", "32601"), 9, None).is_err());
        assert!(check_response(ok, 5, None).is_err());
        assert!(check_response(refused, 9, Some(&values)).is_err());
    }

    #[test]
    fn config_names_both_servers() {
        let text = config_text(Path::new("/x/fake-mcp"));
        assert!(text.contains("[mcp.servers.fake]\ncommand = \"/x/fake-mcp\""));
        assert!(text.contains("[mcp.servers.fresh]"));
        assert_eq!(text.matches("\"completions\"").count(), 2);
    }
}
