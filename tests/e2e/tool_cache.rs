//! The MCP tool cache against a real server: what a live connection offered is stored under
//! the key of its `config.toml` entry and read back whole by a later registry, without the
//! literal secrets of the entry ever reaching the file.

use rho_core::{CacheKey, CachedCatalog, ToolCache};
use rho_e2e::Sandbox;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp");
const CANARY: &str = "canary-env-secret-3b9f";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_connection_offered_round_trips_through_the_tool_cache() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[mcp.servers.fake]\ncommand = \"{FAKE}\"\nargs = [\"--mode\", \"many-offers\", \"--count\", \"3\"]\n\
         startup = \"lazy\"\nenv = {{ API_KEY = \"{CANARY}\" }}\n"
    ));
    let registry = sandbox.registry();
    let slot = &registry.servers[0];
    let spec = slot.startable().expect("the entry is valid");
    assert_eq!(spec.startup, rho_component::Startup::Lazy);
    let connection = rho_mcp::connect(spec, &rho_mcp::process_ambient)
        .await
        .unwrap();
    let catalog = CachedCatalog::of(&connection);
    let names = |tools: &[rho_mcp::ServerTool]| -> Vec<String> {
        tools.iter().map(|t| t.name.clone()).collect()
    };
    assert!(!catalog.tools.is_empty());
    assert_eq!(names(&catalog.tools), names(&connection.tools));
    assert_eq!(catalog.prompts, connection.prompts());
    assert_eq!(catalog.prompts.len(), 3);
    assert_eq!(catalog.resources.len(), 6, "3 resources and 3 templates");
    assert_eq!(
        catalog.protocol_version,
        connection.summary.protocol_version
    );
    assert_eq!(
        catalog.instructions.as_deref(),
        Some("fake server for rho tests")
    );
    assert!(catalog.server_info.is_some());
    connection.close().await;

    let dir = registry.paths.mcp_cache_dir();
    assert_eq!(dir, sandbox.rho_home.join("cache").join("mcp"));
    let key = CacheKey::of(slot, &registry.plugins).unwrap();
    ToolCache::new(dir.clone()).store(&key, &catalog);

    // The next session start: a registry loaded afresh finds the entry by the same key.
    let later = sandbox.registry();
    let later_key = CacheKey::of(&later.servers[0], &later.plugins).unwrap();
    assert_eq!(later_key, key);
    assert_eq!(ToolCache::new(dir.clone()).load(&later_key), Some(catalog));

    let file = std::fs::read(dir.join(format!("{key}.json"))).unwrap();
    assert!(!String::from_utf8_lossy(&file).contains(CANARY));

    // An edited entry is another key: the old catalog is not offered for it.
    sandbox.write_config(&format!(
        "[mcp.servers.fake]\ncommand = \"{FAKE}\"\nargs = [\"--mode\", \"many-offers\", \"--count\", \"4\"]\n\
         startup = \"lazy\"\nenv = {{ API_KEY = \"{CANARY}\" }}\n"
    ));
    let edited = sandbox.registry();
    let edited_key = CacheKey::of(&edited.servers[0], &edited.plugins).unwrap();
    assert_ne!(edited_key, key);
    assert_eq!(ToolCache::new(dir).load(&edited_key), None);
}

/// `rho mcp list --connect` starts servers through the registry's probe, the path a session's
/// mount takes: a lazy server it started is `known` to the next session, from the entry the
/// probe wrote to the tool cache, under the exported names the listing showed, without a
/// process. (The CLI's own connect pass wrote no cache: the session found it `configured`.)
/// A sandbox whose one server, `fake` (fake-mcp `ok`, recording its starts in the returned
/// file), starts lazily.
fn lazy_fake() -> (Sandbox, std::path::PathBuf) {
    let sandbox = Sandbox::new();
    let pids = sandbox.outside("records").join("pids");
    sandbox.write_config(&format!(
        "[mcp.servers.fake]\ncommand = \"{FAKE}\"\nargs = [\"--mode\", \"ok\", \"--pid-file\", {pids:?}]\n\
         startup = \"lazy\"\n",
        pids = pids.display().to_string()
    ));
    (sandbox, pids)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_fills_the_tool_cache_a_lazy_session_then_mounts() {
    let (sandbox, pids) = lazy_fake();
    let starts = || {
        std::fs::read_to_string(&pids)
            .map(|text| text.lines().count())
            .unwrap_or(0)
    };
    // Nothing cached yet: the plain listing says configured.
    let plain = sandbox.rho(&["mcp", "list", "--json"]).ok().json();
    assert_eq!(rho_e2e::mcp_server(&plain, "fake")["status"], "configured");
    let list = sandbox
        .rho(&["mcp", "list", "--connect", "--json"])
        .ok()
        .json();
    let listed = rho_e2e::mcp_server(&list, "fake");
    assert_eq!(
        listed["status"], "started",
        "a probe starts lazy servers too"
    );
    assert_eq!(starts(), 1);
    // Now the plain listing (which starts nothing) says what a session would find: known.
    let plain = sandbox.rho(&["mcp", "list", "--json"]).ok().json();
    assert_eq!(rho_e2e::mcp_server(&plain, "fake")["status"], "known");
    assert_eq!(starts(), 1);
    let echo = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo")
        .unwrap_or_else(|| panic!("no echo in {listed:#}"))["exported_name"]
        .clone();

    let set = sandbox
        .registry()
        .mount(&rho_core::MountOptions::default())
        .await;
    let server = &set.servers[0];
    assert_eq!(server.status(), rho_core::ServerStatus::Known);
    let mounted = server
        .tools()
        .into_iter()
        .find(|t| t.tool == "echo")
        .unwrap();
    assert_eq!(echo, mounted.name, "the listing showed the session's name");
    assert!(set.get(&mounted.name).is_some());
    assert_eq!(starts(), 1, "mounting the known server spawned nothing");
    set.close().await;
}

#[test]
fn a_direct_call_names_tools_as_a_session_and_fills_the_tool_cache() {
    let (sandbox, _pids) = lazy_fake();
    // By its own name and by the exported name a session gives it.
    for name in ["echo", "mcp__fake__echo"] {
        let called = sandbox
            .rho(&["mcp", "call", "fake", name, r#"{"n":1}"#, "--json"])
            .ok()
            .json();
        assert_eq!(called["tool"], "echo", "{called:#}");
        assert_eq!(called["is_error"], false, "{called:#}");
        assert!(
            called["text"].as_str().unwrap().starts_with("called echo"),
            "{called:#}"
        );
    }
    // The call started the lazy server like any start, so a session now knows it.
    let plain = sandbox.rho(&["mcp", "list", "--json"]).ok().json();
    assert_eq!(rho_e2e::mcp_server(&plain, "fake")["status"], "known");
    // A tool the server does not offer, and a server that does not exist, fail on stderr.
    let missing = sandbox.rho(&["mcp", "call", "fake", "nope"]).code(1);
    assert!(
        missing.stderr.contains("has no tool \"nope\""),
        "{}",
        missing.stderr
    );
    let unknown = sandbox.rho(&["mcp", "call", "ghost", "echo"]).code(1);
    assert!(
        unknown.stderr.contains("no MCP server \"ghost\""),
        "{}",
        unknown.stderr
    );
    assert!(unknown.stdout.is_empty());
}
