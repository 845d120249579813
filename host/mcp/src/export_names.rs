//! Exported MCP tool names (`mcp__<server>__<tool>`): the registry's naming function lives in
//! `rho_component::naming`, shared with WASM tools; this module re-exports it.

pub use rho_component::naming::{
    ENCODED_PREFIX, ExportTarget, ExportedNames, MAX_NAME_LEN, PREFIX, encode_component, full_name,
};
