//! The MCP tool cache against a real server: what a live connection offered is stored under
//! the key of its `config.toml` entry and read back whole by a later registry, without the
//! literal secrets of the entry ever reaching the file.

use rho_core::{CacheKey, CachedCatalog, ToolCache};
use rho_e2e::Sandbox;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp");
const CANARY: &str = "canary-env-secret-3b9f";

/// The registry of `sandbox` as a session would load it.
fn load(sandbox: &Sandbox) -> rho_core::Registry {
    let env = rho_core::PathsEnv {
        home: Some(sandbox.home.clone().into()),
        rho_home: Some(sandbox.rho_home.clone().into()),
    };
    let paths = rho_core::RhoPaths::resolve(&env, &sandbox.project).unwrap();
    let config = rho_core::ConfigSource::Default(sandbox.rho_home.join("config.toml"));
    rho_core::Registry::load(paths, &config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_connection_offered_round_trips_through_the_tool_cache() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[mcp.servers.fake]\ncommand = \"{FAKE}\"\nargs = [\"--mode\", \"many-offers\", \"--count\", \"3\"]\n\
         startup = \"lazy\"\nenv = {{ API_KEY = \"{CANARY}\" }}\n"
    ));
    let registry = load(&sandbox);
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
    let later = load(&sandbox);
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
    let edited = load(&sandbox);
    let edited_key = CacheKey::of(&edited.servers[0], &edited.plugins).unwrap();
    assert_ne!(edited_key, key);
    assert_eq!(ToolCache::new(dir).load(&edited_key), None);
}
