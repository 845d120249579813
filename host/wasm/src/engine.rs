//! The one wasmtime [`Engine`] rho uses: component model, epoch interruption, bounded stacks,
//! and nothing a tool component does not need (wasmtime is built without the threads and GC
//! features, so no guest thread can outlive its call).

use wasmtime::{Config, Engine, OptLevel};

use crate::error::WasmError;

/// Most native stack a guest may use before it traps with a stack overflow (wasmtime's
/// default, stated so the limit is visible): deep recursion is a trap, never a host crash.
pub const MAX_WASM_STACK: usize = 512 * 1024;

/// Size of the fiber stack an async call runs on. It must exceed [`MAX_WASM_STACK`] by enough
/// for the host functions the guest calls (WASI included).
const ASYNC_STACK: usize = 2 * 1024 * 1024;

/// A short text naming every setting above that is not part of the engine's own
/// compatibility hash; it goes into the cache key so that changing one invalidates old
/// artifacts.
pub(crate) const CONFIG_TAG: &str = "rho-wasm engine v1: epoch, component-model, speed";

/// Builds the engine.
pub(crate) fn build() -> Result<Engine, WasmError> {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .epoch_interruption(true)
        .cranelift_opt_level(OptLevel::Speed)
        .parallel_compilation(true)
        .max_wasm_stack(MAX_WASM_STACK)
        .async_stack_size(ASYNC_STACK);
    Engine::new(&config).map_err(|e| WasmError::Engine(format!("{e:#}")))
}
