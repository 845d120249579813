//! rho's JSON-RPC 2.0 mode (`rho rpc`), as `docs/rpc.md` describes it.
//!
//! It is a codec over `rho-core`'s session host: [`serve`] turns JSON-RPC lines from a
//! [`Transport`] (stdin/stdout in the binary, [`transport::stdio`]; in-process channels in
//! tests, [`transport::channel`]) into host operations and host events into lines. It holds
//! no session state. Requests are parsed strictly (`jsonrpc.rs`); each method is defined once
//! in `methods.rs` (name, params, the operation it becomes, its result), and dispatch, the
//! method list and the OpenRPC document in `schemas/rho-rpc.openrpc.json` (`openrpc.rs`, also
//! the answer to `rpc.discover`) all come from that table; every param, result and
//! notification has a type: the host's own where its shape is the wire's, else a wire
//! envelope or params struct (`wire.rs`). stdout carries only protocol; logs go to
//! stderr.

mod codec;
mod convert;
#[doc(hidden)]
pub mod fuzzing;
pub mod jsonrpc;
mod methods;
pub mod openrpc;
pub mod transport;
pub mod wire;
#[cfg(test)]
mod wire_snapshots;

pub use codec::serve;
pub use methods::{METHODS, Method, NOTIFICATIONS, Notification};
pub use transport::{Inbound, Peer, Transport};

/// The notification line (one JSON-RPC 2.0 message, no newline) RPC mode writes for a session
/// event; `rho run --json` prints the same lines.
pub fn event_line(event: &rho_core::session::SessionEvent) -> String {
    convert::event_line(event)
}
