//! What a person is asked before a project plugin that would run something is trusted: one
//! line, and what exactly would run (its MCP servers' commands and URLs, its WASM components'
//! capabilities). Front-ends only show it and pass the answer on
//! ([`rho_plugins::TrustStore::trust`]).

use rho_component::Scope;
use rho_plugins::PluginRecord;

use super::Registry;

/// A question about one project plugin.
#[derive(Debug, Clone)]
pub struct TrustQuestion<'a> {
    /// The plugin asked about.
    pub record: &'a PluginRecord,
    /// What is asked, one line.
    pub title: String,
    /// What would run, a line each.
    pub details: Vec<String>,
}

impl Registry {
    /// A question for each loaded project plugin that would run something but is not trusted
    /// (never trusted, or changed since), in discovery order.
    pub fn trust_questions(&self) -> Vec<TrustQuestion<'_>> {
        self.plugins
            .loaded()
            .filter(|record| record.scope == Scope::Project)
            .filter(|record| !self.trust.state(record).allows_start())
            .map(|record| TrustQuestion {
                record,
                title: format!(
                    "The project plugin {} is not trusted yet. Trust it, so these run?",
                    record.name
                ),
                details: what_it_runs(record),
            })
            .collect()
    }
}

/// What `record` would run: its servers' commands and URLs, its WASM components'
/// capabilities, after the line naming where it is.
fn what_it_runs(record: &PluginRecord) -> Vec<String> {
    let mut lines = vec![format!("from {}", record.path().display())];
    for spec in &record.package.mcp_servers {
        lines.push(format!(
            "MCP server {}: runs {}",
            spec.id,
            spec.transport.target()
        ));
    }
    for component in &record.package.tool_components {
        lines.push(format!(
            "WASM component {}: workspace {}, env [{}], risk {}",
            component.name,
            component.workspace.as_str(),
            component.env.join(", "),
            component.risk
        ));
    }
    lines
}
