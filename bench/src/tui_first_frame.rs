//! `rho-bench tui-first-frame`: the time from spawning the pty'd interactive `rho` (nothing
//! configured) to its first frame on screen, against `rho plugins list` through the same
//! `script` wrapper (so the wrapper's own cost, a `sh` and a `stty`, cancels), in an empty
//! project and in `examples/demo-project`.
//!
//! The clock starts just before `script` is spawned and stops when the bench has read the
//! first frame's status line (`starting…`, drawn before the host has started) from the pty.
//! rho's own `first_frame_ms` (from its process start to the end of that frame's write) is
//! read from its log afterwards. Then the bench quits the session (Ctrl-C twice), outside the
//! timed window. The baseline's clock stops at the last bytes `rho plugins list` printed (read
//! once the pty's output has ended): rho exits right after them, while `script` itself lingers
//! about 10 ms after its child has exited (a last 10 ms `poll` for output), which a first
//! frame never waits for. That time to `script`'s exit is shown too.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::measure::rho_args;
use crate::scratch::Scratch;
use crate::stats::{self, Summary, verdict};
use crate::tui::{self, Log, PtyCommand, QUIT};
use crate::{Error, Resolved, context, machine};

/// The goal for the first frame in an empty project.
const GOAL_MS: f64 = 50.0;
/// The goal in the demo project: at most this multiple of `rho plugins list` there ...
const DEMO_RATIO: f64 = 1.2;
/// ... plus this much.
const DEMO_EXTRA_MS: f64 = 40.0;
/// The status line of the first frame (the host has not started yet).
const FIRST_FRAME_TEXT: &str = "starting…";
/// How long a first frame (or the baseline's exit) may take before the bench gives up.
const TIMEOUT: Duration = Duration::from_secs(10);

/// One project: the interactive rho and the baseline there, with their timed runs.
struct Case {
    name: &'static str,
    tui: PtyCommand,
    list: PtyCommand,
    tui_runs: Vec<Duration>,
    own_ms: Vec<f64>,
    list_runs: Vec<Duration>,
    list_exit_runs: Vec<Duration>,
}

/// The repository's `examples/demo-project`, from where this crate was built.
fn demo_project() -> Result<PathBuf, Error> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("examples")
        .join("demo-project");
    let dir = std::fs::canonicalize(&dir).map_err(|e| {
        format!(
            "the demo project {} is missing ({e}); run rho-bench from a checkout of the rho \
             repository",
            dir.display()
        )
    })?;
    Ok(dir)
}

/// Times the commands and prints the comparison.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let script = tui::script_binary()?;
    let demo = demo_project()?;
    let load_at_start = machine::load();
    let scratch = Scratch::new("tui-first-frame")?;
    let home = scratch.dir("home")?;
    let empty = scratch.dir("project")?;
    let rho_home = home.join(".rho");
    let env = tui::pty_env(&home, &rho_home);
    let log = Log::new(&rho_home);

    let case = |name: &'static str, project: &Path| Case {
        name,
        tui: PtyCommand::new(
            &format!("rho ({name} project)"),
            &resolved.rho,
            &rho_args(project, &[]),
            &env,
            project,
        ),
        list: PtyCommand::new(
            &format!("rho plugins list ({name} project)"),
            &resolved.rho,
            &rho_args(project, &["plugins", "list"]),
            &env,
            project,
        ),
        tui_runs: Vec::with_capacity(o.runs),
        own_ms: Vec::with_capacity(o.runs),
        list_runs: Vec::with_capacity(o.runs),
        list_exit_runs: Vec::with_capacity(o.runs),
    };
    let mut cases = [case("empty", &empty), case("demo", &demo)];
    eprintln!("rho-bench: timing `{}`", cases[0].tui.command_line());

    for i in 0..o.warmup + o.runs {
        // Rotate the four commands so a slow drift in the machine favours none of them.
        for k in 0..4 {
            let slot = (i + k) % 4;
            let case = &mut cases[slot / 2];
            let timed = i >= o.warmup;
            if slot % 2 == 0 {
                let (wall, own) = first_frame(&mut case.tui, &log, i == 0)?;
                if timed {
                    case.tui_runs.push(wall);
                    case.own_ms.push(own);
                }
            } else {
                let mut pty = case.list.spawn()?;
                let ended = pty.finish(TIMEOUT)?;
                let last = pty
                    .last_output()
                    .ok_or_else(|| format!("`{}` printed nothing", case.list.command_line()))?;
                if timed {
                    case.list_runs.push(last - pty.started());
                    case.list_exit_runs.push(ended - pty.started());
                }
            }
        }
    }
    report(resolved, &script, &demo, &load_at_start, &cases)
}

