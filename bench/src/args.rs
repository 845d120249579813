//! The hand-written command-line parser (a handful of options does not justify a dependency).

use std::ffi::OsString;
use std::path::PathBuf;

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

/// What to run.
#[derive(Debug)]
pub enum Command {
    /// Print the usage text.
    Help,
    /// The discovery benchmark.
    PluginsList(Options),
    /// The empty-startup benchmark.
    Startup(Options),
    /// Parallel start of N stdio servers against one (`rho mcp list --connect`).
    McpStartup(Options),
    /// `rho mcp list` without connecting against `rho plugins list` on the same corpus.
    McpList(Options),
    /// One `rho rpc` turn with one tool call against the model server's own time.
    RpcTurn(Options),
    /// `rho rpc` spawn to its `ready` line against a process that prints one line.
    RpcReady(Options),
    /// A server's form question through `rho rpc` and back, against the bench as the server's
    /// own client.
    QuestionRoundTrip(Options),
    /// A cached `complete` through `rho rpc` against `abort` with nothing running.
    CompleteCached(Options),
    /// `rho mcp list --connect` with a stored OAuth token against a configured header, and
    /// the token requests of a refresh.
    OauthConnect(Options),
    /// The interactive rho's first frame on a pty against `rho plugins list` through the same
    /// wrapper.
    TuiFirstFrame(Options),
    /// Keystroke-to-frame latency of the interactive rho while a reply streams, against the
    /// same with nothing streaming; and its idle CPU.
    TuiKeys(Options),
    /// Resuming a long session in the interactive rho against an empty one.
    TuiResume(Options),
    /// `rho rpc` session start/stop cycles with stdio servers, leaks counted from `/proc`,
    /// against the same cycles with no server.
    Soak(Options),
    /// A healthy server's calls in a session beside 24 misbehaving servers, against a session
    /// with the healthy server alone.
    Misbehaving(Options),
    /// `rho rpc`'s `ready` with N lazy servers known from the tool cache, against no server
    /// (and N eager servers, for reference).
    LazyReady(Options),
    /// The first call of a lazy stdio server's tool through `rho rpc`, against a bare
    /// client's spawn, handshake and call.
    LazyFirstCall(Options),
    /// Hidden baseline mode: read every file under a root, print the byte count.
    ReadFiles(PathBuf),
    /// Hidden baseline mode: start and exit.
    Noop,
    /// Hidden baseline mode: print rho's `ready` line, wait for EOF on stdin, exit.
    ReadyLine,
    /// Write one corpus to a directory (its `home/` and `project/`) for profiling by hand.
    Corpus {
        /// The directory to create.
        dir: PathBuf,
        /// How many plugins.
        plugins: usize,
    },
}

/// Options shared by the benchmarks.
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
    /// `--fake`: the `fake-mcp` server binary (mcp-startup, question-round-trip and
    /// complete-cached; default: next to rho).
    pub fake: Option<PathBuf>,
    /// `--servers`: how many servers start in parallel (mcp-startup), or each session has
    /// (soak).
    pub servers: usize,
    /// `--fake-model`: the `fake-model` server binary (rpc-turn and question-round-trip;
    /// default: next to rho).
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

/// The command-specific options a command accepts (all take `--rho`, `--runs`, `--warmup`).
#[derive(Debug, Clone, Copy, Default)]
struct Accepts {
    sizes: bool,
    fake: bool,
    servers: bool,
    fake_model: bool,
    browser: bool,
    key_ms: bool,
    messages: bool,
    vtcode: bool,
    /// The `--warmup` default when it is not 3.
    warmup: Option<usize>,
    /// The `--servers` default when it is not [`DEFAULT_SERVERS`].
    servers_default: Option<usize>,
}

