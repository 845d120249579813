//! The command line: a clap parser with one subcommand per benchmark (and the hidden modes the
//! bench re-executes itself in), each taking `--rho`, `--runs` and `--warmup` with its own
//! defaults, and the options of its own.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Arg, Args, Parser, Subcommand};

use crate::Error;

/// Plugin counts measured when `--sizes` is not given.
const DEFAULT_SIZES: [usize; 4] = [250, 500, 1000, 2000];
/// Servers started in parallel by `mcp-startup` when `--servers` is not given (the 10).
const DEFAULT_SERVERS: usize = 10;
/// Servers of each `soak` session when `--servers` is not given (the 3).
const SOAK_SERVERS: usize = 3;
/// Lazy servers of `lazy-ready` when `--servers` is not given (the 50).
const LAZY_SERVERS: usize = 50;
/// Milliseconds between typed keys in `tui-keys` when `--key-ms` is not given (the 15).
const DEFAULT_KEY_MS: u64 = 15;
/// Messages in the resumed session of `tui-resume` when `--messages` is not given.
const DEFAULT_MESSAGES: usize = 2000;

/// What the bench needs built before it runs, printed after the list of commands.
const BUILD_NOTE: &str = "\
build the binaries first: cargo build --release -p rho-cli -p rho-bench
(plugins-list also needs the peer: cargo build --release --locked --ignore-rust-version
--manifest-path bench/peers/vtcode-loader/Cargo.toml;
mcp-startup and complete-cached also need: cargo build --release -p rho-e2e --bin fake-mcp;
rpc-turn: cargo build --release -p rho-e2e --bin fake-model; question-round-trip: both;
oauth-connect: cargo build --release -p rho-e2e --bin rho-test-browser, and the OAuth peers;
tui-keys and tui-resume: fake-model; soak and lazy-ready: fake-mcp; misbehaving and
lazy-first-call: both; the tui-* commands need /usr/bin/script from util-linux)";

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

