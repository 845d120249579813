//! The command tree.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// What rho is, in one line: the description of `rho -h`, `rho --help`, `rho help` and the
/// man page (a macro, so the long description can start with it).
macro_rules! about {
    () => {
        "An agent host whose skills, MCP servers and tools are all loadable components."
    };
}

/// The command line of `rho`; its user-facing description is `about!`, not this comment.
#[derive(Debug, Parser)]
#[command(
    name = "rho",
    version,
    about = about!(),
    long_about = concat!(
        about!(),
        "\n\nWithout a command, rho starts the interactive session when stdin and stdout are \
         a terminal, and runs JSON-RPC mode (as `rho rpc`) otherwise. Both take the session \
         flags below: `echo '{...}' | rho --model m`."
    ),
    propagate_version = true
)]
pub struct Cli {
    /// The project directory (default: the working directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Print machine-readable JSON on stdout instead of tables.
    #[arg(long, global = true)]
    pub json: bool,

    /// Use this configuration file instead of `$RHO_HOME/config.toml` (no merge).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,

    /// Session flags for JSON-RPC mode without the `rpc` command.
    #[command(flatten)]
    pub session: RpcArgs,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Manage Agent Plugins packages.
    #[command(subcommand)]
    Plugins(PluginsCommand),
    /// List, show and validate Agent Skills.
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// Inspect MCP servers from config.toml and plugins.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// List and call the tools a session gets (built-in, skills, MCP).
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// Check config, plugins, skills, MCP servers and providers; exit 1 on any error.
    Doctor {
        /// Do not start MCP servers (report configuration only).
        #[arg(long)]
        no_connect: bool,
    },
    /// Run as a headless agent speaking JSON-RPC 2.0 on stdin/stdout.
    Rpc(RpcCommand),
    /// Run one prompt to completion and print the answer (`--json`: the event stream).
    Run(RunArgs),
    /// Print a shell completion script: `source <(rho completions bash)`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page rho(1) in roff (`rho man | man -l -`); `--out` writes them all.
    Man {
        /// Write rho.1 and one page per command (rho-plugins.1, rho-plugins-install.1, ...)
        /// into this directory (created if missing; pages there are replaced).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

/// `rho tools ...`
#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// List every tool of a session: exported name, source, server or plugin, risk level.
    List {
        /// Do not start MCP servers (built-in tools only).
        #[arg(long)]
        no_mcp: bool,
    },
    /// Call one tool by its exported name and print what the model would read.
    Call {
        /// The exported tool name (`read_file`, `mcp__server__tool`, ...).
        name: String,
        /// Arguments as a JSON object (default `{}`).
        args: Option<String>,
    },
}

/// Provider choice, shared by session commands.
#[derive(Debug, Clone, Args)]
pub struct ProviderArgs {
    /// The model: an id, or `provider:id`.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// An OpenAI-compatible endpoint to use instead of configured providers.
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// The environment variable holding the API key for `--endpoint`.
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Allow sending the conversation to a provider outside this machine.
    #[arg(long)]
    pub accept_external_provider: bool,
}

/// The session flags `rho rpc`, `rho run` and plain `rho` share.
#[derive(Debug, Clone, Args)]
pub struct SessionArgs {
    /// Provider choice.
    #[command(flatten)]
    pub provider: ProviderArgs,
    /// Keep the session in memory only (nothing is written).
    #[arg(long, conflicts_with_all = ["continue_session", "session"])]
    pub ephemeral: bool,
    /// Resume the most recent session of this project.
    #[arg(long = "continue", short = 'c', conflicts_with = "session")]
    pub continue_session: bool,
    /// Resume the session saved in this file.
    #[arg(long, value_name = "PATH")]
    pub session: Option<PathBuf>,
    /// Which agent answers prompts (default: `[agent] runtime` in config.toml, else rho).
    #[arg(long, value_enum, value_name = "RUNTIME")]
    pub runtime: Option<Runtime>,
}

/// `--runtime`: the agent that answers a session's prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Runtime {
    /// rho's own agent loop, with rho's tools and MCP servers.
    Rho,
    /// The Claude Code CLI (`claude -p`) with its own tools; rho's MCP servers are not loaded.
    Claude,
}

impl From<Runtime> for rho_core::AgentRuntime {
    fn from(runtime: Runtime) -> Self {
        match runtime {
            Runtime::Rho => Self::Rho,
            Runtime::Claude => Self::Claude,
        }
    }
}

