//! `config.toml`: the raw `*Toml` types as the file spells them, strict parsing, and resolution
//! into the shared [`McpServerSpec`].
//!
//! The file is rho's own, so it is strict: an unknown key is an error naming the file, the key
//! and the line. Errors are isolated as narrowly as the MCP document asks: a syntax error or an
//! unknown top-level key makes the whole file unusable, while a bad `[mcp.servers.<id>]` entry
//! disables only that server. Messages name keys and positions and never quote values (a
//! literal header may hold a credential).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rho_component::endpoint::{check_headers, check_remote_url};
use rho_component::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_STARTUP_TIMEOUT, HttpServerSpec,
    LogLevel, McpServerOrigin, McpServerSpec, McpTransport, OAuthSpec, SamplingPolicy, Startup,
    StdioCommand, StdioServerSpec, ToolFilter, Transport, valid_env_name,
};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::ConfigError;
use crate::agent::{
    AgentSettings, AgentToml, ConfigProvider, ProvidersToml, resolve_agent, resolve_provider,
};

/// `config.toml` larger than this is refused.
pub const CONFIG_MAX_BYTES: u64 = 1024 * 1024;

/// The longest timeout any key of the file may set, in seconds (a day).
pub const MAX_TIMEOUT_SEC: u32 = 86_400;

/// The parsed configuration of one run.
#[derive(Debug, Clone, Default)]
pub struct RhoConfig {
    /// The file read, if one existed.
    pub path: Option<PathBuf>,
    /// `[mcp.servers.*]` entries in file order of their keys (sorted by identity).
    pub mcp_servers: Vec<ConfigServer>,
    /// `[agent]` (defaults when absent).
    pub agent: AgentSettings,
    /// `[providers.*]` entries, sorted by identity.
    pub providers: Vec<ConfigProvider>,
    /// `[mcp] startup`: when servers start whose own entry does not say (config servers have it
    /// applied already; plugin servers get it when the registry collects them).
    pub mcp_startup: Startup,
    /// `[mcp.plugin_servers."<plugin>/<server>"]`: settings for servers plugins declare, by
    /// identity (sorted).
    pub plugin_servers: Vec<PluginServerSettings>,
}

impl RhoConfig {
    /// The settings `config.toml` gives the plugin server `id` (`<plugin>/<server>`).
    pub fn plugin_server(&self, id: &str) -> Option<&PluginServerSettings> {
        self.plugin_servers
            .binary_search_by(|s| s.id.as_str().cmp(id))
            .ok()
            .and_then(|i| self.plugin_servers.get(i))
    }

    /// Applies what `config.toml` says about the plugin server `spec` (which a plugin's
    /// `mcp.json` cannot say: the Agent Plugins format closes its entries): its
    /// `[mcp.plugin_servers."<id>"]` table, else the `[mcp] startup` default.
    pub fn apply_to_plugin_server(&self, spec: &mut McpServerSpec) {
        let settings = self.plugin_server(&spec.id);
        spec.startup = settings.and_then(|s| s.startup).unwrap_or(self.mcp_startup);
        if let Some(defer) = settings.and_then(|s| s.defer) {
            spec.defer = defer;
        }
    }

    /// The valid, enabled MCP servers.
    pub fn enabled_servers(&self) -> impl Iterator<Item = &McpServerSpec> {
        self.mcp_servers
            .iter()
            .filter_map(|s| s.spec.as_ref().ok())
            .filter(|s| s.enabled)
    }
}

/// One `[mcp.plugin_servers."<plugin>/<server>"]` table: what the user's configuration says
/// about a server a plugin declares. An entry no loaded plugin declares is unused (it may be a
/// project's plugin, absent elsewhere).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginServerSettings {
    /// The plugin server's identity, `<plugin>/<server>`.
    pub id: String,
    /// The line of the entry (1-based).
    pub line: usize,
    /// `startup`, when set (else `[mcp] startup` applies).
    pub startup: Option<Startup>,
    /// `defer`, when set.
    pub defer: Option<bool>,
}

/// One `[mcp.servers.<id>]` entry: its resolved spec, or why it cannot be used.
#[derive(Debug, Clone)]
pub struct ConfigServer {
    /// The table key.
    pub id: String,
    /// The line of the entry in the file (1-based).
    pub line: usize,
    /// The resolved server, or the problems with the entry (each naming its key).
    pub spec: Result<McpServerSpec, Vec<String>>,
}

