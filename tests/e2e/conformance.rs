//! Agent Plugins 1.0.0 conformance through the real binary: one fixture per MUST/SHOULD of
//! sections 4–9 and 11 and the Appendix A checklist, asserting status, diagnostic codes and the
//! components that still load (failure boundaries).

use rho_e2e::*;
use serde_json::Value;

/// Places every fixture plugin under the project root and lists once.
fn listed() -> (Sandbox, Vec<Value>) {
    let sb = Sandbox::new();
    copy_tree(&fixture("plugins"), &sb.project_plugins());
    let plugins = sb.plugins();
    (sb, plugins)
}

fn find<'a>(plugins: &'a [Value], entry_name: &str) -> &'a Value {
    plugins
        .iter()
        .find(|p| {
            p["entry"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/{entry_name}"))
        })
        .unwrap_or_else(|| panic!("fixture {entry_name} not listed"))
}

struct Case {
    fixture: &'static str,
    spec: &'static str,
    status: &'static str,
    codes: &'static [&'static str],
    skills: &'static [&'static str],
    servers: Option<&'static [&'static str]>,
}

const CASES: &[Case] = &[
    Case {
        fixture: "escape-plugin-json",
        spec: "§4.1 boundary 1: plugin.json outside the root rejects the plugin",
        status: "rejected",
        codes: &["path-escape"],
        skills: &[],
        servers: Some(&[]),
    },
    Case {
        fixture: "escape-skills-dir",
        spec: "§4.1 boundary 2: skills/ outside the root invalidates that type only",
        status: "loaded",
        codes: &["path-escape"],
        skills: &[],
        servers: Some(&["ok"]),
    },
    Case {
        fixture: "escape-skill-md",
        spec: "§4.1 boundary 3: a SKILL.md outside the root skips that skill",
        status: "loaded",
        codes: &["path-escape"],
        skills: &["local"],
        servers: None,
    },
    Case {
        fixture: "escape-mcp-json",
        spec: "§4.1 boundary 2: mcp.json outside the root disables MCP only",
        status: "loaded",
        codes: &["path-escape"],
        skills: &["hi"],
        servers: Some(&[]),
    },
    Case {
        fixture: "escape-command",
        spec: "§4.1 boundary 4: command/cwd escaping invalidates that server",
        status: "loaded",
        codes: &["mcp-server-invalid"],
        skills: &[],
        servers: Some(&["in"]),
    },
    Case {
        fixture: "inside-links",
        spec: "§4.1.3 links that stay inside are allowed",
        status: "loaded",
        codes: &[],
        skills: &["greet"],
        servers: None,
    },
    Case {
        fixture: "minimal",
        spec: "§5.2 minimal manifest",
        status: "loaded",
        codes: &["plugin-no-components"],
        skills: &[],
        servers: Some(&[]),
    },
    Case {
        fixture: "full",
        spec: "§5.2 full manifest, §6.1 skills/",
        status: "loaded",
        codes: &[],
        skills: &["summarize"],
        servers: Some(&[]),
    },
    Case {
        fixture: "loose-metadata",
        spec: "§5.4 metadata checked by type only",
        status: "loaded",
        codes: &["plugin-no-components"],
        skills: &[],
        servers: None,
    },
    Case {
        fixture: "unknown-fields",
        spec: "§5.2 report and ignore unknown fields; no semantics",
        status: "loaded",
        codes: &["manifest-unknown-field", "manifest-unknown-field"],
        skills: &["hello"],
        servers: Some(&[]),
    },
    Case {
        fixture: "extensions-string",
        spec: "§8.1 non-object extensions reported and ignored",
        status: "loaded",
        codes: &["manifest-extensions-not-object"],
        skills: &["hello"],
        servers: None,
    },
    Case {
        fixture: "extensions-unimplemented",
        spec: "§8.1 unimplemented namespaces not validated",
        status: "loaded",
        codes: &[],
        skills: &["hello"],
        servers: None,
    },
    Case {
        fixture: "extension-dir",
        spec: "§8.2 extension directories of other clients ignored",
        status: "loaded",
        codes: &[],
        skills: &["hello"],
        servers: None,
    },
    Case {
        fixture: "missing-schema",
        spec: "§5.3 required $schema",
        status: "rejected",
        codes: &["manifest-invalid"],
        skills: &[],
        servers: Some(&[]),
    },
    Case {
        fixture: "unknown-schema",
        spec: "§5.2 unsupported version rejected and reported",
        status: "rejected",
        codes: &["manifest-unsupported-schema"],
        skills: &[],
        servers: Some(&[]),
    },
    Case {
        fixture: "missing-name",
        spec: "§5.3 required name",
        status: "rejected",
        codes: &["manifest-invalid"],
        skills: &[],
        servers: None,
    },
    Case {
        fixture: "empty-name",
        spec: "§5.3 empty name",
        status: "rejected",
        codes: &["manifest-invalid"],
        skills: &[],
        servers: None,
    },
    Case {
        fixture: "bad-name",
        spec: "§5.5 name constraints",
        status: "rejected",
        codes: &["manifest-invalid"],
        skills: &[],
        servers: None,
    },
    Case {
        fixture: "wrong-type-version",
        spec: "§5.4 field types",
        status: "rejected",
        codes: &["manifest-invalid"],
        skills: &[],
        servers: None,
    },
    Case {
        fixture: "author-extra-field",
        spec: "§5.4 closed author object",
        status: "rejected",
        codes: &["manifest-invalid"],
        skills: &[],
        servers: None,
    },
    Case {
        fixture: "keywords-not-strings",
        spec: "§5.4 keywords are strings",
        status: "rejected",
        codes: &["manifest-invalid"],
        skills: &[],
        servers: None,
    },
    Case {
        fixture: "not-an-object",
        spec: "§5.2 top-level object",
        status: "rejected",
        codes: &["manifest-invalid"],
        skills: &[],
        servers: None,
    },
    Case {
        fixture: "invalid-json",
        spec: "§5.2 manifest MUST be JSON",
        status: "rejected",
        codes: &["manifest-invalid-json"],
        skills: &[],
        servers: None,
    },
    Case {
        fixture: "empty-manifest",
        spec: "§5.2 empty file",
        status: "rejected",
        codes: &["manifest-invalid-json"],
        skills: &[],
        servers: None,
    },
    Case {
        fixture: "duplicate-key",
        spec: "rho policy: repeated keys refused",
        status: "rejected",
        codes: &["manifest-invalid-json"],
        skills: &[],
        servers: None,
    },
    Case {
        fixture: "bom-crlf",
        spec: "rho policy: BOM and CRLF accepted",
        status: "loaded",
        codes: &["plugin-no-components"],
        skills: &[],
        servers: None,
    },
    Case {
        fixture: "skills-is-file",
        spec: "§6.2 wrong kind of skills location: that type invalid, others load",
        status: "loaded",
        codes: &["skills-location-invalid"],
        skills: &[],
        servers: Some(&["ok"]),
    },
    Case {
        fixture: "mcp-is-dir",
        spec: "§6.2 mcp.json not a regular file",
        status: "loaded",
        codes: &["mcp-config-invalid"],
        skills: &["hello"],
        servers: Some(&[]),
    },
    Case {
        fixture: "skills-mixed",
        spec: "§7.1 invalid skills skipped, no recursion, exact SKILL.md",
        status: "loaded",
        codes: &["skill-invalid", "skill-invalid", "skill-invalid"],
        skills: &["good"],
        servers: None,
    },
    Case {
        fixture: "mcp-version-mismatch",
        spec: "§10.1 / §7.2.2 version mismatch disables MCP only",
        status: "loaded",
        codes: &["mcp-version-mismatch"],
        skills: &["hello"],
        servers: Some(&[]),
    },
    Case {
        fixture: "mcp-invalid-json",
        spec: "§7.2.2 invalid mcp.json disables MCP only",
        status: "loaded",
        codes: &["mcp-config-invalid"],
        skills: &["hello"],
        servers: Some(&[]),
    },
    Case {
        fixture: "mcp-extra-top",
        spec: "§7.2.1 closed top level",
        status: "loaded",
        codes: &["mcp-config-invalid"],
        skills: &["hello"],
        servers: Some(&[]),
    },
    Case {
        fixture: "mcp-missing-servers",
        spec: "§7.2.1 mcpServers required",
        status: "loaded",
        codes: &["mcp-config-invalid", "plugin-no-components"],
        skills: &[],
        servers: Some(&[]),
    },
    Case {
        fixture: "mcp-empty",
        spec: "§7.2.1 empty mcpServers valid",
        status: "loaded",
        codes: &["plugin-no-components"],
        skills: &[],
        servers: Some(&[]),
    },
    Case {
        fixture: "mcp-duplicate-entry-key",
        spec: "rho policy: repeated key inside one entry invalidates that entry",
        status: "loaded",
        codes: &["mcp-server-invalid"],
        skills: &[],
        servers: Some(&["b"]),
    },
    Case {
        fixture: "mcp-duplicate-server",
        spec: "rho policy: repeated server name makes mcp.json ambiguous",
        status: "loaded",
        codes: &["mcp-config-invalid", "plugin-no-components"],
        skills: &[],
        servers: Some(&[]),
    },
];

