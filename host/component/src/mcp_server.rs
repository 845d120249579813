//! The resolved MCP server specification every source (config or plugin) is translated into.

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use strum::{IntoStaticStr, VariantArray};

/// How long a server may take to connect, handshake and list its tools (`docs/mcp.md`).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(120);
/// How long one tool call may take (`docs/mcp.md`).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// How much of a tool result (or prompt, or resource text) reaches the model by default.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 64 * 1024;

/// One MCP server, ready for the runtime: identity, origin and transport with every placeholder
/// already expanded and every package path already checked, plus the runtime settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSpec {
    /// The identity shown in inventories: the table key for config servers,
    /// `<plugin>/<server>` for plugin servers.
    pub id: String,
    /// Where the entry came from.
    pub origin: McpServerOrigin,
    /// How to reach the server.
    pub transport: McpTransport,
    /// `false` keeps the entry without starting it.
    pub enabled: bool,
    /// Which of the server's tools are exported.
    pub tools: ToolFilter,
    /// Budget for connection, handshake and discovery.
    pub startup_timeout: Duration,
    /// Budget for one tool call.
    pub call_timeout: Duration,
    /// Cap on what one result contributes to the model's context.
    pub max_output_bytes: u64,
    /// `logging/setLevel` level to request, if any.
    pub log_level: Option<LogLevel>,
    /// Whether the server may ask rho's model for completions.
    pub sampling: SamplingPolicy,
    /// OAuth opt-in (`[oauth]` table) for Streamable HTTP servers.
    pub oauth: Option<OAuthSpec>,
    /// The protocol revision to speak, when it is known (`2025-11-25`, `2026-07-28`, ...):
    /// the lifecycle follows from it (`initialize` up to 2025-11-25, `server/discover` and
    /// per-request metadata from 2026-07-28). `None` detects the era by probing.
    pub protocol_version: Option<String>,
    /// When the server starts: before the session is ready, or on first use.
    pub startup: Startup,
    /// Whether the server's tools may wait behind the tool search (`true`, the default) or are
    /// pinned: always sent to the model (`false`).
    pub defer: bool,
}

impl McpServerSpec {
    /// A spec with every runtime setting at its default (enabled, all tools, 2-minute budgets,
    /// default output cap, no log level, sampling denied, no OAuth, started eagerly, tools
    /// deferrable).
    pub fn new(id: impl Into<String>, origin: McpServerOrigin, transport: McpTransport) -> Self {
        Self {
            id: id.into(),
            origin,
            transport,
            enabled: true,
            tools: ToolFilter::default(),
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            log_level: None,
            sampling: SamplingPolicy::Deny,
            oauth: None,
            protocol_version: None,
            startup: Startup::default(),
            defer: true,
        }
    }

    /// Where it came from, as inventories print it: `config` or `plugin`.
    pub fn source(&self) -> &'static str {
        match self.origin {
            McpServerOrigin::Config => "config",
            McpServerOrigin::Plugin { .. } => "plugin",
        }
    }

    /// The owning plugin, for plugin servers.
    pub fn plugin(&self) -> Option<&str> {
        match &self.origin {
            McpServerOrigin::Plugin { plugin, .. } => Some(plugin),
            McpServerOrigin::Config => None,
        }
    }
}

/// `[tools] allow/deny`: `deny` always wins; no `allow` list means every tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    /// If set, only these tool names are exported.
    pub allow: Option<Vec<String>>,
    /// These tool names are never exported.
    pub deny: Vec<String>,
}

impl ToolFilter {
    /// Whether the tool called `name` (the server's own name) is exported.
    pub fn allows(&self, name: &str) -> bool {
        !self.deny.iter().any(|d| d == name)
            && self
                .allow
                .as_ref()
                .is_none_or(|allow| allow.iter().any(|a| a == name))
    }
}

/// When a server starts (`startup` in `config.toml`, `docs/mcp.md`, "Lazy start").
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
    VariantArray,
    IntoStaticStr,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
#[schemars(
    rename = "startup",
    description = "When rho starts an MCP server: eager (before the session is ready) or lazy (on first use; its tools come from the tool cache when the cache knows them)."
)]
pub enum Startup {
    /// On first use: mounted from the tool cache when it holds the server's tools, started only
    /// when a call needs it.
    Lazy,
    /// Before the session is ready (the default).
    #[default]
    Eager,
}

