//! The `--json` shapes of the commands, one type per shape (documented in docs/cli-json.md).
//!
//! Shapes shared by several commands (a diagnostic, a plugin entry, a tool of an MCP server) are
//! defined once and reused. Where a host type already is the shape, it is printed as it serializes
//! and has no copy here: `rho plugins enable|disable` and `remove` print `rho_plugins`'
//! `EnableReport` and `RemoveReport`; `install` and the tool calls flatten `InstallReport` and
//! `ToolOutput` into their shapes. Fields use the host crates' enums where those serialize to the
//! documented spelling (scope, plugin status, transport, workspace access, risk, check status).
//!
//! Key order: shapes printed with [`crate::output::json_sorted`] have their object keys sorted
//! at every level (the order these documents have always had); the others
//! ([`crate::output::json_write`]) keep the declaration order of their fields.

use std::borrow::Cow;
use std::collections::BTreeMap;

use rho_component::{
    Diagnostic, McpServerSpec, RiskLevel, Scope, ServerPrompt, ServerResource, ToolOutput,
    Transport, WorkspaceAccess,
};
use rho_core::{ServerSlot, ServerStatus};
use rho_plugins::{InstallReport, Origin, PluginStatus};
use serde::Serialize;
use serde_json::Value;

use crate::output::path_str;

// ---- rho plugins ----

/// One package of `rho plugins list` (and the base of `inspect`).
#[derive(Serialize)]
pub struct PluginEntry<'a> {
    pub name: &'a str,
    pub version: Option<&'a str>,
    pub description: Option<&'a str>,
    pub scope: Scope,
    pub origin: Origin,
    pub path: String,
    pub entry: String,
    pub enabled: bool,
    pub status: PluginStatus,
    pub shadowed_by: Option<String>,
    pub skills: Vec<&'a str>,
    pub mcp_servers: Vec<&'a str>,
    pub tool_components: Vec<&'a str>,
    pub diagnostics: &'a [Diagnostic],
}

/// `rho plugins list --json`.
#[derive(Serialize)]
pub struct PluginList<'a> {
    pub plugins: Vec<PluginEntry<'a>>,
    /// About roots and state files, not one package.
    pub diagnostics: &'a [Diagnostic],
}

/// `rho plugins inspect <name> --json` (printed sorted): the list entry plus the details.
#[derive(Serialize)]
pub struct PluginInspect<'a> {
    #[serde(flatten)]
    pub entry: PluginEntry<'a>,
    /// `null` when the package was rejected.
    pub manifest: Option<ManifestEntry<'a>>,
    pub data_dir: String,
    pub installed_from: Option<String>,
    pub skill_details: Vec<SkillDetail<'a>>,
    pub mcp_server_details: Vec<ServerDetail<'a>>,
    pub tool_component_details: Vec<ComponentDetail<'a>>,
    pub other_copies: Vec<OtherCopy>,
    /// `not-needed`, `trusted`, `untrusted` or `changed`.
    pub trust: &'static str,
}

/// A plugin's manifest as `inspect` shows it (`extensions`: namespace names only).
#[derive(Serialize)]
pub struct ManifestEntry<'a> {
    #[serde(rename = "$schema")]
    pub schema: &'a str,
    pub spec_version: &'static str,
    pub name: &'a str,
    pub version: Option<&'a str>,
    pub description: Option<&'a str>,
    pub author: Option<AuthorEntry<'a>>,
    pub homepage: Option<&'a str>,
    pub repository: Option<&'a str>,
    pub license: Option<&'a str>,
    pub keywords: &'a [String],
    pub extensions: Vec<&'a str>,
}

/// The manifest's `author`.
#[derive(Serialize)]
pub struct AuthorEntry<'a> {
    pub name: Option<&'a str>,
    pub email: Option<&'a str>,
    pub url: Option<&'a str>,
}