// ---------- raw types: exactly what the file may say ----------
//
// These types are also the source of `schemas/rho-config.schema.json` (`schema.rs`): their doc
// comments are the schema's descriptions, so they speak to a user editing the file.

/// rho's configuration file (`$RHO_HOME/config.toml`, or `--config <file>`). Strict: unknown keys are errors. Rules beyond JSON Schema (URL rules, header names, which keys each transport takes) are enforced by rho.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigToml {
    /// MCP servers.
    #[serde(default)]
    mcp: Option<McpToml>,
    /// The session defaults: model, provider, permission mode, iteration budget, extra file roots.
    #[serde(default)]
    agent: Option<AgentToml>,
    /// OpenAI-compatible chat-completions endpoints by identity (ASCII letters, digits, '-', '_').
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::identity_map::<crate::agent::ProviderToml>")]
    providers: Option<ProvidersToml>,
}

/// `[mcp]`: MCP servers.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "mcp")]
struct McpToml {
    /// When servers start whose entry does not set startup (plugin servers included): eager (before the session is ready) or lazy (on first use).
    #[serde(default)]
    #[schemars(
        schema_with = "crate::schema::startup_schema",
        extend("default" = Startup::default().as_str())
    )]
    startup: Option<toml::Spanned<String>>,
    /// MCP servers by identity (ASCII letters, digits, '-', '_').
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::identity_map::<McpServerToml>")]
    servers: BTreeMap<String, toml::Spanned<toml::Table>>,
    /// Settings for MCP servers that plugins declare, by identity "<plugin>/<server>" (a plugin's mcp.json cannot carry them).
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::plugin_server_map")]
    plugin_servers: BTreeMap<String, toml::Spanned<toml::Table>>,
}

/// `[mcp.plugin_servers."<plugin>/<server>"]`: what the user decides about a plugin's server.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "plugin_server")]
pub(crate) struct PluginServerToml {
    /// When the server starts: eager (before the session is ready) or lazy (on first use); [mcp] startup when absent.
    startup: Option<Startup>,
    /// false pins the server's tools: always sent to the model, never deferred behind the tool search.
    #[schemars(extend("default" = true))]
    defer: Option<bool>,
}

/// One MCP server, `[mcp.servers.<id>]`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "server")]
pub struct McpServerToml {
    /// Inferred from command (stdio) or url (streamable_http) when omitted.
    transport: Option<Transport>,
    /// Whether rho starts the server.
    #[schemars(extend("default" = true))]
    enabled: Option<bool>,
    /// stdio: a bare name found on PATH, or a path (relative paths anchor at the config file's directory). Never run through a shell.
    #[schemars(length(min = 1))]
    command: Option<String>,
    /// stdio: the arguments, passed as they are.
    args: Option<Vec<String>>,
    /// stdio: working directory (relative to the config file's directory).
    cwd: Option<PathBuf>,
    /// stdio: literal variables added to the sanitized base environment.
    env: Option<BTreeMap<String, String>>,
    /// stdio: child variable name -> ambient variable name (for secrets).
    env_from_env: Option<BTreeMap<String, String>>,
    /// streamable_http: https URL (plain http only to localhost or loopback addresses).
    url: Option<String>,
    /// streamable_http: literal header values.
    headers: Option<BTreeMap<String, String>>,
    /// streamable_http: header name -> ambient variable holding the whole value; wins over headers.
    headers_from_env: Option<BTreeMap<String, String>>,
    /// Which of the server's tools the session gets.
    tools: Option<ToolsToml>,
    /// The least severe MCP log message the server should send.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::log_level_schema")]
    log_level: Option<String>,
    /// Whether the server may ask the session's model for a completion (`ask`: the user decides each time).
    #[schemars(extend("default" = "deny"))]
    sampling: Option<SamplingToml>,
    /// streamable_http: log in with OAuth 2.1 (an empty table asks for full discovery).
    oauth: Option<OAuthToml>,
    /// Budget for the server to start and list its tools, in seconds.
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = MAX_TIMEOUT_SEC, "default" = DEFAULT_STARTUP_TIMEOUT.as_secs()))]
    startup_timeout_sec: Option<f64>,
    /// Budget for one tool call, in seconds.
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = MAX_TIMEOUT_SEC, "default" = DEFAULT_CALL_TIMEOUT.as_secs()))]
    call_timeout_sec: Option<f64>,
    /// The most bytes of one tool result the model sees (the rest is cut and said so).
    #[schemars(range(min = 1), extend("default" = DEFAULT_MAX_OUTPUT_BYTES))]
    max_output_bytes: Option<u64>,
    /// When the server starts: eager (before the session is ready) or lazy (on first use); [mcp] startup when absent.
    startup: Option<Startup>,
    /// false pins the server's tools: always sent to the model, never deferred behind the tool search.
    #[schemars(extend("default" = true))]
    defer: Option<bool>,
}

