//! `rho mcp ...`: every MCP server from `config.toml` and from loaded plugins.
//!
//! Without `--connect` nothing is started: the listing is built from configuration alone, so
//! it is as cheap as `rho plugins list`. With it, servers connect concurrently and, when stderr
//! is a terminal, each one's result is shown there as it arrives. `show --connect` also lists
//! the server's prompts (as the slash commands a session offers) and resources.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::bail;
use rho_component::{McpServerSpec, McpTransport, ServerPrompt, ServerResource, Transport};
use rho_core::{ServerSlot, SlotState};
use rho_mcp::oauth::{Browser, LoginPolicy, PasteBrowser};
use serde::Serialize;

use crate::cli::McpCommand;
use crate::context::Context;
use crate::output::{clean, error_text, first_line, json_sorted, json_write, out, table, truncate};
use crate::runtime;
use crate::shapes::{ImageEntry, McpCall, McpLogin, McpLogout, McpToolEntry};

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
    }
}

/// The credential store of this run.
fn credentials(ctx: &Context) -> rho_config::CredentialStore {
    rho_config::CredentialStore::new(ctx.paths.credentials_dir())
}

/// The OAuth access of a command: tokens from the store, and a login only where `policy`
/// allows one.
fn oauth_access(ctx: &Context, policy: LoginPolicy) -> rho_mcp::oauth::OAuthAccess {
    rho_mcp::oauth::OAuthAccess {
        store: credentials(ctx),
        login: policy,
    }
}

/// The configured server `id` that is ready to start, or why not.
fn startable(slots: &[ServerSlot], id: &str) -> anyhow::Result<McpServerSpec> {
    let entries = collect(slots);
    let Some(entry) = entries.into_iter().find(|e| e.id == id) else {
        bail!("no MCP server {id:?} (try `rho mcp list`)");
    };
    let Some(spec) = entry
        .spec
        .filter(|_| entry.status == EntryStatus::Configured)
        .cloned()
    else {
        bail!(
            "server {id:?} is {}{}",
            entry.status.as_str(),
            entry.error.map(|e| format!(": {e}")).unwrap_or_default()
        );
    };
    Ok(spec)
}

