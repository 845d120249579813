//! `rho-bench plugins-list`: `rho plugins list --json` over generated roots of N plugins, against
//! VT Code's Agent Plugins loader on the same roots (the peer program in `peers/vtcode-loader/`)
//! and a process that only reads the same files, for several N to show how the cost grows.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::corpus::{self, Corpus, SERVERS_PER_PLUGIN, SKILLS_PER_PLUGIN};
use crate::measure::{Probe, rho_args};
use crate::scratch::Scratch;
use crate::stats::{Line, Summary, verdict};
use crate::{Error, Resolved, machine};
use serde_json::Value;

/// The issue's goal: at 1,000 plugins rho's median is at most this fraction of VT Code's.
const GOAL_RATIO: f64 = 0.7;
/// The earlier absolute goal for the 1,000-plugin median.
const GOAL_MS: f64 = 50.0;
/// The plugin count the goals refer to.
const GOAL_PLUGINS: usize = 1000;
/// The exact version of `vtcode-agent-plugins` the peer is built with (its `Cargo.toml` pins it).
const PEER_VERSION: &str = "0.181.2";
/// Where `cargo build --release` puts the peer, relative to this crate.
const PEER_BUILD: &str = "peers/vtcode-loader/target/release/vtcode-loader";

/// One size's figures.
struct Row {
    plugins: usize,
    files: usize,
    bytes: u64,
    rho: Summary,
    vtcode: Summary,
    baseline: Summary,
}

/// The peer binary: `--vtcode`, or its build beside this crate's sources.
fn peer(resolved: &Resolved) -> Result<PathBuf, Error> {
    let path = match &resolved.options.vtcode {
        Some(path) => path.clone(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join(PEER_BUILD),
    };
    if !path.is_file() {
        return Err(Error::Failed(format!(
            "the VT Code loader peer is not at {}; build it with `cargo build --release \
             --locked --ignore-rust-version --manifest-path bench/peers/vtcode-loader/Cargo.toml` \
             (or pass --vtcode PATH)",
            path.display()
        )));
    }
    std::path::absolute(&path)
        .map_err(|e| Error::Failed(format!("cannot make {} absolute: {e}", path.display())))
}

/// Runs every size and prints the table.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let vtcode = peer(resolved)?;
    println!("rho plugins list --json over generated plugin roots (whole process, stdout drained)");
    println!("machine:  {}", machine::describe());
    println!("load avg: {} (at start)", machine::load());
    println!("rho:      {}", resolved.rho.display());
    println!(
        "vtcode:   {} (vtcode-agent-plugins {PEER_VERSION}, as `vtcode plugins list` loads)",
        vtcode.display()
    );
    println!(
        "baseline: rho-bench read-files <root> (walk + std::fs::read of every file, 1 thread)"
    );
    println!(
        "runs:     {} timed after {} warm-up per size; the three rotate; page cache warm",
        o.runs, o.warmup
    );
    println!(
        "plugin:   plugin.json, {SKILLS_PER_PLUGIN} skills (SKILL.md ~2 KB), mcp.json \
         ({SERVERS_PER_PLUGIN} servers), bin/server"
    );
    // VT Code resolves every path component by component, so its cost grows with the depth of
    // the root; TMPDIR moves it.
    println!(
        "root:     {}/rho-bench-plugins-<N>-<id>/home/.agents/plugins",
        std::env::temp_dir().display()
    );
    println!();
    println!(
        "{:>7} {:>6} {:>7} | {:>10} {:>7} {:>7} | {:>10} {:>7} {:>7} | {:>8} | {:>9} {:>8} | {:>9} {:>10}",
        "plugins",
        "files",
        "KiB",
        "rho med ms",
        "min",
        "p90",
        "vtcode med",
        "min",
        "p90",
        "base med",
        "rho/vtcode",
        "rho/base",
        "µs/plugin",
        "Δµs/plugin"
    );
    let mut rows: Vec<Row> = Vec::new();
    for &size in &o.sizes {
        let row = measure(resolved, &vtcode, size)?;
        let marginal = rows
            .last()
            .filter(|prev| prev.plugins != row.plugins)
            .map(|prev| {
                let per = (row.rho.median - prev.rho.median) * 1e3
                    / (row.plugins as f64 - prev.plugins as f64);
                format!("{per:.1}")
            })
            .unwrap_or_else(|| "-".into());
        println!(
            "{:>7} {:>6} {:>7} | {:>10.1} {:>7.1} {:>7.1} | {:>10.1} {:>7.1} {:>7.1} | {:>8.1} | {:>9.2}x {:>7.2}x | {:>9.1} {:>10}",
            row.plugins,
            row.files,
            row.bytes / 1024,
            row.rho.median,
            row.rho.min,
            row.rho.p90,
            row.vtcode.median,
            row.vtcode.min,
            row.vtcode.p90,
            row.baseline.median,
            row.rho.median / row.vtcode.median,
            row.rho.median / row.baseline.median,
            row.rho.median * 1e3 / row.plugins as f64,
            marginal
        );
        rows.push(row);
    }
    println!("load avg: {} (at end)", machine::load());
    println!();
    let fit = |label: &str, pick: fn(&Row) -> f64| {
        let points: Vec<(f64, f64)> = rows.iter().map(|r| (r.plugins as f64, pick(r))).collect();
        if let Some(line) = Line::fit(&points) {
            println!(
                "linear fit of {label} medians: {:.1} ms + {:.1} µs/plugin (R² {:.4})",
                line.intercept,
                line.slope * 1e3,
                line.r2
            );
        }
    };
    fit("rho", |r| r.rho.median);
    fit("vtcode", |r| r.vtcode.median);
    match rows.iter().find(|r| r.plugins == GOAL_PLUGINS) {
        Some(row) => {
            let ratio = row.rho.median / row.vtcode.median;
            println!(
                "goal: {GOAL_PLUGINS} plugins in ≤ {GOAL_RATIO:.2}x VT Code's loader (median, same \
                 run): {} (rho {:.1} ms, vtcode {:.1} ms, {ratio:.2}x)",
                verdict(ratio <= GOAL_RATIO),
                row.rho.median,
                row.vtcode.median
            );
            println!(
                "goal: {GOAL_PLUGINS} plugins in ≤ {GOAL_MS:.0} ms median: {} ({:.1} ms, {:.2}x \
                 the read-only baseline)",
                verdict(row.rho.median <= GOAL_MS),
                row.rho.median,
                row.rho.median / row.baseline.median
            );
        }
        None => println!("goal: not checked ({GOAL_PLUGINS} is not among --sizes)"),
    }
    Ok(())
}

