//! The benchmarks' option blocks as clap parses them ([`Common`] for every benchmark, one block
//! of its own per benchmark in a [`Bench`]), and [`Options`], what a benchmark reads: every
//! block folds into it, with the defaults of the options a command does not take.

use std::path::PathBuf;

use clap::Args;

use super::values::{positive, positive_u64, size};

/// Plugin counts measured when `--sizes` is not given.
const DEFAULT_SIZES: [usize; 4] = [250, 500, 1000, 2000];
/// Servers started in parallel by `mcp-startup` when `--servers` is not given (the 10);
/// `soak` and `lazy-ready` set their own.
const DEFAULT_SERVERS: usize = 10;
/// Milliseconds between typed keys in `tui-keys` when `--key-ms` is not given (the 15).
const DEFAULT_KEY_MS: u64 = 15;
/// Messages in the resumed session of `tui-resume` when `--messages` is not given.
const DEFAULT_MESSAGES: usize = 2000;

/// The options every benchmark takes; a command may set its own defaults and help for `--runs`
/// and `--warmup` (what a run is).
#[derive(Debug, Args)]
pub struct Common {
    /// The rho binary (default: `rho` next to this binary, i.e. target/release/rho).
    #[arg(long, value_name = "PATH")]
    pub rho: Option<PathBuf>,
    /// Timed runs per measurement.
    #[arg(long, value_name = "N", value_parser = positive, default_value_t = 21)]
    pub runs: usize,
    /// Untimed runs before them.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub warmup: usize,
}

/// A benchmark with options of its own: [`Common`], then `T`.
#[derive(Debug, Args)]
pub struct Bench<T: Args> {
    /// `--rho`, `--runs`, `--warmup`.
    #[command(flatten)]
    pub common: Common,
    /// The options of this benchmark alone.
    #[command(flatten)]
    pub own: T,
}

/// A block of options that sets its fields of [`Options`].
pub trait OwnOptions {
    /// Writes these options into `options`.
    fn apply(self, options: &mut Options);
}

/// `--fake`, for the commands that start `fake-mcp` servers.
#[derive(Debug, Args)]
pub struct FakeMcp {
    /// The fake-mcp server (default: `fake-mcp` next to rho).
    #[arg(id = "fake", long = "fake", value_name = "PATH")]
    pub path: Option<PathBuf>,
}

impl OwnOptions for FakeMcp {
    fn apply(self, options: &mut Options) {
        options.fake = self.path;
    }
}

/// `--fake-model`, for the commands that start `fake-model`.
#[derive(Debug, Args)]
pub struct FakeModel {
    /// The fake-model server (default: `fake-model` next to rho).
    #[arg(id = "fake_model", long = "fake-model", value_name = "PATH")]
    pub path: Option<PathBuf>,
}

impl OwnOptions for FakeModel {
    fn apply(self, options: &mut Options) {
        options.fake_model = self.path;
    }
}

/// `--fake` and `--fake-model`, for the commands that start both servers.
#[derive(Debug, Args)]
pub struct Fakes {
    /// `--fake`.
    #[command(flatten)]
    pub fake: FakeMcp,
    /// `--fake-model`.
    #[command(flatten)]
    pub fake_model: FakeModel,
}

impl OwnOptions for Fakes {
    fn apply(self, options: &mut Options) {
        self.fake.apply(options);
        self.fake_model.apply(options);
    }
}

/// `--fake` and `--servers`, for the commands that start N `fake-mcp` servers (`soak` and
/// `lazy-ready` set their own default and help for `--servers`).
#[derive(Debug, Args)]
pub struct McpServers {
    /// `--fake`.
    #[command(flatten)]
    pub fake: FakeMcp,
    /// Servers started in parallel.
    #[arg(long, value_name = "N", value_parser = positive, default_value_t = DEFAULT_SERVERS)]
    pub servers: usize,
}

impl OwnOptions for McpServers {
    fn apply(self, options: &mut Options) {
        self.fake.apply(options);
        options.servers = self.servers;
    }
}

/// `plugins-list`'s corpora and peer: `--sizes`, `--vtcode`.
#[derive(Debug, Args)]
pub struct Corpora {
    /// Comma-separated plugin counts.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = size,
        default_value = "250,500,1000,2000",
        action = clap::ArgAction::Set
    )]
    pub sizes: Vec<usize>,
    /// The VT Code loader peer (default: its build in
    /// bench/peers/vtcode-loader/target/release/vtcode-loader).
    #[arg(long, value_name = "PATH")]
    pub vtcode: Option<PathBuf>,
}

impl OwnOptions for Corpora {
    fn apply(self, options: &mut Options) {
        options.sizes = self.sizes;
        options.vtcode = self.vtcode;
    }
}

/// `oauth-connect`'s `--browser`.
#[derive(Debug, Args)]
pub struct Browser {
    /// The rho-test-browser that logs in (default: next to rho).
    #[arg(long, value_name = "PATH")]
    pub browser: Option<PathBuf>,
}

impl OwnOptions for Browser {
    fn apply(self, options: &mut Options) {
        options.browser = self.browser;
    }
}

/// `tui-keys`'s model server and typing speed: `--fake-model`, `--key-ms`.
#[derive(Debug, Args)]
pub struct Typing {
    /// `--fake-model`.
    #[command(flatten)]
    pub fake_model: FakeModel,
    /// Milliseconds between typed keys.
    #[arg(long, value_name = "N", value_parser = positive_u64, default_value_t = DEFAULT_KEY_MS)]
    pub key_ms: u64,
}

impl OwnOptions for Typing {
    fn apply(self, options: &mut Options) {
        self.fake_model.apply(options);
        options.key_ms = self.key_ms;
    }
}

/// `tui-resume`'s model server and session length: `--fake-model`, `--messages`.
#[derive(Debug, Args)]
pub struct Resume {
    /// `--fake-model`.
    #[command(flatten)]
    pub fake_model: FakeModel,
    /// Messages in the resumed session.
    #[arg(long, value_name = "N", value_parser = positive, default_value_t = DEFAULT_MESSAGES)]
    pub messages: usize,
}

impl OwnOptions for Resume {
    fn apply(self, options: &mut Options) {
        self.fake_model.apply(options);
        options.messages = self.messages;
    }
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

impl<T: Args + OwnOptions> From<Bench<T>> for Options {
    fn from(bench: Bench<T>) -> Self {
        let mut options = Self::from(bench.common);
        bench.own.apply(&mut options);
        options
    }
}
