//! `rho-bench mcp-list`: `rho mcp list --json` (nothing started) against `rho plugins list --json`
//! on the same home: the 1,000-plugin corpus (3 servers each) plus a `config.toml` of 20 servers.
//! Both commands discover the same plugins, so the difference is what the MCP listing adds:
//! reading the configuration and turning 3,020 servers into entries and JSON.

use std::path::Path;
use std::time::Duration;

use crate::corpus::{self, SERVERS_PER_PLUGIN};
use crate::measure::{Probe, rho_args};
use crate::plugins_list::check_listing;
use crate::scratch::Scratch;
use crate::stats::{Summary, verdict};
use crate::toml_text::toml_string;
use crate::{Error, Resolved, context, machine};
use serde_json::Value;

/// Plugins in the generated corpus (the size `plugins-list`'s goal refers to).
const PLUGINS: usize = 1000;
/// `[mcp.servers.*]` entries in the generated `config.toml`.
const CONFIG_SERVERS: usize = 20;
/// Of those, how many are stdio (the rest are Streamable HTTP).
const CONFIG_STDIO: usize = 14;
/// The issue's goal: the MCP listing adds at most this many milliseconds.
const GOAL_ADDED_MS: f64 = 5.0;

/// Times both commands and prints the comparison.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let load_at_start = machine::load();
    let scratch = Scratch::new("mcp-list")?;
    let home = scratch.dir("home")?;
    let project = scratch.dir("project")?;
    let rho_home = scratch.dir("home/.rho")?;
    eprintln!(
        "rho-bench: generating {PLUGINS} plugins in {}",
        scratch.path().display()
    );
    corpus::generate(&home, PLUGINS)?;
    let config = rho_home.join("config.toml");
    std::fs::write(&config, config_text(&project))
        .map_err(|e| format!("cannot write {}: {e}", config.display()))?;

    let env = [("HOME", home.as_path()), ("RHO_HOME", rho_home.as_path())];
    let probe = |label: &str, group: &str| {
        Probe::new(
            label,
            &resolved.rho,
            &rho_args(&project, &[group, "list", "--json"]),
            &env,
            &project,
            scratch.path().join(format!("{group}.stderr")),
        )
    };
    let mcp = probe("rho mcp list", "mcp");
    let plugins = probe("rho plugins list", "plugins");
    eprintln!("rho-bench: timing `{}`", mcp.command_line());

    let mut stdout = Vec::new();
    let mut mcp_runs: Vec<Duration> = Vec::with_capacity(o.runs);
    let mut plugins_runs: Vec<Duration> = Vec::with_capacity(o.runs);
    let (mut mcp_bytes, mut plugins_bytes) = (0, 0);
    for i in 0..o.warmup + o.runs {
        // Alternating which goes first keeps a slow drift in the machine from favouring either.
        let mut time_mcp = |stdout: &mut Vec<u8>| -> Result<Duration, String> {
            let elapsed = mcp.run(stdout)?;
            check_servers(stdout)?;
            mcp_bytes = stdout.len();
            Ok(elapsed)
        };
        let mut time_plugins = |stdout: &mut Vec<u8>| -> Result<Duration, String> {
            let elapsed = plugins.run(stdout)?;
            check_listing(stdout, PLUGINS)?;
            plugins_bytes = stdout.len();
            Ok(elapsed)
        };
        let (m, p) = if i % 2 == 0 {
            let m = time_mcp(&mut stdout)?;
            (m, time_plugins(&mut stdout)?)
        } else {
            let p = time_plugins(&mut stdout)?;
            (time_mcp(&mut stdout)?, p)
        };
        if i >= o.warmup {
            mcp_runs.push(m);
            plugins_runs.push(p);
        }
    }
    let (Some(m), Some(p)) = (Summary::of(&mcp_runs), Summary::of(&plugins_runs)) else {
        return Err(Error::Failed("no timed runs".into()));
    };

    println!("rho mcp list --json (no connect) against rho plugins list --json, same home");
    context::print(&load_at_start, &resolved.rho);
    println!(
        "home:     {PLUGINS} generated plugins ({SERVERS_PER_PLUGIN} MCP servers each) and a \
         config.toml of {CONFIG_SERVERS} servers ({CONFIG_STDIO} stdio, {} streamable_http)",
        CONFIG_SERVERS - CONFIG_STDIO
    );
    println!("baseline: rho plugins list --json on the same home");
    println!(
        "runs:     {} timed after {} warm-up; the two commands alternate; page cache warm",
        o.runs, o.warmup
    );
    println!();
    println!(
        "{:<24} {:>9} {:>7} {:>7} {:>11}",
        "command", "median ms", "min", "p90", "stdout KiB"
    );
    for (name, s, bytes) in [
        ("rho mcp list --json", m, mcp_bytes),
        ("rho plugins list --json", p, plugins_bytes),
    ] {
        println!(
            "{name:<24} {:>9.2} {:>7.2} {:>7.2} {:>11}",
            s.median,
            s.min,
            s.p90,
            bytes / 1024
        );
    }
    println!();
    let added = m.median - p.median;
    println!(
        "mcp list − plugins list: {added:+.2} ms median ({:.2}x); min to min {:+.2} ms",
        m.median / p.median,
        m.min - p.min
    );
    let verdict = verdict(added <= GOAL_ADDED_MS);
    println!("goal: the MCP listing adds ≤ {GOAL_ADDED_MS:.0} ms: {verdict} ({added:+.2} ms)");
    Ok(())
}

