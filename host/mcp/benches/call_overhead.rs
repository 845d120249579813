//! `tools/call` round-trip latency through rho's full call path against a bare `rmcp` client,
//! both talking to the reference `server-everything` over stdio in the same run.
//!
//! rho's path is what a session does with a model's tool call: resolve the exported
//! `mcp__everything__echo` through [`rho_component::naming::ExportedNames`], find the connection of its
//! server, [`rho_mcp::Connection::call_tool`] (progress route, cancellation token, call budget,
//! result as JSON) and [`rho_mcp::render_result`]. The baseline is `rmcp`'s own
//! `Peer::call_tool` on a session started the same way (same executable, environment and
//! handshake mode), with nothing around it. Calls are sequential; the two paths alternate in
//! blocks (which one goes first alternates too) so drift on a noisy machine hits both alike.
//! Results go in `docs/benchmarks.md`.
//!
//! `cargo bench -p rho-mcp --bench call_overhead [-- --calls N --warmup N --block N]`

// A benchmark binary owns its stdout (the result table) and reports failures on stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

use std::collections::HashMap;
use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use rho_component::McpServerSpec;
use rho_component::naming::ExportedNames;
use rho_mcp::{Cancel, Connection, Progress};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, RunningService};
use rmcp::{RoleClient, serve_client_with_lifecycle};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

/// The goal: rho's p50 and p99 within this factor of the bare client's.
const GOAL_RATIO: f64 = 1.2;
/// The server's identity in rho (and so the exported name below).
const SERVER_ID: &str = "everything";
/// The tool both paths call.
const TOOL: &str = "echo";

const USAGE: &str = "\
usage: cargo bench -p rho-mcp --bench call_overhead [-- options]

options:
  --calls N    timed calls per path (default 2000)
  --warmup N   untimed calls per path before them (default 200)
  --block N    calls per block; the paths alternate block by block (default 100)

needs the test peers: npm ci --prefix tests/peers
";

struct Options {
    calls: usize,
    warmup: usize,
    block: usize,
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("call_overhead: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if cfg!(debug_assertions) {
        eprintln!(
            "call_overhead: warning: this is a debug build; run it with `cargo bench` for \
             figures worth recording"
        );
    }
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("call_overhead: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `Ok(None)` asks for the usage text.
fn parse(args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options {
        calls: 2000,
        warmup: 200,
        block: 100,
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                (name.to_owned(), Some(value.to_owned()))
            }
            _ => (arg, None),
        };
        let mut number = |name: &str| -> Result<usize, String> {
            let value = inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))?;
            value
                .parse()
                .map_err(|_| format!("{name}: {value:?} is not a number"))
        };
        match name.as_str() {
            // `cargo bench` passes `--bench` to every bench binary.
            "--bench" => {}
            "-h" | "--help" => return Ok(None),
            "--calls" => options.calls = number(&name)?,
            "--warmup" => options.warmup = number(&name)?,
            "--block" => options.block = number(&name)?,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if options.calls == 0 || options.block == 0 {
        return Err("--calls and --block must be at least 1".into());
    }
    Ok(Some(options))
}

