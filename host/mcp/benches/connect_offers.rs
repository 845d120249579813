//! What listing a server's prompts and resources at connect costs: `rho_mcp::connect_with` to
//! the reference `server-everything` (stdio) as a session connects (tools, then `prompts/list`,
//! `resources/list` and `resources/templates/list`), against the same connection with the
//! prompts and resources left unlisted (`skip_offers`), in the same run. Each connect starts a
//! fresh server process and is closed again; the two kinds alternate (and which goes first
//! alternates too) so drift on a noisy machine hits both alike. The goal: listing adds at most
//! 10% to the server's startup. Results go in `docs/benchmarks.md`.
//!
//! `cargo bench -p rho-mcp --bench connect_offers [-- --runs N --warmup N]`

// A benchmark binary owns its stdout (the result table) and reports failures on stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use rho_component::McpServerSpec;
use rho_mcp::ClientOptions;

/// The goal: listing prompts and resources adds at most this share to the startup.
const GOAL: f64 = 0.10;

const USAGE: &str = "\
usage: cargo bench -p rho-mcp --bench connect_offers [-- options]

options:
  --runs N     timed connects of each kind (default 31)
  --warmup N   untimed connects of each kind before them (default 3)

needs the test peers: npm ci --prefix tests/peers
";

fn main() -> ExitCode {
    let (runs, warmup) = match parse(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("connect_offers: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if cfg!(debug_assertions) {
        eprintln!(
            "connect_offers: warning: this is a debug build; run it with `cargo bench` for \
             figures worth recording"
        );
    }
    let outcome = support::runtime().and_then(|runtime| runtime.block_on(measure(runs, warmup)));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("connect_offers: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `(runs, warmup)`; `Ok(None)` asks for the usage text.
fn parse(args: impl Iterator<Item = String>) -> Result<Option<(usize, usize)>, String> {
    let (mut runs, mut warmup) = (31, 3);
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            let value = args.next().ok_or_else(|| format!("{name} needs a value"))?;
            value
                .parse()
                .map_err(|_| format!("{name}: {value:?} is not a number"))
        };
        match arg.as_str() {
            // `cargo bench` passes `--bench` to every bench binary.
            "--bench" => {}
            "-h" | "--help" => return Ok(None),
            "--runs" => runs = number("--runs")?,
            "--warmup" => warmup = number("--warmup")?,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    Ok(Some((runs, warmup)))
}

/// What a session declares (the listing it measures is what a session does).
fn options(workspace: PathBuf, skip_offers: bool) -> ClientOptions {
    ClientOptions {
        roots: Some(workspace),
        elicitation: true,
        sampling: false,
        skip_offers,
        oauth: None,
    }
}

/// One connect: its time (close excluded) and how many prompts and resources it listed.
async fn connect(
    spec: &McpServerSpec,
    options: &ClientOptions,
) -> Result<(Duration, usize), String> {
    let started = Instant::now();
    let connection = rho_mcp::connect_with(spec, &rho_mcp::process_ambient, options)
        .await
        .map_err(|e| e.to_string())?;
    let elapsed = started.elapsed();
    let listed = connection.prompts().len() + connection.resources().len();
    connection.close().await;
    Ok((elapsed, listed))
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn p90(times: &[Duration]) -> Duration {
    times[(times.len() * 9).div_ceil(10).max(1) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

async fn measure(runs: usize, warmup: usize) -> Result<(), String> {
    let load_at_start = support::load();
    let server = support::server_everything()?;
    let spec = support::everything_spec("everything", &server);
    let workspace = std::env::temp_dir();
    let full = options(workspace.clone(), false);
    let tools_only = options(workspace, true);
    let mut with = Vec::with_capacity(runs);
    let mut without = Vec::with_capacity(runs);
    let mut listed = 0;
    // Each round's two connects ran back to back: their difference is the least noisy
    // estimate of what listing costs.
    let mut paired = Vec::with_capacity(runs);
    for round in 0..warmup + runs {
        let mut pair = [Duration::ZERO; 2];
        // Alternate which kind goes first, so neither always meets a warmer machine.
        let order = if round % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for list in order {
            let (time, count) = connect(&spec, if list { &full } else { &tools_only }).await?;
            if round < warmup {
                continue;
            }
            if list {
                listed = count;
                with.push(time);
                pair[0] = time;
            } else {
                pair[1] = time;
                if count != 0 {
                    return Err(format!(
                        "skip_offers still listed {count} prompts and resources"
                    ));
                }
                without.push(time);
            }
        }
        if round >= warmup {
            paired.push(ms(pair[0]) - ms(pair[1]));
        }
    }
    if listed == 0 {
        return Err("server-everything listed no prompts or resources".into());
    }
    let (with_median, without_median) = (median(&mut with), median(&mut without));
    paired.sort_by(f64::total_cmp);
    let added = paired[paired.len() / 2];
    let share = added / ms(without_median);
    println!("connect_offers: {runs} connects of each kind after {warmup} warm-up rounds");
    println!("machine:  {}", support::machine());
    println!(
        "load:     {load_at_start} (start), {} (end)",
        support::load()
    );
    println!(
        "tools only (baseline):            median {:>8.2} ms   p90 {:>8.2} ms",
        ms(without_median),
        ms(p90(&without))
    );
    println!(
        "tools, prompts, resources ({listed:>3}): median {:>8.2} ms   p90 {:>8.2} ms",
        ms(with_median),
        ms(p90(&with))
    );
    println!(
        "listing adds {added:+.2} ms (median of the {runs} paired differences) = {:+.1}% of \
         the startup (goal <= {:.0}%): {}",
        share * 100.0,
        GOAL * 100.0,
        if share <= GOAL { "met" } else { "NOT met" }
    );
    Ok(())
}
