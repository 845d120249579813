//! Rules about the workspace itself: the crate dependency graph that ARCHITECTURE.md's crate
//! table and rules lay down, and the documentation tables that must stay in step with the code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};

use rho_e2e::repo_root;
use serde_json::Value;

fn workspace_graph() -> BTreeMap<String, BTreeSet<String>> {
    let out = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut graph = BTreeMap::new();
    for package in meta["packages"].as_array().unwrap() {
        let deps = package["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].is_null()) // normal dependencies only
            .map(|d| d["name"].as_str().unwrap().to_owned())
            .collect();
        graph.insert(package["name"].as_str().unwrap().to_owned(), deps);
    }
    graph
}

fn rho_deps(graph: &BTreeMap<String, BTreeSet<String>>, krate: &str) -> BTreeSet<String> {
    graph
        .get(krate)
        .map(|d| {
            d.iter()
                .filter(|n| n.starts_with("rho-"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn crate_graph_follows_the_design() {
    let graph = workspace_graph();
    let allowed: &[(&str, &[&str])] = &[
        ("rho-component", &[]),
        ("rho-skills", &["rho-component"]),
        ("rho-plugins", &["rho-component", "rho-skills"]),
        ("rho-config", &["rho-component"]),
        ("rho-mcp", &["rho-component", "rho-config"]),
        ("rho-wasm", &["rho-component"]),
        ("rho-builtin-plugins", &["rho-component", "rho-skills"]),
        (
            "rho-core",
            &[
                "rho-component",
                "rho-skills",
                "rho-plugins",
                "rho-config",
                "rho-mcp",
                "rho-wasm",
                "rho-builtin-plugins",
            ],
        ),
        ("rho-rpc", &["rho-component", "rho-core"]),
        ("rho-tui", &["rho-component", "rho-core"]),
        (
            "rho-cli",
            &[
                "rho-component",
                "rho-skills",
                "rho-plugins",
                "rho-config",
                "rho-mcp",
                "rho-wasm",
                "rho-builtin-plugins",
                "rho-core",
                "rho-rpc",
                "rho-tui",
            ],
        ),
        ("rho-plugin-sdk", &[]),
        (
            "rho-e2e",
            &[
                "rho-component",
                "rho-config",
                "rho-mcp",
                "rho-core",
                "rho-rpc",
            ],
        ),
        ("rho-bench", &[]),
    ];
    for (krate, deps) in &graph {
        if !krate.starts_with("rho-") {
            continue;
        }
        let rule = allowed.iter().find(|(k, _)| k == krate).unwrap_or_else(|| {
            panic!("{krate} has no rule: add it to ARCHITECTURE.md's crate table and here")
        });
        let allowed: BTreeSet<String> = rule.1.iter().map(|s| s.to_string()).collect();
        let extra: Vec<_> = rho_deps(&graph, krate)
            .difference(&allowed)
            .cloned()
            .collect();
        assert!(extra.is_empty(), "{krate} may not depend on {extra:?}");
        // Leaves know nothing: rho-component is plain data, no IO runtime (libc only for the
        // open flags of its one file reader).
        if krate == "rho-component" {
            assert!(
                deps.iter()
                    .all(|d| ["serde", "serde_json", "url", "libc"].contains(&d.as_str())),
                "{deps:?}"
            );
        }
    }
    // rmcp and wasmtime each live in exactly one crate.
    for (heavy, home) in [("rmcp", "rho-mcp"), ("wasmtime", "rho-wasm")] {
        let users: Vec<_> = graph
            .iter()
            .filter(|(_, d)| d.contains(heavy))
            .map(|(k, _)| k.clone())
            .collect();
        assert!(
            users.is_empty() || users == [home.to_string()],
            "{heavy} used by {users:?}"
        );
    }
}

#[test]
fn every_diagnostic_code_is_documented_and_every_documented_code_exists() {
    let doc = std::fs::read_to_string(repo_root().join("docs/diagnostics.md")).unwrap();
    let documented: BTreeSet<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect();
    let codes: BTreeSet<String> = rho_component::DiagnosticCode::ALL
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    assert_eq!(documented, codes);
}
