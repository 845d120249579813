//! rho's JSON-RPC 2.0 mode (`rho rpc`), as `rho-rpc-mode.md` specifies it.
//!
//! [`serve`] runs one connection over a [`Transport`]: stdin/stdout in the binary
//! ([`transport::stdio`]), in-process channels in tests ([`transport::channel`]). Requests are
//! parsed strictly (`jsonrpc.rs`), every param, result and notification has a typed wire struct
//! (`wire.rs`), and the OpenRPC document in `schemas/rho-rpc.openrpc.json` is generated from
//! those types (`openrpc.rs`). stdout carries only protocol; logs go to stderr.

mod app;
mod convert;
pub mod jsonrpc;
pub mod openrpc;
mod server;
pub mod transport;
pub mod wire;

pub use app::{Ambient, App, RpcOptions};
pub use server::{
    MAX_QUEUED_BYTES, MAX_QUEUED_REQUESTS, MAX_STEERING_MESSAGES, METHODS, NOTIFICATIONS,
    SessionStart, serve, serve_until,
};
pub use transport::{Inbound, Peer, Transport};
