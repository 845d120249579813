//! [`LoadedComponent`]: a compiled, linked component and its validated tools, and one call of
//! a tool — a fresh store and instance per call, so nothing leaks between calls and a trapped
//! instance is never entered again.

use std::sync::Arc;

use rho_component::{
    Tool, ToolContext, ToolFuture, ToolOutput, ToolSpec, WasmComponentSpec, json_kind,
};
use serde_json::Value;

use crate::bindings::ToolProviderPre;
use crate::error::WasmError;
use crate::guard::{self, Failure};
use crate::guest_output;
use crate::guest_tool::GuestTool;
use crate::host::Runtime;
use crate::output;
use crate::store::{self, CallSetup, CallState};

/// Bytes of the guest's stderr appended to a trap message (a panic message, usually).
const STDERR_IN_TRAP_BYTES: usize = 2048;

/// A component ready to run: its tools, and what each call instantiates from.
pub struct LoadedComponent {
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) spec: WasmComponentSpec,
    pub(crate) identity: Arc<str>,
    pub(crate) pre: ToolProviderPre<CallState>,
    pub(crate) tools: Vec<GuestTool>,
    pub(crate) rejected: Vec<WasmError>,
    pub(crate) from_cache: bool,
}

impl LoadedComponent {
    /// The tools the component declared that passed validation, in its order.
    pub fn tools(&self) -> &[GuestTool] {
        &self.tools
    }

    /// The declarations that failed validation (each an [`WasmError::InvalidTool`]).
    pub fn rejected(&self) -> &[WasmError] {
        &self.rejected
    }

    /// The component's declaration.
    pub fn spec(&self) -> &WasmComponentSpec {
        &self.spec
    }

    /// `<plugin>/<name>`.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// Whether the compiled code came from the artifact cache (nothing was compiled).
    pub fn from_cache(&self) -> bool {
        self.from_cache
    }

    /// The [`Tool`] that calls `guest_name` under the exported declaration `spec` (the
    /// registry chooses the exported name and the risk level). A name the component does not
    /// declare gives a tool whose calls fail with the guest's `unknown-tool` error.
    pub fn tool(self: &Arc<Self>, guest_name: &str, spec: ToolSpec) -> Arc<dyn Tool> {
        Arc::new(WasmTool {
            component: self.clone(),
            guest_name: guest_name.to_owned(),
            spec,
        })
    }

    /// Runs one call of `tool` in a fresh instance. Never panics; every failure is a failed
    /// output naming the component.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: Value,
        context: &ToolContext,
    ) -> ToolOutput {
        let arguments = match arguments {
            Value::Null => "{}".to_owned(),
            Value::Object(map) => Value::Object(map).to_string(),
            other => {
                return ToolOutput::error(format!(
                    "the arguments of `{tool}` must be a JSON object, not {}",
                    json_kind(&other)
                ));
            }
        };
        let failure = |failure: Failure| {
            ToolOutput::error(failure.message(
                &self.identity,
                self.spec.timeout,
                self.spec.memory_limit,
            ))
        };
        if context.cancel.is_cancelled() {
            return failure(Failure::Cancelled);
        }
        let deadline = store::deadline_after(self.spec.timeout);
        let setup = CallSetup { tool, context };
        let mut prepared = match store::prepare(
            &self.runtime.engine,
            &self.spec,
            &self.identity,
            Some(setup),
            deadline,
        ) {
            Ok(prepared) => prepared,
            Err(message) => return ToolOutput::error(message),
        };
        // wasmtime lifts the result into owned values, checking every (pointer, length) pair
        // against the guest's memory before it allocates: the copy is bounded by the memory
        // limit (a list of content blocks costs at most ~2.4 times its size in the guest), and
        // a bogus length fails without allocating. `WasmStr`/`WasmList` would avoid the copy,
        // but wasmtime 48 runs the guest's post-return (which frees them) before it returns.
        let guarded = {
            let _ticking = self.runtime.ticker.ticking();
            let store = &mut prepared.store;
            let pre = &self.pre;
            guard::guard(
                async {
                    let provider = pre.instantiate_async(&mut *store).await?;
                    provider
                        .rho_tool_tools()
                        .call_call_tool(&mut *store, tool, &arguments)
                        .await
                },
                deadline,
                Some(&context.cancel),
            )
            .await
        };
        let result = guard::outcome(prepared.store.data(), guarded);
        guest_output::forward(&self.identity, "stdout", &prepared.stdout);
        let stderr = guest_output::forward(&self.identity, "stderr", &prepared.stderr);
        let max = self.spec.max_output_bytes;
        match result {
            Ok(Ok(value)) => output::render(value, max),
            Ok(Err(error)) => output::render_error(tool, error, max),
            Err(Failure::Trap(message)) => {
                let mut out = failure(Failure::Trap(message));
                let tail = tail(stderr.trim_end(), STDERR_IN_TRAP_BYTES);
                if !tail.is_empty() {
                    out.text.push_str("\nguest stderr: ");
                    out.text.push_str(tail);
                }
                out
            }
            Err(other) => failure(other),
        }
    }
}

impl std::fmt::Debug for LoadedComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedComponent")
            .field("identity", &self.identity)
            .field("tools", &self.tools.len())
            .field("rejected", &self.rejected.len())
            .field("from_cache", &self.from_cache)
            .finish_non_exhaustive()
    }
}

/// One tool of a loaded component, as the registry mounts it.
struct WasmTool {
    component: Arc<LoadedComponent>,
    guest_name: String,
    spec: ToolSpec,
}

impl Tool for WasmTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(self.component.call(&self.guest_name, arguments, context))
    }
}

/// The last `max` bytes of `text`, at a character boundary.
fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
