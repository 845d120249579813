//! Lazy servers through the registry, as a session mounts them (`docs/mcp.md`, "Lazy start"),
//! against `fake-mcp`, which appends its pid to a file each time it starts: a lazy server with
//! a tool cache entry is known at mount without a process, starts once however many calls
//! arrive together, and its cache entry is written by a start and reused by the next session;
//! without an entry it starts in the background and its tools join at the next turn boundary.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rho_core::ServerStatus;
use rho_e2e::Sandbox;
use serde_json::{Value, json};

const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp");

/// A config with one stdio server `fake` (fake-mcp `mode`, recording its starts in `pids`).
fn config(pids: &Path, mode: &str, startup: &str, extra: &str) -> String {
    format!(
        "[mcp.servers.fake]\ncommand = {command}\nargs = [\"--mode\", {mode}, \"--pid-file\", {pids}{extra}]\nstartup = {startup:?}\nstartup_timeout_sec = 20\ncall_timeout_sec = 20\n",
        command = json!(FAKE),
        mode = json!(mode),
        pids = json!(pids.display().to_string()),
    )
}

async fn mount(sandbox: &Sandbox) -> rho_core::ToolSet {
    sandbox
        .registry()
        .mount(&rho_core::MountOptions::default())
        .await
}

/// A lazy server without a cache entry right after mounting: its background start may have
/// finished already (`started`) or not (`configured`), but it is never `known`.
fn assert_not_known_yet(status: &ServerStatus) {
    assert!(
        matches!(status, ServerStatus::Configured | ServerStatus::Started),
        "{status:?}"
    );
}

/// How many times fake-mcp started.
fn starts(pids: &Path) -> usize {
    std::fs::read_to_string(pids)
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

/// The tool cache's entries.
fn cache_entries(sandbox: &Sandbox) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(sandbox.rho_home.join("cache/mcp"))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect()
        })
        .unwrap_or_default()
}

async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether a process started from the fake-mcp binary with `pids` on its command line runs.
fn running(pids: &Path) -> bool {
    let needle = pids.display().to_string();
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .map(|cmdline| String::from_utf8_lossy(&cmdline).contains(&needle))
            .unwrap_or(false)
    })
}

/// The exported name of the one server's tool `tool`.
fn exported(set: &rho_core::ToolSet, tool: &str) -> String {
    set.servers[0]
        .tools()
        .into_iter()
        .find(|t| t.tool == tool)
        .unwrap_or_else(|| panic!("{tool} is not mounted"))
        .name
}

