//! `rho mcp ...`: every MCP server from `config.toml` and from loaded plugins.
//!
//! Without `--connect` nothing is started: the listing is built from configuration alone, so
//! it is as cheap as `rho plugins list`.

use std::borrow::Cow;
use std::process::ExitCode;

use anyhow::bail;
use rho_component::{McpServerSpec, McpTransport, StdioCommand};
use rho_core::{ServerSlot, SlotState};
use serde::Serialize;

use super::runtime;
use crate::cli::McpCommand;
use crate::context::Context;
use crate::output::{clean, first_line, json_write, out, table};

pub fn run(ctx: &Context, command: McpCommand) -> anyhow::Result<ExitCode> {
    match command {
        McpCommand::List { connect } => list(ctx, connect),
        McpCommand::Show { id, connect } => show(ctx, &id, connect),
        McpCommand::Call { id, tool, args } => call(ctx, &id, &tool, args.as_deref()),
    }
}

/// One server as inventories show it (documented in docs/cli-json.md).
#[derive(Debug, Serialize)]
struct ServerEntry<'a> {
    #[serde(skip)]
    spec: Option<&'a McpServerSpec>,
    id: Cow<'a, str>,
    source: &'static str,
    plugin: Option<&'a str>,
    transport: Option<&'static str>,
    enabled: bool,
    /// configured | connected | failed | disabled | untrusted
    status: &'static str,
    error: Option<Cow<'a, str>>,
    protocol_version: Option<String>,
    server_info: Option<serde_json::Value>,
    tools: Vec<serde_json::Value>,
    instructions: Option<String>,
    /// Legacy Streamable HTTP sessions are pinged once after connecting: `ok` or the failure.
    ping: Option<String>,
    /// What would be started or contacted; never a secret value.
    target: Option<String>,
    /// Where the entry is defined.
    defined_in: Option<Cow<'a, str>>,
}

impl<'a> ServerEntry<'a> {
    /// The entry of one registry slot, borrowing from it.
    fn from_slot(slot: &'a ServerSlot) -> Self {
        let (status, error) = match &slot.state {
            SlotState::Configured => ("configured", None),
            SlotState::Disabled => ("disabled", None),
            SlotState::Invalid(e) => ("failed", Some(Cow::Borrowed(e.as_str()))),
            SlotState::Untrusted(e) => ("untrusted", Some(Cow::Borrowed(e.as_str()))),
        };
        let spec = slot.spec.as_ref();
        Self {
            spec,
            id: Cow::Borrowed(&slot.id),
            source: slot.source.as_str(),
            plugin: slot.plugin.as_deref(),
            transport: spec.map(|s| s.transport.name()),
            enabled: status != "disabled",
            status,
            error,
            protocol_version: None,
            server_info: None,
            tools: Vec::new(),
            instructions: None,
            ping: None,
            target: spec.map(target),
            defined_in: slot.defined_in.as_deref().map(Cow::Borrowed),
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

/// Every server of one command, as the registry lists them (`rho_core::collect_servers`: config
/// entries first, then plugin servers in plugin precedence order, untrusted project plugins'
/// servers marked), read from configuration alone: nothing is started.
fn load_slots(ctx: &Context) -> anyhow::Result<Vec<ServerSlot>> {
    let config = ctx.config()?;
    // Each command exits right after: freeing thousands of plugin records would only cost time.
    let inventory = std::mem::ManuallyDrop::new(ctx.plugins.discover());
    // An unreadable store trusts nothing.
    let trust = rho_plugins::TrustStore::load(&ctx.paths.trust_file()).unwrap_or_default();
    Ok(rho_core::collect_servers(&config, &inventory, &trust))
}

/// One entry per slot, borrowing from `slots`.
fn collect(slots: &[ServerSlot]) -> Vec<ServerEntry<'_>> {
    slots.iter().map(ServerEntry::from_slot).collect()
}

#[derive(Serialize)]
struct ListOutput<'a> {
    servers: &'a [ServerEntry<'a>],
}

