//! The command line: a clap parser with one subcommand per benchmark (and the hidden modes the
//! bench re-executes itself in). Every benchmark takes `--rho`, `--runs` and `--warmup`
//! ([`Common`]), most with defaults of their own, and its own options ([`Bench`]); the option
//! blocks live in `args/options.rs`, the value checks in `args/values.rs`.

mod options;
#[cfg(test)]
mod tests;
mod values;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Arg, Parser, Subcommand};

pub use options::{Bench, Browser, Common, Corpora, FakeMcp, FakeModel, Fakes, McpServers};
pub use options::{Options, Resume, Typing};
use values::positive;

use crate::Error;

/// What the bench needs built before it runs, printed after the list of commands.
const BUILD_NOTE: &str = "\
build the binaries first: cargo build --release -p rho-cli -p rho-bench
(plugins-list also needs the peer: cargo build --release --locked --ignore-rust-version
--manifest-path bench/peers/vtcode-loader/Cargo.toml;
mcp-startup and complete-cached also need: cargo build --release -p rho-e2e --bin fake-mcp;
rpc-turn: cargo build --release -p rho-e2e --bin fake-model; question-round-trip: both;
oauth-connect: cargo build --release -p rho-e2e --bin rho-test-browser, and the OAuth peers;
tui-keys and tui-resume: fake-model; soak, lazy-ready and gateway-call: fake-mcp; misbehaving: both;
lazy-first-call: both, and cargo build --release -p rho-mcp --example sdk_first_call;
the tui-* commands need /usr/bin/script from util-linux)";

/// The whole command line.
#[derive(Debug, Parser)]
#[command(
    name = "rho-bench",
    about = "Benchmarks that run the real rho binary and print ratios against baselines \
             measured in the same run",
    after_help = BUILD_NOTE,
    subcommand_required = true,
    arg_required_else_help = true,
    // A repeated option keeps its last value.
    args_override_self = true
)]
struct Cli {
    /// The command to run.
    #[command(subcommand)]
    command: Command,
}

