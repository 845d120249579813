//! `rho mcp ...`: every MCP server from `config.toml` and from loaded plugins.
//!
//! Without `--connect` nothing is started: the listing is built from configuration alone, so
//! it is as cheap as `rho plugins list`. With it, the registry's probe starts the servers as a
//! session would (`rho_core::Registry::probe`) and this module only shows what they answered:
//! when stderr is a terminal, each one's result as it arrives. `show --connect` also lists the
//! server's prompts (as the slash commands a session offers) and resources.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::bail;
use rho_component::{McpServerSpec, Transport};
use rho_core::{Registry, ServerSlot, ServerStatus, StartReport};
use rho_mcp::oauth::{Browser, LoginPolicy, PasteBrowser};

use crate::cli::McpCommand;
use crate::context::Context;
use crate::output::{clean, error_text, first_line, json_sorted, json_write, out, table, truncate};
use crate::runtime;
use crate::shapes::{McpCall, McpLogin, McpLogout, McpToolEntry};

mod auth;
mod progress;
mod serve;
mod tool_call;

use crate::shapes::{AuthEntry, ListOutput, PromptEntry, ResourceEntry, ServerEntry};
use auth::{add_auth_states, login, logout};
use progress::{ConnectProgress, live_progress};
use tool_call::call;

pub fn run(ctx: &Context, command: McpCommand) -> anyhow::Result<ExitCode> {
    match command {
        McpCommand::List { connect } => list(ctx, connect),
        McpCommand::Show { id, connect } => show(ctx, &id, connect),
        McpCommand::Call { id, tool, args } => call(ctx, &id, &tool, args.as_deref()),
        McpCommand::Login {
            id,
            no_browser,
            scopes,
        } => login(ctx, &id, no_browser, &scopes),
        McpCommand::Logout { id } => logout(ctx, &id),
        McpCommand::Serve(args) => serve::serve(ctx, args),
    }
}

/// The configured server `id` that is ready to start, or why not.
fn startable(slots: &[ServerSlot], id: &str) -> anyhow::Result<McpServerSpec> {
    Ok(rho_core::startable(slots, id)?.clone())
}

/// Every server of one command, as the registry lists them (`rho_core::collect_servers`: config
/// entries first, then plugin servers in plugin precedence order, untrusted project plugins'
/// servers marked), read from configuration alone: nothing is started.
fn load_slots(ctx: &Context) -> anyhow::Result<Vec<ServerSlot>> {
    Ok(load(ctx, false)?.0)
}

/// [`load_slots`], and beside each server the state a session would find it in before
/// starting anything (`known` for a lazy server the tool cache holds) when `statuses`; only
/// inventories need those, and they read a cache entry per lazy server.
fn load(ctx: &Context, statuses: bool) -> anyhow::Result<(Vec<ServerSlot>, Vec<ServerStatus>)> {
    let config = ctx.config()?;
    // Each command exits right after: freeing thousands of plugin records would only cost time.
    let inventory = std::mem::ManuallyDrop::new(ctx.plugins.discover());
    // An unreadable store trusts nothing.
    let trust = rho_plugins::TrustStore::load(&ctx.paths.trust_file()).unwrap_or_default();
    let slots = rho_core::collect_servers(&config, &inventory, &trust);
    let statuses = if statuses {
        let cache = rho_core::ToolCache::new(ctx.paths.mcp_cache_dir());
        slots
            .iter()
            .map(|slot| slot.status_before_start(&inventory, &cache))
            .collect()
    } else {
        Vec::new()
    };
    Ok((slots, statuses))
}

/// Where the servers of `rho mcp list` and `show` come from: the configuration alone, or with
/// `--connect` the registry, whose probe starts them.
enum Servers {
    Slots(Vec<ServerSlot>, Vec<ServerStatus>),
    Registry(Box<Registry>),
}

impl Servers {
    fn load(ctx: &Context, connect: bool) -> anyhow::Result<Self> {
        Ok(if connect {
            Self::Registry(Box::new(ctx.registry()?))
        } else {
            let (slots, statuses) = load(ctx, true)?;
            Self::Slots(slots, statuses)
        })
    }

    fn slots(&self) -> &[ServerSlot] {
        match self {
            Self::Slots(slots, _) => slots,
            Self::Registry(registry) => &registry.servers,
        }
    }

    fn registry(&self) -> Option<&Registry> {
        match self {
            Self::Slots(..) => None,
            Self::Registry(registry) => Some(registry),
        }
    }

    /// One entry per server, borrowing from the slots; without `--connect`, each in the state
    /// a session would find it in before starting anything.
    fn entries(&self) -> Vec<ServerEntry<'_>> {
        let mut entries: Vec<ServerEntry> =
            self.slots().iter().map(ServerEntry::from_slot).collect();
        if let Self::Slots(_, statuses) = self {
            for (entry, status) in entries.iter_mut().zip(statuses) {
                entry.status = status.clone();
            }
        }
        entries
    }
}