impl Startup {
    /// Every mode.
    pub const ALL: &'static [Startup] = <Self as strum::VariantArray>::VARIANTS;

    /// The configuration name: `lazy` or `eager`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl std::fmt::Display for Startup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// MCP logging levels (RFC 5424 severities, as MCP names them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// `debug`
    Debug,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

impl LogLevel {
    /// Every level, lowest first.
    pub const ALL: [LogLevel; 8] = [
        Self::Debug,
        Self::Info,
        Self::Notice,
        Self::Warning,
        Self::Error,
        Self::Critical,
        Self::Alert,
        Self::Emergency,
    ];

    /// The protocol's name for the level.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }

    /// Parses a protocol level name.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == text)
    }
}

/// Whether a server may use `sampling/createMessage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SamplingPolicy {
    /// Never declared, every request refused (the default, and the only value for plugins).
    #[default]
    Deny,
    /// Declared; every request asks the user.
    Ask,
}

/// The `[oauth]` opt-in of a Streamable HTTP server. Nothing in it is secret.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthSpec {
    /// A client id issued out of band; `None` means a client metadata document (when the
    /// authorization server supports them and one is configured) or dynamic registration.
    pub client_id: Option<String>,
    /// The ambient variable holding the secret of a confidential pre-registered client (its
    /// value is read at login and never stored in configuration).
    pub client_secret_env: Option<String>,
    /// The `https` URL of rho's client ID metadata document, used as the client id by
    /// authorization servers that advertise support for them.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for; empty means the server's metadata chooses.
    pub scopes: Vec<String>,
}

/// Where a server entry came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpServerOrigin {
    /// An `[mcp.servers.<id>]` table in `config.toml`.
    Config,
    /// An entry of a plugin's `mcp.json`.
    Plugin {
        /// The plugin's manifest name.
        plugin: String,
        /// The server's key in `mcpServers`.
        server: String,
        /// The filesystem-resolved plugin root (`PLUGIN_ROOT`).
        root: PathBuf,
        /// The plugin's data directory (`PLUGIN_DATA`); created only right before a start.
        data_dir: PathBuf,
    },
}

/// The transport of a server and its settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A local process speaking MCP on stdin/stdout.
    Stdio(StdioServerSpec),
    /// A Streamable HTTP endpoint.
    StreamableHttp(HttpServerSpec),
}

impl McpTransport {
    /// Which transport this is, without its settings.
    pub fn kind(&self) -> Transport {
        match self {
            Self::Stdio(_) => Transport::Stdio,
            Self::StreamableHttp(_) => Transport::StreamableHttp,
        }
    }

    /// The transport's name as rho's config spells it (see [`Transport::as_str`]).
    pub fn name(&self) -> &'static str {
        self.kind().as_str()
    }

    /// What the server is, as a person checks it: the command line of a stdio server (each
    /// word quoted as a POSIX shell would need it, so an argument with a space or an empty one
    /// is visible as such), or the URL of an HTTP one. Environment and header values are never
    /// part of it. Not yet terminal-safe: print it through [`crate::terminal_safe`].
    pub fn target(&self) -> String {
        match self {
            Self::Stdio(stdio) => {
                let command = match &stdio.command {
                    StdioCommand::Bare(name) => std::borrow::Cow::Borrowed(name.as_str()),
                    StdioCommand::Path(path) => path.to_string_lossy(),
                };
                std::iter::once(command.as_ref())
                    .chain(stdio.args.iter().map(String::as_str))
                    .map(shell_word)
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            Self::StreamableHttp(http) => http.url.clone(),
        }
    }
}

/// `word` as one POSIX shell word: as it is when it holds only characters no shell treats
/// specially, else in single quotes (a `'` inside written `'\''`); `''` when empty.
pub fn shell_word(word: &str) -> std::borrow::Cow<'_, str> {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./:=@%+,^".contains(c));
    if plain {
        std::borrow::Cow::Borrowed(word)
    } else {
        std::borrow::Cow::Owned(format!("'{}'", word.replace('\'', "'\\''")))
    }
}

