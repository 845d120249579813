//! `rho-bench lazy-ready`: the time from spawning `rho rpc` to its `ready` line with N (50)
//! lazy `fake-mcp` servers the tool cache knows, against the same session with no server; and,
//! for reference, with the same N entries disabled (`enabled = false`: what reading and listing
//! them costs, without the cache) and with N servers started eagerly (what every server did
//! before lazy start). Timed like `rpc-ready` (clock from just before `spawn` to reading the
//! first line).
//!
//! Before timing, one session with the lazy configuration fills the tool cache (nothing is
//! cached yet, so each lazy server starts once in the background and is remembered) and a
//! second one checks, through `listExtensions`, that every server is then `known`. Each server
//! appends its pid to a file at every start: after the fill that file must never change, and
//! while each timed lazy session is up, no process may carry the file's path on its command
//! line (read from `/proc`). Either failure stops the bench: a lazy session that spawns
//! servers would time something else.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::fakes::fake_mcp_binary;
use crate::lazy::{
    cache_entries, check_statuses, fill_cache, server_statuses, server_table, starts,
};
use crate::measure::Probe;
use crate::processes;
use crate::rpc_ready::{LineCommand, UNREACHABLE_ENDPOINT, is_ready, ready_notification, rpc_args};
use crate::scratch::Scratch;
use crate::stats::{Summary, verdict};
use crate::{Error, Resolved, context, machine};

/// The goal: `ready` with N lazy cached servers within this multiple of `ready` with
/// none.
const GOAL_RATIO: f64 = 1.2;

/// The configurations, in the order of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// No MCP server.
    None,
    /// N servers with `enabled = false`: read from the configuration and listed, never
    /// mounted (what the configuration itself costs, without the tool cache).
    Disabled,
    /// N lazy servers, every one known from the tool cache.
    Lazy,
    /// N servers started before `ready` (the default `startup = "eager"`).
    Eager,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::None => "no servers",
            Kind::Disabled => "disabled",
            Kind::Lazy => "lazy, cached",
            Kind::Eager => "eager",
        }
    }
}

/// One configuration and its timed runs.
struct Case {
    kind: Kind,
    command: LineCommand,
    runs: Vec<Duration>,
}

/// The configuration file of `kind` with `servers` servers (`lazy01`, ... or `eager01`, ...).
fn config_text(kind: Kind, fake: &Path, pids: &Path, servers: usize) -> String {
    let (prefix, startup) = match kind {
        Kind::None => return String::new(),
        Kind::Disabled => ("off", "lazy"),
        Kind::Lazy => ("lazy", "lazy"),
        Kind::Eager => ("eager", "eager"),
    };
    (1..=servers)
        .map(|k| {
            let table = server_table(&format!("{prefix}{k:02}"), fake, pids, startup);
            match kind {
                Kind::Disabled => format!("{}\nenabled = false\n\n", table.trim_end()),
                _ => table,
            }
        })
        .collect()
}