/// `tools = { allow = [...], deny = [...] }`: names as the server spells them.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "tools")]
struct ToolsToml {
    /// Only these tools (all when absent).
    allow: Option<Vec<String>>,
    /// Never these tools (wins over allow).
    #[serde(default)]
    deny: Vec<String>,
}

/// Whether a server's sampling requests are refused or put to the user.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "sampling")]
enum SamplingToml {
    Deny,
    Ask,
}

/// A pre-registered OAuth client, or a client ID metadata document.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "oauth")]
struct OAuthToml {
    /// The client id registered with the authorization server.
    client_id: Option<String>,
    /// The environment variable holding the client secret (never the secret itself).
    client_secret_env: Option<String>,
    /// An https URL of the client's metadata document (the URL is the client id).
    client_metadata_url: Option<String>,
    /// Scopes to ask for (when empty: the server's challenge, else its metadata, chooses).
    #[serde(default)]
    scopes: Vec<String>,
}

/// Whether `url` can name a client ID metadata document: `https`, a host, and a path other
/// than `/` (the document's URL is the client id, so it must be specific to the client).
fn is_client_metadata_url(url: &str) -> bool {
    url::Url::parse(url)
        .is_ok_and(|u| u.scheme() == "https" && u.host_str().is_some() && u.path() != "/")
}

// ---------- loading ----------

/// Where the configuration comes from for one run.
#[derive(Debug, Clone)]
pub enum ConfigSource {
    /// `$RHO_HOME/config.toml`; a missing file is an empty configuration.
    Default(PathBuf),
    /// `--config <file>`: replaces the default (no merge); a missing file is an error.
    Explicit(PathBuf),
}

/// Reads and resolves the configuration.
pub fn load_config(source: &ConfigSource) -> Result<RhoConfig, ConfigError> {
    let (path, required) = match source {
        ConfigSource::Default(path) => (path, false),
        ConfigSource::Explicit(path) => (path, true),
    };
    // Regular files only, capped, never a blocking open: `--config` may name a FIFO or a
    // link to `/dev/zero`.
    let bytes = match rho_component::read_regular(path, CONFIG_MAX_BYTES) {
        Ok(bytes) => bytes,
        Err(e) if e.is_not_found() && !required => return Ok(RhoConfig::default()),
        Err(e) => return Err(ConfigError::Read(e)),
    };
    let text = String::from_utf8(bytes).map_err(|_| ConfigError::Invalid {
        path: path.clone(),
        message: "not valid UTF-8".into(),
    })?;
    parse_config(&text, path)
}

