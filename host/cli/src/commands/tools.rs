//! `rho tools ...`: the tools a session gets, from the same registry sessions use.

use std::process::ExitCode;

use anyhow::bail;
use rho_component::{ToolContext, ToolOrigin, ToolSpec};
use rho_core::MountOptions;
use serde_json::Value;

use crate::cli::ToolsCommand;
use crate::context::Context;
use crate::output::{clean, diagnostic_line, first_line, json_sorted, out, table};
use crate::runtime;
use crate::shapes::{ToolCall, ToolEntry, ToolList, ToolServer};

pub fn run(ctx: &Context, command: ToolsCommand) -> anyhow::Result<ExitCode> {
    match command {
        ToolsCommand::List { no_mcp } => list(ctx, !no_mcp),
        ToolsCommand::Call { name, args } => call(ctx, &name, args.as_deref()),
    }
}

fn mount_options(connect_mcp: bool) -> MountOptions {
    MountOptions {
        connect_mcp,
        keep_alive: None,
        ..MountOptions::default()
    }
}

/// `server` and `plugin` of a tool, for inventories.
fn owner(spec: &ToolSpec) -> (Option<&str>, Option<&str>) {
    match &spec.origin {
        ToolOrigin::Builtin => (None, None),
        ToolOrigin::Mcp { server, plugin, .. } => (Some(server), plugin.as_deref()),
        ToolOrigin::Wasm { plugin, .. } => (None, Some(plugin)),
    }
}

fn tool_entry(spec: &ToolSpec) -> ToolEntry<'_> {
    let (server, plugin) = owner(spec);
    ToolEntry {
        name: &spec.name,
        tool: spec.own_name(),
        display_name: spec.display_name(),
        title: spec.title.as_deref(),
        description: &spec.description,
        source: spec.origin.kind(),
        server,
        plugin,
        risk: spec.risk,
        input_schema: &spec.input_schema,
    }
}

fn list(ctx: &Context, connect_mcp: bool) -> anyhow::Result<ExitCode> {
    let registry = ctx.registry()?;
    let set = runtime::run(|_| async {
        let set = registry.mount(&mount_options(connect_mcp)).await;
        let specs: Vec<ToolSpec> = set.specs();
        let servers: Vec<(String, String, Option<String>)> = set
            .servers
            .iter()
            .map(|s| {
                let status = s.status();
                (
                    s.id.clone(),
                    status.as_str().to_owned(),
                    status.error().map(str::to_owned),
                )
            })
            .collect();
        let diagnostics = set.diagnostics.clone();
        set.close().await;
        Ok((specs, servers, diagnostics))
    })?;
    let (specs, servers, diagnostics) = set;
    if ctx.json {
        json_sorted(&ToolList {
            tools: specs.iter().map(tool_entry).collect(),
            servers: servers
                .iter()
                .map(|(id, status, error)| ToolServer {
                    id,
                    status,
                    error: error.as_deref(),
                })
                .collect(),
            diagnostics: &diagnostics,
        });
        return Ok(ExitCode::SUCCESS);
    }
    // What a person reads first (it names the server or plugin), the name the model calls
    // second.
    let mut rows = vec![
        ["TOOL", "EXPORTED NAME", "SOURCE", "RISK", "DESCRIPTION"]
            .map(String::from)
            .to_vec(),
    ];
    for spec in &specs {
        rows.push(vec![
            clean(&spec.display_name()),
            clean(&spec.name),
            spec.origin.kind().into(),
            spec.risk.as_str().into(),
            clean(&first_line(&spec.description, 60)),
        ]);
    }
    let mut text = table(&rows);
    let failed: Vec<_> = servers.iter().filter(|s| s.1 == "failed").collect();
    if !failed.is_empty() {
        text.push_str(&format!("\n{} server(s) failed:\n", failed.len()));
        for (id, _, error) in &failed {
            text.push_str(&format!(
                "  {}: {}\n",
                clean(id),
                clean(error.as_deref().unwrap_or(""))
            ));
        }
    }
    if !diagnostics.is_empty() {
        text.push('\n');
        for d in &diagnostics {
            text.push_str(&format!("  {}\n", diagnostic_line(d)));
        }
    }
    out(&text);
    Ok(ExitCode::SUCCESS)
}

fn call(ctx: &Context, name: &str, args: Option<&str>) -> anyhow::Result<ExitCode> {
    let arguments = match args {
        None => Value::Object(serde_json::Map::new()),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(value @ Value::Object(_)) => value,
            Ok(_) => bail!("arguments must be a JSON object"),
            Err(e) => bail!("arguments are not valid JSON: {e}"),
        },
    };
    let registry = ctx.registry()?;
    // Only MCP tools need servers (their exported names, and only theirs, start with `mcp__`):
    // calling a built-in or WASM tool starts no process.
    let connect_mcp = name.starts_with(rho_component::naming::PREFIX);
    let workspace = registry.paths.project.cwd.clone();
    let extra_roots = registry.config.agent.extra_roots.clone();
    let hidden_env = registry.secret_variables();
    let json = ctx.json;
    runtime::run(|stop| async move {
        let set = registry.mount(&mount_options(connect_mcp)).await;
        let Some(tool) = set.get(name) else {
            let failed: Vec<String> = set
                .servers
                .iter()
                .filter_map(|s| Some(format!("{} ({})", s.id, s.status().error()?.to_owned())))
                .collect();
            set.close().await;
            let hint = if failed.is_empty() {
                String::new()
            } else {
                format!("; servers that failed: {}", failed.join(", "))
            };
            bail!("no tool named {name:?} (see `rho tools list`){hint}");
        };
        let mut context = ToolContext::new(workspace);
        context.extra_roots = extra_roots;
        context.hidden_env = hidden_env;
        // A signal cancels the call; the tool stops what it started.
        let cancel = context.cancel.clone();
        tokio::spawn(async move {
            stop.cancelled().await;
            cancel.cancel();
        });
        let output = tool.call(arguments, &context).await;
        drop(tool);
        set.close().await;
        if json {
            json_sorted(&ToolCall {
                tool: name,
                output: &output,
            });
        } else {
            out(&crate::output::call_result(&output));
        }
        Ok(if output.is_error {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    })
}
