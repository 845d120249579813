//! `rho-bench plugins-list`: `rho plugins list --json` over generated roots of N plugins, against
//! a process that only reads the same files, for several N to show how the cost grows.

use std::ffi::OsStr;

use crate::corpus::{self, Corpus, SERVERS_PER_PLUGIN, SKILLS_PER_PLUGIN};
use crate::json::{self, Value};
use crate::measure::Probe;
use crate::scratch::Scratch;
use crate::stats::{Line, Summary};
use crate::{Error, Resolved, machine};

/// The issue's goal for the 1,000-plugin median.
const GOAL_MS: f64 = 50.0;
/// The plugin count the goal and the peer figure refer to.
const GOAL_PLUGINS: usize = 1000;
/// The peer figure quoted in the issue (VT Code's vtcode-agent-plugins); not measured here.
const PEER_MS: f64 = 75.0;

/// One size's figures.
struct Row {
    plugins: usize,
    files: usize,
    bytes: u64,
    rho: Summary,
    baseline: Summary,
}

/// Runs every size and prints the table.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    println!("rho plugins list --json over generated plugin roots (whole process, stdout drained)");
    println!("machine:  {}", machine::describe());
    println!("load avg: {} (at start)", machine::load());
    println!("rho:      {}", resolved.rho.display());
    println!(
        "baseline: rho-bench read-files <root> (walk + std::fs::read of every file, 1 thread)"
    );
    println!(
        "runs:     {} timed after {} warm-up per size; rho and baseline alternate; page cache warm",
        o.runs, o.warmup
    );
    println!(
        "plugin:   plugin.json, {SKILLS_PER_PLUGIN} skills (SKILL.md ~2 KB), mcp.json \
         ({SERVERS_PER_PLUGIN} servers), bin/server"
    );
    println!();
    println!(
        "{:>7} {:>6} {:>7} | {:>10} {:>7} {:>7} | {:>10} {:>7} {:>7} | {:>8} | {:>9} {:>10}",
        "plugins",
        "files",
        "KiB",
        "rho med ms",
        "min",
        "p90",
        "base med",
        "min",
        "p90",
        "rho/base",
        "µs/plugin",
        "Δµs/plugin"
    );
    let mut rows: Vec<Row> = Vec::new();
    for &size in &o.sizes {
        let row = measure(resolved, size)?;
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
            "{:>7} {:>6} {:>7} | {:>10.1} {:>7.1} {:>7.1} | {:>10.1} {:>7.1} {:>7.1} | {:>7.2}x | {:>9.1} {:>10}",
            row.plugins,
            row.files,
            row.bytes / 1024,
            row.rho.median,
            row.rho.min,
            row.rho.p90,
            row.baseline.median,
            row.baseline.min,
            row.baseline.p90,
            row.rho.median / row.baseline.median,
            row.rho.median * 1e3 / row.plugins as f64,
            marginal
        );
        rows.push(row);
    }
    println!();
    let points: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r.plugins as f64, r.rho.median))
        .collect();
    if let Some(line) = Line::fit(&points) {
        println!(
            "linear fit of rho medians: {:.1} ms + {:.1} µs/plugin (R² {:.4})",
            line.intercept,
            line.slope * 1e3,
            line.r2
        );
    }
    match rows.iter().find(|r| r.plugins == GOAL_PLUGINS) {
        Some(row) => {
            let verdict = if row.rho.median <= GOAL_MS {
                "met"
            } else {
                "NOT met"
            };
            println!(
                "goal: {GOAL_PLUGINS} plugins in ≤ {GOAL_MS:.0} ms median: {verdict} \
                 ({:.1} ms, {:.2}x the read-only baseline)",
                row.rho.median,
                row.rho.median / row.baseline.median
            );
            println!(
                "peer: VT Code vtcode-agent-plugins ~{PEER_MS:.0} ms on this corpus (figure from \
                 the issue, not measured here); rho takes {:.2}x that",
                row.rho.median / PEER_MS
            );
        }
        None => println!("goal: not checked ({GOAL_PLUGINS} is not among --sizes)"),
    }
    Ok(())
}