/// What to run.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// `rho plugins list --json` against VT Code's plugin loader
    ///
    /// Median wall time of `rho plugins list --json` over generated plugin roots, against VT
    /// Code's Agent Plugins loader (vtcode-agent-plugins, driven as `vtcode plugins list` drives
    /// it) and a process that only reads the same files.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", runs("21", "Timed runs per measurement"))
    )]
    PluginsList {
        /// `--rho`, `--runs`, `--warmup`.
        #[command(flatten)]
        common: Common,
        /// Comma-separated plugin counts.
        #[arg(
            long,
            value_name = "LIST",
            value_delimiter = ',',
            value_parser = size,
            default_value = "250,500,1000,2000",
            action = clap::ArgAction::Set
        )]
        sizes: Vec<usize>,
        /// The VT Code loader peer (default: its build in
        /// bench/peers/vtcode-loader/target/release/vtcode-loader).
        #[arg(long, value_name = "PATH")]
        vtcode: Option<PathBuf>,
    },
    /// `rho plugins list` with nothing installed against a process that does nothing
    ///
    /// Median wall time of `rho plugins list` with nothing installed, against a process that does
    /// nothing.
    // Startup runs take a few milliseconds each, so more of them cost little and steady the
    // median.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", runs("51", "Timed runs per measurement"))
    )]
    Startup(Common),
    /// `rho mcp list --connect` with N stdio servers against one
    ///
    /// Median wall time of `rho mcp list --connect --json` with 10 fake-mcp stdio servers, against
    /// the same with one server (and none, for reference).
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", runs("31", "Timed runs per measurement"))
    )]
    McpStartup {
        /// `--rho`, `--runs`, `--warmup`.
        #[command(flatten)]
        common: Common,
        /// `--fake`.
        #[command(flatten)]
        fake: FakeMcp,
        /// Servers started in parallel.
        #[arg(long, value_name = "N", value_parser = positive, default_value_t = DEFAULT_SERVERS)]
        servers: usize,
    },
    /// `rho mcp list` without connecting against `rho plugins list`
    ///
    /// Median wall time of `rho mcp list --json` (no connect) over 1,000 plugins and 20
    /// configured servers, against `rho plugins list --json` on the same home.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", runs("21", "Timed runs per measurement"))
    )]
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
        mut_arg("runs", runs("200", "Timed turns")),
        mut_arg("warmup", warmup("10", "Untimed turns before them"))
    )]
    RpcTurn {
        /// `--rho`, `--runs`, `--warmup`.
        #[command(flatten)]
        common: Common,
        /// `--fake-model`.
        #[command(flatten)]
        fake_model: FakeModel,
    },
    /// `rho rpc` spawn to its `ready` line against a process that prints one line
    ///
    /// Median time from spawning `rho rpc` to its `ready` line, against a process that prints one
    /// line.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", runs("51", "Timed runs per measurement")),
        mut_arg("warmup", warmup("5", "Untimed runs before them"))
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
        mut_arg("runs", runs("200", "Timed questions")),
        mut_arg("warmup", warmup("20", "Questions in the untimed call before them"))
    )]
    QuestionRoundTrip {
        /// `--rho`, `--runs`, `--warmup`.
        #[command(flatten)]
        common: Common,
        /// `--fake`.
        #[command(flatten)]
        fake: FakeMcp,
        /// `--fake-model`.
        #[command(flatten)]
        fake_model: FakeModel,
    },
    /// A cached `complete` through `rho rpc` against `abort` with nothing running
    ///
    /// Median time of a `rho rpc` `complete` answered from rho's cache, against `abort` with
    /// nothing running (and uncached `complete`, for reference).
    // A request takes a fraction of a millisecond: 1,000 of each kind cost about a second.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", runs("1000", "Timed requests of each kind")),
        mut_arg("warmup", warmup("100", "Untimed requests of each kind before them"))
    )]
    CompleteCached {
        /// `--rho`, `--runs`, `--warmup`.
        #[command(flatten)]
        common: Common,
        /// `--fake`.
        #[command(flatten)]
        fake: FakeMcp,
    },
    /// `rho mcp list --connect` with a stored OAuth token against a configured header
    ///
    /// Median wall time of `rho mcp list --connect --json` to an OAuth-protected server with a
    /// stored token, against the same server and token through a configured header; and the
    /// token requests of 5 refreshes.
    // A connection takes tens of milliseconds (the server introspects every bearer).
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", runs("21", "Timed runs per measurement"))
    )]
    OauthConnect {
        /// `--rho`, `--runs`, `--warmup`.
        #[command(flatten)]
        common: Common,
        /// The rho-test-browser that logs in (default: next to rho).
        #[arg(long, value_name = "PATH")]
        browser: Option<PathBuf>,
    },
    /// The interactive rho's first frame on a pty against `rho plugins list`
    ///
    /// Median time from spawning the interactive rho on a 120x40 pty (util-linux script) to its
    /// first frame on screen, in an empty project and in examples/demo-project, against `rho
    /// plugins list` through the same wrapper; and rho's own first_frame_ms from its log.
    // A start takes a few milliseconds; the four commands rotate.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", runs("21", "Timed runs of each command"))
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
        mut_arg("runs", runs("3", "Timed sessions")),
        mut_arg("warmup", warmup("1", "Untimed sessions before them"))
    )]
    TuiKeys {
        /// `--rho`, `--runs`, `--warmup`.
        #[command(flatten)]
        common: Common,
        /// `--fake-model`.
        #[command(flatten)]
        fake_model: FakeModel,
        /// Milliseconds between typed keys.
        #[arg(long, value_name = "N", value_parser = positive_u64, default_value_t = DEFAULT_KEY_MS)]
        key_ms: u64,
    },
    /// Resuming a long session in the interactive rho against an empty one
    ///
    /// First frame of a resumed 2,000-message session (conversation_frame_ms), the draw time of
    /// 30 PageUp frames and peak RSS (VmHWM), against an empty session.
    // A run is one resume of each session with 30 PageUp keys, about 2 s each.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", runs("11", "Timed resumes of each session")),
        mut_arg("warmup", warmup("2", "Untimed resumes of each session before them"))
    )]
    TuiResume {
        /// `--rho`, `--runs`, `--warmup`.
        #[command(flatten)]
        common: Common,
        /// `--fake-model`.
        #[command(flatten)]
        fake_model: FakeModel,
        /// Messages in the resumed session.
        #[arg(long, value_name = "N", value_parser = positive, default_value_t = DEFAULT_MESSAGES)]
        messages: usize,
    },
    /// `rho rpc` session start/stop cycles with stdio servers, leaks counted from `/proc`
    ///
    /// 500 start/stop cycles of a `rho rpc` session with 3 fake-mcp stdio servers: mean/p50/p99
    /// cycle time and the processes, descriptors and zombies left behind (from /proc), against
    /// the same cycles with 0 servers; fails on a leak.
    // A cycle is a whole session start and stop, tens of milliseconds: the 500.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", runs("500", "Timed cycles of each configuration")),
        mut_arg(
            "warmup",
            warmup("3", "Untimed cycles of each configuration before them")
        )
    )]
    Soak {
        /// `--rho`, `--runs`, `--warmup`.
        #[command(flatten)]
        common: Common,
        /// `--fake`.
        #[command(flatten)]
        fake: FakeMcp,
        /// Servers in each session.
        #[arg(long, value_name = "N", value_parser = positive, default_value_t = SOAK_SERVERS)]
        servers: usize,
    },
    /// A healthy server's calls beside 24 misbehaving servers against it alone
    ///
    /// P50/p99 latency of 200 calls of a healthy fake-mcp server's tool in a `rho rpc` session
    /// (turns scripted by fake-model) beside 24 misbehaving servers, against a session with the
    /// healthy server alone; fails if p99 > 200 ms.
    // A run is one model turn with one call of the healthy server's tool: the 200.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", runs("200", "Timed calls per session")),
        mut_arg("warmup", warmup("10", "Untimed calls before them"))
    )]
    Misbehaving {
        /// `--rho`, `--runs`, `--warmup`.
        #[command(flatten)]
        common: Common,
        /// `--fake`.
        #[command(flatten)]
        fake: FakeMcp,
        /// `--fake-model`.
        #[command(flatten)]
        fake_model: FakeModel,
    },
    /// `rho rpc`'s `ready` with N lazy servers known from the tool cache against none
    ///
    /// Median time from spawning `rho rpc` to its `ready` line with 50 fake-mcp servers with
    /// startup = lazy and known from the tool cache (filled first by one session), against the
    /// same with no server (and 50 eager servers, for reference); fails if a lazy server is
    /// spawned (pid file, /proc).
    // A run is one start of each configuration; the eager one starts N servers, tens of
    // milliseconds.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", runs("51", "Timed runs per measurement")),
        mut_arg("warmup", warmup("5", "Untimed runs before them"))
    )]
    LazyReady {
        /// `--rho`, `--runs`, `--warmup`.
        #[command(flatten)]
        common: Common,
        /// `--fake`.
        #[command(flatten)]
        fake: FakeMcp,
        /// Lazy servers.
        #[arg(long, value_name = "N", value_parser = positive, default_value_t = LAZY_SERVERS)]
        servers: usize,
    },
    /// The first call of a lazy stdio server's tool through `rho rpc` against a bare client
    ///
    /// Median time of the first call of a lazy fake-mcp server's tool in a `rho rpc` session
    /// (tool/call to tool/result: spawn, handshake, call), against the bench spawning fake-mcp
    /// and doing initialize + tools/call itself over pipes.
    // A run is one rho session with two calls and one bare client's process, a few milliseconds
    // each.
    #[command(
        verbatim_doc_comment,
        mut_arg("runs", runs("101", "Timed sessions")),
        mut_arg("warmup", warmup("5", "Untimed sessions before them"))
    )]
    LazyFirstCall {
        /// `--rho`, `--runs`, `--warmup`.
        #[command(flatten)]
        common: Common,
        /// `--fake`.
        #[command(flatten)]
        fake: FakeMcp,
        /// `--fake-model`.
        #[command(flatten)]
        fake_model: FakeModel,
    },
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

