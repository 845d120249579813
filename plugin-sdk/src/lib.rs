//! Write tools for rho, the agent host, as WebAssembly components.
//!
//! A *tool component* is a `wasm32-wasip2` component that implements rho's WIT contract
//! `rho:tool@0.1.0` (world `tool-provider`, shipped in this crate's `wit/` directory): it
//! lists its tools and handles calls, and it may log, report progress, check for
//! cancellation and read workspace files through the host. A plugin ships it as
//! `dev.rho/tools/<component>.wasm` and declares its capabilities in `plugin.json`
//! (`extensions["dev.rho"].tools.<component>`); rho exports every tool as
//! `wasm__<plugin>__<tool>`.
//!
//! This crate is the author's side of that contract. It does:
//! - the [`Tool`] trait: name, description, hand-written input schema, typed arguments
//!   (serde), and a `call` function returning an [`Output`] or a [`ToolError`];
//! - [`export_tools!`]: the one macro that turns the tool types into the component's exports
//!   (the crate needs no `wit-bindgen` of its own);
//! - [`Context`]: logging, progress, cancellation and workspace reads for a running call;
//! - [`MockHost`]: a stand-in for rho so tools can be unit-tested natively.
//!
//! It does not give tools network access, process spawning or writes: a component reaches
//! only what the `rho:tool/host` interface and the capabilities granted in the manifest
//! allow. It never depends on rho's host crates.
//!
//! # Example
//!
//! `Cargo.toml`:
//!
//! ```toml
//! [package]
//! name = "word-tools"
//! version = "0.1.0"
//! edition = "2024"
//!
//! [lib]
//! crate-type = ["cdylib"]
//!
//! [dependencies]
//! rho-plugin-sdk = { path = "../../plugin-sdk" }
//! serde = { version = "1", features = ["derive"] }
//! serde_json = "1"
//!
//! [profile.release]
//! opt-level = "s"
//! lto = true
//! codegen-units = 1
//! strip = true
//! panic = "abort"
//! ```
//!
//! `src/lib.rs`:
//!
//! ```
//! use rho_plugin_sdk::{Annotations, Context, Output, Tool, ToolError, export_tools};
//! use serde::Deserialize;
//! use serde_json::{Value, json};
//!
//! /// Counts the words of a text or of a workspace file.
//! pub struct WordCount;
//!
//! #[derive(Deserialize)]
//! #[serde(deny_unknown_fields)]
//! pub struct WordCountArgs {
//!     text: Option<String>,
//!     path: Option<String>,
//! }
//!
//! impl Tool for WordCount {
//!     const NAME: &'static str = "word_count";
//!     const TITLE: Option<&'static str> = Some("Word count");
//!     const DESCRIPTION: &'static str =
//!         "Counts the words of `text`, or of the workspace file at `path`.";
//!     type Args = WordCountArgs;
//!
//!     fn input_schema() -> Value {
//!         json!({
//!             "type": "object",
//!             "properties": {
//!                 "text": {"type": "string", "description": "The text to count"},
//!                 "path": {"type": "string", "description": "A workspace file to count instead"}
//!             },
//!             "additionalProperties": false
//!         })
//!     }
//!
//!     fn output_schema() -> Option<Value> {
//!         Some(json!({
//!             "type": "object",
//!             "properties": {"words": {"type": "integer"}},
//!             "required": ["words"]
//!         }))
//!     }
//!
//!     fn annotations() -> Option<Annotations> {
//!         Some(Annotations::READ_ONLY)
//!     }
//!
//!     fn call(args: WordCountArgs, cx: &Context) -> Result<Output, ToolError> {
//!         let text = match (args.text, args.path) {
//!             (Some(text), None) => text,
//!             (None, Some(path)) => cx.read_to_string(&path)?,
//!             _ => return Err(ToolError::invalid_arguments("give exactly one of `text` and `path`")),
//!         };
//!         let words = text.split_whitespace().count();
//!         cx.debug(format!("{words} words"));
//!         Ok(Output::text(format!("{words} words")).with_structured(json!({"words": words})))
//!     }
//! }
//!
//! export_tools!(WordCount);
//!
//! // A native unit test, with rho replaced by a MockHost:
//! let host = rho_plugin_sdk::MockHost::new().with_file("a.txt", "one two three");
//! let out = host.call::<WordCount>(r#"{"path": "a.txt"}"#).unwrap();
//! assert_eq!(out.structured(), Some(&json!({"words": 3})));
//! let err = host.call::<WordCount>(r#"{"text": 5}"#).unwrap_err();
//! assert_eq!(err.to_string(), "invalid arguments: text: invalid type: integer `5`, expected a string");
//! ```
//!
//! Build it with `cargo build --release --target wasm32-wasip2`; the component is
//! `target/wasm32-wasip2/release/word_tools.wasm`. The crate's README walks through the
//! plugin layout, installation and calls.
//!
//! # Native builds
//!
//! The crate compiles for the host target too (docs, `cargo check`, unit tests). There the
//! host imports are not called: [`Context`] in an exported call logs nowhere, is never
//! cancelled and cannot read files; tests use [`MockHost`] instead.

extern crate self as rho_plugin_sdk;

#[doc(hidden)]
pub mod bindings;
mod context;
mod dispatch;
mod error;
mod export;
mod mock_host;
mod output;
mod tool;
mod wasm_host;

pub use context::{Context, Host, Level};
pub use dispatch::invoke;
pub use error::{ReadError, ToolError};
pub use mock_host::{MockHost, Progress};
pub use output::{Content, Output};
pub use tool::{Annotations, Tool, ToolSpec, valid_tool_name};

/// Re-exported for tools that would rather not depend on it themselves (derive with
/// `#[serde(crate = "rho_plugin_sdk::serde")]`).
pub use serde;
/// Re-exported: [`Tool::input_schema`] returns a [`serde_json::Value`], usually built with
/// [`serde_json::json!`].
pub use serde_json;

/// The WIT package this SDK implements (`plugin-sdk/wit/rho-tool-0.1.0`).
pub const WIT_PACKAGE: &str = "rho:tool@0.1.0";

/// What [`export_tools!`] expands to; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::bindings::exports::rho::tool::tools::Guest;
    pub use crate::bindings::rho::tool::types::{
        ToolError as WitToolError, ToolResult as WitToolResult, ToolSpec as WitToolSpec,
    };
    pub use crate::dispatch::{assert_valid_names, call, spec, unknown_tool};
    pub use wit_bindgen;
}
