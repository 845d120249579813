//! Lifecycle evidence of MCP servers (`docs/mcp.md`, "Lifecycle evidence"): `toolset/initialized`
//! for an eager server (live) and a lazy one the tool cache knows (cached, then live at the
//! turn boundary after its first start), `toolset/closed` for both at the end of input, the
//! session file's entries, each server's digest in `listExtensions`, `toolset/changed` when a
//! resumed session's server lists other tools, and no argument or environment value in the
//! events, the session file or the log.

use std::path::{Path, PathBuf};

use rho_component::naming::ExportedNames;
use rho_e2e::{FakeModel, Rpc, Sandbox, walk};
use serde_json::{Value, json};

const FAKE_MCP: &str = env!("CARGO_BIN_EXE_fake-mcp");
const FAKE_MODEL: &str = env!("CARGO_BIN_EXE_fake-model");
const ARG_CANARY: &str = "sk-arg-canary-5f1e";
const ENV_CANARY: &str = "sk-env-canary-9c2d";

/// A tools file listing `names`, each with an input schema of one string `q`.
fn tools_file(dir: &Path, name: &str, tools: &[(&str, &str)]) -> PathBuf {
    let path = dir.join(name);
    let listed: Vec<Value> = tools
        .iter()
        .map(|(name, kind)| {
            json!({"name": name, "description": format!("The {name} tool."),
                   "inputSchema": {"type": "object", "properties": {"q": {"type": kind}}}})
        })
        .collect();
    std::fs::write(&path, serde_json::to_vec(&listed).unwrap()).unwrap();
    path
}

/// `eager` (started with the session) and `lazy` (`startup = "lazy"`), both fake-mcp with a
/// secret-looking argument and environment value.
fn two_servers(sandbox: &Sandbox, eager_tools: &Path, lazy_tools: &Path) {
    let server = |id: &str, tools: &Path, lazy: bool| {
        format!(
            "[mcp.servers.{id}]\ncommand = {}\nargs = [\"--tools-file\", {}, \"--token\", {}]\n\
             env = {{ FAKE_TOKEN = {} }}\n{}\n",
            json!(FAKE_MCP),
            json!(tools.display().to_string()),
            json!(ARG_CANARY),
            json!(ENV_CANARY),
            if lazy { "startup = \"lazy\"\n" } else { "" },
        )
    };
    sandbox.write_config(&format!(
        "[agent]\npermission_mode = \"allow-all\"\n\n{}{}",
        server("eager", eager_tools, false),
        server("lazy", lazy_tools, true)
    ));
}

/// [`two_servers`] with one tool each: `eager` offers `alpha`, `lazy` offers `gamma` (both
/// take a string). Returns the folder of their tool files.
fn alpha_and_gamma(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.outside("tools");
    let eager = tools_file(&dir, "eager.json", &[("alpha", "string")]);
    let lazy = tools_file(&dir, "lazy.json", &[("gamma", "string")]);
    two_servers(sandbox, &eager, &lazy);
    dir
}

fn by_server<'a>(notes: &'a [Value], method: &str, server: &str) -> Vec<&'a Value> {
    notes
        .iter()
        .filter(|n| n["method"] == method && n["params"]["server"] == server)
        .map(|n| &n["params"])
        .collect()
}

fn assert_no_canary(what: &str, text: &str) {
    for canary in [ARG_CANARY, ENV_CANARY, FAKE_MCP] {
        assert!(!text.contains(canary), "{what} holds {canary}: {text}");
    }
}

fn session_files(sandbox: &Sandbox) -> Vec<PathBuf> {
    walk(&sandbox.rho_home.join("sessions"))
        .into_iter()
        .filter(|p| p.extension() == Some("jsonl".as_ref()))
        .collect()
}

