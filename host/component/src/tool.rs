//! Tools: what a tool declares ([`ToolSpec`]), how much it may change ([`RiskLevel`]), what a
//! call returns ([`ToolOutput`]), and the [`Tool`] trait every tool source implements (built-in
//! tools, MCP tools, WASM tools), so the registry and the session engine treat them alike.

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::cancel::CancelSignal;
use crate::question::Asker;

/// How much a tool may change. The approval gate asks according to this level and the
/// permission mode; nothing a server or a component says about itself can lower it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum RiskLevel {
    /// Reads files or state; changes nothing.
    Read,
    /// Changes files or state inside the workspace.
    Write,
    /// May delete, overwrite or reach outside: commands, MCP tools whose server claims
    /// nothing, anything rho cannot see into.
    Destructive,
}

impl RiskLevel {
    /// The wire name: `read`, `write` or `destructive`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Destructive => "destructive",
        }
    }
}

impl fmt::Display for RiskLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a tool comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum ToolOrigin {
    /// Compiled into rho.
    Builtin,
    /// Served by an MCP server.
    Mcp {
        /// The server identity: the `config.toml` key, or `<plugin>/<server>`.
        server: String,
        /// The plugin that declares the server, for plugin servers.
        #[serde(skip_serializing_if = "Option::is_none")]
        plugin: Option<String>,
        /// The tool's own name on that server (sent back unchanged on calls).
        tool: String,
    },
    /// Exported by a WASM component shipped in a plugin.
    Wasm {
        /// The plugin that ships the component.
        plugin: String,
        /// The component's name inside the plugin.
        component: String,
        /// The tool's own name in the component.
        tool: String,
    },
}

impl ToolOrigin {
    /// `builtin`, `mcp` or `wasm`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Builtin => "builtin",
            Self::Mcp { .. } => "mcp",
            Self::Wasm { .. } => "wasm",
        }
    }

    /// Who a person reads before the tool's own name: the MCP server identity, or the plugin
    /// of a WASM tool; `None` for built-in tools (built-in WASM components included).
    pub fn owner(&self) -> Option<&str> {
        match self {
            Self::Builtin => None,
            Self::Mcp { server, .. } => Some(server),
            Self::Wasm { plugin, .. } => Some(plugin),
        }
    }
}

/// What a tool declares to the model and to the user.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    /// The exported name the model calls (`^[A-Za-z0-9_-]{1,64}$`).
    pub name: String,
    /// A display title, when declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The description the model reads.
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub input_schema: Value,
    /// JSON Schema of structured results, when declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The risk level the approval gate uses.
    pub risk: RiskLevel,
    /// Where the tool comes from.
    pub origin: ToolOrigin,
}

impl ToolSpec {
    /// The tool's own name: the server's name for an MCP tool, the component's for a WASM
    /// tool, the exported name itself for a built-in tool.
    pub fn own_name(&self) -> &str {
        match &self.origin {
            ToolOrigin::Builtin => &self.name,
            ToolOrigin::Mcp { tool, .. } | ToolOrigin::Wasm { tool, .. } => tool,
        }
    }

    /// The name a person reads (`everything › get-env`, `data-tools › convert`, `read_file`):
    /// [`crate::naming::display_name`] of its owner and own name.
    pub fn display_name(&self) -> String {
        crate::naming::display_name(self.origin.owner(), self.own_name())
    }

    /// The exported name, when it differs from [`ToolSpec::display_name`] and a person is
    /// shown it second (every MCP and plugin WASM tool); `None` for a built-in tool, whose
    /// exported name is its own.
    pub fn exported_beside(&self) -> Option<&str> {
        self.origin.owner().map(|_| self.name.as_str())
    }
}

/// How a tool description carries each of its server's annotations, one per line
/// (`Server hint: read-only (readOnlyHint: true)`): written by the MCP runtime, shown as
/// notices on the tool's cards. Hints come from a server rho does not control: they inform and
/// never relax an approval.
pub const SERVER_HINT_PREFIX: &str = "Server hint: ";

/// The server hints in a tool description, without their prefix.
pub fn server_hints(description: &str) -> impl Iterator<Item = &str> {
    description
        .lines()
        .filter_map(|line| line.strip_prefix(SERVER_HINT_PREFIX))
}

