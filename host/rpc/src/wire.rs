//! The wire's own shapes: method params, and the envelopes of results and notifications whose
//! shape is not a host type's. Where a host type is the shape (a question, a session, a
//! server's prompt or resource, a restart, a health-report row, ...), it derives `Serialize`
//! and `JsonSchema` itself and `methods.rs` names it directly; nothing here mirrors it. Params
//! deserialize strictly (unknown fields are `-32602`); results and notifications serialize
//! exactly as `docs/rpc.md` spells them (`wire_snapshots.rs` keeps the bytes). The OpenRPC
//! document in `schemas/rho-rpc.openrpc.json` is generated from these types and the host's
//! (`openrpc.rs`). A field that
//! holds one of a fixed set of words is an enum, never a `String`: a host enum where the host
//! has one (its serde spelling is the wire's and its schema lists its values; [`FinishReason`],
//! which also keeps values rho does not know, builds its value set from its own list), or,
//! where the host value carries data
//! (a server's error, a skill's plugin), a wire enum converted from it by an exhaustive match
//! (`---------- wire enums ----------`). Either way the document lists exactly what the host
//! can send.

use std::path::PathBuf;

use rho_component::{Diagnostic, RiskLevel, Scope, SkillSource, ToolOrigin};
use rho_core::provider::{FinishReason, Role};
use rho_core::session::LoopState;
use rho_core::{PluginStatus, ProviderSource, ServerSource, ServerStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod notifications;
mod params;
mod results;

pub use notifications::*;
pub use params::*;
pub use results::*;

// ---------- wire enums ----------
//
// Host values that carry data (a skill's plugin, a server's error, a tool's server) reach the
// wire as one word; these enums are those words, each converted from the host type by an
// exhaustive match, so a new host variant cannot go unspelled.

/// Where a skill comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SkillSourceWire {
    /// Embedded in the rho binary.
    Builtin,
    /// A loose skill folder under the user's home.
    User,
    /// A loose skill folder in the project.
    Project,
    /// A plugin installed in the project.
    ProjectPlugin,
    /// A plugin installed for the user.
    UserPlugin,
}

impl From<&SkillSource> for SkillSourceWire {
    fn from(source: &SkillSource) -> Self {
        match source {
            SkillSource::BuiltIn => Self::Builtin,
            SkillSource::User => Self::User,
            SkillSource::Project => Self::Project,
            SkillSource::Plugin {
                scope: Scope::Project,
                ..
            } => Self::ProjectPlugin,
            SkillSource::Plugin {
                scope: Scope::User, ..
            } => Self::UserPlugin,
        }
    }
}

/// The live state of an MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ServerStatusWire {
    /// Valid and enabled, not started, nothing known of its tools yet (a lazy server whose
    /// first start, filling the tool cache, is still to come).
    Configured,
    /// Not started: its tools come from the tool cache; the first use starts it.
    Known,
    /// Running (handshake done, tools listed), not used yet in this session.
    Started,
    /// Running, and used by a call, a prompt or a resource read.
    Used,
    /// Disabled by its entry or its plugin.
    Disabled,
    /// A project plugin's server the user has not trusted; never started (`error` says how
    /// to trust it).
    Untrusted,
    /// Its entry is invalid or it failed to start (`error` says why).
    Failed,
    /// Valid and enabled, but the session's runtime loads no MCP server of rho's
    /// (`notLoaded` says which: `Claude CLI runtime`); never started.
    #[serde(rename = "not_loaded")]
    NotLoaded,
}

impl From<&ServerStatus> for ServerStatusWire {
    fn from(status: &ServerStatus) -> Self {
        match status {
            ServerStatus::Configured => Self::Configured,
            ServerStatus::Known => Self::Known,
            ServerStatus::Started => Self::Started,
            ServerStatus::Used => Self::Used,
            ServerStatus::Disabled => Self::Disabled,
            ServerStatus::Untrusted(_) => Self::Untrusted,
            ServerStatus::Invalid(_) | ServerStatus::Failed(_) => Self::Failed,
            ServerStatus::NotLoaded(_) => Self::NotLoaded,
        }
    }
}

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolSourceWire {
    /// Compiled into rho.
    Builtin,
    /// Served by an MCP server (`server` names it).
    Mcp,
    /// Exported by a WASM component of a plugin (`plugin` names it).
    Wasm,
}