/// Parses configuration text; `path` names the file in errors and anchors relative paths.
pub fn parse_config(text: &str, path: &Path) -> Result<RhoConfig, ConfigError> {
    let skeleton: ConfigToml = toml::from_str(text).map_err(|e| ConfigError::Invalid {
        path: path.to_path_buf(),
        message: toml_message(text, &e),
    })?;
    let invalid = |message| ConfigError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mcp = skeleton.mcp.unwrap_or_default();
    let mcp_startup = match &mcp.startup {
        None => Startup::default(),
        Some(name) => parse_startup(name.get_ref()).ok_or_else(|| {
            invalid(format!(
                "{}mcp.startup: {}",
                position(text, name.span().start),
                startup_expected()
            ))
        })?,
    };
    let mut servers = Vec::new();
    for (id, table) in mcp.servers {
        let line = line_of(text, table.span().start);
        let spec = resolve_server("mcp.servers", &id, table.into_inner(), &base, mcp_startup);
        servers.push(ConfigServer { id, line, spec });
    }
    let mut plugin_servers = Vec::new();
    for (id, table) in mcp.plugin_servers {
        let start = table.span().start;
        let settings = resolve_plugin_server(&id, line_of(text, start), table.into_inner())
            .map_err(|problem| invalid(format!("{}{problem}", position(text, start))))?;
        plugin_servers.push(settings);
    }
    let agent = resolve_agent(skeleton.agent.unwrap_or_default(), &base, text).map_err(invalid)?;
    let mut providers = Vec::new();
    for (id, table) in skeleton.providers.unwrap_or_default() {
        let line = line_of(text, table.span().start);
        let settings = resolve_provider(&id, table.into_inner());
        providers.push(ConfigProvider { id, line, settings });
    }
    Ok(RhoConfig {
        path: Some(path.to_path_buf()),
        mcp_servers: servers,
        agent,
        providers,
        mcp_startup,
        plugin_servers,
    })
}

/// `line L, column C: message`, never the offending line itself.
fn toml_message(text: &str, e: &toml::de::Error) -> String {
    let at = e.span().map(|span| position(text, span.start));
    format!("{}{}", at.unwrap_or_default(), e.message().trim_end())
}

/// `line L, column C: `: where byte `offset` of `text` is, as file-level errors begin.
pub(crate) fn position(text: &str, offset: usize) -> String {
    let before = text.get(..offset.min(text.len())).unwrap_or_default();
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("line {}, column {column}: ", line_of(text, offset))
}

/// The start mode `name` names.
fn parse_startup(name: &str) -> Option<Startup> {
    Startup::ALL.iter().copied().find(|s| s.as_str() == name)
}

/// What a `startup` key takes.
fn startup_expected() -> String {
    let known: Vec<&str> = Startup::ALL.iter().map(|s| s.as_str()).collect();
    format!("must be one of {}", known.join(", "))
}

/// Whether `id` has the shape of a plugin server's identity: `<plugin>/<server>`, the plugin
/// part a plugin name (ASCII lower-case letters, digits, '.' and '-', at most 64), the server
/// part the non-empty key of its `mcp.json` entry.
fn valid_plugin_server_id(id: &str) -> bool {
    let Some((plugin, server)) = id.split_once('/') else {
        return false;
    };
    !plugin.is_empty()
        && plugin.len() <= 64
        && plugin
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
        && !server.is_empty()
}

