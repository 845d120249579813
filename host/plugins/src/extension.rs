//! rho's Agent Plugins client extension (`dev.rho`, §8): WASM tool components in the plugin's
//! `dev.rho/tools/<name>.wasm` with per-component settings in `plugin.json`
//! `extensions["dev.rho"].tools.<name>`. Other clients ignore both (§8.1); rho validates its
//! own namespace strictly: a problem with one component leaves it out and names it, the rest
//! of the plugin loads.

use std::path::Path;
use std::time::Duration;

use rho_component::{
    DEFAULT_WASM_MAX_OUTPUT_BYTES, DEFAULT_WASM_MEMORY, DEFAULT_WASM_TIMEOUT, Diagnostic,
    DiagnosticCode, MAX_WASM_MEMORY, MAX_WASM_TIMEOUT, RHO_NAMESPACE, RiskLevel, WasmComponentSpec,
    WorkspaceAccess, valid_env_name,
};
use serde_json::{Map, Value};

use crate::containment::{Beneath, ContainError};

/// The directory of tool components inside a plugin.
pub const TOOLS_DIR: &str = "dev.rho/tools";
/// A component file larger than this is refused before compiling (compile-time DoS).
pub const COMPONENT_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// At most this many components per plugin.
pub const MAX_COMPONENTS_PER_PLUGIN: usize = 32;

/// The keys a component's settings accept.
pub const COMPONENT_KEYS: &[&str] = &["workspace", "env", "timeout_ms", "memory_mib", "risk"];

