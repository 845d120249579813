//! Errors of the MCP runtime; every variant names the server (and tool, prompt or resource)
//! involved.

/// Why a server could not be started, connected, listed or called.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    /// An `env_from_env` / `headers_from_env` variable is not set (named, never its value).
    #[error("server {server}: environment variable {variable} is not set")]
    MissingEnv {
        /// The server identity.
        server: String,
        /// The ambient variable name.
        variable: String,
    },
    /// The executable could not be started.
    #[error("server {server}: cannot start {command}: {message}")]
    Spawn {
        /// The server identity.
        server: String,
        /// The command as configured.
        command: String,
        /// The operating system's reason.
        message: String,
    },
    /// `PLUGIN_DATA` could not be prepared.
    #[error("server {server}: cannot prepare its data directory {path}: {message}")]
    DataDir {
        /// The server identity.
        server: String,
        /// The directory.
        path: String,
        /// Why.
        message: String,
    },
    /// Connecting, the handshake or discovery failed.
    #[error("server {server}: {message}")]
    Connect {
        /// The server identity.
        server: String,
        /// What failed.
        message: String,
    },
    /// The startup budget ran out.
    #[error("server {server}: no answer within the {seconds:.1} s startup budget")]
    StartupTimeout {
        /// The server identity.
        server: String,
        /// The budget.
        seconds: f64,
    },
    /// A tool call failed at the transport or protocol level.
    #[error("server {server}: tool {tool}: {message}")]
    Call {
        /// The server identity.
        server: String,
        /// The server's tool name.
        tool: String,
        /// What failed.
        message: String,
    },
    /// The tool runs only as an MCP task (`execution.taskSupport: "required"`), which rho does
    /// not support yet: the call is refused without being sent.
    #[error(
        "MCP tool `{tool}` of server `{server}` needs task support (execution.taskSupport = \"required\"), which rho does not have yet; the call was not sent"
    )]
    NeedsTasks {
        /// The server identity.
        server: String,
        /// The server's tool name.
        tool: String,
    },
    /// The session failed under a tool call (the process exited, the connection broke), so
    /// no answer came; the next call starts the server again.
    #[error("server {server}: tool {tool}: the session failed ({message})")]
    Lost {
        /// The server identity.
        server: String,
        /// The server's tool name.
        tool: String,
        /// What failed.
        message: String,
        /// Whether the server may have received the call (false: it provably did not, so
        /// sending it again is safe).
        delivered: bool,
    },
    /// The call budget ran out (the server was sent a cancellation).
    #[error("server {server}: tool {tool}: no result within the {seconds:.1} s call budget")]
    CallTimeout {
        /// The server identity.
        server: String,
        /// The server's tool name.
        tool: String,
        /// The budget.
        seconds: f64,
    },
    /// A prompt could not be expanded (`prompts/get`).
    #[error("server {server}: prompt {prompt}: {message}")]
    Prompt {
        /// The server identity.
        server: String,
        /// The server's prompt name.
        prompt: String,
        /// What failed.
        message: String,
    },
    /// A resource could not be read (`resources/read`).
    #[error("server {server}: resource {uri}: {message}")]
    Resource {
        /// The server identity.
        server: String,
        /// The URI asked for.
        uri: String,
        /// What failed.
        message: String,
    },
    /// The name does not lead to a tool.
    #[error("no tool named {0}")]
    UnknownTool(String),
}