fn list(ctx: &Context, connect: bool) -> anyhow::Result<ExitCode> {
    // The process exits right after printing: freeing thousands of records would only cost time.
    let servers = std::mem::ManuallyDrop::new(Servers::load(ctx, connect)?);
    let mut entries = std::mem::ManuallyDrop::new(servers.entries());
    if let Some(registry) = servers.registry() {
        probe(ctx, registry, &mut entries, None, Catalog::ToolsOnly)?;
    }
    add_auth_states(ctx, &mut entries);
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
            e.transport.map_or("-", Transport::as_str).into(),
            e.status.as_str().into(),
            clean(e.error.as_deref().or(e.target.as_deref()).unwrap_or("")),
        ]);
    }
    let mut text = table(&rows);
    for e in entries.iter() {
        if let Some(auth) = &e.auth {
            text.push_str(&format!(
                "{}: OAuth {}\n",
                clean(&e.id),
                clean(&auth.summary)
            ));
        }
        if let Some(added) = e.added_tools.as_deref().filter(|a| !a.is_empty()) {
            let plural = if added.len() == 1 { "" } else { "s" };
            text.push_str(&format!(
                "{}: {} tool{plural} added after connecting, not offered until a restart: {}\n",
                clean(&e.id),
                added.len(),
                clean(&added.join(", "))
            ));
        }
    }
    out(&text);
    Ok(ExitCode::SUCCESS)
}

fn show(ctx: &Context, id: &str, connect: bool) -> anyhow::Result<ExitCode> {
    let servers = std::mem::ManuallyDrop::new(Servers::load(ctx, connect)?);
    let mut entries: Vec<ServerEntry> = servers
        .entries()
        .into_iter()
        .filter(|e| e.id == id)
        .collect();
    if entries.is_empty() {
        bail!("no MCP server {id:?} (try `rho mcp list`)");
    }
    if let Some(registry) = servers.registry() {
        probe(ctx, registry, &mut entries, Some(id), Catalog::Everything)?;
    }
    add_auth_states(ctx, &mut entries);
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
    t.push_str(&format!("  status:    {}\n", entry.status.as_str()));
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
    if let Some(restarts) = entry.restarts.filter(|n| *n > 0) {
        let why = entry.last_restart.as_deref().unwrap_or_default();
        t.push_str(&format!("  restarts:  {restarts} ({})\n", clean(why)));
    }
    if let Some(instructions) = &entry.instructions {
        t.push_str(&format!(
            "  instructions: {}\n",
            clean(&instructions.trim().replace('\n', " "))
        ));
    }
    if connect {
        t.push_str(&format!("\ntools ({}):\n", entry.tools.len()));
        // What a person reads first, the name the model calls second.
        let rows: Vec<Vec<String>> = entry
            .tools
            .iter()
            .map(|tool| {
                let description = first_line(tool.description.as_deref().unwrap_or_default(), 80);
                let description = if tool.needs_tasks {
                    format!("[{}] {description}", rho_core::NEEDS_TASKS_MARK)
                } else {
                    description
                };
                vec![
                    clean(&tool.display_name),
                    clean(&tool.exported_name),
                    clean(description.trim_end()),
                ]
            })
            .collect();
        for line in table(&rows).lines() {
            t.push_str("  ");
            t.push_str(line);
            t.push('\n');
        }
        let added = entry.added_tools.as_deref().unwrap_or_default();
        for name in added {
            t.push_str(&format!(
                "  {}  added after connecting, not offered until a restart\n",
                clean(&rho_component::tool_display_name(Some(&*entry.id), name))
            ));
        }
        if entry.tools.is_empty() && added.is_empty() {
            t.push_str("  none\n");
        }
        t.push_str(&prompts_section(
            entry.prompts.as_deref().unwrap_or_default(),
        ));
        t.push_str(&resources_section(
            entry.resources.as_deref().unwrap_or_default(),
        ));
    }
    out(&t);
    Ok(ExitCode::SUCCESS)
}

/// The prompts of `show --connect`: the command a session offers, the arguments (`*` after
/// required ones) and the description's first line.
fn prompts_section(prompts: &[PromptEntry]) -> String {
    let rows = prompts
        .iter()
        .map(|p| {
            let arguments: Vec<String> = p
                .arguments
                .iter()
                .map(|a| format!("{}{}", a.name, if a.required { "*" } else { "" }))
                .collect();
            let arguments = if arguments.is_empty() {
                "-".to_owned()
            } else {
                arguments.join(", ")
            };
            let about = p.description.as_deref().or(p.title.as_deref());
            vec![
                clean(&p.command),
                clean(&arguments),
                clean(&first_line(about.unwrap_or_default(), 80)),
            ]
        })
        .collect();
    let mut text = section("prompts", rows);
    if prompts
        .iter()
        .any(|p| p.arguments.iter().any(|a| a.required))
    {
        text.push_str("  (* required argument)\n");
    }
    text
}

