//! The command line's tests: every subcommand's options and defaults, bad usage, help, and
//! the baseline modes recognised before clap.

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

/// The options of a benchmark command line, folded as `main` folds them.
fn options(args: &[&str]) -> Options {
    match parse_str(args) {
        Ok(
            Command::Startup(common)
            | Command::McpList(common)
            | Command::RpcReady(common)
            | Command::TuiFirstFrame(common),
        ) => common.into(),
        Ok(Command::PluginsList(bench)) => bench.into(),
        Ok(Command::McpStartup(bench) | Command::Soak(bench) | Command::LazyReady(bench)) => {
            bench.into()
        }
        Ok(Command::RpcTurn(bench)) => bench.into(),
        Ok(
            Command::QuestionRoundTrip(bench)
            | Command::Misbehaving(bench)
            | Command::LazyFirstCall(bench),
        ) => bench.into(),
        Ok(Command::CompleteCached(bench) | Command::GatewayCall(bench)) => bench.into(),
        Ok(Command::OauthConnect(bench)) => bench.into(),
        Ok(Command::TuiKeys(bench)) => bench.into(),
        Ok(Command::TuiResume(bench)) => bench.into(),
        other => panic!("expected a benchmark for {args:?}, got {other:?}"),
    }
}

/// Whether `args` is bad usage.
fn rejected(args: &[&str]) -> bool {
    matches!(parse_str(args), Err(Error::Usage(_)))
}

fn some(path: &str) -> Option<PathBuf> {
    Some(PathBuf::from(path))
}

#[test]
fn plugins_list_defaults_and_overrides() {
    let o = options(&["plugins-list"]);
    assert_eq!(
        (o.runs, o.warmup, o.sizes),
        (21, 3, vec![250, 500, 1000, 2000])
    );
    assert!(matches!(
        parse_str(&["plugins-list"]),
        Ok(Command::PluginsList(_))
    ));
    let o = options(&[
        "plugins-list",
        "--runs=5",
        "--sizes",
        "10, 20",
        "--rho",
        "/x/rho",
        "--vtcode=/x/vtcode-loader",
    ]);
    assert_eq!((o.runs, o.sizes), (5, vec![10, 20]));
    assert_eq!(o.rho, some("/x/rho"));
    assert_eq!(o.vtcode, some("/x/vtcode-loader"));
    assert!(rejected(&["mcp-list", "--vtcode", "/x"]));
}

#[test]
fn mcp_commands_take_their_options() {
    assert!(matches!(
        parse_str(&["mcp-startup"]),
        Ok(Command::McpStartup(_))
    ));
    let o = options(&["mcp-startup", "--fake", "/x/fake-mcp", "--runs", "7"]);
    assert_eq!((o.fake, o.runs, o.servers), (some("/x/fake-mcp"), 7, 10));
    let o = options(&["mcp-startup", "--servers=4"]);
    assert_eq!((o.servers, o.runs), (4, 31));
    assert!(matches!(parse_str(&["mcp-list"]), Ok(Command::McpList(_))));
    let o = options(&["mcp-list"]);
    assert_eq!((o.runs, o.warmup), (21, 3));
    assert!(rejected(&["mcp-list", "--servers", "3"]));
}

#[test]
fn rpc_commands_take_their_options() {
    assert!(matches!(parse_str(&["rpc-turn"]), Ok(Command::RpcTurn(_))));
    let o = options(&["rpc-turn"]);
    assert_eq!((o.runs, o.warmup, o.fake_model), (200, 10, None));
    let o = options(&["rpc-turn", "--fake-model=/x/fake-model", "--warmup", "0"]);
    assert_eq!((o.fake_model, o.warmup), (some("/x/fake-model"), 0));
    assert!(matches!(
        parse_str(&["rpc-ready"]),
        Ok(Command::RpcReady(_))
    ));
    let o = options(&["rpc-ready"]);
    assert_eq!((o.runs, o.warmup), (51, 5));
    assert!(rejected(&["rpc-ready", "--fake-model", "/x"]));
    assert!(matches!(parse_str(&["ready-line"]), Ok(Command::ReadyLine)));
}

#[test]
fn client_half_commands_take_their_options() {
    assert!(matches!(
        parse_str(&["question-round-trip"]),
        Ok(Command::QuestionRoundTrip(_))
    ));
    let o = options(&["question-round-trip"]);
    assert_eq!(
        (o.runs, o.warmup, o.fake, o.fake_model),
        (200, 20, None, None)
    );
    let o = options(&[
        "question-round-trip",
        "--fake=/x/fake-mcp",
        "--fake-model",
        "/x/fake-model",
        "--warmup",
        "0",
    ]);
    assert_eq!(
        (o.fake, o.fake_model, o.warmup),
        (some("/x/fake-mcp"), some("/x/fake-model"), 0)
    );
    assert!(matches!(
        parse_str(&["complete-cached"]),
        Ok(Command::CompleteCached(_))
    ));
    let o = options(&["complete-cached", "--runs", "50"]);
    assert_eq!((o.runs, o.warmup, o.fake), (50, 100, None));
    assert!(rejected(&["complete-cached", "--fake-model", "/x"]));
    assert!(rejected(&["question-round-trip", "--servers", "2"]));
}

