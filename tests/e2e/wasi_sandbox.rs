//! The WASI sandbox of WASM tool components, tested from inside a real guest: `fs-probe`
//! (`tests/guests/fs-probe`, built by `tests/guests/build.sh` into `tests/guests/fs_probe.wasm`)
//! is a Rust component written with `rho-plugin-sdk` whose one tool, `probe`, tries a plain
//! `std` call through WASI (`std::fs`, `std::env`, `std::net`; never rho's `read-file` import)
//! and reports the `std::io::ErrorKind` it got. It runs through the real `rho` binary
//! (`rho tools call wasm__fs-probe__probe`) as a user plugin whose `dev.rho` settings each test
//! chooses.
//!
//! The layout: `<base>/project` is the workspace (rho's `--cwd`), preopened for the guest at
//! `/workspace`; `<base>/outside.txt` sits just outside it and `<base>/outside/canary/` is a
//! directory outside it, both holding the canary marker; the workspace holds links to both.
//! Every call asserts the marker never appears in rho's output, and the tests compare
//! everything under `<base>` outside the workspace and the home before and after.
//!
//! Two outcomes of a refused path, both pinned:
//! - `NotFound`: no preopen covers the path (`/etc/passwd`, any host path, everything when the
//!   workspace is `none`; then the working directory stays `/`, see below, so a bare relative
//!   path is also `NotFound`).
//! - `PermissionDenied` (WASI `not-permitted`): the path starts in the preopen but leaves it
//!   (`..`, a link out), or it writes to a read-only preopen; wasmtime-wasi refused it.
//!
//! The working directory: Rust 1.95's wasi-libc starts a guest in `/` whatever the host's
//! `initial_cwd`, so the SDK changes to `/workspace` at the start of every call (asserted
//! below); without workspace access that fails and the guest stays in `/`. The probe's `cwd`
//! argument changes directory first, which is how the relative `..` cases below start in a
//! chosen directory.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use rho_e2e::*;
use serde_json::{Value, json};

const PROBE: &str = "wasm__fs-probe__probe";
/// The guest's view of the workspace (`rho_wasm`'s `GUEST_WORKSPACE`).
const GUEST_WORKSPACE: &str = "/workspace";
/// A path that no preopen covers.
const NO_PREOPEN: &str = "NotFound";
/// A path the preopen refuses (it leaves the workspace, or writes to a read-only one).
const REFUSED: &str = "PermissionDenied";

const NOTES: &str = "inside notes\n";
const NESTED: &str = "nested inside\n";
const DECLARED_VALUE: &str = "declared-value";
const UNDECLARED_VALUE: &str = "undeclared-value";
const SECRET_VALUE: &str = "sk-probe-secret-5f1e0c";

/// The committed guest.
fn probe_wasm() -> PathBuf {
    repo_root().join("tests/guests/fs_probe.wasm")
}

/// A sandbox with the probe plugin installed, a workspace with files and links, and files
/// outside it that must never be read or changed.
struct World {
    sb: Sandbox,
    canary: Canary,
    /// `<base>/outside.txt`, just outside the workspace (holds the canary marker).
    outside_file: PathBuf,
    /// Everything outside the workspace and the home at the start.
    before: BTreeMap<PathBuf, Vec<u8>>,
}

