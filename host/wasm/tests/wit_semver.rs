//! The WIT contract for tool components stays semver-compatible, so an incompatible change
//! cannot land silently.
//!
//! Every version of the contract lives in its own directory `plugin-sdk/wit/rho-tool-<version>/`
//! declaring `package rho:tool@<version>;`. Released directories are frozen (a SHA-256 test in
//! `tests/components/loading.rs` guards `0.1.0`). For every two versions that Cargo's semver
//! rules call compatible (the same major version from 1.0 on, the same `0.minor` before it), this
//! test checks with [`wit_component::semver_check`] that each world of the older package exists
//! in the newer one and is a compatible upgrade of it.
//!
//! "Compatible upgrade" is what `semver_check` checks, in this direction: a component built
//! against the older world must still be a valid component of the newer world. So within a
//! minor line (0.x) or a major line (>= 1.0) the newer package may add functions to interfaces
//! the world *imports* (the `host` interface), and add new types, interfaces and worlds; it may
//! not remove or change an existing function, type or field, and it may not add a function to
//! an interface the world *exports* (the `tools` interface: older components do not export it).
//!
//! Adding a version:
//! 1. copy the newest directory to `plugin-sdk/wit/rho-tool-<new>/`;
//! 2. bump the `package rho:tool@<new>;` line (the directory name must match it);
//! 3. within the same minor (0.x) or major (>= 1.0) line, edit only compatibly: this test fails
//!    otherwise, naming both versions, the world and wit-component's explanation. An
//!    incompatible change needs a new minor (0.x) or major (>= 1.0) version.
//!
//! The check itself is tested on synthetic next versions derived from the real package by
//! text edits, so it is not a test that cannot fail while only one version exists.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test fixtures and assertions

use std::fs;
use std::path::{Path, PathBuf};

use wit_parser::{PackageId, PackageName, Resolve};

/// The package every directory declares.
const NAMESPACE: &str = "rho";
const NAME: &str = "tool";
/// Directory names are `rho-tool-<version>`.
const DIR_PREFIX: &str = "rho-tool-";
/// The released version the synthetic next versions are derived from.
const BASE_DIR: &str = "rho-tool-0.1.0";
/// The file of the package that holds the world and the interfaces.
const WIT_FILE: &str = "tool.wit";

/// `plugin-sdk/wit/`, where the versioned packages live.
fn wit_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugin-sdk/wit")
}

/// Every directory under `root`, sorted by name. Each must be a versioned package
/// (`rho-tool-<version>`): a misnamed directory would escape the check. Files (a README) are
/// ignored.
fn package_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for entry in fs::read_dir(root).unwrap_or_else(|e| panic!("reading {}: {e}", root.display())) {
        let path = entry.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(DIR_PREFIX),
            "{}: every directory under plugin-sdk/wit/ must be a versioned package `{DIR_PREFIX}<version>`",
            path.display()
        );
        dirs.push(path);
    }
    dirs.sort();
    dirs
}

/// Parses the package in `dir` into `resolve`.
fn push_package(resolve: &mut Resolve, dir: &Path) -> PackageId {
    match resolve.push_dir(dir) {
        Ok((id, _sources)) => id,
        Err(e) => panic!("{}: not a valid WIT package: {e:#}", dir.display()),
    }
}

/// The package name and version `dir` declares.
fn package_name(dir: &Path) -> PackageName {
    let mut resolve = Resolve::default();
    let id = push_package(&mut resolve, dir);
    resolve.packages[id].name.clone()
}

/// The version part of a `rho-tool-<version>` directory name.
fn dir_version(dir: &Path) -> String {
    let name = dir.file_name().unwrap().to_string_lossy();
    name.strip_prefix(DIR_PREFIX).unwrap().to_owned()
}