/// `CONFIG_SERVERS` entries shaped like real ones: stdio servers with arguments, environment
/// (literal and from rho's environment), tool filters and budgets; HTTP servers with headers.
/// Nothing is started, so the commands and hosts need not exist.
fn config_text(project: &Path) -> String {
    let project = toml_string(&project.to_string_lossy());
    let mut text = String::new();
    for k in 1..=CONFIG_SERVERS {
        if k <= CONFIG_STDIO {
            text.push_str(&format!(
                "[mcp.servers.tools-{k:02}]\n\
                 transport = \"stdio\"\n\
                 command = \"/opt/mcp/bin/server-{k:02}\"\n\
                 args = [\"--stdio\", \"--workspace\", {project}, \"--verbose\"]\n\
                 cwd = {project}\n\
                 env = {{ SERVER_MODE = \"bench\", SERVER_INDEX = \"{k}\" }}\n\
                 env_from_env = {{ SERVER_TOKEN = \"BENCH_TOKEN_{k:02}\" }}\n\
                 startup_timeout_sec = 20\n\
                 call_timeout_sec = 120\n\
                 max_output_bytes = 65536\n\n\
                 [mcp.servers.tools-{k:02}.tools]\n\
                 allow = [\"search\", \"read\", \"write\"]\n\
                 deny = [\"write\"]\n\n"
            ));
        } else {
            text.push_str(&format!(
                "[mcp.servers.remote-{k:02}]\n\
                 transport = \"streamable_http\"\n\
                 url = \"https://mcp-{k:02}.example.com/mcp\"\n\
                 headers = {{ X-Tenant = \"bench-{k:02}\" }}\n\
                 headers_from_env = {{ Authorization = \"BENCH_AUTH_{k:02}\" }}\n\n"
            ));
        }
    }
    text
}

/// Checks that rho listed every configured and every plugin server, none of them failed.
fn check_servers(stdout: &[u8]) -> Result<(), String> {
    let doc: Value =
        serde_json::from_slice(stdout).map_err(|e| format!("rho printed unreadable JSON: {e}"))?;
    let servers = doc["servers"]
        .as_array()
        .ok_or("rho's JSON has no `servers` array")?;
    let expected = CONFIG_SERVERS + PLUGINS * SERVERS_PER_PLUGIN;
    if servers.len() != expected {
        return Err(format!(
            "rho listed {} MCP servers, expected {expected}",
            servers.len()
        ));
    }
    let config = servers.iter().filter(|s| s["source"] == "config").count();
    if config != CONFIG_SERVERS {
        return Err(format!(
            "rho listed {config} config servers, expected {CONFIG_SERVERS}"
        ));
    }
    if let Some(bad) = servers.iter().find(|s| s["status"] != "configured") {
        let field = |key: &str| bad[key].as_str().unwrap_or("?");
        return Err(format!(
            "server {} is {}, expected configured (error: {})",
            field("id"),
            field("status"),
            field("error")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_has_every_server() {
        let text = config_text(Path::new("/p"));
        assert_eq!(
            text.matches("[mcp.servers.tools-").count(),
            CONFIG_STDIO * 2
        );
        assert_eq!(
            text.matches("[mcp.servers.remote-").count(),
            CONFIG_SERVERS - CONFIG_STDIO
        );
        assert!(text.contains("args = [\"--stdio\", \"--workspace\", \"/p\", \"--verbose\"]"));
    }

    #[test]
    fn server_check_wants_every_entry_configured() {
        assert!(check_servers(br#"{"servers": []}"#).is_err());
        let entry = |source: &str, status: &str| serde_json::json!({"id": "x", "source": source, "status": status});
        let doc = |all: &[Value]| serde_json::json!({"servers": all}).to_string().into_bytes();
        let mut all: Vec<Value> = (0..CONFIG_SERVERS)
            .map(|_| entry("config", "configured"))
            .collect();
        all.extend((0..PLUGINS * SERVERS_PER_PLUGIN).map(|_| entry("plugin", "configured")));
        assert_eq!(check_servers(&doc(&all)), Ok(()));
        all[0] = entry("config", "failed");
        assert!(check_servers(&doc(&all)).is_err());
        all[0] = entry("plugin", "configured");
        assert!(check_servers(&doc(&all)).is_err());
    }
}
