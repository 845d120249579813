//! The client half of MCP against real servers: roots, questions (elicitation, sampling),
//! prompts, resources and completions, with `@modelcontextprotocol/server-everything` (legacy
//! era, stdio and Streamable HTTP) and a Python `mcp` 2.3 server (2026-07-28 era, input
//! requests inside the call), plus start-up failures reported with the server's stderr.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod askers;
mod modern;
mod offers;
mod peers;
mod questions;
mod standalone_stream;
mod startup;
