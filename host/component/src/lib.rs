//! The vocabulary every part of rho shares.
//!
//! This crate holds plain data only: where a component came from ([`Scope`], [`SkillSource`]),
//! what went wrong with it ([`Diagnostic`] and its stable [`DiagnosticCode`]), the metadata of a
//! skill ([`SkillMeta`]), the resolved, transport-ready description of an MCP server
//! ([`McpServerSpec`]) with the [`endpoint`] rules every server source applies and the one rule
//! for an environment variable's name ([`valid_env_name`]), and the tool vocabulary
//! ([`ToolSpec`], [`RiskLevel`], [`ToolOutput`], the [`Tool`] trait and its runtime-free
//! [`CancelSignal`]), what servers offer besides tools ([`ServerPrompt`], [`ServerResource`])
//! and the questions they ask during a call ([`Form`], [`SamplingRequest`], answered through an
//! [`Asker`]), and [`terminal_safe`], the one rule for text that reaches a terminal,
//! [`input_schema`], the one way a schema is derived from a Rust type, [`schema_problems`], the
//! one wording of a JSON Schema violation, and [`json_kind`], the one wording of a JSON value's
//! type in a message. Its one piece of IO is [`RegularFile`], the one reader of a file a user or
//! a package names (regular files only, never a blocking open, capped), so every crate refuses a
//! FIFO, a device or a huge file the same way. It spawns nothing and knows no async runtime;
//! loaders in the adapter crates produce these values and the registry consumes them.

mod cancel;
mod civil_time;
mod diagnostic;
pub mod endpoint;
mod env_name;
pub mod exact_path;
mod json_schema;
pub mod lossy_path;
mod mcp_server;
pub mod naming;
mod permission;
mod question;
mod regular_file;
mod server_offer;
mod skill;
mod source;
mod terminal_text;
mod tool;
mod wasm_component;

pub use cancel::{CancelSignal, Cancelled};
pub use civil_time::CivilTime;
pub use diagnostic::{Diagnostic, DiagnosticCode, Severity};
pub use env_name::valid_env_name;
pub use json_schema::{input_schema, json_kind, schema_problems};
pub use mcp_server::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_STARTUP_TIMEOUT, HttpServerSpec,
    LogLevel, McpServerOrigin, McpServerSpec, McpTransport, OAuthSpec, SamplingPolicy, Startup,
    StdioCommand, StdioServerSpec, ToolFilter, Transport, shell_word,
};
pub use naming::display_name as tool_display_name;
pub use permission::{Gate, PermissionMode};
pub use question::{
    AskFuture, Asker, Choice, FieldKind, Form, FormField, QuestionAction, QuestionAnswer,
    SamplingAnswer, SamplingMessage, SamplingRequest, SamplingRole, ServerLog,
};
pub use regular_file::{FileError, FileKind, OpenRegular, RegularFile, format_size, read_regular};
pub use server_offer::{
    PromptArgument, PromptMessage, PromptRole, ResourceAttachment, ResourceBody, ResourceContent,
    ServerPrompt, ServerResource,
};
pub use skill::SkillMeta;
pub use source::{Scope, SkillSource};
pub use terminal_text::{terminal_safe, terminal_safe_json, terminal_safe_lines};
pub use tool::{
    PassedFuture, PassedOutput, ProgressSink, RiskLevel, SERVER_HINT_PREFIX, Tool, ToolContext,
    ToolFuture, ToolImage, ToolOrigin, ToolOutput, ToolProgress, ToolSpec, server_hint,
    server_hints,
};
pub use wasm_component::{
    DEFAULT_WASM_MAX_OUTPUT_BYTES, DEFAULT_WASM_MEMORY, DEFAULT_WASM_TIMEOUT, MAX_WASM_MEMORY,
    MAX_WASM_TIMEOUT, RHO_NAMESPACE, WasmComponentSpec, WorkspaceAccess,
};
