//! Host tests of `rho-wasm` with components built from WAT (no wasm32 target needed): loading,
//! calls, limits, traps, capabilities and the artifact cache.

#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test fixtures and assertions

mod calls;
mod capabilities;
mod loading;
mod support;