async fn call(set: &rho_core::ToolSet, name: &str, sandbox: &Sandbox) -> rho_component::ToolOutput {
    let tool = set.get(name).unwrap_or_else(|| panic!("no tool {name}"));
    let context = rho_component::ToolContext::new(&sandbox.project);
    tool.call(json!({"text": "hi"}), &context).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_lazy_server_is_known_without_a_process_and_starts_once_for_a_batch() {
    let sandbox = Sandbox::new();
    let pids = sandbox.outside("records").join("pids");
    sandbox.write_config(&config(&pids, "ok", "lazy", ""));
    // First session: nothing cached, so the server starts in the background to fill the cache;
    // mounting does not wait for it.
    let set = mount(&sandbox).await;
    assert_not_known_yet(&set.servers[0].status());
    wait_for("the background start filled the cache", || {
        !cache_entries(&sandbox).is_empty()
    })
    .await;
    assert_eq!(starts(&pids), 1);
    set.close().await;
    wait_for("the first session's server stopped", || !running(&pids)).await;

    // Second session: known from the cache, no process.
    let set = Arc::new(mount(&sandbox).await);
    let server = &set.servers[0];
    assert_eq!(server.status(), ServerStatus::Known);
    let tools: Vec<String> = server.tools().into_iter().map(|t| t.tool).collect();
    assert!(tools.contains(&"echo".to_owned()), "{tools:?}");
    assert_eq!(starts(&pids), 1, "mounting a known server spawns nothing");
    assert!(!running(&pids), "no fake-mcp process at ready");
    let echo = server
        .tools()
        .into_iter()
        .find(|t| t.tool == "echo")
        .unwrap()
        .name;
    // Eight calls at once: one start.
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (set, echo, project) = (set.clone(), echo.clone(), sandbox.project.clone());
        calls.spawn(async move {
            let tool = set.get(&echo).unwrap();
            tool.call(
                json!({"text": "hi"}),
                &rho_component::ToolContext::new(project),
            )
            .await
        });
    }
    while let Some(output) = calls.join_next().await {
        let output = output.unwrap();
        assert!(!output.is_error, "{}", output.text);
    }
    assert_eq!(
        starts(&pids),
        2,
        "concurrent first calls start the server once"
    );
    assert_eq!(set.servers[0].status(), ServerStatus::Used);
    // The turn boundary lists the tools the start took from the cache: the same, so nothing
    // changed and nothing is reported.
    assert_eq!(set.reconcile().await, Vec::new());
    Arc::try_unwrap(set).unwrap().close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_command_misses_the_cache_and_a_vanished_tool_fails_clearly() {
    let sandbox = Sandbox::new();
    let pids = sandbox.outside("records").join("pids");
    sandbox.write_config(&config(&pids, "list-changed", "eager", ""));
    // An eager start fills the cache too: `echo` and `retired`.
    let set = mount(&sandbox).await;
    assert_eq!(set.servers[0].status(), ServerStatus::Started);
    wait_for("the start was remembered", || {
        !cache_entries(&sandbox).is_empty()
    })
    .await;
    set.close().await;

    // The same server, now lazy, with other arguments: another fingerprint, so not known.
    sandbox.write_config(&config(
        &pids,
        "list-changed",
        "lazy",
        ", \"--count\", \"1\"",
    ));
    let set = mount(&sandbox).await;
    assert_not_known_yet(&set.servers[0].status());
    set.close().await;
    // Its background start may still be writing its pid: count starts once none runs and
    // the count holds still.
    let mut before = starts(&pids);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(
            Instant::now() < deadline,
            "the second session's server never stopped"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = starts(&pids);
        if now == before && !running(&pids) {
            break;
        }
        before = now;
    }

    // Back to the first command: known again, from the first entry.
    sandbox.write_config(&config(&pids, "list-changed", "lazy", ""));
    let set = mount(&sandbox).await;
    assert_eq!(set.servers[0].status(), ServerStatus::Known);
    assert_eq!(starts(&pids), before);
    let names: Vec<(String, String)> = set.servers[0]
        .tools()
        .into_iter()
        .map(|t| (t.tool, t.name))
        .collect();
    let exported = |tool: &str| {
        names
            .iter()
            .find(|(own, _)| own == tool)
            .map(|(_, name)| name.clone())
            .unwrap_or_else(|| panic!("{tool} not mounted: {names:?}"))
    };
    // The cache remembered `retired`; the server lists it again at start (list-changed
    // withdraws it only after a call), so the call works.
    let output = call(&set, &exported("echo"), &sandbox).await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(set.servers[0].status(), ServerStatus::Used);
    // After that call the server lists `echo` revised, `newcomer` added, `retired` gone (and
    // says so): the turn boundary takes the live list.
    let mut changes = Vec::new();
    for _ in 0..100 {
        changes = set.reconcile().await;
        if !changes.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].1.withdrawn, ["retired"]);
    assert_eq!(changes[0].1.added, ["newcomer"]);
    let output = call(&set, &exported("retired"), &sandbox).await;
    assert!(
        output.is_error && output.text.contains("withdrew"),
        "{}",
        output.text
    );
    let joined = set.servers[0]
        .tools()
        .into_iter()
        .find(|t| t.tool == "newcomer")
        .expect("an added tool joins at the turn boundary");
    let output = call(&set, &joined.name, &sandbox).await;
    assert!(!output.is_error, "{}", output.text);
    set.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lazy_server_without_a_cache_entry_does_not_hold_ready_and_its_tools_join_later() {
    let sandbox = Sandbox::new();
    let pids = sandbox.outside("records").join("pids");
    // Two seconds before it reads anything: an eager mount would wait for them.
    sandbox.write_config(&config(
        &pids,
        "ok",
        "lazy",
        ", \"--start-delay-ms\", \"2000\"",
    ));
    let started = Instant::now();
    let set = mount(&sandbox).await;
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "mount waited {:?}",
        started.elapsed()
    );
    assert_eq!(set.servers[0].status(), ServerStatus::Configured);
    assert!(set.servers[0].tools().is_empty());
    wait_for("the background start finished", || {
        set.servers[0].status() == ServerStatus::Started
    })
    .await;
    // The turn boundary mounts what it listed.
    let changes = set.reconcile().await;
    assert_eq!(changes.len(), 1, "{changes:?}");
    let echo = set.servers[0]
        .tools()
        .into_iter()
        .find(|t| t.tool == "echo")
        .expect("echo joined");
    let output = call(&set, &echo.name, &sandbox).await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(starts(&pids), 1);
    set.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_server_that_fails_to_start_names_itself_and_the_next_call_retries() {
    let sandbox = Sandbox::new();
    let pids = sandbox.outside("records").join("pids");
    // fake-mcp creates `marker` on its first start and crashes on every start that finds it.
    let marker = sandbox.outside("records").join("marker");
    let fail = format!(
        ", \"--fail-restarts\", {}",
        json!(marker.display().to_string())
    );
    sandbox.write_config(&config(&pids, "ok", "eager", &fail));
    let set = mount(&sandbox).await;
    assert_eq!(set.servers[0].status(), ServerStatus::Started);
    wait_for("the start was remembered", || {
        !cache_entries(&sandbox).is_empty()
    })
    .await;
    set.close().await;
    // Lazy now (how it starts is not part of what it offers, so the entry still applies).
    sandbox.write_config(&config(&pids, "ok", "lazy", &fail));
    let set = mount(&sandbox).await;
    assert_eq!(set.servers[0].status(), ServerStatus::Known);
    let echo = exported(&set, "echo");
    let output = call(&set, &echo, &sandbox).await;
    assert!(output.is_error, "{}", output.text);
    assert!(
        output.text.contains("fake"),
        "names the server: {}",
        output.text
    );
    assert!(
        output.text.contains("crashing on start"),
        "carries the stderr tail: {}",
        output.text
    );
    let ServerStatus::Failed(error) = set.servers[0].status() else {
        panic!("{:?}", set.servers[0].status())
    };
    assert!(error.contains("crashing on start"), "{error}");
    // Fixed: the next call starts it (after the backoff) and answers.
    std::fs::remove_file(&marker).unwrap();
    let output = call(&set, &echo, &sandbox).await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(set.servers[0].status(), ServerStatus::Used);
    set.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_tool_the_server_no_longer_lists_fails_clearly_on_first_use() {
    let sandbox = Sandbox::new();
    let records = sandbox.outside("records");
    let (pids, mode) = (records.join("pids"), records.join("mode"));
    // The same command and arguments each time (so the same cache entry); what the server
    // lists depends on a file the test changes between sessions.
    let script = records.join("server.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec {} --mode \"$(cat {})\" --pid-file {}\n",
            FAKE,
            mode.display(),
            pids.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let server = |startup: &str| {
        format!(
            "[mcp.servers.fake]\ncommand = {}\nstartup = {startup:?}\nstartup_timeout_sec = 20\n",
            json!(script.display().to_string())
        )
    };
    // `list-changed` lists `echo` and `retired` at first.
    std::fs::write(&mode, "list-changed").unwrap();
    sandbox.write_config(&server("eager"));
    let set = mount(&sandbox).await;
    assert_eq!(set.servers[0].status(), ServerStatus::Started);
    wait_for("the start was remembered", || {
        !cache_entries(&sandbox).is_empty()
    })
    .await;
    set.close().await;
    // Now the server lists only `echo`.
    std::fs::write(&mode, "ok").unwrap();
    sandbox.write_config(&server("lazy"));
    let set = mount(&sandbox).await;
    assert_eq!(set.servers[0].status(), ServerStatus::Known);
    let retired = set.servers[0]
        .tools()
        .into_iter()
        .find(|t| t.tool == "retired")
        .expect("the cache remembers `retired`")
        .name;
    let output = call(&set, &retired, &sandbox).await;
    assert!(output.is_error, "{}", output.text);
    assert!(output.text.contains("withdrew"), "{}", output.text);
    // The live list wins from the next turn: the cache is rewritten without `retired`.
    let changes = set.reconcile().await;
    assert_eq!(changes.len(), 1, "{changes:?}");
    wait_for("the cache forgot `retired`", || {
        let entry = std::fs::read_to_string(&cache_entries(&sandbox)[0]).unwrap_or_default();
        entry.contains("\"echo\"") && !entry.contains("retired")
    })
    .await;
    set.close().await;
}

#[test]
fn a_changed_tool_list_is_reported_as_tools_changed_and_added_tools_join() {
    let sandbox = Sandbox::new();
    let pids = sandbox.outside("records").join("pids");
    sandbox.write_config(&format!(
        "[agent]\npermission_mode = \"allow-all\"\n\n{}",
        config(&pids, "list-changed", "eager", "")
    ));
    let echo = rho_component::naming::ExportedNames::default().assign("fake", "echo");
    let newcomer = rho_component::naming::ExportedNames::default().assign("fake", "newcomer");
    let model = rho_e2e::FakeModel::start(
        env!("CARGO_BIN_EXE_fake-model"),
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [{"name": echo, "arguments": {"text": "hi"}}]},
            {"content": "called"},
            {"content": "the list changed", "expect": {"tools_include": [newcomer]}}
        ]),
    );
    let mut rpc = rho_e2e::Rpc::start(&sandbox, &model, &["--ephemeral"]);
    rpc.request(1, "prompt", json!({"message": "call echo"}));
    let (_, response) = rpc.response(1);
    assert_eq!(response["result"]["reply"], "called", "{response}");
    // The server announced its new list after the call: the next turn takes it.
    std::thread::sleep(Duration::from_millis(300));
    rpc.request(2, "prompt", json!({"message": "again"}));
    let (notes, response) = rpc.response(2);
    assert_eq!(
        response["result"]["reply"], "the list changed",
        "{response}"
    );
    let changed = notes
        .iter()
        .find(|n| n["method"] == "tools/changed")
        .unwrap_or_else(|| panic!("no tools/changed in {notes:#?}"));
    assert_eq!(changed["params"]["server"], "fake");
    assert_eq!(changed["params"]["added"], json!(["newcomer"]));
    assert_eq!(changed["params"]["withdrawn"], json!(["retired"]));
    assert_eq!(changed["params"]["revised"], json!(["echo"]));
    let extensions = rpc.call(3, "listExtensions", json!({}));
    let server = &extensions["servers"][0];
    assert!(
        server["tools"]
            .as_array()
            .unwrap()
            .contains(&json!(newcomer)),
        "{server:#}"
    );
    assert_eq!(server["addedTools"], json!(["newcomer"]), "{server:#}");
    assert_eq!(rpc.finish(), 0);
}