#[test]
fn oauth_connect_takes_the_browser() {
    assert!(matches!(
        parse_str(&["oauth-connect"]),
        Ok(Command::OauthConnect(_))
    ));
    let o = options(&["oauth-connect", "--runs", "31", "--browser", "/x/browser"]);
    assert_eq!((o.runs, o.warmup, o.browser), (31, 3, some("/x/browser")));
    assert!(rejected(&["oauth-connect", "--fake", "/x"]));
}

#[test]
fn tui_commands_take_their_options() {
    assert!(matches!(
        parse_str(&["tui-first-frame"]),
        Ok(Command::TuiFirstFrame(_))
    ));
    let o = options(&["tui-first-frame"]);
    assert_eq!((o.runs, o.warmup), (21, 3));
    assert!(rejected(&["tui-first-frame", "--fake-model", "/x"]));
    assert!(matches!(parse_str(&["tui-keys"]), Ok(Command::TuiKeys(_))));
    let o = options(&["tui-keys"]);
    assert_eq!((o.runs, o.warmup, o.key_ms), (3, 1, 15));
    let o = options(&["tui-keys", "--key-ms=40", "--fake-model", "/x/fake-model"]);
    assert_eq!((o.key_ms, o.fake_model), (40, some("/x/fake-model")));
    assert!(rejected(&["tui-keys", "--messages", "5"]));
    assert!(matches!(
        parse_str(&["tui-resume"]),
        Ok(Command::TuiResume(_))
    ));
    let o = options(&["tui-resume", "--messages", "500"]);
    assert_eq!((o.runs, o.warmup, o.messages), (11, 2, 500));
    assert!(rejected(&["tui-resume", "--key-ms", "5"]));
}

#[test]
fn hardening_commands_take_their_options() {
    assert!(matches!(parse_str(&["soak"]), Ok(Command::Soak(_))));
    let o = options(&["soak"]);
    assert_eq!((o.runs, o.warmup, o.servers, o.fake), (500, 3, 3, None));
    let o = options(&["soak", "--runs=20", "--servers", "5"]);
    assert_eq!((o.runs, o.servers), (20, 5));
    assert!(rejected(&["soak", "--fake-model", "/x"]));
    assert!(matches!(
        parse_str(&["misbehaving"]),
        Ok(Command::Misbehaving(_))
    ));
    let o = options(&[
        "misbehaving",
        "--fake",
        "/x/fake-mcp",
        "--fake-model=/x/fake-model",
    ]);
    assert_eq!(
        (o.runs, o.warmup, o.fake, o.fake_model),
        (200, 10, some("/x/fake-mcp"), some("/x/fake-model"))
    );
    assert!(rejected(&["misbehaving", "--servers", "2"]));
}

#[test]
fn lazy_commands_take_their_options() {
    assert!(matches!(
        parse_str(&["lazy-ready"]),
        Ok(Command::LazyReady(_))
    ));
    let o = options(&["lazy-ready"]);
    assert_eq!((o.runs, o.warmup, o.servers, o.fake), (51, 5, 50, None));
    let o = options(&["lazy-ready", "--servers=8", "--fake", "/x/fake-mcp"]);
    assert_eq!((o.servers, o.fake), (8, some("/x/fake-mcp")));
    assert!(rejected(&["lazy-ready", "--fake-model", "/x"]));
    assert!(matches!(
        parse_str(&["lazy-first-call"]),
        Ok(Command::LazyFirstCall(_))
    ));
    let o = options(&[
        "lazy-first-call",
        "--fake-model=/x/fake-model",
        "--runs",
        "9",
    ]);
    assert_eq!(
        (o.runs, o.warmup, o.fake_model),
        (9, 5, some("/x/fake-model"))
    );
    assert!(rejected(&["lazy-first-call", "--servers", "2"]));
}

#[test]
fn gateway_call_takes_its_options() {
    let o = options(&["gateway-call"]);
    assert_eq!((o.runs, o.warmup, o.fake), (1000, 100, None));
    let o = options(&["gateway-call", "--fake", "/x/fake-mcp", "--runs", "50"]);
    assert_eq!((o.runs, o.fake), (50, some("/x/fake-mcp")));
    assert!(rejected(&["gateway-call", "--fake-model", "/x"]));
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
    let o = options(&[
        "plugins-list",
        "--runs",
        "4",
        "--runs",
        "6",
        "--sizes",
        "1",
        "--sizes",
        "2,3",
    ]);
    assert_eq!((o.runs, o.sizes), (6, vec![2, 3]));
}