impl From<&ToolOrigin> for ToolSourceWire {
    fn from(origin: &ToolOrigin) -> Self {
        match origin {
            ToolOrigin::Builtin => Self::Builtin,
            ToolOrigin::Mcp { .. } => Self::Mcp,
            ToolOrigin::Wasm { .. } => Self::Wasm,
        }
    }
}

#[cfg(test)]
mod tests {
    use rho_component::{PermissionMode, Severity};
    use rho_core::doctor::{CheckKind, CheckStatus};

    use super::*;

    /// The JSON string `value` serializes to.
    fn spelling<T: Serialize>(value: T) -> String {
        serde_json::to_value(value)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }

    /// Host enums that reach the wire as themselves are spelled by serde; the host's own
    /// `as_str()` (tables, text output) must say the same.
    #[test]
    fn host_enums_serialize_as_their_as_str_spelling() {
        for s in [Severity::Info, Severity::Warning, Severity::Error] {
            assert_eq!(spelling(s), s.as_str());
        }
        for r in [RiskLevel::Read, RiskLevel::Write, RiskLevel::Destructive] {
            assert_eq!(spelling(r), r.as_str());
        }
        for m in PermissionMode::ALL {
            assert_eq!(spelling(m), m.as_str());
        }
        for s in [Scope::User, Scope::Project] {
            assert_eq!(spelling(s), s.as_str());
        }
        for s in [
            PluginStatus::Loaded,
            PluginStatus::Disabled,
            PluginStatus::Rejected,
            PluginStatus::Shadowed,
        ] {
            assert_eq!(spelling(s), s.as_str());
        }
        for s in [
            ProviderSource::Flags,
            ProviderSource::Config,
            ProviderSource::Builtin,
        ] {
            assert_eq!(spelling(s), s.as_str());
        }
        for s in [ServerSource::Config, ServerSource::Plugin] {
            assert_eq!(spelling(s), s.as_str());
        }
        for s in [CheckStatus::Ok, CheckStatus::Warning, CheckStatus::Error] {
            assert_eq!(spelling(s), s.as_str());
        }
        for &k in CheckKind::ALL {
            assert_eq!(spelling(k), k.as_str());
        }
    }

    /// The wire-only enums say what the host's own words for the same values say.
    #[test]
    fn wire_enums_spell_as_the_host_does() {
        let plugin = |scope| SkillSource::Plugin {
            plugin: "p".to_owned(),
            scope,
        };
        for s in [
            SkillSource::BuiltIn,
            SkillSource::User,
            SkillSource::Project,
            plugin(Scope::Project),
            plugin(Scope::User),
        ] {
            assert_eq!(spelling(SkillSourceWire::from(&s)), s.kind());
        }
        for s in [
            ServerStatus::Configured,
            ServerStatus::Known,
            ServerStatus::Started,
            ServerStatus::Used,
            ServerStatus::Disabled,
            ServerStatus::Invalid("x".to_owned()),
            ServerStatus::Failed("x".to_owned()),
            ServerStatus::Untrusted("x".to_owned()),
            ServerStatus::NotLoaded(rho_core::NotLoadedReason::ClaudeRuntime),
        ] {
            assert_eq!(spelling(ServerStatusWire::from(&s)), s.as_str());
        }
        for o in [
            ToolOrigin::Builtin,
            ToolOrigin::Mcp {
                server: "s".to_owned(),
                plugin: None,
                tool: "t".to_owned(),
            },
            ToolOrigin::Wasm {
                plugin: "p".to_owned(),
                component: "c".to_owned(),
                tool: "t".to_owned(),
            },
        ] {
            assert_eq!(spelling(ToolSourceWire::from(&o)), o.kind());
        }
    }
}
