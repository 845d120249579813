//! The JSON Schema of `config.toml`, derived from the raw `*Toml` types the parser reads
//! (`schemars`), so the schema and the parser cannot disagree on a key. The checked-in
//! `schemas/rho-config.schema.json` is this document; a test keeps it equal (regenerate with
//! `RHO_UPDATE_SCHEMAS=1 cargo test -p rho-cli --test schemas`).
//!
//! Rules JSON Schema cannot say (URL rules, header names, the stdio/HTTP key split) stay in the
//! parser, which is the judge; the schema is for editors and for readers.

use schemars::{Schema, SchemaGenerator, json_schema};
use serde_json::Value;

use rho_component::{LogLevel, PermissionMode, Startup, input_schema};

use crate::agent::ToolSearch;
use crate::agent_runtime::AgentRuntime;
use crate::config_file::{ConfigToml, PluginServerToml};

/// Where the document says it lives.
const SCHEMA_ID: &str = "https://rho.dev/schemas/rho-config.schema.json";

/// The pattern of a server or provider identity (checked by [`crate::valid_server_id`] too).
pub(crate) const IDENTITY_PATTERN: &str = "^[A-Za-z0-9_-]{1,64}$";

/// The schema of `config.toml` (JSON Schema 2020-12; TOML has no null, so optional keys are
/// ones that may be absent: [`input_schema`]).
pub fn config_schema() -> Value {
    let mut schema = input_schema::<ConfigToml>();
    if let Value::Object(root) = &mut schema {
        root.insert("$id".into(), SCHEMA_ID.into());
        root.insert("title".into(), "rho config.toml".into());
    }
    schema
}

/// `log_level`: the MCP logging levels, from [`LogLevel::ALL`].
pub(crate) fn log_level_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
    json_schema!({
        "enum": names,
    })
}

/// `permission_mode`: the modes of [`PermissionMode::ALL`].
pub(crate) fn permission_mode_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
    json_schema!({
        "enum": names,
    })
}

/// `[mcp] startup`: the modes of [`Startup::ALL`] (the key is read with its position, so its
/// Rust type is a string).
pub(crate) fn startup_schema(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<Startup>()
}

/// `runtime`: the runtimes of [`AgentRuntime::ALL`].
pub(crate) fn runtime_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = AgentRuntime::ALL.iter().map(|m| m.as_str()).collect();
    json_schema!({
        "enum": names,
    })
}

/// `tool_search`: the modes of [`ToolSearch::ALL`].
pub(crate) fn tool_search_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = ToolSearch::ALL.iter().map(|m| m.as_str()).collect();
    json_schema!({
        "enum": names,
    })
}

/// The pattern of a plugin server's identity, `<plugin>/<server>` (checked by the parser too).
const PLUGIN_SERVER_PATTERN: &str = "^[a-z0-9.-]{1,64}/.+$";

/// `[mcp.plugin_servers]`: tables keyed by plugin server identity.
pub(crate) fn plugin_server_map(generator: &mut SchemaGenerator) -> Schema {
    let values = generator.subschema_for::<PluginServerToml>();
    json_schema!({
        "type": "object",
        "propertyNames": { "pattern": PLUGIN_SERVER_PATTERN },
        "additionalProperties": values,
    })
}

/// A table keyed by identity whose values follow `T`'s schema.
pub(crate) fn identity_map<T: schemars::JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    let values = generator.subschema_for::<T>();
    json_schema!({
        "type": "object",
        "propertyNames": { "pattern": IDENTITY_PATTERN },
        "additionalProperties": values,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn no_option_leaves_a_null_behind() {
        let text = config_schema().to_string();
        assert!(!text.contains("\"null\""), "{text}");
    }
}