/// Times the three configurations and prints the comparison; fails if a lazy session spawned
/// a server.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let servers = o.servers;
    let fake = fake_mcp_binary(resolved)?;
    let load_at_start = machine::load();
    let scratch = Scratch::new("lazy-ready")?;
    let (home, project, rho_home) = scratch.layout()?;
    let env = [("HOME", home.as_path()), ("RHO_HOME", rho_home.as_path())];
    let lazy_pids = scratch.path().join("lazy.pids");
    let eager_pids = scratch.path().join("eager.pids");

    let mut cases = Vec::new();
    for kind in [Kind::None, Kind::Disabled, Kind::Lazy, Kind::Eager] {
        let name = format!("{kind:?}").to_lowercase();
        let pids = if kind == Kind::Eager {
            &eager_pids
        } else {
            &lazy_pids
        };
        let config = scratch.path().join(format!("config-{name}.toml"));
        std::fs::write(&config, config_text(kind, &fake, pids, servers))
            .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
        // The endpoint is unreachable: `ready` never waits on the model.
        let command = LineCommand::new(Probe::new(
            &format!("rho rpc ({})", kind.label()),
            &resolved.rho,
            &rpc_args(&project, Some(&config), &[], UNREACHABLE_ENDPOINT),
            &env,
            &project,
            scratch.path().join(format!("rho-{name}.stderr")),
        ))?;
        cases.push(Case {
            kind,
            command,
            runs: Vec::with_capacity(o.runs),
        });
    }
    let lazy = cases
        .iter_mut()
        .find(|c| c.kind == Kind::Lazy)
        .ok_or_else(|| Error::Failed("no lazy configuration".into()))?;
    eprintln!(
        "rho-bench: filling the tool cache: `{}`",
        lazy.command.command_line()
    );
    let filled = fill_cache(&mut lazy.command, &rho_home, servers)?;
    let filled_starts = starts(&lazy_pids)?;
    if filled_starts != servers {
        return Err(Error::Failed(format!(
            "filling the cache started the lazy servers {filled_starts} times, expected \
             {servers} (one each; {})",
            lazy_pids.display()
        )));
    }
    {
        let mut rpc = lazy.command.spawn_ready()?;
        let statuses = server_statuses(&mut rpc, 1)?;
        check_statuses(&statuses, servers, "known")
            .map_err(|e| format!("after filling the cache: {e}"))?;
        rpc.finish()?;
    }
    let marker = lazy_pids.to_string_lossy().into_owned();
    expect_nothing_spawned(&lazy_pids, filled_starts, &marker)?;
    eprintln!("rho-bench: {servers} servers known; timing");

    let mut line = String::new();
    let mut eager_starts = starts(&eager_pids)?;
    for i in 0..o.warmup + o.runs {
        // Rotate the order so a slow drift in the machine favours no configuration.
        for k in 0..cases.len() {
            let count = cases.len();
            let case = &mut cases[(i + k) % count];
            let start = Instant::now();
            let mut rpc = case.command.spawn()?;
            rpc.read_line(&mut line)?;
            let elapsed = start.elapsed();
            if !is_ready(&line) {
                return Err(Error::Failed(format!(
                    "{}: the first stdout line is {line:?}, expected {}",
                    case.kind.label(),
                    ready_notification()
                )));
            }
            match case.kind {
                // While the session is up: no process of a lazy server.
                Kind::Lazy => expect_nothing_spawned(&lazy_pids, filled_starts, &marker)?,
                // Every eager server started before `ready`.
                Kind::Eager => {
                    let now = starts(&eager_pids)?;
                    if now != eager_starts + servers {
                        return Err(Error::Failed(format!(
                            "an eager session started {} servers before ready, expected \
                             {servers}",
                            now - eager_starts
                        )));
                    }
                    eager_starts = now;
                }
                Kind::None | Kind::Disabled => {}
            }
            rpc.finish()?;
            if i >= o.warmup {
                case.runs.push(elapsed);
            }
        }
    }
    // And after every session ended.
    expect_nothing_spawned(&lazy_pids, filled_starts, &marker)?;
    let summaries = cases
        .iter()
        .map(|c| {
            Summary::of(&c.runs)
                .map(|s| (c.kind, s))
                .ok_or_else(|| Error::Failed("no timed runs".into()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let [(_, none), (_, disabled), (_, lazy), (_, eager)] = summaries[..] else {
        return Err(Error::Failed("expected four configurations".into()));
    };

    println!(
        "rho rpc: spawn to the `ready` line with {servers} lazy servers known from the tool cache"
    );
    context::print(&load_at_start, &resolved.rho);
    println!(
        "servers:  {} --mode ok --pid-file <file> (one tool); lazy: startup = \"lazy\", \
         eager: the default",
        fake.display()
    );
    println!(
        "command:  rho --cwd <tmp>/project --config <tmp>/config-<kind>.toml rpc --ephemeral \
         --endpoint http://127.0.0.1:1/v1 --model m"
    );
    println!(
        "baseline: the same command with no server in the configuration; `disabled` has the \
         {servers} lazy entries with enabled = false (read and listed, never mounted)"
    );
    println!(
        "cache:    filled by one lazy session in {:.0} ms ({servers} background starts, \
         {servers} entries); a second session listed every server `known`",
        filled.as_secs_f64() * 1e3
    );
    println!(
        "runs:     {} timed after {} warm-up; the four configurations rotate; stdin closed and \
         the process reaped after the clock stops",
        o.runs, o.warmup
    );
    println!(
        "spawned:  lazy servers started {} times after the fill (pid file), 0 lazy-server \
         processes seen in /proc during the lazy sessions; {} cache entries at the end",
        starts(&lazy_pids)? - filled_starts,
        cache_entries(&rho_home)
    );
    println!();
    println!(
        "{:<14} {:>7} | {:>9} {:>7} {:>7} | {:>12}",
        "servers", "count", "median ms", "min", "p90", "over none ms"
    );
    for (kind, s) in &summaries {
        let count = if *kind == Kind::None { 0 } else { servers };
        println!(
            "{:<14} {count:>7} | {:>9.2} {:>7.2} {:>7.2} | {:>12.2}",
            kind.label(),
            s.median,
            s.min,
            s.p90,
            s.median - none.median
        );
    }
    println!();
    let ratio = lazy.median / none.median;
    let per_server = |ms: f64| ms * 1e3 / servers as f64;
    println!(
        "lazy/none: {ratio:.2}x ({:+.2} ms, {:.1} µs per server: {:.1} µs reading the entries \
         (disabled − none), {:.1} µs mounting them from the cache (lazy − disabled)); \
         eager/none: {:.2}x; eager/lazy: {:.1}x",
        lazy.median - none.median,
        per_server(lazy.median - none.median),
        per_server(disabled.median - none.median),
        per_server(lazy.median - disabled.median),
        eager.median / none.median,
        eager.median / lazy.median
    );
    let verdict = verdict(ratio <= GOAL_RATIO);
    println!(
        "goal: ready with {servers} lazy cached servers ≤ {GOAL_RATIO:.1}x ready with none \
         (median): {verdict} ({ratio:.2}x); no lazy server spawned: met"
    );
    Ok(())
}

/// Fails if the lazy servers started since the fill (`pids` no longer holds `filled` pids) or
/// a process with `marker` (the pid file's path) on its command line runs.
fn expect_nothing_spawned(pids: &Path, filled: usize, marker: &str) -> Result<(), String> {
    let now = starts(pids)?;
    if now != filled {
        return Err(format!(
            "a lazy server known from the cache was started: {} holds {now} pids, {filled} after \
             the fill",
            pids.display()
        ));
    }
    let running = processes::with_marker(marker);
    if let Some(process) = running.first() {
        return Err(format!(
            "a lazy server's process runs during a lazy session: pid {} (parent {}): {}",
            process.pid, process.ppid, process.cmdline
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_hold_their_servers() {
        let fake = Path::new("/x/fake-mcp");
        let pids = Path::new("/tmp/p");
        assert_eq!(config_text(Kind::None, fake, pids, 50), "");
        let lazy = config_text(Kind::Lazy, fake, pids, 50);
        assert_eq!(lazy.matches("startup = \"lazy\"").count(), 50);
        assert!(lazy.contains("[mcp.servers.lazy01]") && lazy.contains("[mcp.servers.lazy50]"));
        let eager = config_text(Kind::Eager, fake, pids, 3);
        assert_eq!(eager.matches("startup = \"eager\"").count(), 3);
        assert!(!eager.contains("lazy"));
        let disabled = config_text(Kind::Disabled, fake, pids, 2);
        assert_eq!(disabled.matches("enabled = false\n").count(), 2);
        assert!(disabled.contains("[mcp.servers.off02]"));
        assert!(disabled.contains("startup = \"lazy\"\nenabled = false\n"));
    }

    #[test]
    fn nothing_spawned_wants_the_pid_file_unchanged() {
        let scratch = Scratch::new("lazy-ready-test").unwrap();
        let pids = scratch.path().join("pids");
        std::fs::write(&pids, "1\n2\n").unwrap();
        let marker = scratch.path().to_string_lossy().into_owned();
        assert_eq!(expect_nothing_spawned(&pids, 2, &marker), Ok(()));
        assert!(expect_nothing_spawned(&pids, 1, &marker).is_err());
    }
}
