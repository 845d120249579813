//! The health report `rho doctor` prints and the interactive `/doctor` shows: one [`Check`]
//! per part of the setup (config, Agent Plugins, plugin trust, skills, MCP servers, each
//! provider), `ok`, `warning` or `error` with a short detail. One definition, so the two never
//! disagree.

use std::time::Duration;

use rho_component::{DiagnosticCode, Severity};
use rho_plugins::PluginStatus;
use serde::Serialize;

use crate::{MountedServer, ProviderFlags, Registry, ServerStatus, SlotState};

/// How long a local provider may take to list its models.
pub const PROVIDER_PROBE_BUDGET: Duration = Duration::from_secs(3);

/// How one part of the setup is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// Nothing to do.
    Ok,
    /// Works, with something worth knowing.
    Warning,
    /// Broken.
    Error,
}

impl CheckStatus {
    /// `ok`, `warning` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }

    fn of(errors: usize, warnings: usize) -> Self {
        if errors > 0 {
            Self::Error
        } else if warnings > 0 {
            Self::Warning
        } else {
            Self::Ok
        }
    }
}

/// What a row checks. Its label, in tables and JSON alike, is the variant's name as lowercase
/// words (`as_str`, which serialization and the schema use too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum CheckKind {
    /// `config.toml`.
    Config,
    /// The Agent Plugins roots and what became of each package.
    #[strum(serialize = "agent plugins")]
    AgentPlugins,
    /// Project plugins waiting for `rho plugins trust`.
    #[strum(serialize = "plugin trust")]
    PluginTrust,
    /// The loose and plugin skills.
    Skills,
    /// The configured and plugin MCP servers.
    #[strum(serialize = "mcp servers")]
    McpServers,
    /// One model provider (one row each).
    Provider,
}

impl CheckKind {
    /// Every kind, in the report's order.
    pub const ALL: &'static [CheckKind] = <Self as strum::VariantArray>::VARIANTS;

    /// `config`, `agent plugins`, `plugin trust`, `skills`, `mcp servers` or `provider`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

rho_component::serialize_as_words!(CheckKind, "What a health-report row checks.");

/// One row of the health report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Check {
    /// `config`, `agent plugins`, `plugin trust`, `skills`, `mcp servers` or `provider`.
    pub check: CheckKind,
    /// `ok`, `warning` or `error`.
    pub status: CheckStatus,
    /// What was found.
    pub detail: String,
}

/// What the MCP row reports on.
#[derive(Debug, Clone, Copy)]
pub enum Servers<'a> {
    /// The servers of a mounted tool set (`rho doctor` after starting them, or a session's).
    Live(&'a [MountedServer]),
    /// Nothing was started; `by_choice` when the user asked not to (`--no-connect`).
    NotStarted {
        /// Started servers were not wanted.
        by_choice: bool,
    },
}

/// What to do when no provider is configured and the built-in default (a local
/// Ollama-style endpoint) does not answer: one line, for `rho doctor` and the first screen.
pub fn no_model_configured() -> String {
    format!(
        "{} at {}: nothing answers, so no model is configured: {}",
        crate::model_choice::BUILTIN_PROVIDER,
        crate::model_choice::BUILTIN_ENDPOINT,
        crate::model_choice::CONFIGURE_A_MODEL
    )
}