#[test]
fn an_eager_and_a_cached_lazy_server_are_initialized_used_and_closed_with_evidence() {
    let sandbox = Sandbox::new();
    let dir = sandbox.outside("tools");
    let eager = tools_file(
        &dir,
        "eager.json",
        &[("alpha", "string"), ("beta", "string")],
    );
    let lazy = tools_file(&dir, "lazy.json", &[("gamma", "string")]);
    two_servers(&sandbox, &eager, &lazy);
    // The lazy server's tool cache entry, so the session mounts it without starting it.
    sandbox.rho(&["mcp", "show", "lazy", "--connect"]).ok();
    let gamma = ExportedNames::default().assign("lazy", "gamma");
    let model = FakeModel::start(
        FAKE_MODEL,
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [{"name": gamma, "arguments": {"q": "x"}}]},
            {"content": "used it"},
            {"content": "second"}
        ]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &[]);
    rpc.request(1, "prompt", json!({"message": "use the lazy tool"}));
    let (first, answer) = rpc.response(1);
    assert_eq!(answer["result"]["reply"], "used it", "{answer}");

    let eager_init = by_server(&first, "toolset/initialized", "eager");
    let lazy_init = by_server(&first, "toolset/initialized", "lazy");
    assert_eq!(eager_init.len(), 1, "{first:#?}");
    assert_eq!(lazy_init.len(), 1, "{first:#?}");
    let digest = |p: &Value| p["digest"].as_str().unwrap().to_owned();
    let eager_digest = digest(eager_init[0]);
    assert_eq!(eager_digest.len(), 16);
    assert_eq!(
        *eager_init[0],
        json!({"server": "eager", "transport": "stdio", "live": true, "tools": 2,
               "resources": 0, "prompts": 0, "sampling": false, "digest": eager_digest})
    );
    assert_eq!(
        lazy_init[0]["live"], false,
        "from the tool cache: {lazy_init:?}"
    );
    assert_eq!(lazy_init[0]["tools"], 1);
    // Both come before the turn: they are what the session started with.
    let start = first
        .iter()
        .position(|n| n["method"] == "agent/start")
        .unwrap();
    let last_init = first
        .iter()
        .rposition(|n| n["method"] == "toolset/initialized")
        .unwrap();
    assert!(last_init < start, "{first:#?}");

    // The call started the lazy server; its live list is in at the next turn boundary.
    rpc.request(2, "prompt", json!({"message": "again"}));
    let (second, _) = rpc.response(2);
    let live = by_server(&second, "toolset/initialized", "lazy");
    assert_eq!(live.len(), 1, "{second:#?}");
    assert_eq!(live[0]["live"], true);
    assert_eq!(
        live[0]["digest"], lazy_init[0]["digest"],
        "same tools as cached"
    );
    assert!(by_server(&second, "toolset/initialized", "eager").is_empty());
    // listExtensions carries each server's digest as last reported.
    let extensions = rpc.call(3, "listExtensions", json!({}));
    let digest_of = |id: &str| {
        extensions["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .map(|s| s["digest"].clone())
    };
    assert_eq!(
        digest_of("eager"),
        Some(json!(eager_digest)),
        "{extensions:#}"
    );
    assert_eq!(digest_of("lazy"), Some(live[0]["digest"].clone()));

    // End of input: both closed, both running.
    drop(rpc.stdin.take());
    let mut rest = Vec::new();
    while rest
        .iter()
        .filter(|n: &&Value| n["method"] == "toolset/closed")
        .count()
        < 2
    {
        rest.push(rpc.next_message());
    }
    for server in ["eager", "lazy"] {
        let closed = by_server(&rest, "toolset/closed", server);
        assert_eq!(closed.len(), 1, "{rest:#?}");
        assert_eq!(closed[0]["live"], true, "{closed:?}");
    }
    assert_no_canary("the notifications", &format!("{:?}", rpc.seen));
    // The session file is complete once rho has exited (a notification may go out before
    // its entry is written).
    assert_eq!(rpc.finish(), 0);

    let files = session_files(&sandbox);
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert_no_canary("the session file", &text);
    let kinds: Vec<(String, String, bool)> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"].as_str().unwrap().starts_with("toolset_"))
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_owned(),
                e["server"].as_str().unwrap().to_owned(),
                e["live"].as_bool().unwrap(),
            )
        })
        .collect();
    let entry = |kind: &str, server: &str, live: bool| (kind.to_owned(), server.to_owned(), live);
    assert_eq!(
        kinds,
        [
            entry("toolset_initialized", "eager", true),
            entry("toolset_initialized", "lazy", false),
            entry("toolset_initialized", "lazy", true),
            entry("toolset_closed", "eager", true),
            entry("toolset_closed", "lazy", true),
        ]
    );
}