impl World {
    /// The world with the component's settings `settings` (its `dev.rho` tool entry).
    fn new(settings: Value) -> Self {
        let sb = Sandbox::new();
        let canary = Canary::new(&sb);
        let base = sb.project.parent().unwrap().to_path_buf();
        let outside_file = base.join("outside.txt");
        std::fs::write(&outside_file, format!("{}\n", canary.marker)).unwrap();

        let ws = &sb.project;
        write(&ws.join("notes.txt"), NOTES);
        write(&ws.join("sub/nested.txt"), NESTED);
        symlink(&outside_file, ws.join("link_file"));
        symlink("../outside.txt", ws.join("link_rel"));
        symlink(&canary.dir, ws.join("link_dir"));
        symlink("../outside/canary", ws.join("link_dir_rel"));
        symlink(base.join("made-through-link.txt"), ws.join("link_dangling"));
        symlink("sub/nested.txt", ws.join("link_inside"));

        let plugin = sb.user_plugins().join("fs-probe");
        make_plugin(&plugin, "fs-probe");
        let manifest_path = plugin.join("plugin.json");
        let mut manifest: Value =
            serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
        manifest["extensions"] = json!({"dev.rho": {"tools": {"fs_probe": settings}}});
        write(
            &manifest_path,
            serde_json::to_vec_pretty(&manifest).unwrap(),
        );
        let tools = plugin.join("dev.rho/tools");
        std::fs::create_dir_all(&tools).unwrap();
        std::fs::copy(probe_wasm(), tools.join("fs_probe.wasm")).unwrap();

        let mut world = Self {
            sb,
            canary,
            outside_file,
            before: BTreeMap::new(),
        };
        world.before = world.outside_snapshot();
        world
    }

    fn base(&self) -> PathBuf {
        self.sb.project.parent().unwrap().to_path_buf()
    }

    /// Every path under `<base>` that is neither in the workspace nor in the home, with the
    /// bytes of files (links and directories count by name).
    fn outside_snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        walk(&self.base())
            .into_iter()
            .filter(|p| !p.starts_with(&self.sb.project) && !p.starts_with(&self.sb.home))
            .map(|p| {
                let meta = std::fs::symlink_metadata(&p).unwrap();
                let bytes = if meta.is_file() {
                    std::fs::read(&p).unwrap()
                } else {
                    Vec::new()
                };
                (p, bytes)
            })
            .collect()
    }

    /// Asserts nothing outside the workspace and the home was created, changed or removed.
    fn assert_outside_untouched(&self) {
        assert_eq!(
            self.outside_snapshot(),
            self.before,
            "something outside the workspace changed"
        );
        self.canary.assert_untouched();
    }

    /// Runs `rho` with the probe's environment (two plain variables and one rho reads a
    /// secret from when the config says so); asserts the canary marker is not in its output.
    fn rho(&self, args: &[&str]) -> Run {
        let run = self.sb.rho_env(
            &[
                ("PROBE_DECLARED", DECLARED_VALUE),
                ("PROBE_UNDECLARED", UNDECLARED_VALUE),
                ("PROBE_SECRET", SECRET_VALUE),
            ],
            args,
        );
        self.canary.assert_absent(&run.stdout);
        self.canary.assert_absent(&run.stderr);
        run
    }

    /// One `probe` call; returns its structured result (the call itself always succeeds: a
    /// failed operation is reported, not raised).
    fn probe(&self, args: Value) -> Value {
        let result = self
            .rho(&["tools", "call", PROBE, &args.to_string(), "--json"])
            .ok()
            .json();
        assert_eq!(result["is_error"], false, "{args}: {result:#}");
        let structured = result["structured_content"].clone();
        assert!(structured["ok"].is_boolean(), "{args}: {result:#}");
        structured
    }

    /// A probe that must succeed; returns its result.
    fn ok(&self, args: Value) -> Value {
        let out = self.probe(args.clone());
        assert_eq!(out["ok"], true, "{args}: {out:#}");
        out
    }

    /// A probe that must fail with the `std::io::ErrorKind` `kind`.
    fn fails(&self, args: Value, kind: &str) {
        let out = self.probe(args.clone());
        assert_eq!(out["ok"], false, "{args} must fail: {out:#}");
        assert_eq!(out["kind"], kind, "{args}: {out:#}");
    }

    /// The workspace file `rel` on the host, if it exists.
    fn on_disk(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.sb.project.join(rel)).ok()
    }
}

/// The guest path of workspace entry `rel`.
fn guest(rel: &str) -> String {
    format!("{GUEST_WORKSPACE}/{rel}")
}

