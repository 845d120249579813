//! rho's MCP client runtime, on `rmcp`.
//!
//! [`connect_with`] starts a server from its resolved [`rho_component::McpServerSpec`] (stdio in
//! its own process group with a sanitized environment, or Streamable HTTP without redirects),
//! negotiates the protocol era automatically (2026-07-28 `server/discover`, falling back to the
//! 2025-11-25 `initialize` handshake) declaring only what the session can answer
//! ([`ClientOptions`]: the workspace root, forms, sampling), lists its tools, prompts and
//! resources (pages guarded, at most [`MAX_SERVER_TOOLS`], [`MAX_SERVER_PROMPTS`] and
//! [`MAX_SERVER_RESOURCES`] kept), and keeps the session for:
//!
//! - [`Connection::call_tool_with`]: progress token, cancellation, a call budget that stands
//!   still while the user answers a question, and questions (`elicitation/create`,
//!   `sampling/createMessage`, 2026-07-28 input requests) routed to the call's
//!   [`rho_component::Asker`], one open per server at a time (at most
//!   [`MAX_QUEUED_QUESTIONS`] more wait; the rest are rejected and counted,
//!   [`Connection::rejected_questions`]);
//! - [`Connection::get_prompt`], [`Connection::read_resource`] and [`Connection::complete`]
//!   for slash commands, `@` attachments and argument suggestions.
//!
//! At most [`MAX_CONCURRENT_STARTS`] servers start at once in a process, each within its own
//! budget from when it starts; the first start raises the open-file limit
//! ([`raise_open_file_limit`]).
//!
//! [`render_result`] turns a tool result into what the model reads (the exported
//! `mcp__<server>__<tool>` names are `rho_component::naming`'s). `rmcp` types never leave this
//! crate: results cross as
//! JSON or as `rho_component` types. It does not own sessions, approvals or the person being
//! asked: those are the session host's.

mod budget;
mod call;
mod catalog;
mod completion;
mod connection;
mod elicitation;
mod environment;
mod era;
mod error;
mod handler;
mod http;
mod input;
mod instructions;
pub mod oauth;
mod options;
pub mod output_schema;
mod paging;
mod prompts;
mod question_gate;
mod questions;
mod render;
mod request;
mod resources;
mod restart;
mod sampling;
pub mod serving;
mod standalone;
mod start_slots;
mod stdio;
mod task_support;
mod tool_description;
mod tools;

pub use catalog::{MAX_SERVER_PROMPTS, MAX_SERVER_RESOURCES};
pub use completion::{COMPLETION_CACHE_ENTRIES, COMPLETION_TIMEOUT, MAX_COMPLETION_VALUES};
pub use connection::{
    Cancel, Connection, Known, ServerSummary, connect, connect_knowing, connect_with,
    process_ambient,
};
pub use environment::{BASE_VARIABLES, server_environment};
pub use era::PROBE_ANSWER_WAIT;
pub use error::McpError;
pub use handler::Progress;
pub use instructions::{INSTRUCTIONS_MAX_BYTES, instructions_section};
pub use options::ClientOptions;
pub use paging::{MAX_LIST_PAGES, MAX_LISTED_ITEMS};
pub use question_gate::{MAX_QUEUED_QUESTIONS, QUESTION_REJECTED_CODE, RejectedQuestions};
pub use render::{IMAGE_ASSET_BUDGET, ImageAsset, RenderedResult, human_size, render_result};
pub use request::MAX_INPUT_ROUNDS;
pub use restart::{
    RESTART_BACKOFF_CAP, RESTART_BACKOFF_FIRST, RESTART_LIMIT, RESTART_WINDOW, Restarts,
};
pub use standalone::STANDALONE_STREAM_WAIT;
pub use start_slots::{
    MAX_CONCURRENT_STARTS, OPEN_FILE_TARGET, OpenFileLimit, raise_open_file_limit,
};
pub use stdio::SHUTDOWN_GRACE;
pub use tool_description::exported_description;
pub use tools::{MAX_SERVER_TOOLS, ServerTool, ToolChanges, tools_left_out_message};
