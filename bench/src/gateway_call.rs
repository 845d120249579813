//! `rho-bench gateway-call`: one `tools/call` through `rho mcp serve` against the same call
//! made directly to the upstream server, both from the bench as a bare client over pipes.
//!
//! - **through the gateway:** `rho --cwd <project> --config <config> mcp serve`, whose one
//!   server is `fake-mcp --mode ok` as `echoer`; the bench does the 2025-11-25 handshake once
//!   and then calls `mcp__echoer__echo`.
//! - **direct (baseline):** the bench spawns the same `fake-mcp`, does the same handshake and
//!   calls `echo`.
//!
//! A call's time runs from writing its request line to reading its response line; the two
//! paths alternate call by call on one process each (which goes first alternates too), so a
//! drift in the machine favours neither. The figure is the difference of the medians: what
//! the gateway adds to a call.

use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fakes::fake_mcp_binary;
use crate::json_lines;
use crate::measure::Probe;
use crate::measure::rho_args;
use crate::rpc_ready::{LineChild, LineCommand};
use crate::scratch::Scratch;
use crate::stats::{Summary, print_paths, verdict};
use crate::{Error, Resolved, context, machine};

/// The goal: the gateway adds at most this much to a call's median.
const GOAL_ADDED_MS: f64 = 0.5;

/// The upstream server's identity in rho's configuration.
const SERVER: &str = "echoer";

/// Its tool as rho serves it.
const SERVED_TOOL: &str = "mcp__echoer__echo";

/// The id of `initialize`.
const INITIALIZE_ID: u64 = 0;

/// The configuration: the one upstream server.
fn config_text(fake: &Path) -> String {
    format!(
        "[mcp.servers.{SERVER}]\ncommand = {}\nargs = [\"--mode\", \"ok\"]\n",
        json!(fake.to_string_lossy())
    )
}

/// One side: a process spoken to over pipes, and the tool name it is called by.
struct Side {
    child: LineChild,
    tool: &'static str,
    label: &'static str,
}

impl Side {
    /// Spawns `command` and does the handshake.
    fn start(
        command: &mut LineCommand,
        tool: &'static str,
        label: &'static str,
    ) -> Result<Self, String> {
        let mut side = Self {
            child: command.spawn()?,
            tool,
            label,
        };
        let [initialize, initialized] = json_lines::mcp_handshake(INITIALIZE_ID);
        let mut line = String::new();
        side.child.write_line(&initialize)?;
        side.read_response(INITIALIZE_ID, &mut line)?;
        side.child.write_line(&initialized)?;
        Ok(side)
    }

    /// Reads up to the response with `id` (notifications and requests skipped).
    fn read_response(&mut self, id: u64, line: &mut String) -> Result<(), String> {
        loop {
            self.child.read_line(line)?;
            if serde_json::from_str::<Value>(line)
                .is_ok_and(|message| json_lines::is_response_to(&message, id))
            {
                return Ok(());
            }
        }
    }

    /// Times call `id`: writing the request to reading its response; checks the result.
    fn call(&mut self, id: u64, line: &mut String) -> Result<Duration, String> {
        let request = json_lines::mcp_call(self.tool, id);
        let start = Instant::now();
        self.child.write_line(&request)?;
        self.read_response(id, line)?;
        let took = start.elapsed();
        let message = json_lines::parse(line, self.label)?;
        let result = &message["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or("");
        if !text.starts_with("called echo") || result["isError"] == true {
            return Err(format!("{}: call {id} failed: {line}", self.label));
        }
        Ok(took)
    }
}

/// Times both paths and prints the comparison.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let fake = fake_mcp_binary(resolved)?;
    let load_at_start = machine::load();
    let scratch = Scratch::new("gateway-call")?;
    let (home, project, rho_home) = scratch.layout()?;
    let env = [("HOME", home.as_path()), ("RHO_HOME", rho_home.as_path())];
    let config = scratch.path().join("config.toml");
    std::fs::write(&config, config_text(&fake))
        .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
    let config_arg = config.to_string_lossy().into_owned();
    let mut gateway_command = LineCommand::new(Probe::new(
        "rho mcp serve",
        &resolved.rho,
        &rho_args(&project, &["--config", &config_arg, "mcp", "serve"]),
        &env,
        &project,
        scratch.path().join("rho.stderr"),
    ))?;
    let mut direct_command = LineCommand::new(Probe::new(
        "fake-mcp",
        &fake,
        &[OsStr::new("--mode"), OsStr::new("ok")],
        &env,
        &project,
        scratch.path().join("fake.stderr"),
    ))?;
    eprintln!("rho-bench: timing `{}`", gateway_command.command_line());
    let mut gateway = Side::start(&mut gateway_command, SERVED_TOOL, "rho mcp serve")?;
    let mut direct = Side::start(&mut direct_command, "echo", "fake-mcp")?;

    let mut line = String::new();
    let (mut through, mut bare) = (Vec::new(), Vec::new());
    for i in 0..o.warmup + o.runs {
        let id = i as u64 + 1;
        let (g, d) = if i % 2 == 0 {
            let g = gateway.call(id, &mut line)?;
            (g, direct.call(id, &mut line)?)
        } else {
            let d = direct.call(id, &mut line)?;
            (gateway.call(id, &mut line)?, d)
        };
        if i >= o.warmup {
            through.push(g);
            bare.push(d);
        }
    }
    gateway.child.finish()?;
    direct.child.finish()?;
    let summary =
        |runs: &[Duration]| Summary::of(runs).ok_or_else(|| Error::Failed("no timed runs".into()));
    let (g, d) = (summary(&through)?, summary(&bare)?);

    println!("one tools/call through `rho mcp serve` against the same call made directly");
    context::print(&load_at_start, &resolved.rho);
    println!(
        "server:   {} --mode ok (one tool, `echo`), as `{SERVER}` behind rho",
        fake.display()
    );
    println!(
        "calls:    {} timed after {} warm-up on each path, alternating; one process each, \
         handshake (2025-11-25) once; timed from writing the request to reading the response",
        o.runs, o.warmup
    );
    println!();
    print_paths(
        &[
            ("through rho mcp serve", g),
            ("direct to the server (baseline)", d),
        ],
        3,
    );
    println!();
    let added = g.median - d.median;
    println!(
        "gateway/direct: {:.2}x; added per call: {added:+.3} ms (median), {:+.3} ms (p90)",
        g.median / d.median,
        g.p90 - d.p90
    );
    println!(
        "goal: the gateway adds ≤ {GOAL_ADDED_MS} ms to a call's median: {} ({added:+.3} ms)",
        verdict(added <= GOAL_ADDED_MS)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_requests_are_json_rpc_with_their_ids() {
        let [initialize, initialized] = json_lines::mcp_handshake(INITIALIZE_ID);
        let message = json_lines::rpc_line(&initialize).unwrap();
        assert_eq!(message["method"], "initialize");
        assert_eq!(message["id"], INITIALIZE_ID);
        let message = json_lines::rpc_line(&initialized).unwrap();
        assert!(message.get("id").is_none());
        let message = json_lines::rpc_line(&json_lines::mcp_call(SERVED_TOOL, 7)).unwrap();
        assert_eq!(message["params"]["name"], SERVED_TOOL);
        assert_eq!(message["id"], 7);
    }

    #[test]
    fn config_runs_the_one_server() {
        let text = config_text(Path::new("/x/fake-mcp"));
        assert_eq!(
            text,
            "[mcp.servers.echoer]\ncommand = \"/x/fake-mcp\"\nargs = [\"--mode\", \"ok\"]\n"
        );
    }
}
