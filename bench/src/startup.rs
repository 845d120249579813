//! `rho-bench startup`: `rho plugins list` with an empty home and project, against a process that
//! starts and exits (this binary's hidden `noop` mode), so the figure separates rho's own start-up
//! from what spawning any process costs on the machine.

use std::ffi::OsStr;
use std::time::Duration;

use crate::measure::{Probe, rho_args};
use crate::scratch::Scratch;
use crate::stats::{Summary, verdict};
use crate::{Error, Resolved, context, machine};

/// The goal for the empty start-up median.
const GOAL_MS: f64 = 10.0;

/// Times both commands and prints the comparison.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let load_at_start = machine::load();
    let scratch = Scratch::new("startup")?;
    let home = scratch.dir("home")?;
    let project = scratch.dir("project")?;
    let rho_home = home.join(".rho");
    let env = [("HOME", home.as_path()), ("RHO_HOME", rho_home.as_path())];
    let rho = Probe::new(
        "rho",
        &resolved.rho,
        &rho_args(&project, &["plugins", "list"]),
        &env,
        &project,
        scratch.path().join("rho.stderr"),
    );
    let noop = Probe::new(
        "baseline",
        &resolved.bench,
        &[OsStr::new("noop")],
        &env,
        &project,
        scratch.path().join("noop.stderr"),
    );
    eprintln!("rho-bench: timing `{}`", rho.command_line());

    let mut stdout = Vec::new();
    let mut rho_runs: Vec<Duration> = Vec::with_capacity(o.runs);
    let mut noop_runs: Vec<Duration> = Vec::with_capacity(o.runs);
    for i in 0..o.warmup + o.runs {
        // Alternating which goes first keeps a slow drift in the machine from favouring either.
        let (r, n) = if i % 2 == 0 {
            let r = rho.run(&mut stdout)?;
            (r, noop.run(&mut stdout)?)
        } else {
            let n = noop.run(&mut stdout)?;
            (rho.run(&mut stdout)?, n)
        };
        if i >= o.warmup {
            rho_runs.push(r);
            noop_runs.push(n);
        }
    }
    let (Some(rho_ms), Some(noop_ms)) = (Summary::of(&rho_runs), Summary::of(&noop_runs)) else {
        return Err(Error::Failed("no timed runs".into()));
    };

    println!("rho plugins list with nothing installed (whole process, stdout drained)");
    context::print(&load_at_start, &resolved.rho);
    println!("baseline: rho-bench noop (spawn, exec and exit of a Rust binary that does nothing)");
    println!(
        "runs:     {} timed after {} warm-up; rho and baseline alternate",
        o.runs, o.warmup
    );
    println!();
    println!(
        "{:<22} {:>9} {:>7} {:>7}",
        "command", "median ms", "min", "p90"
    );
    for (name, s) in [("rho plugins list", rho_ms), ("rho-bench noop", noop_ms)] {
        println!("{name:<22} {:>9.2} {:>7.2} {:>7.2}", s.median, s.min, s.p90);
    }
    println!();
    println!(
        "rho/baseline: {:.2}x ({:+.2} ms over a bare process)",
        rho_ms.median / noop_ms.median,
        rho_ms.median - noop_ms.median
    );
    let verdict = verdict(rho_ms.median <= GOAL_MS);
    println!(
        "goal: empty start-up ≤ {GOAL_MS:.0} ms median: {verdict} ({:.2} ms)",
        rho_ms.median
    );
    Ok(())
}