/// The value the server gave annotation `key` (`readOnlyHint`), from the hint lines of a tool
/// description (each ends with `(<key>: <true|false>)`). What a server says, never a level.
pub fn server_hint(description: &str, key: &str) -> Option<bool> {
    server_hints(description).find_map(|hint| {
        let (_, said) = hint.rsplit_once(" (")?;
        said.strip_suffix(')')?
            .strip_prefix(key)?
            .strip_prefix(": ")?
            .parse()
            .ok()
    })
}

/// Writes an image as `{mime_type, bytes}`: what it is and how large its encoded data is.
fn image_summary<S: serde::Serializer>(
    image: &Option<ToolImage>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Summary<'a> {
        mime_type: &'a str,
        bytes: usize,
    }
    image
        .as_ref()
        .map(|i| Summary {
            mime_type: &i.mime_type,
            bytes: i.data.len(),
        })
        .serialize(serializer)
}

/// An image kept from a result for a model that accepts images.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolImage {
    /// The MIME type.
    pub mime_type: String,
    /// Base64 data.
    pub data: String,
}

/// What a call returns: the text the model reads, and whether the call failed. A failure is
/// still an output: the model reads the reason and decides what to do next.
///
/// It serializes as a call's result in the CLI's `--json` (docs/cli-json.md): `text`,
/// `is_error`, `structured_content`, `image` (its type and encoded size, never its data) and
/// `truncated`. That is a view for reading, not a format to keep and read back: a field added
/// here appears in that output, and an image's data is not written.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ToolOutput {
    /// The text the model reads.
    pub text: String,
    /// The call failed (bad arguments, an error from the tool, a timeout, a cancellation).
    pub is_error: bool,
    /// Structured content, when the tool returned some (already part of `text`).
    #[serde(rename = "structured_content")]
    pub structured: Option<Value>,
    /// One image, when the tool returned one within its budget.
    #[serde(serialize_with = "image_summary")]
    pub image: Option<ToolImage>,
    /// `text` was cut at the output cap.
    pub truncated: bool,
}

impl ToolOutput {
    /// A successful result with `text`.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    /// A failed call whose reason the model reads.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            text: message.into(),
            is_error: true,
            ..Self::default()
        }
    }
}

/// Progress a tool reports while it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolProgress {
    /// How far along (the tool's own units).
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// A short message, when there is one.
    pub message: Option<String>,
}

/// Where a running tool sends its progress.
pub type ProgressSink = Arc<dyn Fn(ToolProgress) + Send + Sync>;

/// What a call may use besides its arguments.
#[derive(Clone)]
pub struct ToolContext {
    /// The session workspace: relative paths resolve here, and file tools stay inside it
    /// unless `extra_roots` allows more.
    pub workspace: PathBuf,
    /// Further directories the user's configuration opens to file tools.
    pub extra_roots: Vec<PathBuf>,
    /// Environment variables that hold secrets (API keys, values for MCP servers): processes
    /// a tool starts never inherit them.
    pub hidden_env: Vec<String>,
    /// Fires when the user aborts or the call budget runs out; tools stop promptly and
    /// clean up (processes killed, requests cancelled).
    pub cancel: CancelSignal,
    /// Receives progress, when someone listens.
    pub progress: Option<ProgressSink>,
    /// Puts a server's questions (forms, sampling) to the user on behalf of this call, when
    /// someone can answer them.
    pub asker: Option<Arc<dyn Asker>>,
}