/// A skill of a plugin: `{name, description, path}`.
#[derive(Serialize)]
pub struct SkillDetail<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub path: String,
}

/// A server of a plugin, as its package declares it (values of `env` and `headers` are not
/// shown: names only).
#[derive(Serialize)]
#[serde(untagged)]
pub enum ServerDetail<'a> {
    /// A local process.
    Stdio {
        name: &'a str,
        id: &'a str,
        transport: Transport,
        command: String,
        args: &'a [String],
        cwd: Option<String>,
        env: Vec<&'a str>,
    },
    /// A Streamable HTTP endpoint.
    StreamableHttp {
        name: &'a str,
        id: &'a str,
        transport: Transport,
        url: &'a str,
        headers: Vec<&'a str>,
    },
}

/// A WASM tool component of a plugin, what it asks for and what it offers.
#[derive(Serialize)]
pub struct ComponentDetail<'a> {
    pub name: &'a str,
    /// The tools it offers; `null` when it was not loaded.
    pub tools: Option<&'a [WasmToolEntry]>,
    /// Declarations rho refuses (those tools are left out); `null` when it was not loaded.
    pub rejected_tools: Option<&'a [String]>,
    /// Why it does not load.
    pub error: Option<&'a str>,
    /// Why its tools are not listed (a project plugin that is not trusted).
    pub tools_not_listed: Option<&'a str>,
    pub path: String,
    pub workspace: WorkspaceAccess,
    pub env: &'a [String],
    pub timeout_ms: u64,
    pub memory_mib: u64,
    pub risk: RiskLevel,
}

/// One tool a WASM component lists.
#[derive(Clone, Serialize)]
pub struct WasmToolEntry {
    pub name: String,
    /// What a person reads: `<plugin> › <name>` (`docs/mcp.md`, "What people see").
    pub display_name: String,
    /// The name a session exports it under (`wasm__<plugin>__<tool>`).
    pub exported_name: String,
    pub title: Option<String>,
    pub description: String,
    /// The component's risk, raised to `destructive` by the tool's annotations.
    pub risk: RiskLevel,
}

/// Another package with the same name as the one inspected.
#[derive(Serialize)]
pub struct OtherCopy {
    pub entry: String,
    pub scope: Scope,
    pub status: PluginStatus,
}

/// `rho plugins trust|untrust <name> --json` (printed sorted).
#[derive(Serialize)]
pub struct TrustReport<'a> {
    pub name: &'a str,
    pub path: String,
    pub trusted: bool,
    /// For untrust: whether a record existed.
    pub changed: bool,
    /// `null` for untrust.
    pub fingerprint: Option<String>,
    pub trust_file: String,
    /// The MCP servers that may now start.
    pub servers: Vec<&'a str>,
    /// The WASM components that may now load.
    pub components: Vec<TrustedComponent<'a>>,
}

/// A WASM component named by `trust`: what it may do.
#[derive(Serialize)]
pub struct TrustedComponent<'a> {
    pub name: &'a str,
    pub workspace: WorkspaceAccess,
    pub env: &'a [String],
    pub risk: RiskLevel,
}

/// What `install` or `link` did.
#[derive(Clone, Copy, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InstallAction {
    /// Copied into the root.
    Installed,
    /// Linked into the root.
    Linked,
}

impl InstallAction {
    /// `installed` or `linked`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Installed => "installed",
            Self::Linked => "linked",
        }
    }
}

/// `rho plugins install|link <path> --json` (printed sorted).
#[derive(Serialize)]
pub struct InstallOutput<'a> {
    /// The name, the new entry (`path`), the scope, whether `--force` replaced an existing
    /// entry, and the package's non-fatal problems.
    #[serde(flatten)]
    pub report: &'a InstallReport,
    pub action: InstallAction,
    /// A higher-precedence package of the same name, if there is one.
    pub shadowed_by: Option<String>,
}

