//! Costs of WASM tool components through rho's own path: loading the example plugin's
//! component (`examples/plugins/data-tools`) with a cold compile vs from the artifact cache,
//! and the overhead of a trivial call (fresh store and instance, WASI context, guest call,
//! result rendering) against the same logic as a native tool called through the same trait.
//!
//! `cargo bench -p rho-wasm --bench wasm_call [-- --loads N --calls N]`

// A benchmark binary owns its stdout (the result table) and reports failures on stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

// The test fixtures: a fixture that does not build is a bug in them, so they may panic.
#[path = "../tests/components/support.rs"]
#[allow(dead_code, clippy::expect_used, clippy::unwrap_used, clippy::panic)]
mod support;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use rho_component::{RiskLevel, Tool, ToolContext, ToolFuture, ToolOrigin, ToolOutput, ToolSpec};
use rho_wasm::WasmHost;
use serde_json::json;

struct Options {
    loads: usize,
    calls: usize,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        loads: 20,
        calls: 5000,
    };
    while let Some(arg) = args.next() {
        let target = match arg.as_str() {
            "--loads" => &mut options.loads,
            "--calls" => &mut options.calls,
            // `cargo bench` passes `--bench` to every harness-less bench.
            "--bench" => continue,
            other => return Err(format!("unknown option {other}")),
        };
        *target = args
            .next()
            .and_then(|n| n.parse().ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{arg} needs a positive number"))?;
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// The WAT `echo` tool's logic as a native tool: the arguments back as JSON text.
struct NativeEcho(ToolSpec);

impl Tool for NativeEcho {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, _: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            if !arguments.is_object() && !arguments.is_null() {
                return ToolOutput::error("the arguments must be a JSON object");
            }
            ToolOutput::text(serde_json::to_string(&arguments).unwrap_or_default())
        })
    }
}

async fn run(options: &Options) -> Result<(), String> {
    example_loads(options).await?;
    let bytes = support::component(
        &[support::tools::echo(), support::tools::trap()],
        support::World::ToolProvider,
    );
    let spec = support::spec("bench");
    println!("component: {} bytes (WAT-built)", bytes.len());

    let cold_host = WasmHost::new(None).map_err(|e| e.to_string())?;
    let mut cold = Vec::new();
    for _ in 0..options.loads {
        let started = Instant::now();
        let loaded = cold_host
            .load(&spec, &bytes)
            .await
            .map_err(|e| e.to_string())?;
        cold.push(started.elapsed());
        if loaded.from_cache() {
            return Err("a host without a cache dir loaded from a cache".to_owned());
        }
    }
    report("load, cold compile", &mut cold);

    // Removed when dropped, also when a step below fails.
    let cache = tempfile::tempdir().map_err(|e| e.to_string())?;
    let cached_host = WasmHost::new(Some(cache.path().to_path_buf())).map_err(|e| e.to_string())?;
    cached_host
        .load(&spec, &bytes)
        .await
        .map_err(|e| e.to_string())?;
    let mut cached = Vec::new();
    for _ in 0..options.loads {
        let started = Instant::now();
        let loaded = cached_host
            .load(&spec, &bytes)
            .await
            .map_err(|e| e.to_string())?;
        cached.push(started.elapsed());
        if !loaded.from_cache() {
            return Err("the second load did not hit the cache".to_owned());
        }
    }
    report("load, cached artifact", &mut cached);
    drop(cache);

    let component = cold_host
        .load(&spec, &bytes)
        .await
        .map_err(|e| e.to_string())?;
    let context = ToolContext::new(std::env::temp_dir());
    let native = NativeEcho(ToolSpec {
        name: "echo".into(),
        title: None,
        description: String::new(),
        input_schema: json!({"type": "object"}),
        output_schema: None,
        risk: RiskLevel::Read,
        origin: ToolOrigin::Builtin,
    });
    let native_p50 = {
        for _ in 0..options.calls.min(200) {
            native.call(json!({}), &context).await;
        }
        let mut times = Vec::with_capacity(options.calls);
        for _ in 0..options.calls {
            let started = Instant::now();
            let out = native.call(json!({}), &context).await;
            times.push(started.elapsed());
            std::hint::black_box(out);
        }
        report("native echo (baseline)", &mut times)
    };
    let mut wasm_p50 = Duration::ZERO;
    for (tool, label) in [("echo", "call echo {}"), ("trap", "call trapping tool")] {
        let tool = component.tool(tool, support::tool_spec(&component, tool));
        for _ in 0..options.calls.min(200) {
            tool.call(json!({}), &context).await;
        }
        let mut times = Vec::with_capacity(options.calls);
        for _ in 0..options.calls {
            let started = Instant::now();
            let out = tool.call(json!({}), &context).await;
            times.push(started.elapsed());
            std::hint::black_box(out);
        }
        let p50 = report(label, &mut times);
        if label.starts_with("call echo") {
            wasm_p50 = p50;
        }
    }
    let added = wasm_p50.saturating_sub(native_p50);
    println!(
        "WASM echo adds {:.1?} per call over the native echo (p50 − p50); goal ≤ 50 µs: {}",
        added,
        if added <= Duration::from_micros(50) {
            "met"
        } else {
            "NOT met"
        }
    );
    Ok(())
}

