//! WASM tools in the tool set: the components built into rho and those of loaded plugins,
//! loaded through one [`rho_wasm::WasmHost`] (compiled components cached under
//! `$RHO_HOME/cache/wasm`). Built-in components export their tools under their own names;
//! plugin tools are `wasm__<plugin>__<tool>`. A component that fails to load is reported
//! (`wasm-component-invalid`) and leaves every other tool in place. With no component at all,
//! no engine is started.

use std::path::PathBuf;
use std::sync::Arc;

use rho_component::naming::{ExportedNames, WASM_PREFIX};
use rho_component::{
    DEFAULT_WASM_MAX_OUTPUT_BYTES, DEFAULT_WASM_MEMORY, DEFAULT_WASM_TIMEOUT, Diagnostic,
    DiagnosticCode, RiskLevel, Tool, ToolOrigin, ToolSpec, WasmComponentSpec,
};

use super::Registry;

/// One component to load, with where its bytes come from.
enum Source<'a> {
    Builtin(&'static [u8]),
    Plugin(&'a rho_plugins::PluginRecord),
}

/// The plugin name built-in components are attributed to in logs and errors.
pub const BUILTIN_OWNER: &str = "rho";

/// Loads every WASM component and returns the tools to mount and the problems found.
pub(crate) async fn wasm_tools(
    registry: &Registry,
    names: &mut ExportedNames,
) -> (Vec<Arc<dyn Tool>>, Vec<Diagnostic>) {
    let mut components: Vec<(WasmComponentSpec, Source<'_>)> = Vec::new();
    for builtin in rho_builtin_plugins::builtin_components() {
        components.push((
            WasmComponentSpec {
                plugin: BUILTIN_OWNER.to_owned(),
                name: builtin.name.to_owned(),
                path: PathBuf::from(format!("builtin:{}", builtin.name)),
                workspace: builtin.workspace,
                env: Vec::new(),
                timeout: DEFAULT_WASM_TIMEOUT,
                memory_limit: DEFAULT_WASM_MEMORY,
                risk: builtin.workspace.least_risk(),
                max_output_bytes: DEFAULT_WASM_MAX_OUTPUT_BYTES,
            },
            Source::Builtin(builtin.bytes),
        ));
    }
    let mut diagnostics = Vec::new();
    for record in registry.plugins.loaded() {
        if record.package.tool_components.is_empty() {
            continue;
        }
        // A project plugin runs its components only once the user trusted it, as for its
        // MCP servers (the fingerprint covers each component's bytes and capabilities).
        let trust = registry.trust.state(record);
        if !trust.allows_start() {
            let message = super::untrusted_message(&record.name, &trust);
            for spec in &record.package.tool_components {
                diagnostics.push(
                    Diagnostic::warning(DiagnosticCode::PluginUntrusted, message.clone())
                        .with_path(&spec.path)
                        .with_component(format!("{}/{}", spec.plugin, spec.name)),
                );
            }
            continue;
        }
        for spec in &record.package.tool_components {
            components.push((spec.clone(), Source::Plugin(record)));
        }
    }
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    if components.is_empty() {
        return (tools, diagnostics);
    }
    let failed = |spec: &WasmComponentSpec, message: String| {
        Diagnostic::error(DiagnosticCode::WasmComponentInvalid, message)
            .with_path(&spec.path)
            .with_component(format!("{}/{}", spec.plugin, spec.name))
    };
    let cache = registry.paths.rho_home.join("cache").join("wasm");
    let host = match rho_wasm::WasmHost::new(Some(cache)) {
        Ok(host) => host,
        Err(e) => {
            for (spec, _) in &components {
                diagnostics.push(failed(spec, format!("the WASM engine did not start: {e}")));
            }
            return (tools, diagnostics);
        }
    };
    for (spec, source) in components {
        let builtin = matches!(source, Source::Builtin(_));
        let bytes: std::borrow::Cow<'_, [u8]> = match source {
            Source::Builtin(bytes) => std::borrow::Cow::Borrowed(bytes),
            Source::Plugin(record) => match record.read_component(&spec.name) {
                Ok(bytes) => std::borrow::Cow::Owned(bytes),
                Err(e) => {
                    diagnostics.push(failed(&spec, e.to_string()));
                    continue;
                }
            },
        };
        let loaded = match host.load(&spec, &bytes).await {
            Ok(loaded) => loaded,
            Err(e) => {
                diagnostics.push(failed(&spec, e.to_string()));
                continue;
            }
        };
        for rejected in loaded.rejected() {
            diagnostics.push(failed(&spec, rejected.to_string()));
        }
        for guest in loaded.tools() {
            let (name, origin, attribution) = if builtin {
                (
                    guest.name.replace('-', "_"),
                    ToolOrigin::Builtin,
                    format!("(built-in WASM tool `{}`)", guest.name),
                )
            } else {
                (
                    names.assign_with(WASM_PREFIX, &spec.plugin, &guest.name),
                    ToolOrigin::Wasm {
                        plugin: spec.plugin.clone(),
                        component: spec.name.clone(),
                        tool: guest.name.clone(),
                    },
                    format!("(WASM tool `{}` of plugin `{}`)", guest.name, spec.plugin),
                )
            };
            // Annotations can raise the level, never lower it.
            let risk = if guest.annotations.is_some_and(|a| a.destructive) {
                RiskLevel::Destructive
            } else {
                spec.risk
            };
            let tool_spec = ToolSpec {
                name,
                title: guest.title.clone(),
                description: format!("{}\n{attribution}", guest.description),
                input_schema: guest.input_schema.clone(),
                output_schema: guest.output_schema.clone(),
                risk,
                origin,
            };
            tools.push(loaded.tool(&guest.name, tool_spec));
        }
    }
    (tools, diagnostics)
}
