//! `rho-bench`: benchmarks that run the real `rho` binary as a user does (whole process, stdout
//! drained through a pipe) and report each figure next to a baseline measured in the same run,
//! because these machines are too noisy for absolute numbers alone.
//!
//! Subcommands: `plugins-list` (discovery over generated corpora of 250..2000 plugins against
//! VT Code's loader, built from `peers/vtcode-loader/`, and a process that only reads the same
//! files), `startup` (`rho plugins list` with nothing installed
//! against a process that does nothing), `mcp-startup` (`rho mcp list --connect` with 10 stdio
//! servers against one), `mcp-list` (`rho mcp list` without connecting against
//! `rho plugins list` on the same corpus), `rpc-turn` (one `rho rpc` turn with one tool call
//! against the scripted model server's own time for the same requests), `rpc-ready`
//! (`rho rpc` spawn to its `ready` line against a process that prints one line),
//! `oauth-connect` (`rho mcp list --connect` with a stored OAuth token against a configured
//! header carrying the same token),
//! `question-round-trip` (a server's form question through `rho rpc` and back against the bench
//! as the server's own client) and `complete-cached` (a cached `complete` against `abort` with
//! nothing running); for the interactive session on a pty (through util-linux `script`, the
//! shared pieces in `tui`): `tui-first-frame` (spawn to the first frame against
//! `rho plugins list` through the same wrapper), `tui-keys` (keystroke-to-frame latency while a
//! reply streams against the same with nothing streaming, and idle CPU) and `tui-resume` (a
//! 2,000-message session's first frame, paging and peak RSS against an empty session); for
//! hardening: `soak` (500 `rho rpc` session start/stop cycles with 3 stdio servers, leaked
//! processes, descriptors and zombies counted from `/proc` (`processes`), against the same
//! cycles with none) and `misbehaving` (a healthy server's call latency in a session beside 24
//! misbehaving servers, against a session with the healthy server alone); for lazy MCP
//! servers (the shared pieces in `lazy`): `lazy-ready` (`rho rpc`'s `ready` with 50 lazy
//! servers known from the tool cache against none, and 50 eager ones for reference; fails if a
//! lazy server is spawned) and `lazy-first-call` (the first call of a lazy stdio server's tool
//! through `rho rpc` against the bench as a bare client spawning the server, doing the
//! handshake and calling); for `rho mcp serve`: `gateway-call` (one `tools/call` through the
//! gateway against the same call made directly to the upstream server).
//! `read-files`, `noop` and `ready-line` are the hidden baseline modes the bench re-executes
//! itself in.
//! Results are recorded in `docs/benchmarks.md`; the MCP `tools/call` benchmark is a bench
//! target of `rho-mcp` (only that crate may use `rmcp`).

// A benchmark binary owns its stdout (the result tables) and reports progress and failures on
// stderr, so the workspace-wide print lints do not apply here.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod baseline;
mod complete_cached;
mod context;
mod corpus;
mod fakes;
mod gateway_call;
mod json_lines;
mod lazy;
mod lazy_first_call;
mod lazy_ready;
mod machine;
mod mcp_list;
mod mcp_startup;
mod measure;
mod misbehaving;
mod oauth_connect;
mod plugins_list;
mod processes;
mod question_round_trip;
mod rpc_ready;
mod rpc_turn;
mod scratch;
mod soak;
mod startup;
mod stats;
mod toml_text;
mod tui;
mod tui_first_frame;
mod tui_keys;
mod tui_resume;

use std::process::ExitCode;

use args::{Command, Options};

/// Why the bench stopped: bad usage (exit 2; or `--help`, exit 0) or a failed measurement
/// (exit 1).
#[derive(Debug)]
pub enum Error {
    /// The command line could not be understood, or asked for help: clap's report.
    Usage(clap::Error),
    /// Something the bench ran or wrote failed.
    Failed(String),
}

