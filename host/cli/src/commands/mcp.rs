//! `rho mcp ...`: every MCP server from `config.toml` and from loaded plugins.
//!
//! Without `--connect` nothing is started: the listing is built from configuration alone, so
//! it is as cheap as `rho plugins list`.

use std::borrow::Cow;
use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use rho_component::{DiagnosticCode, McpServerSpec, McpTransport, StdioCommand};
use rho_plugins::PluginStatus;
use serde::Serialize;

use crate::cli::McpCommand;
use crate::context::Context;
use crate::output::{clean, json_write, out, table};

pub fn run(ctx: &Context, command: McpCommand) -> anyhow::Result<ExitCode> {
    match command {
        McpCommand::List => list(ctx),
        McpCommand::Show { id } => show(ctx, &id),
    }
}

/// One server as inventories show it (documented in docs/cli-json.md).
#[derive(Debug, Serialize)]
struct ServerEntry {
    id: String,
    source: &'static str,
    plugin: Option<String>,
    transport: Option<&'static str>,
    enabled: bool,
    /// configured | connected | failed | disabled
    status: &'static str,
    error: Option<String>,
    protocol_version: Option<String>,
    server_info: Option<serde_json::Value>,
    tools: Vec<serde_json::Value>,
    instructions: Option<String>,
    /// What would be started or contacted; never a secret value.
    target: Option<String>,
    /// Where the entry is defined.
    defined_in: Option<String>,
}

impl ServerEntry {
    fn from_spec(spec: &McpServerSpec, defined_in: Option<&Path>, status: &'static str) -> Self {
        Self {
            id: spec.id.clone(),
            source: spec.source(),
            plugin: spec.plugin().map(str::to_owned),
            transport: Some(spec.transport.name()),
            enabled: spec.enabled && status != "disabled",
            status,
            error: None,
            protocol_version: None,
            server_info: None,
            tools: Vec::new(),
            instructions: None,
            target: Some(target(spec)),
            defined_in: defined_in.map(|p| p.to_string_lossy().into_owned()),
        }
    }

    fn failed(
        id: String,
        source: &'static str,
        plugin: Option<String>,
        error: String,
        at: Option<String>,
    ) -> Self {
        Self {
            id,
            source,
            plugin,
            transport: None,
            enabled: true,
            status: "failed",
            error: Some(error),
            protocol_version: None,
            server_info: None,
            tools: Vec::new(),
            instructions: None,
            target: None,
            defined_in: at,
        }
    }
}

/// The command line or URL, as a person would check it. Environment and header values are not
/// part of it.
fn target(spec: &McpServerSpec) -> String {
    match &spec.transport {
        McpTransport::Stdio(s) => {
            let command: Cow<'_, str> = match &s.command {
                StdioCommand::Bare(name) => Cow::Borrowed(name),
                StdioCommand::Path(path) => path.to_string_lossy(),
            };
            std::iter::once(command.into_owned())
                .chain(s.args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" ")
        }
        McpTransport::StreamableHttp(h) => h.url.clone(),
    }
}

/// Every server: config entries first (by identity), then plugin servers in plugin precedence
/// order. Config identities and `<plugin>/<server>` identities never collide (a config identity
/// cannot contain '/').
fn collect(ctx: &Context) -> anyhow::Result<Vec<ServerEntry>> {
    let config = ctx.config()?;
    let config_path = config
        .path
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned());
    let mut entries = Vec::new();
    for server in &config.mcp_servers {
        let at = config_path.as_ref().map(|p| format!("{p}:{}", server.line));
        match &server.spec {
            Ok(spec) => {
                let status = if spec.enabled {
                    "configured"
                } else {
                    "disabled"
                };
                let mut entry = ServerEntry::from_spec(spec, None, status);
                entry.defined_in = at;
                entries.push(entry);
            }
            Err(problems) => entries.push(ServerEntry::failed(
                server.id.clone(),
                "config",
                None,
                problems.join("; "),
                at,
            )),
        }
    }
    let inventory = ctx.plugins.discover();
    for record in &inventory.plugins {
        let status = match record.status {
            PluginStatus::Loaded => "configured",
            PluginStatus::Disabled => "disabled",
            PluginStatus::Rejected | PluginStatus::Shadowed => continue,
        };
        let mcp_json = record.path().join(rho_plugins::MCP_FILE);
        for spec in &record.package.mcp_servers {
            entries.push(ServerEntry::from_spec(spec, Some(&mcp_json), status));
        }
        for d in &record.package.diagnostics {
            if matches!(
                d.code,
                DiagnosticCode::McpServerInvalid | DiagnosticCode::McpTransportUnsupported
            ) {
                let id = d.component.clone().unwrap_or_default();
                entries.push(ServerEntry::failed(
                    id,
                    "plugin",
                    Some(record.name.clone()),
                    d.message.clone(),
                    Some(mcp_json.to_string_lossy().into_owned()),
                ));
            }
        }
    }
    Ok(entries)
}

#[derive(Serialize)]
struct ListOutput<'a> {
    servers: &'a [ServerEntry],
}

fn list(ctx: &Context) -> anyhow::Result<ExitCode> {
    let entries = collect(ctx)?;
    if ctx.json {
        json_write(&ListOutput { servers: &entries });
        return Ok(ExitCode::SUCCESS);
    }
    if entries.is_empty() {
        out("no MCP servers configured\n");
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = vec![
        ["ID", "SOURCE", "TRANSPORT", "STATUS", "TARGET / ERROR"]
            .map(String::from)
            .to_vec(),
    ];
    for e in &entries {
        rows.push(vec![
            clean(&e.id),
            e.source.into(),
            e.transport.unwrap_or("-").into(),
            e.status.into(),
            clean(e.error.as_deref().or(e.target.as_deref()).unwrap_or("")),
        ]);
    }
    out(&table(&rows));
    Ok(ExitCode::SUCCESS)
}

fn show(ctx: &Context, id: &str) -> anyhow::Result<ExitCode> {
    let entries = collect(ctx)?;
    let Some(entry) = entries.iter().find(|e| e.id == id) else {
        bail!("no MCP server {id:?} (try `rho mcp list`)");
    };
    if ctx.json {
        json_write(entry);
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = format!(
        "{}  ({}{})\n",
        clean(&entry.id),
        entry.source,
        entry
            .plugin
            .as_deref()
            .map(|p| format!(" {}", clean(p)))
            .unwrap_or_default()
    );
    t.push_str(&format!("  status:    {}\n", entry.status));
    if let Some(transport) = entry.transport {
        t.push_str(&format!("  transport: {transport}\n"));
    }
    if let Some(target) = &entry.target {
        t.push_str(&format!("  target:    {}\n", clean(target)));
    }
    if let Some(at) = &entry.defined_in {
        t.push_str(&format!("  defined:   {}\n", clean(at)));
    }
    if let Some(error) = &entry.error {
        t.push_str(&format!("  error:     {}\n", clean(error)));
    }
    out(&t);
    Ok(ExitCode::SUCCESS)
}