/// Components found and the problems with them.
#[derive(Debug, Default)]
pub(crate) struct ExtensionOutcome {
    pub components: Vec<WasmComponentSpec>,
    pub diagnostics: Vec<Diagnostic>,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// One component's validated settings.
struct Settings {
    workspace: WorkspaceAccess,
    env: Vec<String>,
    timeout: Duration,
    memory: u64,
    risk: Option<RiskLevel>,
}

/// Settings of one component, validated. Problems name the key, never quote values.
fn settings(name: &str, value: Option<&Value>) -> Result<Settings, Vec<String>> {
    let key = |k: &str| format!("extensions.{RHO_NAMESPACE}.tools.{name}.{k}");
    let mut problems = Vec::new();
    let empty = Map::new();
    let map = match value {
        None => &empty,
        Some(Value::Object(map)) => map,
        Some(_) => {
            return Err(vec![format!(
                "extensions.{RHO_NAMESPACE}.tools.{name} must be an object"
            )]);
        }
    };
    for k in map.keys() {
        if !COMPONENT_KEYS.contains(&k.as_str()) {
            problems.push(format!(
                "{}: unknown key (expected one of {})",
                key(k),
                COMPONENT_KEYS.join(", ")
            ));
        }
    }
    let workspace = match map.get("workspace") {
        None => WorkspaceAccess::None,
        Some(Value::String(s)) if s == "none" => WorkspaceAccess::None,
        Some(Value::String(s)) if s == "read" => WorkspaceAccess::Read,
        Some(Value::String(s)) if s == "read-write" => WorkspaceAccess::ReadWrite,
        Some(_) => {
            problems.push(format!(
                "{}: must be \"none\", \"read\" or \"read-write\"",
                key("workspace")
            ));
            WorkspaceAccess::None
        }
    };
    let mut env = Vec::new();
    match map.get("env") {
        None => {}
        Some(Value::Array(items)) => {
            for item in items {
                match item.as_str() {
                    Some(n) if valid_env_name(n) => env.push(n.to_owned()),
                    _ => problems.push(format!(
                        "{}: every entry must be a variable name (ASCII letters, digits, '_')",
                        key("env")
                    )),
                }
            }
        }
        Some(_) => problems.push(format!(
            "{}: must be an array of variable names",
            key("env")
        )),
    }
    let timeout = match map.get("timeout_ms") {
        None => DEFAULT_WASM_TIMEOUT,
        Some(v) => match v.as_u64() {
            Some(ms) if ms >= 1 && u128::from(ms) <= MAX_WASM_TIMEOUT.as_millis() => {
                Duration::from_millis(ms)
            }
            _ => {
                problems.push(format!(
                    "{}: must be an integer from 1 to {}",
                    key("timeout_ms"),
                    MAX_WASM_TIMEOUT.as_millis()
                ));
                DEFAULT_WASM_TIMEOUT
            }
        },
    };
    let max_mib = MAX_WASM_MEMORY / (1024 * 1024);
    let memory = match map.get("memory_mib") {
        None => DEFAULT_WASM_MEMORY,
        Some(v) => match v.as_u64() {
            Some(mib) if (1..=max_mib).contains(&mib) => mib * 1024 * 1024,
            _ => {
                problems.push(format!(
                    "{}: must be an integer from 1 to {max_mib}",
                    key("memory_mib")
                ));
                DEFAULT_WASM_MEMORY
            }
        },
    };
    let risk = match map.get("risk") {
        None => None,
        Some(Value::String(s)) if s == "read" => Some(RiskLevel::Read),
        Some(Value::String(s)) if s == "write" => Some(RiskLevel::Write),
        Some(Value::String(s)) if s == "destructive" => Some(RiskLevel::Destructive),
        Some(_) => {
            problems.push(format!(
                "{}: must be \"read\", \"write\" or \"destructive\"",
                key("risk")
            ));
            None
        }
    };
    if let Some(declared) = risk
        && declared < workspace.least_risk()
    {
        problems.push(format!(
            "{}: {} is below what workspace access {} allows ({}); a component cannot claim \
             less than its capabilities",
            key("risk"),
            declared,
            workspace.as_str(),
            workspace.least_risk()
        ));
    }
    if problems.is_empty() {
        Ok(Settings {
            workspace,
            env,
            timeout,
            memory,
            risk,
        })
    } else {
        Err(problems)
    }
}

/// Reads `extensions["dev.rho"]` and `dev.rho/tools/*.wasm` of a loaded plugin.
pub(crate) fn load_tool_components(
    plugin: &str,
    beneath: &Beneath,
    extensions: &Map<String, Value>,
) -> ExtensionOutcome {
    let mut out = ExtensionOutcome::default();
    let root = beneath.root();
    let manifest_path = root.join(crate::MANIFEST_FILE);
    let namespace_diag = |message: String| {
        Diagnostic::error(DiagnosticCode::ExtensionInvalid, message)
            .with_path(&manifest_path)
            .with_component(format!("{plugin}/{RHO_NAMESPACE}"))
    };
    let mut declared: Map<String, Value> = Map::new();
    match extensions.get(RHO_NAMESPACE) {
        None => {}
        Some(Value::Object(ns)) => {
            for k in ns.keys() {
                if k != "tools" {
                    out.diagnostics.push(namespace_diag(format!(
                        "extensions.{RHO_NAMESPACE}.{k}: unknown key (expected tools); ignored"
                    )));
                }
            }
            match ns.get("tools") {
                None => {}
                Some(Value::Object(tools)) => declared = tools.clone(),
                Some(_) => out.diagnostics.push(namespace_diag(format!(
                    "extensions.{RHO_NAMESPACE}.tools must be an object; no tool component of \
                     this plugin is loaded"
                ))),
            }
        }
        Some(_) => {
            out.diagnostics.push(namespace_diag(format!(
                "extensions.{RHO_NAMESPACE} must be an object; no tool component of this \
                 plugin is loaded"
            )));
            return out;
        }
    }
    let location = root.join(TOOLS_DIR);
    let component_diag = |name: &str, path: &Path, message: String| {
        Diagnostic::error(DiagnosticCode::WasmComponentInvalid, message)
            .with_path(path)
            .with_component(format!("{plugin}/{name}"))
    };
    let mut files: Vec<String> = Vec::new();
    if std::fs::symlink_metadata(&location).is_ok() {
        match beneath.dir(Path::new(TOOLS_DIR)) {
            Ok(dir) => match std::fs::read_dir(&dir) {
                Ok(entries) => {
                    for entry in entries.filter_map(Result::ok) {
                        let file_name = entry.file_name();
                        let Some(file_name) = file_name.to_str() else {
                            continue;
                        };
                        if let Some(stem) = file_name.strip_suffix(".wasm") {
                            files.push(stem.to_owned());
                        }
                    }
                }
                Err(e) => out.diagnostics.push(component_diag(
                    "tools",
                    &location,
                    format!("{TOOLS_DIR}/ cannot be listed: {e}"),
                )),
            },
            Err(e) => out.diagnostics.push(component_diag(
                "tools",
                &location,
                format!("{TOOLS_DIR}/ {e}; no tool component of this plugin is loaded"),
            )),
        }
    }
    files.sort();
    if files.len() > MAX_COMPONENTS_PER_PLUGIN {
        out.diagnostics.push(component_diag(
            "tools",
            &location,
            format!(
                "{} components in {TOOLS_DIR}/; only the first {MAX_COMPONENTS_PER_PLUGIN} \
                 (by name) are used",
                files.len()
            ),
        ));
        files.truncate(MAX_COMPONENTS_PER_PLUGIN);
    }
    for name in declared.keys() {
        if !files.contains(name) {
            out.diagnostics.push(component_diag(
                name,
                &location.join(format!("{name}.wasm")),
                format!(
                    "extensions.{RHO_NAMESPACE}.tools.{name} has no component file \
                     {TOOLS_DIR}/{name}.wasm"
                ),
            ));
        }
    }
    for name in files {
        let rel = Path::new(TOOLS_DIR).join(format!("{name}.wasm"));
        let path = root.join(&rel);
        if !valid_name(&name) {
            out.diagnostics.push(component_diag(
                &name,
                &path,
                "a component name may contain only ASCII letters, digits, '-' and '_' (at \
                 most 64)"
                    .into(),
            ));
            continue;
        }
        match beneath.open_regular(&rel, COMPONENT_MAX_BYTES) {
            Ok(_) => {}
            Err(ContainError::TooLarge(_)) => {
                out.diagnostics.push(component_diag(
                    &name,
                    &path,
                    format!(
                        "the component is larger than {} MiB",
                        COMPONENT_MAX_BYTES / (1024 * 1024)
                    ),
                ));
                continue;
            }
            Err(e) => {
                let code_message = format!("{} {e}", rel.display());
                let code = if matches!(e, ContainError::Escape(_)) {
                    DiagnosticCode::PathEscape
                } else {
                    DiagnosticCode::WasmComponentInvalid
                };
                out.diagnostics.push(
                    Diagnostic::error(code, code_message)
                        .with_path(&path)
                        .with_component(format!("{plugin}/{name}")),
                );
                continue;
            }
        }
        match settings(&name, declared.get(&name)) {
            Ok(settings) => {
                out.components.push(WasmComponentSpec {
                    plugin: plugin.to_owned(),
                    name: name.clone(),
                    path,
                    workspace: settings.workspace,
                    env: settings.env,
                    timeout: settings.timeout,
                    memory_limit: settings.memory,
                    risk: settings.risk.unwrap_or(settings.workspace.least_risk()),
                    max_output_bytes: DEFAULT_WASM_MAX_OUTPUT_BYTES,
                });
            }
            Err(problems) => out.diagnostics.push(component_diag(
                &name,
                &manifest_path,
                format!("component {name} is not loaded: {}", problems.join("; ")),
            )),
        }
    }
    out
}

/// Reads a component's bytes again under the containment rules (a link swapped in since
/// discovery cannot lead outside the root).
pub(crate) fn read_component(beneath: &Beneath, name: &str) -> Result<Vec<u8>, ContainError> {
    if !valid_name(name) {
        return Err(ContainError::Missing);
    }
    beneath.read(
        &Path::new(TOOLS_DIR).join(format!("{name}.wasm")),
        COMPONENT_MAX_BYTES,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn plugin(files: &[&str]) -> (tempfile::TempDir, Beneath) {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join(TOOLS_DIR)).unwrap();
        for file in files {
            std::fs::write(root.join(TOOLS_DIR).join(file), b"\0asm").unwrap();
        }
        (dir, Beneath::new(root))
    }

    fn extensions(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    fn codes(out: &ExtensionOutcome) -> Vec<&'static str> {
        out.diagnostics.iter().map(|d| d.code.as_str()).collect()
    }

    #[test]
    fn components_get_defaults_and_declared_settings() {
        let (_dir, beneath) = plugin(&["conv.wasm", "stats.wasm", "notes.txt"]);
        let out = load_tool_components(
            "p",
            &beneath,
            &extensions(
                r#"{"dev.rho": {"tools": {"conv": {"workspace": "read-write", "env": ["LANG"],
                    "timeout_ms": 2500, "memory_mib": 16, "risk": "destructive"}}},
                    "com.other": {"anything": [1, 2]}}"#,
            ),
        );
        assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
        assert_eq!(out.components.len(), 2);
        let conv = &out.components[0];
        assert_eq!(conv.workspace, WorkspaceAccess::ReadWrite);
        assert_eq!(conv.env, ["LANG"]);
        assert_eq!(conv.timeout, Duration::from_millis(2500));
        assert_eq!(conv.memory_limit, 16 * 1024 * 1024);
        assert_eq!(conv.risk, RiskLevel::Destructive);
        let stats = &out.components[1];
        assert_eq!(stats.workspace, WorkspaceAccess::None);
        assert_eq!(stats.risk, RiskLevel::Read);
        assert_eq!(stats.timeout, DEFAULT_WASM_TIMEOUT);
    }

    #[test]
    fn bad_settings_fail_one_component_and_name_the_key() {
        let (_dir, beneath) = plugin(&["a.wasm", "b.wasm"]);
        let out = load_tool_components(
            "p",
            &beneath,
            &extensions(
                r#"{"dev.rho": {"tools": {"a": {"workspace": "all", "timeout_ms": 0,
                    "risk": "read", "env": ["sk-secret value"], "colour": 1},
                    "b": {"workspace": "read-write", "risk": "read"},
                    "ghost": {}}, "themes": {}}}"#,
            ),
        );
        assert!(out.components.is_empty());
        let text: Vec<String> = out.diagnostics.iter().map(|d| d.message.clone()).collect();
        let all = text.join("\n");
        for needle in [
            "tools.a.workspace",
            "tools.a.timeout_ms",
            "tools.a.env",
            "tools.a.colour",
            "tools.b.risk",
            "tools.ghost has no component file",
            "dev.rho.themes",
        ] {
            assert!(all.contains(needle), "{needle} missing from {all}");
        }
        assert!(!all.contains("sk-secret"), "{all}");
        assert!(codes(&out).contains(&"extension-invalid"));
        assert!(codes(&out).contains(&"wasm-component-invalid"));
    }

    #[test]
    fn a_non_object_namespace_loads_no_component() {
        let (_dir, beneath) = plugin(&["a.wasm"]);
        let out = load_tool_components("p", &beneath, &extensions(r#"{"dev.rho": 5}"#));
        assert!(out.components.is_empty());
        assert_eq!(codes(&out), ["extension-invalid"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_component_linked_outside_the_plugin_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("evil.wasm"), b"\0asm").unwrap();
        let (dir, beneath) = plugin(&[]);
        std::os::unix::fs::symlink(
            outside.path().join("evil.wasm"),
            dir.path().join(TOOLS_DIR).join("evil.wasm"),
        )
        .unwrap();
        let out = load_tool_components("p", &beneath, &Map::new());
        assert!(out.components.is_empty());
        assert_eq!(codes(&out), ["path-escape"]);
        assert!(read_component(&beneath, "evil").is_err());
    }
}