/// The resources of `show --connect`: URI, name, MIME type, and a marker on templates.
fn resources_section(resources: &[ResourceEntry]) -> String {
    let rows = resources
        .iter()
        .map(|r| {
            vec![
                clean(&r.uri),
                clean(&r.name),
                clean(r.mime_type.as_deref().unwrap_or("-")),
                if r.template { "· template" } else { "" }.to_owned(),
            ]
        })
        .collect();
    section("resources", rows)
}

/// `\n<title> (<count>):` and the rows as an indented table, or `none`.
fn section(title: &str, rows: Vec<Vec<String>>) -> String {
    let mut text = format!("\n{title} ({}):\n", rows.len());
    if rows.is_empty() {
        text.push_str("  none\n");
    }
    for line in table(&rows).lines() {
        text.push_str("  ");
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// What `--connect` reports besides status and tools.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Catalog {
    /// `list`: tools only (and tools added after connecting).
    ToolsOnly,
    /// `show`: prompts and resources too.
    Everything,
}

/// `--connect`: the registry's probe starts every startable server of `entries` (`only`, for
/// `show`) as a session would, within each one's own startup budget, and closes them again;
/// this only shows what they answered. With a person watching, each result is shown on
/// stderr as it arrives (see [`ConnectProgress`]). Every entry gets the `--connect` fields
/// (empty unless its server started), so the JSON shape does not depend on which servers
/// answered. Inventories never open a browser: an OAuth server without a usable token is
/// `failed`, and its error names `rho mcp login`.
fn probe(
    ctx: &Context,
    registry: &Registry,
    entries: &mut [ServerEntry],
    only: Option<&str>,
    catalog: Catalog,
) -> anyhow::Result<()> {
    for entry in entries.iter_mut() {
        entry.added_tools = Some(Vec::new());
        if catalog == Catalog::Everything {
            entry.prompts = Some(Vec::new());
            entry.resources = Some(Vec::new());
        }
    }
    let starting: Vec<&McpServerSpec> = registry
        .servers
        .iter()
        .filter(|slot| only.is_none_or(|id| slot.id == id))
        .filter_map(ServerSlot::startable)
        .collect();
    if starting.is_empty() {
        return Ok(()); // zero-server fast path: no runtime, no task, no process
    }
    let progress = live_progress(ctx).then(|| ConnectProgress::start(&starting));
    // A signal drops the probe, which stops its servers.
    let found = runtime::run(|_| async {
        let Some(mut progress) = progress else {
            return Ok(registry.probe(only, None).await);
        };
        let (watch, mut reports) = tokio::sync::mpsc::channel::<StartReport>(64);
        let probing = registry.probe(only, Some(watch));
        tokio::pin!(probing);
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let probe = loop {
            tokio::select! {
                probe = &mut probing => break probe,
                Some(report) = reports.recv() => progress.finished(&report),
                _ = tick.tick() => progress.tick(),
            }
        };
        while let Ok(report) = reports.try_recv() {
            progress.finished(&report);
        }
        Ok(probe)
    })?;
    let mut found: std::collections::HashMap<String, rho_core::ProbedServer> = found
        .servers
        .into_iter()
        .map(|probed| (probed.server.id.clone(), probed))
        .collect();
    for entry in entries.iter_mut() {
        let Some(probed) = found.remove(&*entry.id) else {
            continue;
        };
        let server = &probed.server;
        let status = server.status();
        if let Some(error) = status.error() {
            entry.error = Some(Cow::Owned(error.to_owned()));
        }
        if status.is_running() {
            let health = server.health();
            (entry.restarts, entry.last_restart) = (Some(health.restarts), health.last_restart);
            entry.added_tools = Some(server.added_tools());
            if catalog == Catalog::Everything {
                let id = &entry.id;
                entry.prompts = Some(
                    probed
                        .prompts
                        .into_iter()
                        .map(|p| PromptEntry::new(id, p))
                        .collect(),
                );
                entry.resources = Some(
                    probed
                        .resources
                        .into_iter()
                        .map(ResourceEntry::from)
                        .collect(),
                );
            }
            entry.ping = probed.ping;
            entry.protocol_version = server.protocol_version();
            entry.server_info = server.server_info();
            entry.instructions = server.instructions();
            entry.tools = probed
                .tools
                .into_iter()
                .map(|t| McpToolEntry {
                    display_name: rho_component::tool_display_name(Some(&*entry.id), &t.tool),
                    description: t.description,
                    exported_name: t.name,
                    name: t.tool,
                    needs_tasks: t.needs_tasks,
                    title: t.title,
                })
                .collect();
        }
        entry.status = status;
    }
    Ok(())
}
