//! Costs of WASM tool components through rho's own path: loading with a cold compile vs from
//! the artifact cache, and the overhead of a trivial call (fresh store and instance, WASI
//! context, guest call, result rendering) on a WAT-built component.
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

use rho_component::ToolContext;
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

async fn run(options: &Options) -> Result<(), String> {
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

    let dir = std::env::temp_dir().join(format!("rho-wasm-bench-{}", std::process::id()));
    let cached_host = WasmHost::new(Some(dir.clone())).map_err(|e| e.to_string())?;
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
    let _ = std::fs::remove_dir_all(&dir);

    let component = cold_host
        .load(&spec, &bytes)
        .await
        .map_err(|e| e.to_string())?;
    let context = ToolContext::new(std::env::temp_dir());
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
        report(label, &mut times);
    }
    Ok(())
}

fn report(label: &str, times: &mut [Duration]) {
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
}
