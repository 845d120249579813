//! Snapshots of what a user and a script see: every `--help` (the command tree walked from
//! `rho --help` itself, so a new command is snapshotted without editing this file), the tables
//! and the `--json` documents of the inventory commands over `examples/demo-project`, of a
//! small MCP server (`fixtures/echo_mcp.py`) and of the plugin lifecycle over copies of the
//! example plugins. Everything runs offline, with a private `HOME` and `RHO_HOME`; paths and
//! other machine-specific parts go through [`Redact`], so the snapshots hold on any machine
//! and in any checkout directory.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The checkout this test runs from.
fn repo() -> PathBuf {
    canonical(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap()
}

/// The one redaction of machine-specific text: the checkout (`[REPO]`), the private home
/// (`[HOME]`), the rest of the test's temporary directory (`[TMP]`), the content hash of the
/// SDK directory (`<version>-[HASH]`) and trust fingerprints (`sha256:[HASH]`, they cover the
/// plugin's path).
struct Redact {
    pairs: Vec<(String, &'static str)>,
}

impl Redact {
    fn new(tmp: &Path, home: &Path) -> Self {
        let mut pairs = Vec::new();
        for (path, tag) in [(home, "[HOME]"), (tmp, "[TMP]"), (&repo(), "[REPO]")] {
            pairs.push((path.to_string_lossy().into_owned(), tag));
            if let Ok(canonical) = std::fs::canonicalize(path) {
                pairs.push((canonical.to_string_lossy().into_owned(), tag));
            }
        }
        // Longest first: the home is inside the temporary directory.
        pairs.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        Self { pairs }
    }

    fn apply(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (path, tag) in &self.pairs {
            text = text.replace(path.as_str(), tag);
        }
        redact_fingerprints(&redact_sdk_hash(&text))
    }
}

/// `sdk/<version>-<hex>` → `sdk/<version>-[HASH]` (the hash changes with every SDK edit).
fn redact_sdk_hash(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("/sdk/") {
        let (head, tail) = rest.split_at(at + "/sdk/".len());
        out.push_str(head);
        let segment_end = tail.find(['/', '"', '\n', ' ']).unwrap_or(tail.len());
        let segment = &tail[..segment_end];
        match segment.rsplit_once('-') {
            Some((version, hash))
                if hash.len() >= 8 && hash.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                out.push_str(version);
                out.push_str("-[HASH]");
            }
            _ => out.push_str(segment),
        }
        rest = &tail[segment_end..];
    }
    out.push_str(rest);
    out
}

/// `sha256:<64 hex>` → `sha256:[HASH]`.
fn redact_fingerprints(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("sha256:") {
        let (head, tail) = rest.split_at(at + "sha256:".len());
        out.push_str(head);
        let hex = tail.bytes().take_while(u8::is_ascii_hexdigit).count();
        if hex == 64 {
            out.push_str("[HASH]");
            rest = &tail[hex..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// A private home, a project directory, and how to run rho in them.
struct Sandbox {
    tmp: tempfile::TempDir,
    project: PathBuf,
    redact: Redact,
}

impl Sandbox {
    /// A sandbox whose project is `project` (the example itself, left untouched), or a copy of
    /// the example when `None`.
    fn new(project: Option<PathBuf>) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = canonical(tmp.path());
        let home = root.join("home");
        std::fs::create_dir_all(home.join(".rho")).unwrap();
        let project = project.unwrap_or_else(|| {
            let copy = root.join("project");
            copy_dir(&repo().join("examples/demo-project"), &copy);
            // Its own repository root: the project chain ends here, as in the checkout.
            std::fs::create_dir_all(copy.join(".git")).unwrap();
            copy
        });
        let redact = Redact::new(&root, &home);
        Self {
            tmp,
            project,
            redact,
        }
    }

    fn root(&self) -> PathBuf {
        canonical(self.tmp.path())
    }

    fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    /// Writes `$RHO_HOME/config.toml`.
    fn config(&self, text: &str) {
        std::fs::write(self.home().join(".rho/config.toml"), text).unwrap();
    }

    /// Runs rho in the project; stdout, redacted, followed by the exit code.
    fn run(&self, args: &[&str]) -> String {
        let home = self.home();
        let out = Command::new(env!("CARGO_BIN_EXE_rho"))
            .arg("--cwd")
            .arg(&self.project)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("RHO_HOME", home.join(".rho"))
            .env("RHO_LOG", "off")
            .current_dir(&self.project)
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        format!(
            "{}\n[exit {}]\n",
            self.redact.apply(&stdout),
            out.status.code().unwrap_or(-1)
        )
    }

    /// Snapshots the table and the `--json` document of one command.
    fn both(&self, name: &str, args: &[&str]) {
        insta::assert_snapshot!(format!("{name}__table"), self.run(args));
        let mut json_args = args.to_vec();
        json_args.push("--json");
        insta::assert_snapshot!(format!("{name}__json"), self.run(&json_args));
    }

    /// Snapshots the `--json` document of one command (lifecycle steps, run once).
    fn json(&self, name: &str, args: &[&str]) {
        let mut json_args = args.to_vec();
        json_args.push("--json");
        insta::assert_snapshot!(format!("{name}__json"), self.run(&json_args));
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            // The example's data directory is machine state, not part of it.
            if entry.file_name() != "data" {
                copy_dir(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The subcommands `help` lists under `Commands:` (without `help` itself).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim_end() != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The help of `rho` and of every command below it, found by walking `--help` itself.
#[test]
fn every_help() {
    let sb = Sandbox::new(Some(repo().join("examples/demo-project")));
    let mut queue: Vec<Vec<String>> = vec![Vec::new()];
    let mut seen = 0;
    while let Some(path) = queue.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let text = sb.run(&args);
        assert!(text.ends_with("[exit 0]\n"), "{args:?}: {text}");
        let name = std::iter::once("rho")
            .chain(path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("_");
        insta::assert_snapshot!(format!("help__{name}"), text);
        seen += 1;
        for sub in subcommands(&text) {
            let mut next = path.clone();
            next.push(sub);
            queue.push(next);
        }
    }
    assert!(seen > 20, "only {seen} commands found");
}

/// What a private home with no configuration shows of the example project, without starting
/// anything.
#[test]
fn demo_project_inventories() {
    let sb = Sandbox::new(Some(repo().join("examples/demo-project")));
    // An external provider: doctor never contacts it, so its row is the same everywhere.
    sb.config(
        "[providers.remote]\nendpoint = \"https://models.example.invalid/v1\"\n\n\
         [mcp.servers.tracker]\nurl = \"https://mcp.tracker.example.invalid/mcp\"\n\n\
         [mcp.servers.tracker.oauth]\n",
    );
    let json_tools = repo().join("examples/plugins/json-tools");
    sb.both("plugins_list", &["plugins", "list"]);
    sb.both(
        "plugins_inspect_release_notes",
        &["plugins", "inspect", "release-notes"],
    );
    sb.both(
        "plugins_inspect_web_research",
        &["plugins", "inspect", "web-research"],
    );
    sb.both(
        "plugins_validate_valid",
        &["plugins", "validate", json_tools.to_str().unwrap()],
    );
    sb.both(
        "plugins_validate_with_problems",
        &["plugins", "validate", ".agents/plugins/web-research"],
    );
    sb.both("skills_list", &["skills", "list"]);
    sb.both("skills_show_loose", &["skills", "show", "commit-message"]);
    sb.both("skills_show_plugin", &["skills", "show", "release-notes"]);
    sb.both(
        "skills_validate_valid",
        &["skills", "validate", ".agents/skills/commit-message"],
    );
    sb.both(
        "skills_validate_invalid",
        &["skills", "validate", ".agents"],
    );
    sb.both("mcp_list", &["mcp", "list"]);
    sb.both("mcp_show_plugin", &["mcp", "show", "release-notes/files"]);
    sb.both("mcp_show_oauth", &["mcp", "show", "tracker"]);
    sb.json("mcp_logout", &["mcp", "logout", "tracker"]);
    sb.both("tools_list_no_mcp", &["tools", "list", "--no-mcp"]);
    sb.both("doctor_no_connect", &["doctor", "--no-connect"]);
}

/// Stored OAuth logins that rho will not send (`docs/credentials.md`, "Bound to the server"):
/// one issued for another address than the server's configured one, and one an older rho
/// saved, which names no address. Offline: the states come from the store and the config.
#[test]
fn stored_logins_that_do_not_fit_the_server() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new(None);
    std::fs::remove_dir_all(sb.project.join(".agents")).unwrap();
    sb.config(
        "[mcp.servers.tracker]\nurl = \"https://mcp.tracker.example.invalid/mcp\"\n\n\
         [mcp.servers.tracker.oauth]\n",
    );
    let credentials = sb.home().join(".rho/credentials");
    std::fs::create_dir(&credentials).unwrap();
    std::fs::set_permissions(&credentials, std::fs::Permissions::from_mode(0o700)).unwrap();
    let canary = "canary-7d41";
    let mut file = serde_json::json!({
        "format": 2,
        "server": "tracker",
        "resource": "https://old-tracker.example.invalid/mcp",
        "issuer": "https://auth.tracker.example.invalid",
        "client_id": "rho-client",
        "received_at": 1_700_000_000,
        "scopes": ["read"],
        "refreshable": true,
        "token": {"access_token": canary, "token_type": "Bearer", "refresh_token": canary},
    });
    let write = |file: &serde_json::Value| {
        let path = credentials.join("tracker.json");
        std::fs::write(&path, serde_json::to_vec_pretty(file).unwrap()).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    };
    write(&file);
    assert!(!sb.run(&["mcp", "list", "--json"]).contains(canary));
    sb.both("mcp_list_oauth_address_changed", &["mcp", "list"]);
    file["format"] = 1.into();
    file.as_object_mut().unwrap().remove("resource");
    write(&file);
    sb.both("mcp_list_oauth_saved_by_an_older_rho", &["mcp", "list"]);
}

/// A server that answers: `--connect` listings, a call through `rho mcp` and through
/// `rho tools`, and doctor with servers started.
#[test]
fn a_connected_server() {
    let sb = Sandbox::new(Some(repo().join("examples/demo-project")));
    let server = repo().join("host/cli/tests/fixtures/echo_mcp.py");
    sb.config(&format!(
        "[providers.remote]\nendpoint = \"https://models.example.invalid/v1\"\n\n\
         [mcp.servers.echo]\ncommand = \"python3\"\nargs = [{:?}]\n",
        server.to_string_lossy()
    ));
    sb.both("mcp_list_connect", &["mcp", "list", "--connect"]);
    sb.both("mcp_show_connect", &["mcp", "show", "echo", "--connect"]);
    sb.both("mcp_show_echo", &["mcp", "show", "echo"]);
    sb.both(
        "mcp_call",
        &["mcp", "call", "echo", "echo", r#"{"text":"hello"}"#],
    );
    sb.both("tools_list", &["tools", "list"]);
    sb.both(
        "tools_call_mcp",
        &["tools", "call", "mcp__echo__echo", r#"{"text":"hi"}"#],
    );
    sb.both(
        "tools_call_builtin",
        &[
            "tools",
            "call",
            "read_file",
            r#"{"path":".agents/skills/commit-message/SKILL.md"}"#,
        ],
    );
    sb.both("doctor", &["doctor"]);
}

/// A server whose id has a hyphen, serving a tool whose name has one: both are hex-encoded in
/// the exported name the model calls, and every listing shows `local-files › get-env` first and
/// that exported name second.
#[test]
fn hyphenated_names_are_shown_as_server_and_tool() {
    let sb = Sandbox::new(Some(repo().join("examples/demo-project")));
    let server = repo().join("host/cli/tests/fixtures/echo_mcp.py");
    sb.config(&format!(
        "[mcp.servers.local-files]\ncommand = \"python3\"\nargs = [{:?}, \"--get-env\"]\n",
        server.to_string_lossy()
    ));
    let exported = "mcp___rho_6c6f63616c2d66696c6573___rho_6765742d656e76";
    sb.both(
        "hyphenated_mcp_show",
        &["mcp", "show", "local-files", "--connect"],
    );
    sb.both("hyphenated_tools_list", &["tools", "list"]);
    let shown = sb.run(&["mcp", "show", "local-files", "--connect"]);
    let row = shown
        .lines()
        .find(|l| l.contains("local-files › get-env"))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(
        row.trim_start().starts_with("local-files › get-env") && row.contains(exported),
        "{row}"
    );
    let listed = sb.run(&["tools", "list"]);
    let row = listed
        .lines()
        .find(|l| l.starts_with("local-files › get-env"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(row.contains(exported), "{row}");
    // The documents carry the server, the tool's own name and what a person reads, beside
    // the exported name.
    let listed: serde_json::Value = serde_json::from_str(
        sb.run(&["tools", "list", "--json"])
            .trim_end()
            .trim_end_matches("[exit 0]"),
    )
    .unwrap();
    let tool = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == exported)
        .unwrap();
    assert_eq!(tool["server"], "local-files");
    assert_eq!(tool["tool"], "get-env");
    assert_eq!(tool["display_name"], "local-files › get-env");
    let builtin = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read_file")
        .unwrap();
    assert_eq!(builtin["tool"], "read_file");
    assert_eq!(builtin["display_name"], "read_file");
    let shown: serde_json::Value = serde_json::from_str(
        sb.run(&["mcp", "show", "local-files", "--connect", "--json"])
            .trim_end()
            .trim_end_matches("[exit 0]"),
    )
    .unwrap();
    let tool = shown["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "get-env")
        .unwrap();
    assert_eq!(tool["exported_name"], exported);
    assert_eq!(tool["display_name"], "local-files › get-env");
}

/// Installing, linking, shadowing, disabling, trusting and removing the example plugins in a
/// copy of the example project, and what inventories say at each step.
#[test]
fn plugin_lifecycle() {
    let sb = Sandbox::new(None);
    let data_tools = repo().join("examples/plugins/data-tools");
    let json_tools = repo().join("examples/plugins/json-tools");
    let (data_tools, json_tools) = (data_tools.to_str().unwrap(), json_tools.to_str().unwrap());
    sb.json(
        "lifecycle_01_install_user",
        &["plugins", "install", data_tools, "--scope", "user"],
    );
    sb.both(
        "lifecycle_02_inspect_user_components",
        &["plugins", "inspect", "data-tools"],
    );
    sb.both(
        "lifecycle_03_tools_call_wasm",
        &[
            "tools",
            "call",
            "wasm__data-tools__convert",
            r#"{"input":"a = 1","from":"toml","to":"json"}"#,
        ],
    );
    sb.json(
        "lifecycle_04_link_project",
        &["plugins", "link", json_tools, "--scope", "project"],
    );
    sb.json(
        "lifecycle_05_install_shadowed",
        &["plugins", "install", json_tools, "--scope", "user"],
    );
    sb.both(
        "lifecycle_06_inspect_other_copies",
        &["plugins", "inspect", "json-tools"],
    );
    sb.json(
        "lifecycle_07_disable",
        &["plugins", "disable", "json-tools"],
    );
    sb.json(
        "lifecycle_08_disable_again",
        &["plugins", "disable", "json-tools"],
    );
    sb.json("lifecycle_09_enable", &["plugins", "enable", "json-tools"]);
    sb.json(
        "lifecycle_10_link_project_components",
        &["plugins", "link", data_tools, "--scope", "project"],
    );
    sb.both(
        "lifecycle_11_inspect_untrusted",
        &["plugins", "inspect", "data-tools"],
    );
    sb.json("lifecycle_12_trust", &["plugins", "trust", "data-tools"]);
    sb.both(
        "lifecycle_13_inspect_trusted",
        &["plugins", "inspect", "data-tools"],
    );
    sb.json(
        "lifecycle_14_untrust",
        &["plugins", "untrust", "data-tools"],
    );
    sb.json(
        "lifecycle_15_untrust_again",
        &["plugins", "untrust", "data-tools"],
    );
    sb.both("lifecycle_16_plugins_list", &["plugins", "list"]);
    sb.both("lifecycle_17_skills_list", &["skills", "list"]);
    sb.json(
        "lifecycle_18_remove",
        &["plugins", "remove", "json-tools", "--yes"],
    );
    let new_dir = sb.root().join("new-plugin");
    sb.json(
        "lifecycle_19_new",
        &[
            "plugins",
            "new",
            new_dir.to_str().unwrap(),
            "--tool",
            "count",
        ],
    );
    let man_dir = sb.root().join("man");
    sb.json(
        "lifecycle_20_man_out",
        &["man", "--out", man_dir.to_str().unwrap()],
    );
}

#[test]
fn the_sdk_hash_is_redacted() {
    assert_eq!(
        redact_sdk_hash("\"[HOME]/.rho/sdk/0.1.0-0123abcd9f/Cargo.toml\" sdk/x"),
        "\"[HOME]/.rho/sdk/0.1.0-[HASH]/Cargo.toml\" sdk/x"
    );
    let hex = "ab".repeat(32);
    assert_eq!(
        redact_fingerprints(&format!("sha256:{hex} sha256:12")),
        "sha256:[HASH] sha256:12"
    );
}
