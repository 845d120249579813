//! The vendored Agent Plugins schemas and the validators built from them.
//!
//! A document's `$schema` selects its validation contract; the schemas are compiled into the
//! binary from `schemas/agent-plugins/<version>/` and validated offline, so nothing is ever
//! fetched. Validators are built on first use and shared by every thread.

use std::sync::OnceLock;

use jsonschema::{Draft, Validator};
use serde_json::{Value, json};

/// An Agent Plugins specification version this build implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecVersion {
    /// Agent Plugins 1.0.0.
    V1_0_0,
}

impl SpecVersion {
    /// Every supported version, oldest first.
    pub const ALL: &'static [SpecVersion] = &[SpecVersion::V1_0_0];

    /// The version number.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V1_0_0 => "1.0.0",
        }
    }

    /// The canonical `plugin.json` `$schema` identifier of this version.
    pub fn plugin_schema_id(self) -> &'static str {
        match self {
            Self::V1_0_0 => "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json",
        }
    }

    /// The canonical `mcp.json` `$schema` identifier of this version.
    pub fn mcp_schema_id(self) -> &'static str {
        match self {
            Self::V1_0_0 => "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json",
        }
    }

    /// The version a `plugin.json` `$schema` value selects, if supported.
    pub fn from_plugin_schema(id: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.plugin_schema_id() == id)
    }

    /// The version an `mcp.json` `$schema` value selects, if supported.
    pub fn from_mcp_schema(id: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.mcp_schema_id() == id)
    }

    /// A sentence listing the supported `plugin.json` identifiers, for diagnostics.
    pub fn supported_plugin_schemas() -> String {
        Self::ALL
            .iter()
            .map(|v| v.plugin_schema_id())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn validators(self) -> &'static Validators {
        static V1_0_0: OnceLock<Validators> = OnceLock::new();
        match self {
            Self::V1_0_0 => V1_0_0.get_or_init(|| {
                Validators::build(
                    include_str!("../../../schemas/agent-plugins/1.0.0/plugin.schema.json"),
                    include_str!("../../../schemas/agent-plugins/1.0.0/mcp.schema.json"),
                )
            }),
        }
    }
}

/// The raw text of the vendored schemas of a version (for `docs` and tests).
pub fn schema_texts(version: SpecVersion) -> (&'static str, &'static str) {
    match version {
        SpecVersion::V1_0_0 => (
            include_str!("../../../schemas/agent-plugins/1.0.0/plugin.schema.json"),
            include_str!("../../../schemas/agent-plugins/1.0.0/mcp.schema.json"),
        ),
    }
}

/// The validators of one version. `None` only if a vendored schema failed to compile, which a
/// unit test rules out; callers then report the document as unverifiable instead of panicking.
struct Validators {
    manifest: Option<Validator>,
    mcp_top: Option<Validator>,
    stdio: Option<Validator>,
    streamable_http: Option<Validator>,
    sse: Option<Validator>,
}

fn compile(schema: &Value) -> Option<Validator> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .offline()
        .build(schema)
        .ok()
}

impl Validators {
    fn build(plugin: &str, mcp: &str) -> Self {
        let plugin: Value = serde_json::from_str(plugin).unwrap_or(Value::Null);
        let mcp: Value = serde_json::from_str(mcp).unwrap_or(Value::Null);
        // The top level alone: server entries are validated one by one so that one bad entry
        // only disables itself (§7.2.2).
        let mut top = mcp.clone();
        if let Some(servers) = top.pointer_mut("/properties/mcpServers") {
            *servers = json!({ "type": "object" });
        }
        let variant = |name: &str| {
            let mut schema = mcp.clone();
            if let Some(obj) = schema.as_object_mut() {
                obj.remove("properties");
                obj.remove("required");
                obj.remove("additionalProperties");
                obj.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
            }
            compile(&schema)
        };
        Self {
            manifest: compile(&plugin),
            mcp_top: compile(&top),
            stdio: variant("stdioServer"),
            streamable_http: variant("streamableHttpServer"),
            sse: variant("sseServer"),
        }
    }
}

/// Which document (or part) to validate.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Contract {
    Manifest,
    McpTop,
    Stdio,
    StreamableHttp,
    Sse,
}

/// Validates `instance` and returns one message per violation (empty when valid).
pub(crate) fn violations(
    version: SpecVersion,
    contract: Contract,
    instance: &Value,
) -> Vec<String> {
    let v = version.validators();
    let validator = match contract {
        Contract::Manifest => &v.manifest,
        Contract::McpTop => &v.mcp_top,
        Contract::Stdio => &v.stdio,
        Contract::StreamableHttp => &v.streamable_http,
        Contract::Sse => &v.sse,
    };
    let Some(validator) = validator else {
        return vec![format!(
            "the vendored {} schema failed to compile",
            version.as_str()
        )];
    };
    // Almost every document is valid: the boolean check is cheaper than the error iterator,
    // which builds each error's location as it goes.
    if validator.is_valid(instance) {
        return Vec::new();
    }
    rho_component::schema_problems(validator, instance).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendored_schemas_compile() {
        let v = SpecVersion::V1_0_0.validators();
        assert!(v.manifest.is_some() && v.mcp_top.is_some());
        assert!(v.stdio.is_some() && v.streamable_http.is_some() && v.sse.is_some());
    }

    #[test]
    fn manifest_name_rules() {
        let check = |name: &str| {
            let doc = json!({ "$schema": SpecVersion::V1_0_0.plugin_schema_id(), "name": name });
            violations(SpecVersion::V1_0_0, Contract::Manifest, &doc).is_empty()
        };
        for ok in [
            "my-plugin",
            "acme.tools",
            "lint3r",
            "a",
            "con",
            &"a".repeat(64),
        ] {
            assert!(check(ok), "{ok}");
        }
        for bad in [
            "My-Plugin",
            "-start",
            "end-",
            "has--double",
            "too..dots",
            "",
            "é",
            "a/b",
            ".",
            "..",
            "a_b",
            &"a".repeat(65),
            ".a",
            "a.",
        ] {
            assert!(!check(bad), "{bad:?}");
        }
    }
}
