//! The resolved MCP server specification every source (config or plugin) is translated into.

use std::path::PathBuf;

/// One MCP server, ready for the runtime: identity, origin and transport with every placeholder
/// already expanded and every package path already checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSpec {
    /// The identity shown in inventories: the table key for config servers,
    /// `<plugin>/<server>` for plugin servers.
    pub id: String,
    /// Where the entry came from.
    pub origin: McpServerOrigin,
    /// How to reach the server.
    pub transport: McpTransport,
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
    /// The transport's name as rho's config spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Stdio(_) => "stdio",
            Self::StreamableHttp(_) => "streamable_http",
        }
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