/// The kind of an MCP server's transport, with the one spelling rho uses in config.toml and in
/// every output of its own (`--json`, RPC, text tables): `stdio` and `streamable_http`.
///
/// A plugin's `mcp.json` spells the HTTP transport `streamable-http` (the Agent Plugins
/// format); that input spelling is read by the plugin loader and never echoed back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "transport", description = "How rho talks to an MCP server.")]
pub enum Transport {
    /// A local process speaking MCP on stdin/stdout.
    Stdio,
    /// A Streamable HTTP endpoint.
    StreamableHttp,
}

impl Transport {
    /// The transport's one spelling: `stdio` or `streamable_http`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::StreamableHttp => "streamable_http",
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the executable of a stdio server is found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdioCommand {
    /// A bare name, resolved through the executable search path at start.
    Bare(String),
    /// An absolute path (a plugin-relative `./` command, already resolved and contained).
    Path(PathBuf),
}

/// Settings of a stdio server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioServerSpec {
    /// The executable.
    pub command: StdioCommand,
    /// Arguments, passed separately (never through a shell).
    pub args: Vec<String>,
    /// Literal environment entries overlaid on the sanitized base environment, in order.
    pub env: Vec<(String, String)>,
    /// Child variable name → ambient variable name; values are read at start and never shown.
    pub env_from_env: Vec<(String, String)>,
    /// Working directory; plugin servers always have one (the plugin root by default, §7.2.1);
    /// `None` (config servers without `cwd`) means rho's own working directory.
    pub cwd: Option<PathBuf>,
}

/// Settings of a Streamable HTTP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpServerSpec {
    /// The endpoint URL (validated: absolute, http(s), no userinfo or fragment,
    /// HTTPS unless loopback).
    pub url: String,
    /// Literal headers, in order.
    pub headers: Vec<(String, String)>,
    /// Header name → ambient variable name; values are read at connect and never shown.
    pub headers_from_env: Vec<(String, String)>,
}

#[cfg(test)]
mod transport_spelling_tests {
    use super::Transport;

    #[test]
    fn transport_has_one_spelling_in_serde_display_and_as_str() {
        for (t, text) in [
            (Transport::Stdio, "stdio"),
            (Transport::StreamableHttp, "streamable_http"),
        ] {
            assert_eq!(t.as_str(), text);
            assert_eq!(t.to_string(), text);
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(serde_json::from_str::<Transport>(&json).unwrap(), t);
        }
        // The Agent Plugins input spelling is not rho's output spelling.
        assert!(serde_json::from_str::<Transport>("\"streamable-http\"").is_err());
    }

    #[test]
    fn startup_has_one_spelling_and_defaults_to_eager() {
        use super::Startup;
        assert_eq!(Startup::default(), Startup::Eager);
        for (s, text) in [(Startup::Lazy, "lazy"), (Startup::Eager, "eager")] {
            assert_eq!(s.as_str(), text);
            assert_eq!(s.to_string(), text);
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{text}\""));
        }
        assert_eq!(Startup::ALL, [Startup::Lazy, Startup::Eager]);
        assert!(serde_json::from_str::<Startup>("\"Lazy\"").is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(command: &str, args: &[&str]) -> McpTransport {
        McpTransport::Stdio(StdioServerSpec {
            command: StdioCommand::Bare(command.into()),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: vec![("TOKEN".into(), "secret".into())],
            env_from_env: vec![],
            cwd: None,
        })
    }

    #[test]
    fn a_target_quotes_what_a_shell_would_split_or_lose() {
        assert_eq!(
            stdio("npx", &["-y", "@scope/server@1.2", "--port=8080"]).target(),
            "npx -y @scope/server@1.2 --port=8080"
        );
        assert_eq!(
            stdio("uvx", &["two words", "", "it's", "$HOME", "a;b"]).target(),
            r#"uvx 'two words' '' 'it'\''s' '$HOME' 'a;b'"#
        );
        let path = McpTransport::Stdio(StdioServerSpec {
            command: StdioCommand::Path("/opt/my tools/srv".into()),
            args: vec![],
            env: vec![],
            env_from_env: vec![],
            cwd: None,
        });
        assert_eq!(path.target(), "'/opt/my tools/srv'");
        assert!(!stdio("x", &[]).target().contains("secret"));
    }
}
