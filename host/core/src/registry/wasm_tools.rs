//! WASM tools in the tool set: the components built into rho and those of loaded plugins,
//! loaded through one [`rho_wasm::WasmHost`] (compiled components cached under
//! `$RHO_HOME/cache/wasm`). Built-in components export their tools under their own names;
//! plugin tools are `wasm__<plugin>__<tool>`. A component that fails to load is reported
//! (`wasm-component-invalid`) and leaves every other tool in place. With no component at all,
//! no engine is started.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use rho_component::naming::{ExportedNames, WASM_PREFIX};
use rho_component::{
    DEFAULT_WASM_MAX_OUTPUT_BYTES, DEFAULT_WASM_MEMORY, DEFAULT_WASM_TIMEOUT, Diagnostic,
    DiagnosticCode, RiskLevel, Tool, ToolOrigin, ToolSpec, WasmComponentSpec,
};

use rho_config::RhoPaths;

use super::Registry;

/// How loading one component ended: the loaded component, or why it does not load (naming
/// what failed, ready for a diagnostic).
pub type LoadOutcome = Result<Arc<rho_wasm::LoadedComponent>, String>;

/// Where compiled components are cached: `$RHO_HOME/cache/wasm`.
pub fn wasm_cache_dir(paths: &RhoPaths) -> PathBuf {
    paths.rho_home.join("cache").join("wasm")
}

/// A component's bytes (borrowed for a built-in one), or why they could not be read.
type ComponentBytes = Result<Cow<'static, [u8]>, String>;

/// Compiles (or takes from the cache) and instantiates every component of `record`, one
/// outcome per declared component in declaration order. This runs the plugin's code: callers
/// check first that the plugin may run (`TrustState::allows_start`).
pub async fn load_plugin_components(
    paths: &RhoPaths,
    record: &rho_plugins::PluginRecord,
) -> Vec<LoadOutcome> {
    let inputs = record
        .package
        .tool_components
        .iter()
        .map(|spec| {
            let bytes = record
                .read_component(&spec.name)
                .map(Cow::Owned)
                .map_err(|e| e.to_string());
            (spec.clone(), bytes)
        })
        .collect();
    load_components(wasm_cache_dir(paths), inputs).await
}

/// Loads `components` (each with its bytes, or why they could not be read) through one
/// [`rho_wasm::WasmHost`] caching under `cache`; outcomes come in input order. With no
/// component, no engine is started.
async fn load_components(
    cache: PathBuf,
    components: Vec<(WasmComponentSpec, ComponentBytes)>,
) -> Vec<LoadOutcome> {
    if components.is_empty() {
        return Vec::new();
    }
    let host = match rho_wasm::WasmHost::new(Some(cache)) {
        Ok(host) => host,
        Err(e) => {
            let message = format!("the WASM engine did not start: {e}");
            return vec![Err(message); components.len()];
        }
    };
    // Components load concurrently, as many at a time as there are cores (a cold compile
    // takes a core, and each holds its code in memory until done); outcomes are kept in
    // input order, so what callers name never depends on which load finished first.
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let permits = Arc::new(tokio::sync::Semaphore::new(cores));
    let mut loading = tokio::task::JoinSet::new();
    let mut outcomes: Vec<Option<LoadOutcome>> = Vec::with_capacity(components.len());
    for (index, (spec, bytes)) in components.into_iter().enumerate() {
        let bytes = match bytes {
            Ok(bytes) => bytes,
            Err(message) => {
                outcomes.push(Some(Err(message)));
                continue;
            }
        };
        let host = host.clone();
        let permits = permits.clone();
        loading.spawn(async move {
            // The semaphore is never closed, so a permit always comes.
            let _permit = permits.acquire_owned().await.ok();
            (index, host.load(&spec, &bytes).await)
        });
        outcomes.push(None);
    }
    while let Some(joined) = loading.join_next().await {
        match joined {
            Ok((index, result)) => {
                if let Some(slot) = outcomes.get_mut(index) {
                    *slot = Some(result.map_err(|e| e.to_string()));
                }
            }
            // Its component stays `None`: reported below.
            Err(e) => tracing::error!(error = %e, "a wasm component load task failed"),
        }
    }
    outcomes
        .into_iter()
        .map(|outcome| {
            outcome.unwrap_or_else(|| {
                Err("loading failed unexpectedly (an internal error)".to_owned())
            })
        })
        .collect()
}

/// One component to load, with where its bytes come from.
enum Source<'a> {
    Builtin(&'static [u8]),
    Plugin(&'a rho_plugins::PluginRecord),
}

/// The plugin name built-in components are attributed to in logs and errors.
pub const BUILTIN_OWNER: &str = "rho";

/// The risk level a component's tool carries: the component's own (from its settings), raised
/// to `destructive` when the tool's annotations say so; annotations never lower it.
pub fn wasm_tool_risk(spec: &WasmComponentSpec, tool: &rho_wasm::GuestTool) -> RiskLevel {
    if tool.annotations.is_some_and(|a| a.destructive) {
        RiskLevel::Destructive
    } else {
        spec.risk
    }
}

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
    let failed = |spec: &WasmComponentSpec, message: String| {
        Diagnostic::error(DiagnosticCode::WasmComponentInvalid, message)
            .with_path(&spec.path)
            .with_component(format!("{}/{}", spec.plugin, spec.name))
    };
    let mut specs = Vec::with_capacity(components.len());
    let mut inputs = Vec::with_capacity(components.len());
    for (spec, source) in components {
        let builtin = matches!(source, Source::Builtin(_));
        let bytes = match source {
            Source::Builtin(bytes) => Ok(Cow::Borrowed(bytes)),
            Source::Plugin(record) => record
                .read_component(&spec.name)
                .map(Cow::Owned)
                .map_err(|e| e.to_string()),
        };
        inputs.push((spec.clone(), bytes));
        specs.push((spec, builtin));
    }
    let outcomes = load_components(wasm_cache_dir(&registry.paths), inputs).await;
    for ((spec, builtin), outcome) in specs.iter().zip(outcomes) {
        let loaded = match outcome {
            Ok(loaded) => loaded,
            Err(message) => {
                diagnostics.push(failed(spec, message));
                continue;
            }
        };
        for rejected in loaded.rejected() {
            diagnostics.push(failed(spec, rejected.to_string()));
        }
        for guest in loaded.tools() {
            let (name, origin, attribution) = if *builtin {
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
            let risk = wasm_tool_risk(spec, guest);
            let tool_spec = ToolSpec {
                name,
                title: guest.title.clone(),
                description: format!("{}\n{attribution}", guest.description),
                input_schema: guest.input_schema.clone(),
                output_schema: guest.output_schema.clone(),
                risk,
                origin,
            };
            // A declared output schema is a contract, as for MCP tools; structured content
            // is capped like text.
            let tool = loaded.tool(&guest.name, tool_spec);
            tools.push(super::output_contract::OutputContract::wrap(
                tool,
                spec.max_output_bytes,
            ));
        }
    }
    (tools, diagnostics)
}
