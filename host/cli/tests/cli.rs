//! The command tree of the `rho` binary (behaviour lives in the end-to-end tests under `tests/`).
//! Having an integration test here also makes `cargo test` build `target/<profile>/rho`, which
//! those end-to-end tests run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

/// Runs rho with a fresh home (also its working directory), removed once rho has exited.
fn rho(args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    Command::new(env!("CARGO_BIN_EXE_rho"))
        .args(args)
        .env("HOME", home)
        .env("RHO_HOME", home.join(".rho"))
        .current_dir(home)
        .output()
        .unwrap()
}

#[test]
fn help_lists_every_command() {
    let out = rho(&["plugins", "--help"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for command in [
        "list", "inspect", "install", "link", "enable", "disable", "remove", "validate",
    ] {
        assert!(text.contains(command), "{command} missing from:\n{text}");
    }
    let text = String::from_utf8(rho(&["skills", "--help"]).stdout).unwrap();
    for command in ["list", "show", "validate"] {
        assert!(text.contains(command), "{command} missing from:\n{text}");
    }
}

#[test]
fn version_and_usage_errors() {
    let out = rho(&["--version"]);
    assert!(out.status.success());
    assert!(String::from_utf8(out.stdout).unwrap().starts_with("rho "));
    assert_eq!(rho(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(rho(&["plugins", "remove"]).status.code(), Some(2));
}

#[test]
fn missing_project_directory_is_a_reported_failure() {
    let out = rho(&["--cwd", "/nonexistent/project", "plugins", "list"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("/nonexistent/project"), "{err}");
    assert!(out.stdout.is_empty(), "nothing but output on stdout");
}

/// The README's quick start: exactly two commands, the first a `cargo run` that lets cargo
/// show its progress (a first build takes minutes, and `-q` kept it silent all that time),
/// whose rho arguments work from the repository root and print the example's plugins.
#[test]
fn the_readmes_quick_start_is_two_commands_and_the_build_shows_progress() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap();
    let commands: Vec<&str> = block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(commands.len(), 2, "{commands:?}");
    let (cargo, rho_args) = commands[0].split_once(" -- ").unwrap();
    let cargo: Vec<&str> = cargo.split_whitespace().collect();
    assert_eq!(cargo[..2], ["cargo", "run"], "{cargo:?}");
    assert!(
        !cargo
            .iter()
            .any(|a| *a == "--quiet"
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('q'))),
        "the first build must show cargo's progress: {cargo:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let out = Command::new(env!("CARGO_BIN_EXE_rho"))
        .args(rho_args.split_whitespace())
        .current_dir(&repo)
        .env("HOME", home)
        .env("RHO_HOME", home.join(".rho"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    for plugin in ["release-notes", "web-research"] {
        assert!(text.contains(plugin), "{plugin} missing from:\n{text}");
    }
}

/// `rho -h`, `rho --help` and `rho help` describe rho with the same first line (`-h` used to
/// show the crate's internal package description).
#[test]
fn every_help_describes_rho_the_same_way() {
    let first_line = |args: &[&str]| {
        let out = rho(args);
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_owned()
    };
    let long = first_line(&["--help"]);
    assert!(long.starts_with("An agent host"), "{long}");
    assert_eq!(first_line(&["-h"]), long);
    assert_eq!(first_line(&["help"]), long);
}

/// The bash script loads in a real bash and registers a completion for `rho`.
#[test]
fn bash_loads_the_completion_script() {
    let out = Command::new("bash")
        .args([
            "-c",
            r#"source <("$0" completions bash) && complete -p rho"#,
            env!("CARGO_BIN_EXE_rho"),
        ])
        .output()
        .unwrap_or_else(|e| panic!("bash is needed for this test ({e})"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("-F _rho") && stdout.trim_end().ends_with(" rho"),
        "{stdout}"
    );
}

#[test]
fn an_unknown_shell_is_a_usage_error_naming_the_shells() {
    let out = rho(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("invalid value 'tcsh'"), "{err}");
    assert!(
        err.contains("[possible values: bash, elvish, fish, powershell, zsh]"),
        "{err}"
    );
}

/// `rho man --out <dir>` never writes through a symbolic link standing at a page's name (it
/// would overwrite the link's target), and replaces a page that is there by a new file.
#[cfg(unix)]
#[test]
fn man_out_refuses_a_link_at_a_page_and_replaces_a_regular_page() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("man1");
    std::fs::create_dir_all(&dir).unwrap();
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, "keep me\n").unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("rho.1")).unwrap();
    let out = rho(&["man", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rho.1") && err.contains("symbolic link"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
    assert!(
        std::fs::symlink_metadata(dir.join("rho.1"))
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // A stale regular page is replaced: a hard link to it keeps the old bytes, which shows
    // the page was renamed over, not written in place.
    std::fs::remove_file(dir.join("rho.1")).unwrap();
    std::fs::write(dir.join("rho.1"), "stale").unwrap();
    std::fs::hard_link(dir.join("rho.1"), tmp.path().join("old-page")).unwrap();
    let out = rho(&["man", "--out", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("old-page")).unwrap(),
        "stale"
    );
    assert!(
        std::fs::read_to_string(dir.join("rho.1"))
            .unwrap()
            .contains(".TH")
    );
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// `rho man --out <dir>` resolves a relative directory against `--cwd`, creates it and
/// writes one page per command; `rho man` prints the first of them.
#[test]
fn man_prints_rho_1_and_writes_every_page_with_out() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let out = rho(&[
        "--cwd",
        project.to_str().unwrap(),
        "man",
        "--out",
        "share/man/man1",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let dir = project.join("share/man/man1");
    assert_eq!(doc["dir"], dir.to_str().unwrap());
    let pages = doc["pages"].as_array().unwrap();
    assert!(pages.len() > 20, "{doc:#}");
    for name in [
        "rho.1",
        "rho-plugins.1",
        "rho-plugins-new.1",
        "rho-completions.1",
    ] {
        assert!(dir.join(name).is_file(), "{name}");
    }
    let page = rho(&["man"]);
    assert!(page.status.success());
    assert_eq!(page.stdout, std::fs::read(dir.join("rho.1")).unwrap());
}