/// Parses the arguments after the program name.
pub fn parse(argv: Vec<OsString>) -> Result<Command, Error> {
    let mut argv = argv.into_iter();
    let Some(command) = argv.next() else {
        return Err(Error::Usage("missing command".into()));
    };
    let command = command
        .into_string()
        .map_err(|raw| Error::Usage(format!("unknown command {raw:?}")))?;
    let rest: Vec<OsString> = argv.collect();
    if !matches!(command.as_str(), "read-files" | "corpus")
        && rest.iter().any(|a| a == "-h" || a == "--help")
    {
        return Ok(Command::Help);
    }
    let mut argv = rest.into_iter();
    match command.as_str() {
        "help" | "-h" | "--help" => Ok(Command::Help),
        "plugins-list" => options(
            argv,
            21,
            Accepts {
                sizes: true,
                vtcode: true,
                ..Accepts::default()
            },
        )
        .map(Command::PluginsList),
        // Startup runs take a few milliseconds each, so more of them cost little and steady the median.
        "startup" => options(argv, 51, Accepts::default()).map(Command::Startup),
        "mcp-startup" => options(
            argv,
            31,
            Accepts {
                fake: true,
                servers: true,
                ..Accepts::default()
            },
        )
        .map(Command::McpStartup),
        "mcp-list" => options(argv, 21, Accepts::default()).map(Command::McpList),
        // A turn takes a few milliseconds: 200 of them steady the median; the first turns of a
        // session (connection set-up, caches) are warm-up.
        "rpc-turn" => options(
            argv,
            200,
            Accepts {
                fake_model: true,
                warmup: Some(10),
                ..Accepts::default()
            },
        )
        .map(Command::RpcTurn),
        "rpc-ready" => options(
            argv,
            51,
            Accepts {
                warmup: Some(5),
                ..Accepts::default()
            },
        )
        .map(Command::RpcReady),
        // A round trip takes tens of microseconds: 200 of them in calls of 20, after a warm-up
        // call of 20.
        "question-round-trip" => options(
            argv,
            200,
            Accepts {
                fake: true,
                fake_model: true,
                warmup: Some(20),
                ..Accepts::default()
            },
        )
        .map(Command::QuestionRoundTrip),
        // A request takes a fraction of a millisecond: 1,000 of each kind cost about a second.
        "complete-cached" => options(
            argv,
            1000,
            Accepts {
                fake: true,
                warmup: Some(100),
                ..Accepts::default()
            },
        )
        .map(Command::CompleteCached),
        // A connection takes tens of milliseconds (the server introspects every bearer).
        "oauth-connect" => options(
            argv,
            21,
            Accepts {
                browser: true,
                ..Accepts::default()
            },
        )
        .map(Command::OauthConnect),
        // A start takes a few milliseconds; the four commands rotate.
        "tui-first-frame" => options(argv, 21, Accepts::default()).map(Command::TuiFirstFrame),
        // A run is a whole session of 200 keys idle and 200 while a reply streams, about 12 s;
        // the first session (page cache, fake-model's first connection) is warm-up.
        "tui-keys" => options(
            argv,
            3,
            Accepts {
                fake_model: true,
                key_ms: true,
                warmup: Some(1),
                ..Accepts::default()
            },
        )
        .map(Command::TuiKeys),
        // A run is one resume of each session with 30 PageUp keys, about 2 s each.
        "tui-resume" => options(
            argv,
            11,
            Accepts {
                fake_model: true,
                messages: true,
                warmup: Some(2),
                ..Accepts::default()
            },
        )
        .map(Command::TuiResume),
        // A cycle is a whole session start and stop, tens of milliseconds: the 500.
        "soak" => options(
            argv,
            500,
            Accepts {
                fake: true,
                servers: true,
                servers_default: Some(SOAK_SERVERS),
                ..Accepts::default()
            },
        )
        .map(Command::Soak),
        // A run is one model turn with one call of the healthy server's tool: the 200.
        "misbehaving" => options(
            argv,
            200,
            Accepts {
                fake: true,
                fake_model: true,
                warmup: Some(10),
                ..Accepts::default()
            },
        )
        .map(Command::Misbehaving),
        // A run is one start of each configuration; the eager one starts N servers, tens of
        // milliseconds.
        "lazy-ready" => options(
            argv,
            51,
            Accepts {
                fake: true,
                servers: true,
                servers_default: Some(LAZY_SERVERS),
                warmup: Some(5),
                ..Accepts::default()
            },
        )
        .map(Command::LazyReady),
        // A run is one rho session with two calls and one bare client's process, a few
        // milliseconds each.
        "lazy-first-call" => options(
            argv,
            101,
            Accepts {
                fake: true,
                fake_model: true,
                warmup: Some(5),
                ..Accepts::default()
            },
        )
        .map(Command::LazyFirstCall),
        "read-files" => {
            let root = argv
                .next()
                .ok_or_else(|| Error::Usage("read-files needs a root directory".into()))?;
            if let Some(extra) = argv.next() {
                return Err(Error::Usage(format!("unexpected argument {extra:?}")));
            }
            Ok(Command::ReadFiles(PathBuf::from(root)))
        }
        "noop" => Ok(Command::Noop),
        "ready-line" => Ok(Command::ReadyLine),
        "corpus" => {
            let (Some(dir), Some(plugins), None) = (argv.next(), argv.next(), argv.next()) else {
                return Err(Error::Usage("corpus needs DIR and a plugin count".into()));
            };
            Ok(Command::Corpus {
                dir: PathBuf::from(dir),
                plugins: positive("corpus", plugins)?,
            })
        }
        other => Err(Error::Usage(format!("unknown command `{other}`"))),
    }
}

