//! `rho-bench soak`: many session start/stop cycles of a real `rho rpc` with 3 `fake-mcp` stdio
//! servers, each followed by a leak check the bench makes itself from `/proc`, against the same
//! cycles with no server.
//!
//! A cycle spawns `rho rpc --ephemeral`, reads its `ready` line (the session has mounted its
//! servers), asks `listTools` and checks that every server's `echo` is there, closes stdin and
//! waits until rho has exited and its stdout is drained. The clock covers all of that. Then,
//! outside the clock, the bench walks `/proc` for processes whose command line carries this
//! run's marker (every server is started with `--bench-marker <marker>`, an argument `fake-mcp`
//! ignores and rho passes through): one still there when rho has gone was left running; one
//! still there after [`GRACE`] is a leak (and is killed, so it is counted once). It also counts
//! its own zombie children. At the end it compares its open descriptors and children with the
//! start. One untimed session first proves the count sees the servers while they run, and
//! leaves rho's compiled-component cache filled, so every timed cycle starts as a user's
//! warm home does.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::fakes::fake_mcp_binary;
use crate::json_lines;
use crate::measure::Probe;
use crate::processes;
use crate::rpc_ready::{LineCommand, UNREACHABLE_ENDPOINT, is_ready, ready_notification, rpc_args};
use crate::scratch::Scratch;
use crate::stats::{max, median, percentile};
use crate::toml_text::toml_string;
use crate::{Error, Resolved, context, machine};

/// How long a marked process may take to disappear after rho has exited before it counts as a
/// leak (a process killed with SIGKILL may still be torn down for a moment).
const GRACE: Duration = Duration::from_millis(500);

/// The id of the request each cycle sends between `ready` and closing stdin.
const LIST_TOOLS_ID: u64 = 1;

/// That request, `listTools`.
fn list_tools() -> String {
    json!({"jsonrpc": "2.0", "id": LIST_TOOLS_ID, "method": "listTools"}).to_string()
}

/// What the checks after one cycle found.
#[derive(Debug, Default, Clone, Copy)]
struct Leaks {
    /// Marked processes still running when rho had exited (gone within the grace period).
    late: usize,
    /// Marked processes still running after the grace period (killed by the bench).
    leaked: usize,
    /// The bench's zombie children after the cycle.
    zombies: usize,
}

impl Leaks {
    fn add(&mut self, other: Leaks) {
        self.late += other.late;
        self.leaked += other.leaked;
        self.zombies += other.zombies;
    }
}

/// One configuration: its command and the cycles timed with it.
struct Case {
    servers: usize,
    command: LineCommand,
    times: Vec<Duration>,
    leaks: Leaks,
}

/// A unique marker for this run's servers: no other run (or other program) has it.
fn run_marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("rho-bench-soak-{}-{nanos}", std::process::id())
}

/// `servers` `fake-mcp --mode ok` servers (`fake01`, ...) carrying `marker`, with every tool
/// call allowed (none is made).
fn config_text(fake: &Path, servers: usize, marker: &str) -> String {
    let mut text = String::from("[agent]\npermission_mode = \"allow-all\"\n\n");
    for k in 1..=servers {
        text.push_str(&format!(
            "[mcp.servers.fake{k:02}]\ncommand = {}\nargs = [\"--mode\", \"ok\", \"--bench-marker\", {}]\n\n",
            toml_string(&fake.to_string_lossy()),
            toml_string(marker)
        ));
    }
    text
}

/// Checks a `listTools` response: exactly `servers` MCP tools, one per server.
fn check_tools(line: &str, servers: usize) -> Result<(), String> {
    let message = json_lines::rpc_line(line)?;
    let tools = message["result"]["tools"]
        .as_array()
        .ok_or_else(|| format!("listTools answered without a tools array: {line}"))?;
    let mcp: Vec<&str> = tools.iter().filter_map(|t| t["server"].as_str()).collect();
    if mcp.len() != servers || (1..=servers).any(|k| !mcp.contains(&format!("fake{k:02}").as_str()))
    {
        return Err(format!(
            "expected one tool from each of {servers} servers, got the servers {mcp:?}"
        ));
    }
    Ok(())
}

