//! Adversarial inputs (the catalogue in `docs/adversarial.md`, sections A–C), through the real
//! binary: each gets a clear diagnostic or error, nothing panics or hangs, siblings still load,
//! and nothing outside a managed root is read, copied or changed.

use std::path::Path;
use std::time::{Duration, Instant};

use rho_e2e::*;

fn assert_no_panic(run: &Run) {
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

/// A healthy sibling that must load whatever its neighbours do (failure isolation, §11.3).
fn sibling(sb: &Sandbox) {
    let dir = sb.user_plugins().join("healthy");
    make_plugin(&dir, "healthy");
    make_skill(
        &dir.join("skills"),
        "fine",
        "A fine skill. Use when checking isolation.",
    );
}

fn assert_sibling_loaded(sb: &Sandbox) {
    let p = sb.plugin("healthy");
    assert_eq!(p["status"], "loaded");
    assert_eq!(strings(&p["skills"]), ["fine"]);
}

// ---------- A. Manifest and skill parsing ----------

#[test]
fn a2_a3_a4_huge_deep_and_non_utf8_manifests_are_rejected() {
    let sb = Sandbox::new();
    sibling(&sb);
    let huge = sb.user_plugins().join("huge");
    std::fs::create_dir_all(&huge).unwrap();
    let file = std::fs::File::create(huge.join("plugin.json")).unwrap();
    file.set_len(1 << 30).unwrap(); // 1 GiB sparse
    make_plugin(&sb.user_plugins().join("deep"), "deep");
    write(
        &sb.user_plugins().join("deep/plugin.json"),
        "[".repeat(100_000),
    );
    write(&sb.user_plugins().join("latin1/plugin.json"), b"{\"$schema\":\"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json\",\"name\":\"caf\xe9\"}".as_slice());
    let started = Instant::now();
    let run = sb.rho(&["plugins", "list", "--json"]).ok();
    assert!(started.elapsed() < Duration::from_secs(5), "bounded time");
    assert_no_panic(&run);
    let plugins = run.json()["plugins"].as_array().unwrap().clone();
    let by_entry = |name: &str| {
        plugins
            .iter()
            .find(|p| p["entry"].as_str().unwrap().ends_with(&format!("/{name}")))
            .unwrap()
            .clone()
    };
    assert_eq!(codes(&by_entry("huge")), ["manifest-unreadable"]);
    assert!(
        by_entry("huge")["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("limit")
    );
    assert_eq!(codes(&by_entry("deep")), ["manifest-invalid-json"]);
    assert_eq!(codes(&by_entry("latin1")), ["manifest-invalid-json"]);
    assert_sibling_loaded(&sb);
}

#[test]
fn a10_bad_names_are_rejected_without_touching_the_filesystem() {
    let sb = Sandbox::new();
    for (i, name) in [
        "",
        "-x",
        "x-",
        "a--b",
        "a..b",
        "A",
        &"a".repeat(65),
        "é",
        "a/b",
        "a\\\\b",
        ".",
        "..",
    ]
    .iter()
    .enumerate()
    {
        write(
            &sb.user_plugins().join(format!("case{i}/plugin.json")),
            format!(
                r#"{{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"{name}"}}"#
            ),
        );
    }
    let plugins = sb.plugins();
    assert_eq!(plugins.len(), 12);
    for p in &plugins {
        assert_eq!(p["status"], "rejected", "{p:#}");
        let mut c = codes(p);
        c.dedup();
        assert_eq!(c, ["manifest-invalid"], "{p:#}");
    }
}

#[test]
fn a13_control_characters_are_escaped_for_the_terminal() {
    let sb = Sandbox::new();
    write(
        &sb.user_plugins().join("evil/plugin.json"),
        r#"{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"evil","version":"1\u001b[31m\u202e","description":"x"}"#,
    );
    let run = sb.rho(&["plugins", "list"]).ok();
    assert!(
        !run.stdout.contains('\u{1b}') && !run.stdout.contains('\u{202e}'),
        "{:?}",
        run.stdout
    );
    assert!(run.stdout.contains("\\u{1b}"), "{}", run.stdout);
    let run = sb.rho(&["plugins", "inspect", "evil"]).ok();
    assert!(!run.stdout.contains('\u{1b}'));
    // JSON keeps the data exactly (escaped by JSON itself).
    assert_eq!(sb.plugin("evil")["version"], "1\u{1b}[31m\u{202e}");
}

#[test]
fn a20_too_many_servers_are_capped_and_reported() {
    let sb = Sandbox::new();
    let dir = sb.user_plugins().join("many");
    make_plugin(&dir, "many");
    let servers: Vec<String> = (0..10_000)
        .map(|i| format!(r#""s{i:05}":{{"type":"stdio","command":"npx"}}"#))
        .collect();
    make_mcp(&dir, &format!("{{{}}}", servers.join(",")));
    let p = sb.plugin("many");
    assert_eq!(p["mcp_servers"].as_array().unwrap().len(), 128);
    assert!(codes(&p).contains(&"mcp-too-many-servers".to_string()));
}

#[test]
fn a22_large_bodies_are_not_read_at_discovery_and_huge_frontmatter_is_capped() {
    let sb = Sandbox::new();
    let dir = sb.user_plugins().join("big");
    make_plugin(&dir, "big");
    let skill = dir.join("skills/large-body/SKILL.md");
    write(
        &skill,
        "---\nname: large-body\ndescription: Has a 1 GiB body. Use for testing.\n---\n",
    );
    let f = std::fs::OpenOptions::new()
        .append(true)
        .open(&skill)
        .unwrap();
    f.set_len(1 << 30).unwrap();
    let mut fm = String::from("---\nname: huge-frontmatter\ndescription: x\nlicense: |\n");
    while fm.len() < 10 << 20 {
        fm.push_str("  lorem ipsum dolor sit amet\n");
    }
    fm.push_str("---\n");
    write(&dir.join("skills/huge-frontmatter/SKILL.md"), fm);
    let started = Instant::now();
    let p = sb.plugin("big");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(strings(&p["skills"]), ["large-body"]);
    let msg = p["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["component"] == "big/huge-frontmatter")
        .unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(msg.contains("exceeds 65536 bytes"), "{msg}");
    // Showing it reads a capped body.
    let shown = sb
        .rho(&["skills", "show", "large-body", "--json"])
        .ok()
        .json();
    assert!(shown["body"].as_str().unwrap().len() <= 1024 * 1024 + 200);
}

#[test]
fn a23_alias_bombs_and_tags_are_refused_quickly() {
    let sb = Sandbox::new();
    let dir = sb.user_plugins().join("yaml");
    make_plugin(&dir, "yaml");
    let mut bomb = String::from("---\nname: bomb\ndescription: d\nmetadata:\n  a0: &a0 lol\n");
    for i in 1..12 {
        let prev = format!("*a{}", i - 1);
        bomb.push_str(&format!("  a{i}: &a{i} [{}]\n", vec![prev; 10].join(",")));
    }
    bomb.push_str("---\n");
    write(&dir.join("skills/bomb/SKILL.md"), bomb);
    write(
        &dir.join("skills/tagged/SKILL.md"),
        "---\nname: !!python/object:os.system tagged\ndescription: d\n---\n",
    );
    make_skill(&dir.join("skills"), "ok", "Fine. Use when testing.");
    let started = Instant::now();
    let p = sb.plugin("yaml");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(strings(&p["skills"]), ["ok"]);
    assert_eq!(
        codes(&p).iter().filter(|c| *c == "skill-invalid").count(),
        2
    );
}

#[test]
fn a30_crlf_and_bom_skills_load() {
    let sb = Sandbox::new();
    let dir = sb.user_plugins().join("crlf");
    make_plugin(&dir, "crlf");
    write(
        &dir.join("skills/windows/SKILL.md"),
        "\u{feff}---\r\nname: windows\r\ndescription: Written on Windows.\r\n---\r\n\r\n# Body\r\n",
    );
    assert_eq!(strings(&sb.plugin("crlf")["skills"]), ["windows"]);
}

#[test]
fn a33_fifos_never_block_discovery() {
    let sb = Sandbox::new();
    sibling(&sb);
    make_fifo(&sb.user_plugins().join("fifo-manifest/plugin.json"));
    let dir = sb.user_plugins().join("fifo-parts");
    make_plugin(&dir, "fifo-parts");
    make_fifo(&dir.join("mcp.json"));
    make_fifo(&dir.join("skills/piped/SKILL.md"));
    make_skill(&dir.join("skills"), "real", "Real. Use when testing.");
    let started = Instant::now();
    let run = sb.rho(&["plugins", "list", "--json"]).ok();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "no blocking open"
    );
    let plugins = run.json()["plugins"].as_array().unwrap().clone();
    let fifo = plugins
        .iter()
        .find(|p| p["entry"].as_str().unwrap().ends_with("/fifo-manifest"))
        .unwrap();
    assert_eq!(fifo["status"], "rejected");
    assert_eq!(codes(fifo), ["manifest-unreadable"]);
    let parts = plugins.iter().find(|p| p["name"] == "fifo-parts").unwrap();
    assert_eq!(strings(&parts["skills"]), ["real"]);
    let mut c = codes(parts);
    c.sort();
    assert_eq!(c, ["mcp-config-invalid", "skill-invalid"]);
    assert_sibling_loaded(&sb);
    // skills validate on a FIFO SKILL.md does not block either.
    let run = sb
        .rho(&[
            "skills",
            "validate",
            dir.join("skills/piped").to_str().unwrap(),
        ])
        .code(1);
    assert!(run.stdout.contains("regular file"), "{}", run.stdout);
}

// ---------- B. Path containment ----------

#[test]
fn b1_b2_b3_b4_escaping_links_fail_at_the_narrowest_boundary() {
    let sb = Sandbox::new();
    let canary = Canary::new(&sb);
    sibling(&sb);
    // B1: skills/ links out: the skills type is invalid, MCP still loads.
    let b1 = sb.user_plugins().join("b1");
    make_plugin(&b1, "b1");
    symlink(&canary.dir, b1.join("skills"));
    make_mcp(&b1, r#"{"ok":{"type":"stdio","command":"npx"}}"#);
    // B2: one SKILL.md links out: that skill is skipped, its sibling loads.
    let b2 = sb.user_plugins().join("b2");
    make_plugin(&b2, "b2");
    std::fs::create_dir_all(b2.join("skills/sub")).unwrap();
    symlink(
        canary.dir.join("sub/SKILL.md"),
        b2.join("skills/sub/SKILL.md"),
    );
    make_skill(&b2.join("skills"), "kept", "Kept. Use when testing.");
    // B3: plugin.json links out: the plugin is rejected.
    let b3 = sb.user_plugins().join("b3");
    std::fs::create_dir_all(&b3).unwrap();
    symlink(canary.dir.join("plugin.json"), b3.join("plugin.json"));
    // B4: a skill directory links into a sibling plugin.
    let b4 = sb.user_plugins().join("b4");
    make_plugin(&b4, "b4");
    symlink(
        sb.user_plugins().join("healthy/skills/fine"),
        b4.join("skills/fine"),
    );
    // B5: a chain of links that stays inside is allowed.
    let b5 = sb.user_plugins().join("b5");
    make_plugin(&b5, "b5");
    make_skill(&b5.join("real"), "chained", "Chained. Use when testing.");
    symlink("../real/chained", b5.join("skills/chained"));
    symlink("skills", b5.join("alias"));

    let run = sb.rho(&["plugins", "list", "--json"]).ok();
    canary.assert_absent(&run.stdout);
    canary.assert_absent(&run.stderr);
    let p = |n: &str| sb.plugin(n);
    assert_eq!(codes(&p("b1")), ["path-escape"]);
    assert_eq!(strings(&p("b1")["mcp_servers"]), ["ok"]);
    assert_eq!(strings(&p("b2")["skills"]), ["kept"]);
    assert_eq!(codes(&p("b2")), ["path-escape"]);
    let b3 = sb
        .plugins()
        .into_iter()
        .find(|p| p["entry"].as_str().unwrap().ends_with("/b3"))
        .unwrap();
    assert_eq!(b3["status"], "rejected");
    assert_eq!(codes(&b3), ["path-escape"]);
    assert_eq!(codes(&p("b4")), ["path-escape", "plugin-no-components"]);
    assert_eq!(strings(&p("b5")["skills"]), ["chained"]);
    assert_sibling_loaded(&sb);
    // Showing skills never reads the canary either.
    let skills = sb.rho(&["skills", "list", "--json"]).ok();
    canary.assert_absent(&skills.stdout);
    canary.assert_untouched();
}

#[test]
fn b6_b7_loops_and_dangling_links_do_not_hang() {
    let sb = Sandbox::new();
    sibling(&sb);
    let dir = sb.user_plugins().join("loops");
    make_plugin(&dir, "loops");
    symlink("a", dir.join("skills/b"));
    symlink("b", dir.join("skills/a"));
    symlink("self", dir.join("skills/self"));
    symlink("nowhere", dir.join("skills/dangling"));
    symlink("mcp.json", dir.join("mcp.json.loop"));
    symlink("missing.json", dir.join("mcp.json"));
    symlink("loop-entry", sb.user_plugins().join("loop-entry"));
    symlink(
        sb.outside("gone").join("nothing"),
        sb.user_plugins().join("dangling-plugin"),
    );
    let started = Instant::now();
    let run = sb.rho(&["plugins", "list", "--json"]).ok();
    assert!(started.elapsed() < Duration::from_secs(5));
    let json = run.json();
    let root_codes: Vec<_> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        root_codes,
        ["plugin-root-unreadable", "plugin-root-unreadable"],
        "broken plugin links are reported"
    );
    let p = sb.plugin("loops");
    assert_eq!(p["status"], "loaded");
    assert_eq!(
        codes(&p),
        ["mcp-config-invalid", "plugin-no-components"],
        "dangling mcp.json link reported"
    );
    assert_sibling_loaded(&sb);
}

#[test]
fn b8_bundled_command_through_an_escaping_link_is_invalid() {
    let sb = Sandbox::new();
    let dir = sb.user_plugins().join("cmd");
    make_plugin(&dir, "cmd");
    symlink("/usr/bin", dir.join("bin"));
    make_mcp(
        &dir,
        r#"{"env":{"type":"stdio","command":"./bin/env"},"up":{"type":"stdio","command":"./bin/../../x"},"ok":{"type":"stdio","command":"sh"}}"#,
    );
    let p = sb.plugin("cmd");
    assert_eq!(strings(&p["mcp_servers"]), ["ok"]);
    let msgs: Vec<_> = p["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("\"env\"") && m.contains("outside the plugin root")),
        "{msgs:?}"
    );
}

#[test]
fn b13_b15_data_cwd_may_not_exist_and_expansion_is_single_pass() {
    let sb = Sandbox::new();
    let dir = sb.user_plugins().join("${PLUGIN_DATA}");
    make_plugin(&dir, "literal");
    make_mcp(
        &dir,
        r#"{"s":{"type":"stdio","command":"npx","args":["${PLUGIN_ROOT}","${PLUGIN_DATA}"],"cwd":"${PLUGIN_DATA}/cache"}}"#,
    );
    let inspect = sb
        .rho(&["plugins", "inspect", "literal", "--json"])
        .ok()
        .json();
    let server = &inspect["mcp_server_details"][0];
    let root = sb.user_plugins().join("${PLUGIN_DATA}");
    let data = sb.user_plugins().join("data/literal");
    assert_eq!(
        strings(&server["args"]),
        [root.to_str().unwrap(), data.to_str().unwrap()]
    );
    assert_eq!(server["cwd"], data.join("cache").to_str().unwrap());
    assert!(!data.exists(), "not created by inspection");
}

#[test]
fn b17_b18_symlinked_ancestors_and_linked_plugin_roots() {
    let sb = Sandbox::new();
    // ~/.agents is a link to elsewhere: containment is relative to the resolved root.
    let real = sb.outside("real-agents");
    std::fs::create_dir_all(real.join("plugins")).unwrap();
    symlink(&real, sb.home.join(".agents"));
    let dir = real.join("plugins/anc");
    make_plugin(&dir, "anc");
    make_skill(&dir.join("skills"), "s", "S. Use when testing.");
    // A plugin entry that links to `/` has no plugin.json: not a plugin.
    symlink("/", real.join("plugins/root-link"));
    let p = sb.plugin("anc");
    assert_eq!(strings(&p["skills"]), ["s"]);
    assert_eq!(sb.plugins().len(), 1);
}

#[test]
fn b24_backslashes_are_plain_characters() {
    let sb = Sandbox::new();
    let dir = sb.user_plugins().join("bs");
    make_plugin(&dir, "bs");
    write(&dir.join("bin\\..\\..\\x"), "#!/bin/sh\n");
    make_mcp(
        &dir,
        r#"{"s":{"type":"stdio","command":"./bin\\..\\..\\x"}}"#,
    );
    let inspect = sb.rho(&["plugins", "inspect", "bs", "--json"]).ok().json();
    assert_eq!(
        inspect["mcp_server_details"][0]["command"],
        dir.join("bin\\..\\..\\x").to_str().unwrap()
    );
}

// ---------- C. Install, link and remove safety ----------

#[test]
fn c2_internal_links_are_recreated_and_c3_fifos_refuse_the_install() {
    let sb = Sandbox::new();
    let src = sb.outside("c2");
    make_plugin(&src, "c2");
    make_skill(&src.join("real"), "linked", "Linked. Use when testing.");
    symlink("../real/linked", src.join("skills/linked"));
    sb.rho(&["plugins", "install", src.to_str().unwrap()]).ok();
    let dest = sb.user_plugins().join("c2");
    assert_eq!(
        std::fs::read_link(dest.join("skills/linked")).unwrap(),
        Path::new("../real/linked")
    );
    assert_eq!(strings(&sb.plugin("c2")["skills"]), ["linked"]);

    let fifo_src = sb.outside("c3");
    make_plugin(&fifo_src, "c3");
    make_fifo(&fifo_src.join("pipe"));
    let started = Instant::now();
    let run = sb
        .rho(&["plugins", "install", fifo_src.to_str().unwrap()])
        .code(1);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        run.stderr.contains("fifo") && run.stderr.contains("pipe"),
        "{}",
        run.stderr
    );
    assert!(!sb.user_plugins().join("c3").exists());
}

#[test]
fn c1_absolute_links_even_inside_are_refused_on_install() {
    let sb = Sandbox::new();
    let src = sb.outside("abs");
    make_plugin(&src, "abs");
    write(&src.join("file"), "x");
    symlink(src.join("file"), src.join("abs-link"));
    let run = sb
        .rho(&["plugins", "install", src.to_str().unwrap()])
        .code(1);
    assert!(run.stderr.contains("absolute symlink"), "{}", run.stderr);
}

#[test]
fn c4_caps_on_depth_and_odd_names_are_handled() {
    let sb = Sandbox::new();
    let src = sb.outside("deep");
    make_plugin(&src, "deep");
    let mut path = src.clone();
    for _ in 0..40 {
        path = path.join("d");
    }
    write(&path.join("f"), "x");
    let run = sb
        .rho(&["plugins", "install", src.to_str().unwrap()])
        .code(1);
    assert!(run.stderr.contains("deeper than"), "{}", run.stderr);

    use std::os::unix::ffi::OsStrExt;
    let odd = sb.outside("odd");
    make_plugin(&odd, "odd");
    write(&odd.join("new\nline"), "x");
    write(&odd.join(std::ffi::OsStr::from_bytes(b"bad\xffname")), "y");
    write(&odd.join("n".repeat(255)), "z");
    sb.rho(&["plugins", "install", odd.to_str().unwrap()]).ok();
    let dest = sb.user_plugins().join("odd");
    assert!(dest.join("new\nline").is_file());
    assert!(
        dest.join(std::ffi::OsStr::from_bytes(b"bad\xffname"))
            .is_file()
    );
    assert!(dest.join("n".repeat(255)).is_file());
}

#[test]
fn c8_planted_destination_link_is_replaced_not_followed() {
    let sb = Sandbox::new();
    let canary = Canary::new(&sb);
    symlink(&canary.dir, sb.user_plugins().join("victim"));
    let src = sb.outside("victim-src");
    make_plugin(&src, "victim");
    let run = sb
        .rho(&["plugins", "install", src.to_str().unwrap()])
        .code(1);
    assert!(run.stderr.contains("--force"));
    sb.rho(&["plugins", "install", src.to_str().unwrap(), "--force"])
        .ok();
    let dest = sb.user_plugins().join("victim");
    assert!(
        !std::fs::symlink_metadata(&dest)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    canary.assert_untouched();
}

#[test]
fn c9_reserved_and_malformed_names() {
    let sb = Sandbox::new();
    let src = sb.outside("data-src");
    make_plugin(&src, "data");
    let run = sb
        .rho(&["plugins", "install", src.to_str().unwrap()])
        .code(1);
    assert!(run.stderr.contains("reserved"), "{}", run.stderr);
    assert!(!sb.user_plugins().join("data").exists());
    make_plugin(&sb.user_plugins().join("real"), "real");
    for name in [
        ".", "..", "", "data", "DATA", "-f", "a/b", "../x", "/etc", "real/",
    ] {
        let run = sb.rho(&["plugins", "remove", name, "--yes"]);
        assert_ne!(run.code, 0, "{name}");
        assert_no_panic(&run);
    }
    assert!(sb.user_plugins().join("real/plugin.json").exists());
}

#[test]
fn c11_c12_remove_through_links_never_touches_targets() {
    let sb = Sandbox::new();
    let canary = Canary::new(&sb);
    // A copy holding a link to the outside: removing the copy unlinks the link only.
    let dir = sb.user_plugins().join("holder");
    make_plugin(&dir, "holder");
    symlink(&canary.dir, dir.join("outside-link"));
    symlink(&canary.file, dir.join("file-link"));
    sb.rho(&["plugins", "remove", "holder", "--yes"]).ok();
    assert!(!dir.exists());
    canary.assert_untouched();
    // A linked plugin whose target holds a precious file.
    let target = sb.outside("precious");
    make_plugin(&target, "precious");
    write(&target.join("precious.txt"), "keep");
    sb.rho(&["plugins", "link", target.to_str().unwrap()]).ok();
    sb.rho(&["plugins", "remove", "precious", "--yes"]).ok();
    assert_eq!(
        std::fs::read_to_string(target.join("precious.txt")).unwrap(),
        "keep"
    );
    assert!(std::fs::symlink_metadata(sb.user_plugins().join("precious")).is_err());
}

#[test]
fn c18_deleted_link_target_is_reported() {
    let sb = Sandbox::new();
    let target = sb.outside("temp-target");
    make_plugin(&target, "temp");
    sb.rho(&["plugins", "link", target.to_str().unwrap()]).ok();
    std::fs::remove_dir_all(&target).unwrap();
    let json = sb.rho(&["plugins", "list", "--json"]).ok().json();
    assert_eq!(json["diagnostics"][0]["code"], "plugin-root-unreadable");
    assert!(json["plugins"].as_array().unwrap().is_empty());
    // It can still be removed (only the link goes).
    let run = sb.rho(&["plugins", "remove", "temp", "--yes"]);
    assert_no_panic(&run);
}

#[test]
fn c19_concurrent_install_remove_and_list_leave_no_torn_state() {
    let sb = Sandbox::new();
    let src = sb.outside("race");
    make_plugin(&src, "race");
    for i in 0..20 {
        make_skill(
            &src.join("skills"),
            &format!("s{i}"),
            "Race. Use when testing.",
        );
    }
    let sb = std::sync::Arc::new(sb);
    let src = std::sync::Arc::new(src);
    let workers: Vec<_> = (0..3)
        .map(|w| {
            let sb = sb.clone();
            let src = src.clone();
            std::thread::spawn(move || {
                for _ in 0..15 {
                    let run = match w {
                        0 => sb.rho(&["plugins", "install", src.to_str().unwrap(), "--force"]),
                        1 => sb.rho(&["plugins", "remove", "race", "--yes"]),
                        _ => sb.rho(&["plugins", "list", "--json"]),
                    };
                    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
                    if w == 2 {
                        let json = run.json();
                        for p in json["plugins"].as_array().unwrap() {
                            assert_eq!(
                                p["skills"].as_array().unwrap().len(),
                                20,
                                "never a partial package: {p:#}"
                            );
                        }
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
}

#[test]
fn c21_planted_lock_and_state_links_are_never_written_through() {
    let sb = Sandbox::new();
    let canary = Canary::new(&sb);
    std::fs::create_dir_all(sb.user_plugins()).unwrap();
    symlink(&canary.file, sb.user_plugins().join(".rho-lock"));
    let src = sb.outside("lk");
    make_plugin(&src, "lk");
    let run = sb
        .rho(&["plugins", "install", src.to_str().unwrap()])
        .code(1);
    assert!(run.stderr.contains(".rho-lock"), "{}", run.stderr);
    canary.assert_untouched();
    std::fs::remove_file(sb.user_plugins().join(".rho-lock")).unwrap();
    // A state file that is a link to the canary is replaced by rename, never written through.
    std::fs::create_dir_all(&sb.rho_home).unwrap();
    symlink(&canary.file, sb.rho_home.join("plugins.toml"));
    make_plugin(&sb.user_plugins().join("st"), "st");
    let run = sb.rho(&["plugins", "disable", "st"]).code(1);
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    canary.assert_absent(&run.stderr);
    let list = sb.rho(&["plugins", "list", "--json"]).ok();
    assert_eq!(list.json()["diagnostics"][0]["code"], "state-file-invalid");
    canary.assert_absent(&list.stdout);
    canary.assert_untouched();
}

#[test]
fn b21_hard_links_are_copied_as_content() {
    let sb = Sandbox::new();
    let src = sb.outside("hard");
    make_plugin(&src, "hard");
    write(&src.join("original"), "shared");
    std::fs::hard_link(src.join("original"), src.join("hardlinked")).unwrap();
    sb.rho(&["plugins", "install", src.to_str().unwrap()]).ok();
    assert_eq!(
        std::fs::read_to_string(sb.user_plugins().join("hard/hardlinked")).unwrap(),
        "shared"
    );
}

#[test]
fn broken_state_files_are_reported_with_file_and_line() {
    let sb = Sandbox::new();
    make_plugin(&sb.user_plugins().join("p"), "p");
    write(
        &sb.rho_home.join("plugins.toml"),
        "[plugins.p]\nenabled = \"no\"\n",
    );
    let json = sb.rho(&["plugins", "list", "--json"]).ok().json();
    let d = &json["diagnostics"][0];
    assert_eq!(d["code"], "state-file-invalid");
    assert!(
        d["message"].as_str().unwrap().contains("plugins.toml"),
        "{d}"
    );
    assert!(
        d["message"].as_str().unwrap().contains("line 2")
            || d["message"].as_str().unwrap().contains(":2:"),
        "{d}"
    );
    let run = sb.rho(&["plugins", "disable", "p"]).code(1);
    assert!(
        run.stderr.contains("plugins.toml"),
        "refuses to overwrite a broken file"
    );
}

#[test]
fn closed_stdout_does_not_panic() {
    let sb = Sandbox::new();
    copy_tree(&fixture("plugins"), &sb.project_plugins());
    let mut child = std::process::Command::new(rho_bin())
        .args([
            "--cwd",
            sb.project.to_str().unwrap(),
            "plugins",
            "list",
            "--json",
        ])
        .env("HOME", &sb.home)
        .env("RHO_HOME", &sb.rho_home)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn c1_link_text_that_leaves_the_package_is_refused_even_if_it_comes_back_in() {
    let sb = Sandbox::new();
    let src = sb.outside("evil");
    make_plugin(&src, "evil");
    // Resolves inside the source (through its parent folders), but would point outside the copy.
    let depth = src.components().count();
    let climb = "../".repeat(depth);
    symlink(
        format!(
            "{climb}{}/plugin.json",
            src.display().to_string().trim_start_matches('/')
        ),
        src.join("sneaky"),
    );
    let run = sb
        .rho(&["plugins", "install", src.to_str().unwrap()])
        .code(1);
    assert!(
        run.stderr.contains("sneaky") && run.stderr.contains("leaves the package"),
        "{}",
        run.stderr
    );
    assert!(!sb.user_plugins().join("evil").exists());
}

#[test]
fn c6_read_only_directories_do_not_block_replace_or_remove() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let src = sb.outside("ro");
    make_plugin(&src, "ro");
    write(&src.join("bin/tool"), "#!/bin/sh\n");
    std::fs::set_permissions(src.join("bin"), std::fs::Permissions::from_mode(0o555)).unwrap();
    sb.rho(&["plugins", "install", src.to_str().unwrap()]).ok();
    let installed = sb.user_plugins().join("ro/bin");
    let mode = std::fs::metadata(&installed).unwrap().permissions().mode();
    assert_eq!(
        mode & 0o700,
        0o700,
        "installed directories stay owner-writable: {mode:o}"
    );
    sb.rho(&["plugins", "install", src.to_str().unwrap(), "--force"])
        .ok();
    sb.rho(&["plugins", "remove", "ro", "--yes"]).ok();
    assert!(!sb.user_plugins().join("ro").exists());
    std::fs::set_permissions(src.join("bin"), std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn project_plugin_roots_that_are_links_are_not_written_through() {
    let sb = Sandbox::new();
    let elsewhere = sb.outside("elsewhere");
    make_plugin(&elsewhere.join("victim"), "victim");
    std::fs::create_dir_all(sb.project.join(".agents")).unwrap();
    symlink(&elsewhere, sb.project_plugins());
    let run = sb.rho(&["plugins", "remove", "victim", "--yes"]).code(1);
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    assert!(
        elsewhere.join("victim/plugin.json").exists(),
        "nothing outside the project was removed"
    );
    let src = sb.outside("newcomer");
    make_plugin(&src, "newcomer");
    let run = sb
        .rho(&[
            "plugins",
            "install",
            src.to_str().unwrap(),
            "--scope",
            "project",
        ])
        .code(1);
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    assert!(!elsewhere.join("newcomer").exists());
}