/// Every way out of the workspace a read or a write may try, with the outcome it must have.
/// Paths starting in `/workspace` (directly, relative to the call's working directory which
/// the SDK sets to it, or through the probe's `cwd`) reach wasmtime-wasi and are refused
/// there; the absolute host paths name no preopen at all.
fn escapes(world: &World) -> Vec<(Value, &'static str)> {
    let outside_abs = world.outside_file.to_str().unwrap().to_owned();
    let canary_abs = world.canary.file.to_str().unwrap().to_owned();
    vec![
        (json!({"path": "../outside.txt"}), REFUSED),
        (
            json!({"path": "../outside.txt", "cwd": GUEST_WORKSPACE}),
            REFUSED,
        ),
        (
            json!({"path": "../../outside.txt", "cwd": guest("sub")}),
            REFUSED,
        ),
        (json!({"path": guest("../outside.txt")}), REFUSED),
        (json!({"path": guest("sub/../../outside.txt")}), REFUSED),
        (json!({"path": "/etc/passwd"}), NO_PREOPEN),
        (json!({"path": outside_abs}), NO_PREOPEN),
        (json!({"path": canary_abs}), NO_PREOPEN),
        // Links in the workspace that point out: absolute and relative, to a file and to a
        // directory, and one that dangles to a path outside.
        (json!({"path": guest("link_file")}), REFUSED),
        (
            json!({"path": "link_file", "cwd": GUEST_WORKSPACE}),
            REFUSED,
        ),
        (json!({"path": guest("link_rel")}), REFUSED),
        (json!({"path": guest("link_dir/secret.txt")}), REFUSED),
        (json!({"path": guest("link_dir_rel/secret.txt")}), REFUSED),
        (json!({"path": guest("link_dangling")}), REFUSED),
    ]
}

/// `base` with `extra` merged in.
fn with(base: &Value, extra: &Value) -> Value {
    let mut merged = base.clone();
    for (k, v) in extra.as_object().unwrap() {
        merged[k] = v.clone();
    }
    merged
}

#[test]
fn without_workspace_access_the_guest_has_no_file_system() {
    let world = World::new(json!({"workspace": "none"}));
    for args in [
        json!({"op": "read", "path": guest("notes.txt")}),
        json!({"op": "read", "path": "notes.txt"}),
        json!({"op": "read", "path": world.outside_file.to_str().unwrap()}),
        json!({"op": "read", "path": "/etc/passwd"}),
        json!({"op": "list", "path": GUEST_WORKSPACE}),
        json!({"op": "list", "path": "/"}),
        json!({"op": "list", "path": "."}),
        // Not even the mount point exists.
        json!({"op": "cwd", "cwd": GUEST_WORKSPACE}),
        json!({"op": "write", "path": guest("new.txt"), "content": "x"}),
        json!({"op": "write", "path": "new.txt", "content": "x"}),
    ] {
        world.fails(args, NO_PREOPEN);
    }
    assert_eq!(world.on_disk("new.txt"), None);
    assert_eq!(world.on_disk("notes.txt").as_deref(), Some(NOTES));
    world.assert_outside_untouched();
}

