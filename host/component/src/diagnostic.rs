//! Diagnostics: every refusal, skip or shadowing a loader decides, with a stable code.

use std::fmt;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;
use strum::{IntoStaticStr, VariantArray};

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something worth knowing that changes nothing (a disabled package, say).
    Info,
    /// A part was ignored or shadowed; everything else loaded.
    Warning,
    /// A component (or a whole plugin) was refused.
    Error,
}

impl Severity {
    /// The lowercase word used in JSON and human output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Stable, kebab-case diagnostic codes. Tests and scripts match on these, never on message text.
///
/// The table in `docs/diagnostics.md` documents every code; a test keeps the two in step. The
/// list of codes ([`DiagnosticCode::ALL`]) and their spelling ([`DiagnosticCode::as_str`]) are
/// derived from the variants, so a new code cannot be left out of either.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, VariantArray, IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum DiagnosticCode {
    /// `plugin.json` is not valid JSON (or not UTF-8, or has duplicate keys).
    ManifestInvalidJson,
    /// `plugin.json` violates the manifest schema or a rule the schema cannot express.
    ManifestInvalid,
    /// `plugin.json` declares a `$schema` this build does not support (or none at all).
    ManifestUnsupportedSchema,
    /// `plugin.json` has a top-level field the closed schema does not define (ignored).
    ManifestUnknownField,
    /// `plugin.json` `extensions` is not an object (ignored).
    ManifestExtensionsNotObject,
    /// `plugin.json` cannot be read: not a regular file, too large, permission denied.
    ManifestUnreadable,
    /// A package path resolves outside the plugin root.
    PathEscape,
    /// A plugin with the same name in a nearer root wins over this one.
    PluginShadowed,
    /// The plugin is disabled in `plugins.toml` and contributes nothing.
    PluginDisabled,
    /// A loaded plugin contributes no usable skill, MCP server or WASM tool component.
    PluginNoComponents,
    /// A plugin root (or one of its entries) could not be read.
    PluginRootUnreadable,
    /// `skills` exists but is not a directory inside the plugin root.
    SkillsLocationInvalid,
    /// A `SKILL.md` does not conform to the Agent Skills specification.
    SkillInvalid,
    /// A skill with the same name from a higher-precedence source wins over this one.
    SkillShadowed,
    /// A loose skill root exists but cannot be listed.
    SkillRootUnreadable,
    /// `mcp.json` is unreadable, not valid JSON, or violates the top-level schema.
    McpConfigInvalid,
    /// `mcp.json` targets another Agent Plugins version than `plugin.json`.
    McpVersionMismatch,
    /// One `mcp.json` server entry is invalid; its siblings still load.
    McpServerInvalid,
    /// One `mcp.json` server entry uses a transport rho does not support (legacy `sse`).
    McpTransportUnsupported,
    /// `mcp.json` declares more servers than rho accepts from one plugin.
    McpTooManyServers,
    /// A `plugins.toml` activation state file could not be read or parsed.
    StateFileInvalid,
    /// `config.toml` cannot be used (unreadable, a syntax error, an unknown top-level key);
    /// built-in components and plugins still load.
    ConfigInvalid,
    /// An enabled MCP server did not start, finish its handshake or list its tools within its
    /// budget; only that server is left out of the session.
    McpServerFailed,
    /// A connected MCP server offers more tools than rho exports from one server; the first
    /// ones are mounted and the rest left out (the message says how many).
    McpToolsCapped,
    /// Two tools would be exported under the same name; the one from the lower-precedence
    /// source is not mounted.
    ToolNameCollision,
    /// A project plugin declares MCP servers but the user has not trusted it (or it changed
    /// since): its servers are not started until `rho plugins trust <name>`.
    PluginUntrusted,
    /// `extensions["dev.rho"]` (rho's own namespace) is malformed: not an object, an unknown
    /// key, or `tools` not an object.
    ExtensionInvalid,
    /// One WASM tool component cannot be used: bad settings, a missing or oversized file, an
    /// invalid name, or a component that does not load; the plugin's other parts still load.
    WasmComponentInvalid,
}

impl DiagnosticCode {
    /// Every code, in documentation (declaration) order.
    pub const ALL: &'static [DiagnosticCode] = <Self as strum::VariantArray>::VARIANTS;

    /// The stable kebab-case string (the variant's name in kebab case).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl fmt::Display for DiagnosticCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

crate::serialize_as_words!(
    DiagnosticCode,
    "A stable diagnostic code (`docs/diagnostics.md`)."
);

/// One thing a loader refused, skipped, shadowed or wants the user to know.
///
/// This is its JSON shape too, in `rho … --json` and on the RPC wire: `{severity, code,
/// message, component, path}`, the path as text even when it is not UTF-8.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Diagnostic {
    /// `error`, `warning` or `info`.
    pub severity: Severity,
    /// The stable code.
    pub code: DiagnosticCode,
    /// A lower-case sentence for people; never contains a secret value.
    pub message: String,
    /// The component it is about: a plugin name, `plugin/skill`, `plugin/server`, a skill name.
    pub component: Option<String>,
    /// The file or directory the diagnostic is about, when there is one.
    #[serde(serialize_with = "crate::lossy_path::option::serialize")]
    #[schemars(with = "Option<String>")]
    pub path: Option<PathBuf>,
}

impl Diagnostic {
    /// A diagnostic with the given severity, code and message.
    pub fn new(severity: Severity, code: DiagnosticCode, message: impl Into<String>) -> Self {
        Self {
            severity,
            code,
            message: message.into(),
            path: None,
            component: None,
        }
    }

    /// An error-severity diagnostic.
    pub fn error(code: DiagnosticCode, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, message)
    }

    /// A warning-severity diagnostic.
    pub fn warning(code: DiagnosticCode, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, message)
    }

    /// An info-severity diagnostic.
    pub fn info(code: DiagnosticCode, message: impl Into<String>) -> Self {
        Self::new(Severity::Info, code, message)
    }

    /// Attaches the path the diagnostic is about.
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Attaches the component the diagnostic is about.
    pub fn with_component(mut self, component: impl Into<String>) -> Self {
        self.component = Some(component.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.severity, self.code)?;
        if let Some(component) = &self.component {
            write!(f, " {component}:")?;
        }
        write!(f, " {}", self.message)?;
        if let Some(path) = &self.path {
            write!(f, " ({})", path.display())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_kebab_case() {
        let mut seen = std::collections::BTreeSet::new();
        for code in DiagnosticCode::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "duplicate code {s}");
            assert!(
                s.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{s}"
            );
        }
    }

    #[test]
    fn serializes_code_as_string() {
        let d = Diagnostic::error(DiagnosticCode::PathEscape, "escapes").with_path("/x");
        let v = serde_json::to_value(&d).unwrap_or_default();
        assert_eq!(v["code"], "path-escape");
        assert_eq!(v["severity"], "error");
        assert_eq!(v["path"], "/x");
    }
}
