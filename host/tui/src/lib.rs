//! `rho-tui`: the interactive `rho`, a front-end of the `rho-core` session host exactly as
//! `rho-rpc` is. Keys become [`Operation`](rho_core::host::Operation)s sent through a
//! [`HostHandle`](rho_core::host::HostHandle); [`HostEvent`](rho_core::host::HostEvent)s become
//! frames. No session logic lives here. See `docs/tui.md`.
//!
//! Modules: [`theme`] (styles, `NO_COLOR`), [`markdown`] (Markdown to styled lines, code
//! highlighted), [`composer`] (the multi-line input with history and folded pastes).

pub mod composer;
pub mod markdown;
pub mod theme;