#[test]
fn a_read_only_workspace_is_readable_at_its_guest_path() {
    let world = World::new(json!({"workspace": "read"}));
    let out = world.ok(json!({"op": "read", "path": guest("notes.txt")}));
    assert_eq!(out["content"], NOTES, "{out:#}");
    assert_eq!(out["len"], NOTES.len(), "{out:#}");
    let out = world.ok(json!({"op": "read", "path": guest("sub/nested.txt")}));
    assert_eq!(out["content"], NESTED, "{out:#}");
    // Every call starts in the workspace (the SDK's doing), so relative paths mean it.
    let out = world.ok(json!({"op": "cwd"}));
    assert_eq!(out["cwd"], GUEST_WORKSPACE, "{out:#}");
    let out = world.ok(json!({"op": "read", "path": "sub/nested.txt"}));
    assert_eq!(out["content"], NESTED, "{out:#}");
    // From inside the mount, relative paths and `..` that stay inside work too.
    let out = world.ok(json!({"op": "cwd", "cwd": GUEST_WORKSPACE}));
    assert_eq!(out["cwd"], GUEST_WORKSPACE, "{out:#}");
    let out = world.ok(json!({"op": "read", "path": "notes.txt", "cwd": GUEST_WORKSPACE}));
    assert_eq!(out["content"], NOTES, "{out:#}");
    let out = world.ok(json!({"op": "read", "path": "../notes.txt", "cwd": guest("sub")}));
    assert_eq!(out["content"], NOTES, "{out:#}");
    // A link that stays inside is followed: links are not refused wholesale.
    let out = world.ok(json!({"op": "read", "path": guest("link_inside")}));
    assert_eq!(out["content"], NESTED, "{out:#}");
    let out = world.ok(json!({"op": "list", "path": GUEST_WORKSPACE}));
    assert_eq!(
        out["entries"],
        json!([
            ".git",
            "link_dangling",
            "link_dir",
            "link_dir_rel",
            "link_file",
            "link_inside",
            "link_rel",
            "notes.txt",
            "sub"
        ]),
        "{out:#}"
    );
    world.assert_outside_untouched();
}

#[test]
fn a_read_only_workspace_cannot_be_left_by_any_path() {
    let world = World::new(json!({"workspace": "read"}));
    for (args, kind) in escapes(&world) {
        world.fails(with(&json!({"op": "read"}), &args), kind);
    }
    // Listing the parent or a linked directory outside is refused the same way.
    for (path, kind) in [
        (guest(".."), REFUSED),
        (guest("sub/../.."), REFUSED),
        (guest("link_dir"), REFUSED),
        (guest("link_dir_rel"), REFUSED),
        ("/".to_owned(), NO_PREOPEN),
        (world.canary.dir.to_str().unwrap().to_owned(), NO_PREOPEN),
    ] {
        world.fails(json!({"op": "list", "path": path}), kind);
    }
    world.fails(
        json!({"op": "list", "path": "..", "cwd": GUEST_WORKSPACE}),
        REFUSED,
    );
    world.assert_outside_untouched();
}

#[test]
fn a_read_only_workspace_cannot_be_changed() {
    let world = World::new(json!({"workspace": "read"}));
    let attempts = [
        json!({"op": "write", "path": guest("new.txt"), "content": "created"}),
        json!({"op": "write", "path": "new.txt", "content": "created", "cwd": GUEST_WORKSPACE}),
        json!({"op": "write", "path": guest("sub/new.txt"), "content": "created"}),
        json!({"op": "write", "path": guest("notes.txt"), "content": "overwritten"}),
        json!({"op": "remove", "path": guest("notes.txt")}),
        json!({"op": "remove", "path": guest("link_file")}),
        json!({"op": "symlink", "path": guest("planted"), "target": "notes.txt"}),
    ];
    for args in attempts {
        world.fails(args, REFUSED);
    }
    // Nor can anything outside be changed through it.
    for (args, kind) in escapes(&world) {
        world.fails(
            with(&json!({"op": "write", "content": "overwritten"}), &args),
            kind,
        );
    }
    assert_eq!(world.on_disk("new.txt"), None);
    assert_eq!(world.on_disk("sub/new.txt"), None);
    assert_eq!(world.on_disk("notes.txt").as_deref(), Some(NOTES));
    assert!(
        std::fs::symlink_metadata(world.sb.project.join("link_file"))
            .unwrap()
            .is_symlink()
    );
    assert!(
        std::fs::symlink_metadata(world.sb.project.join("planted")).is_err(),
        "no link was planted"
    );
    world.assert_outside_untouched();
}