/// Polls `listExtensions` until the first server's status is `status`; returns that answer.
fn wait_for_status(rpc: &mut rho_e2e::Rpc, status: &str, mut id: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let extensions = rpc.call(id, "listExtensions", json!({}));
        if extensions["servers"][0]["status"] == status {
            return extensions;
        }
        assert!(
            Instant::now() < deadline,
            "never {status}: {:#}",
            extensions["servers"][0]
        );
        id += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_lazy_python_plugin_server_is_known_from_the_cache_until_its_plugin_changes() {
    rho_e2e::require_python_mcp();
    let sandbox = Sandbox::new();
    // The Python SDK's server, copied to a path of this test's own (so /proc shows only its
    // own processes), served by a user plugin.
    let plugin = sandbox.user_plugins().join("pyplug");
    rho_e2e::make_plugin(&plugin, "pyplug");
    let script = plugin.join("server.py");
    std::fs::copy(
        rho_e2e::repo_root().join("tests/peers/modern_server.py"),
        &script,
    )
    .unwrap();
    let mcp = |extra: &str| {
        rho_e2e::make_mcp(
            &plugin,
            &format!(
                r#"{{"modern": {{"type": "stdio", "command": "python3", "args": ["${{PLUGIN_ROOT}}/server.py", "stdio"{extra}]}}}}"#
            ),
        );
    };
    mcp("");
    sandbox.write_config(
        "[agent]\npermission_mode = \"allow-all\"\n\n[mcp.plugin_servers.\"pyplug/modern\"]\nstartup = \"lazy\"\n",
    );
    let add = rho_component::naming::ExportedNames::default().assign("pyplug/modern", "add");
    let model = rho_e2e::FakeModel::start(
        env!("CARGO_BIN_EXE_fake-model"),
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [{"name": add, "arguments": {"a": 2, "b": 3}}]},
            {"content": "five", "expect": {"last_message_contains": "5"}}
        ]),
    );
    // First session: nothing cached; the server starts in the background.
    let mut rpc = rho_e2e::Rpc::start(&sandbox, &model, &["--ephemeral"]);
    wait_for_status(&mut rpc, "started", 1);
    assert_eq!(rpc.finish(), 0);
    let script_path = script.display().to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    while running_with(&script_path) {
        assert!(
            Instant::now() < deadline,
            "the first session's server still runs"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // Second session: known from the cache, nothing runs until the call.
    let mut rpc = rho_e2e::Rpc::start(&sandbox, &model, &["--ephemeral"]);
    let extensions = rpc.call(1, "listExtensions", json!({}));
    let server = &extensions["servers"][0];
    assert_eq!(server["status"], "known", "{server:#}");
    assert!(
        server["tools"].as_array().unwrap().contains(&json!(add)),
        "{server:#}"
    );
    assert_eq!(server["protocolVersion"], "2026-07-28", "{server:#}");
    assert!(
        !running_with(&script_path),
        "the server runs before any call"
    );
    rpc.request(2, "prompt", json!({"message": "2 + 3?"}));
    let (_, response) = rpc.response(2);
    assert_eq!(response["result"]["reply"], "five", "{response}");
    let extensions = rpc.call(3, "listExtensions", json!({}));
    assert_eq!(extensions["servers"][0]["status"], "used");
    assert_eq!(rpc.finish(), 0);

    // The plugin changes (its mcp.json): the entry no longer applies.
    mcp(r#", "--quiet""#);
    let mut rpc = rho_e2e::Rpc::start(&sandbox, &model, &["--ephemeral"]);
    let extensions = rpc.call(1, "listExtensions", json!({}));
    let status = extensions["servers"][0]["status"].clone();
    assert!(
        status == "configured" || status == "started",
        "a changed plugin's server is not known from the old entry: {status}"
    );
    assert_eq!(rpc.finish(), 0);
}

/// Whether a process whose command line holds `needle` runs.
fn running_with(needle: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .map(|cmdline| String::from_utf8_lossy(&cmdline).contains(needle))
            .unwrap_or(false)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_server_of_40_tools_is_known_with_all_of_them() {
    let sandbox = Sandbox::new();
    let pids = sandbox.outside("records").join("pids");
    sandbox.write_config(&config(
        &pids,
        "many-tools",
        "lazy",
        ", \"--count\", \"40\"",
    ));
    let set = mount(&sandbox).await;
    wait_for("the background start filled the cache", || {
        !cache_entries(&sandbox).is_empty()
    })
    .await;
    set.close().await;
    let set = mount(&sandbox).await;
    assert_eq!(set.servers[0].status(), ServerStatus::Known);
    assert_eq!(set.servers[0].tools().len(), 40);
    assert_eq!(starts(&pids), 1, "known without a start");
    let last = set.servers[0].tools()[39].name.clone();
    let output = call(&set, &last, &sandbox).await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(starts(&pids), 2);
    set.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_start_remembers_what_its_handshake_said_at_once() {
    let sandbox = Sandbox::new();
    let pids = sandbox.outside("records").join("pids");
    sandbox.write_config(&config(&pids, "ok", "lazy", ""));
    // The first session fills the cache in the background.
    let set = mount(&sandbox).await;
    wait_for("the background start filled the cache", || {
        !cache_entries(&sandbox).is_empty()
    })
    .await;
    set.close().await;
    // The entry says the server spoke 2026-07-28 (it speaks 2025-11-25).
    let [entry] = cache_entries(&sandbox).try_into().unwrap();
    let text = std::fs::read_to_string(&entry).unwrap();
    assert!(text.contains("\"2025-11-25\""), "{text}");
    std::fs::write(&entry, text.replace("\"2025-11-25\"", "\"2026-07-28\"")).unwrap();

    let set = mount(&sandbox).await;
    assert_eq!(set.servers[0].status(), ServerStatus::Known);
    let echo = exported(&set, "echo");
    let before = starts(&pids);
    let output = call(&set, &echo, &sandbox).await;
    assert!(!output.is_error, "{}", output.text);
    // Refused in the remembered era, started once more and probed.
    assert_eq!(starts(&pids), before + 2);
    // No turn boundary comes, yet the entry already says what the handshake said.
    wait_for("the entry remembers the era the server spoke", || {
        std::fs::read_to_string(&entry).is_ok_and(|t| t.contains("\"2025-11-25\""))
    })
    .await;
    set.close().await;
}
