//! `rho-bench mcp-startup`: `rho mcp list --connect --json` with N `fake-mcp` stdio servers in the
//! configuration against the same command with one, to show that servers start in parallel (N
//! serial starts would cost about N times one). A configuration with no server is timed too, so
//! the table can separate what starting servers costs from what any `rho` run costs.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use crate::fakes::fake_mcp_binary;
use crate::measure::Probe;
use crate::scratch::Scratch;
use crate::stats::{Summary, verdict};
use crate::toml_text::toml_string;
use crate::{Error, Resolved, context, machine};
use serde_json::Value;

/// The issue's goal: N servers in at most this multiple of one server's time.
const GOAL_RATIO: f64 = 1.5;

/// One configuration and its timed runs.
struct Case {
    servers: usize,
    probe: Probe,
    runs: Vec<Duration>,
}

/// Times the configurations and prints the comparison.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let fake = fake_mcp_binary(resolved)?;
    let load_at_start = machine::load();
    let scratch = Scratch::new("mcp-startup")?;
    let (home, project, rho_home) = scratch.layout()?;
    let env = [("HOME", home.as_path()), ("RHO_HOME", rho_home.as_path())];

    let mut cases = Vec::new();
    for servers in [0, 1, o.servers] {
        let config = scratch.path().join(format!("config-{servers}.toml"));
        std::fs::write(&config, config_text(&fake, servers))
            .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
        let probe = Probe::new(
            &format!("rho with {servers} server(s)"),
            &resolved.rho,
            &connect_args(&project, &config),
            &env,
            &project,
            scratch.path().join(format!("rho-{servers}.stderr")),
        );
        cases.push(Case {
            servers,
            probe,
            runs: Vec::with_capacity(o.runs),
        });
    }
    if let Some(case) = cases.last() {
        eprintln!("rho-bench: timing `{}`", case.probe.command_line());
    }

    let mut stdout = Vec::new();
    for i in 0..o.warmup + o.runs {
        // Rotate the order so a slow drift in the machine favours no configuration.
        for k in 0..cases.len() {
            let count = cases.len();
            let case = &mut cases[(i + k) % count];
            let elapsed = case.probe.run(&mut stdout)?;
            check_connected(&stdout, case.servers)?;
            if i >= o.warmup {
                case.runs.push(elapsed);
            }
        }
    }
    let summaries = cases
        .iter()
        .map(|c| {
            Summary::of(&c.runs)
                .map(|s| (c.servers, s))
                .ok_or_else(|| Error::Failed("no timed runs".into()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let [(_, none), (_, one), (n, many)] = summaries[..] else {
        return Err(Error::Failed("expected three configurations".into()));
    };

    println!(
        "rho mcp list --connect --json with fake-mcp stdio servers (whole process, stdout drained)"
    );
    context::print(&load_at_start, &resolved.rho);
    println!(
        "server:   {} --mode ok (tools/list answers one tool)",
        fake.display()
    );
    println!("baseline: the same command with 1 server in the configuration");
    println!(
        "runs:     {} timed after {} warm-up; the three configurations rotate",
        o.runs, o.warmup
    );
    println!();
    println!(
        "{:>7} | {:>9} {:>7} {:>7} | {:>13}",
        "servers", "median ms", "min", "p90", "over 0 (ms)"
    );
    for (servers, s) in &summaries {
        println!(
            "{servers:>7} | {:>9.2} {:>7.2} {:>7.2} | {:>13.2}",
            s.median,
            s.min,
            s.p90,
            s.median - none.median
        );
    }
    println!();
    let ratio = many.median / one.median;
    let per_server = one.median - none.median;
    let serial = none.median + n as f64 * per_server;
    println!(
        "{n} servers / 1 server: {ratio:.2}x ({:+.2} ms)",
        many.median - one.median
    );
    println!(
        "serial estimate: 0-server run + {n} × one server's share = {serial:.2} ms; \
         measured {:.2} ms ({:.2}x faster than serial)",
        many.median,
        serial / many.median
    );
    let verdict = verdict(ratio <= GOAL_RATIO);
    println!("goal: {n} servers ≤ {GOAL_RATIO:.1}x one server: {verdict} ({ratio:.2}x)");
    Ok(())
}

/// A configuration of `servers` well-behaved `fake-mcp` servers (`fake01`, `fake02`, ...).
fn config_text(fake: &Path, servers: usize) -> String {
    let mut text = String::new();
    for k in 1..=servers {
        text.push_str(&format!(
            "[mcp.servers.fake{k:02}]\ncommand = {}\nargs = [\"--mode\", \"ok\"]\n\n",
            toml_string(&fake.to_string_lossy())
        ));
    }
    text
}

/// Checks that rho listed exactly `servers` servers, each connected with fake-mcp's one tool.
fn check_connected(stdout: &[u8], servers: usize) -> Result<(), String> {
    let doc: Value =
        serde_json::from_slice(stdout).map_err(|e| format!("rho printed unreadable JSON: {e}"))?;
    let listed = doc["servers"]
        .as_array()
        .ok_or("rho's JSON has no `servers` array")?;
    if listed.len() != servers {
        return Err(format!(
            "rho listed {} servers, expected {servers}",
            listed.len()
        ));
    }
    for server in listed {
        let field = |key: &str| server[key].as_str().unwrap_or("?");
        let tools = server["tools"].as_array().map_or(&[][..], Vec::as_slice);
        let echo = matches!(tools, [only] if only["name"] == "echo");
        if field("status") != "started" || !echo {
            return Err(format!(
                "server {} is {} with {} tool(s), expected started with fake-mcp's `echo` \
                 (error: {})",
                field("id"),
                field("status"),
                tools.len(),
                field("error")
            ));
        }
    }
    Ok(())
}

/// The arguments of `rho --cwd <project> --config <config> mcp list --connect --json`, the
/// command this benchmark times (and `oauth-connect` too).
pub fn connect_args<'a>(project: &'a Path, config: &'a Path) -> [&'a OsStr; 8] {
    [
        OsStr::new("--cwd"),
        project.as_os_str(),
        OsStr::new("--config"),
        config.as_os_str(),
        OsStr::new("mcp"),
        OsStr::new("list"),
        OsStr::new("--connect"),
        OsStr::new("--json"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_lists_each_server_once() {
        let text = config_text(Path::new("/opt/a \"b\"/fake-mcp"), 3);
        assert_eq!(text.matches("[mcp.servers.fake").count(), 3);
        assert!(text.contains("[mcp.servers.fake03]"));
        assert!(text.contains(r#"command = "/opt/a \"b\"/fake-mcp""#));
        assert_eq!(config_text(Path::new("/x"), 0), "");
    }

    #[test]
    fn connected_check_wants_every_server_with_echo() {
        let ok =
            br#"{"servers": [{"id": "fake01", "status": "started", "tools": [{"name": "echo"}]}]}"#;
        assert_eq!(check_connected(ok, 1), Ok(()));
        assert!(check_connected(ok, 2).is_err());
        let failed =
            br#"{"servers": [{"id": "fake01", "status": "failed", "error": "x", "tools": []}]}"#;
        assert!(check_connected(failed, 1).is_err());
        assert_eq!(check_connected(br#"{"servers": []}"#, 0), Ok(()));
    }
}