fn lifecycle() -> ClientLifecycleMode {
    // The mode rho's `connect` uses, so both sessions negotiate the same era.
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

fn run(options: &Options) -> Result<(), String> {
    let server = support::server_everything()?;
    let spec = support::everything_spec(SERVER_ID, &server);
    support::runtime()?.block_on(measure(options, &spec, &server))
}

/// rho's side: one session's table of exported names and its connections by server.
struct RhoPath {
    names: ExportedNames,
    connections: HashMap<String, Connection>,
    exported: String,
    progress: mpsc::Sender<Progress>,
    session: Cancel,
    max_output_bytes: u64,
}

impl RhoPath {
    async fn call(&self, arguments: &Map<String, Value>) -> Result<String, String> {
        let target = self
            .names
            .resolve(&self.exported)
            .ok_or_else(|| format!("{} does not resolve", self.exported))?;
        let connection = self
            .connections
            .get(&target.server)
            .ok_or_else(|| format!("no connection for {}", target.server))?;
        let result = connection
            .call_tool(
                &target.tool,
                Some(arguments.clone()),
                Some(self.progress.clone()),
                self.session.child_token(),
            )
            .await
            .map_err(|e| e.to_string())?;
        let rendered = rho_mcp::render_result(&result, self.max_output_bytes);
        if rendered.is_error {
            return Err(format!(
                "rho: the server marked the call an error: {}",
                rendered.text
            ));
        }
        Ok(rendered.text)
    }
}

/// The baseline: a bare `rmcp` session and its child process.
struct BarePath {
    service: RunningService<RoleClient, ()>,
    child: tokio::process::Child,
}

impl BarePath {
    async fn start(spec: &McpServerSpec, server: &Path) -> Result<Self, String> {
        // The same sanitized environment rho gives the server.
        let env = rho_mcp::server_environment(spec, &rho_mcp::process_ambient)
            .map_err(|e| e.to_string())?;
        let mut child = tokio::process::Command::new(server)
            .arg("stdio")
            .env_clear()
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", server.display()))?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err("the bare client's server has no stdio pipes".into());
        };
        let service = serve_client_with_lifecycle((), (stdout, stdin), lifecycle())
            .await
            .map_err(|e| format!("bare rmcp handshake failed: {e}"))?;
        Ok(Self { service, child })
    }

    async fn call(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<rmcp::model::CallToolResult, String> {
        self.service
            .call_tool(CallToolRequestParams::new(TOOL).with_arguments(arguments.clone()))
            .await
            .map_err(|e| format!("bare rmcp call failed: {e}"))
    }

    async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(3), self.service.close()).await;
        drop(self.service);
        if tokio::time::timeout(Duration::from_secs(3), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// The text of the first content block of a bare result (checked outside the timed window).
fn bare_text(result: &rmcp::model::CallToolResult) -> Result<String, String> {
    if result.is_error == Some(true) {
        return Err("bare: the server marked the call an error".into());
    }
    let value = serde_json::to_value(&result.content).map_err(|e| e.to_string())?;
    value
        .get(0)
        .and_then(|block| block.get("text"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("bare: unexpected result {value}"))
}

fn arguments(message: &str) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("message".into(), Value::String(message.to_owned()));
    map
}

async fn measure(options: &Options, spec: &McpServerSpec, server: &Path) -> Result<(), String> {
    let load_at_start = support::load();
    let started = Instant::now();
    let connection = rho_mcp::connect(spec, &rho_mcp::process_ambient)
        .await
        .map_err(|e| format!("rho could not connect to server-everything: {e}"))?;
    let rho_connect = started.elapsed();
    let rho_era = connection.summary.protocol_version.clone();
    let server_info = connection
        .summary
        .server_info
        .as_ref()
        .map(|info| {
            let field = |key: &str| info.get(key).and_then(Value::as_str).unwrap_or("?");
            format!("{} {}", field("name"), field("version"))
        })
        .unwrap_or_else(|| "?".into());
    let mut names = ExportedNames::default();
    let mut exported = None;
    for tool in &connection.tools {
        let name = names.assign(SERVER_ID, &tool.name);
        if tool.name == TOOL {
            exported = Some(name);
        }
    }
    let exported = exported.ok_or_else(|| format!("server-everything has no `{TOOL}` tool"))?;
    // A session keeps a progress channel open for the tool card; echo never reports progress.
    let (progress, _progress_rx) = mpsc::channel::<Progress>(64);
    let rho = RhoPath {
        names,
        connections: HashMap::from([(SERVER_ID.to_owned(), connection)]),
        exported,
        progress,
        session: Cancel::new(),
        max_output_bytes: spec.max_output_bytes,
    };

    let started = Instant::now();
    let bare = BarePath::start(spec, server).await?;
    let bare_connect = started.elapsed();
    let bare_era = bare
        .service
        .peer_info()
        .map(|info| info.protocol_version.to_string())
        .unwrap_or_default();

    eprintln!(
        "call_overhead: {} warm-up + {} timed calls per path, blocks of {}",
        options.warmup, options.calls, options.block
    );
    let mut rho_times = Vec::with_capacity(options.calls);
    let mut bare_times = Vec::with_capacity(options.calls);
    let total = options.warmup + options.calls;
    let mut done = 0;
    let mut block_index = 0;
    while done < total {
        let n = options.block.min(total - done);
        // Alternate which path goes first, block by block.
        for rho_turn in [block_index % 2 == 0, block_index % 2 != 0] {
            for i in done..done + n {
                let message = format!("call {i:06}");
                let args = arguments(&message);
                let expected = format!("Echo: {message}");
                let timed = i >= options.warmup;
                if rho_turn {
                    let start = Instant::now();
                    let text = rho.call(&args).await?;
                    let elapsed = start.elapsed();
                    if text != expected {
                        return Err(format!("rho: expected {expected:?}, got {text:?}"));
                    }
                    if timed {
                        rho_times.push(elapsed);
                    }
                } else {
                    let start = Instant::now();
                    let result = bare.call(&args).await?;
                    let elapsed = start.elapsed();
                    let text = bare_text(&result)?;
                    if text != expected {
                        return Err(format!("bare: expected {expected:?}, got {text:?}"));
                    }
                    if timed {
                        bare_times.push(elapsed);
                    }
                }
            }
        }
        done += n;
        block_index += 1;
    }
    for (_, connection) in rho.connections {
        connection.close().await;
    }
    bare.close().await;

    let (Some(r), Some(b)) = (Latency::of(&rho_times), Latency::of(&bare_times)) else {
        return Err("no timed calls".into());
    };
    println!(
        "tools/call round trip: rho's full path vs a bare rmcp client (server-everything, stdio)"
    );
    println!("machine:  {}", support::machine());
    println!("load avg: {load_at_start} (at start)");
    println!("server:   {} ({server_info})", server.display());
    println!(
        "eras:     rho {rho_era}, bare {bare_era}; connect took {:.0} ms (rho) and {:.0} ms (bare)",
        rho_connect.as_secs_f64() * 1e3,
        bare_connect.as_secs_f64() * 1e3
    );
    println!(
        "calls:    {} timed per path after {} warm-up, sequential, alternating in blocks of {}",
        options.calls, options.warmup, options.block
    );
    println!(
        "rho path: ExportedNames::resolve + Connection::call_tool (progress, cancel, budget) + render_result"
    );
    println!("baseline: rmcp Peer::call_tool on its own session");
    println!();
    println!(
        "{:<10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "path", "p50 µs", "p90 µs", "p99 µs", "mean µs", "min µs", "max µs"
    );
    for (name, l) in [("rho", r), ("bare rmcp", b)] {
        println!(
            "{name:<10} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
            l.p50, l.p90, l.p99, l.mean, l.min, l.max
        );
    }
    println!();
    let (p50, p99, mean) = (r.p50 / b.p50, r.p99 / b.p99, r.mean / b.mean);
    println!(
        "rho/bare: p50 {p50:.2}x ({:+.1} µs), p99 {p99:.2}x ({:+.1} µs), mean {mean:.2}x ({:+.1} µs)",
        r.p50 - b.p50,
        r.p99 - b.p99,
        r.mean - b.mean
    );
    let verdict = if p50 <= GOAL_RATIO && p99 <= GOAL_RATIO {
        "met"
    } else {
        "NOT met"
    };
    println!("goal: p50 and p99 ≤ {GOAL_RATIO:.1}x the bare client: {verdict}");
    Ok(())
}

/// Per-call figures in microseconds.
#[derive(Clone, Copy)]
struct Latency {
    p50: f64,
    p90: f64,
    p99: f64,
    mean: f64,
    min: f64,
    max: f64,
}

impl Latency {
    fn of(times: &[Duration]) -> Option<Self> {
        let mut us: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        us.sort_by(f64::total_cmp);
        // Nearest rank: the smallest value with at least p% of the calls at or below it.
        let rank = |p: usize| us[(us.len() * p).div_ceil(100).max(1) - 1];
        Some(Self {
            p50: rank(50),
            p90: rank(90),
            p99: rank(99),
            mean: us.iter().sum::<f64>() / us.len() as f64,
            min: *us.first()?,
            max: *us.last()?,
        })
    }
}
