//! Runs WASM tool components (`rho:tool@0.1.x`, world `tool-provider`) under wasmtime; the only
//! crate that sees wasmtime.
//!
//! A [`WasmHost`] owns one engine (component model, epoch interruption, bounded stacks), a
//! 10 ms epoch ticker, a linker with WASI p2 and the `rho:tool/host` imports, and an optional
//! on-disk cache of compiled components. [`WasmHost::load`] compiles a component on a blocking
//! thread (or loads it from the cache), links it, calls `list-tools` and validates the result
//! into [`GuestTool`]s ([`WasmHost::defer`] does that on first use, for a component whose tools
//! are known beforehand). [`LoadedComponent::tool`] gives the [`rho_component::Tool`] the registry
//! mounts; every call runs in a fresh instance whose WASI context holds exactly the declared
//! capabilities — the workspace preopened at [`GUEST_WORKSPACE`] read-only or read-write, or
//! nothing; the named environment variables minus secrets; no arguments, no stdin, no network —
//! under the component's memory cap, wall-clock budget and the caller's cancellation. Traps,
//! budgets, memory exhaustion and cancellation come back as failed
//! [`rho_component::ToolOutput`]s naming the component; nothing a guest does panics the host.
//!
//! This crate does not read plugin manifests, find `.wasm` files, cap their size, name the
//! exported tools or decide their risk: the plugin loader and the registry do that.

mod bindings;
mod cache;
mod component;
mod deferred;
mod engine;
mod error;
mod guard;
mod guest_output;
mod guest_tool;
mod host;
mod host_api;
mod limits;
mod output;
mod store;
mod ticker;
mod workspace_files;

pub use cache::MAX_CACHE_BYTES;
pub use component::LoadedComponent;
pub use deferred::{DeferredComponent, WARM_AFTER};
pub use engine::MAX_WASM_STACK;
pub use error::WasmError;
pub use guard::CANCEL_GRACE;
pub use guest_output::GUEST_OUTPUT_MAX_BYTES;
pub use guest_tool::{GuestTool, MAX_TOOLS_PER_COMPONENT, ToolAnnotations};
pub use host::{COMPILE_TIMEOUT, LIST_TOOLS_TIMEOUT, WasmHost};
pub use output::IMAGE_BUDGET_BYTES;
pub use ticker::EPOCH_TICK;
pub use workspace_files::{GUEST_WORKSPACE, READ_FILE_MAX_BYTES};