/// `rho plugins validate <path> --json` (printed sorted).
#[derive(Serialize)]
pub struct PluginValidation<'a> {
    pub path: String,
    /// Loadable, and no error-severity diagnostic.
    pub valid: bool,
    /// Whether the manifest is accepted (the plugin would load).
    pub loadable: bool,
    pub name: Option<&'a str>,
    pub skills: Vec<&'a str>,
    pub mcp_servers: Vec<&'a str>,
    pub diagnostics: &'a [Diagnostic],
}

/// `rho plugins new <dir> --tool <name> --json` (printed sorted).
#[derive(Serialize)]
pub struct NewPlugin<'a> {
    pub plugin: &'a str,
    pub tool: &'a str,
    /// The new plugin directory.
    pub path: String,
    /// The `rho-plugin-sdk` directory its tool crate depends on.
    pub sdk: String,
    /// Every file written.
    pub files: Vec<String>,
}

/// `rho man --out <dir> --json` (printed sorted).
#[derive(Serialize)]
pub struct ManPages {
    pub dir: String,
    /// Every page written.
    pub pages: Vec<String>,
}

// ---- rho skills ----

/// Whether a skill is the one sessions get, or lost to another of the same name.
#[derive(Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SkillStatus {
    /// The winner of its name.
    Loaded,
    /// Lost to a higher-precedence skill.
    Shadowed,
}

impl SkillStatus {
    /// `loaded` or `shadowed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Loaded => "loaded",
            Self::Shadowed => "shadowed",
        }
    }
}

/// What names a skill and where it is from: the keys `rho skills list` and `show` share.
#[derive(Serialize)]
pub struct SkillIdentity<'a> {
    pub name: &'a str,
    pub description: &'a str,
    /// `builtin`, `user`, `project`, `project-plugin` or `user-plugin`.
    pub source: &'static str,
    /// The owning plugin, for plugin skills.
    pub plugin: Option<&'a str>,
    /// Its `SKILL.md`.
    pub path: String,
}

impl<'a> SkillIdentity<'a> {
    /// The identity of `skill`.
    pub fn of(skill: &'a rho_component::SkillMeta) -> Self {
        Self {
            name: &skill.name,
            description: &skill.description,
            source: skill.source.kind(),
            plugin: skill.source.plugin(),
            path: path_str(&skill.location),
        }
    }
}

/// One skill of `rho skills list`.
#[derive(Serialize)]
pub struct SkillEntry<'a> {
    #[serde(flatten)]
    pub skill: SkillIdentity<'a>,
    pub status: SkillStatus,
    /// The winner's `SKILL.md`, for shadowed skills (else absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadowed_by: Option<String>,
}

impl<'a> SkillEntry<'a> {
    /// The entry of `skill`.
    pub fn new(skill: &'a rho_component::SkillMeta, status: SkillStatus) -> Self {
        Self {
            skill: SkillIdentity::of(skill),
            status,
            shadowed_by: None,
        }
    }
}

/// `rho skills list --json` (printed sorted).
#[derive(Serialize)]
pub struct SkillList<'a> {
    pub skills: Vec<SkillEntry<'a>>,
    pub diagnostics: &'a [Diagnostic],
}

/// `rho skills show <name> --json` (printed sorted).
#[derive(Serialize)]
pub struct SkillShow<'a> {
    #[serde(flatten)]
    pub skill: SkillIdentity<'a>,
    pub directory: String,
    pub license: Option<&'a str>,
    pub compatibility: Option<&'a str>,
    pub metadata: &'a BTreeMap<String, String>,
    pub allowed_tools: Option<&'a str>,
    /// Files of the skill directory, relative to it.
    pub resources: Vec<String>,
    /// The Markdown after the frontmatter.
    pub body: &'a str,
}

/// `rho skills validate <dir> --json` (printed sorted).
#[derive(Serialize)]
pub struct SkillValidation<'a> {
    pub path: String,
    pub valid: bool,
    pub name: Option<&'a str>,
    /// Every problem found, as lower-case sentences.
    pub problems: &'a [String],
}

