//! The crate's one error type: what can go wrong setting up the host or loading a component.
//! Failures of a call are never errors: they are failed `ToolOutput`s the model reads.

use std::path::PathBuf;

/// Why the host could not start, or why a component (or one of its tools) did not load.
/// Every variant names the component (`<plugin>/<name>`) or the path involved.
#[derive(Debug, thiserror::Error)]
pub enum WasmError {
    /// wasmtime refused the engine configuration or the linker setup (a bug in rho, not in a
    /// component).
    #[error("cannot set up the wasm engine: {0}")]
    Engine(String),

    /// The epoch ticker thread could not be started.
    #[error("cannot start the wasm epoch ticker: {0}")]
    Ticker(#[source] std::io::Error),

    /// The compiled-artifact cache directory could not be created.
    #[error("cannot create the wasm cache directory `{path}`: {source}")]
    CacheDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },

    /// The compiled-artifact cache directory exists but others could write to it, so its
    /// files cannot be trusted as machine code.
    #[error("refusing the wasm cache directory `{path}`: {reason}")]
    CacheDirUnsafe {
        /// The directory.
        path: PathBuf,
        /// Why it is refused.
        reason: String,
    },

    /// The bytes are not a valid WebAssembly component (truncated, corrupt, a core module, ...).
    #[error("component {component} is not a valid wasm component: {message}")]
    Compile {
        /// `<plugin>/<name>`.
        component: String,
        /// What wasmtime said.
        message: String,
    },

    /// Compiling took longer than the host allows.
    #[error("component {component} took more than {seconds} s to compile")]
    CompileTimeout {
        /// `<plugin>/<name>`.
        component: String,
        /// The limit.
        seconds: u64,
    },

    /// The component does not implement the `tool-provider` world: it does not export
    /// `rho:tool/tools@0.1.x`, or imports something rho does not provide (another WIT version,
    /// an unknown interface).
    #[error("component {component} does not implement rho:tool/tool-provider@0.1.x: {message}")]
    WrongWorld {
        /// `<plugin>/<name>`.
        component: String,
        /// What is missing or mismatched.
        message: String,
    },

    /// `list-tools` trapped, ran out of time or memory, or returned too much.
    #[error("component {component} failed to list its tools: {message}")]
    ListTools {
        /// `<plugin>/<name>`.
        component: String,
        /// Why.
        message: String,
    },

    /// One tool's declaration is invalid; the component's other tools still load.
    #[error("component {component}: tool {tool:?} is invalid: {reason}")]
    InvalidTool {
        /// `<plugin>/<name>`.
        component: String,
        /// The tool name as the component gave it (possibly cut).
        tool: String,
        /// What is wrong.
        reason: String,
    },
}
