//! WASM tools in the tool set: the components built into rho and those of loaded plugins,
//! loaded through one [`rho_wasm::WasmHost`] (compiled components cached under
//! `$RHO_HOME/cache/wasm`). Built-in components export their tools under their own names;
//! plugin tools are `wasm__<plugin>__<tool>`. A component that fails to load is reported
//! (`wasm-component-invalid`) and leaves every other tool in place. With no component at all,
//! no engine is started.
//!
//! Built-in components are mounted from the tool lists embedded beside their bytes
//! (`builtin-plugins/wasm/<name>.tools.json`) and compile only when first called or warmed
//! (sessions warm them in the background), so a fresh `$RHO_HOME` starts as fast as a used
//! one. The test `builtin_tool_lists_match_their_components` keeps each list equal to what
//! its component's `list-tools` returns.

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
pub type LoadOutcome = Result<Arc<rho_wasm::LoadedComponent>, ComponentLoadError>;

/// Why one WASM component did not load. The plugin's and the engine's errors, kept whole,
/// name the component (`<plugin>/<name>`) or its file; they are shared ([`Arc`]) because a
/// failed engine fails every component of the mount with the same error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ComponentLoadError {
    /// The WASM engine did not start.
    #[error("the WASM engine did not start: {0}")]
    Engine(Arc<rho_wasm::WasmError>),
    /// The component's file could not be read under the plugin's containment rules.
    #[error(transparent)]
    Unreadable(Arc<rho_plugins::PluginError>),
    /// The engine refused the component (compiling, linking, instantiating, listing tools).
    #[error(transparent)]
    Refused(Arc<rho_wasm::WasmError>),
    /// The load task ended without an outcome (a defect in rho).
    #[error("loading failed unexpectedly (an internal error)")]
    Internal,
}

/// Where compiled components are cached: `$RHO_HOME/cache/wasm`.
pub fn wasm_cache_dir(paths: &RhoPaths) -> PathBuf {
    paths.cache_dir().join("wasm")
}

/// A component's bytes (borrowed for a built-in one), or why they could not be read.
type ComponentBytes = Result<Cow<'static, [u8]>, ComponentLoadError>;

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
                .map_err(|e| ComponentLoadError::Unreadable(Arc::new(e)));
            (spec.clone(), bytes)
        })
        .collect::<Vec<_>>();
    if inputs.is_empty() {
        return Vec::new();
    }
    load_components(&start_host(wasm_cache_dir(paths)), inputs).await
}

/// Starts the one [`rho_wasm::WasmHost`] of a mount, caching compiled components under
/// `cache`, or says why it did not start.
fn start_host(cache: PathBuf) -> Result<rho_wasm::WasmHost, ComponentLoadError> {
    rho_wasm::WasmHost::new(Some(cache)).map_err(|e| ComponentLoadError::Engine(Arc::new(e)))
}

/// Loads `components` (each with its bytes, or why they could not be read) through `host`
/// (or fails each with why the engine did not start); outcomes come in input order.
async fn load_components(
    host: &Result<rho_wasm::WasmHost, ComponentLoadError>,
    components: Vec<(WasmComponentSpec, ComponentBytes)>,
) -> Vec<LoadOutcome> {
    let host = match host {
        Ok(host) => host,
        Err(error) => return vec![Err(error.clone()); components.len()],
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
            Err(error) => {
                outcomes.push(Some(Err(error)));
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
                    *slot = Some(result.map_err(|e| ComponentLoadError::Refused(Arc::new(e))));
                }
            }
            // Its component stays `None`: reported below.
            Err(e) => tracing::error!(error = %e, "a wasm component load task failed"),
        }
    }
    outcomes
        .into_iter()
        .map(|outcome| outcome.unwrap_or(Err(ComponentLoadError::Internal)))
        .collect()
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

/// The WASM tools of a mount: the tools, the problems found, and the built-in components,
/// which compile on first use ([`rho_wasm::DeferredComponent::warm`] starts that early).
pub(crate) struct WasmTools {
    pub tools: Vec<Arc<dyn Tool>>,
    pub diagnostics: Vec<Diagnostic>,
    pub deferred: Vec<Arc<rho_wasm::DeferredComponent>>,
}

/// The declaration a built-in component runs under.
fn builtin_spec(builtin: &rho_builtin_plugins::BuiltinComponent) -> WasmComponentSpec {
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
    }
}

/// The tools a built-in component declares, from the list embedded beside its bytes.
pub(crate) fn builtin_declared_tools(
    builtin: &rho_builtin_plugins::BuiltinComponent,
) -> Result<Vec<rho_wasm::GuestTool>, String> {
    serde_json::from_str(builtin.tools).map_err(|e| {
        format!(
            "the tool list embedded for built-in component {} is not valid: {e}",
            builtin.name
        )
    })
}

