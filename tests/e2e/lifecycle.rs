//! `rho plugins install/link/enable/disable/remove/inspect/validate` on real directories.

use rho_e2e::*;

fn source_plugin(sb: &Sandbox, name: &str) -> std::path::PathBuf {
    let dir = sb.outside(&format!("src-{name}"));
    make_plugin(&dir, name);
    make_skill(
        &dir.join("skills"),
        "greet",
        "Greet people. Use when saying hello.",
    );
    make_mcp(
        &dir,
        r#"{"everything":{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-everything"]}}"#,
    );
    dir
}

/// `greeter` installed from its source: the source and the installed copy.
fn installed_greeter(sb: &Sandbox) -> (std::path::PathBuf, std::path::PathBuf) {
    let src = source_plugin(sb, "greeter");
    sb.rho(&["plugins", "install", src.to_str().unwrap()]).ok();
    (src, sb.user_plugins().join("greeter"))
}

#[test]
fn install_copies_validates_and_records_origin() {
    let sb = Sandbox::new();
    let src = source_plugin(&sb, "greeter");
    let run = sb
        .rho(&["plugins", "install", src.to_str().unwrap(), "--json"])
        .ok()
        .json();
    assert_eq!(run["name"], "greeter");
    assert_eq!(run["scope"], "user");
    let dest = sb.user_plugins().join("greeter");
    assert_eq!(run["path"], dest.to_str().unwrap());
    assert!(dest.join("skills/greet/SKILL.md").is_file());
    assert!(
        !std::fs::symlink_metadata(&dest)
            .unwrap()
            .file_type()
            .is_symlink(),
        "a copy, not a link"
    );
    let p = sb.plugin("greeter");
    assert_eq!(p["origin"], "install");
    assert_eq!(p["status"], "loaded");
    assert_eq!(p["scope"], "user");
    assert_eq!(strings(&p["skills"]), ["greet"]);
    assert_eq!(strings(&p["mcp_servers"]), ["everything"]);
    let inspect = sb
        .rho(&["plugins", "inspect", "greeter", "--json"])
        .ok()
        .json();
    assert_eq!(inspect["installed_from"], src.to_str().unwrap());
    assert_eq!(
        inspect["data_dir"],
        sb.user_plugins().join("data/greeter").to_str().unwrap()
    );
    // No staging leftovers.
    let names: Vec<_> = std::fs::read_dir(sb.user_plugins())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.to_string_lossy().starts_with(".rho-staging")),
        "{names:?}"
    );
}

#[test]
fn install_refuses_existing_without_force_and_replaces_with_force() {
    let sb = Sandbox::new();
    let (src, dest) = installed_greeter(&sb);
    write(&dest.join("marker"), "old");
    let refused = sb
        .rho(&["plugins", "install", src.to_str().unwrap()])
        .code(1);
    assert!(refused.stderr.contains("--force"), "{}", refused.stderr);
    assert_eq!(
        std::fs::read_to_string(dest.join("marker")).unwrap(),
        "old",
        "nothing changed"
    );
    // PLUGIN_DATA survives a forced update (§9.1).
    write(&sb.user_plugins().join("data/greeter/state"), "keep");
    let run = sb
        .rho(&[
            "plugins",
            "install",
            src.to_str().unwrap(),
            "--force",
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(run["replaced"], true);
    assert!(!dest.join("marker").exists(), "replaced by the new copy");
    assert_eq!(
        std::fs::read_to_string(sb.user_plugins().join("data/greeter/state")).unwrap(),
        "keep"
    );
}

#[test]
fn failed_install_leaves_previous_package_intact() {
    let sb = Sandbox::new();
    let (src, dest) = installed_greeter(&sb);
    let before = walk(&dest);
    // The new version carries a link out of the package: refused after validation, mid-copy.
    let canary = Canary::new(&sb);
    symlink(&canary.file, src.join("skills/greet/leak.txt"));
    let run = sb
        .rho(&["plugins", "install", src.to_str().unwrap(), "--force"])
        .code(1);
    assert!(run.stderr.contains("leak.txt"), "{}", run.stderr);
    assert_eq!(walk(&dest), before, "previous package intact");
    canary.assert_not_copied_into(&sb.user_plugins());
    canary.assert_untouched();
    let names: Vec<_> = std::fs::read_dir(sb.user_plugins())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.to_string_lossy().starts_with(".rho-") || n == ".rho-lock"),
        "{names:?}"
    );
    // An invalid manifest is refused before anything is copied.
    write(&src.join("plugin.json"), "{ not json");
    let run = sb
        .rho(&["plugins", "install", src.to_str().unwrap(), "--force"])
        .code(1);
    assert!(
        run.stderr.contains("manifest-invalid-json"),
        "{}",
        run.stderr
    );
    assert_eq!(walk(&dest), before);
}

