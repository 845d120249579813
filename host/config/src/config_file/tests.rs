use super::*;

fn parse(text: &str) -> RhoConfig {
    parse_config(text, Path::new("/etc/rho/config.toml")).unwrap()
}

fn problems(text: &str) -> Vec<String> {
    parse(text).mcp_servers.remove(0).spec.unwrap_err()
}

#[test]
fn documented_examples_parse() {
    let c = parse(
        r#"
[mcp.servers.filesystem]
transport = "stdio"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/project"]
cwd = "/home/me/project"

[mcp.servers.filesystem.tools]
allow = ["read_file", "list_directory"]
deny = []

[mcp.servers.github]
transport = "stdio"
command = "github-mcp-server"
args = ["stdio"]
env_from_env = { GITHUB_PERSONAL_ACCESS_TOKEN = "GITHUB_TOKEN" }

[mcp.servers.remote]
transport = "streamable_http"
url = "https://mcp.example.com/mcp"
headers_from_env = { Authorization = "MCP_AUTHORIZATION" }
headers = { X-Tenant = "public-tenant" }

[mcp.servers.remote.oauth]
client_id = "issued-out-of-band"
scopes = ["read", "write"]

[mcp.servers.indexer]
command = "indexer-mcp"
log_level = "info"
sampling = "ask"
enabled = false
startup_timeout_sec = 0.3
call_timeout_sec = 5
max_output_bytes = 1000
"#,
    );
    assert_eq!(c.mcp_servers.len(), 4);
    for s in &c.mcp_servers {
        assert!(s.spec.is_ok(), "{}: {:?}", s.id, s.spec);
    }
    let fs = c.mcp_servers.iter().find(|s| s.id == "filesystem").unwrap();
    let spec = fs.spec.as_ref().unwrap();
    assert!(spec.tools.allows("read_file") && !spec.tools.allows("write_file"));
    assert_eq!(fs.line, 2);
    let idx = c
        .mcp_servers
        .iter()
        .find(|s| s.id == "indexer")
        .unwrap()
        .spec
        .clone()
        .unwrap();
    assert!(!idx.enabled);
    assert_eq!(idx.startup_timeout, Duration::from_millis(300));
    assert_eq!(idx.sampling, SamplingPolicy::Ask);
    assert_eq!(idx.log_level, Some(LogLevel::Info));
    assert_eq!(c.enabled_servers().count(), 3);
}

#[test]
fn bad_entries_fail_alone_and_name_their_key() {
    let c = parse(
        "[mcp.servers.ok]\ncommand = \"npx\"\n\n[mcp.servers.bad]\ncommand = \"npx\"\ncomand = \"x\"\n",
    );
    assert!(
        c.mcp_servers
            .iter()
            .find(|s| s.id == "ok")
            .unwrap()
            .spec
            .is_ok()
    );
    let bad = c.mcp_servers.iter().find(|s| s.id == "bad").unwrap();
    assert_eq!(bad.line, 4);
    let p = bad.spec.as_ref().unwrap_err();
    assert!(
        p[0].contains("mcp.servers.bad") && p[0].contains("comand"),
        "{p:?}"
    );
    assert!(problems("[mcp.servers.x]\nurl = \"http://example.com/mcp\"\n")[0].contains("https"));
    assert!(
        problems("[mcp.servers.x]\nurl = \"https://u:hunter2@example.com/\"\n")
            .iter()
            .all(|p| !p.contains("hunter2"))
    );
    assert!(
        problems("[mcp.servers.x]\ncommand = \"a\"\nurl = \"https://h/\"\n")[0].contains("both")
    );
    assert!(
        problems("[mcp.servers.x]\ntransport = \"stdio\"\nurl = \"https://h/\"\n")
            .iter()
            .any(|p| p.contains("command"))
    );
    assert!(
        problems("[mcp.servers.x]\ncommand = \"a\"\nlog_level = \"loud\"\n")[0]
            .contains("log_level")
    );
    assert!(
        problems("[mcp.servers.x]\ncommand = \"a\"\ncall_timeout_sec = 0\n")[0]
            .contains("call_timeout_sec")
    );
    assert!(
        problems("[mcp.servers.x]\ncommand = \"a\"\ntools = { allow = [1] }\n")[0]
            .contains("mcp.servers.x.tools.allow")
    );
    assert!(problems("[mcp.servers.\"a b\"]\ncommand = \"a\"\n")[0].contains("identity"));
    assert!(
        problems("[mcp.servers.x]\nurl = \"https://h/\"\nheaders = { A = \"1\", a = \"2\" }\n")[0]
            .contains("more than once")
    );
    let leaked =
        problems("[mcp.servers.x]\ncommand = \"a\"\nenv_from_env = { X = \"sk-secret value\" }\n");
    assert!(
        leaked[0].contains("env_from_env") && !leaked[0].contains("sk-secret"),
        "{leaked:?}"
    );
    let leaked = problems(
        "[mcp.servers.x]\nurl = \"https://h/\"\nheaders_from_env = { Authorization = \"Bearer sk-xyz\" }\n",
    );
    assert!(
        !leaked.is_empty() && leaked.iter().all(|p| !p.contains("sk-xyz")),
        "{leaked:?}"
    );
    assert!(problems("[mcp.servers.x]\ncommand = \"a\"\noauth = {}\n")[0].contains("oauth"));
}

