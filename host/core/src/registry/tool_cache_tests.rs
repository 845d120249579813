//! Tests of the tool cache: the key, the file and its bounds, on real files.

use std::os::unix::fs::PermissionsExt as _;
use std::time::{Duration, SystemTime};

use rho_component::{
    HttpServerSpec, McpServerOrigin, McpServerSpec, McpTransport, OAuthSpec, Scope, StdioCommand,
    StdioServerSpec, ToolFilter,
};
use rho_plugins::{ActivationState, PluginRoot};
use serde_json::json;

use super::*;
use crate::registry::{ServerSource, SlotState};

fn slot(spec: McpServerSpec) -> ServerSlot {
    ServerSlot {
        id: spec.id.clone(),
        source: ServerSource::Config,
        plugin: None,
        spec: Some(spec),
        state: SlotState::Configured,
        defined_in: None,
    }
}

fn no_ambient(_: &str) -> Option<OsString> {
    None
}

fn key_with(spec: &McpServerSpec, ambient: &dyn Fn(&str) -> Option<OsString>) -> CacheKey {
    CacheKeys::new(&PluginInventory::default(), ambient)
        .key(&slot(spec.clone()))
        .unwrap()
}

fn key(spec: &McpServerSpec) -> CacheKey {
    key_with(spec, &no_ambient)
}