/// The options every benchmark takes (`--runs` has no default here: each command sets its own).
#[derive(Debug, Args)]
pub struct Common {
    /// The rho binary (default: `rho` next to this binary, i.e. target/release/rho).
    #[arg(long, value_name = "PATH")]
    pub rho: Option<PathBuf>,
    /// Timed runs per measurement.
    #[arg(long, value_name = "N", value_parser = positive)]
    pub runs: usize,
    /// Untimed runs before them.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub warmup: usize,
}

/// `--fake`, for the commands that start `fake-mcp` servers.
#[derive(Debug, Args)]
pub struct FakeMcp {
    /// The fake-mcp server (default: `fake-mcp` next to rho).
    #[arg(id = "fake", long = "fake", value_name = "PATH")]
    pub path: Option<PathBuf>,
}

/// `--fake-model`, for the commands that start `fake-model`.
#[derive(Debug, Args)]
pub struct FakeModel {
    /// The fake-model server (default: `fake-model` next to rho).
    #[arg(id = "fake_model", long = "fake-model", value_name = "PATH")]
    pub path: Option<PathBuf>,
}

/// The benchmarks' options, with the defaults of the ones a command does not take.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--rho`: the binary under test (default: next to this one).
    pub rho: Option<PathBuf>,
    /// `--runs`: timed runs per measurement.
    pub runs: usize,
    /// `--warmup`: untimed runs before them.
    pub warmup: usize,
    /// `--sizes`: plugin counts (plugins-list only).
    pub sizes: Vec<usize>,
    /// `--fake`: the `fake-mcp` server binary (default: next to rho).
    pub fake: Option<PathBuf>,
    /// `--servers`: how many servers start in parallel (mcp-startup), each session has (soak),
    /// or are lazy (lazy-ready).
    pub servers: usize,
    /// `--fake-model`: the `fake-model` server binary (default: next to rho).
    pub fake_model: Option<PathBuf>,
    /// `--browser`: the `rho-test-browser` that logs in (oauth-connect; default: next to rho).
    pub browser: Option<PathBuf>,
    /// `--key-ms`: milliseconds between typed keys (tui-keys only).
    pub key_ms: u64,
    /// `--messages`: messages in the resumed session (tui-resume only).
    pub messages: usize,
    /// `--vtcode`: the VT Code loader peer (plugins-list only; default: its build under
    /// `bench/peers/vtcode-loader/`).
    pub vtcode: Option<PathBuf>,
}

