//! `rho plugins ...`: inventory and lifecycle of Agent Plugins packages.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::bail;
use rho_component::{McpTransport, Scope, Severity, StdioCommand};
use rho_plugins::{InstallReport, Package, PluginRecord};

use crate::cli::{InstallArgs, PluginsCommand, ScopeArg};
use crate::context::Context;

use crate::output::{
    clean, diagnostic_line, diagnostic_table, first_line, json_sorted, json_write, out, path_str,
    table, truncate,
};
use crate::shapes::{
    AuthorEntry, ComponentDetail, InstallAction, InstallOutput, ManifestEntry, OtherCopy,
    PluginEntry, PluginInspect, PluginList, PluginValidation, ServerDetail, SkillDetail,
    TrustReport, TrustedComponent, WasmToolEntry,
};

pub fn run(ctx: &Context, command: PluginsCommand) -> anyhow::Result<ExitCode> {
    match command {
        PluginsCommand::List => list(ctx),
        PluginsCommand::Inspect { name } => inspect(ctx, &name),
        PluginsCommand::Install(args) => install(ctx, args, false),
        PluginsCommand::Link(args) => install(ctx, args, true),
        PluginsCommand::Enable { name } => enable(ctx, &name, true),
        PluginsCommand::Disable { name } => enable(ctx, &name, false),
        PluginsCommand::Remove { name, yes } => remove(ctx, &name, yes),
        PluginsCommand::Validate { path } => validate(ctx, &path),
        PluginsCommand::New {
            dir,
            tool,
            sdk_path,
        } => super::scaffold::new_plugin(ctx, &dir, &tool, sdk_path.as_deref()),
        PluginsCommand::Trust { name } => trust(ctx, &name, true),
        PluginsCommand::Untrust { name } => trust(ctx, &name, false),
    }
}

fn server_names(package: &Package) -> Vec<&str> {
    package
        .mcp_servers
        .iter()
        .map(|s| match &s.origin {
            rho_component::McpServerOrigin::Plugin { server, .. } => server.as_str(),
            rho_component::McpServerOrigin::Config => s.id.as_str(),
        })
        .collect()
}

/// The list entry of `record`.
fn plugin_entry(record: &PluginRecord) -> PluginEntry<'_> {
    let manifest = record.package.manifest.as_ref();
    PluginEntry {
        name: &record.name,
        version: manifest.and_then(|m| m.version.as_deref()),
        description: manifest.and_then(|m| m.description.as_deref()),
        scope: record.scope,
        origin: record.origin,
        path: path_str(record.path()),
        entry: path_str(&record.entry),
        enabled: record.enabled,
        status: record.status,
        shadowed_by: record.shadowed_by.as_deref().map(path_str),
        skills: record
            .package
            .skills
            .iter()
            .map(|s| s.name.as_str())
            .collect(),
        mcp_servers: server_names(&record.package),
        tool_components: record
            .package
            .tool_components
            .iter()
            .map(|c| c.name.as_str())
            .collect(),
        diagnostics: &record.package.diagnostics,
    }
}