#[test]
fn every_fixture_meets_its_clause() {
    let (_sb, plugins) = listed();
    let mut failures = Vec::new();
    for case in CASES {
        let p = find(&plugins, case.fixture);
        let mut got_codes = codes(p);
        got_codes.sort();
        got_codes.dedup();
        let mut want: Vec<String> = case.codes.iter().map(|s| s.to_string()).collect();
        want.sort();
        want.dedup();
        if p["status"] != case.status || got_codes != want || strings(&p["skills"]) != case.skills {
            failures.push(format!(
                "{} ({}): got status {} codes {got_codes:?} skills {:?}",
                case.fixture, case.spec, p["status"], p["skills"]
            ));
        }
        if let Some(servers) = case.servers
            && strings(&p["mcp_servers"]) != servers
        {
            failures.push(format!(
                "{} ({}): servers {:?}",
                case.fixture, case.spec, p["mcp_servers"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn non_plugins_are_skipped_silently() {
    let (sb, plugins) = listed();
    assert!(
        !plugins
            .iter()
            .any(|p| p["entry"].as_str().unwrap().ends_with("/not-a-plugin"))
    );
    // A stray file (marketplace.json) and a data/ directory with a plugin.json are not plugins.
    write(&sb.project_plugins().join("marketplace.json"), "{}");
    make_plugin(&sb.project_plugins().join("data"), "data");
    let run = sb.rho(&["plugins", "list", "--json"]).ok();
    let json = run.json();
    assert!(
        json["diagnostics"].as_array().unwrap().is_empty(),
        "{json:#}"
    );
    assert!(
        !json["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "data")
    );
}

/// Every server of the `mcp-servers` fixture, with the boundary §7.2.2 names.
#[test]
fn mcp_server_entries_fail_one_by_one() {
    let (sb, plugins) = listed();
    let p = find(&plugins, "mcp-servers");
    assert_eq!(p["status"], "loaded");
    assert_eq!(
        strings(&p["skills"]),
        ["hello"],
        "skills load despite bad servers"
    );
    assert_eq!(
        strings(&p["mcp_servers"]),
        [
            "bare",
            "bundled",
            "data-cwd",
            "local-http",
            "rel-cwd",
            "remote"
        ]
    );
    let invalid: Vec<String> = p["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "mcp-server-invalid")
        .map(|d| {
            d["component"]
                .as_str()
                .unwrap()
                .trim_start_matches("mcp-servers/")
                .to_owned()
        })
        .collect();
    let mut expected = vec![
        "dotdot-command",
        "relative-no-dot",
        "absolute-command",
        "shell-string",
        "placeholder-command",
        "cwd-bare",
        "cwd-home",
        "cwd-data-escape",
        "cwd-root-escape",
        "reserved-env",
        "env-number",
        "unknown-field",
        "unknown-type",
        "mixed-variants",
        "missing-type",
        "http-plaintext",
        "userinfo",
        "fragment",
        "relative-url",
        "header-case-dup",
        "header-crlf",
        "header-bad-name",
        "not-an-object",
    ];
    expected.sort();
    let mut invalid_sorted = invalid.clone();
    invalid_sorted.sort();
    assert_eq!(invalid_sorted, expected);
    assert_eq!(
        codes(p)
            .iter()
            .filter(|c| *c == "mcp-transport-unsupported")
            .count(),
        1,
        "sse skipped"
    );
    // The password in the userinfo URL never reaches output.
    let all = sb
        .rho(&["plugins", "inspect", "mcp-servers", "--json"])
        .ok();
    assert!(!all.stdout.contains("canary-password"));
    assert!(
        !sb.rho(&["plugins", "list"])
            .ok()
            .stdout
            .contains("canary-password")
    );

    // Expansion (§9.2), cwd default and forms (§7.2.1), opaque args (§4.1.5).
    let details = all.json()["mcp_server_details"].clone();
    let server = |name: &str| {
        details
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()
            .clone()
    };
    let root = p["path"].as_str().unwrap();
    let data = format!("{}/data/mcp-servers", sb.project_plugins().display());
    let bundled = server("bundled");
    assert_eq!(bundled["command"], format!("{root}/bin/server"));
    assert_eq!(
        strings(&bundled["args"]),
        [
            "--data".to_string(),
            format!("{data}/validator"),
            "../../etc/passwd".into(),
            "${HOME}".into()
        ]
    );
    assert_eq!(bundled["cwd"], root);
    assert_eq!(
        strings(&bundled["env"]),
        ["CONFIG", "plugin_root"],
        "env names only, never values"
    );
    assert_eq!(server("bare")["command"], "npx");
    assert_eq!(
        server("bare")["cwd"],
        root,
        "default cwd is the plugin root (§7.2.1)"
    );
    assert_eq!(server("data-cwd")["cwd"], format!("{data}/cache"));
    assert_eq!(server("rel-cwd")["cwd"], format!("{root}/config"));
    assert_eq!(server("remote")["id"], "mcp-servers/remote");
    assert_eq!(strings(&server("remote")["headers"]), ["X-Tenant"]);
    assert!(
        !sb.project_plugins().join("data").exists(),
        "PLUGIN_DATA is created only at server start"
    );
}

#[test]
fn manifest_is_loaded_before_components_and_rejection_stops_discovery() {
    let (_sb, plugins) = listed();
    for fixture in ["missing-schema", "unknown-schema"] {
        let p = find(&plugins, fixture);
        assert_eq!(p["status"], "rejected");
        assert!(
            strings(&p["skills"]).is_empty(),
            "{fixture}: no component of a rejected plugin"
        );
        assert!(!codes(p).contains(&"skill-invalid".to_string()));
    }
    let unsupported = find(&plugins, "unknown-schema");
    let message = unsupported["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"),
        "{message}"
    );
}

#[test]
fn our_schemas_agree_with_the_official_ones_on_every_fixture() {
    // The official schemas are the yardstick (vendored unchanged, see the README beside them);
    // every fixture manifest and mcp.json must get the same verdict from both, except where the
    // spec text overrides the schema (§8.1: unimplemented extension values are not validated).
    let official = fixture("official-schemas/agent-plugins-1.0.0");
    let compile = |path: std::path::PathBuf| {
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        jsonschema::options().offline().build(&schema).unwrap()
    };
    let pairs = [
        (
            compile(official.join("plugin.schema.json")),
            compile(repo_root().join("schemas/agent-plugins/1.0.0/plugin.schema.json")),
            "plugin.json",
        ),
        (
            compile(official.join("mcp.schema.json")),
            compile(repo_root().join("schemas/agent-plugins/1.0.0/mcp.schema.json")),
            "mcp.json",
        ),
    ];
    let mut compared = 0;
    for dir in walk(&fixture("plugins")) {
        for (theirs, ours, file) in &pairs {
            if !dir.ends_with(file) || !dir.is_file() {
                continue;
            }
            let Ok(doc) = serde_json::from_slice::<Value>(&std::fs::read(&dir).unwrap()) else {
                continue;
            };
            compared += 1;
            assert_eq!(
                theirs.is_valid(&doc),
                ours.is_valid(&doc),
                "{}",
                dir.display()
            );
            // Each server entry on its own, as the per-entry boundary (§7.2.2) validates it.
            if let Some(servers) = doc.get("mcpServers").and_then(Value::as_object) {
                for (name, entry) in servers {
                    let single = serde_json::json!({ "$schema": doc["$schema"], "mcpServers": { "x": entry } });
                    compared += 1;
                    assert_eq!(
                        theirs.is_valid(&single),
                        ours.is_valid(&single),
                        "{} server {name}",
                        dir.display()
                    );
                }
            }
        }
    }
    assert!(compared > 60, "compared only {compared} documents");
}

/// Paths that only exist beside one checkout of the repository (spelled in pieces so this file
/// does not match itself).
const OUTSIDE_REFERENCES: [&str; 2] = [concat!("..", "/shared"), concat!("/wo", "rk/")];

/// Known harmless matches: `(file, the text that matches)`. Each names a value that is only
/// data to the code around it, never a path anything reads.
const HARMLESS: &[(&str, &str)] = &[];

#[test]
fn no_test_script_or_build_step_reads_outside_the_repository() {
    // The yardsticks, fixtures and peers the tests use live in the repository: a clone with
    // nothing beside it passes. Tracked files only, so local scratch files do not count.
    let root = repo_root();
    let listed = std::process::Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["ls-files", "-z", "--", "tests", "host", "bench", ".ci"])
        .args([":(glob)**/build.rs", ":(glob)**/*.sh"])
        .output()
        .expect("this test lists tracked files with `git ls-files`: install git");
    assert!(
        listed.status.success(),
        "git ls-files failed in {}: {}",
        root.display(),
        String::from_utf8_lossy(&listed.stderr)
    );
    let files: Vec<&str> = std::str::from_utf8(&listed.stdout)
        .unwrap()
        .split('\0')
        .filter(|f| !f.is_empty() && !f.ends_with("Cargo.lock"))
        .collect();
    assert!(files.len() > 100, "only {} tracked files", files.len());
    let mut found = Vec::new();
    for file in files {
        let path = root.join(file);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue; // deleted in this work tree, not yet committed
        };
        // A link's target is what would be read through it.
        let text = if meta.is_symlink() {
            std::fs::read_link(&path)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        } else {
            let bytes = std::fs::read(&path).unwrap();
            if bytes.contains(&0) {
                continue; // binary (compiled guests, images)
            }
            String::from_utf8_lossy(&bytes).into_owned()
        };
        for (number, line) in text.lines().enumerate() {
            let mut rest = line.to_owned();
            for (harmless_file, harmless) in HARMLESS {
                if file == *harmless_file {
                    rest = rest.replace(harmless, "");
                }
            }
            if OUTSIDE_REFERENCES.iter().any(|r| rest.contains(r)) {
                found.push(format!("{file}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "tracked files refer to paths outside the repository (vendor what they need under \
         tests/fixtures/ instead):\n{}",
        found.join("\n")
    );
}