#[test]
fn link_validates_and_symlinks_remove_deletes_only_the_link() {
    let sb = Sandbox::new();
    let src = source_plugin(&sb, "linked");
    let run = sb
        .rho(&[
            "plugins",
            "link",
            src.to_str().unwrap(),
            "--scope",
            "project",
            "--json",
        ])
        .ok()
        .json();
    let dest = sb.project_plugins().join("linked");
    assert_eq!(run["path"], dest.to_str().unwrap());
    assert_eq!(
        std::fs::read_link(&dest).unwrap(),
        src,
        "absolute resolved target"
    );
    let p = sb.plugin("linked");
    assert_eq!(p["origin"], "link");
    assert_eq!(p["scope"], "project");
    assert_eq!(p["path"], src.to_str().unwrap());
    // Edits in the source show at once.
    make_skill(
        &src.join("skills"),
        "wave",
        "Wave at people. Use when leaving.",
    );
    assert_eq!(strings(&sb.plugin("linked")["skills"]), ["greet", "wave"]);
    let run = sb
        .rho(&["plugins", "remove", "linked", "--yes", "--json"])
        .ok()
        .json();
    assert_eq!(run["was_link"], true);
    assert!(std::fs::symlink_metadata(&dest).is_err(), "link removed");
    assert!(src.join("skills/greet/SKILL.md").is_file(), "target intact");
}