fn measure(resolved: &Resolved, vtcode: &Path, size: usize) -> Result<Row, Error> {
    let o = &resolved.options;
    let scratch = Scratch::new(&format!("plugins-{size}"))?;
    let home = scratch.dir("home")?;
    let project = scratch.dir("project")?;
    let rho_home = home.join(".rho");
    eprintln!(
        "rho-bench: generating {size} plugins in {}",
        scratch.path().display()
    );
    let corpus = corpus::generate(&home, size)?;

    let env = [("HOME", home.as_path()), ("RHO_HOME", rho_home.as_path())];
    let rho = Probe::new(
        "rho",
        &resolved.rho,
        &rho_args(&project, &["plugins", "list", "--json"]),
        &env,
        &project,
        scratch.path().join("rho.stderr"),
    );
    // VT Code takes its roots from the working directory (the empty project) and `HOME`.
    let peer = Probe::new(
        "vtcode",
        vtcode,
        &[],
        &env,
        &project,
        scratch.path().join("vtcode.stderr"),
    );
    let baseline = Probe::new(
        "baseline",
        &resolved.bench,
        &[OsStr::new("read-files"), corpus.root.as_os_str()],
        &env,
        &project,
        scratch.path().join("baseline.stderr"),
    );
    eprintln!("rho-bench: timing `{}`", rho.command_line());

    let mut stdout = Vec::new();
    let mut runs: [Vec<Duration>; 3] = Default::default();
    let mut warnings = 0;
    for i in 0..o.warmup + o.runs {
        // Rotating which goes first keeps a slow drift in the machine from favouring any one.
        let mut times = [Duration::ZERO; 3];
        for k in 0..3 {
            let which = (i + k) % 3;
            times[which] = match which {
                0 => {
                    let t = rho.run(&mut stdout)?;
                    warnings = check_listing(&stdout, size)?;
                    t
                }
                1 => {
                    let t = peer.run(&mut stdout)?;
                    check_peer(&stdout, size)?;
                    t
                }
                _ => {
                    let t = baseline.run(&mut stdout)?;
                    check_byte_count(&stdout, &corpus)?;
                    t
                }
            };
        }
        if i >= o.warmup {
            for (all, t) in runs.iter_mut().zip(times) {
                all.push(t);
            }
        }
    }
    if warnings > 0 {
        eprintln!("rho-bench: note: rho reported {warnings} warning(s) on the generated corpus");
    }
    let summary =
        |runs: &[Duration]| Summary::of(runs).ok_or_else(|| Error::Failed("no timed runs".into()));
    Ok(Row {
        plugins: size,
        files: corpus.files,
        bytes: corpus.bytes,
        rho: summary(&runs[0])?,
        vtcode: summary(&runs[1])?,
        baseline: summary(&runs[2])?,
    })
}