/// Whether a person is at this run's terminal: stdin to answer, stderr to read what rho says
/// (and the authorization address when no browser window appears).
fn person_at_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// `rho mcp login <id>`. The system browser opens only where [`LoginPolicy::for_run`] lets a
/// login start (a person at the terminal, outside CI); elsewhere the command says how instead,
/// before anything is contacted.
fn login(ctx: &Context, id: &str, no_browser: bool, scopes: &[String]) -> anyhow::Result<ExitCode> {
    let slots = load_slots(ctx)?;
    let spec = startable(&slots, id)?;
    let browser: Arc<dyn Browser> = if no_browser {
        Arc::new(PasteBrowser)
    } else {
        match LoginPolicy::for_run(person_at_terminal()) {
            LoginPolicy::Browser(browser) => browser,
            LoginPolicy::Never => {
                let why = if std::env::var_os("CI").is_some() {
                    "CI is set"
                } else {
                    "rho is not running on a terminal"
                };
                bail!(
                    "not opening a browser to log in to {id:?}: {why}; run `rho mcp login {id}` \
                     from a terminal outside CI, or pass --no-browser to open the address \
                     yourself and paste back where the browser ends up"
                );
            }
        }
    };
    let store = credentials(ctx);
    let report = runtime::run(|_| async {
        Ok(rho_mcp::oauth::login(
            &spec,
            &store,
            browser.as_ref(),
            scopes,
            &rho_mcp::process_ambient,
        )
        .await?)
    })?;
    if ctx.json {
        json_sorted(&McpLogin {
            server: id,
            issuer: &report.issuer,
            scopes: &report.scopes,
            expires_at: report.expires_at,
            refreshable: report.refreshable,
        });
    } else {
        let scopes = if report.scopes.is_empty() {
            String::new()
        } else {
            format!(" with scopes {}", report.scopes.join(" "))
        };
        out(&format!(
            "logged in to {} at {}{}\n",
            clean(id),
            clean(&report.issuer),
            clean(&scopes)
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// `rho mcp logout <id>`: removes the stored tokens (a file rho cannot read included).
fn logout(ctx: &Context, id: &str) -> anyhow::Result<ExitCode> {
    let slots = load_slots(ctx)?;
    if !slots.iter().any(|s| s.id == id) {
        bail!("no MCP server {id:?} (try `rho mcp list`)");
    }
    let removed = credentials(ctx).remove(id)?;
    if ctx.json {
        json_sorted(&McpLogout {
            server: id,
            removed,
        });
    } else if removed {
        out(&format!(
            "logged out of {}: its tokens are removed\n",
            clean(id)
        ));
    } else {
        out(&format!("{} has no stored tokens\n", clean(id)));
    }
    Ok(ExitCode::SUCCESS)
}

/// One server as inventories show it (documented in docs/cli-json.md).
/// What `rho mcp list` and `show` say of a server. The word in tables and JSON is the variant's
/// name in lowercase, for both serde and `as_str`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
enum EntryStatus {
    /// Enabled and valid; not started (no `--connect`).
    Configured,
    /// `--connect` started it and listed its tools (the session's word for a running server).
    Started,
    /// Its entry is invalid, or `--connect` could not reach it.
    Failed,
    /// Turned off in the config or by its plugin's state.
    Disabled,
    /// A project plugin's server the user has not trusted.
    Untrusted,
}

impl EntryStatus {
    /// `configured`, `started`, `failed`, `disabled` or `untrusted`.
    fn as_str(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Serialize)]
struct ServerEntry<'a> {
    #[serde(skip)]
    spec: Option<&'a McpServerSpec>,
    id: Cow<'a, str>,
    source: &'static str,
    plugin: Option<&'a str>,
    transport: Option<Transport>,
    enabled: bool,
    status: EntryStatus,
    error: Option<Cow<'a, str>>,
    protocol_version: Option<String>,
    server_info: Option<serde_json::Value>,
    tools: Vec<McpToolEntry>,
    /// `--connect` only: tools the server added after the connection was made (a session's
    /// tool set is fixed when it connects, so they need a restart).
    #[serde(skip_serializing_if = "Option::is_none")]
    added_tools: Option<Vec<String>>,
    /// `show --connect` only: the prompts, as the slash commands a session offers.
    #[serde(skip_serializing_if = "Option::is_none")]
    prompts: Option<Vec<PromptEntry>>,
    /// `show --connect` only: the resources, then the resource templates.
    #[serde(skip_serializing_if = "Option::is_none")]
    resources: Option<Vec<ResourceEntry>>,
    instructions: Option<String>,
    /// Legacy Streamable HTTP sessions are pinged once after connecting: `ok` or the failure.
    ping: Option<String>,
    /// `--connect` only: how many times connecting started the server again, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    restarts: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_restart: Option<String>,
    /// What would be started or contacted; never a secret value.
    target: Option<String>,
    /// Where the entry is defined.
    defined_in: Option<Cow<'a, str>>,
    /// OAuth servers only: the login state from the credential store (never a token).
    #[serde(skip_serializing_if = "Option::is_none")]
    auth: Option<AuthEntry>,
}

/// An OAuth server's login state (documented in docs/cli-json.md).
#[derive(Debug, Serialize)]
struct AuthEntry {
    /// logged_in | expired | needs_login | address_changed | unbound | unreadable
    state: &'static str,
    /// Seconds until the access token expires, when known.
    expires_in: Option<u64>,
    /// The state as a person reads it.
    summary: String,
}

impl AuthEntry {
    fn of(state: &rho_mcp::oauth::AuthState) -> Self {
        Self {
            state: state.name(),
            expires_in: match state {
                rho_mcp::oauth::AuthState::LoggedIn { expires_in } => *expires_in,
                _ => None,
            },
            summary: state.to_string(),
        }
    }
}

/// The login state of every OAuth server among `entries`.
fn add_auth_states(ctx: &Context, entries: &mut [ServerEntry]) {
    let store = credentials(ctx);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for entry in entries.iter_mut() {
        if let Some(spec) = entry.spec.filter(|s| rho_mcp::oauth::oauth_of(s).is_some()) {
            let state = rho_mcp::oauth::auth_state(&store, spec, now);
            entry.auth = Some(AuthEntry::of(&state));
        }
    }
}

impl<'a> ServerEntry<'a> {
    /// The entry of one registry slot, borrowing from it.
    fn from_slot(slot: &'a ServerSlot) -> Self {
        let (status, error) = match &slot.state {
            SlotState::Configured => (EntryStatus::Configured, None),
            SlotState::Disabled => (EntryStatus::Disabled, None),
            SlotState::Invalid(e) => (EntryStatus::Failed, Some(Cow::Borrowed(e.as_str()))),
            SlotState::Untrusted(e) => (EntryStatus::Untrusted, Some(Cow::Borrowed(e.as_str()))),
        };
        let spec = slot.spec.as_ref();
        Self {
            spec,
            id: Cow::Borrowed(&slot.id),
            source: slot.source.as_str(),
            plugin: slot.plugin.as_deref(),
            transport: spec.map(|s| s.transport.kind()),
            enabled: status != EntryStatus::Disabled,
            status,
            error,
            protocol_version: None,
            server_info: None,
            tools: Vec::new(),
            added_tools: None,
            prompts: None,
            resources: None,
            instructions: None,
            ping: None,
            restarts: None,
            last_restart: None,
            target: spec.map(|spec| spec.transport.target()),
            defined_in: slot.defined_in.as_deref().map(Cow::Borrowed),
            auth: None,
        }
    }
}

/// One prompt of `show --connect` (documented in docs/cli-json.md).
#[derive(Debug, Serialize)]
struct PromptEntry {
    /// The slash command a session offers for it (`/mcp:<server>:<prompt>`).
    command: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    arguments: Vec<ArgumentEntry>,
}

/// One argument of a prompt.
#[derive(Debug, Serialize)]
struct ArgumentEntry {
    name: String,
    title: Option<String>,
    description: Option<String>,
    required: bool,
}

impl PromptEntry {
    fn new(server: &str, prompt: ServerPrompt) -> Self {
        Self {
            command: rho_core::host::command_name(server, &prompt.name),
            name: prompt.name,
            title: prompt.title,
            description: prompt.description,
            arguments: prompt
                .arguments
                .into_iter()
                .map(|a| ArgumentEntry {
                    name: a.name,
                    title: a.title,
                    description: a.description,
                    required: a.required,
                })
                .collect(),
        }
    }
}

/// One resource or resource template of `show --connect`.
#[derive(Debug, Serialize)]
struct ResourceEntry {
    uri: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    template: bool,
}

impl From<ServerResource> for ResourceEntry {
    fn from(r: ServerResource) -> Self {
        Self {
            uri: r.uri,
            name: r.name,
            title: r.title,
            description: r.description,
            mime_type: r.mime_type,
            template: r.template,
        }
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
        connect_all(ctx, &mut entries, live_progress(ctx), Catalog::ToolsOnly)?;
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
    let slots = load_slots(ctx)?;
    let mut entries: Vec<ServerEntry> =
        collect(&slots).into_iter().filter(|e| e.id == id).collect();
    if entries.is_empty() {
        bail!("no MCP server {id:?} (try `rho mcp list`)");
    }
    if connect {
        connect_all(ctx, &mut entries, live_progress(ctx), Catalog::Everything)?;
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
                vec![
                    clean(&tool.display_name),
                    clean(&tool.exported_name),
                    clean(&first_line(
                        tool.description.as_deref().unwrap_or_default(),
                        80,
                    )),
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

/// Whether `--connect` shows progress: only for a person watching (stderr is a terminal) and
/// never with `--json`, so scripts and logs see nothing new.
fn live_progress(ctx: &Context) -> bool {
    !ctx.json && std::io::stderr().is_terminal()
}

/// What connecting to one server gave, or the error.
type Outcome = Result<Connected, String>;

/// What `--connect` reports besides status and tools.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Catalog {
    /// `list`: tools only (and tools added after connecting).
    ToolsOnly,
    /// `show`: prompts and resources too.
    Everything,
}

/// A server that answered, as `--connect` reports it.
struct Connected {
    summary: rho_mcp::ServerSummary,
    tools: Vec<rho_mcp::ServerTool>,
    /// Names of tools the server added after the connection was made.
    added_tools: Vec<String>,
    prompts: Vec<ServerPrompt>,
    resources: Vec<ServerResource>,
    /// Legacy Streamable HTTP only: the ping's result.
    ping: Option<String>,
    /// How many times connecting started the server again, and why the last time.
    restarts: (u32, Option<String>),
}

/// Connects every configured, enabled entry concurrently (each within its own startup budget),
/// records live status, then closes them all. With `live`, each result is shown on stderr as
/// it arrives (see [`ConnectProgress`]). Every entry gets the `--connect` fields (empty unless
/// its server connected), so the JSON shape does not depend on which servers answered.
fn connect_all(
    ctx: &Context,
    entries: &mut [ServerEntry],
    live: bool,
    catalog: Catalog,
) -> anyhow::Result<()> {
    // Inventories never open a browser: a server without a usable token is `failed`, and
    // its error names `rho mcp login`.
    let access = oauth_access(ctx, LoginPolicy::Never);
    for entry in entries.iter_mut() {
        entry.added_tools = Some(Vec::new());
        if catalog == Catalog::Everything {
            entry.prompts = Some(Vec::new());
            entry.resources = Some(Vec::new());
        }
    }
    let targets: Vec<(usize, McpServerSpec)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.status == EntryStatus::Configured)
        .filter_map(|(i, e)| e.spec.cloned().map(|s| (i, s)))
        .collect();
    if targets.is_empty() {
        return Ok(()); // zero-server fast path: no runtime, no task, no process
    }
    let mut progress =
        live.then(|| ConnectProgress::start(targets.iter().map(|(index, spec)| (*index, spec))));
    // A signal drops the connections, which stops their servers.
    let mut results = runtime::run(|_| async {
        let mut set = tokio::task::JoinSet::new();
        for (index, spec) in targets {
            set.spawn(connect_one(index, spec, access.clone()));
        }
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut results = Vec::new();
        loop {
            tokio::select! {
                joined = set.join_next() => {
                    let Some(joined) = joined else { break };
                    if let Ok((index, outcome, elapsed)) = joined {
                        if let Some(progress) = progress.as_mut() {
                            progress.finished(index, &outcome, elapsed);
                        }
                        results.push((index, outcome));
                    }
                }
                _ = tick.tick(), if progress.is_some() => {
                    if let Some(progress) = progress.as_mut() {
                        progress.tick();
                    }
                }
            }
        }
        Ok(results)
    })?;
    // Exported names are assigned in listing order, not in the order servers happened to answer.
    results.sort_by_key(|(index, _)| *index);
    let mut names = rho_mcp::ExportedNames::default();
    for (index, outcome) in results {
        let entry = &mut entries[index];
        match outcome {
            Ok(Connected {
                summary,
                tools,
                added_tools,
                prompts,
                resources,
                ping,
                restarts,
            }) => {
                entry.status = EntryStatus::Started;
                (entry.restarts, entry.last_restart) = (Some(restarts.0), restarts.1);
                entry.added_tools = Some(added_tools);
                if catalog == Catalog::Everything {
                    let id = &entry.id;
                    entry.prompts = Some(
                        prompts
                            .into_iter()
                            .map(|p| PromptEntry::new(id, p))
                            .collect(),
                    );
                    entry.resources =
                        Some(resources.into_iter().map(ResourceEntry::from).collect());
                }
                entry.ping = ping;
                entry.protocol_version = Some(summary.protocol_version);
                entry.server_info = summary.server_info;
                entry.instructions = summary.instructions;
                entry.tools = tools
                    .iter()
                    .map(|t| McpToolEntry {
                        description: t.description().map(str::to_owned),
                        display_name: rho_component::tool_display_name(Some(&*entry.id), &t.name),
                        exported_name: names.assign(&entry.id, &t.name),
                        name: t.name.clone(),
                        title: t.title().map(str::to_owned),
                    })
                    .collect();
            }
            Err(error) => {
                entry.status = EntryStatus::Failed;
                entry.error = Some(Cow::Owned(error));
            }
        }
    }
    Ok(())
}

/// Connects to one server, pings legacy Streamable HTTP sessions once, and closes it again.
/// The time returned is how long the answer took (closing is not part of it).
async fn connect_one(
    index: usize,
    spec: McpServerSpec,
    access: rho_mcp::oauth::OAuthAccess,
) -> (usize, Outcome, Duration) {
    let started = Instant::now();
    let options = rho_mcp::ClientOptions {
        oauth: Some(access),
        ..rho_mcp::ClientOptions::default()
    };
    let connection = match rho_mcp::connect_with(&spec, &rho_mcp::process_ambient, &options).await {
        Ok(connection) => connection,
        Err(e) => return (index, Err(e.to_string()), started.elapsed()),
    };
    let summary = connection.summary.clone();
    let tools = connection.tools.clone();
    let added_tools = connection
        .added_tools()
        .iter()
        .map(|t| t.name.clone())
        .collect();
    let prompts = connection.prompts();
    let resources = connection.resources();
    let http = matches!(spec.transport, McpTransport::StreamableHttp(_));
    let ping = if http && connection.is_legacy() {
        Some(match connection.ping(Duration::from_secs(5)).await {
            Ok(()) => "ok".to_owned(),
            Err(e) => e.to_string(),
        })
    } else {
        None
    };
    let (restarts, last_restart) = connection.restarts();
    let restarts = (restarts, last_restart.map(str::to_owned));
    let elapsed = started.elapsed();
    connection.close().await;
    (
        index,
        Ok(Connected {
            summary,
            tools,
            added_tools,
            prompts,
            resources,
            ping,
            restarts,
        }),
        elapsed,
    )
}

/// `--connect` progress on a terminal's stderr, one whole line at a time (logs and server
/// messages that `tracing` writes to the same stream interleave cleanly, and no terminal
/// control sequence is needed): a header, one line per server as it finishes, and while any is
/// pending and nothing else was printed for a while, a line naming them:
///
/// ```text
/// connecting 3 MCP servers…
///   github ✓ 12 tools (0.4 s)
///   files ✓ 3 tools (0.9 s)
///   waiting for web (3 s, startup budget 120 s)
///   web ✗ no answer within the 120.0 s startup budget (120.0 s)
/// ```
///
/// Every server-supplied string (ids, errors) goes through `clean`, and lines are cut to the
/// terminal width.
struct ConnectProgress {
    started: Instant,
    /// When the last line was printed, and how long to stay silent after it.
    last_line: Instant,
    quiet_for: Duration,
    /// Every server not finished yet, in listing order.
    pending: Vec<Pending>,
    width: usize,
}

/// A server `ConnectProgress` still waits for.
struct Pending {
    /// Its entry in the listing.
    index: usize,
    /// The id as configured (error messages start with it) and as shown.
    id: String,
    shown: String,
    budget: Duration,
}

/// Silence before the first "waiting for" line; it doubles after each, up to [`MAX_QUIET`].
const FIRST_QUIET: Duration = Duration::from_secs(3);
/// The longest silence while a server is pending.
const MAX_QUIET: Duration = Duration::from_secs(15);

impl ConnectProgress {
    fn start<'a>(servers: impl Iterator<Item = (usize, &'a McpServerSpec)>) -> Self {
        let pending: Vec<Pending> = servers
            .map(|(index, spec)| Pending {
                index,
                id: spec.id.clone(),
                shown: clean(&spec.id),
                budget: spec.startup_timeout,
            })
            .collect();
        let total = pending.len();
        let plural = if total == 1 { "" } else { "s" };
        error_text(&format!("connecting {total} MCP server{plural}…\n"));
        let now = Instant::now();
        Self {
            started: now,
            last_line: now,
            quiet_for: FIRST_QUIET,
            pending,
            width: terminal_width(),
        }
    }

    /// Prints the line of a server that finished.
    fn finished(&mut self, index: usize, outcome: &Outcome, elapsed: Duration) {
        let Some(at) = self.pending.iter().position(|p| p.index == index) else {
            return;
        };
        let server = self.pending.remove(at);
        let seconds = format!("({:.1} s)", elapsed.as_secs_f64());
        let head = match outcome {
            Ok(connected) => {
                let count = connected.tools.len();
                let plural = if count == 1 { "" } else { "s" };
                format!("  {} ✓ {count} tool{plural}", server.shown)
            }
            Err(error) => {
                // The id leads the line already; the table or JSON keeps the whole message.
                let prefix = format!("server {}: ", server.id);
                let reason = error.strip_prefix(&prefix).unwrap_or(error);
                let reason = clean(reason.lines().next().unwrap_or_default());
                format!("  {} ✗ {reason}", server.shown)
            }
        };
        self.line(&head, &seconds);
    }

    /// Names the pending servers when nothing was printed for a while (a hung server still
    /// shows that rho is waiting, on what, and for how long at most).
    fn tick(&mut self) {
        if self.pending.is_empty() || self.last_line.elapsed() < self.quiet_for {
            return;
        }
        let names: Vec<&str> = self.pending.iter().map(|p| p.shown.as_str()).collect();
        let budget = self
            .pending
            .iter()
            .map(|p| p.budget)
            .max()
            .unwrap_or_default();
        let head = format!("  waiting for {}", names.join(", "));
        let tail = format!(
            "({} s, startup budget {} s)",
            self.started.elapsed().as_secs(),
            budget.as_secs_f64().ceil()
        );
        self.line(&head, &tail);
        self.quiet_for = (self.quiet_for * 2).min(MAX_QUIET);
    }

    /// Prints `head tail`, cutting `head` so the line fits the terminal.
    fn line(&mut self, head: &str, tail: &str) {
        let room = self.width.saturating_sub(tail.chars().count() + 1).max(20);
        error_text(&format!("{} {tail}\n", truncate(head, room)));
        self.last_line = Instant::now();
    }
}

/// The terminal's width from `COLUMNS` when the shell exports it, else the classic 80.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c >= 20)
        .unwrap_or(80)
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
    let spec = startable(&slots, id)?;
    let json = ctx.json;
    // A person at a terminal may log in when the server needs it.
    let access = oauth_access(ctx, LoginPolicy::for_run(person_at_terminal()));
    runtime::run(|stop| async move {
        // A call needs the tools only: the server's prompts and resources stay unlisted.
        let options = rho_mcp::ClientOptions {
            skip_offers: true,
            oauth: Some(access),
            ..rho_mcp::ClientOptions::default()
        };
        // A signal while connecting drops the connection, which stops the server.
        let connection = tokio::select! {
            connected = rho_mcp::connect_with(&spec, &rho_mcp::process_ambient, &options) => connected?,
            () = stop.cancelled() => bail!("stopped while connecting"),
        };
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
                let message = p
                    .message
                    .map(|m| format!(" {}", clean(&m)))
                    .unwrap_or_default();
                crate::output::error_line(&format!("progress {}{total}{message}", p.progress));
            }
        });
        // A signal cancels the call (the server is told), then the connection closes.
        let cancel = rho_mcp::Cancel::new();
        let on_signal = cancel.clone();
        tokio::spawn(async move {
            stop.cancelled().await;
            on_signal.cancel();
        });
        let result = connection
            .call_tool(&raw, arguments, Some(progress_tx), cancel)
            .await;
        connection.close().await;
        let _ = printer.await;
        let result = result?;
        let rendered = rho_mcp::render_result(&result, spec.max_output_bytes);
        if json {
            json_sorted(&McpCall {
                server: &spec.id,
                tool: &raw,
                is_error: rendered.is_error,
                text: &rendered.text,
                truncated: rendered.truncated,
                structured_content: rendered.structured.as_ref(),
                image: rendered.image.as_ref().map(|i| ImageEntry {
                    mime_type: &i.mime_type,
                    bytes: i.data.len(),
                }),
            });
        } else {
            let mut text = crate::output::clean_block(&rendered.text);
            text.push('\n');
            if let Some(image) = &rendered.image {
                text.push_str(&format!(
                    "[image kept for display: {}, {} encoded bytes]\n",
                    image.mime_type,
                    image.data.len()
                ));
            }
            out(&text);
        }
        Ok(if rendered.is_error {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    })
}