#[test]
fn startup_and_defer_default_to_eager_and_deferrable() {
    let c = parse("[mcp.servers.a]\ncommand = \"a\"\n");
    let spec = c.mcp_servers[0].spec.clone().unwrap();
    assert_eq!(spec.startup, Startup::Eager);
    assert!(spec.defer);
    assert_eq!(c.mcp_startup, Startup::Eager);
    assert!(c.plugin_servers.is_empty());
}

#[test]
fn a_servers_startup_wins_over_the_mcp_default() {
    let c = parse(
        "[mcp]\nstartup = \"lazy\"\n\n[mcp.servers.a]\ncommand = \"a\"\n\n\
         [mcp.servers.b]\ncommand = \"b\"\nstartup = \"eager\"\ndefer = false\n",
    );
    assert_eq!(c.mcp_startup, Startup::Lazy);
    let spec = |id: &str| {
        c.mcp_servers
            .iter()
            .find(|s| s.id == id)
            .unwrap()
            .spec
            .clone()
            .unwrap()
    };
    assert_eq!(spec("a").startup, Startup::Lazy, "the [mcp] default");
    assert!(spec("a").defer);
    assert_eq!(spec("b").startup, Startup::Eager, "its own key");
    assert!(!spec("b").defer, "pinned");
}