/// One timed cycle: spawn, `ready`, `listTools`, stdin closed, exit. Checked after the clock.
fn cycle(case: &mut Case, line: &mut String) -> Result<Duration, String> {
    let request = list_tools();
    let start = Instant::now();
    let mut rpc = case.command.spawn()?;
    rpc.read_line(line)?;
    rpc.write_line(&request)?;
    let mut response = String::new();
    loop {
        rpc.read_line(&mut response)?;
        if json_lines::is_response_to(&json_lines::parse(&response, "rho")?, LIST_TOOLS_ID) {
            break;
        }
    }
    let rest = rpc.finish()?;
    let elapsed = start.elapsed();
    if !is_ready(line) {
        return Err(format!(
            "the first line is {line:?}, expected {}",
            ready_notification()
        ));
    }
    check_tools(&response, case.servers)?;
    // Closing stdin ends the session: each server's `toolset/closed`, then nothing else.
    let closed = rest
        .lines()
        .filter(|l| json_lines::parse(l, "rho").is_ok_and(|n| n["method"] == "toolset/closed"))
        .count();
    if closed != case.servers || rest.lines().count() != closed {
        return Err(format!(
            "after the response rho must print one toolset/closed per server ({}) and nothing else: {rest:?}",
            case.servers
        ));
    }
    Ok(elapsed)
}

/// How long the untimed first session may take to fill the compiled-component cache.
const CACHE_WAIT: Duration = Duration::from_secs(20);

/// The files in the compiled-component cache under `rho_home`.
fn cached_components(rho_home: &Path) -> usize {
    std::fs::read_dir(rho_home.join("cache").join("wasm"))
        .map(|entries| entries.flatten().filter(|e| e.path().is_file()).count())
        .unwrap_or(0)
}

/// Proves the leak check can see the servers: one untimed session of `case`, counting the
/// marked processes while it runs (after `listTools`, every server has answered). The session
/// stays open until rho has written its compiled built-in components to the cache, as a
/// user's first long session does: a session that ends before that compile has finished
/// waits for it at exit (up to the runtime's shutdown timeout) and throws it away, so without
/// this every cycle would pay that compile (see `docs/benchmarks.md`).
fn detector_check(case: &mut Case, marker: &str, rho_home: &Path) -> Result<usize, String> {
    let mut rpc = case.command.spawn()?;
    let mut line = String::new();
    rpc.read_line(&mut line)?;
    rpc.write_line(&list_tools())?;
    loop {
        rpc.read_line(&mut line)?;
        if json_lines::is_response_to(&json_lines::parse(&line, "rho")?, LIST_TOOLS_ID) {
            break;
        }
    }
    let seen = processes::with_marker(marker).len();
    let deadline = Instant::now() + CACHE_WAIT;
    while cached_components(rho_home) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    rpc.finish()?;
    Ok(seen)
}

/// The checks after a cycle: marked survivors (waited for, then killed) and zombie children.
fn check_leaks(marker: &str) -> (Leaks, Vec<processes::Process>) {
    let mut leaks = Leaks::default();
    let at_exit = processes::with_marker(marker);
    let mut leaked = Vec::new();
    if !at_exit.is_empty() {
        let deadline = Instant::now() + GRACE;
        let mut left = at_exit.clone();
        while !left.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
            left = processes::with_marker(marker);
        }
        leaks.leaked = left.len();
        leaks.late = at_exit.len().saturating_sub(left.len());
        for process in &left {
            processes::kill(process.pid);
        }
        leaked = left;
    }
    leaks.zombies = processes::children().1;
    (leaks, leaked)
}