fn list(ctx: &Context) -> anyhow::Result<ExitCode> {
    // The process exits right after printing: freeing thousands of records would only cost time.
    let inventory = std::mem::ManuallyDrop::new(ctx.plugins.discover());
    if ctx.json {
        json_write(&PluginList {
            plugins: inventory.plugins.iter().map(plugin_entry).collect(),
            diagnostics: &inventory.diagnostics,
        });
        return Ok(ExitCode::SUCCESS);
    }
    if inventory.plugins.is_empty() && inventory.diagnostics.is_empty() {
        out("no plugins found\n");
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = vec![
        [
            "NAME", "VERSION", "SCOPE", "ORIGIN", "STATUS", "SKILLS", "MCP", "PATH",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for r in &inventory.plugins {
        let m = r.package.manifest.as_ref();
        rows.push(vec![
            clean(&r.name),
            clean(m.and_then(|m| m.version.as_deref()).unwrap_or("-")),
            r.scope.to_string(),
            r.origin.as_str().into(),
            r.status.as_str().into(),
            r.package.skills.len().to_string(),
            r.package.mcp_servers.len().to_string(),
            clean(&path_str(r.path())),
        ]);
    }
    let mut text = table(&rows);
    let diags: Vec<_> = inventory
        .all_diagnostics()
        .filter(|d| d.severity > Severity::Info)
        .collect();
    if !diags.is_empty() {
        text.push_str(&format!(
            "\n{} diagnostic(s) (details: rho plugins inspect <name>):\n",
            diags.len()
        ));
        text.push_str(&diagnostic_table(diags));
    }
    out(&text);
    Ok(ExitCode::SUCCESS)
}

/// The command of a stdio server, as inventories show it.
fn command_str(command: &StdioCommand) -> String {
    match command {
        StdioCommand::Bare(name) => name.clone(),
        StdioCommand::Path(path) => path_str(path),
    }
}

fn server_detail(spec: &rho_component::McpServerSpec) -> ServerDetail<'_> {
    let name = match &spec.origin {
        rho_component::McpServerOrigin::Plugin { server, .. } => server.as_str(),
        rho_component::McpServerOrigin::Config => spec.id.as_str(),
    };
    match &spec.transport {
        McpTransport::Stdio(s) => ServerDetail::Stdio {
            name,
            id: &spec.id,
            transport: rho_component::Transport::Stdio,
            command: command_str(&s.command),
            args: &s.args,
            cwd: s.cwd.as_deref().map(path_str),
            // Values are package data but may still be sensitive: inventories show names only.
            env: s.env.iter().map(|(k, _)| k.as_str()).collect(),
        },
        McpTransport::StreamableHttp(h) => ServerDetail::StreamableHttp {
            name,
            id: &spec.id,
            transport: rho_component::Transport::StreamableHttp,
            url: &h.url,
            headers: h.headers.iter().map(|(k, _)| k.as_str()).collect(),
        },
    }
}

/// The tools one component lists, as `inspect` shows them, and the declarations refused.
#[derive(Clone)]
struct ComponentTools {
    tools: Vec<WasmToolEntry>,
    rejected: Vec<String>,
}

/// What `inspect` can say of each tool component of a plugin.
enum ComponentListing {
    /// The plugin may run (user scope, or trusted): each component's tools, or why it does
    /// not load.
    Loaded(Vec<Result<ComponentTools, String>>),
    /// A project plugin not trusted (with its current fingerprint): nothing of it was compiled,
    /// instantiated or cached, so its tools are not known.
    Untrusted,
}

/// Why the tools of an untrusted plugin are not listed, as `inspect` says it.
fn untrusted_tools_note(name: &str) -> String {
    format!(
        "tools not listed: the plugin is not trusted, so its components were not compiled or \
         run; they are listed once it is trusted (rho plugins trust {})",
        clean(name)
    )
}

/// What each tool component of `record` offers. Listing tools means compiling (or taking from
/// rho's cache) and instantiating the component, which runs its code: only for a plugin that
/// may run (`trust`), through the registry's one loader, and only `inspect` does it.
fn component_tools(
    ctx: &Context,
    record: &PluginRecord,
    trust: &rho_plugins::TrustState,
) -> ComponentListing {
    if record.package.tool_components.is_empty() {
        return ComponentListing::Loaded(Vec::new());
    }
    if !trust.allows_start() {
        return ComponentListing::Untrusted;
    }
    let count = record.package.tool_components.len();
    let loaded = crate::runtime::run(|_| async {
        let outcomes = rho_core::load_plugin_components(&ctx.paths, record).await;
        let mut out = Vec::new();
        for (spec, loaded) in record.package.tool_components.iter().zip(outcomes) {
            // Exported as a session would (a fresh table: names of other plugins cannot
            // collide with `wasm__<this plugin>__`).
            let mut names = rho_component::naming::ExportedNames::default();
            let loaded = loaded.map_err(|e| e.to_string());
            out.push(loaded.map(|component| {
                let tools: Vec<WasmToolEntry> = component
                    .tools()
                    .iter()
                    .map(|t| WasmToolEntry {
                        name: t.name.clone(),
                        display_name: rho_component::tool_display_name(Some(&spec.plugin), &t.name),
                        exported_name: names.assign_with(
                            rho_component::naming::WASM_PREFIX,
                            &spec.plugin,
                            &t.name,
                        ),
                        title: t.title.clone(),
                        description: t.description.clone(),
                        risk: rho_core::wasm_tool_risk(spec, t),
                    })
                    .collect();
                // Declarations the host refused: the session leaves these tools out.
                let rejected = component
                    .rejected()
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                ComponentTools { tools, rejected }
            }));
        }
        Ok(out)
    });
    ComponentListing::Loaded(loaded.unwrap_or_else(|e| vec![Err(e.to_string()); count]))
}

fn inspect_json<'a>(
    record: &'a PluginRecord,
    others: &[&PluginRecord],
    listing: &'a ComponentListing,
    unlisted: Option<&'a str>,
    trust: &rho_plugins::TrustState,
) -> PluginInspect<'a> {
    let tools: &[Result<ComponentTools, String>] = match listing {
        ComponentListing::Loaded(tools) => tools,
        ComponentListing::Untrusted => &[],
    };
    let manifest = record.package.manifest.as_ref();
    PluginInspect {
        entry: plugin_entry(record),
        manifest: manifest.map(|m| ManifestEntry {
            schema: &m.schema,
            spec_version: m.spec.as_str(),
            name: &m.name,
            version: m.version.as_deref(),
            description: m.description.as_deref(),
            author: m.author.as_ref().map(|a| AuthorEntry {
                name: a.name.as_deref(),
                email: a.email.as_deref(),
                url: a.url.as_deref(),
            }),
            homepage: m.homepage.as_deref(),
            repository: m.repository.as_deref(),
            license: m.license.as_deref(),
            keywords: &m.keywords,
            extensions: m.extensions.keys().map(String::as_str).collect(),
        }),
        data_dir: path_str(&record.data_dir()),
        installed_from: record.installed_from.as_deref().map(path_str),
        skill_details: record
            .package
            .skills
            .iter()
            .map(|s| SkillDetail {
                name: &s.name,
                description: &s.description,
                path: path_str(&s.location),
            })
            .collect(),
        mcp_server_details: record
            .package
            .mcp_servers
            .iter()
            .map(server_detail)
            .collect(),
        tool_component_details: record
            .package
            .tool_components
            .iter()
            .zip(tools.iter().map(Some).chain(std::iter::repeat(None)))
            .map(|(c, loaded)| {
                let listed = loaded.and_then(|l| l.as_ref().ok());
                ComponentDetail {
                    name: &c.name,
                    tools: listed.map(|l| l.tools.as_slice()),
                    rejected_tools: listed.map(|l| l.rejected.as_slice()),
                    error: loaded.and_then(|l| l.as_ref().err()).map(String::as_str),
                    tools_not_listed: unlisted,
                    path: path_str(&c.path),
                    workspace: c.workspace,
                    env: &c.env,
                    timeout_ms: u64::try_from(c.timeout.as_millis()).unwrap_or(u64::MAX),
                    memory_mib: c.memory_limit / (1024 * 1024),
                    risk: c.risk,
                }
            })
            .collect(),
        other_copies: others
            .iter()
            .map(|o| OtherCopy {
                entry: path_str(&o.entry),
                scope: o.scope,
                status: o.status,
            })
            .collect(),
        trust: trust.as_str(),
    }
}

