//! rho's MCP client runtime, on `rmcp`.
//!
//! [`connect`] starts a server from its resolved [`rho_component::McpServerSpec`] (stdio in its
//! own process group with a sanitized environment, or Streamable HTTP without redirects),
//! negotiates the protocol era automatically (2026-07-28 `server/discover`, falling back to the
//! 2025-11-25 `initialize` handshake), lists its tools (pages guarded), and keeps the session for
//! [`Connection::call_tool`] (progress token, cancellation, call budget). [`render_result`]
//! turns a result into what the model reads, and [`ExportedNames`] assigns `mcp__<server>__<tool>`
//! names. `rmcp` types never leave this crate: results cross as JSON.

mod connection;
mod environment;
mod error;
mod export_names;
mod handler;
mod http;
mod input;
mod instructions;
pub mod output_schema;
mod render;
mod stdio;
mod tool_description;

pub use connection::{
    Cancel, Connection, MAX_INPUT_ROUNDS, MAX_LIST_PAGES, PingStatus, ServerSummary, ServerTool,
    ToolChanges, connect, process_ambient,
};
pub use environment::{BASE_VARIABLES, server_environment};
pub use error::McpError;
pub use export_names::{
    ENCODED_PREFIX, ExportTarget, ExportedNames, MAX_NAME_LEN, PREFIX, encode_component, full_name,
};
pub use handler::Progress;
pub use instructions::{INSTRUCTIONS_MAX_BYTES, instructions_section};
pub use render::{IMAGE_ASSET_BUDGET, ImageAsset, RenderedResult, human_size, render_result};
pub use stdio::SHUTDOWN_GRACE;
pub use tool_description::exported_description;