/// One interactive start: the wall time to the first frame on screen and rho's own
/// `first_frame_ms`; then Ctrl-C twice. The first run also checks that rho drew for 120×40.
fn first_frame(
    tui: &mut PtyCommand,
    log: &Log,
    check_size: bool,
) -> Result<(Duration, f64), String> {
    let offset = log.len();
    let pty = tui.spawn()?;
    let seen = pty.wait_for(FIRST_FRAME_TEXT.as_bytes(), 0, TIMEOUT)?;
    let wall = seen.at - pty.started();
    let own = log.wait_for_field(offset, "first_frame_ms", TIMEOUT)?;
    if check_size {
        tui::check_size(&pty.output(), "tui-first-frame")?;
    }
    pty.quit(&QUIT)?;
    Ok((wall, own))
}

fn report(
    resolved: &Resolved,
    script: &Path,
    demo: &Path,
    load_at_start: &str,
    cases: &[Case; 2],
) -> Result<(), Error> {
    let o = &resolved.options;
    let summary =
        |runs: &[Duration]| Summary::of(runs).ok_or_else(|| Error::Failed("no timed runs".into()));
    println!(
        "interactive rho: spawn to the first frame on a {}×{} pty, nothing configured",
        tui::COLS,
        tui::ROWS
    );
    context::print(load_at_start, &resolved.rho);
    tui::print_pty(
        script,
        "--cwd <project>",
        "; the bench plays the terminal (answers its device-attributes query at once)",
    );
    println!(
        "clock:    spawn of script → the bench reads the first frame's status line \
         ({FIRST_FRAME_TEXT}); rho's own first_frame_ms (process start → frame written) from \
         its log"
    );
    println!(
        "baseline: `rho --cwd <project> plugins list` through the same wrapper, spawn → its last \
         output read (rho exits right after); spawn → script's exit also shown (script lingers \
         ~10 ms after its child)"
    );
    println!(
        "projects: empty = a new empty directory; demo = {}",
        demo.display()
    );
    println!(
        "runs:     {} timed after {} warm-up; the four commands rotate",
        o.runs, o.warmup
    );
    println!();
    println!(
        "{:<8} {:<22} {:>9} {:>7} {:>7} | {:>16} {:>7}",
        "project", "command", "median ms", "min", "p90", "own first_frame", "p90"
    );
    let mut medians = Vec::new();
    for case in cases {
        let tui_ms = summary(&case.tui_runs)?;
        let list_ms = summary(&case.list_runs)?;
        let exit_ms = summary(&case.list_exit_runs)?;
        let own = stats::median(&case.own_ms);
        println!(
            "{:<8} {:<22} {:>9.2} {:>7.2} {:>7.2} | {:>16.2} {:>7.2}",
            case.name,
            "rho (first frame)",
            tui_ms.median,
            tui_ms.min,
            tui_ms.p90,
            own,
            stats::percentile(&case.own_ms, 90)
        );
        println!(
            "{:<8} {:<22} {:>9.2} {:>7.2} {:>7.2} |",
            case.name, "rho plugins list", list_ms.median, list_ms.min, list_ms.p90
        );
        println!(
            "{:<8} {:<22} {:>9.2} {:>7.2} {:>7.2} |",
            case.name, "  … to script's exit", exit_ms.median, exit_ms.min, exit_ms.p90
        );
        medians.push((tui_ms.median, list_ms.median, own));
    }
    println!();
    for (case, (tui_ms, list_ms, _)) in cases.iter().zip(&medians) {
        println!(
            "{} project: first frame / plugins list: {:.2}x ({:+.2} ms)",
            case.name,
            tui_ms / list_ms,
            tui_ms - list_ms
        );
    }
    let [(empty_tui, _, empty_own), (demo_tui, demo_list, _)] = medians[..] else {
        return Err(Error::Failed("expected two projects".into()));
    };
    println!(
        "goal: first frame ≤ {GOAL_MS:.0} ms (median, empty project): {} ({empty_tui:.2} ms on \
         the pty; rho's own first_frame_ms {empty_own:.2} ms)",
        verdict(empty_tui <= GOAL_MS)
    );
    let limit = DEMO_RATIO * demo_list + DEMO_EXTRA_MS;
    println!(
        "goal: demo project first frame ≤ {DEMO_RATIO}x plugins list + {DEMO_EXTRA_MS:.0} ms = \
         {limit:.2} ms: {} ({demo_tui:.2} ms)",
        verdict(demo_tui <= limit)
    );
    Ok(())
}