fn options(
    argv: impl Iterator<Item = OsString>,
    default_runs: usize,
    accepts: Accepts,
) -> Result<Options, Error> {
    let mut options = Options {
        rho: None,
        runs: default_runs,
        warmup: accepts.warmup.unwrap_or(3),
        sizes: DEFAULT_SIZES.to_vec(),
        fake: None,
        servers: accepts.servers_default.unwrap_or(DEFAULT_SERVERS),
        fake_model: None,
        browser: None,
        key_ms: DEFAULT_KEY_MS,
        messages: DEFAULT_MESSAGES,
        vtcode: None,
    };
    let mut argv = argv.peekable();
    while let Some(arg) = argv.next() {
        let arg = arg
            .into_string()
            .map_err(|raw| Error::Usage(format!("unknown option {raw:?}")))?;
        // Accept both `--name value` and `--name=value`.
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name.to_owned(), Some(value.into())),
            _ => (arg, None),
        };
        let mut value = || -> Result<OsString, Error> {
            inline
                .clone()
                .or_else(|| argv.next())
                .ok_or_else(|| Error::Usage(format!("{name} needs a value")))
        };
        match name.as_str() {
            "--rho" => options.rho = Some(PathBuf::from(value()?)),
            "--runs" => options.runs = positive(&name, value()?)?,
            "--warmup" => options.warmup = count(&name, value()?)?,
            "--fake" if accepts.fake => options.fake = Some(PathBuf::from(value()?)),
            "--servers" if accepts.servers => options.servers = positive(&name, value()?)?,
            "--browser" if accepts.browser => options.browser = Some(PathBuf::from(value()?)),
            "--key-ms" if accepts.key_ms => options.key_ms = positive(&name, value()?)? as u64,
            "--messages" if accepts.messages => options.messages = positive(&name, value()?)?,
            "--vtcode" if accepts.vtcode => options.vtcode = Some(PathBuf::from(value()?)),
            "--fake-model" if accepts.fake_model => {
                options.fake_model = Some(PathBuf::from(value()?));
            }
            "--sizes" if accepts.sizes => {
                let list = value()?;
                let list = list
                    .to_str()
                    .ok_or_else(|| Error::Usage(format!("--sizes: {list:?} is not a list")))?;
                options.sizes = list
                    .split(',')
                    .map(|item| positive("--sizes", item.trim().into()))
                    .collect::<Result<_, _>>()?;
            }
            other => return Err(Error::Usage(format!("unknown option `{other}`"))),
        }
    }
    Ok(options)
}

fn count(name: &str, value: OsString) -> Result<usize, Error> {
    value
        .to_str()
        .and_then(|text| text.parse().ok())
        .ok_or_else(|| Error::Usage(format!("{name}: {value:?} is not a number")))
}

