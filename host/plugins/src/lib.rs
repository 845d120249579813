//! Agent Plugins 1.0.0 support.
//!
//! This crate validates `plugin.json` and `mcp.json` against the vendored schemas (selected by
//! `$schema`, never fetched) plus the rules JSON Schema cannot express, enforces path
//! containment, discovers packages in explicit roots with precedence and shadowing, loads each
//! package's skills (through `rho-skills`) and MCP servers (translated into
//! [`rho_component::McpServerSpec`]), and runs the package lifecycle (install, link,
//! enable/disable, remove). It never executes package code and never starts a server: that is
//! the MCP runtime's job.

mod containment;
mod copy;
mod discovery;
mod error;
mod extension;
mod json_doc;
mod lifecycle;
mod manifest;
mod mcp_config;
mod package;
mod placeholder;
mod schema;
mod state;
mod trust;

pub use copy::CopyLimits;
pub use discovery::{
    Origin, PluginInventory, PluginRecord, PluginRoot, PluginStatus, RESERVED_PREFIX, discover,
};
pub use error::PluginError;
pub use extension::{COMPONENT_KEYS, COMPONENT_MAX_BYTES, MAX_COMPONENTS_PER_PLUGIN, TOOLS_DIR};
pub use lifecycle::{
    EnableReport, InstallReport, PluginLocations, RemoveReport, install, install_with_limits, link,
    removal_target, remove, set_enabled, validate_package,
};
pub use manifest::{Author, MANIFEST_FILE, MANIFEST_MAX_BYTES, Manifest};
pub use mcp_config::{MAX_SERVERS_PER_PLUGIN, MCP_CONFIG_MAX_BYTES, MCP_FILE};
pub use package::{DATA_DIR, Package, SKILLS_DIR, load_package};
pub use placeholder::expand_placeholders;
pub use schema::{SpecVersion, schema_texts};
pub use state::{ActivationState, PluginState};
pub use trust::{TRUST_FILE, TrustState, TrustStore, fingerprint};

/// Entry points for fuzzing the parsers on raw bytes; not part of the stable API.
#[doc(hidden)]
pub mod fuzzing {
    use std::path::Path;

    /// Runs `plugin.json` validation over arbitrary bytes.
    pub fn manifest(bytes: &[u8]) -> bool {
        crate::manifest::validate_manifest_bytes(bytes, Path::new("/fuzz/plugin.json"))
            .manifest
            .is_some()
    }

    /// Runs `mcp.json` validation over arbitrary bytes (for a plugin at a non-existent root).
    pub fn mcp(bytes: &[u8]) -> usize {
        let beneath = crate::containment::Beneath::new("/nonexistent/fuzz".into());
        let ctx = crate::mcp_config::PluginContext {
            name: "fuzz",
            root: Path::new("/nonexistent/fuzz"),
            beneath: &beneath,
            data_dir: Path::new("/nonexistent/data/fuzz"),
            spec: crate::SpecVersion::V1_0_0,
        };
        crate::mcp_config::validate_mcp_bytes(bytes, Path::new("/fuzz/mcp.json"), &ctx)
            .servers
            .len()
    }
}
