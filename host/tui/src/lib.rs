//! `rho-tui`: the interactive `rho`, a front-end of the `rho-core` session host exactly as
//! `rho-rpc` is. Keys become [`Operation`](rho_core::host::Operation)s sent through a
//! [`HostHandle`](rho_core::host::HostHandle); [`HostEvent`](rho_core::host::HostEvent)s become
//! frames. No session logic lives here. See `docs/tui.md`.
//!
//! Modules: [`event_loop`] (terminal and host events in, frames out), [`app`] (the state and
//! what keys and events do), [`transcript`] (the conversation view and its scrolling),
//! [`tool_card`] (a tool call, its approval and a server's form), [`arguments`] (a call's
//! arguments as a person reads them, and their full view), [`palette`] (the `/` and `@`
//! palettes), [`composer`] (the message box), [`markdown`] (Markdown to styled lines),
//! [`reports`] (`/mcp`, `/doctor`, ...), [`text`] (safe wrapped text), [`theme`] (styles,
//! `NO_COLOR`), [`terminal`] (modes and their restoration), [`welcome`] (the first screen of a new session).

pub mod app;
pub mod arguments;
pub mod composer;
pub mod event_loop;
pub mod images;
pub mod markdown;
pub mod palette;
pub mod reports;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod tool_card;
pub mod transcript;
pub mod welcome;
pub mod workspace_files;

pub use event_loop::{Confirm, Embedding, Options, Started, run};