fn trust_store(ctx: &Context) -> anyhow::Result<rho_plugins::TrustStore> {
    Ok(rho_plugins::TrustStore::load(&ctx.paths.trust_file())?)
}

fn trust(ctx: &Context, name: &str, trusted: bool) -> anyhow::Result<ExitCode> {
    let inventory = ctx.plugins.discover();
    let Some(record) = inventory.find(name) else {
        bail!("no plugin named {name:?} was found (try `rho plugins list`)");
    };
    if record.scope != Scope::Project {
        bail!("{name} is a user plugin: user plugins need no trust");
    }
    let mut store = trust_store(ctx)?;
    let changed = if trusted {
        store.trust(record)?;
        true
    } else {
        store.untrust(record)?
    };
    let fingerprint = if trusted {
        Some(rho_plugins::fingerprint(record)?)
    } else {
        None
    };
    let servers: Vec<&str> = record
        .package
        .mcp_servers
        .iter()
        .map(|spec| spec.id.as_str())
        .collect();
    if ctx.json {
        json_sorted(&TrustReport {
            name: &record.name,
            path: path_str(record.path()),
            trusted,
            changed,
            fingerprint,
            trust_file: path_str(&ctx.paths.trust_file()),
            servers,
            components: record
                .package
                .tool_components
                .iter()
                .map(|spec| TrustedComponent {
                    name: &spec.name,
                    workspace: spec.workspace,
                    env: &spec.env,
                    risk: spec.risk,
                })
                .collect(),
        });
    } else if trusted {
        let mut t = format!(
            "{} trusted ({}): its MCP servers and WASM tools may run\n",
            clean(&record.name),
            clean(&path_str(record.path()))
        );
        for id in &servers {
            t.push_str(&format!("  MCP server {}\n", clean(id)));
        }
        for spec in &record.package.tool_components {
            t.push_str(&format!(
                "  WASM component {}: workspace {}, env [{}], risk {}\n",
                clean(&spec.name),
                spec.workspace.as_str(),
                clean(&spec.env.join(", ")),
                spec.risk
            ));
        }
        out(&t);
    } else {
        out(&format!(
            "{} {}\n",
            clean(&record.name),
            if changed {
                "is no longer trusted"
            } else {
                "was not trusted"
            }
        ));
    }
    Ok(ExitCode::SUCCESS)
}

