//! The official MCP conformance suite's server scenarios against `rho mcp serve`: the gateway
//! listens on loopback Streamable HTTP with `--upstream-names` in front of
//! `tests/peers/conformance_upstream.mjs` (the resources, template, tools and prompts the
//! scenarios use, under the reference server's names) and `tests/peers/mrtr_upstream.mjs` (the
//! tools of the input-required-result scenarios), and every server scenario of the
//! 2025-11-25 and 2026-07-28 revisions runs at its own revision's wire, except those
//! `tests/conformance/gateway-scenarios.yaml` lists as not applying to a gateway (each with
//! why). Each must pass: the suite's verdict, no failed or warning check, at least one check
//! passed.

use std::path::Path;

use rho_e2e::*;

use crate::conformance_suite::{INSTALL, REVISIONS, Suite, find_results, plain, recorded_checks};
use crate::mcp_serve_http::HttpGateway;

/// A scenario the suite has that does not apply to a gateway, and why.
struct NotApplicable {
    scenario: String,
    why: String,
}

/// The entries of `tests/conformance/gateway-scenarios.yaml` (`- scenario: <name>` then
/// `why: <text>`).
fn not_applicable() -> Vec<NotApplicable> {
    let path = repo_root().join("tests/conformance/gateway-scenarios.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut entries: Vec<NotApplicable> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("- scenario:") {
            entries.push(NotApplicable {
                scenario: name.trim().to_owned(),
                why: String::new(),
            });
        } else if let Some(why) = line.strip_prefix("why:") {
            let entry = entries
                .last_mut()
                .unwrap_or_else(|| panic!("{}: `why` before any scenario", path.display()));
            entry.why = why.trim().to_owned();
        }
    }
    for entry in &entries {
        assert!(
            !entry.why.is_empty(),
            "{}: {} says no why",
            path.display(),
            entry.scenario
        );
    }
    entries
}

/// One scenario's verdict: the problems found (none when it passed).
fn run(suite: &Suite, url: &str, out: &Path, revision: &str, scenario: &str) -> Vec<String> {
    let dir = out.join(revision).join(scenario);
    std::fs::create_dir_all(&dir).unwrap();
    let run = suite.cli(&[
        "server",
        "--url",
        url,
        "--scenario",
        scenario,
        "--spec-version",
        revision,
        "-o",
        dir.to_str().unwrap(),
    ]);
    let mut problems = Vec::new();
    if !run.status.success() {
        problems.push(format!("the suite exited with {}", run.status));
    }
    match find_results(&dir) {
        None => problems.push("the suite recorded no checks.json".into()),
        Some(results) => {
            let (checks, failed) = recorded_checks(&results);
            problems.extend(failed);
            if !checks.iter().any(|c| c["status"] == "SUCCESS") {
                problems.push("no check passed".into());
            }
        }
    }
    if !problems.is_empty() {
        let stdout = plain(&String::from_utf8_lossy(&run.stdout));
        let tail: Vec<&str> = stdout.lines().rev().take(8).collect();
        problems.push(format!(
            "suite: {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ));
    }
    problems
}

#[test]
fn the_server_scenarios_that_apply_to_a_gateway_pass_at_both_revisions() {
    let suite = Suite::installed();
    let upstream = repo_root().join("tests/peers/conformance_upstream.mjs");
    let sdk = repo_root().join("tests/peers/node_modules/@modelcontextprotocol/sdk");
    assert!(
        sdk.exists(),
        "{} is missing: install the test peers with `npm ci --prefix tests/peers` ({INSTALL})",
        sdk.display()
    );
    // The input-required-result scenarios' tools ask the 2026-07-28 way, so they come from a
    // server on the SDK's 2026-07-28 package (rho passes their questions on under their keys).
    let asking = repo_root().join("tests/peers/mrtr_upstream.mjs");
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[mcp.servers.conformance]\ncommand = \"node\"\nargs = [{:?}]\nsampling = \"ask\"\n\n\
         [mcp.servers.asking]\ncommand = \"node\"\nargs = [{:?}]\nsampling = \"ask\"\n",
        upstream.display().to_string(),
        asking.display().to_string()
    ));
    // The scenarios call the reference server's tools and prompts by their own names: served
    // under the upstream's names, as a client wrapping one server sees them. rho's exported
    // names are tested with real clients in mcp_serve.rs.
    let gateway = HttpGateway::start(&sandbox, "127.0.0.1:0", &["--upstream-names"], &[]);

    let excluded = not_applicable();
    let mut runs: Vec<(&str, String)> = Vec::new();
    let mut known = std::collections::BTreeSet::new();
    for revision in REVISIONS {
        for scenario in suite.server_scenarios(revision) {
            known.insert(scenario.clone());
            if !excluded.iter().any(|e| e.scenario == scenario) {
                runs.push((revision, scenario));
            }
        }
    }
    let stale: Vec<&str> = excluded
        .iter()
        .map(|e| e.scenario.as_str())
        .filter(|s| !known.contains(*s))
        .collect();
    assert!(
        stale.is_empty(),
        "gateway-scenarios.yaml names scenarios the suite does not have: {stale:?}"
    );

    // A few at once: each is a client of its own against the one gateway. A scenario whose
    // tool makes the upstream ask (sampling, a form) or log runs alone: rho puts a 2025-11-25
    // stdio server's question or log message to the one call in flight on it, and to none
    // while several are (docs/mcp.md, "Questions from a server").
    let total = runs.len();
    let ran: Vec<String> = runs.iter().map(|(_, s)| s.clone()).collect();
    let (alone, together): (Vec<_>, Vec<_>) = runs.into_iter().partition(|(_, scenario)| {
        scenario.contains("sampling")
            || scenario.contains("elicitation")
            || scenario.contains("logging")
    });
    let batches = together
        .chunks(4)
        .map(<[_]>::to_vec)
        .chain(alone.into_iter().map(|run| vec![run]));
    let out = tempfile::tempdir().unwrap();
    let mut failed = Vec::new();
    for batch in batches {
        let outcomes: Vec<(String, Vec<String>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = batch
                .iter()
                .map(|(revision, scenario)| {
                    let (suite, url, out) = (&suite, gateway.url.as_str(), out.path());
                    scope.spawn(move || {
                        let problems = run(suite, url, out, revision, scenario);
                        (format!("{revision} {scenario}"), problems)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        failed.extend(outcomes.into_iter().filter(|(_, p)| !p.is_empty()));
    }
    if !failed.is_empty() {
        let kept = out.keep();
        let report: Vec<String> = failed
            .iter()
            .map(|(name, problems)| format!("{name}:\n    {}", problems.join("\n    ")))
            .collect();
        panic!(
            "{} of {} server scenarios failed against rho mcp serve (results in {}):\n{}",
            failed.len(),
            total,
            kept.display(),
            report.join("\n")
        );
    }
    // The resource scenarios ran (the gateway passes URIs, templates and blobs through).
    for scenario in [
        "tools-call-audio",
        "tools-call-mixed-content",
        "tools-call-sampling",
        "prompts-get-with-args",
        "resources-read-text",
        "resources-read-binary",
        "resources-templates-read",
    ] {
        assert!(ran.iter().any(|s| s == scenario), "{scenario} did not run");
    }
}