/// What to run. A benchmark's attribute sets only the defaults (and help) it does not share
/// with [`Common`] and its own options' block.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// `rho plugins list --json` against VT Code's plugin loader
    ///
    /// Median wall time of `rho plugins list --json` over generated plugin roots, against VT
    /// Code's Agent Plugins loader (vtcode-agent-plugins, driven as `vtcode plugins list` drives
    /// it) and a process that only reads the same files.
    #[command(verbatim_doc_comment)]
    PluginsList(Bench<Corpora>),
    /// `rho plugins list` with nothing installed against a process that does nothing
    ///
    /// Median wall time of `rho plugins list` with nothing installed, against a process that does
    /// nothing.
    // Startup runs take a few milliseconds each, so more of them cost little and steady the
    // median.
    #[command(verbatim_doc_comment, mut_arg("runs", default("51")))]
    Startup(Common),
    /// `rho mcp list --connect` with N stdio servers against one
    ///
    /// Median wall time of `rho mcp list --connect --json` with 10 fake-mcp stdio servers, against
    /// the same with one server (and none, for reference).
    #[command(verbatim_doc_comment, mut_arg("runs", default("31")))]
    McpStartup(Bench<McpServers>),
    /// `rho mcp list` without connecting against `rho plugins list`
    ///
    /// Median wall time of `rho mcp list --json` (no connect) over 1,000 plugins and 20
    /// configured servers, against `rho plugins list --json` on the same home.
    #[command(verbatim_doc_comment)]
    McpList(Common),
    /// One `rho rpc` turn with one tool call against the model server's own time
    ///
    /// Median time of one `rho rpc` prompt (2 model requests + 1 read_file call) against
    /// fake-model, against the same two requests POSTed straight to a second fake-model plus a
    /// direct read of the file.
    // A turn takes a few milliseconds: 200 of them steady the median; the first turns of a
    // session (connection set-up, caches) are warm-up.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", counting("200", "Timed turns")),
        mut_arg("warmup", counting("10", "Untimed turns before them"))
    )]
    RpcTurn(Bench<FakeModel>),
    /// `rho rpc` spawn to its `ready` line against a process that prints one line
    ///
    /// Median time from spawning `rho rpc` to its `ready` line, against a process that prints one
    /// line.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", default("51")),
        mut_arg("warmup", default("5"))
    )]
    RpcReady(Common),
    /// A server's form question through `rho rpc` and back against the bench as its own client
    ///
    /// Median round trip of a fake-mcp form question (elicitation/create) through `rho rpc
    /// --accept-questions` to the client and back, less the client's own answer time, against
    /// the bench as the server's own client over pipes.
    // A round trip takes tens of microseconds: 200 of them in calls of 20, after a warm-up call
    // of 20.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", counting("200", "Timed questions")),
        mut_arg("warmup", counting("20", "Questions in the untimed call before them"))
    )]
    QuestionRoundTrip(Bench<Fakes>),
    /// A cached `complete` through `rho rpc` against `abort` with nothing running
    ///
    /// Median time of a `rho rpc` `complete` answered from rho's cache, against `abort` with
    /// nothing running (and uncached `complete`, for reference).
    // A request takes a fraction of a millisecond: 1,000 of each kind cost about a second.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", counting("1000", "Timed requests of each kind")),
        mut_arg("warmup", counting("100", "Untimed requests of each kind before them"))
    )]
    CompleteCached(Bench<FakeMcp>),
    /// `rho mcp list --connect` with a stored OAuth token against a configured header
    ///
    /// Median wall time of `rho mcp list --connect --json` to an OAuth-protected server with a
    /// stored token, against the same server and token through a configured header; and the
    /// token requests of 5 refreshes.
    // A connection takes tens of milliseconds (the server introspects every bearer).
    #[command(verbatim_doc_comment)]
    OauthConnect(Bench<Browser>),
    /// The interactive rho's first frame on a pty against `rho plugins list`
    ///
    /// Median time from spawning the interactive rho on a 120x40 pty (util-linux script) to its
    /// first frame on screen, in an empty project and in examples/demo-project, against `rho
    /// plugins list` through the same wrapper; and rho's own first_frame_ms from its log.
    // A start takes a few milliseconds; the four commands rotate.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", counting("21", "Timed runs of each command"))
    )]
    TuiFirstFrame(Common),
    /// Keystroke-to-frame latency of the interactive rho while a reply streams
    ///
    /// P50/p99 keystroke-to-frame latency (rho's input_to_frame_us) of 200 keys typed while a
    /// reply streams at about 1,000 tokens/s from fake-model, against the same keys with nothing
    /// streaming; and idle CPU after the reply.
    // A run is a whole session of 200 keys idle and 200 while a reply streams, about 12 s; the
    // first session (page cache, fake-model's first connection) is warm-up.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", counting("3", "Timed sessions")),
        mut_arg("warmup", counting("1", "Untimed sessions before them"))
    )]
    TuiKeys(Bench<Typing>),
    /// Resuming a long session in the interactive rho against an empty one
    ///
    /// First frame of a resumed 2,000-message session (conversation_frame_ms), the draw time of
    /// 30 PageUp frames and peak RSS (VmHWM), against an empty session.
    // A run is one resume of each session with 30 PageUp keys, about 2 s each.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", counting("11", "Timed resumes of each session")),
        mut_arg("warmup", counting("2", "Untimed resumes of each session before them"))
    )]
    TuiResume(Bench<Resume>),
    /// `rho rpc` session start/stop cycles with stdio servers, leaks counted from `/proc`
    ///
    /// 500 start/stop cycles of a `rho rpc` session with 3 fake-mcp stdio servers: mean/p50/p99
    /// cycle time and the processes, descriptors and zombies left behind (from /proc), against
    /// the same cycles with 0 servers; fails on a leak.
    // A cycle is a whole session start and stop, tens of milliseconds: the 500; the
    // issue's 3 servers.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", counting("500", "Timed cycles of each configuration")),
        mut_arg(
            "warmup",
            counting("3", "Untimed cycles of each configuration before them")
        ),
        mut_arg("servers", counting("3", "Servers in each session"))
    )]
    Soak(Bench<McpServers>),
    /// A healthy server's calls beside 24 misbehaving servers against it alone
    ///
    /// P50/p99 latency of 200 calls of a healthy fake-mcp server's tool in a `rho rpc` session
    /// (turns scripted by fake-model) beside 24 misbehaving servers, against a session with the
    /// healthy server alone; fails if p99 > 200 ms.
    // A run is one model turn with one call of the healthy server's tool: the 200.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", counting("200", "Timed calls per session")),
        mut_arg("warmup", counting("10", "Untimed calls before them"))
    )]
    Misbehaving(Bench<Fakes>),
    /// `rho rpc`'s `ready` with N lazy servers known from the tool cache against none
    ///
    /// Median time from spawning `rho rpc` to its `ready` line with 50 fake-mcp servers with
    /// startup = lazy and known from the tool cache (filled first by one session), against the
    /// same with no server (and 50 eager servers, for reference); fails if a lazy server is
    /// spawned (pid file, /proc).
    // A run is one start of each configuration; the eager one starts N servers, tens of
    // milliseconds. The 50 servers.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", default("51")),
        mut_arg("warmup", default("5")),
        mut_arg("servers", counting("50", "Lazy servers"))
    )]
    LazyReady(Bench<McpServers>),
    /// The first call of a lazy stdio server's tool through `rho rpc` against a bare client
    ///
    /// Median time of the first call of a lazy fake-mcp server's tool in a `rho rpc` session
    /// (tool/call to tool/result: spawn, handshake, call), against the bench spawning fake-mcp
    /// and doing initialize + tools/call itself over pipes.
    // A run is one rho session with two calls and one bare client's process, a few milliseconds
    // each.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", counting("101", "Timed sessions")),
        mut_arg("warmup", counting("5", "Untimed sessions before them"))
    )]
    LazyFirstCall(Bench<Fakes>),
    /// One tools/call through `rho mcp serve` against the same call made directly
    ///
    /// Median time of a `tools/call` through `rho mcp serve` (one fake-mcp server behind it),
    /// against the bench calling the same server directly, both over pipes; the figure is
    /// what the gateway adds to a call.
    // A call takes a fraction of a millisecond: 1,000 of each cost about a second.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", counting("1000", "Timed calls on each path")),
        mut_arg("warmup", counting("100", "Untimed calls on each path before them"))
    )]
    GatewayCall(Bench<FakeMcp>),
    /// Hidden baseline mode: read every file under a root, print the byte count.
    #[command(hide = true)]
    ReadFiles {
        /// The root directory.
        root: PathBuf,
    },
    /// Hidden baseline mode: start and exit.
    #[command(hide = true)]
    Noop,
    /// Hidden baseline mode: print rho's `ready` line, wait for EOF on stdin, exit.
    #[command(hide = true)]
    ReadyLine,
    /// Write a corpus of N plugins to DIR/home (and an empty DIR/project)
    ///
    /// For profiling by hand with HOME=DIR/home rho --cwd DIR/project plugins list --json.
    #[command(verbatim_doc_comment)]
    Corpus {
        /// The directory to create.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// How many plugins.
        #[arg(value_name = "N", value_parser = positive)]
        plugins: usize,
    },
}

