//! The command tree of the `rho` binary (behaviour lives in the end-to-end tests under `tests/`).
//! Having an integration test here also makes `cargo test` build `target/<profile>/rho`, which
//! those end-to-end tests run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

fn rho(args: &[&str]) -> std::process::Output {
    let home = std::env::temp_dir().join(format!("rho-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    Command::new(env!("CARGO_BIN_EXE_rho"))
        .args(args)
        .env("HOME", &home)
        .env("RHO_HOME", home.join(".rho"))
        .current_dir(&home)
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
    let home = std::env::temp_dir().join(format!("rho-cli-readme-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rho"))
        .args(rho_args.split_whitespace())
        .current_dir(&repo)
        .env("HOME", &home)
        .env("RHO_HOME", home.join(".rho"))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&home);
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
    assert!(long.starts_with("rho: an agent host"), "{long}");
    assert_eq!(first_line(&["-h"]), long);
    assert_eq!(first_line(&["help"]), long);
}