// ---- rho mcp ----

/// A tool of a connected MCP server, in `rho mcp list|show --connect`. Its keys are in
/// alphabetical order, as they have always been printed.
#[derive(Debug, Serialize)]
pub struct McpToolEntry {
    pub description: Option<String>,
    /// What a person reads: `<server> › <name>` (`docs/mcp.md`, "What people see").
    pub display_name: String,
    /// The name a session exports it under (`mcp__<server>__<tool>`).
    pub exported_name: String,
    /// The server's own name.
    pub name: String,
    /// Present (`true`) when the tool runs only as an MCP task (`execution.taskSupport:
    /// "required"`): rho lists it but refuses its calls until it supports tasks.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub needs_tasks: bool,
    pub title: Option<String>,
}

/// `rho mcp login <id> --json` (printed sorted).
#[derive(Serialize)]
pub struct McpLogin<'a> {
    pub server: &'a str,
    pub issuer: &'a str,
    pub scopes: &'a [String],
    pub expires_at: Option<u64>,
    pub refreshable: bool,
}

/// `rho mcp logout <id> --json` (printed sorted).
#[derive(Serialize)]
pub struct McpLogout<'a> {
    pub server: &'a str,
    /// Whether tokens were stored.
    pub removed: bool,
}

/// `rho mcp call <id> <tool> --json` (printed sorted): the result as the model reads it.
#[derive(Serialize)]
pub struct McpCall<'a> {
    pub server: &'a str,
    pub tool: &'a str,
    #[serde(flatten)]
    pub output: &'a ToolOutput,
}

// ---- rho tools ----

/// One tool of `rho tools list`.
#[derive(Serialize)]
pub struct ToolEntry<'a> {
    /// The exported name the model calls.
    pub name: &'a str,
    /// The tool's own name: the server's for an MCP tool, the component's for a WASM tool,
    /// `name` for a built-in tool.
    pub tool: &'a str,
    /// What a person reads: `<server> › <tool>`, `<plugin> › <tool>` or a built-in tool's
    /// name (`docs/mcp.md`, "What people see").
    pub display_name: String,
    pub title: Option<&'a str>,
    pub description: &'a str,
    /// `builtin`, `mcp` or `wasm`.
    pub source: &'static str,
    /// The MCP server identity, for MCP tools.
    pub server: Option<&'a str>,
    /// The plugin, for plugin servers and WASM tools.
    pub plugin: Option<&'a str>,
    pub risk: RiskLevel,
    pub input_schema: &'a Value,
}

/// A server of `rho tools list` and how it went.
#[derive(Serialize)]
pub struct ToolServer<'a> {
    pub id: &'a str,
    pub status: &'a str,
    pub error: Option<&'a str>,
}

/// `rho tools list --json` (printed sorted).
#[derive(Serialize)]
pub struct ToolList<'a> {
    pub tools: Vec<ToolEntry<'a>>,
    pub servers: Vec<ToolServer<'a>>,
    pub diagnostics: &'a [Diagnostic],
}

/// `rho tools call <name> --json` (printed sorted).
#[derive(Serialize)]
pub struct ToolCall<'a> {
    pub tool: &'a str,
    #[serde(flatten)]
    pub output: &'a ToolOutput,
}

// ---- rho doctor ----

/// `rho doctor --json` (printed sorted).
#[derive(Serialize)]
pub struct DoctorReport<'a> {
    pub checks: &'a [rho_core::doctor::Check],
    /// False when any check is an error.
    pub ok: bool,
}

// ---- rho mcp list / show: servers, prompts, resources ----

