//! [`DeferredComponent`]: a component whose tools are known before it is compiled, so a session
//! can offer them at once and compile only when a tool is first called (or when
//! [`DeferredComponent::warm`] runs it in the background). rho's built-in components are
//! mounted this way: their tool lists are generated into the binary beside their `.wasm`
//! bytes, and the first session on a fresh `$RHO_HOME` starts as fast as every later one.

use std::sync::Arc;

use rho_component::{Tool, ToolContext, ToolFuture, ToolOutput, ToolSpec, WasmComponentSpec};
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::component::LoadedComponent;
use crate::guest_tool::GuestTool;
use crate::host::WasmHost;

/// A component with declared tools, loaded on first use. Every caller waits for the one load;
/// its outcome (the component, or why it did not load) is kept for the component's life.
pub struct DeferredComponent {
    host: WasmHost,
    spec: WasmComponentSpec,
    bytes: &'static [u8],
    declared: Vec<GuestTool>,
    loaded: OnceCell<Result<Arc<LoadedComponent>, String>>,
}

impl WasmHost {
    /// A component whose `bytes` are compiled, linked and listed only when first needed.
    /// `declared` is what its `list-tools` is known to return; a load that lists anything else
    /// fails (the binary was built with another component than the one it carries).
    pub fn defer(
        &self,
        spec: WasmComponentSpec,
        bytes: &'static [u8],
        declared: Vec<GuestTool>,
    ) -> Arc<DeferredComponent> {
        Arc::new(DeferredComponent {
            host: self.clone(),
            spec,
            bytes,
            declared,
            loaded: OnceCell::new(),
        })
    }
}

impl DeferredComponent {
    /// The tools the component declares, known without compiling it.
    pub fn tools(&self) -> &[GuestTool] {
        &self.declared
    }

    /// The component's declaration.
    pub fn spec(&self) -> &WasmComponentSpec {
        &self.spec
    }

    /// Whether the component has been loaded (successfully or not).
    pub fn is_loaded(&self) -> bool {
        self.loaded.initialized()
    }

    /// The loaded component, loading it first if no one has: compiled (or taken from the
    /// cache), linked, and its listed tools checked against the declared ones.
    pub async fn load(&self) -> Result<&Arc<LoadedComponent>, &str> {
        self.loaded
            .get_or_init(|| async {
                let loaded = self
                    .host
                    .load(&self.spec, self.bytes)
                    .await
                    .map_err(|e| e.to_string())?;
                if loaded.tools() != self.declared.as_slice() {
                    return Err(format!(
                        "component {}: its tools differ from the ones this rho binary was \
                         built to offer (rebuild rho with the component it embeds)",
                        loaded.identity()
                    ));
                }
                Ok(loaded)
            })
            .await
            .as_ref()
            .map_err(String::as_str)
    }

    /// Starts loading the component in the background (inside a tokio runtime) once the
    /// session has lived [`WARM_AFTER`], so that a later first call finds it ready. A session
    /// that ends sooner (a script's one-shot `rho rpc`) never compiles: the compile would only
    /// hold up its exit and be thrown away unfinished. A call before then loads the component
    /// itself. Failures are logged here and reported again by each call.
    pub fn warm(self: &Arc<Self>) {
        let component = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(WARM_AFTER).await;
            if let Err(message) = component.load().await {
                tracing::warn!(error = %message, "a deferred wasm component did not load");
            }
        });
    }

    /// The [`Tool`] that calls `guest_name` under the exported declaration `spec`; its first
    /// call loads the component if [`warm`](Self::warm) has not yet.
    pub fn tool(self: &Arc<Self>, guest_name: &str, spec: ToolSpec) -> Arc<dyn Tool> {
        Arc::new(DeferredTool {
            component: self.clone(),
            guest_name: guest_name.to_owned(),
            spec,
        })
    }
}

/// How long a session lives before [`DeferredComponent::warm`] starts compiling.
pub const WARM_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

impl std::fmt::Debug for DeferredComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredComponent")
            .field("plugin", &self.spec.plugin)
            .field("name", &self.spec.name)
            .field("tools", &self.declared.len())
            .field("loaded", &self.is_loaded())
            .finish_non_exhaustive()
    }
}

/// One tool of a deferred component.
struct DeferredTool {
    component: Arc<DeferredComponent>,
    guest_name: String,
    spec: ToolSpec,
}

impl Tool for DeferredTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            match self.component.load().await {
                Ok(loaded) => loaded.call(&self.guest_name, arguments, context).await,
                Err(message) => ToolOutput::error(message),
            }
        })
    }
}