#[test]
fn a_read_write_workspace_is_writable_inside() {
    let world = World::new(json!({"workspace": "read-write"}));
    world.ok(json!({"op": "write", "path": guest("new.txt"), "content": "written by the guest\n"}));
    assert_eq!(
        world.on_disk("new.txt").as_deref(),
        Some("written by the guest\n")
    );
    world.ok(json!({"op": "write", "path": "sub/made.txt", "content": "relative\n", "cwd": GUEST_WORKSPACE}));
    assert_eq!(world.on_disk("sub/made.txt").as_deref(), Some("relative\n"));
    world.ok(json!({"op": "write", "path": guest("notes.txt"), "content": "replaced\n"}));
    assert_eq!(world.on_disk("notes.txt").as_deref(), Some("replaced\n"));
    let out = world.ok(json!({"op": "read", "path": guest("notes.txt")}));
    assert_eq!(out["content"], "replaced\n", "{out:#}");
    // Writing through a link that stays inside writes its target.
    world.ok(json!({"op": "write", "path": guest("link_inside"), "content": "via link\n"}));
    assert_eq!(
        world.on_disk("sub/nested.txt").as_deref(),
        Some("via link\n")
    );
    world.ok(json!({"op": "remove", "path": guest("new.txt")}));
    assert_eq!(world.on_disk("new.txt"), None);
    // Removing a link that points out removes the link, not its target.
    world.ok(json!({"op": "remove", "path": guest("link_file")}));
    assert!(std::fs::symlink_metadata(world.sb.project.join("link_file")).is_err());
    // A link whose target stays inside may be made, and is followed.
    world.ok(json!({"op": "symlink", "path": guest("inner"), "target": "sub/made.txt"}));
    let out = world.ok(json!({"op": "read", "path": guest("inner")}));
    assert_eq!(out["content"], "relative\n", "{out:#}");
    world.assert_outside_untouched();
}

#[test]
fn a_read_write_workspace_cannot_write_outside() {
    let world = World::new(json!({"workspace": "read-write"}));
    for (args, kind) in escapes(&world) {
        world.fails(
            with(&json!({"op": "write", "content": "overwritten"}), &args),
            kind,
        );
    }
    // New files next to the workspace and in a linked directory outside.
    let base = world.base();
    for (args, kind) in [
        (json!({"path": guest("../escaped.txt")}), REFUSED),
        (
            json!({"path": "../escaped.txt", "cwd": GUEST_WORKSPACE}),
            REFUSED,
        ),
        (json!({"path": guest("sub/../../escaped.txt")}), REFUSED),
        (json!({"path": guest("link_dir/new.txt")}), REFUSED),
        (json!({"path": guest("link_dir_rel/new.txt")}), REFUSED),
        (
            json!({"path": base.join("escaped.txt").to_str().unwrap()}),
            NO_PREOPEN,
        ),
    ] {
        world.fails(with(&json!({"op": "write", "content": "x"}), &args), kind);
    }
    for path in [guest("link_dir/secret.txt"), guest("../outside.txt")] {
        world.fails(json!({"op": "remove", "path": path}), REFUSED);
    }
    world.fails(
        json!({"op": "symlink", "path": guest("planted_abs"), "target": "/etc/passwd"}),
        REFUSED,
    );
    assert!(std::fs::symlink_metadata(world.sb.project.join("planted_abs")).is_err());
    world.fails(
        json!({"op": "symlink", "path": guest("../planted"), "target": "notes.txt"}),
        REFUSED,
    );
    assert_eq!(
        world.on_disk("link_file"),
        Some(format!("{}\n", world.canary.marker))
    );
    world.assert_outside_untouched();
}

