//! rho's end-to-end tests, one test binary: each file of `tests/e2e/` is a module of it (one
//! link, one harness, `rho_e2e` from `tests/support/`). Run one file's tests with its module
//! path as the filter, e.g. `cargo test -p rho-e2e --test e2e lifecycle::`. All the tests share
//! one process, so nothing here may rely on process-wide state: a test finds the processes it
//! started by a marker of its own on their command lines, never by looking at this process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod adversarial;
mod claude_runtime;
mod claude_runtime_resume;
mod client_half;
mod conformance;
mod conformance_suite;
mod lifecycle;
mod mcp;
mod mcp_config_file;
mod mcp_lazy;
mod mcp_library;
mod mcp_live;
mod mcp_misbehaving;
mod mcp_restarts;
mod mcp_scale;
mod mcp_serve;
mod mcp_serve_clients;
mod mcp_serve_conformance;
mod mcp_serve_http;
mod mcp_serve_offers;
mod mcp_serve_trust;
mod mcp_show;
mod mcp_tasks;
mod oauth;
mod oauth_fixtures;
mod openrpc_client;
mod rpc;
mod run;
mod skills;
mod tool_cache;
mod tool_search;
mod tools;
mod toolset_evidence;
mod trust;
mod tui;
mod wasi_sandbox;
mod wasm;
mod workspace;
