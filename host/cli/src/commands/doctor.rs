//! `rho doctor`: one row per part of the setup (config, Agent Plugins, skills, MCP servers,
//! providers), each `ok`, `warning` or `error` with a short detail. Exit code 1 when any row
//! is an error.

use std::process::ExitCode;
use std::time::Duration;

use rho_component::Severity;
use rho_core::{MountOptions, ProviderFlags, ServerStatus};
use serde::Serialize;

use super::runtime;
use crate::context::Context;
use crate::output::{clean, json_write, out, table};

#[derive(Debug, Serialize)]
struct Row {
    check: &'static str,
    status: &'static str,
    detail: String,
}

fn status(errors: usize, warnings: usize) -> &'static str {
    if errors > 0 {
        "error"
    } else if warnings > 0 {
        "warning"
    } else {
        "ok"
    }
}

pub fn run(ctx: &Context, connect: bool) -> anyhow::Result<ExitCode> {
    let registry = ctx.registry();
    let mut rows = Vec::new();
    rows.push(Row {
        check: "config",
        status: if registry.config_error.is_some() {
            "error"
        } else {
            "ok"
        },
        detail: match (&registry.config_error, &registry.config.path) {
            (Some(e), _) => e.clone(),
            (None, Some(path)) => format!(
                "{} (permission mode {})",
                path.display(),
                registry.config.agent.permission_mode.as_str()
            ),
            (None, None) => format!(
                "no config file ({} does not exist); defaults apply",
                registry.paths.default_config_file().display()
            ),
        },
    });
    let plugins = registry.plugin_summaries();
    let count = |s: &str| plugins.iter().filter(|p| p.status == s).count();
    let plugin_errors = registry
        .plugins
        .all_diagnostics()
        .filter(|d| d.severity == Severity::Error)
        .count();
    rows.push(Row {
        check: "agent plugins",
        status: status(count("rejected") + plugin_errors, count("shadowed")),
        detail: format!(
            "{} loaded, {} disabled, {} rejected, {} shadowed; {} problem(s)",
            count("loaded"),
            count("disabled"),
            count("rejected"),
            count("shadowed"),
            plugin_errors
        ),
    });
    let mut untrusted: Vec<String> = registry
        .servers
        .iter()
        .filter(|s| matches!(s.state, rho_core::SlotState::Untrusted(_)))
        .map(|s| s.id.clone())
        .collect();
    let servers_untrusted = untrusted.len();
    for record in registry.plugins.loaded() {
        if !record.package.tool_components.is_empty()
            && !registry.trust.state(record).allows_start()
        {
            untrusted.extend(
                record
                    .package
                    .tool_components
                    .iter()
                    .map(|c| format!("{}/{} (WASM)", c.plugin, c.name)),
            );
        }
    }
    let trust_file = registry.paths.trust_file();
    let store_problem = registry.diagnostics.iter().find(|d| {
        d.code == rho_component::DiagnosticCode::StateFileInvalid
            && d.message.contains(&*trust_file.to_string_lossy())
    });
    rows.push(Row {
        check: "plugin trust",
        status: if store_problem.is_some() {
            "error"
        } else {
            status(0, untrusted.len())
        },
        detail: match store_problem {
            Some(d) => d.message.clone(),
            None if untrusted.is_empty() => {
                "no untrusted project plugin servers or components".into()
            }
            None => format!(
                "{} server(s) and {} WASM component(s) of untrusted project plugins will not run: {} (see `rho plugins trust`)",
                servers_untrusted,
                untrusted.len() - servers_untrusted,
                untrusted.join(", ")
            ),
        },
    });
    let skill_problems = registry
        .diagnostics
        .iter()
        .filter(|d| d.code.as_str().starts_with("skill"))
        .count();
    rows.push(Row {
        check: "skills",
        status: status(0, skill_problems),
        detail: format!(
            "{} available, {} shadowed; {} problem(s)",
            registry.skills.skills.len(),
            registry.skills.shadowed.len(),
            skill_problems
        ),
    });
    let startable = registry.startable_servers().count();
    let invalid = registry
        .servers
        .iter()
        .filter(|s| matches!(s.state, rho_core::SlotState::Invalid(_)))
        .count();
    let flags = ProviderFlags::default();
    let entries = rho_core::provider_entries(&registry.config, &flags);
    let (mcp_row, provider_rows) = runtime()?.block_on(async {
        let mcp_row = if connect && startable > 0 {
            let set = registry
                .mount(&MountOptions {
                    connect_mcp: true,
                    keep_alive: None,
                    ..MountOptions::default()
                })
                .await;
            let failed: Vec<String> = set
                .servers
                .iter()
                .filter_map(|s| match &s.status {
                    ServerStatus::Failed(e) => Some(format!("{}: {e}", s.id)),
                    _ => None,
                })
                .collect();
            let connected = set
                .servers
                .iter()
                .filter(|s| s.status == ServerStatus::Connected)
                .count();
            let tools: usize = set.servers.iter().map(|s| s.tools.len()).sum();
            set.close().await;
            Row {
                check: "mcp servers",
                status: status(failed.len() + invalid, 0),
                detail: format!(
                    "{connected}/{startable} connected, {tools} tool(s), {invalid} invalid{}",
                    if failed.is_empty() {
                        String::new()
                    } else {
                        format!("; failed: {}", failed.join("; "))
                    }
                ),
            }
        } else {
            Row {
                check: "mcp servers",
                status: status(invalid, 0),
                detail: format!(
                    "{startable} enabled, {invalid} invalid{}",
                    if connect {
                        ""
                    } else {
                        " (not started: --no-connect)"
                    }
                ),
            }
        };
        let mut provider_rows = Vec::new();
        for entry in &entries {
            let row = if let Some(problem) = &entry.problem {
                Row {
                    check: "provider",
                    status: "error",
                    detail: format!("{}: {problem}", entry.id),
                }
            } else if entry.external {
                Row {
                    check: "provider",
                    status: "ok",
                    detail: format!(
                        "{} at {} (external: not contacted by doctor)",
                        entry.id, entry.endpoint
                    ),
                }
            } else {
                let probe = probe(entry).await;
                Row {
                    check: "provider",
                    status: if probe.is_ok() { "ok" } else { "warning" },
                    detail: match probe {
                        Ok(n) => format!(
                            "{} at {}: reachable, {n} model(s)",
                            entry.id, entry.endpoint
                        ),
                        Err(e) => format!("{} at {}: {e}", entry.id, entry.endpoint),
                    },
                }
            };
            provider_rows.push(row);
        }
        (mcp_row, provider_rows)
    });
    rows.push(mcp_row);
    rows.extend(provider_rows);
    let failed = rows.iter().any(|r| r.status == "error");
    if ctx.json {
        json_write(&serde_json::json!({ "checks": rows, "ok": !failed }));
    } else {
        let mut table_rows = vec![vec!["CHECK".into(), "STATUS".into(), "DETAIL".into()]];
        for row in &rows {
            table_rows.push(vec![
                row.check.into(),
                row.status.into(),
                clean(&row.detail),
            ]);
        }
        out(&table(&table_rows));
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Lists the models of a local provider within 3 s.
async fn probe(entry: &rho_core::ProviderEntry) -> Result<usize, String> {
    rho_core::list_provider_models(
        entry,
        &|name| std::env::var(name).ok(),
        Duration::from_secs(3),
    )
    .await
    .map(|models| models.len())
}