fn failed(spec: &WasmComponentSpec, message: String) -> Diagnostic {
    Diagnostic::error(DiagnosticCode::WasmComponentInvalid, message)
        .with_path(&spec.path)
        .with_component(format!("{}/{}", spec.plugin, spec.name))
}

/// The [`ToolSpec`] a guest tool is exported under: built-in ones under their own names
/// (`-` as `_`), plugin ones as `wasm__<plugin>__<tool>`.
fn exported_spec(
    spec: &WasmComponentSpec,
    guest: &rho_wasm::GuestTool,
    builtin: bool,
    names: &mut ExportedNames,
) -> ToolSpec {
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
    ToolSpec {
        name,
        title: guest.title.clone(),
        description: format!("{}\n{attribution}", guest.description),
        input_schema: guest.input_schema.clone(),
        output_schema: guest.output_schema.clone(),
        risk: wasm_tool_risk(spec, guest),
        origin,
    }
}

/// Mounts every WASM component: the built-in ones from their embedded tool lists (nothing is
/// compiled until a call or [`rho_wasm::DeferredComponent::warm`]), the trusted plugins' ones
/// compiled (or taken from the cache) and listed now.
pub(crate) async fn wasm_tools(registry: &Registry, names: &mut ExportedNames) -> WasmTools {
    let mut out = WasmTools {
        tools: Vec::new(),
        diagnostics: Vec::new(),
        deferred: Vec::new(),
    };
    let mut inputs: Vec<(WasmComponentSpec, ComponentBytes)> = Vec::new();
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
                out.diagnostics.push(
                    Diagnostic::warning(DiagnosticCode::PluginUntrusted, message.clone())
                        .with_path(&spec.path)
                        .with_component(format!("{}/{}", spec.plugin, spec.name)),
                );
            }
            continue;
        }
        for spec in &record.package.tool_components {
            let bytes = record
                .read_component(&spec.name)
                .map(Cow::Owned)
                .map_err(|e| ComponentLoadError::Unreadable(Arc::new(e)));
            inputs.push((spec.clone(), bytes));
        }
    }
    let builtins = rho_builtin_plugins::builtin_components();
    if builtins.is_empty() && inputs.is_empty() {
        return out;
    }
    let host = start_host(wasm_cache_dir(&registry.paths));
    for builtin in builtins {
        let spec = builtin_spec(builtin);
        let host = match &host {
            Ok(host) => host,
            Err(error) => {
                out.diagnostics.push(failed(&spec, error.to_string()));
                continue;
            }
        };
        let declared = match builtin_declared_tools(builtin) {
            Ok(declared) => declared,
            Err(message) => {
                out.diagnostics.push(failed(&spec, message));
                continue;
            }
        };
        let component = host.defer(spec.clone(), builtin.bytes, declared);
        for guest in component.tools() {
            let tool_spec = exported_spec(&spec, guest, true, names);
            let tool = component.tool(&guest.name, tool_spec);
            out.tools.push(super::output_contract::OutputContract::wrap(
                tool,
                spec.max_output_bytes,
            ));
        }
        out.deferred.push(component);
    }
    let specs: Vec<WasmComponentSpec> = inputs.iter().map(|(spec, _)| spec.clone()).collect();
    let outcomes = if inputs.is_empty() {
        Vec::new()
    } else {
        load_components(&host, inputs).await
    };
    for (spec, outcome) in specs.iter().zip(outcomes) {
        let loaded = match outcome {
            Ok(loaded) => loaded,
            Err(error) => {
                out.diagnostics.push(failed(spec, error.to_string()));
                continue;
            }
        };
        for rejected in loaded.rejected() {
            out.diagnostics.push(failed(spec, rejected.to_string()));
        }
        for guest in loaded.tools() {
            let tool_spec = exported_spec(spec, guest, false, names);
            // A declared output schema is a contract, as for MCP tools; structured content
            // is capped like text.
            let tool = loaded.tool(&guest.name, tool_spec);
            out.tools.push(super::output_contract::OutputContract::wrap(
                tool,
                spec.max_output_bytes,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file a built-in component's tool list is embedded from.
    fn tool_list_file(builtin: &rho_builtin_plugins::BuiltinComponent) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../builtin-plugins/wasm")
            .join(format!("{}.tools.json", builtin.name.replace('-', "_")))
    }

    /// Each embedded tool list is exactly what its component's `list-tools` returns. After a
    /// change to a built-in component, `RHO_WRITE_TOOL_LISTS=1 cargo test -p rho-core
    /// builtin_tool_lists` writes the lists again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn builtin_tool_lists_match_their_components() {
        let host = rho_wasm::WasmHost::new(None).expect("the engine starts");
        for builtin in rho_builtin_plugins::builtin_components() {
            let loaded = host
                .load(&builtin_spec(builtin), builtin.bytes)
                .await
                .unwrap_or_else(|e| panic!("{} loads: {e}", builtin.name));
            assert!(loaded.rejected().is_empty(), "{:?}", loaded.rejected());
            let listed = serde_json::to_string_pretty(loaded.tools()).expect("serializes") + "\n";
            if builtin.tools == listed {
                assert_eq!(
                    builtin_declared_tools(builtin).as_deref(),
                    Ok(loaded.tools())
                );
                continue;
            }
            let file = tool_list_file(builtin);
            if std::env::var_os("RHO_WRITE_TOOL_LISTS").is_some() {
                std::fs::write(&file, &listed).expect("writes the tool list");
                continue;
            }
            panic!(
                "{} is not what built-in component {} lists; run \
                 `RHO_WRITE_TOOL_LISTS=1 cargo test -p rho-core builtin_tool_lists` and \
                 rebuild. It lists:\n{listed}",
                file.display(),
                builtin.name
            );
        }
    }

    /// Mounting a built-in component compiles nothing; warming it compiles it once (writing
    /// the cache) and its tool then runs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn builtin_components_compile_on_first_use_only() {
        let home = tempfile::tempdir().expect("a temporary directory");
        let cache = home.path().join("cache");
        let host = start_host(cache.clone()).expect("the engine starts");
        let builtin = &rho_builtin_plugins::builtin_components()[0];
        let declared = builtin_declared_tools(builtin).expect("a valid embedded list");
        let component = host.defer(builtin_spec(builtin), builtin.bytes, declared.clone());
        assert_eq!(component.tools(), declared.as_slice());
        assert!(!component.is_loaded());
        let artifacts = || std::fs::read_dir(&cache).map_or(0, Iterator::count);
        assert_eq!(artifacts(), 0, "nothing is compiled at mount");
        let loaded = component
            .load()
            .await
            .expect("the built-in component loads");
        assert!(!loaded.from_cache());
        assert_eq!(artifacts(), 1, "the first use compiles and caches it");
        let again = host.defer(builtin_spec(builtin), builtin.bytes, declared);
        assert!(again.load().await.expect("loads").from_cache());
    }

    /// Warming waits until the session has lived `WARM_AFTER` (a one-shot session never pays
    /// for a compile it would throw away), then compiles in the background.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn warming_starts_only_after_the_session_has_lived_a_while() {
        let home = tempfile::tempdir().expect("a temporary directory");
        let cache = home.path().join("cache");
        let host = start_host(cache.clone()).expect("the engine starts");
        let builtin = &rho_builtin_plugins::builtin_components()[0];
        let declared = builtin_declared_tools(builtin).expect("a valid embedded list");
        let component = host.defer(builtin_spec(builtin), builtin.bytes, declared);
        let artifacts = || std::fs::read_dir(&cache).map_or(0, Iterator::count);
        component.warm();
        tokio::time::sleep(rho_wasm::WARM_AFTER / 2).await;
        assert!(!component.is_loaded());
        assert_eq!(artifacts(), 0, "nothing compiled before WARM_AFTER");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !component.is_loaded() {
            assert!(
                std::time::Instant::now() < deadline,
                "warming never finished"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(artifacts(), 1, "the warmed compile is cached");
    }

    /// A component whose listed tools differ from the declared ones fails every call with a
    /// message naming it, and never runs a tool it did not declare.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_component_listing_other_tools_than_declared_fails_its_calls() {
        let host = start_host(tempfile::tempdir().expect("tmp").path().join("c")).expect("engine");
        let builtin = &rho_builtin_plugins::builtin_components()[0];
        let mut declared = builtin_declared_tools(builtin).expect("a valid embedded list");
        declared[0].description.push_str(" (changed)");
        let spec = builtin_spec(builtin);
        let component = host.defer(spec.clone(), builtin.bytes, declared.clone());
        let tool = component.tool(
            &declared[0].name,
            exported_spec(&spec, &declared[0], true, &mut ExportedNames::default()),
        );
        let context = rho_component::ToolContext::new(std::env::temp_dir());
        let output = tool
            .call(serde_json::json!({"text": "a b"}), &context)
            .await;
        assert!(output.is_error);
        assert!(
            output.text.contains("rho/text-stats") && output.text.contains("differ"),
            "{}",
            output.text
        );
    }
}