#[test]
fn link_refuses_invalid_packages_and_overlaps() {
    let sb = Sandbox::new();
    let bad = sb.outside("bad");
    write(&bad.join("plugin.json"), r#"{"name":"bad"}"#);
    let run = sb.rho(&["plugins", "link", bad.to_str().unwrap()]).code(1);
    assert!(run.stderr.contains("manifest-invalid"), "{}", run.stderr);
    assert!(!sb.user_plugins().join("bad").exists());
    // The managed root itself, or a directory inside it (C17).
    make_plugin(&sb.user_plugins().join("inside"), "inside");
    let run = sb
        .rho(&[
            "plugins",
            "link",
            sb.user_plugins().join("inside").to_str().unwrap(),
        ])
        .code(1);
    assert!(
        run.stderr.contains("overlaps the managed root"),
        "{}",
        run.stderr
    );
    let nothing = sb.outside("empty");
    let run = sb
        .rho(&["plugins", "link", nothing.to_str().unwrap()])
        .code(1);
    assert!(run.stderr.contains("plugin.json"), "{}", run.stderr);
}

#[test]
fn relative_paths_resolve_against_cwd_and_links_are_absolute() {
    let sb = Sandbox::new();
    let src = sb.project.join("dev/my-plugin");
    make_plugin(&src, "my-plugin");
    sb.rho(&["plugins", "link", "dev/my-plugin"]).ok();
    assert_eq!(
        std::fs::read_link(sb.user_plugins().join("my-plugin")).unwrap(),
        src
    );
}

#[test]
fn disable_and_enable_write_plugins_toml_in_the_matching_scope() {
    let sb = Sandbox::new();
    make_plugin(&sb.project_plugins().join("proj"), "proj");
    make_skill(
        &sb.project_plugins().join("proj/skills"),
        "proj-skill",
        "A skill. Use when testing.",
    );
    make_plugin(&sb.user_plugins().join("usr"), "usr");
    let run = sb
        .rho(&["plugins", "disable", "proj", "--json"])
        .ok()
        .json();
    assert_eq!(run["scope"], "project");
    let project_state = sb.project.join(".rho/plugins.toml");
    assert_eq!(run["state_file"], project_state.to_str().unwrap());
    assert!(
        std::fs::read_to_string(&project_state)
            .unwrap()
            .contains("enabled = false")
    );
    let p = sb.plugin("proj");
    assert_eq!(p["status"], "disabled");
    assert_eq!(p["enabled"], false);
    assert_eq!(
        strings(&p["skills"]),
        ["proj-skill"],
        "still visible in list"
    );
    let skills = sb.rho(&["skills", "list", "--json"]).ok().json();
    assert!(
        !skills["skills"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "proj-skill"),
        "contributes nothing"
    );
    assert!(
        sb.project_plugins().join("proj/plugin.json").is_file(),
        "files kept"
    );

    sb.rho(&["plugins", "disable", "usr"]).ok();
    assert!(
        std::fs::read_to_string(sb.rho_home.join("plugins.toml"))
            .unwrap()
            .contains("[plugins.usr]")
    );
    let again = sb.rho(&["plugins", "disable", "usr", "--json"]).ok().json();
    assert_eq!(again["changed"], false);
    sb.rho(&["plugins", "enable", "proj"]).ok();
    assert_eq!(sb.plugin("proj")["status"], "loaded");
    let unknown = sb.rho(&["plugins", "enable", "nope"]).code(1);
    assert!(
        unknown.stderr.contains("no plugin named"),
        "{}",
        unknown.stderr
    );
}

#[test]
fn nearer_root_wins_and_lifecycle_acts_on_the_winner() {
    let sb = Sandbox::new();
    let sub = sb.project.join("crates/app");
    std::fs::create_dir_all(&sub).unwrap();
    make_plugin(&sub.join(".agents/plugins/dup"), "dup");
    make_plugin(&sb.project_plugins().join("dup"), "dup");
    make_plugin(&sb.user_plugins().join("dup"), "dup");
    let list = sb.rho_in(&sub, &["plugins", "list", "--json"]).ok().json();
    let dups: Vec<_> = list["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] == "dup")
        .collect();
    assert_eq!(dups.len(), 3);
    assert_eq!(dups[0]["status"], "loaded");
    assert!(
        dups[0]["entry"]
            .as_str()
            .unwrap()
            .starts_with(sub.to_str().unwrap()),
        "nearest first"
    );
    for loser in &dups[1..] {
        assert_eq!(loser["status"], "shadowed");
        assert_eq!(loser["shadowed_by"], dups[0]["entry"]);
        assert!(codes(loser).contains(&"plugin-shadowed".to_string()));
    }
    assert_eq!(dups[2]["scope"], "user");
    // remove acts on the winner only.
    sb.rho_in(&sub, &["plugins", "remove", "dup", "--yes"]).ok();
    assert!(!sub.join(".agents/plugins/dup").exists());
    assert!(sb.project_plugins().join("dup").exists());
    assert!(sb.user_plugins().join("dup").exists());
}

#[test]
fn remove_keeps_data_and_needs_confirmation() {
    let sb = Sandbox::new();
    let src = source_plugin(&sb, "gone");
    sb.rho(&["plugins", "install", src.to_str().unwrap()]).ok();
    write(&sb.user_plugins().join("data/gone/cache"), "x");
    let run = sb.rho(&["plugins", "remove", "gone"]).code(1);
    assert!(run.stderr.contains("--yes"), "{}", run.stderr);
    assert!(sb.user_plugins().join("gone").exists());
    let run = sb
        .rho(&["plugins", "remove", "gone", "--yes", "--json"])
        .ok()
        .json();
    assert_eq!(run["was_link"], false);
    assert!(!sb.user_plugins().join("gone").exists());
    assert!(
        sb.user_plugins().join("data/gone/cache").exists(),
        "data kept"
    );
    assert!(src.join("plugin.json").exists(), "source untouched");
    // The install record is gone with it.
    let state = std::fs::read_to_string(sb.rho_home.join("plugins.toml")).unwrap_or_default();
    assert!(!state.contains("gone"), "{state}");
    assert!(
        sb.rho(&["plugins", "remove", "gone", "--yes"])
            .code(1)
            .stderr
            .contains("no plugin named")
    );
}

#[test]
fn validate_reports_every_diagnostic_and_exit_codes() {
    let sb = Sandbox::new();
    let run = sb
        .rho(&[
            "plugins",
            "validate",
            fixture("plugins/full").to_str().unwrap(),
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(run["valid"], true);
    assert_eq!(strings(&run["skills"]), ["summarize"]);
    let run = sb
        .rho(&[
            "plugins",
            "validate",
            fixture("plugins/skills-mixed").to_str().unwrap(),
            "--json",
        ])
        .code(1)
        .json();
    assert_eq!(run["loadable"], true);
    assert_eq!(run["valid"], false);
    let run = sb
        .rho(&[
            "plugins",
            "validate",
            fixture("plugins/unknown-schema").to_str().unwrap(),
        ])
        .code(1);
    assert!(
        run.stdout.contains("manifest-unsupported-schema"),
        "{}",
        run.stdout
    );
    let run = sb.rho(&["plugins", "validate", "/nonexistent/dir"]).code(1);
    assert!(run.stderr.contains("not a directory"));
}

#[test]
fn scope_project_installs_at_the_repository_root() {
    let sb = Sandbox::new();
    let sub = sb.project.join("a/b");
    std::fs::create_dir_all(&sub).unwrap();
    let src = source_plugin(&sb, "team");
    sb.rho_in(
        &sub,
        &[
            "plugins",
            "install",
            src.to_str().unwrap(),
            "--scope",
            "project",
        ],
    )
    .ok();
    assert!(sb.project_plugins().join("team/plugin.json").is_file());
    let p = sb.plugin("team");
    assert_eq!(p["scope"], "project");
    assert_eq!(p["origin"], "install");
    let state = std::fs::read_to_string(sb.project.join(".rho/plugins.toml")).unwrap();
    assert!(state.contains("installed_from"), "{state}");
}

#[test]
fn usage_errors_exit_2() {
    let sb = Sandbox::new();
    sb.rho(&["plugins"]).code(2);
    sb.rho(&["plugins", "install"]).code(2);
    sb.rho(&["plugins", "install", "x", "--scope", "system"])
        .code(2);
    sb.rho(&["--version"]).ok();
}

#[test]
fn list_human_output_and_empty_state() {
    let sb = Sandbox::new();
    assert_eq!(
        sb.rho(&["plugins", "list"]).ok().stdout,
        "no plugins found\n"
    );
    let json = sb.rho(&["plugins", "list", "--json"]).ok().json();
    assert_eq!(json, serde_json::json!({"plugins": [], "diagnostics": []}));
    copy_tree(&fixture("plugins/full"), &sb.project_plugins().join("full"));
    let out = sb.rho(&["plugins", "list"]).ok().stdout;
    assert!(out.starts_with("NAME"), "{out}");
    assert!(
        out.contains("full.plugin") && out.contains("1.2.0") && out.contains("project"),
        "{out}"
    );
}

/// `plugins inspect` shows each server's command line as a shell would need it: an argument
/// with a space, an empty argument and a quote survive a copy and paste.
#[test]
fn inspect_quotes_arguments_a_shell_would_split_or_drop() {
    let sb = Sandbox::new();
    let dir = sb.project_plugins().join("quoting");
    make_plugin(&dir, "quoting");
    make_mcp(
        &dir,
        r#"{"srv": {"type": "stdio", "command": "uvx", "args": ["my server", "", "it's"]}}"#,
    );
    let inspect = sb.rho(&["plugins", "inspect", "quoting"]).ok();
    assert!(
        inspect.stdout.contains(r#"uvx 'my server' '' 'it'\''s'"#),
        "{}",
        inspect.stdout
    );
}

/// A package installed from a directory whose path is not UTF-8 is installed and recorded:
/// `plugins.toml` keeps the source path as its bytes (serde refuses it as text, which used to
/// fail the command after the copy was in place), and it reads back as the same path.
#[test]
fn an_install_from_a_path_that_is_not_utf8_is_recorded() {
    use std::os::unix::ffi::OsStrExt;

    let sb = Sandbox::new();
    let src = sb
        .outside("sources")
        .join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    make_plugin(&src, "odd-source");
    let run = Run::from(
        sb.command(&["plugins", "install"])
            .arg(&src)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap(),
    )
    .ok();
    assert!(run.stdout.contains("odd-source"), "{}", run.stdout);
    assert_eq!(sb.plugin("odd-source")["origin"], "install");
    let inspect = sb
        .rho(&["plugins", "inspect", "odd-source", "--json"])
        .ok()
        .json();
    assert_eq!(
        inspect["installed_from"],
        src.to_string_lossy().as_ref(),
        "{inspect:#}"
    );
    // Recorded as the path's own bytes, not as its text with U+FFFD.
    let state = std::fs::read_to_string(sb.rho_home.join("plugins.toml")).unwrap();
    let bytes: Vec<String> = src
        .as_os_str()
        .as_bytes()
        .iter()
        .map(u8::to_string)
        .collect();
    assert!(
        state.contains(&format!("installed_from = [{}]", bytes.join(", "))),
        "{state}"
    );
    // Another change to the state file keeps the record as it was.
    sb.rho(&["plugins", "disable", "odd-source"]).ok();
    let inspect = sb
        .rho(&["plugins", "inspect", "odd-source", "--json"])
        .ok()
        .json();
    assert_eq!(inspect["installed_from"], src.to_string_lossy().as_ref());
    assert_eq!(inspect["enabled"], false, "{inspect:#}");
}