/// Cold compile vs cached load of the example plugin's real component.
async fn example_loads(options: &Options) -> Result<(), String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/plugins/data-tools/dev.rho/tools/data.wasm");
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut spec = support::spec("data");
    spec.timeout = Duration::from_secs(60);
    spec.memory_limit = 64 * 1024 * 1024;
    println!(
        "example component: {} ({} bytes)",
        path.display(),
        bytes.len()
    );
    let loads = options.loads.clamp(1, 5);
    let cold_host = WasmHost::new(None).map_err(|e| e.to_string())?;
    let mut cold = Vec::new();
    for _ in 0..loads {
        let started = Instant::now();
        cold_host
            .load(&spec, &bytes)
            .await
            .map_err(|e| e.to_string())?;
        cold.push(started.elapsed());
    }
    let cold_p50 = report("example, cold compile", &mut cold);
    let cache = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = cache.path().to_path_buf();
    let cached_host = WasmHost::new(Some(dir.clone())).map_err(|e| e.to_string())?;
    cached_host
        .load(&spec, &bytes)
        .await
        .map_err(|e| e.to_string())?;
    let mut cached = Vec::new();
    for _ in 0..options.loads {
        // A new host each time: what a second session pays (engine start plus cache load).
        let host = WasmHost::new(Some(dir.clone())).map_err(|e| e.to_string())?;
        let started = Instant::now();
        let loaded = host.load(&spec, &bytes).await.map_err(|e| e.to_string())?;
        cached.push(started.elapsed());
        if !loaded.from_cache() {
            return Err("the example did not load from the cache".to_owned());
        }
    }
    let cached_p50 = report("example, cached load", &mut cached);
    drop(cache);
    println!(
        "cached load: {:.1?} (cold compile {:.1?}, {:.0}x faster); goal ≤ 2 ms per component: {}",
        cached_p50,
        cold_p50,
        cold_p50.as_secs_f64() / cached_p50.as_secs_f64().max(1e-9),
        if cached_p50 <= Duration::from_millis(2) {
            "met"
        } else {
            "NOT met"
        }
    );
    Ok(())
}

fn report(label: &str, times: &mut [Duration]) -> Duration {
    times.sort();
    let at = |q: f64| {
        let i = ((times.len() as f64 - 1.0) * q).round() as usize;
        times.get(i).copied().unwrap_or_default()
    };
    println!(
        "{label:<24} n={:<6} p50 {:>10.1?}  p99 {:>10.1?}  max {:>10.1?}",
        times.len(),
        at(0.5),
        at(0.99),
        at(1.0)
    );
    at(0.5)
}