#[test]
fn a_link_the_guest_plants_pointing_out_leads_nowhere() {
    let world = World::new(json!({"workspace": "read-write"}));
    // wasmtime-wasi (cap-std) refuses absolute link targets but stores a relative one as it
    // is, even one that climbs out: the link exists on the host afterwards.
    world.ok(json!({"op": "symlink", "path": guest("planted"), "target": "../outside.txt"}));
    let planted = world.sb.project.join("planted");
    assert_eq!(
        std::fs::read_link(&planted).unwrap(),
        Path::new("../outside.txt")
    );
    // The guest cannot follow it, in this call or the next.
    world.fails(json!({"op": "read", "path": guest("planted")}), REFUSED);
    world.fails(
        json!({"op": "write", "path": guest("planted"), "content": "overwritten"}),
        REFUSED,
    );
    // Nor can rho's own file tools, which a later step of the session might use on it.
    let run = world.rho(&[
        "tools",
        "call",
        "read_file",
        r#"{"path": "planted"}"#,
        "--json",
    ]);
    let result = run.code(1).json();
    assert_eq!(result["is_error"], true, "{result:#}");
    assert!(
        result["text"]
            .as_str()
            .unwrap()
            .starts_with("path `planted` is outside the workspace"),
        "{result:#}"
    );
    let run = world.rho(&[
        "tools",
        "call",
        "write_file",
        r#"{"path": "planted", "content": "overwritten"}"#,
        "--json",
    ]);
    assert_eq!(run.json()["is_error"], true, "{}", run.stdout);
    world.assert_outside_untouched();
}

#[test]
fn only_declared_non_secret_variables_reach_the_guest() {
    let world = World::new(json!({
        "workspace": "none",
        "env": ["PROBE_DECLARED", "PROBE_SECRET", "PROBE_UNSET"],
    }));
    // rho's environment holds PATH, HOME, RHO_HOME and three PROBE_ variables; the guest sees
    // the declared ones that are set.
    let out = world.ok(json!({"op": "env"}));
    assert_eq!(
        out["names"],
        json!(["PROBE_DECLARED", "PROBE_SECRET"]),
        "{out:#}"
    );
    let out = world.ok(json!({"op": "env", "name": "PROBE_DECLARED"}));
    assert_eq!(out["value"], DECLARED_VALUE, "{out:#}");
    for name in [
        "PROBE_UNDECLARED",
        "PROBE_UNSET",
        "PATH",
        "HOME",
        "RHO_HOME",
    ] {
        let out = world.ok(json!({"op": "env", "name": name}));
        assert_eq!(out["value"], Value::Null, "{name}: {out:#}");
    }
    // Once rho reads a secret from PROBE_SECRET (a provider's api_key_env), the declaration no
    // longer passes it, and its value appears nowhere.
    world.sb.write_config(
        "[providers.hosted]\nendpoint = \"https://api.example.com/v1\"\napi_key_env = \"PROBE_SECRET\"\n",
    );
    let out = world.ok(json!({"op": "env"}));
    assert_eq!(out["names"], json!(["PROBE_DECLARED"]), "{out:#}");
    let run = world.rho(&[
        "tools",
        "call",
        PROBE,
        r#"{"op": "env", "name": "PROBE_SECRET"}"#,
        "--json",
    ]);
    assert!(!run.stdout.contains(SECRET_VALUE), "{}", run.stdout);
    assert!(!run.stderr.contains(SECRET_VALUE), "{}", run.stderr);
    let out = run.ok().json();
    assert_eq!(out["structured_content"]["value"], Value::Null, "{out:#}");
}

#[test]
fn the_guest_cannot_open_a_tcp_connection() {
    // The widest file access, to show it grants no network.
    let world = World::new(json!({"workspace": "read-write"}));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    world.fails(
        json!({"op": "connect", "addr": format!("127.0.0.1:{port}")}),
        REFUSED,
    );
    // A name needs a lookup, which is not granted either.
    let out = world.probe(json!({"op": "connect", "addr": format!("localhost:{port}")}));
    assert_eq!(out["ok"], false, "{out:#}");
    // The listener never saw a connection.
    listener.set_nonblocking(true).unwrap();
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the guest reached the listener: {other:?}"),
    }
}