impl From<String> for Error {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    match args::parse(argv).and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Usage(report)) => {
            // Help goes to stdout (exit 0), a usage error to stderr (exit 2).
            if let Err(e) = report.print() {
                eprintln!("rho-bench: cannot print the usage: {e}");
            }
            ExitCode::from(u8::try_from(report.exit_code()).unwrap_or(2))
        }
        Err(Error::Failed(message)) => {
            eprintln!("rho-bench: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<(), Error> {
    match command {
        Command::PluginsList(bench) => benchmark(plugins_list::run, bench.into()),
        Command::Startup(common) => benchmark(startup::run, common.into()),
        Command::McpStartup(bench) => benchmark(mcp_startup::run, bench.into()),
        Command::McpList(common) => benchmark(mcp_list::run, common.into()),
        Command::RpcTurn(bench) => benchmark(rpc_turn::run, bench.into()),
        Command::RpcReady(common) => benchmark(rpc_ready::run, common.into()),
        Command::QuestionRoundTrip(bench) => benchmark(question_round_trip::run, bench.into()),
        Command::CompleteCached(bench) => benchmark(complete_cached::run, bench.into()),
        Command::OauthConnect(bench) => benchmark(oauth_connect::run, bench.into()),
        Command::TuiFirstFrame(common) => benchmark(tui_first_frame::run, common.into()),
        Command::TuiKeys(bench) => benchmark(tui_keys::run, bench.into()),
        Command::TuiResume(bench) => benchmark(tui_resume::run, bench.into()),
        Command::Soak(bench) => benchmark(soak::run, bench.into()),
        Command::Misbehaving(bench) => benchmark(misbehaving::run, bench.into()),
        Command::LazyReady(bench) => benchmark(lazy_ready::run, bench.into()),
        Command::LazyFirstCall(bench) => benchmark(lazy_first_call::run, bench.into()),
        Command::GatewayCall(bench) => benchmark(gateway_call::run, bench.into()),
        Command::ReadFiles { root } => baseline::read_files(&root),
        Command::Noop => Ok(()),
        Command::ReadyLine => rpc_ready::ready_line(),
        Command::Corpus { dir, plugins } => write_corpus(&dir, plugins),
    }
}

/// Runs one benchmark with `options`, the rho binary located first.
fn benchmark(run: fn(&Resolved) -> Result<(), Error>, options: Options) -> Result<(), Error> {
    warn_if_debug_build();
    run(&resolve(options)?)
}

/// Options with the rho binary located and checked.
pub struct Resolved {
    /// The rho binary under test.
    pub rho: std::path::PathBuf,
    /// This binary, re-executed for the baselines.
    pub bench: std::path::PathBuf,
    /// Everything else from the command line.
    pub options: Options,
}

fn resolve(options: Options) -> Result<Resolved, Error> {
    let bench = std::env::current_exe()
        .map_err(|e| format!("cannot locate the rho-bench binary itself: {e}"))?;
    let rho = match &options.rho {
        Some(path) => path.clone(),
        None => bench
            .parent()
            .map(|dir| dir.join(format!("rho{}", std::env::consts::EXE_SUFFIX)))
            .ok_or_else(|| format!("{} has no parent directory", bench.display()))?,
    };
    if !rho.is_file() {
        return Err(Error::Failed(format!(
            "rho binary not found at {}; build it with `cargo build --release -p rho-cli` \
             (or pass --rho PATH)",
            rho.display()
        )));
    }
    let rho = std::path::absolute(&rho)
        .map_err(|e| format!("cannot make {} absolute: {e}", rho.display()))?;
    Ok(Resolved {
        rho,
        bench,
        options,
    })
}

fn write_corpus(dir: &std::path::Path, plugins: usize) -> Result<(), Error> {
    // Refuse to write into an existing directory: the corpus must be exactly what was generated.
    std::fs::create_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let project = dir.join("project");
    std::fs::create_dir(&project)
        .map_err(|e| format!("cannot create {}: {e}", project.display()))?;
    let corpus = corpus::generate(&dir.join("home"), plugins)?;
    println!(
        "{}: {plugins} plugins, {} files, {} bytes",
        corpus.root.display(),
        corpus.files,
        corpus.bytes
    );
    Ok(())
}

fn warn_if_debug_build() {
    if cfg!(debug_assertions) {
        eprintln!(
            "rho-bench: warning: this is a debug build; baselines are not comparable \
             (use cargo build --release -p rho-cli -p rho-bench)"
        );
    }
}