impl From<Common> for Options {
    fn from(common: Common) -> Self {
        Self {
            rho: common.rho,
            runs: common.runs,
            warmup: common.warmup,
            sizes: DEFAULT_SIZES.to_vec(),
            fake: None,
            servers: DEFAULT_SERVERS,
            fake_model: None,
            browser: None,
            key_ms: DEFAULT_KEY_MS,
            messages: DEFAULT_MESSAGES,
            vtcode: None,
        }
    }
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

/// A command's `--runs`: its default and what a run is.
fn runs(default: &'static str, help: &'static str) -> impl FnOnce(Arg) -> Arg {
    move |arg| arg.required(false).default_value(default).help(help)
}

/// A command's `--warmup`: its default and what a run is.
fn warmup(default: &'static str, help: &'static str) -> impl FnOnce(Arg) -> Arg {
    move |arg| arg.default_value(default).help(help)
}

/// A count of at least 1.
fn positive(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a whole number".into()),
    }
}

/// [`positive`] as a `u64` (milliseconds).
fn positive_u64(text: &str) -> Result<u64, String> {
    positive(text).map(|n| n as u64)
}

/// One plugin count of `--sizes` (spaces around it allowed: `10, 20`).
fn size(text: &str) -> Result<usize, String> {
    positive(text.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(args: &[&str]) -> Result<Command, Error> {
        parse(args.iter().map(OsString::from).collect())
    }

    /// The clap definition passes clap's own consistency checks.
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn plugins_list_defaults_and_overrides() {
        let Ok(Command::PluginsList { common, sizes, .. }) = parse_str(&["plugins-list"]) else {
            panic!("expected plugins-list");
        };
        assert_eq!(
            (common.runs, common.warmup, sizes),
            (21, 3, vec![250, 500, 1000, 2000])
        );
        let Ok(Command::PluginsList {
            common,
            sizes,
            vtcode,
        }) = parse_str(&[
            "plugins-list",
            "--runs=5",
            "--sizes",
            "10, 20",
            "--rho",
            "/x/rho",
            "--vtcode=/x/vtcode-loader",
        ])
        else {
            panic!("expected plugins-list");
        };
        assert_eq!((common.runs, sizes), (5, vec![10, 20]));
        assert_eq!(common.rho, Some(PathBuf::from("/x/rho")));
        assert_eq!(vtcode, Some(PathBuf::from("/x/vtcode-loader")));
        assert!(matches!(
            parse_str(&["mcp-list", "--vtcode", "/x"]),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn mcp_commands_take_their_options() {
        let Ok(Command::McpStartup {
            common,
            fake,
            servers,
        }) = parse_str(&["mcp-startup", "--fake", "/x/fake-mcp", "--runs", "7"])
        else {
            panic!("expected mcp-startup");
        };
        assert_eq!(
            (fake.path, common.runs, servers),
            (Some(PathBuf::from("/x/fake-mcp")), 7, 10)
        );
        let Ok(Command::McpStartup {
            common, servers, ..
        }) = parse_str(&["mcp-startup", "--servers=4"])
        else {
            panic!("expected mcp-startup");
        };
        assert_eq!((servers, common.runs), (4, 31));
        let Ok(Command::McpList(common)) = parse_str(&["mcp-list"]) else {
            panic!("expected mcp-list");
        };
        assert_eq!((common.runs, common.warmup), (21, 3));
        assert!(matches!(
            parse_str(&["mcp-list", "--servers", "3"]),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn rpc_commands_take_their_options() {
        let Ok(Command::RpcTurn { common, fake_model }) = parse_str(&["rpc-turn"]) else {
            panic!("expected rpc-turn");
        };
        assert_eq!(
            (common.runs, common.warmup, fake_model.path),
            (200, 10, None)
        );
        let Ok(Command::RpcTurn { common, fake_model }) =
            parse_str(&["rpc-turn", "--fake-model=/x/fake-model", "--warmup", "0"])
        else {
            panic!("expected rpc-turn");
        };
        assert_eq!(
            (fake_model.path, common.warmup),
            (Some(PathBuf::from("/x/fake-model")), 0)
        );
        let Ok(Command::RpcReady(common)) = parse_str(&["rpc-ready"]) else {
            panic!("expected rpc-ready");
        };
        assert_eq!((common.runs, common.warmup), (51, 5));
        assert!(matches!(
            parse_str(&["rpc-ready", "--fake-model", "/x"]),
            Err(Error::Usage(_))
        ));
        assert!(matches!(parse_str(&["ready-line"]), Ok(Command::ReadyLine)));
    }

    #[test]
    fn client_half_commands_take_their_options() {
        let Ok(Command::QuestionRoundTrip {
            common,
            fake,
            fake_model,
        }) = parse_str(&["question-round-trip"])
        else {
            panic!("expected question-round-trip");
        };
        assert_eq!(
            (common.runs, common.warmup, fake.path, fake_model.path),
            (200, 20, None, None)
        );
        let Ok(Command::QuestionRoundTrip {
            common,
            fake,
            fake_model,
        }) = parse_str(&[
            "question-round-trip",
            "--fake=/x/fake-mcp",
            "--fake-model",
            "/x/fake-model",
            "--warmup",
            "0",
        ])
        else {
            panic!("expected question-round-trip");
        };
        assert_eq!(
            (fake.path, fake_model.path, common.warmup),
            (
                Some(PathBuf::from("/x/fake-mcp")),
                Some(PathBuf::from("/x/fake-model")),
                0
            )
        );
        let Ok(Command::CompleteCached { common, fake }) =
            parse_str(&["complete-cached", "--runs", "50"])
        else {
            panic!("expected complete-cached");
        };
        assert_eq!((common.runs, common.warmup, fake.path), (50, 100, None));
        assert!(matches!(
            parse_str(&["complete-cached", "--fake-model", "/x"]),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            parse_str(&["question-round-trip", "--servers", "2"]),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn oauth_connect_takes_the_browser() {
        let Ok(Command::OauthConnect { common, browser }) =
            parse_str(&["oauth-connect", "--runs", "31", "--browser", "/x/browser"])
        else {
            panic!("expected oauth-connect");
        };
        assert_eq!(
            (common.runs, common.warmup, browser),
            (31, 3, Some(PathBuf::from("/x/browser")))
        );
        assert!(matches!(
            parse_str(&["oauth-connect", "--fake", "/x"]),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn tui_commands_take_their_options() {
        let Ok(Command::TuiFirstFrame(common)) = parse_str(&["tui-first-frame"]) else {
            panic!("expected tui-first-frame");
        };
        assert_eq!((common.runs, common.warmup), (21, 3));
        assert!(matches!(
            parse_str(&["tui-first-frame", "--fake-model", "/x"]),
            Err(Error::Usage(_))
        ));
        let Ok(Command::TuiKeys { common, key_ms, .. }) = parse_str(&["tui-keys"]) else {
            panic!("expected tui-keys");
        };
        assert_eq!((common.runs, common.warmup, key_ms), (3, 1, 15));
        let Ok(Command::TuiKeys {
            key_ms, fake_model, ..
        }) = parse_str(&["tui-keys", "--key-ms=40", "--fake-model", "/x/fake-model"])
        else {
            panic!("expected tui-keys");
        };
        assert_eq!(
            (key_ms, fake_model.path),
            (40, Some(PathBuf::from("/x/fake-model")))
        );
        assert!(matches!(
            parse_str(&["tui-keys", "--messages", "5"]),
            Err(Error::Usage(_))
        ));
        let Ok(Command::TuiResume {
            common, messages, ..
        }) = parse_str(&["tui-resume", "--messages", "500"])
        else {
            panic!("expected tui-resume");
        };
        assert_eq!((common.runs, common.warmup, messages), (11, 2, 500));
        assert!(matches!(
            parse_str(&["tui-resume", "--key-ms", "5"]),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn hardening_commands_take_their_options() {
        let Ok(Command::Soak {
            common,
            fake,
            servers,
        }) = parse_str(&["soak"])
        else {
            panic!("expected soak");
        };
        assert_eq!(
            (common.runs, common.warmup, servers, fake.path),
            (500, 3, 3, None)
        );
        let Ok(Command::Soak {
            common, servers, ..
        }) = parse_str(&["soak", "--runs=20", "--servers", "5"])
        else {
            panic!("expected soak");
        };
        assert_eq!((common.runs, servers), (20, 5));
        assert!(matches!(
            parse_str(&["soak", "--fake-model", "/x"]),
            Err(Error::Usage(_))
        ));
        let Ok(Command::Misbehaving {
            common,
            fake,
            fake_model,
        }) = parse_str(&[
            "misbehaving",
            "--fake",
            "/x/fake-mcp",
            "--fake-model=/x/fake-model",
        ])
        else {
            panic!("expected misbehaving");
        };
        assert_eq!(
            (common.runs, common.warmup, fake.path, fake_model.path),
            (
                200,
                10,
                Some(PathBuf::from("/x/fake-mcp")),
                Some(PathBuf::from("/x/fake-model"))
            )
        );
        assert!(matches!(
            parse_str(&["misbehaving", "--servers", "2"]),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn lazy_commands_take_their_options() {
        let Ok(Command::LazyReady {
            common,
            fake,
            servers,
        }) = parse_str(&["lazy-ready"])
        else {
            panic!("expected lazy-ready");
        };
        assert_eq!(
            (common.runs, common.warmup, servers, fake.path),
            (51, 5, 50, None)
        );
        let Ok(Command::LazyReady { fake, servers, .. }) =
            parse_str(&["lazy-ready", "--servers=8", "--fake", "/x/fake-mcp"])
        else {
            panic!("expected lazy-ready");
        };
        assert_eq!(
            (servers, fake.path),
            (8, Some(PathBuf::from("/x/fake-mcp")))
        );
        assert!(matches!(
            parse_str(&["lazy-ready", "--fake-model", "/x"]),
            Err(Error::Usage(_))
        ));
        let Ok(Command::LazyFirstCall {
            common, fake_model, ..
        }) = parse_str(&[
            "lazy-first-call",
            "--fake-model=/x/fake-model",
            "--runs",
            "9",
        ])
        else {
            panic!("expected lazy-first-call");
        };
        assert_eq!(
            (common.runs, common.warmup, fake_model.path),
            (9, 5, Some(PathBuf::from("/x/fake-model")))
        );
        assert!(matches!(
            parse_str(&["lazy-first-call", "--servers", "2"]),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn bad_usage_is_reported() {
        assert!(matches!(parse_str(&[]), Err(Error::Usage(_))));
        assert!(matches!(
            parse_str(&["startup", "--sizes", "1"]),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            parse_str(&["startup", "--runs", "0"]),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            parse_str(&["startup", "--runs"]),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            parse_str(&["startup", "--warmup", "x"]),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            parse_str(&["plugins-list", "--sizes", "10,0"]),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            parse_str(&["plugins-list", "--fake", "/x"]),
            Err(Error::Usage(_))
        ));
        assert!(matches!(parse_str(&["bogus"]), Err(Error::Usage(_))));
        assert!(matches!(parse_str(&["read-files"]), Err(Error::Usage(_))));
        assert!(matches!(
            parse_str(&["read-files", "/x"]),
            Ok(Command::ReadFiles { .. })
        ));
        assert!(matches!(parse_str(&["noop"]), Ok(Command::Noop)));
        assert!(matches!(parse_str(&["corpus", "/x"]), Err(Error::Usage(_))));
        assert!(matches!(
            parse_str(&["corpus", "/x", "0"]),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            parse_str(&["corpus", "/x", "3"]),
            Ok(Command::Corpus { plugins: 3, .. })
        ));
    }

    #[test]
    fn baseline_modes_are_recognised_before_clap() {
        assert!(matches!(
            baseline_mode(&["noop".into()]),
            Some(Command::Noop)
        ));
        assert!(matches!(
            baseline_mode(&["ready-line".into()]),
            Some(Command::ReadyLine)
        ));
        let Some(Command::ReadFiles { root }) = baseline_mode(&["read-files".into(), "/x".into()])
        else {
            panic!("expected read-files");
        };
        assert_eq!(root, PathBuf::from("/x"));
        // Other spellings are clap's to judge.
        assert!(baseline_mode(&["noop".into(), "x".into()]).is_none());
        assert!(matches!(parse_str(&["noop", "x"]), Err(Error::Usage(_))));
        assert!(matches!(
            parse_str(&["read-files", "/x", "/y"]),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn help_is_a_request_not_an_error() {
        for args in [
            &["help"][..],
            &["--help"],
            &["-h"],
            &["startup", "--help"],
            &["lazy-ready", "-h"],
        ] {
            let Err(Error::Usage(e)) = parse_str(args) else {
                panic!("expected help for {args:?}");
            };
            assert_eq!(e.exit_code(), 0, "{args:?}");
        }
        let Err(Error::Usage(e)) = parse_str(&["startup", "--runs", "0"]) else {
            panic!("expected an error");
        };
        assert_eq!(e.exit_code(), 2);
        let Err(Error::Usage(e)) = parse_str(&[]) else {
            panic!("expected the usage");
        };
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn a_repeated_option_keeps_its_last_value() {
        let Ok(Command::PluginsList { common, sizes, .. }) = parse_str(&[
            "plugins-list",
            "--runs",
            "4",
            "--runs",
            "6",
            "--sizes",
            "1",
            "--sizes",
            "2,3",
        ]) else {
            panic!("expected plugins-list");
        };
        assert_eq!((common.runs, sizes), (6, vec![2, 3]));
    }
}