#[test]
fn run_json_prints_the_evidence_and_the_log_names_no_secret() {
    let sandbox = Sandbox::new();
    alpha_and_gamma(&sandbox);
    let model = FakeModel::start(
        FAKE_MODEL,
        &sandbox.dir.path().join("model"),
        &json!([{"content": "hello"}]),
    );
    let endpoint = model.endpoint();
    let done = sandbox
        .rho_env(
            &[("RHO_LOG", "rho::mcp=info")],
            &[
                "run",
                "--json",
                "--endpoint",
                &endpoint,
                "--model",
                "fake-model-1",
                "hi",
            ],
        )
        .ok();
    let lines: Vec<Value> = done
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let init = by_server(&lines, "toolset/initialized", "eager");
    assert_eq!(init.len(), 1, "{lines:#?}");
    assert_eq!(by_server(&lines, "toolset/closed", "eager").len(), 1);
    assert_no_canary("stdout", &done.stdout);
    assert_no_canary("the log", &done.stderr);
    let digest = init[0]["digest"].as_str().unwrap();
    let logged = done
        .stderr
        .lines()
        .find(|l| l.contains("toolset initialized") && l.contains("eager"))
        .unwrap_or_else(|| panic!("no log line: {}", done.stderr));
    assert!(logged.contains(digest), "{logged}");
    assert!(logged.contains("stdio"), "{logged}");
    assert!(
        done.stderr
            .lines()
            .any(|l| l.contains("toolset closed") && l.contains("eager")),
        "{}",
        done.stderr
    );
    for file in session_files(&sandbox) {
        assert_no_canary("the session file", &std::fs::read_to_string(file).unwrap());
    }
}

#[test]
fn a_resumed_session_says_which_servers_tools_changed() {
    let sandbox = Sandbox::new();
    let dir = alpha_and_gamma(&sandbox);
    let model = FakeModel::start(
        FAKE_MODEL,
        &sandbox.dir.path().join("model"),
        &json!([{"content": "one"}, {"content": "two"}, {"content": "three"}]),
    );
    let mut rpc = Rpc::start(&sandbox, &model, &[]);
    rpc.request(1, "prompt", json!({"message": "hi"}));
    let (notes, _) = rpc.response(1);
    let before = by_server(&notes, "toolset/initialized", "eager")[0]["digest"].clone();
    let file = rpc.call(2, "getState", json!({}))["sessionFile"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(rpc.finish(), 0);

    // The eager server's schema changes: `alpha` now takes a number.
    tools_file(&dir, "eager.json", &[("alpha", "number")]);
    let mut rpc = Rpc::start(&sandbox, &model, &["--continue"]);
    let changed = rpc.until("toolset/changed")["params"].clone();
    let now = rpc
        .seen
        .iter()
        .find(|n| n["method"] == "toolset/initialized" && n["params"]["server"] == "eager")
        .unwrap()["params"]["digest"]
        .clone();
    assert_ne!(before, now);
    assert_eq!(
        changed,
        json!({"server": "eager", "previous": before, "current": now, "live": true})
    );
    // Only the server whose tools changed.
    assert_eq!(
        rpc.seen
            .iter()
            .filter(|n| n["method"] == "toolset/changed")
            .count(),
        1
    );
    assert_eq!(rpc.finish(), 0);

    // resumeSession from a fresh session: the file recorded the new digest, so nothing
    // changed; after another change, it says so again.
    tools_file(&dir, "eager.json", &[("alpha", "boolean")]);
    let mut rpc = Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.request(3, "resumeSession", json!({"path": file}));
    let (notes, answer) = rpc.response(3);
    assert!(answer.get("error").is_none(), "{answer}");
    let changed = by_server(&notes, "toolset/changed", "eager");
    assert_eq!(changed.len(), 1, "{notes:#?}");
    assert_eq!(changed[0]["previous"], now);
    assert!(by_server(&notes, "toolset/changed", "lazy").is_empty());
}