/// Whether Cargo's semver rules say `newer` must be compatible with `older` (`older < newer`
/// and `^older` matches `newer`): the same major version from 1.0 on, the same minor version
/// for 0.x, only the same patch for 0.0.x. A pre-release newer version is matched only by a
/// pre-release of the same `major.minor.patch`, as in Cargo.
fn must_be_compatible(older: &PackageName, newer: &PackageName) -> bool {
    let (Some(old), Some(new)) = (older.version.as_ref(), newer.version.as_ref()) else {
        return false;
    };
    if old >= new {
        return false;
    }
    let same_line = match (old.major, old.minor) {
        (0, 0) => (new.major, new.minor, new.patch) == (0, 0, old.patch),
        (0, minor) => (new.major, new.minor) == (0, minor),
        (major, _) => new.major == major,
    };
    let same_triple = (old.major, old.minor, old.patch) == (new.major, new.minor, new.patch);
    same_line && (new.pre.is_empty() || (!old.pre.is_empty() && same_triple))
}

/// Checks that the package in `newer_dir` is a compatible upgrade of the one in `older_dir`:
/// every world of the older package exists in the newer one, and
/// [`wit_component::semver_check`] accepts each (a component built against the older world is
/// a valid component of the newer world). The error names both versions, the world and
/// wit-component's explanation; it lists every failing world.
fn check_upgrade(older_dir: &Path, newer_dir: &Path) -> Result<(), String> {
    let mut resolve = Resolve::default();
    let older = push_package(&mut resolve, older_dir);
    let newer = push_package(&mut resolve, newer_dir);
    let older_name = &resolve.packages[older].name;
    let newer_name = &resolve.packages[newer].name;
    let mut failures = Vec::new();
    for (world, &older_world) in &resolve.packages[older].worlds {
        let Some(&newer_world) = resolve.packages[newer].worlds.get(world) else {
            failures.push(format!(
                "{newer_name} is not a compatible upgrade of {older_name}: \
                 world `{world}` is missing from {newer_name}"
            ));
            continue;
        };
        if let Err(e) = wit_component::semver_check(resolve.clone(), older_world, newer_world) {
            failures.push(format!(
                "{newer_name} is not a compatible upgrade of {older_name}: world `{world}`: {e:#}"
            ));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// The packages under `root` (a `plugin-sdk/wit/`), oldest version first.
fn packages(root: &Path) -> Vec<(PackageName, PathBuf)> {
    let mut packages: Vec<(PackageName, PathBuf)> = package_dirs(root)
        .into_iter()
        .map(|dir| (package_name(&dir), dir))
        .collect();
    packages.sort_by(|a, b| a.0.version.cmp(&b.0.version));
    packages
}

/// Checks every pair of packages under `root` that must be compatible with [`check_upgrade`];
/// the error lists every failure.
fn check_versions(root: &Path) -> Result<(), String> {
    let packages = packages(root);
    let mut failures = Vec::new();
    for (i, (older, older_dir)) in packages.iter().enumerate() {
        for (newer, newer_dir) in &packages[i + 1..] {
            if must_be_compatible(older, newer)
                && let Err(e) = check_upgrade(older_dir, newer_dir)
            {
                failures.push(e);
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// Asserts that every package under `root` declares `rho:tool` and is in the directory named
/// after its version (`rho-tool-0.1.0` declares `rho:tool@0.1.0`).
fn assert_named_after_their_package(root: &Path) {
    for dir in package_dirs(root) {
        let name = package_name(&dir);
        assert_eq!(
            (name.namespace.as_str(), name.name.as_str()),
            (NAMESPACE, NAME),
            "{}: declares {name}, expected {NAMESPACE}:{NAME}@<version>",
            dir.display()
        );
        let version = name
            .version
            .as_ref()
            .unwrap_or_else(|| panic!("{}: {name} declares no version", dir.display()));
        assert_eq!(
            version.to_string(),
            dir_version(&dir),
            "{}: the directory name does not match the declared {name}",
            dir.display()
        );
    }
}

/// The real packages: every pair of versions on the same semver line is a compatible upgrade.
/// (With a single released version there is no pair yet; the `check_*` tests below show the
/// same check failing and passing on synthetic versions.)
#[test]
fn wit_versions_on_one_semver_line_are_compatible() {
    let root = wit_root();
    assert!(
        root.join(BASE_DIR).is_dir(),
        "the released {BASE_DIR} is missing from plugin-sdk/wit/"
    );
    if let Err(e) = check_versions(&root) {
        panic!(
            "incompatible change within a semver line of the WIT contract (put it in a new \
             minor (0.x) or major (>= 1.0) version instead):\n{e}"
        );
    }
}

/// Every directory is named after the version its package declares, and declares `rho:tool`.
#[test]
fn wit_directories_are_named_after_their_package() {
    assert_named_after_their_package(&wit_root());
}

/// Parses `package rho:tool@<version>;` into its name (for the rule's table).
fn name_at(version: &str) -> PackageName {
    let mut resolve = Resolve::default();
    let id = resolve
        .push_str("v.wit", &format!("package {NAMESPACE}:{NAME}@{version};"))
        .unwrap();
    resolve.packages[id].name.clone()
}

/// Which pairs are checked follows Cargo's caret rules.
#[test]
fn compatible_pairs_follow_cargo_semver_rules() {
    let cases = [
        ("0.1.0", "0.1.1", true),
        ("0.1.0", "0.1.9", true),
        ("0.1.0", "0.2.0", false),
        ("0.1.1", "0.1.0", false),
        ("0.1.0", "0.1.0", false),
        ("0.0.1", "0.0.2", false),
        ("1.0.0", "1.4.2", true),
        ("1.4.2", "2.0.0", false),
        ("0.9.0", "1.0.0", false),
        ("0.1.0", "0.1.1-draft", false),
        ("0.2.0-alpha", "0.2.0", true),
        ("0.2.0-alpha", "0.2.0-beta", true),
        ("0.2.0-alpha", "0.2.1", true),
    ];
    for (older, newer, expected) in cases {
        assert_eq!(
            must_be_compatible(&name_at(older), &name_at(newer)),
            expected,
            "{older} -> {newer}"
        );
    }
}

// ---- The check itself, on synthetic next versions derived from the real package ----

/// The real released package's main file, with its `package` line.
fn base_text() -> (String, String) {
    let text = fs::read_to_string(wit_root().join(BASE_DIR).join(WIT_FILE)).unwrap();
    let package_line = format!("package {}", package_name(&wit_root().join(BASE_DIR)));
    assert!(
        text.contains(&format!("{package_line};")),
        "{package_line}; not found"
    );
    (text, package_line)
}

/// Replaces the single occurrence of `from` in `text` with `to`; fails if `from` does not occur
/// exactly once (so a change to the real package cannot turn a test into a no-op).
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "expected exactly one `{from}` in the real {BASE_DIR}/{WIT_FILE}"
    );
    let edited = text.replacen(from, to, 1);
    assert_ne!(edited, text);
    edited
}

/// A temporary `plugin-sdk/wit/`: a copy of the real released package, and a synthetic next
/// `version` that is the same package with its `package` line bumped and `edit` applied to its
/// main file. Both pass the naming rule the real packages must follow.
fn synthetic_wit_root(version: &str, edit: impl FnOnce(&str) -> String) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let real = wit_root().join(BASE_DIR);
    let older = root.path().join(BASE_DIR);
    let newer = root.path().join(format!("{DIR_PREFIX}{version}"));
    for dir in [&older, &newer] {
        fs::create_dir(dir).unwrap();
        for entry in fs::read_dir(&real).unwrap() {
            let path = entry.unwrap().path();
            fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    let (text, package_line) = base_text();
    let bumped = replace_once(
        &text,
        &format!("{package_line};"),
        &format!("package {NAMESPACE}:{NAME}@{version};"),
    );
    fs::write(newer.join(WIT_FILE), edit(&bumped)).unwrap();
    assert_named_after_their_package(root.path());
    assert_eq!(packages(root.path()).len(), 2);
    root
}

/// The next patch version of the real package, edited by `edit`, checked as the real ones are.
fn check_patch_upgrade(edit: impl FnOnce(&str) -> String) -> Result<(), String> {
    let root = synthetic_wit_root("0.1.1", edit);
    check_versions(root.path())
}

/// Asserts that the check refuses the upgrade with a message naming both versions, the world
/// and `mentioning` (from wit-component's explanation).
fn assert_incompatible(result: Result<(), String>, mentioning: &str) {
    let message = result.expect_err("the change must be refused");
    for part in [
        "rho:tool@0.1.1 is not a compatible upgrade of rho:tool@0.1.0",
        "world `tool-provider`",
        mentioning,
    ] {
        assert!(message.contains(part), "`{part}` missing from: {message}");
    }
}

/// Sanity: the unchanged package (only its version bumped) is a compatible upgrade.
#[test]
fn check_accepts_an_unchanged_package() {
    check_patch_upgrade(str::to_owned).unwrap();
}

/// A new function in the imported `host` interface: older components do not call it.
#[test]
fn check_accepts_a_new_host_function() {
    check_patch_upgrade(|text| {
        replace_once(
            text,
            "    is-cancelled: func() -> bool;\n",
            "    is-cancelled: func() -> bool;\n\n    \
             /// Milliseconds left before the call's deadline.\n    \
             time-left: func() -> option<u64>;\n",
        )
    })
    .unwrap();
}

/// New types, a new interface and a new world beside the existing ones.
#[test]
fn check_accepts_new_types_interfaces_and_worlds() {
    check_patch_upgrade(|text| {
        let text = replace_once(
            text,
            "interface types {\n",
            "interface types {\n    /// A new shape.\n    record span { start: u32, end: u32 }\n\n",
        );
        format!(
            "{text}\n/// A new interface.\ninterface resources {{\n    \
             read: func(uri: string) -> result<string, string>;\n}}\n\n\
             /// A new world.\nworld resource-provider {{\n    import host;\n    \
             export resources;\n}}\n"
        )
    })
    .unwrap();
}

/// A removed host function: older components import it.
#[test]
fn check_refuses_a_removed_host_function() {
    let result =
        check_patch_upgrade(|text| replace_once(text, "    is-cancelled: func() -> bool;\n", ""));
    assert_incompatible(result, "missing expected export `is-cancelled`");
}

/// A changed signature of an exported function.
#[test]
fn check_refuses_a_changed_function_signature() {
    let result = check_patch_upgrade(|text| {
        replace_once(
            text,
            "call-tool: func(name: string, arguments: string)",
            "call-tool: func(name: string, arguments: list<u8>)",
        )
    });
    assert_incompatible(result, "type mismatch in function parameter `arguments`");
}

/// A changed field of a record the world uses.
#[test]
fn check_refuses_a_changed_record_field() {
    let result = check_patch_upgrade(|text| {
        replace_once(
            text,
            "        description: string,\n",
            "        description: option<string>,\n",
        )
    });
    assert_incompatible(result, "type mismatch in record field `description`");
}

/// A new function in the exported `tools` interface: older components do not export it, so
/// this is not compatible (the direction `semver_check` checks).
#[test]
fn check_refuses_a_new_export_function() {
    let result = check_patch_upgrade(|text| {
        replace_once(
            text,
            "    list-tools: func() -> list<tool-spec>;\n",
            "    list-tools: func() -> list<tool-spec>;\n\n    \
             /// Releases resources before unloading.\n    \
             shutdown: func();\n",
        )
    });
    assert_incompatible(result, "missing expected export `shutdown`");
}

/// A world of the older package missing from the newer one.
#[test]
fn check_refuses_a_removed_world() {
    let result = check_patch_upgrade(|text| {
        replace_once(text, "world tool-provider {", "world tool-host {")
    });
    assert_incompatible(
        result,
        "world `tool-provider` is missing from rho:tool@0.1.1",
    );
}

/// An incompatible change in a new minor version (0.x) is allowed: the pair is not checked.
#[test]
fn check_skips_a_new_minor_version() {
    let root = synthetic_wit_root("0.2.0", |text| {
        replace_once(text, "    is-cancelled: func() -> bool;\n", "")
    });
    check_versions(root.path()).unwrap();
}