/// Parses the arguments after the program name. Bad usage and `--help` are both a
/// [`Error::Usage`], which prints itself (help on stdout, exit 0; errors on stderr, exit 2).
pub fn parse(argv: Vec<OsString>) -> Result<Command, Error> {
    if let Some(mode) = baseline_mode(&argv) {
        return Ok(mode);
    }
    Cli::try_parse_from(std::iter::once(OsString::from("rho-bench")).chain(argv))
        .map(|cli| cli.command)
        .map_err(Error::Usage)
}

/// The hidden baseline modes as the bench runs them, recognised before clap: they are timed as
/// the least a process does (spawn, exec, its one job), and building clap's parser, every
/// command and option, would add about 0.17 ms to each (a third more than `noop`'s own cost on
/// the machine measured). Any other spelling of them goes through clap.
fn baseline_mode(argv: &[OsString]) -> Option<Command> {
    match argv {
        [mode] if mode == "noop" => Some(Command::Noop),
        [mode] if mode == "ready-line" => Some(Command::ReadyLine),
        [mode, root] if mode == "read-files" => Some(Command::ReadFiles { root: root.into() }),
        _ => None,
    }
}

/// A command's own default for a count option whose help it shares (`--runs`, `--warmup`).
fn default(value: &'static str) -> impl FnOnce(Arg) -> Arg {
    move |arg| arg.default_value(value)
}

/// A command's own default for a count option and what it counts (`--runs`, `--warmup`,
/// `--servers`).
fn counting(value: &'static str, help: &'static str) -> impl FnOnce(Arg) -> Arg {
    move |arg| arg.default_value(value).help(help)
}