fn positive(name: &str, value: OsString) -> Result<usize, Error> {
    match count(name, value)? {
        0 => Err(Error::Usage(format!("{name} must be at least 1"))),
        n => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(args: &[&str]) -> Result<Command, Error> {
        parse(args.iter().map(OsString::from).collect())
    }

    #[test]
    fn plugins_list_defaults_and_overrides() {
        let Ok(Command::PluginsList(o)) = parse_str(&["plugins-list"]) else {
            panic!("expected plugins-list");
        };
        assert_eq!(
            (o.runs, o.warmup, o.sizes),
            (21, 3, vec![250, 500, 1000, 2000])
        );
        let Ok(Command::PluginsList(o)) = parse_str(&[
            "plugins-list",
            "--runs=5",
            "--sizes",
            "10, 20",
            "--rho",
            "/x/rho",
            "--vtcode=/x/vtcode-loader",
        ]) else {
            panic!("expected plugins-list");
        };
        assert_eq!((o.runs, o.sizes), (5, vec![10, 20]));
        assert_eq!(o.rho, Some(PathBuf::from("/x/rho")));
        assert_eq!(o.vtcode, Some(PathBuf::from("/x/vtcode-loader")));
        assert!(matches!(
            parse_str(&["mcp-list", "--vtcode", "/x"]),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn mcp_commands_take_their_options() {
        let Ok(Command::McpStartup(o)) =
            parse_str(&["mcp-startup", "--fake", "/x/fake-mcp", "--runs", "7"])
        else {
            panic!("expected mcp-startup");
        };
        assert_eq!(
            (o.fake, o.runs, o.servers),
            (Some(PathBuf::from("/x/fake-mcp")), 7, 10)
        );
        let Ok(Command::McpStartup(o)) = parse_str(&["mcp-startup", "--servers=4"]) else {
            panic!("expected mcp-startup");
        };
        assert_eq!((o.servers, o.runs), (4, 31));
        let Ok(Command::McpList(o)) = parse_str(&["mcp-list"]) else {
            panic!("expected mcp-list");
        };
        assert_eq!((o.runs, o.warmup), (21, 3));
        assert!(matches!(
            parse_str(&["mcp-list", "--servers", "3"]),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn rpc_commands_take_their_options() {
        let Ok(Command::RpcTurn(o)) = parse_str(&["rpc-turn"]) else {
            panic!("expected rpc-turn");
        };
        assert_eq!((o.runs, o.warmup, o.fake_model), (200, 10, None));
        let Ok(Command::RpcTurn(o)) =
            parse_str(&["rpc-turn", "--fake-model=/x/fake-model", "--warmup", "0"])
        else {
            panic!("expected rpc-turn");
        };
        assert_eq!(
            (o.fake_model, o.warmup),
            (Some(PathBuf::from("/x/fake-model")), 0)
        );
        let Ok(Command::RpcReady(o)) = parse_str(&["rpc-ready"]) else {
            panic!("expected rpc-ready");
        };
        assert_eq!((o.runs, o.warmup), (51, 5));
        assert!(matches!(
            parse_str(&["rpc-ready", "--fake-model", "/x"]),
            Err(Error::Usage(_))
        ));
        assert!(matches!(parse_str(&["ready-line"]), Ok(Command::ReadyLine)));
    }

    #[test]
    fn client_half_commands_take_their_options() {
        let Ok(Command::QuestionRoundTrip(o)) = parse_str(&["question-round-trip"]) else {
            panic!("expected question-round-trip");
        };
        assert_eq!(
            (o.runs, o.warmup, o.fake, o.fake_model),
            (200, 20, None, None)
        );
        let Ok(Command::QuestionRoundTrip(o)) = parse_str(&[
            "question-round-trip",
            "--fake=/x/fake-mcp",
            "--fake-model",
            "/x/fake-model",
            "--warmup",
            "0",
        ]) else {
            panic!("expected question-round-trip");
        };
        assert_eq!(
            (o.fake, o.fake_model, o.warmup),
            (
                Some(PathBuf::from("/x/fake-mcp")),
                Some(PathBuf::from("/x/fake-model")),
                0
            )
        );
        let Ok(Command::CompleteCached(o)) = parse_str(&["complete-cached", "--runs", "50"]) else {
            panic!("expected complete-cached");
        };
        assert_eq!((o.runs, o.warmup, o.fake), (50, 100, None));
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
    fn tui_commands_take_their_options() {
        let Ok(Command::TuiFirstFrame(o)) = parse_str(&["tui-first-frame"]) else {
            panic!("expected tui-first-frame");
        };
        assert_eq!((o.runs, o.warmup), (21, 3));
        assert!(matches!(
            parse_str(&["tui-first-frame", "--fake-model", "/x"]),
            Err(Error::Usage(_))
        ));
        let Ok(Command::TuiKeys(o)) = parse_str(&["tui-keys"]) else {
            panic!("expected tui-keys");
        };
        assert_eq!((o.runs, o.warmup, o.key_ms), (3, 1, 15));
        let Ok(Command::TuiKeys(o)) =
            parse_str(&["tui-keys", "--key-ms=40", "--fake-model", "/x/fake-model"])
        else {
            panic!("expected tui-keys");
        };
        assert_eq!(
            (o.key_ms, o.fake_model),
            (40, Some(PathBuf::from("/x/fake-model")))
        );
        assert!(matches!(
            parse_str(&["tui-keys", "--messages", "5"]),
            Err(Error::Usage(_))
        ));
        let Ok(Command::TuiResume(o)) = parse_str(&["tui-resume", "--messages", "500"]) else {
            panic!("expected tui-resume");
        };
        assert_eq!((o.runs, o.warmup, o.messages), (11, 2, 500));
        assert!(matches!(
            parse_str(&["tui-resume", "--key-ms", "5"]),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn hardening_commands_take_their_options() {
        let Ok(Command::Soak(o)) = parse_str(&["soak"]) else {
            panic!("expected soak");
        };
        assert_eq!((o.runs, o.warmup, o.servers, o.fake), (500, 3, 3, None));
        let Ok(Command::Soak(o)) = parse_str(&["soak", "--runs=20", "--servers", "5"]) else {
            panic!("expected soak");
        };
        assert_eq!((o.runs, o.servers), (20, 5));
        assert!(matches!(
            parse_str(&["soak", "--fake-model", "/x"]),
            Err(Error::Usage(_))
        ));
        let Ok(Command::Misbehaving(o)) = parse_str(&[
            "misbehaving",
            "--fake",
            "/x/fake-mcp",
            "--fake-model=/x/fake-model",
        ]) else {
            panic!("expected misbehaving");
        };
        assert_eq!(
            (o.runs, o.warmup, o.fake, o.fake_model),
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
        let Ok(Command::LazyReady(o)) = parse_str(&["lazy-ready"]) else {
            panic!("expected lazy-ready");
        };
        assert_eq!((o.runs, o.warmup, o.servers, o.fake), (51, 5, 50, None));
        let Ok(Command::LazyReady(o)) =
            parse_str(&["lazy-ready", "--servers=8", "--fake", "/x/fake-mcp"])
        else {
            panic!("expected lazy-ready");
        };
        assert_eq!((o.servers, o.fake), (8, Some(PathBuf::from("/x/fake-mcp"))));
        assert!(matches!(
            parse_str(&["lazy-ready", "--fake-model", "/x"]),
            Err(Error::Usage(_))
        ));
        let Ok(Command::LazyFirstCall(o)) = parse_str(&[
            "lazy-first-call",
            "--fake-model=/x/fake-model",
            "--runs",
            "9",
        ]) else {
            panic!("expected lazy-first-call");
        };
        assert_eq!(
            (o.runs, o.warmup, o.fake_model),
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
            parse_str(&["plugins-list", "--fake", "/x"]),
            Err(Error::Usage(_))
        ));
        assert!(matches!(parse_str(&["read-files"]), Err(Error::Usage(_))));
        assert!(matches!(parse_str(&["corpus", "/x"]), Err(Error::Usage(_))));
        assert!(matches!(
            parse_str(&["corpus", "/x", "3"]),
            Ok(Command::Corpus { plugins: 3, .. })
        ));
    }
}