/// `rho rpc`.
#[derive(Debug, Clone, Args)]
pub struct RpcArgs {
    /// The session.
    #[command(flatten)]
    pub session: SessionArgs,
    /// The client answers servers' questions (`question/request`, `questionResponse`):
    /// servers are told rho can show a form. Without it every question is declined.
    #[arg(long)]
    pub accept_questions: bool,
}

/// `rho rpc`: the session flags, and what only a program embedding rho sets.
#[derive(Debug, Clone, Args)]
pub struct RpcCommand {
    /// The session.
    #[command(flatten)]
    pub rpc: RpcArgs,
    /// Take the MCP servers from this JSON file only (`{"mcpServers": {...}}`; neither
    /// config.toml's servers nor any plugin's are read). Strict: any problem in it stops rho.
    #[arg(long, value_name = "FILE")]
    pub mcp_config: Option<PathBuf>,
}

/// `rho run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The prompt (none, or `-`: read from stdin, up to 1 MiB).
    pub prompt: Option<String>,
    /// The session.
    #[command(flatten)]
    pub session: SessionArgs,
    /// What runs without a person to ask: `never` refuses every call that needs approval
    /// (the configured `permission_mode` decides which do), `read` runs only read tools,
    /// `all` runs every call.
    #[arg(long, value_enum, default_value_t = Approve::Never)]
    pub approve: Approve,
}

/// `rho run --approve`: the answer to calls that would ask a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Approve {
    /// Refuse every call that needs approval; the rest runs as `permission_mode` says.
    Never,
    /// Run only read tools (as `permission_mode = "read-only"`); refuse the rest.
    Read,
    /// Run every call (as `permission_mode = "allow-all"`).
    All,
}

/// `rho mcp ...`
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List every configured MCP server (config.toml and plugins); nothing starts without
    /// `--connect`.
    List {
        /// Start the enabled servers and report live status and tools.
        #[arg(long)]
        connect: bool,
    },
    /// Show one server (`<id>` or `<plugin>/<server>`).
    Show {
        /// The server identity.
        id: String,
        /// Start it and report live status and tools.
        #[arg(long)]
        connect: bool,
    },
    /// Log in to an OAuth server (one with an `[oauth]` table): discovery, registration, the
    /// browser login, and the tokens kept in `$RHO_HOME/credentials`.
    Login {
        /// The server identity.
        id: String,
        /// Print the URL and read back the address the browser ends on (for a machine
        /// without a browser, such as an SSH session).
        #[arg(long)]
        no_browser: bool,
        /// Scopes to ask for, comma-separated (default: the `[oauth]` table's, else the
        /// server's choice).
        #[arg(long, value_delimiter = ',')]
        scopes: Vec<String>,
    },
    /// Forget a server's stored OAuth tokens.
    Logout {
        /// The server identity.
        id: String,
    },
    /// Serve rho's tools (MCP servers, WASM tools, built-ins on request) as one MCP server on
    /// stdin/stdout, for another MCP client.
    Serve(ServeArgs),
    /// Connect to a server, call one tool and print the result as the model would read it.
    Call {
        /// The server identity.
        id: String,
        /// The tool: the server's own name or its exported `mcp__...` name.
        tool: String,
        /// Arguments as a JSON object (default `{}`).
        args: Option<String>,
    },
}

/// `rho mcp serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Also serve built-in tools (file tools, `run_command`, ...) up to `--max-risk`.
    #[arg(long)]
    pub builtins: bool,
    /// The highest risk of a built-in tool served.
    #[arg(long, value_enum, default_value_t = RiskArg::Read)]
    pub max_risk: RiskArg,
    /// Serve only these components' tools: MCP server identities or plugin names,
    /// comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "COMPONENTS")]
    pub only: Vec<String>,
    /// Never serve these components' tools (MCP server identities or plugin names).
    #[arg(long, value_delimiter = ',', value_name = "COMPONENTS")]
    pub exclude: Vec<String>,
    /// List only a `tool_search` tool (and what a client's searches found) instead of every
    /// tool: for clients of many tools. Every served tool stays callable by name.
    #[arg(long)]
    pub tool_search: bool,
    /// Serve MCP tools and prompts under their servers' own names (`echo`, `greet`) instead of
    /// rho's (`mcp__<server>__echo`, `<server>:greet`); refused when two would share a name.
    #[arg(long)]
    pub upstream_names: bool,
    /// Serve Streamable HTTP on this address (`127.0.0.1:8765`, `localhost:0` for any free
    /// port; the endpoint is `http://ADDR/mcp`) instead of stdio.
    #[arg(long, value_name = "ADDR", value_parser = socket_addr)]
    pub http: Option<std::net::SocketAddr>,
    /// Let `--http` listen on an address other machines reach; needs `--token-env`.
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
    /// The environment variable holding the bearer token every HTTP client must send
    /// (`Authorization: Bearer <token>`).
    #[arg(long, value_name = "VAR", requires = "http")]
    pub token_env: Option<String>,
}