fn inspect(ctx: &Context, name: &str) -> anyhow::Result<ExitCode> {
    let inventory = ctx.plugins.discover();
    let Some(record) = inventory.find(name) else {
        bail!("no plugin named {name:?} was found (try `rho plugins list`)");
    };
    let others: Vec<&PluginRecord> = inventory
        .plugins
        .iter()
        .filter(|p| p.name == name && p.entry != record.entry)
        .collect();
    let trust_state = match trust_store(ctx) {
        Ok(store) => store.state(record),
        Err(_) => rho_plugins::TrustState::Untrusted,
    };
    let listing = component_tools(ctx, record, &trust_state);
    if ctx.json {
        let unlisted = matches!(listing, ComponentListing::Untrusted)
            .then(|| untrusted_tools_note(&record.name));
        json_sorted(&inspect_json(
            record,
            &others,
            &listing,
            unlisted.as_deref(),
            &trust_state,
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let m = record.package.manifest.as_ref();
    let mut t = String::new();
    t.push_str(&format!(
        "{}  {}\n",
        clean(&record.name),
        m.and_then(|m| m.version.as_deref())
            .map(clean)
            .unwrap_or_default()
    ));
    if let Some(d) = m.and_then(|m| m.description.as_deref()) {
        t.push_str(&format!("  {}\n", clean(d)));
    }
    t.push_str(&format!(
        "  status:  {}{}\n",
        record.status.as_str(),
        if record.enabled {
            ""
        } else {
            " (disabled in plugins.toml)"
        }
    ));
    t.push_str(&format!(
        "  scope:   {}   origin: {}\n",
        record.scope,
        record.origin.as_str()
    ));
    if trust_state != rho_plugins::TrustState::NotNeeded {
        t.push_str(&format!("  trust:   {}\n", trust_state.as_str()));
    }
    t.push_str(&format!("  path:    {}\n", clean(&path_str(record.path()))));
    if record.entry != record.path() {
        t.push_str(&format!(
            "  entry:   {} (link)\n",
            clean(&path_str(&record.entry))
        ));
    }
    t.push_str(&format!(
        "  data:    {}\n",
        clean(&path_str(&record.data_dir()))
    ));
    if let Some(from) = &record.installed_from {
        t.push_str(&format!("  from:    {}\n", clean(&path_str(from))));
    }
    if let Some(m) = m {
        t.push_str(&format!("  schema:  Agent Plugins {}\n", m.spec.as_str()));
        if m.extensions.contains_key(rho_component::RHO_NAMESPACE) {
            t.push_str(&format!(
                "  extensions: {} (rho's own: tool components)\n",
                rho_component::RHO_NAMESPACE
            ));
        }
        let others: Vec<String> = m
            .extensions
            .keys()
            .filter(|k| k.as_str() != rho_component::RHO_NAMESPACE)
            .map(|k| clean(k))
            .collect();
        if !others.is_empty() {
            t.push_str(&format!(
                "  extensions (other clients', ignored): {}\n",
                others.join(", ")
            ));
        }
    }
    t.push_str(&format!("\nskills ({}):\n", record.package.skills.len()));
    for s in &record.package.skills {
        t.push_str(&format!(
            "  {}  {}\n",
            clean(&s.name),
            clean(&truncate(&s.description, 80))
        ));
    }
    t.push_str(&format!(
        "\nMCP servers ({}):\n",
        record.package.mcp_servers.len()
    ));
    for s in &record.package.mcp_servers {
        t.push_str(&format!(
            "  {}  {}: {}\n",
            clean(&s.id),
            s.transport.kind(),
            clean(&s.transport.target())
        ));
    }
    if !record.package.tool_components.is_empty() {
        t.push_str(&format!(
            "\ntool components ({}):\n",
            record.package.tool_components.len()
        ));
        if matches!(listing, ComponentListing::Untrusted) {
            t.push_str(&format!("  {}\n", untrusted_tools_note(&record.name)));
        }
        let tools: &[Result<ComponentTools, String>] = match &listing {
            ComponentListing::Loaded(tools) => tools,
            ComponentListing::Untrusted => &[],
        };
        for (i, c) in record.package.tool_components.iter().enumerate() {
            t.push_str(&format!(
                "  {}  workspace: {}  env: {}  timeout: {} ms  memory: {} MiB  risk: {}\n",
                clean(&c.name),
                c.workspace.as_str(),
                if c.env.is_empty() {
                    "-".to_owned()
                } else {
                    clean(&c.env.join(","))
                },
                c.timeout.as_millis(),
                c.memory_limit / (1024 * 1024),
                c.risk.as_str()
            ));
            match tools.get(i) {
                Some(Ok(list)) => {
                    for why in &list.rejected {
                        t.push_str(&format!("    rejected: {}\n", clean(why)));
                    }
                    // What a person reads first, the name the model calls second.
                    for tool in &list.tools {
                        t.push_str(&format!(
                            "    {}  ({}{})  {}\n",
                            clean(&tool.display_name),
                            clean(&tool.exported_name),
                            if tool.risk == c.risk {
                                String::new()
                            } else {
                                format!(", risk {} by its annotations", tool.risk.as_str())
                            },
                            clean(&first_line(&tool.description, 60))
                        ));
                    }
                }
                Some(Err(e)) => t.push_str(&format!("    does not load: {}\n", clean(e))),
                None => {}
            }
            if matches!(listing, ComponentListing::Untrusted) {
                t.push_str(&format!("    file: {}\n", clean(&path_str(&c.path))));
            }
        }
    }
    if !others.is_empty() {
        t.push_str("\nother copies:\n");
        for o in &others {
            t.push_str(&format!(
                "  {} ({}, {})\n",
                clean(&path_str(&o.entry)),
                o.scope,
                o.status.as_str()
            ));
        }
    }
    if !record.package.diagnostics.is_empty() {
        t.push_str("\ndiagnostics:\n");
        for d in &record.package.diagnostics {
            t.push_str(&format!("  {}\n", diagnostic_line(d)));
        }
    }
    out(&t);
    Ok(ExitCode::SUCCESS)
}

fn scope_of(arg: ScopeArg) -> Scope {
    match arg {
        ScopeArg::User => Scope::User,
        ScopeArg::Project => Scope::Project,
    }
}

fn install(ctx: &Context, args: InstallArgs, as_link: bool) -> anyhow::Result<ExitCode> {
    let source = ctx.arg_path(&args.path);
    let scope = scope_of(args.scope);
    let report = if as_link {
        rho_plugins::link(&ctx.plugins, &source, scope, args.force)?
    } else {
        rho_plugins::install(&ctx.plugins, &source, scope, args.force)?
    };
    let action = if as_link {
        InstallAction::Linked
    } else {
        InstallAction::Installed
    };
    report_install(ctx, &report, action);
    Ok(ExitCode::SUCCESS)
}

fn report_install(ctx: &Context, report: &InstallReport, action: InstallAction) {
    // Tell the user when the new package loses to another copy of the same name.
    let inventory = ctx.plugins.discover();
    let shadowed_by = inventory
        .plugins
        .iter()
        .find(|p| p.entry == report.destination)
        .and_then(|p| p.shadowed_by.clone());
    if ctx.json {
        json_sorted(&InstallOutput {
            report,
            action,
            shadowed_by: shadowed_by.as_deref().map(path_str),
        });
        return;
    }
    let mut t = format!(
        "{} {} ({} scope){} at {}\n",
        action.as_str(),
        clean(&report.name),
        report.scope,
        if report.replaced {
            ", replacing the previous package"
        } else {
            ""
        },
        clean(&path_str(&report.destination))
    );
    if let Some(winner) = shadowed_by {
        t.push_str(&format!(
            "warning: it is shadowed by {} (nearer root wins)\n",
            clean(&path_str(&winner))
        ));
    }
    for d in &report.diagnostics {
        t.push_str(&format!("  {}\n", diagnostic_line(d)));
    }
    out(&t);
}

fn enable(ctx: &Context, name: &str, enabled: bool) -> anyhow::Result<ExitCode> {
    let report = rho_plugins::set_enabled(&ctx.plugins, name, enabled)?;
    let verb = if enabled { "enabled" } else { "disabled" };
    if ctx.json {
        json_sorted(&report);
    } else {
        out(&format!(
            "{} {verb}{} ({} scope, {})\n",
            clean(&report.name),
            if report.changed { "" } else { " already" },
            report.scope,
            clean(&path_str(&report.state_file))
        ));
    }
    Ok(ExitCode::SUCCESS)
}

fn remove(ctx: &Context, name: &str, yes: bool) -> anyhow::Result<ExitCode> {
    if !yes {
        let target = rho_plugins::removal_target(&ctx.plugins, name)?;
        if !std::io::stdin().is_terminal() {
            bail!(
                "refusing to remove {} without confirmation; pass --yes",
                path_str(&target)
            );
        }
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "remove {}? [y/N] ", clean(&path_str(&target)));
        let _ = stderr.flush();
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            out("not removed\n");
            return Ok(ExitCode::from(1));
        }
    }
    let report = rho_plugins::remove(&ctx.plugins, name)?;
    if ctx.json {
        json_sorted(&report);
    } else {
        out(&format!(
            "removed {} {} ({} scope); its data directory {} is kept\n",
            if report.was_link { "link" } else { "package" },
            clean(&path_str(&report.removed)),
            report.scope,
            clean(&path_str(&report.data_dir))
        ));
    }
    Ok(ExitCode::SUCCESS)
}

fn validate(ctx: &Context, path: &std::path::Path) -> anyhow::Result<ExitCode> {
    let path = ctx.arg_path(path);
    if !path.is_dir() {
        bail!("{} is not a directory", path_str(&path));
    }
    let package = rho_plugins::validate_package(&path);
    if package.not_a_plugin {
        bail!(
            "{} has no plugin.json, so it is not a plugin",
            path_str(&path)
        );
    }
    let errors = package
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let valid = package.is_valid() && errors == 0;
    if ctx.json {
        json_sorted(&PluginValidation {
            path: path_str(package.root.as_deref().unwrap_or(&path)),
            valid,
            loadable: package.is_valid(),
            name: package
                .manifest
                .as_ref()
                .map(|m| m.name.as_str())
                .or(package.claimed_name.as_deref()),
            skills: package.skills.iter().map(|s| s.name.as_str()).collect(),
            mcp_servers: server_names(&package),
            diagnostics: &package.diagnostics,
        });
    } else {
        let name = package
            .manifest
            .as_ref()
            .map(|m| m.name.as_str())
            .unwrap_or("?");
        let mut t = if valid {
            format!(
                "valid plugin {}: {} skill(s), {} MCP server(s)\n",
                clean(name),
                package.skills.len(),
                package.mcp_servers.len()
            )
        } else if package.is_valid() {
            format!(
                "plugin {} loads, but {errors} component error(s) were found:\n",
                clean(name)
            )
        } else {
            "invalid plugin: it would be rejected\n".to_string()
        };
        for d in &package.diagnostics {
            t.push_str(&format!("  {}\n", diagnostic_line(d)));
        }
        out(&t);
    }
    Ok(if valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
