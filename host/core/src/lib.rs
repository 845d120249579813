//! rho's core: the component registry and the session engine.
//!
//! The registry mounts every component source (built-in, loose skills, `config.toml`, Agent
//! Plugins) under one set of precedence, shadowing and naming rules and keeps a diagnostic for
//! everything it refused. The session engine (agent loop, providers, approvals, steering,
//! persistence) runs on top of it. Front-ends (CLI, JSON-RPC mode, TUI) only drive these.

pub mod provider;