impl ToolContext {
    /// A context for `workspace` with no extra roots, no progress listener and a fresh
    /// cancellation signal.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            extra_roots: Vec::new(),
            hidden_env: Vec::new(),
            cancel: CancelSignal::new(),
            progress: None,
            asker: None,
        }
    }

    /// Reports progress to the listener, if any.
    pub fn report(&self, progress: ToolProgress) {
        if let Some(sink) = &self.progress {
            sink(progress);
        }
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("workspace", &self.workspace)
            .field("extra_roots", &self.extra_roots)
            .field("cancelled", &self.cancel.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// The future a call returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>>;

/// A call's result as a gateway passes it on (`rho mcp serve`, [`Tool::call_as_sent`]).
#[derive(Debug, Clone, PartialEq)]
pub enum PassedOutput {
    /// The result exactly as the tool's server sent it (an MCP `CallToolResult`, as JSON):
    /// every content block, structured content, `isError` and `_meta`.
    AsSent(Value),
    /// rho's rendering of the call: a tool whose results have no form of their own (built-in,
    /// WASM), or a call that failed before its server answered.
    Rendered(ToolOutput),
}

/// The future [`Tool::call_as_sent`] returns.
pub type PassedFuture<'a> = Pin<Box<dyn Future<Output = PassedOutput> + Send + 'a>>;

/// A tool any source provides. Implementations never panic on any arguments: bad input is a
/// failed [`ToolOutput`] naming what was wrong.
pub trait Tool: Send + Sync {
    /// The declaration.
    fn spec(&self) -> &ToolSpec;

    /// Runs one call. `arguments` is what the model sent (normally an object). Dropping the
    /// future also stops the call, but tools should watch `context.cancel` to clean up.
    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> ToolFuture<'a>;

    /// Runs one call for a gateway that passes the result on to another client rather than to
    /// a model: a tool whose server sends results of its own form returns that result as it
    /// came; every other tool returns what [`Tool::call`] renders (the default).
    fn call_as_sent<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> PassedFuture<'a> {
        Box::pin(async move { PassedOutput::Rendered(self.call(arguments, context).await) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_hints_are_read_by_their_key() {
        let description = "Deletes a file.\n(MCP tool `rm` of server `files`)\n\
             Server hint: may modify its environment (readOnlyHint: false)\n\
             Server hint: may be destructive (destructiveHint: true)";
        assert_eq!(server_hint(description, "readOnlyHint"), Some(false));
        assert_eq!(server_hint(description, "destructiveHint"), Some(true));
        assert_eq!(server_hint(description, "idempotentHint"), None);
        assert_eq!(
            server_hint("Server hint: odd (readOnlyHint: maybe)", "readOnlyHint"),
            None
        );
    }

    fn spec(name: &str, origin: ToolOrigin) -> ToolSpec {
        ToolSpec {
            name: name.to_owned(),
            title: None,
            description: String::new(),
            input_schema: Value::Null,
            output_schema: None,
            risk: RiskLevel::Read,
            origin,
        }
    }

    #[test]
    fn people_read_the_owner_and_own_name_and_the_model_the_exported_name() {
        let mcp = spec(
            "mcp__everything___rho_6765742d656e76",
            ToolOrigin::Mcp {
                server: "everything".to_owned(),
                plugin: None,
                tool: "get-env".to_owned(),
            },
        );
        assert_eq!(mcp.display_name(), "everything › get-env");
        assert_eq!(mcp.own_name(), "get-env");
        assert_eq!(
            mcp.exported_beside(),
            Some("mcp__everything___rho_6765742d656e76")
        );
        let wasm = spec(
            "wasm__data-tools__convert",
            ToolOrigin::Wasm {
                plugin: "data-tools".to_owned(),
                component: "data".to_owned(),
                tool: "convert".to_owned(),
            },
        );
        assert_eq!(wasm.display_name(), "data-tools › convert");
        assert_eq!(wasm.exported_beside(), Some("wasm__data-tools__convert"));
        let builtin = spec("read_file", ToolOrigin::Builtin);
        assert_eq!(builtin.display_name(), "read_file");
        assert_eq!(builtin.own_name(), "read_file");
        assert_eq!(builtin.exported_beside(), None);
    }

    #[test]
    fn risk_levels_order_from_read_to_destructive() {
        assert!(RiskLevel::Read < RiskLevel::Write);
        assert!(RiskLevel::Write < RiskLevel::Destructive);
        assert_eq!(
            RiskLevel::Destructive.max(RiskLevel::Read),
            RiskLevel::Destructive
        );
        assert_eq!(RiskLevel::Write.to_string(), "write");
    }

    #[test]
    fn outputs_say_whether_the_call_failed() {
        assert!(!ToolOutput::text("ok").is_error);
        let failed = ToolOutput::error("no such file");
        assert!(failed.is_error);
        assert_eq!(failed.text, "no such file");
    }
}