/// A socket address, `localhost` taken as 127.0.0.1.
fn socket_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    let loopback = text
        .strip_prefix("localhost:")
        .map(|port| format!("127.0.0.1:{port}"));
    loopback
        .as_deref()
        .unwrap_or(text)
        .parse()
        .map_err(|_| format!("`{text}` is not HOST:PORT with an IP address or localhost"))
}

/// A risk level on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RiskArg {
    /// Reads files or state; changes nothing.
    Read,
    /// Changes files or state inside the workspace.
    Write,
    /// May delete, overwrite or reach outside (commands).
    Destructive,
}

impl From<RiskArg> for rho_component::RiskLevel {
    fn from(risk: RiskArg) -> Self {
        match risk {
            RiskArg::Read => Self::Read,
            RiskArg::Write => Self::Write,
            RiskArg::Destructive => Self::Destructive,
        }
    }
}

/// `rho plugins ...`
#[derive(Debug, Subcommand)]
pub enum PluginsCommand {
    /// List every discovered plugin with its scope, origin, status and components.
    List,
    /// Show one plugin in detail (manifest, components, diagnostics, shadowed copies).
    Inspect {
        /// The plugin name.
        name: String,
    },
    /// Validate a plugin directory and copy it into a managed root.
    Install(InstallArgs),
    /// Validate a plugin directory and symlink it into a managed root.
    Link(InstallArgs),
    /// Enable a plugin (in the plugins.toml of its scope).
    Enable {
        /// The plugin name.
        name: String,
    },
    /// Disable a plugin, keeping its files.
    Disable {
        /// The plugin name.
        name: String,
    },
    /// Remove a plugin's directory or link from its managed root (its data directory is kept).
    Remove {
        /// The plugin name.
        name: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Trust a project plugin so its MCP servers and WASM tools may run (records a fingerprint
    /// of what runs and with which capabilities; any later change needs trust again).
    Trust {
        /// The plugin name.
        name: String,
    },
    /// Withdraw trust from a project plugin: its MCP servers and WASM tools no longer run.
    Untrust {
        /// The plugin name.
        name: String,
    },
    /// Create a new plugin with one WASM tool component written with rho-plugin-sdk.
    New {
        /// The new plugin's directory (its name is the plugin name).
        dir: PathBuf,
        /// The tool's name (`[a-z][a-z0-9_]*`).
        #[arg(long)]
        tool: String,
        /// Depend on the rho-plugin-sdk crate in this directory (default: the SDK this rho
        /// carries, written to `$RHO_HOME/sdk/<version>-<hash>/`).
        #[arg(long, value_name = "DIR")]
        sdk_path: Option<PathBuf>,
    },
    /// Validate a plugin directory without installing it; exit 1 on any error.
    Validate {
        /// The plugin directory.
        path: PathBuf,
    },
}

/// Arguments shared by install and link.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The plugin directory.
    pub path: PathBuf,
    /// Which managed root to use.
    #[arg(long, value_enum, default_value_t = ScopeArg::User)]
    pub scope: ScopeArg,
    /// Replace an existing package at the destination.
    #[arg(long)]
    pub force: bool,
}

/// `--scope`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ScopeArg {
    /// `~/.agents/plugins`.
    User,
    /// `<repository>/.agents/plugins`.
    Project,
}

/// `rho skills ...`
#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// List every skill from every source, with precedence applied.
    List,
    /// Show one skill's metadata, instructions and bundled files.
    Show {
        /// The skill name.
        name: String,
    },
    /// Validate a skill directory (or its SKILL.md); exit 1 when invalid.
    Validate {
        /// The skill directory.
        dir: PathBuf,
    },
}

impl SessionArgs {
    /// Whether any session flag was given.
    pub fn is_set(&self) -> bool {
        let p = &self.provider;
        p.model.is_some()
            || p.endpoint.is_some()
            || p.api_key_env.is_some()
            || p.accept_external_provider
            || self.ephemeral
            || self.continue_session
            || self.session.is_some()
            || self.runtime.is_some()
    }
}
