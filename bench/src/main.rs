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
//! handshake and calling).
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
mod corpus;
mod fakes;
mod json;
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

/// Why the bench stopped: bad usage (exit 2) or a failed measurement (exit 1).
#[derive(Debug)]
pub enum Error {
    /// The command line could not be understood.
    Usage(String),
    /// Something the bench ran or wrote failed.
    Failed(String),
}

impl From<String> for Error {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

const USAGE: &str = "\
usage: rho-bench <command> [options]

commands:
  plugins-list   median wall time of `rho plugins list --json` over generated plugin roots,
                 against VT Code's Agent Plugins loader (vtcode-agent-plugins, driven as
                 `vtcode plugins list` drives it) and a process that only reads the same files
  startup        median wall time of `rho plugins list` with nothing installed, against a
                 process that does nothing
  mcp-startup    median wall time of `rho mcp list --connect --json` with 10 fake-mcp stdio
                 servers, against the same with one server (and none, for reference)
  mcp-list       median wall time of `rho mcp list --json` (no connect) over 1,000 plugins and
                 20 configured servers, against `rho plugins list --json` on the same home
  rpc-turn       median time of one `rho rpc` prompt (2 model requests + 1 read_file call)
                 against fake-model, against the same two requests POSTed straight to a second
                 fake-model plus a direct read of the file
  rpc-ready      median time from spawning `rho rpc` to its `ready` line, against a process
                 that prints one line
  question-round-trip
                 median round trip of a fake-mcp form question (elicitation/create) through
                 `rho rpc --accept-questions` to the client and back, less the client's own
                 answer time, against the bench as the server's own client over pipes
  complete-cached
                 median time of a `rho rpc` `complete` answered from rho's cache, against
                 `abort` with nothing running (and uncached `complete`, for reference)
  oauth-connect  median wall time of `rho mcp list --connect --json` to an OAuth-protected
                 server with a stored token, against the same server and token through a
                 configured header; and the token requests of 5 refreshes
  tui-first-frame
                 median time from spawning the interactive rho on a 120x40 pty (util-linux
                 script) to its first frame on screen, in an empty project and in
                 examples/demo-project, against `rho plugins list` through the same wrapper;
                 and rho's own first_frame_ms from its log
  tui-keys       p50/p99 keystroke-to-frame latency (rho's input_to_frame_us) of 200 keys
                 typed while a reply streams at about 1,000 tokens/s from fake-model, against
                 the same keys with nothing streaming; and idle CPU after the reply
  tui-resume     first frame of a resumed 2,000-message session (conversation_frame_ms), the
                 draw time of 30 PageUp frames and peak RSS (VmHWM), against an empty session
  soak           500 start/stop cycles of a `rho rpc` session with 3 fake-mcp stdio servers:
                 mean/p50/p99 cycle time and the processes, descriptors and zombies left
                 behind (from /proc), against the same cycles with 0 servers; fails on a leak
  misbehaving    p50/p99 latency of 200 calls of a healthy fake-mcp server's tool in a `rho rpc`
                 session (turns scripted by fake-model) beside 24 misbehaving servers, against
                 a session with the healthy server alone; fails if p99 > 200 ms
  lazy-ready     median time from spawning `rho rpc` to its `ready` line with 50 fake-mcp
                 servers with startup = lazy and known from the tool cache (filled first by one
                 session), against the same with no server (and 50 eager servers, for
                 reference); fails if a lazy server is spawned (pid file, /proc)
  lazy-first-call
                 median time of the first call of a lazy fake-mcp server's tool in a `rho rpc`
                 session (tool/call to tool/result: spawn, handshake, call), against the bench
                 spawning fake-mcp and doing initialize + tools/call itself over pipes
  corpus DIR N   write a corpus of N plugins to DIR/home (and an empty DIR/project), for
                 profiling by hand with HOME=DIR/home rho --cwd DIR/project plugins list --json
  help           print this text

options:
  --rho PATH     the rho binary (default: `rho` next to this binary, i.e. target/release/rho)
  --runs N       timed runs per measurement (default: 21 for plugins-list and mcp-list, 51 for
                 startup, rpc-ready and lazy-ready, 31 for mcp-startup, 200 turns for rpc-turn,
                 200 questions for question-round-trip, 1000 requests of each kind for
                 complete-cached, 21 for tui-first-frame, 3 sessions for tui-keys, 11
                 resumes of each session for tui-resume, 500 cycles for soak, 200 calls for
                 misbehaving, 101 sessions for lazy-first-call)
  --warmup N     untimed runs before them (default: 3; 5 for rpc-ready, lazy-ready and
                 lazy-first-call, 10 turns for rpc-turn, 20 questions for question-round-trip,
                 100 for complete-cached, 1 session for tui-keys, 2 for tui-resume, 10 calls
                 for misbehaving)
  --sizes LIST   plugins-list only: comma-separated plugin counts (default: 250,500,1000,2000)
  --vtcode PATH  plugins-list only: the VT Code loader peer (default: its build in
                 bench/peers/vtcode-loader/target/release/vtcode-loader)
  --fake PATH    mcp-startup, question-round-trip, complete-cached, soak, misbehaving and the
                 lazy-* commands: the fake-mcp server (default: `fake-mcp` next to rho)
  --servers N    mcp-startup: servers started in parallel (default: 10); soak: servers in
                 each session (default: 3); lazy-ready: lazy servers (default: 50)
  --fake-model PATH
                 rpc-turn, question-round-trip, tui-keys, tui-resume, misbehaving and
                 lazy-first-call: the fake-model server
                 (default: `fake-model` next to rho)
  --browser PATH oauth-connect only: the rho-test-browser that logs in (default: next to rho)
  --key-ms N     tui-keys only: milliseconds between typed keys (default: 15)
  --messages N   tui-resume only: messages in the resumed session (default: 2000)

build the binaries first: cargo build --release -p rho-cli -p rho-bench
(plugins-list also needs the peer: cargo build --release --locked --ignore-rust-version
--manifest-path bench/peers/vtcode-loader/Cargo.toml;
mcp-startup and complete-cached also need: cargo build --release -p rho-e2e --bin fake-mcp;
rpc-turn: cargo build --release -p rho-e2e --bin fake-model; question-round-trip: both;
oauth-connect: cargo build --release -p rho-e2e --bin rho-test-browser, and the OAuth peers;
tui-keys and tui-resume: fake-model; soak and lazy-ready: fake-mcp; misbehaving and
lazy-first-call: both; the tui-* commands need /usr/bin/script from util-linux)
";

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    match run(argv) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Usage(message)) => {
            eprintln!("rho-bench: {message}\n\n{USAGE}");
            ExitCode::from(2)
        }
        Err(Error::Failed(message)) => {
            eprintln!("rho-bench: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(argv: Vec<std::ffi::OsString>) -> Result<(), Error> {
    match args::parse(argv)? {
        Command::Help => {
            print!("{USAGE}");
            Ok(())
        }
        Command::PluginsList(options) => {
            warn_if_debug_build();
            plugins_list::run(&resolve(options)?)
        }
        Command::Startup(options) => {
            warn_if_debug_build();
            startup::run(&resolve(options)?)
        }
        Command::McpStartup(options) => {
            warn_if_debug_build();
            mcp_startup::run(&resolve(options)?)
        }
        Command::McpList(options) => {
            warn_if_debug_build();
            mcp_list::run(&resolve(options)?)
        }
        Command::RpcTurn(options) => {
            warn_if_debug_build();
            rpc_turn::run(&resolve(options)?)
        }
        Command::RpcReady(options) => {
            warn_if_debug_build();
            rpc_ready::run(&resolve(options)?)
        }
        Command::QuestionRoundTrip(options) => {
            warn_if_debug_build();
            question_round_trip::run(&resolve(options)?)
        }
        Command::CompleteCached(options) => {
            warn_if_debug_build();
            complete_cached::run(&resolve(options)?)
        }
        Command::OauthConnect(options) => {
            warn_if_debug_build();
            oauth_connect::run(&resolve(options)?)
        }
        Command::TuiFirstFrame(options) => {
            warn_if_debug_build();
            tui_first_frame::run(&resolve(options)?)
        }
        Command::TuiKeys(options) => {
            warn_if_debug_build();
            tui_keys::run(&resolve(options)?)
        }
        Command::TuiResume(options) => {
            warn_if_debug_build();
            tui_resume::run(&resolve(options)?)
        }
        Command::Soak(options) => {
            warn_if_debug_build();
            soak::run(&resolve(options)?)
        }
        Command::Misbehaving(options) => {
            warn_if_debug_build();
            misbehaving::run(&resolve(options)?)
        }
        Command::LazyReady(options) => {
            warn_if_debug_build();
            lazy_ready::run(&resolve(options)?)
        }
        Command::LazyFirstCall(options) => {
            warn_if_debug_build();
            lazy_first_call::run(&resolve(options)?)
        }
        Command::ReadFiles(root) => baseline::read_files(&root),
        Command::Noop => Ok(()),
        Command::ReadyLine => rpc_ready::ready_line(),
        Command::Corpus { dir, plugins } => write_corpus(&dir, plugins),
    }
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