/// The report: the registry's checks, the servers' and each provider's (local providers are
/// asked for their models within [`PROVIDER_PROBE_BUDGET`]; external ones are not contacted).
pub async fn checks(
    registry: &Registry,
    servers: Servers<'_>,
    flags: &ProviderFlags,
    ambient: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Vec<Check> {
    let mut rows = vec![
        config(registry),
        plugins(registry),
        trust(registry),
        skills(registry),
        mcp(registry, servers),
    ];
    for entry in crate::provider_entries(&registry.config, flags) {
        let (status, detail) = if let Some(problem) = &entry.problem {
            (CheckStatus::Error, format!("{}: {problem}", entry.id))
        } else if entry.external {
            (
                CheckStatus::Ok,
                format!(
                    "{} at {} (external: not contacted by doctor)",
                    entry.id, entry.endpoint
                ),
            )
        } else {
            match crate::list_provider_models(&entry, ambient, PROVIDER_PROBE_BUDGET).await {
                Ok(models) => (
                    CheckStatus::Ok,
                    format!(
                        "{} at {}: reachable, {} model(s)",
                        entry.id,
                        entry.endpoint,
                        models.len()
                    ),
                ),
                Err(_) if entry.source == crate::ProviderSource::Builtin => {
                    (CheckStatus::Warning, no_model_configured())
                }
                Err(e) => (
                    CheckStatus::Warning,
                    format!("{} at {}: {e}", entry.id, entry.endpoint),
                ),
            }
        };
        rows.push(Check {
            check: CheckKind::Provider,
            status,
            detail,
        });
    }
    rows
}

fn config(registry: &Registry) -> Check {
    Check {
        check: CheckKind::Config,
        status: CheckStatus::of(usize::from(registry.config_error.is_some()), 0),
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
    }
}

fn plugins(registry: &Registry) -> Check {
    let plugins = registry.plugin_summaries();
    let count = |s: PluginStatus| plugins.iter().filter(|p| p.status == s).count();
    let errors = registry
        .plugins
        .all_diagnostics()
        .filter(|d| d.severity == Severity::Error)
        .count();
    Check {
        check: CheckKind::AgentPlugins,
        status: CheckStatus::of(
            count(PluginStatus::Rejected) + errors,
            count(PluginStatus::Shadowed),
        ),
        detail: format!(
            "{} loaded, {} disabled, {} rejected, {} shadowed; {} problem(s)",
            count(PluginStatus::Loaded),
            count(PluginStatus::Disabled),
            count(PluginStatus::Rejected),
            count(PluginStatus::Shadowed),
            errors
        ),
    }
}

fn trust(registry: &Registry) -> Check {
    let mut untrusted: Vec<String> = registry
        .servers
        .iter()
        .filter(|s| matches!(s.state, SlotState::Untrusted(_)))
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
        d.code == DiagnosticCode::StateFileInvalid
            && d.message.contains(&*trust_file.to_string_lossy())
    });
    Check {
        check: CheckKind::PluginTrust,
        status: if store_problem.is_some() {
            CheckStatus::Error
        } else {
            CheckStatus::of(0, untrusted.len())
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
    }
}

fn skills(registry: &Registry) -> Check {
    let problems = registry
        .diagnostics
        .iter()
        .filter(|d| d.code.as_str().starts_with("skill"))
        .count();
    Check {
        check: CheckKind::Skills,
        status: CheckStatus::of(0, problems),
        detail: format!(
            "{} available, {} shadowed; {} problem(s)",
            registry.skills.skills.len(),
            registry.skills.shadowed.len(),
            problems
        ),
    }
}

fn mcp(registry: &Registry, servers: Servers<'_>) -> Check {
    let startable = registry.startable_servers().count();
    let invalid = registry
        .servers
        .iter()
        .filter(|s| matches!(s.state, SlotState::Invalid(_)))
        .count();
    match servers {
        Servers::Live(servers) if startable > 0 => {
            let failed: Vec<String> = servers
                .iter()
                .filter_map(|s| match s.status() {
                    ServerStatus::Failed(e) => Some(format!("{}: {e}", s.id)),
                    _ => None,
                })
                .collect();
            let running = servers.iter().filter(|s| s.status().is_running()).count();
            let known = servers
                .iter()
                .filter(|s| s.status() == ServerStatus::Known)
                .count();
            let known = if known > 0 {
                format!(" ({known} more known from the tool cache, not started)")
            } else {
                String::new()
            };
            let tools: usize = servers.iter().map(|s| s.tools().len()).sum();
            Check {
                check: CheckKind::McpServers,
                status: CheckStatus::of(failed.len() + invalid, 0),
                detail: format!(
                    "{running}/{startable} running{known}, {tools} tool(s), {invalid} invalid{}",
                    if failed.is_empty() {
                        String::new()
                    } else {
                        format!("; failed: {}", failed.join("; "))
                    }
                ),
            }
        }
        Servers::Live(_) | Servers::NotStarted { .. } => Check {
            check: CheckKind::McpServers,
            status: CheckStatus::of(invalid, 0),
            detail: format!(
                "{startable} enabled, {invalid} invalid{}",
                if matches!(servers, Servers::NotStarted { by_choice: true }) {
                    " (not started: --no-connect)"
                } else {
                    ""
                }
            ),
        },
    }
}