/// An executable file at `path`.
fn executable(path: &Path) {
    fs::write(path, "#!/bin/sh\n").unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A stdio server running `<dir>/srv` with an argument, a literal variable, a variable from
/// the environment and a working directory.
fn stdio_spec(dir: &Path) -> McpServerSpec {
    let command = dir.join("srv");
    if !command.exists() {
        executable(&command);
    }
    McpServerSpec::new(
        "local",
        McpServerOrigin::Config,
        McpTransport::Stdio(StdioServerSpec {
            command: StdioCommand::Path(command),
            args: vec!["--port".into(), "1".into()],
            env: vec![("MODE".into(), "a".into())],
            env_from_env: vec![("TOKEN".into(), "SOURCE".into())],
            cwd: Some(dir.to_path_buf()),
        }),
    )
}

fn http_spec() -> McpServerSpec {
    McpServerSpec::new(
        "remote",
        McpServerOrigin::Config,
        McpTransport::StreamableHttp(HttpServerSpec {
            url: "https://mcp.example.com/mcp".into(),
            headers: vec![("X-Tenant".into(), "one".into())],
            headers_from_env: vec![("Authorization".into(), "MCP_AUTH".into())],
        }),
    )
}

fn stdio_mut(spec: &mut McpServerSpec) -> &mut StdioServerSpec {
    match &mut spec.transport {
        McpTransport::Stdio(stdio) => stdio,
        McpTransport::StreamableHttp(_) => panic!("a stdio spec"),
    }
}

fn http_mut(spec: &mut McpServerSpec) -> &mut HttpServerSpec {
    match &mut spec.transport {
        McpTransport::StreamableHttp(http) => http,
        McpTransport::Stdio(_) => panic!("an HTTP spec"),
    }
}

fn catalog(tools: usize) -> CachedCatalog {
    CachedCatalog {
        tools: (0..tools)
            .map(|i| rho_mcp::ServerTool {
                name: format!("tool-{i}"),
                definition: json!({
                    "name": format!("tool-{i}"),
                    "description": "does a thing",
                    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
                }),
                // One tool that runs only as an MCP task: the flag survives the round trip.
                needs_tasks: i == 1,
            })
            .collect(),
        tools_left_out: 2,
        prompts: vec![ServerPrompt {
            name: "review".into(),
            title: Some("Review".into()),
            description: None,
            arguments: vec![rho_component::PromptArgument {
                name: "file".into(),
                title: None,
                description: Some("which file".into()),
                required: true,
            }],
        }],
        resources: vec![ServerResource {
            uri: "file:///{path}".into(),
            name: "files".into(),
            title: None,
            description: None,
            mime_type: Some("text/plain".into()),
            template: true,
        }],
        protocol_version: "2025-11-25".into(),
        server_info: Some(json!({"name": "fake", "version": "1.0"})),
        instructions: Some("use tool-0 first".into()),
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn an_entry_round_trips_owner_only_and_leaves_no_temporary_file() {
    let home = tempfile::tempdir().unwrap();
    let server = tempfile::tempdir().unwrap();
    let dir = home.path().join("cache").join("mcp");
    let cache = ToolCache::new(dir.clone());
    let key = key(&stdio_spec(server.path()));
    assert_eq!(cache.load(&key), None, "nothing stored yet");
    assert!(!dir.exists(), "a load creates nothing");

    let stored = catalog(3);
    cache.store(&key, &stored);
    assert_eq!(cache.load(&key), Some(stored.clone()));
    assert_eq!(
        names(&dir),
        [format!("{key}.json")],
        "no temporary file left"
    );
    assert_eq!(mode(&dir), 0o700);
    let file = dir.join(format!("{key}.json"));
    assert_eq!(mode(&file), 0o600);
    let written: serde_json::Value = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
    assert_eq!(written["format"], TOOL_CACHE_FORMAT);
    assert_eq!(written["key"], key.as_str());
    assert_eq!(written["server"], "local");
    assert_eq!(written["rho_version"], env!("CARGO_PKG_VERSION"));
    let written_at = written["written_at"].as_str().unwrap();
    assert!(
        written_at.len() == 20 && written_at.ends_with('Z'),
        "{written_at}"
    );

    // Storing again replaces the entry whole.
    let smaller = catalog(1);
    cache.store(&key, &smaller);
    assert_eq!(cache.load(&key), Some(smaller));
    assert_eq!(names(&dir).len(), 1);
}

#[test]
fn an_entry_written_before_tools_could_need_tasks_still_loads() {
    let home = tempfile::tempdir().unwrap();
    let server = tempfile::tempdir().unwrap();
    let cache = ToolCache::new(home.path().join("mcp"));
    let key = key(&stdio_spec(server.path()));
    let stored = catalog(3);
    cache.store(&key, &stored);
    let path = cache.path_for(&key);
    let mut written: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let tools = written["catalog"]["tools"].as_array_mut().unwrap();
    assert_eq!(tools[1]["needs_tasks"], true, "written only where true");
    assert!(tools[0].get("needs_tasks").is_none(), "{tools:?}");
    tools[1].as_object_mut().unwrap().remove("needs_tasks");
    plant(&cache, &key, &serde_json::to_vec(&written).unwrap());

    let loaded = cache.load(&key).unwrap();
    assert!(
        loaded.tools.iter().all(|t| !t.needs_tasks),
        "absent means not required"
    );
}

#[test]
fn the_key_is_hex_and_stable_for_the_same_configuration() {
    let server = tempfile::tempdir().unwrap();
    let spec = stdio_spec(server.path());
    let first = key(&spec);
    assert_eq!(first, key(&spec));
    assert_eq!(first.as_str().len(), 64);
    assert!(first.as_str().bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(first.to_string(), first.as_str());
    assert_eq!(first.server(), "local");
    // The ambient value of an env_from_env variable is never read: it cannot change the key.
    let secret = |name: &str| (name == "SOURCE").then(|| OsString::from("one secret"));
    let other = |name: &str| (name == "SOURCE").then(|| OsString::from("another secret"));
    assert_eq!(key_with(&spec, &secret), key_with(&spec, &other));
    assert_eq!(key_with(&spec, &secret), first);
    // No spec, no key.
    let mut invalid = slot(spec);
    invalid.spec = None;
    assert_eq!(
        CacheKey::of(&invalid, &PluginInventory::default()),
        None,
        "an invalid entry has no key"
    );
}

#[test]
fn every_input_of_a_config_servers_fingerprint_changes_the_key() {
    let server = tempfile::tempdir().unwrap();
    let base = stdio_spec(server.path());
    let base_key = key(&base);
    let other_command = server.path().join("other");
    executable(&other_command);
    let other_cwd = tempfile::tempdir().unwrap();
    type Change = Box<dyn Fn(&mut McpServerSpec)>;
    let changes: Vec<(&str, Change)> = vec![
        (
            "command",
            Box::new(move |s| stdio_mut(s).command = StdioCommand::Path(other_command.clone())),
        ),
        ("args", Box::new(|s| stdio_mut(s).args.push("-v".into()))),
        (
            "an env value",
            Box::new(|s| stdio_mut(s).env[0].1 = "b".into()),
        ),
        (
            "an env name",
            Box::new(|s| stdio_mut(s).env[0].0 = "LEVEL".into()),
        ),
        (
            "an env_from_env name",
            Box::new(|s| stdio_mut(s).env_from_env[0].0 = "API_TOKEN".into()),
        ),
        (
            "an env_from_env source",
            Box::new(|s| stdio_mut(s).env_from_env[0].1 = "OTHER".into()),
        ),
        (
            "cwd",
            Box::new(move |s| stdio_mut(s).cwd = Some(other_cwd.path().to_path_buf())),
        ),
        ("no cwd", Box::new(|s| stdio_mut(s).cwd = None)),
        ("identity", Box::new(|s| s.id = "renamed".into())),
        (
            "an allow filter",
            Box::new(|s| {
                s.tools = ToolFilter {
                    allow: Some(vec!["tool-0".into()]),
                    deny: vec![],
                }
            }),
        ),
        (
            "an empty allow filter",
            Box::new(|s| {
                s.tools = ToolFilter {
                    allow: Some(vec![]),
                    deny: vec![],
                }
            }),
        ),
        (
            "a deny filter",
            Box::new(|s| s.tools.deny.push("tool-1".into())),
        ),
        (
            "protocol_version",
            Box::new(|s| s.protocol_version = Some("2026-07-28".into())),
        ),
        ("sampling", Box::new(|s| s.sampling = SamplingPolicy::Ask)),
    ];
    let mut seen = std::collections::HashSet::from([base_key.clone()]);
    for (what, change) in &changes {
        let mut spec = base.clone();
        change(&mut spec);
        let changed = key(&spec);
        assert_ne!(changed, base_key, "{what} must change the key");
        assert!(seen.insert(changed), "{what} collides with another change");
    }

    // Rebuilding the executable in place changes the key (its stat, not its bytes).
    let before = key(&base);
    let file = fs::File::options()
        .write(true)
        .open(server.path().join("srv"))
        .unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    assert_ne!(
        key(&base),
        before,
        "the executable's mtime must change the key"
    );
}

#[test]
fn a_bare_command_is_fingerprinted_where_path_finds_it() {
    let bins = tempfile::tempdir().unwrap();
    let (first, second) = (bins.path().join("a"), bins.path().join("b"));
    fs::create_dir_all(&first).unwrap();
    fs::create_dir_all(&second).unwrap();
    executable(&first.join("srv"));
    executable(&second.join("srv"));
    let mut spec = stdio_spec(bins.path());
    stdio_mut(&mut spec).command = StdioCommand::Bare("srv".into());
    let path = |dir: &Path| {
        let dir = dir.to_path_buf();
        move |name: &str| (name == "PATH").then(|| dir.clone().into_os_string())
    };
    let in_first = key_with(&spec, &path(&first));
    assert_eq!(in_first, key_with(&spec, &path(&first)));
    assert_ne!(in_first, key_with(&spec, &path(&second)));
    // A literal PATH in the server's env is the one its start searches.
    stdio_mut(&mut spec)
        .env
        .push(("PATH".into(), second.to_string_lossy().into_owned()));
    assert_eq!(
        key_with(&spec, &path(&first)),
        key_with(&spec, &path(&second))
    );
}

#[test]
fn keys_computed_in_one_batch_are_the_keys_computed_alone() {
    let bins = tempfile::tempdir().unwrap();
    let (first, second) = (bins.path().join("a"), bins.path().join("b"));
    fs::create_dir_all(&first).unwrap();
    fs::create_dir_all(&second).unwrap();
    executable(&first.join("srv"));
    executable(&second.join("srv"));
    let search = std::env::join_paths([&first, &second]).unwrap();
    let ambient = move |name: &str| (name == "PATH").then(|| search.clone());
    // Servers that share an executable, one found on PATH, one with its own PATH, another
    // with other arguments: a batch remembers what it stat'ed and found, never across them.
    let mut shared = stdio_spec(bins.path());
    shared.id = "shared".into();
    let mut other_args = shared.clone();
    other_args.id = "other-args".into();
    stdio_mut(&mut other_args).args = vec!["--port".into(), "2".into()];
    let mut bare = stdio_spec(bins.path());
    bare.id = "bare".into();
    stdio_mut(&mut bare).command = StdioCommand::Bare("srv".into());
    let mut own_path = bare.clone();
    own_path.id = "own-path".into();
    stdio_mut(&mut own_path)
        .env
        .push(("PATH".into(), second.to_string_lossy().into_owned()));
    let specs = [shared, other_args, bare.clone(), own_path, bare];
    let inventory = PluginInventory::default();
    let mut batch = CacheKeys::new(&inventory, &ambient);
    let batched: Vec<CacheKey> = specs
        .iter()
        .map(|spec| batch.key(&slot(spec.clone())).unwrap())
        .collect();
    let alone: Vec<CacheKey> = specs.iter().map(|spec| key_with(spec, &ambient)).collect();
    assert_eq!(batched, alone);
    assert_eq!(batched[2], batched[4]);
}

#[test]
fn every_input_of_an_http_servers_fingerprint_changes_the_key() {
    let base = http_spec();
    let base_key = key(&base);
    type Change = Box<dyn Fn(&mut McpServerSpec)>;
    let changes: Vec<(&str, Change)> = vec![
        (
            "url",
            Box::new(|s| http_mut(s).url = "https://mcp.example.com/other".into()),
        ),
        (
            "a header name",
            Box::new(|s| http_mut(s).headers[0].0 = "X-Team".into()),
        ),
        (
            "a header value",
            Box::new(|s| http_mut(s).headers[0].1 = "two".into()),
        ),
        (
            "a headers_from_env name",
            Box::new(|s| http_mut(s).headers_from_env[0].0 = "X-Api-Key".into()),
        ),
        (
            "oauth",
            Box::new(|s| {
                s.oauth = Some(OAuthSpec {
                    scopes: vec!["read".into()],
                    ..OAuthSpec::default()
                })
            }),
        ),
        ("a deny filter", Box::new(|s| s.tools.deny.push("x".into()))),
    ];
    for (what, change) in &changes {
        let mut spec = base.clone();
        change(&mut spec);
        assert_ne!(key(&spec), base_key, "{what} must change the key");
    }
    let mut stdio = stdio_spec(tempfile::tempdir().unwrap().path());
    stdio.id = "remote".into();
    assert_ne!(key(&stdio), base_key, "the transport is part of the key");
}

/// A plugin `p` (version `version`) in `root`, whose server `s` runs `./bin/srv`.
fn write_plugin(root: &Path, version: &str, mcp_padding: &str) {
    let dir = root.join("p");
    fs::create_dir_all(dir.join("bin")).unwrap();
    fs::write(
        dir.join("plugin.json"),
        format!(
            r#"{{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "p", "version": "{version}"}}"#
        ),
    )
    .unwrap();
    fs::write(
        dir.join("mcp.json"),
        format!(
            r#"{{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json",{mcp_padding} "mcpServers": {{"s": {{"type": "stdio", "command": "./bin/srv"}}}}}}"#
        ),
    )
    .unwrap();
    let srv = dir.join("bin").join("srv");
    if !srv.exists() {
        executable(&srv);
    }
}

/// The inventory of `root` and the slot of `p/s` in it.
fn plugin_slot(root: &Path) -> (PluginInventory, ServerSlot) {
    let inventory = rho_plugins::discover(&[PluginRoot {
        path: root.to_path_buf(),
        scope: Scope::User,
        state: ActivationState::default(),
    }]);
    let slots = crate::registry::collect_servers(
        &rho_config::RhoConfig::default(),
        &inventory,
        &rho_plugins::TrustStore::default(),
    );
    let slot = slots
        .into_iter()
        .find(|s| s.id == "p/s")
        .unwrap_or_else(|| panic!("p/s is collected: {:?}", inventory.plugins));
    assert!(slot.startable().is_some(), "{slot:?}");
    (inventory, slot)
}

fn plugin_key(root: &Path) -> CacheKey {
    let (inventory, slot) = plugin_slot(root);
    CacheKeys::new(&inventory, &no_ambient).key(&slot).unwrap()
}

#[test]
fn a_plugin_servers_key_follows_its_package() {
    let root = tempfile::tempdir().unwrap();
    write_plugin(root.path(), "1.0.0", "");
    let first = plugin_key(root.path());
    assert_eq!(plugin_key(root.path()), first, "stable across loads");

    write_plugin(root.path(), "1.0.1", "");
    let new_version = plugin_key(root.path());
    assert_ne!(new_version, first, "the plugin's version");

    write_plugin(root.path(), "1.0.1", " ");
    let new_mcp = plugin_key(root.path());
    assert_ne!(new_mcp, new_version, "the bytes of mcp.json");

    let srv = fs::File::options()
        .write(true)
        .open(root.path().join("p").join("bin").join("srv"))
        .unwrap();
    srv.set_modified(SystemTime::now() - Duration::from_secs(7200))
        .unwrap();
    assert_ne!(
        plugin_key(root.path()),
        new_mcp,
        "the mtime of the executable in the package"
    );

    // The same slot against an inventory that lacks its plugin is another key.
    let (inventory, slot) = plugin_slot(root.path());
    let with = CacheKeys::new(&inventory, &no_ambient).key(&slot).unwrap();
    let without = CacheKeys::new(&PluginInventory::default(), &no_ambient)
        .key(&slot)
        .unwrap();
    assert_ne!(with, without);
}

#[test]
fn a_script_the_package_ships_is_part_of_the_key() {
    let root = tempfile::tempdir().unwrap();
    write_plugin(root.path(), "1.0.0", "");
    let (inventory, mut slot) = plugin_slot(root.path());
    let script = root.path().join("p").join("server.js");
    fs::write(&script, "// v1").unwrap();
    if let Some(spec) = &mut slot.spec {
        stdio_mut(spec).args = vec![script.to_string_lossy().into_owned()];
    }
    let before = CacheKeys::new(&inventory, &no_ambient).key(&slot).unwrap();
    fs::write(&script, "// version 2").unwrap();
    let after = CacheKeys::new(&inventory, &no_ambient).key(&slot).unwrap();
    assert_ne!(before, after);
}

/// Writes `bytes` where `key`'s entry lives.
fn plant(cache: &ToolCache, key: &CacheKey, bytes: &[u8]) -> PathBuf {
    fs::create_dir_all(cache.dir()).unwrap();
    fs::set_permissions(cache.dir(), fs::Permissions::from_mode(0o700)).unwrap();
    let path = cache.path_for(key);
    let _ = fs::remove_file(&path);
    fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn damaged_foreign_and_odd_entries_are_ignored_and_rebuilt() {
    let home = tempfile::tempdir().unwrap();
    let cache = ToolCache::new(home.path().join("mcp"));
    let server = tempfile::tempdir().unwrap();
    let key = key(&stdio_spec(server.path()));
    let other = key_with(&http_spec(), &no_ambient);
    let stored = catalog(2);
    cache.store(&key, &stored);
    let good = fs::read(cache.path_for(&key)).unwrap();
    cache.store(&other, &stored);
    let others = fs::read(cache.path_for(&other)).unwrap();

    let mut foreign: serde_json::Value = serde_json::from_slice(&good).unwrap();
    foreign["format"] = json!(TOOL_CACHE_FORMAT + 1);
    let foreign = serde_json::to_vec(&foreign).unwrap();
    let mut extra: serde_json::Value = serde_json::from_slice(&good).unwrap();
    extra["catalog"]["surprise"] = json!(1);
    let extra = serde_json::to_vec(&extra).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("corrupt", b"{not json".to_vec()),
        ("empty", Vec::new()),
        ("truncated", good[..good.len() / 2].to_vec()),
        ("another format", foreign),
        ("another key inside", others),
        ("an unknown field", extra),
    ];
    for (what, bytes) in cases {
        plant(&cache, &key, &bytes);
        assert_eq!(cache.load(&key), None, "{what} is ignored");
        cache.store(&key, &stored);
        assert_eq!(cache.load(&key), Some(stored.clone()), "{what} is rebuilt");
    }

    // Larger than the cap: refused by its length, before a byte is read.
    let path = plant(&cache, &key, b"");
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(MAX_TOOL_CACHE_FILE_BYTES + 1)
        .unwrap();
    assert_eq!(cache.load(&key), None, "oversized is ignored");
    cache.store(&key, &stored);
    assert_eq!(
        cache.load(&key),
        Some(stored.clone()),
        "oversized is rebuilt"
    );

    // A FIFO: never opened for a blocking read.
    let path = cache.path_for(&key);
    fs::remove_file(&path).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap();
    assert!(made.success());
    let (tx, rx) = std::sync::mpsc::channel();
    let (fifo_cache, fifo_key) = (cache.clone(), key.clone());
    std::thread::spawn(move || {
        let _ = tx.send(fifo_cache.load(&fifo_key));
    });
    let loaded = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("a FIFO entry does not block the load");
    assert_eq!(loaded, None, "a FIFO is ignored");
    cache.store(&key, &stored);
    assert_eq!(cache.load(&key), Some(stored), "a FIFO is rebuilt");
    assert!(fs::symlink_metadata(&path).unwrap().is_file());
}

#[test]
fn a_link_at_an_entry_is_neither_read_nor_written_through() {
    let home = tempfile::tempdir().unwrap();
    let cache = ToolCache::new(home.path().join("mcp"));
    let server = tempfile::tempdir().unwrap();
    let key = key(&stdio_spec(server.path()));
    let stored = catalog(1);
    cache.store(&key, &stored);
    let elsewhere = home.path().join("elsewhere.json");
    fs::rename(cache.path_for(&key), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, cache.path_for(&key)).unwrap();
    assert_eq!(cache.load(&key), None, "a link is not followed");
    let before = fs::read(&elsewhere).unwrap();
    cache.store(&key, &catalog(4));
    assert_eq!(
        fs::read(&elsewhere).unwrap(),
        before,
        "nothing written through"
    );
    assert!(
        fs::symlink_metadata(cache.path_for(&key))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link is left for the user to look at"
    );
}

#[test]
fn a_directory_others_may_write_to_is_not_trusted() {
    let home = tempfile::tempdir().unwrap();
    let cache = ToolCache::new(home.path().join("mcp"));
    let server = tempfile::tempdir().unwrap();
    let key = key(&stdio_spec(server.path()));
    cache.store(&key, &catalog(1));
    fs::set_permissions(cache.dir(), fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(cache.load(&key), None);
    fs::set_permissions(cache.dir(), fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(cache.load(&key), Some(catalog(1)));
}

#[test]
fn a_catalog_over_the_cap_is_not_stored() {
    let home = tempfile::tempdir().unwrap();
    let cache = ToolCache {
        max_file_bytes: 4096,
        ..ToolCache::new(home.path().join("mcp"))
    };
    let server = tempfile::tempdir().unwrap();
    let key = key(&stdio_spec(server.path()));
    cache.store(&key, &catalog(100));
    assert!(!cache.path_for(&key).exists());
    cache.store(&key, &catalog(1));
    assert_eq!(cache.load(&key), Some(catalog(1)), "a small one is");
}

#[test]
fn past_the_cap_the_least_recently_written_entries_go() {
    let home = tempfile::tempdir().unwrap();
    let cache = ToolCache {
        max_files: 3,
        ..ToolCache::new(home.path().join("mcp"))
    };
    let keys: Vec<CacheKey> = (0..4)
        .map(|i| {
            let mut spec = http_spec();
            spec.id = format!("remote-{i}");
            key(&spec)
        })
        .collect();
    let now = SystemTime::now();
    for (age, key) in [(300, &keys[0]), (100, &keys[1]), (200, &keys[2])] {
        cache.store(key, &catalog(1));
        fs::File::options()
            .write(true)
            .open(cache.path_for(key))
            .unwrap()
            .set_modified(now - Duration::from_secs(age))
            .unwrap();
    }
    let stale_tmp = cache.dir().join(".tmp-1-1");
    fs::write(&stale_tmp, "left by a crash").unwrap();
    fs::File::options()
        .write(true)
        .open(&stale_tmp)
        .unwrap()
        .set_modified(now - Duration::from_secs(2 * 3600))
        .unwrap();
    let fresh_tmp = cache.dir().join(".tmp-2-1");
    fs::write(&fresh_tmp, "being written").unwrap();
    assert_eq!(names(cache.dir()).len(), 5);

    cache.store(&keys[3], &catalog(1));
    assert_eq!(
        cache.load(&keys[0]),
        None,
        "the least recently written went"
    );
    for key in &keys[1..] {
        assert_eq!(cache.load(key), Some(catalog(1)), "{key} stays");
    }
    assert!(!stale_tmp.exists(), "a crashed writer's leftover goes");
    assert!(fresh_tmp.exists(), "a write in progress stays");
}

#[test]
fn no_secret_reaches_a_cache_file() {
    const LITERAL_ENV: &str = "canary-literal-env-7f3a";
    const LITERAL_HEADER: &str = "Bearer canary-literal-header-91c2";
    const AMBIENT: &str = "canary-ambient-value-5d0e";
    let home = tempfile::tempdir().unwrap();
    let cache = ToolCache::new(home.path().join("mcp"));
    let server = tempfile::tempdir().unwrap();
    let ambient = |_: &str| Some(OsString::from(AMBIENT));

    let mut stdio = stdio_spec(server.path());
    stdio_mut(&mut stdio).env = vec![("API_KEY".into(), LITERAL_ENV.into())];
    stdio_mut(&mut stdio).env_from_env = vec![("TOKEN".into(), "GITHUB_TOKEN".into())];
    let mut http = http_spec();
    http_mut(&mut http).headers = vec![("Authorization".into(), LITERAL_HEADER.into())];
    http.oauth = Some(OAuthSpec {
        client_id: Some("public-client".into()),
        client_secret_env: Some("CLIENT_SECRET".into()),
        ..OAuthSpec::default()
    });
    for spec in [&stdio, &http] {
        let key = key_with(spec, &ambient);
        cache.store(&key, &catalog(2));
        assert!(cache.load(&key).is_some());
        for canary in [LITERAL_ENV, LITERAL_HEADER, AMBIENT] {
            assert!(!key.to_string().contains(canary));
        }
    }
    let files = names(cache.dir());
    assert_eq!(files.len(), 2);
    for name in files {
        let bytes = fs::read(cache.dir().join(&name)).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for canary in [LITERAL_ENV, "canary-literal-header", AMBIENT] {
            assert!(!text.contains(canary), "{name} holds {canary}");
        }
    }
}