#[test]
fn bad_startup_and_defer_values_name_the_key_and_line() {
    let p = problems("[mcp.servers.x]\ncommand = \"a\"\nstartup = \"later\"\n");
    assert!(
        p[0].contains("mcp.servers.x.startup") && p[0].contains("lazy"),
        "{p:?}"
    );
    let p = problems("[mcp.servers.x]\ncommand = \"a\"\ndefer = \"no\"\n");
    assert!(p[0].contains("mcp.servers.x.defer"), "{p:?}");
    let err = parse_config(
        "[agent]\n\n[mcp]\nstartup = \"Lazy\"\n",
        Path::new("/c.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("/c.toml")
            && err.contains("line 4")
            && err.contains("mcp.startup")
            && err.contains("lazy, eager"),
        "{err}"
    );
}

#[test]
fn plugin_servers_take_startup_and_defer_by_identity() {
    let c = parse(
        "[mcp]\nstartup = \"lazy\"\n\n\
         [mcp.plugin_servers.\"github-tools/github\"]\ndefer = false\n\n\
         [mcp.plugin_servers.\"docs.site/search\"]\nstartup = \"eager\"\n",
    );
    assert_eq!(
        c.plugin_servers,
        [
            PluginServerSettings {
                id: "docs.site/search".into(),
                line: 7,
                startup: Some(Startup::Eager),
                defer: None,
            },
            PluginServerSettings {
                id: "github-tools/github".into(),
                line: 4,
                startup: None,
                defer: Some(false),
            },
        ]
    );
    let plugin_spec = |id: &str| {
        let (plugin, server) = id.split_once('/').unwrap();
        McpServerSpec::new(
            id,
            McpServerOrigin::Plugin {
                plugin: plugin.into(),
                server: server.into(),
                root: "/p".into(),
                data_dir: "/d".into(),
            },
            McpTransport::Stdio(StdioServerSpec {
                command: StdioCommand::Bare("srv".into()),
                args: vec![],
                env: vec![],
                env_from_env: vec![],
                cwd: Some("/p".into()),
            }),
        )
    };
    let applied = |id: &str| {
        let mut spec = plugin_spec(id);
        c.apply_to_plugin_server(&mut spec);
        (spec.startup, spec.defer)
    };
    assert_eq!(applied("github-tools/github"), (Startup::Lazy, false));
    assert_eq!(applied("docs.site/search"), (Startup::Eager, true));
    assert_eq!(
        applied("other/server"),
        (Startup::Lazy, true),
        "the default"
    );
    let eager = parse("");
    let mut spec = plugin_spec("other/server");
    eager.apply_to_plugin_server(&mut spec);
    assert_eq!((spec.startup, spec.defer), (Startup::Eager, true));
}

#[test]
fn bad_plugin_server_entries_make_the_file_unusable_and_say_why() {
    let err = |text: &str| {
        parse_config(text, Path::new("/c.toml"))
            .unwrap_err()
            .to_string()
    };
    let e = err("\n[mcp.plugin_servers.\"p/s\"]\ndefr = false\n");
    assert!(
        e.contains("line 2") && e.contains("mcp.plugin_servers.\"p/s\"") && e.contains("defr"),
        "{e}"
    );
    let e = err("[mcp.plugin_servers.\"p/s\"]\nstartup = \"soon\"\n");
    assert!(
        e.contains("mcp.plugin_servers.\"p/s\".startup") && e.contains("lazy"),
        "{e}"
    );
    for id in ["github", "/s", "p/", "Plugin/s", "a b/s"] {
        let e = err(&format!(
            "[mcp.plugin_servers.\"{id}\"]\nstartup = \"lazy\"\n"
        ));
        assert!(
            e.contains("line 1") && e.contains("<plugin>/<server>"),
            "{id}: {e}"
        );
    }
    let e = err("[mcp.plugin_servers]\nx = 1\n");
    assert!(e.contains("line 2") && e.contains("expected a map"), "{e}");
}

#[test]
fn oauth_secrets_and_metadata_urls_are_checked() {
    let p =
        problems("[mcp.servers.x]\nurl = \"https://h/\"\noauth = { client_secret_env = \"S\" }\n");
    assert!(
        p[0].contains("mcp.servers.x.oauth.client_secret_env"),
        "{p:?}"
    );
    for bad in ["http://h/doc.json", "https://h/", "not a url"] {
        let p = problems(&format!(
            "[mcp.servers.x]\nurl = \"https://h/\"\noauth = {{ client_metadata_url = \"{bad}\" }}\n"
        ));
        assert!(p[0].contains("oauth.client_metadata_url"), "{bad}: {p:?}");
    }
    let ok = parse(
        "[mcp.servers.x]\nurl = \"https://h/\"\n[mcp.servers.x.oauth]\nclient_id = \"c\"\n\
         client_secret_env = \"S\"\nclient_metadata_url = \"https://rho.example/client.json\"\n",
    );
    let spec = ok.mcp_servers[0].spec.as_ref().unwrap();
    let oauth = spec.oauth.as_ref().unwrap();
    assert_eq!(oauth.client_secret_env.as_deref(), Some("S"));
    assert_eq!(
        oauth.client_metadata_url.as_deref(),
        Some("https://rho.example/client.json")
    );
}

#[test]
fn file_level_errors_name_file_and_line_without_quoting() {
    let err = parse_config("[mcp]\nserverz = 1\n", Path::new("/c.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("/c.toml") && err.contains("serverz") && err.contains("line 2"),
        "{err}"
    );
    let err = parse_config("a = \"secret-value\n", Path::new("/c.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("line 1") && !err.contains("secret-value"),
        "{err}"
    );
    let err = parse_config("[profiles]\n", Path::new("/c.toml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("profiles"), "{err}");
}

#[test]
fn relative_paths_anchor_at_the_config_directory() {
    let c = parse("[mcp.servers.x]\ncommand = \"./bin/server\"\ncwd = \"work\"\n");
    let spec = c.mcp_servers[0].spec.clone().unwrap();
    let McpTransport::Stdio(stdio) = spec.transport else {
        panic!("stdio")
    };
    assert_eq!(
        stdio.command,
        StdioCommand::Path("/etc/rho/./bin/server".into())
    );
    assert_eq!(stdio.cwd, Some(PathBuf::from("/etc/rho/work")));
}

#[test]
fn missing_default_is_empty_missing_explicit_is_an_error() {
    let default = ConfigSource::Default("/nonexistent/rho/config.toml".into());
    assert!(load_config(&default).unwrap().mcp_servers.is_empty());
    let explicit = ConfigSource::Explicit("/nonexistent/rho/config.toml".into());
    assert!(load_config(&explicit).is_err());
}

/// `load_config` on `path` as `--config` and as the default, each within 5 s.
fn load_both_promptly(path: &Path) -> [String; 2] {
    let (tx, rx) = std::sync::mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::spawn(move || {
        let explicit = load_config(&ConfigSource::Explicit(owned.clone()));
        let default = load_config(&ConfigSource::Default(owned));
        let _ = tx.send([explicit, default].map(|r| match r {
            Ok(_) => "loaded".to_owned(),
            Err(e) => e.to_string(),
        }));
    });
    rx.recv_timeout(std::time::Duration::from_secs(5))
        .unwrap_or_else(|_| panic!("loading {} did not return within 5 s", path.display()))
}

#[test]
fn fifos_devices_and_huge_files_are_refused_before_reading() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo.toml");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let zero = tmp.path().join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let sparse = tmp.path().join("sparse.toml");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    for (path, problem) in [
        (&fifo, "a FIFO, not a regular file"),
        (&zero, "a character device, not a regular file"),
        (&sparse, "larger than the 1 MiB cap"),
        (&tmp.path().to_path_buf(), "a directory, not a regular file"),
    ] {
        let expected = format!("cannot read {}: {problem}", path.display());
        assert_eq!(load_both_promptly(path), [expected.clone(), expected]);
    }
}