/// Runs the cycles and prints the comparison; fails if anything leaked.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let fake = fake_mcp_binary(resolved)?;
    let load_at_start = machine::load();
    let scratch = Scratch::new("soak")?;
    let home = scratch.dir("home")?;
    let project = scratch.dir("project")?;
    let rho_home = home.join(".rho");
    let env = [("HOME", home.as_path()), ("RHO_HOME", rho_home.as_path())];
    let marker = run_marker();

    let mut cases = Vec::new();
    for servers in [o.servers, 0] {
        let config = scratch.path().join(format!("config-{servers}.toml"));
        std::fs::write(&config, config_text(&fake, servers, &marker))
            .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
        // Nothing listens on port 1: no model request is made.
        let command = LineCommand::new(Probe::new(
            &format!("rho rpc ({servers} servers)"),
            &resolved.rho,
            &rpc_args(&project, Some(&config), &[], UNREACHABLE_ENDPOINT),
            &env,
            &project,
            scratch.path().join(format!("rho-{servers}.stderr")),
        ))?;
        cases.push(Case {
            servers,
            command,
            times: Vec::with_capacity(o.runs),
            leaks: Leaks::default(),
        });
    }
    let mut seen_running = 0;
    if let Some(case) = cases.first_mut() {
        eprintln!("rho-bench: cycling `{}`", case.command.command_line());
        seen_running = detector_check(case, &marker, &rho_home)?;
        if seen_running != o.servers {
            return Err(Error::Failed(format!(
                "the leak check saw {seen_running} marked processes while a session with {} servers ran; it cannot be trusted",
                o.servers
            )));
        }
        check_leaks(&marker);
    }

    // Everything the bench keeps open for the whole run is open now.
    let fds_at_start = processes::open_descriptors();
    let (children_at_start, zombies_at_start) = processes::children();
    let mut line = String::new();
    let mut examples: Vec<String> = Vec::new();
    let started = Instant::now();
    for i in 0..o.warmup + o.runs {
        // Alternate which configuration goes first so a drift in the machine favours neither.
        for k in 0..cases.len() {
            let count = cases.len();
            let case = &mut cases[(i + k) % count];
            let elapsed = cycle(case, &mut line).map_err(|e| format!("cycle {}: {e}", i + 1))?;
            let (leaks, leaked) = check_leaks(&marker);
            case.leaks.add(leaks);
            for process in leaked.iter().take(3usize.saturating_sub(examples.len())) {
                examples.push(format!(
                    "cycle {} ({} servers): pid {} (parent {}, state {}): {}",
                    i + 1,
                    case.servers,
                    process.pid,
                    process.ppid,
                    process.state,
                    process.cmdline
                ));
            }
            if i >= o.warmup {
                case.times.push(elapsed);
            }
        }
        if (i + 1) % 100 == 0 {
            eprintln!("rho-bench: {} cycles of each done", i + 1);
        }
    }
    let wall = started.elapsed();
    let fds_at_end = processes::open_descriptors();
    let (children_at_end, zombies_at_end) = processes::children();

    println!(
        "rho rpc session start/stop cycles with fake-mcp stdio servers, leaks counted from /proc"
    );
    context::print(&load_at_start, &resolved.rho);
    println!(
        "server:   {} --mode ok --bench-marker <run marker> (one tool)",
        fake.display()
    );
    println!(
        "cycle:    spawn rho rpc --ephemeral → ready → listTools → stdin closed → exit reaped"
    );
    println!("baseline: the same cycles with 0 servers in the configuration");
    println!(
        "cache:    {} compiled component(s) in $RHO_HOME/cache/wasm after the untimed first \
         session (every cycle starts warm)",
        cached_components(&rho_home)
    );
    println!(
        "check:    {seen_running} marked fake-mcp processes found in /proc while an untimed \
         session ran (so the leak check sees servers)"
    );
    println!(
        "cycles:   {} timed of each after {} warm-up; the two alternate; {:.1} s in all",
        o.runs,
        o.warmup,
        wall.as_secs_f64()
    );
    println!();
    println!(
        "{:>7} | {:>7} {:>7} {:>7} {:>7} {:>7} | {:>6} {:>6} {:>7}",
        "servers", "mean ms", "p50", "p99", "min", "max", "late", "leaked", "zombies"
    );
    let mut means = Vec::new();
    for case in &cases {
        let ms: Vec<f64> = case.times.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        let mean = ms.iter().sum::<f64>() / ms.len().max(1) as f64;
        means.push(mean);
        println!(
            "{:>7} | {mean:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} | {:>6} {:>6} {:>7}",
            case.servers,
            median(&ms),
            percentile(&ms, 99),
            ms.iter().copied().reduce(f64::min).unwrap_or(f64::NAN),
            max(&ms),
            case.leaks.late,
            case.leaks.leaked,
            case.leaks.zombies,
        );
    }
    println!();
    let leaked: usize = cases.iter().map(|c| c.leaks.leaked).sum();
    let zombies: usize = cases.iter().map(|c| c.leaks.zombies).sum();
    let fd_delta = fds_at_end as i64 - fds_at_start as i64;
    let child_delta = children_at_end as i64 - children_at_start as i64;
    println!(
        "bench descriptors: {fds_at_start} at start, {fds_at_end} at end ({fd_delta:+} leaked)"
    );
    println!(
        "bench children:    {children_at_start} at start ({zombies_at_start} zombies), \
         {children_at_end} at end ({zombies_at_end} zombies)"
    );
    for example in &examples {
        println!("leaked: {example}");
    }
    if let [with, without] = means[..] {
        println!(
            "{} servers / 0 servers: mean cycle {:.2}x ({:+.2} ms)",
            o.servers,
            with / without,
            with - without
        );
    }
    let clean = leaked == 0
        && zombies == 0
        && fd_delta <= 0
        && child_delta <= 0
        && zombies_at_end <= zombies_at_start;
    let verdict = if clean { "PASS" } else { "FAIL" };
    println!(
        "goal: nothing leaks over {} cycles (processes, descriptors, zombies): {verdict} \
         ({leaked} processes, {fd_delta:+} descriptors, {zombies} zombies)",
        o.runs + o.warmup
    );
    if clean {
        Ok(())
    } else {
        Err(Error::Failed("soak: something leaked (see above)".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_marks_every_server() {
        let text = config_text(Path::new("/opt/fake-mcp"), 3, "rho-bench-soak-1-2");
        assert_eq!(text.matches("[mcp.servers.fake").count(), 3);
        assert_eq!(
            text.matches(r#""--bench-marker", "rho-bench-soak-1-2""#)
                .count(),
            3
        );
        assert!(text.starts_with("[agent]"));
        assert!(!config_text(Path::new("/x"), 0, "m").contains("[mcp"));
    }

    #[test]
    fn tools_check_wants_one_tool_per_server() {
        let ok = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read_file"},{"name":"mcp__fake01__echo","server":"fake01"},{"name":"mcp__fake02__echo","server":"fake02"}]}}"#;
        assert_eq!(check_tools(ok, 2), Ok(()));
        assert!(check_tools(ok, 3).is_err());
        assert!(check_tools(ok, 0).is_err());
        let none = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read_file"}]}}"#;
        assert_eq!(check_tools(none, 0), Ok(()));
        assert!(check_tools(r#"{"jsonrpc":"2.0","id":1,"error":{}}"#, 0).is_err());
    }

    #[test]
    fn markers_differ_between_runs() {
        let a = run_marker();
        std::thread::sleep(Duration::from_millis(1));
        assert_ne!(a, run_marker());
        assert!(a.starts_with("rho-bench-soak-"));
    }
}