/// One server as inventories show it (documented in docs/cli-json.md).
#[derive(Debug, Serialize)]
pub(crate) struct ServerEntry<'a> {
    #[serde(skip)]
    pub(crate) spec: Option<&'a McpServerSpec>,
    pub(crate) id: Cow<'a, str>,
    pub(crate) source: &'static str,
    pub(crate) plugin: Option<&'a str>,
    pub(crate) transport: Option<Transport>,
    pub(crate) enabled: bool,
    /// `configured`, `started`, `failed`, `disabled` or `untrusted` (a probe starts every
    /// server it can, so `known` and `used` do not occur here).
    #[serde(serialize_with = "status_word")]
    pub(crate) status: ServerStatus,
    pub(crate) error: Option<Cow<'a, str>>,
    pub(crate) protocol_version: Option<String>,
    pub(crate) server_info: Option<serde_json::Value>,
    pub(crate) tools: Vec<McpToolEntry>,
    /// `--connect` only: tools the server added after the connection was made (a session's
    /// tool set is fixed when it connects, so they need a restart).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) added_tools: Option<Vec<String>>,
    /// `show --connect` only: the prompts, as the slash commands a session offers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) prompts: Option<Vec<PromptEntry>>,
    /// `show --connect` only: the resources, then the resource templates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resources: Option<Vec<ResourceEntry>>,
    pub(crate) instructions: Option<String>,
    /// Legacy Streamable HTTP sessions are pinged once after connecting: `ok` or the failure.
    pub(crate) ping: Option<String>,
    /// `--connect` only: how many times connecting started the server again, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) restarts: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) last_restart: Option<String>,
    /// What would be started or contacted; never a secret value.
    pub(crate) target: Option<String>,
    /// Where the entry is defined.
    pub(crate) defined_in: Option<Cow<'a, str>>,
    /// OAuth servers only: the login state from the credential store (never a token).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) auth: Option<AuthEntry>,
}

/// A server's state as its word (`ServerStatus::as_str`).
pub(crate) fn status_word<S: serde::Serializer>(
    status: &ServerStatus,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(status.as_str())
}

impl<'a> ServerEntry<'a> {
    /// The entry of one registry slot, borrowing from it.
    pub(crate) fn from_slot(slot: &'a ServerSlot) -> Self {
        let status = slot.status();
        let error = match &slot.state {
            rho_core::SlotState::Invalid(e) | rho_core::SlotState::Untrusted(e) => {
                Some(Cow::Borrowed(e.as_str()))
            }
            rho_core::SlotState::Configured | rho_core::SlotState::Disabled => None,
        };
        let spec = slot.spec.as_ref();
        Self {
            spec,
            id: Cow::Borrowed(&slot.id),
            source: slot.source.as_str(),
            plugin: slot.plugin.as_deref(),
            transport: spec.map(|s| s.transport.kind()),
            enabled: status != ServerStatus::Disabled,
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
pub(crate) struct PromptEntry {
    /// The slash command a session offers for it (`/mcp:<server>:<prompt>`).
    pub(crate) command: String,
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) arguments: Vec<ArgumentEntry>,
}

/// One argument of a prompt.
#[derive(Debug, Serialize)]
pub(crate) struct ArgumentEntry {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
}

impl PromptEntry {
    pub(crate) fn new(server: &str, prompt: ServerPrompt) -> Self {
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
pub(crate) struct ResourceEntry {
    pub(crate) uri: String,
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) template: bool,
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

#[derive(Serialize)]
pub(crate) struct ListOutput<'a> {
    pub(crate) servers: &'a [ServerEntry<'a>],
}

/// An OAuth server's login state (documented in docs/cli-json.md).
#[derive(Debug, Serialize)]
pub(super) struct AuthEntry {
    /// logged_in | expired | needs_login | address_changed | unbound | unreadable
    state: &'static str,
    /// Seconds until the access token expires, when known.
    expires_in: Option<u64>,
    /// The state as a person reads it.
    pub(super) summary: String,
}

impl AuthEntry {
    pub(crate) fn of(state: &rho_mcp::oauth::AuthState) -> Self {
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