fn measure(resolved: &Resolved, size: usize) -> Result<Row, Error> {
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
        &[
            OsStr::new("--cwd"),
            project.as_os_str(),
            OsStr::new("plugins"),
            OsStr::new("list"),
            OsStr::new("--json"),
        ],
        &env,
        &project,
        scratch.path().join("rho.stderr"),
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
    let mut rho_runs = Vec::with_capacity(o.runs);
    let mut baseline_runs = Vec::with_capacity(o.runs);
    let mut warnings = 0;
    for i in 0..o.warmup + o.runs {
        // Alternating which goes first keeps a slow drift in the machine from favouring either.
        let (rho_time, baseline_time) = if i % 2 == 0 {
            let r = rho.run(&mut stdout)?;
            warnings = check_listing(&stdout, size)?;
            let b = baseline.run(&mut stdout)?;
            check_byte_count(&stdout, &corpus)?;
            (r, b)
        } else {
            let b = baseline.run(&mut stdout)?;
            check_byte_count(&stdout, &corpus)?;
            let r = rho.run(&mut stdout)?;
            warnings = check_listing(&stdout, size)?;
            (r, b)
        };
        if i >= o.warmup {
            rho_runs.push(rho_time);
            baseline_runs.push(baseline_time);
        }
    }
    if warnings > 0 {
        eprintln!("rho-bench: note: rho reported {warnings} warning(s) on the generated corpus");
    }
    let summary = |runs: &[std::time::Duration]| {
        Summary::of(runs).ok_or_else(|| Error::Failed("no timed runs".into()))
    };
    Ok(Row {
        plugins: size,
        files: corpus.files,
        bytes: corpus.bytes,
        rho: summary(&rho_runs)?,
        baseline: summary(&baseline_runs)?,
    })
}

/// Checks that rho listed every generated plugin, loaded, with all its skills and servers, and
/// reported no error anywhere; returns the number of warnings.
pub fn check_listing(stdout: &[u8], expected: usize) -> Result<usize, String> {
    let doc = json::parse(stdout).map_err(|e| format!("rho printed unreadable JSON: {e}"))?;
    let plugins = doc
        .get("plugins")
        .and_then(Value::as_array)
        .ok_or("rho's JSON has no `plugins` array")?;
    if plugins.len() != expected {
        return Err(format!(
            "rho listed {} plugins, expected {expected}",
            plugins.len()
        ));
    }
    for plugin in plugins {
        let name = plugin.get("name").and_then(Value::as_str).unwrap_or("?");
        let count = |key: &str| plugin.get(key).and_then(Value::as_array).map(<[_]>::len);
        let status = plugin.get("status").and_then(Value::as_str);
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
    doc.walk(&mut |v| match v.get("severity").and_then(Value::as_str) {
        Some("error") => errors.push(v),
        Some("warning") => warnings += 1,
        _ => {}
    });
    if let Some(first) = errors.first() {
        let field = |key| first.get(key).and_then(Value::as_str).unwrap_or("?");
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
    use super::*;

    fn plugin(name: &str, diagnostics: &str) -> String {
        format!(
            r#"{{"name": "{name}", "status": "loaded", "skills": ["a", "b", "c"],
                "mcp_servers": ["x", "y", "z"], "diagnostics": [{diagnostics}]}}"#
        )
    }

    #[test]
    fn listing_checks_count_status_and_errors() {
        let ok = format!(
            r#"{{"plugins": [{}, {}], "diagnostics": []}}"#,
            plugin("p1", ""),
            plugin("p2", r#"{"severity": "warning", "code": "w"}"#)
        );
        assert_eq!(check_listing(ok.as_bytes(), 2), Ok(1));
        assert!(check_listing(ok.as_bytes(), 3).is_err());
        let bad = format!(
            r#"{{"plugins": [{}], "diagnostics": []}}"#,
            plugin(
                "p1",
                r#"{"severity": "error", "code": "e", "message": "m"}"#
            )
        );
        assert!(check_listing(bad.as_bytes(), 1).is_err());
        let partial = r#"{"plugins": [{"name": "p", "status": "loaded", "skills": [],
            "mcp_servers": ["x", "y", "z"]}], "diagnostics": []}"#;
        assert!(check_listing(partial.as_bytes(), 1).is_err());
    }
}