fn list(ctx: &Context, connect: bool) -> anyhow::Result<ExitCode> {
    // The process exits right after printing: freeing thousands of records would only cost time.
    let slots = std::mem::ManuallyDrop::new(load_slots(ctx)?);
    let mut entries = std::mem::ManuallyDrop::new(collect(&slots));
    if connect {
        connect_all(&mut entries)?;
    }
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
    for e in entries.iter() {
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

fn show(ctx: &Context, id: &str, connect: bool) -> anyhow::Result<ExitCode> {
    let slots = load_slots(ctx)?;
    let mut entries: Vec<ServerEntry> =
        collect(&slots).into_iter().filter(|e| e.id == id).collect();
    if entries.is_empty() {
        bail!("no MCP server {id:?} (try `rho mcp list`)");
    }
    if connect {
        connect_all(&mut entries)?;
    }
    let entry = &entries[0];
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
    if let Some(version) = &entry.protocol_version {
        t.push_str(&format!("  protocol:  {version}\n"));
    }
    if let Some(info) = &entry.server_info {
        t.push_str(&format!("  server:    {}\n", clean(&info.to_string())));
    }
    if let Some(ping) = &entry.ping {
        t.push_str(&format!("  ping:      {}\n", clean(ping)));
    }
    if let Some(instructions) = &entry.instructions {
        t.push_str(&format!(
            "  instructions: {}\n",
            clean(&instructions.replace('\n', " "))
        ));
    }
    if connect {
        t.push_str(&format!("\ntools ({}):\n", entry.tools.len()));
        for tool in &entry.tools {
            t.push_str(&format!(
                "  {}  ({})  {}\n",
                clean(tool["exported_name"].as_str().unwrap_or_default()),
                clean(tool["name"].as_str().unwrap_or_default()),
                clean(&first_line(
                    tool["description"].as_str().unwrap_or_default(),
                    80
                )),
            ));
        }
    }
    out(&t);
    Ok(ExitCode::SUCCESS)
}

/// Connects every configured, enabled entry in parallel (each within its own startup budget),
/// records live status, then closes them all.
fn connect_all(entries: &mut [ServerEntry]) -> anyhow::Result<()> {
    let targets: Vec<(usize, McpServerSpec)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.status == "configured")
        .filter_map(|(i, e)| e.spec.cloned().map(|s| (i, s)))
        .collect();
    if targets.is_empty() {
        return Ok(()); // zero-server fast path: no runtime, no task, no process
    }
    let results = runtime()?.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for (index, spec) in targets {
            set.spawn(async move {
                let outcome = match rho_mcp::connect(&spec, &rho_mcp::process_ambient).await {
                    Ok(connection) => {
                        let summary = connection.summary.clone();
                        let tools = connection.tools.clone();
                        let http = matches!(spec.transport, McpTransport::StreamableHttp(_));
                        let ping = if http && connection.is_legacy() {
                            Some(
                                match connection.ping(std::time::Duration::from_secs(5)).await {
                                    Ok(()) => "ok".to_owned(),
                                    Err(e) => e.to_string(),
                                },
                            )
                        } else {
                            None
                        };
                        connection.close().await;
                        Ok((summary, tools, ping))
                    }
                    Err(e) => Err(e.to_string()),
                };
                (index, outcome)
            });
        }
        let mut results = Vec::new();
        while let Some(joined) = set.join_next().await {
            if let Ok(result) = joined {
                results.push(result);
            }
        }
        results
    });
    let mut names = rho_mcp::ExportedNames::default();
    for (index, outcome) in results {
        let entry = &mut entries[index];
        match outcome {
            Ok((summary, tools, ping)) => {
                entry.status = "connected";
                entry.ping = ping;
                entry.protocol_version = Some(summary.protocol_version);
                entry.server_info = summary.server_info;
                entry.instructions = summary.instructions;
                entry.tools = tools
                    .iter()
                    .map(|t| {
                        serde_json::json!({
                            "name": t.name,
                            "exported_name": names.assign(&entry.id, &t.name),
                            "title": t.title(),
                            "description": t.description(),
                        })
                    })
                    .collect();
            }
            Err(error) => {
                entry.status = "failed";
                entry.error = Some(Cow::Owned(error));
            }
        }
    }
    Ok(())
}

fn call(ctx: &Context, id: &str, tool: &str, args: Option<&str>) -> anyhow::Result<ExitCode> {
    let arguments = match args {
        None => None,
        Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(map)) => Some(map),
            Ok(_) => bail!("arguments must be a JSON object"),
            Err(e) => bail!("arguments are not valid JSON: {e}"),
        },
    };
    let slots = load_slots(ctx)?;
    let entries = collect(&slots);
    let Some(entry) = entries.into_iter().find(|e| e.id == id) else {
        bail!("no MCP server {id:?} (try `rho mcp list`)");
    };
    let Some(spec) = entry.spec.filter(|_| entry.status == "configured").cloned() else {
        bail!(
            "server {id:?} is {}{}",
            entry.status,
            entry.error.map(|e| format!(": {e}")).unwrap_or_default()
        );
    };
    let json = ctx.json;
    runtime()?.block_on(async move {
        let connection = rho_mcp::connect(&spec, &rho_mcp::process_ambient).await?;
        let mut names = rho_mcp::ExportedNames::default();
        let exported: Vec<(String, String)> = connection
            .tools
            .iter()
            .map(|t| (names.assign(&spec.id, &t.name), t.name.clone()))
            .collect();
        let Some(raw) = exported
            .iter()
            .find(|(e, raw)| e == tool || raw == tool)
            .map(|(_, raw)| raw.clone())
        else {
            connection.close().await;
            bail!("server {id:?} has no tool {tool:?} (see `rho mcp show {id} --connect`)");
        };
        let (progress_tx, mut progress_rx) = tokio::sync::mpsc::channel::<rho_mcp::Progress>(64);
        let printer = tokio::spawn(async move {
            while let Some(p) = progress_rx.recv().await {
                let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
                let message = p.message.map(|m| format!(" {}", clean(&m))).unwrap_or_default();
                crate::output::error_line(&format!("progress {}{total}{message}", p.progress));
            }
        });
        let cancel = rho_mcp::Cancel::new();
        let on_ctrl_c = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                on_ctrl_c.cancel();
            }
        });
        let result = connection.call_tool(&raw, arguments, Some(progress_tx), cancel).await;
        connection.close().await;
        let _ = printer.await;
        let result = result?;
        let rendered = rho_mcp::render_result(&result, spec.max_output_bytes);
        if json {
            json_write(&serde_json::json!({
                "server": spec.id,
                "tool": raw,
                "is_error": rendered.is_error,
                "text": rendered.text,
                "truncated": rendered.truncated,
                "structured_content": rendered.structured,
                "image": rendered.image.as_ref().map(|i| serde_json::json!({"mime_type": i.mime_type, "bytes": i.data.len()})),
            }));
        } else {
            let mut text = clean_block(&rendered.text);
            text.push('\n');
            if let Some(image) = &rendered.image {
                text.push_str(&format!("[image kept for display: {}, {} encoded bytes]\n", image.mime_type, image.data.len()));
            }
            out(&text);
        }
        Ok(if rendered.is_error { ExitCode::from(1) } else { ExitCode::SUCCESS })
    })
}

/// Terminal-safe multi-line text.
fn clean_block(text: &str) -> String {
    text.lines().map(clean).collect::<Vec<_>>().join("\n")
}