/// Resolves one `[mcp.plugin_servers."<id>"]` table (at `line`). Problems are file-level, like
/// `[agent]`'s: the table holds two keys, and a typo in it must not go unnoticed.
fn resolve_plugin_server(
    id: &str,
    line: usize,
    table: toml::Table,
) -> Result<PluginServerSettings, String> {
    if !valid_plugin_server_id(id) {
        return Err(format!(
            "mcp.plugin_servers: {id:?} is not a plugin server's identity: it must be \
             \"<plugin>/<server>\" (the plugin's name, '/', the server's key in its mcp.json); \
             config.toml's own servers are set in [mcp.servers.<id>]"
        ));
    }
    let raw: PluginServerToml = serde_path_to_error::deserialize(toml::Value::Table(table))
        .map_err(|e| {
            let inner = e.path().to_string();
            let at = if inner == "." {
                format!("mcp.plugin_servers.{id:?}")
            } else {
                format!("mcp.plugin_servers.{id:?}.{inner}")
            };
            format!("{at}: {}", e.inner().message().trim_end())
        })?;
    Ok(PluginServerSettings {
        id: id.to_owned(),
        line,
        startup: raw.startup,
        defer: raw.defer,
    })
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Server identities: ASCII letters, digits, `-` and `_`.
pub fn valid_server_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Resolves one server's table (`[mcp.servers.<id>]`, or an entry of an `--mcp-config` file,
/// whose keys are the same): every problem names its key under `prefix` (`mcp.servers`,
/// `mcpServers`). Relative paths anchor at `base`.
pub(crate) fn resolve_server(
    prefix: &str,
    id: &str,
    table: toml::Table,
    base: &Path,
    default_startup: Startup,
) -> Result<McpServerSpec, Vec<String>> {
    let key = |k: &str| format!("{prefix}.{id}.{k}");
    if !valid_server_id(id) {
        return Err(vec![format!(
            "server identity {id:?} may contain only ASCII letters, digits, '-' and '_' \
             (at most 64)"
        )]);
    }
    let raw: McpServerToml =
        serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
            let inner = e.path().to_string();
            let at = if inner == "." {
                format!("{prefix}.{id}")
            } else {
                key(&inner)
            };
            vec![format!("{at}: {}", e.inner().message().trim_end())]
        })?;
    let mut problems = Vec::new();
    let transport = match (raw.transport, &raw.command, &raw.url) {
        (Some(t), _, _) => t,
        (None, Some(_), None) => Transport::Stdio,
        (None, None, Some(_)) => Transport::StreamableHttp,
        (None, Some(_), Some(_)) => {
            return Err(vec![format!(
                "{}: both command and url are set; set transport to choose",
                key("transport")
            )]);
        }
        (None, None, None) => {
            return Err(vec![format!(
                "{prefix}.{id}: needs command ({}) or url ({})",
                Transport::Stdio,
                Transport::StreamableHttp
            )]);
        }
    };
    let names = |map: &Option<BTreeMap<String, String>>, k: &str, problems: &mut Vec<String>| {
        let map = map.clone().unwrap_or_default();
        for (name, from) in &map {
            if !valid_env_name(name) {
                problems.push(format!("{}: {name:?} is not a valid variable name", key(k)));
            }
            // The value is never quoted: a secret pasted where a variable name belongs must
            // not end up in a message.
            if k.ends_with("_from_env") && !valid_env_name(from) {
                problems.push(format!(
                    "{}.{name}: the value must be the name of an environment variable \
                     (ASCII letters, digits and '_'), not the value itself",
                    key(k)
                ));
            }
        }
        map.into_iter().collect::<Vec<_>>()
    };
    let forbid = |set: bool, k: &str, problems: &mut Vec<String>, transport: Transport| {
        if set {
            problems.push(format!("{}: not used by the {transport} transport", key(k)));
        }
    };
    let spec_transport = match transport {
        Transport::Stdio => {
            forbid(raw.url.is_some(), "url", &mut problems, transport);
            forbid(raw.headers.is_some(), "headers", &mut problems, transport);
            forbid(
                raw.headers_from_env.is_some(),
                "headers_from_env",
                &mut problems,
                transport,
            );
            forbid(raw.oauth.is_some(), "oauth", &mut problems, transport);
            let command = match raw.command.as_deref() {
                None | Some("") => {
                    problems.push(format!(
                        "{}: required for the {transport} transport",
                        key("command")
                    ));
                    None
                }
                Some(c) if c.contains('\0') => {
                    problems.push(format!("{}: contains a NUL character", key("command")));
                    None
                }
                // A bare name is looked up on PATH at start; anything with a slash is a path,
                // relative to the config file's directory.
                Some(c) if !c.contains('/') => Some(StdioCommand::Bare(c.to_owned())),
                Some(c) => Some(StdioCommand::Path(base.join(c))),
            };
            let args = raw.args.unwrap_or_default();
            if args.iter().any(|a| a.contains('\0')) {
                problems.push(format!(
                    "{}: an argument contains a NUL character",
                    key("args")
                ));
            }
            let env = names(&raw.env, "env", &mut problems);
            let env_from_env = names(&raw.env_from_env, "env_from_env", &mut problems);
            let cwd = raw.cwd.map(|c| base.join(c));
            command.map(|command| {
                McpTransport::Stdio(StdioServerSpec {
                    command,
                    args,
                    env,
                    env_from_env,
                    cwd,
                })
            })
        }
        Transport::StreamableHttp => {
            forbid(raw.command.is_some(), "command", &mut problems, transport);
            forbid(raw.args.is_some(), "args", &mut problems, transport);
            forbid(raw.cwd.is_some(), "cwd", &mut problems, transport);
            forbid(raw.env.is_some(), "env", &mut problems, transport);
            forbid(
                raw.env_from_env.is_some(),
                "env_from_env",
                &mut problems,
                transport,
            );
            let url = match raw.url {
                None => {
                    problems.push(format!(
                        "{}: required for the {transport} transport",
                        key("url")
                    ));
                    None
                }
                Some(url) => match check_remote_url(&url) {
                    Ok(()) => Some(url),
                    Err(e) => {
                        problems.push(format!("{}: {e}", key("url")));
                        None
                    }
                },
            };
            let headers: Vec<(String, String)> =
                raw.headers.unwrap_or_default().into_iter().collect();
            problems.extend(
                check_headers(&headers)
                    .into_iter()
                    .map(|p| format!("{}: {p}", key("headers"))),
            );
            let from_env = names(&raw.headers_from_env, "headers_from_env", &mut Vec::new());
            // Header names from the environment follow the header-name rules, not env rules.
            let named: Vec<(String, String)> = from_env
                .iter()
                .map(|(h, _)| (h.clone(), "x".to_owned()))
                .collect();
            problems.extend(
                check_headers(&named)
                    .into_iter()
                    .map(|p| format!("{}: {p}", key("headers_from_env"))),
            );
            for (header, var) in &from_env {
                if !valid_env_name(var) {
                    problems.push(format!(
                        "{}.{header}: the value must be the name of an environment variable \
                         (ASCII letters, digits and '_'), not the header value itself",
                        key("headers_from_env")
                    ));
                }
            }
            url.map(|url| {
                McpTransport::StreamableHttp(HttpServerSpec {
                    url,
                    headers,
                    headers_from_env: from_env,
                })
            })
        }
    };
    let mut spec = match spec_transport {
        Some(transport) if problems.is_empty() => {
            McpServerSpec::new(id, McpServerOrigin::Config, transport)
        }
        _ => return Err(problems),
    };
    spec.enabled = raw.enabled.unwrap_or(true);
    spec.startup = raw.startup.unwrap_or(default_startup);
    spec.defer = raw.defer.unwrap_or(true);
    if let Some(tools) = raw.tools {
        spec.tools = ToolFilter {
            allow: tools.allow,
            deny: tools.deny,
        };
    }
    if let Some(level) = raw.log_level {
        match LogLevel::parse(&level) {
            Some(level) => spec.log_level = Some(level),
            None => problems.push(format!(
                "{}: {level:?} is not one of debug, info, notice, warning, error, critical, \
                 alert, emergency",
                key("log_level")
            )),
        }
    }
    spec.sampling = match raw.sampling {
        Some(SamplingToml::Ask) => SamplingPolicy::Ask,
        Some(SamplingToml::Deny) | None => SamplingPolicy::Deny,
    };
    if let Some(o) = raw.oauth {
        if o.client_secret_env.is_some() && o.client_id.is_none() {
            problems.push(format!(
                "{}: a client secret belongs to a pre-registered client: set `client_id` too",
                key("oauth.client_secret_env")
            ));
        }
        if let Some(url) = &o.client_metadata_url
            && !is_client_metadata_url(url)
        {
            problems.push(format!(
                "{}: {url:?} is not an https URL with a path (a client metadata document is \
                 served over HTTPS at a path of its own)",
                key("oauth.client_metadata_url")
            ));
        }
        spec.oauth = Some(OAuthSpec {
            client_id: o.client_id,
            client_secret_env: o.client_secret_env,
            client_metadata_url: o.client_metadata_url,
            scopes: o.scopes,
        });
    }
    for (k, value, slot) in [
        (
            "startup_timeout_sec",
            raw.startup_timeout_sec,
            &mut spec.startup_timeout,
        ),
        (
            "call_timeout_sec",
            raw.call_timeout_sec,
            &mut spec.call_timeout,
        ),
    ] {
        if let Some(secs) = value {
            match Duration::try_from_secs_f64(secs) {
                Ok(d) if secs > 0.0 && secs <= f64::from(MAX_TIMEOUT_SEC) => *slot = d,
                _ => problems.push(format!(
                    "{}: must be more than 0 and at most {MAX_TIMEOUT_SEC} seconds",
                    key(k)
                )),
            }
        }
    }
    if let Some(max) = raw.max_output_bytes {
        if max == 0 {
            problems.push(format!("{}: must be more than 0", key("max_output_bytes")));
        }
        spec.max_output_bytes = max;
    }
    if problems.is_empty() {
        Ok(spec)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests;
