//! [`WasmHost`]: the engine, the epoch ticker, the linker (WASI p2 and `rho:tool/host`) and the
//! compiled-artifact cache, and loading a component: compile (or load from the cache) on a
//! blocking thread, link, list and validate its tools.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rho_component::WasmComponentSpec;
use wasmtime::Engine;
use wasmtime::component::{Component, HasSelf, Linker};

use crate::bindings::{ToolProvider, ToolProviderPre};
use crate::cache::ArtifactCache;
use crate::component::LoadedComponent;
use crate::error::WasmError;
use crate::guard::{self, Failure};
use crate::guest_output;
use crate::guest_tool;
use crate::store::{self, CallState};
use crate::ticker::EpochTicker;

/// The longest a component may take to compile before its load fails (the compiler thread
/// finishes in the background; its result is dropped).
pub const COMPILE_TIMEOUT: Duration = Duration::from_secs(120);

/// The longest `list-tools` may run at load, whatever the component's own call timeout: a
/// listing is a constant, and every session start waits for it.
pub const LIST_TOOLS_TIMEOUT: Duration = Duration::from_secs(5);

/// What every loaded component shares. The ticker lives as long as the last component, so
/// deadlines keep working after the [`WasmHost`] itself is dropped.
pub(crate) struct Runtime {
    pub(crate) engine: Engine,
    linker: Linker<CallState>,
    cache: Option<ArtifactCache>,
    pub(crate) ticker: EpochTicker,
}

/// Runs WASM tool components: one per process is enough. Clones share the engine; loading and
/// calling need only `&self`.
#[derive(Clone)]
pub struct WasmHost {
    runtime: Arc<Runtime>,
}

impl WasmHost {
    /// Starts the engine and its epoch ticker. With `cache_dir`, compiled components are kept
    /// there (the directory is created, owner-only) and reused by later loads and processes; a
    /// directory that cannot be created, or that others could write to, is logged and not
    /// used.
    pub fn new(cache_dir: Option<PathBuf>) -> Result<Self, WasmError> {
        let engine = crate::engine::build()?;
        let mut linker = Linker::<CallState>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(|e| WasmError::Engine(format!("linking WASI: {e:#}")))?;
        ToolProvider::add_to_linker::<CallState, HasSelf<CallState>>(&mut linker, |state| state)
            .map_err(|e| WasmError::Engine(format!("linking rho:tool/host: {e:#}")))?;
        // A cache that cannot be used costs compile time, never the tools.
        let cache = cache_dir.and_then(|dir| match ArtifactCache::open(dir, &engine) {
            Ok(cache) => Some(cache),
            Err(e) => {
                tracing::warn!(error = %e, "compiling wasm components without a cache");
                None
            }
        });
        let ticker = EpochTicker::start(engine.clone())?;
        Ok(Self {
            runtime: Arc::new(Runtime {
                engine,
                linker,
                cache,
                ticker,
            }),
        })
    }

    /// Loads one component from its `.wasm` bytes (the caller has capped their size): compiles
    /// it, or takes it from the cache; links it; calls `list-tools` within the component's
    /// memory limit, its timeout capped at [`LIST_TOOLS_TIMEOUT`], and with no capabilities;
    /// validates the tools. Tools whose
    /// declaration is invalid are left out and reported by [`LoadedComponent::rejected`].
    ///
    /// Must run inside a tokio runtime (compilation goes to a blocking thread).
    pub async fn load(
        &self,
        spec: &WasmComponentSpec,
        bytes: &[u8],
    ) -> Result<Arc<LoadedComponent>, WasmError> {
        let identity: Arc<str> = format!("{}/{}", spec.plugin, spec.name).into();
        let (component, from_cache) = self.compile(&identity, bytes).await?;
        let wrong_world = |e: wasmtime::Error| WasmError::WrongWorld {
            component: identity.to_string(),
            message: format!("{e:#}"),
        };
        let instance_pre = self
            .runtime
            .linker
            .instantiate_pre(&component)
            .map_err(wrong_world)?;
        let pre = ToolProviderPre::new(instance_pre).map_err(wrong_world)?;

        let list_budget = spec.timeout.min(LIST_TOOLS_TIMEOUT);
        let deadline = store::deadline_after(list_budget);
        let list_error = |message: String| WasmError::ListTools {
            component: identity.to_string(),
            message,
        };
        let mut prepared = store::prepare(&self.runtime.engine, spec, &identity, None, deadline)
            .map_err(list_error)?;
        let guarded = {
            let _ticking = self.runtime.ticker.ticking();
            let store = &mut prepared.store;
            guard::guard(
                async {
                    let provider = pre.instantiate_async(&mut *store).await?;
                    provider.rho_tool_tools().call_list_tools(&mut *store).await
                },
                deadline,
                None,
            )
            .await
        };
        let listed = guard::outcome(prepared.store.data(), guarded);
        guest_output::forward(&identity, "stdout", &prepared.stdout);
        guest_output::forward(&identity, "stderr", &prepared.stderr);
        let specs = listed.map_err(|failure: Failure| {
            list_error(failure.detail(list_budget, spec.memory_limit))
        })?;
        let (tools, rejected) = guest_tool::validate(&identity, specs);
        Ok(Arc::new(LoadedComponent {
            runtime: self.runtime.clone(),
            spec: spec.clone(),
            identity,
            pre,
            tools,
            rejected,
            from_cache,
        }))
    }

    /// The compiled component, and whether it came from the cache.
    async fn compile(
        &self,
        identity: &Arc<str>,
        bytes: &[u8],
    ) -> Result<(Component, bool), WasmError> {
        let runtime = self.runtime.clone();
        let owned = bytes.to_vec();
        let who = identity.clone();
        let task = tokio::task::spawn_blocking(move || runtime.compile_blocking(&who, &owned));
        match tokio::time::timeout(COMPILE_TIMEOUT, task).await {
            Ok(Ok(result)) => result,
            Ok(Err(join)) => Err(WasmError::Compile {
                component: identity.to_string(),
                message: format!("the compiler failed: {join}"),
            }),
            Err(_) => Err(WasmError::CompileTimeout {
                component: identity.to_string(),
                seconds: COMPILE_TIMEOUT.as_secs(),
            }),
        }
    }
}

impl Runtime {
    fn compile_blocking(
        &self,
        identity: &str,
        bytes: &[u8],
    ) -> Result<(Component, bool), WasmError> {
        let cached = self
            .cache
            .as_ref()
            .map(|cache| (cache, cache.path_for(bytes)));
        if let Some((cache, path)) = &cached
            && let Some(component) = cache.get(&self.engine, path)
        {
            return Ok((component, true));
        }
        let component =
            Component::from_binary(&self.engine, bytes).map_err(|e| WasmError::Compile {
                component: identity.to_owned(),
                message: format!("{e:#}"),
            })?;
        if let Some((cache, path)) = &cached {
            cache.put(&component, path);
        }
        Ok((component, false))
    }
}

impl std::fmt::Debug for WasmHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmHost")
            .field("cache", &self.runtime.cache)
            .finish_non_exhaustive()
    }
}