/// Checks the peer's one line: every generated plugin valid, with all its skills and servers.
pub fn check_peer(stdout: &[u8], expected: usize) -> Result<(), String> {
    let text = String::from_utf8_lossy(stdout);
    let want = format!(
        "plugins {expected} invalid 0 skills {} servers {}",
        expected * SKILLS_PER_PLUGIN,
        expected * SERVERS_PER_PLUGIN
    );
    if text.trim() == want {
        Ok(())
    } else {
        Err(format!(
            "the VT Code loader did not load the corpus whole: it printed {:?}, expected {want:?}",
            text.trim()
        ))
    }
}

/// Checks that rho listed every generated plugin, loaded, with all its skills and servers, and
/// reported no error anywhere; returns the number of warnings.
pub fn check_listing(stdout: &[u8], expected: usize) -> Result<usize, String> {
    let doc: Value =
        serde_json::from_slice(stdout).map_err(|e| format!("rho printed unreadable JSON: {e}"))?;
    let plugins = doc["plugins"]
        .as_array()
        .ok_or("rho's JSON has no `plugins` array")?;
    if plugins.len() != expected {
        return Err(format!(
            "rho listed {} plugins, expected {expected}",
            plugins.len()
        ));
    }
    for plugin in plugins {
        let name = plugin["name"].as_str().unwrap_or("?");
        let count = |key: &str| plugin[key].as_array().map(Vec::len);
        let status = plugin["status"].as_str();
        if status != Some("loaded")
            || count("skills") != Some(SKILLS_PER_PLUGIN)
            || count("mcp_servers") != Some(SERVERS_PER_PLUGIN)
        {
            return Err(format!(
                "rho did not load plugin {name} whole (status {status:?}, skills {:?}, \
                 mcp_servers {:?}; expected loaded, {SKILLS_PER_PLUGIN}, {SERVERS_PER_PLUGIN})",
                count("skills"),
                count("mcp_servers")
            ));
        }
    }
    let mut errors = Vec::new();
    let mut warnings = 0;
    walk(&doc, &mut |v| match v["severity"].as_str() {
        Some("error") => errors.push(v),
        Some("warning") => warnings += 1,
        _ => {}
    });
    if let Some(first) = errors.first() {
        let field = |key: &str| first[key].as_str().unwrap_or("?");
        return Err(format!(
            "rho reported {} error diagnostic(s) on the generated corpus, first: {} {}: {}",
            errors.len(),
            field("code"),
            field("path"),
            field("message")
        ));
    }
    Ok(warnings)
}

/// Visits `value` and every value nested in it.
fn walk<'a>(value: &'a Value, visit: &mut impl FnMut(&'a Value)) {
    visit(value);
    match value {
        Value::Array(items) => items.iter().for_each(|v| walk(v, visit)),
        Value::Object(members) => members.values().for_each(|v| walk(v, visit)),
        _ => {}
    }
}

fn check_byte_count(stdout: &[u8], corpus: &Corpus) -> Result<(), String> {
    let read: Option<u64> = std::str::from_utf8(stdout)
        .ok()
        .and_then(|text| text.trim().parse().ok());
    match read {
        Some(bytes) if bytes == corpus.bytes => Ok(()),
        _ => Err(format!(
            "baseline read {:?} bytes, the corpus has {}",
            String::from_utf8_lossy(stdout).trim(),
            corpus.bytes
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn plugin(name: &str, diagnostics: &[Value]) -> Value {
        json!({
            "name": name,
            "status": "loaded",
            "skills": ["a", "b", "c"],
            "mcp_servers": ["x", "y", "z"],
            "diagnostics": diagnostics,
        })
    }

    #[test]
    fn peer_check_wants_every_plugin_skill_and_server() {
        assert_eq!(
            check_peer(b"plugins 2 invalid 0 skills 6 servers 6\n", 2),
            Ok(())
        );
        for bad in [
            "plugins 2 invalid 0 skills 5 servers 6",
            "plugins 1 invalid 1 skills 3 servers 3",
            "plugins 2 invalid 0 skills 6 servers 0",
            "",
        ] {
            assert!(check_peer(bad.as_bytes(), 2).is_err(), "{bad}");
        }
    }

    #[test]
    fn listing_checks_count_status_and_errors() {
        let listing = |plugins: &[Value]| {
            json!({"plugins": plugins, "diagnostics": []})
                .to_string()
                .into_bytes()
        };
        let ok = listing(&[
            plugin("p1", &[]),
            plugin("p2", &[json!({"severity": "warning", "code": "w"})]),
        ]);
        assert_eq!(check_listing(&ok, 2), Ok(1));
        assert!(check_listing(&ok, 3).is_err());
        let bad = listing(&[plugin(
            "p1",
            &[json!({"severity": "error", "code": "e", "message": "m"})],
        )]);
        assert!(check_listing(&bad, 1).is_err());
        let partial = r#"{"plugins": [{"name": "p", "status": "loaded", "skills": [],
            "mcp_servers": ["x", "y", "z"]}], "diagnostics": []}"#;
        assert!(check_listing(partial.as_bytes(), 1).is_err());
    }
}
