//! What `rho mcp serve` offers besides tools, read by a real client (the Python `mcp` SDK
//! through `tests/peers/gateway_client.py`): skills' files as `skill://` resources (text and
//! blobs, nothing outside the skill folder), upstream resource templates and reads of templated
//! URIs routed to their server (server-everything), and upstream prompt and resource list
//! changes passed on as `list_changed` (`tests/peers/conformance_upstream.mjs`), and
//! `--upstream-names` (servers' own names, a clash refused, with the tool search).

use rho_e2e::*;
use serde_json::{Value, json};

use crate::mcp_serve::python_with;

/// The one body of read `i` of `report` (`bodies`).
fn body(report: &Value, i: usize) -> &Value {
    let read = &report["bodies"][i];
    assert_eq!(
        read.as_array().map(Vec::len),
        Some(1),
        "read {i}: {report:#}"
    );
    &read[0]
}

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";

#[test]
fn skills_files_are_resources_read_through_the_contained_reader() {
    let sandbox = everything::allow_all_sandbox("");
    let skill = sandbox.home.join(".agents/skills/pdf");
    write(
        &skill.join("SKILL.md"),
        "---\nname: pdf\ndescription: Fills PDF forms.\n---\nRun scripts/fill form.py.\n",
    );
    write(&skill.join("scripts/fill form.py"), "print('filled')\n");
    write(&skill.join("references/REFERENCE.md"), "# Fields\n");
    std::fs::create_dir_all(skill.join("assets")).unwrap();
    std::fs::write(skill.join("assets/logo.png"), PNG).unwrap();
    write(&skill.join(".git/config"), "[core]\n");
    let secret = sandbox.outside("secret").join("canary.txt");
    write(&secret, "CANARY-7f3a\n");
    symlink(&secret, skill.join("references/leak.txt"));

    let report = python_with(
        &sandbox,
        &[
            "--read",
            "skill://pdf/SKILL.md",
            "--read",
            "skill://pdf/scripts/fill%20form.py",
            "--read",
            "skill://pdf/assets/logo.png",
            "--read",
            "skill://pdf/references/leak.txt",
            "--read",
            "skill://pdf/../secret/canary.txt",
        ],
        &[],
    );
    let listed = strings(&report["resources"]);
    let skill_files: Vec<&String> = listed
        .iter()
        .filter(|u| u.starts_with("skill://"))
        .collect();
    assert_eq!(
        skill_files,
        [
            "skill://pdf/SKILL.md",
            "skill://pdf/assets/logo.png",
            "skill://pdf/references/REFERENCE.md",
            "skill://pdf/scripts/fill%20form.py",
        ],
        "{report:#}"
    );
    let manifest = body(&report, 0);
    assert_eq!(manifest["mimeType"], "text/markdown");
    assert!(
        manifest["text"].as_str().unwrap().contains("name: pdf"),
        "{manifest:#}"
    );
    let script = body(&report, 1);
    assert_eq!(script["text"], "print('filled')\n");
    assert_eq!(script["mimeType"], "text/x-python");
    let logo = body(&report, 2);
    assert_eq!(logo["mimeType"], "image/png");
    assert_eq!(logo["text"], Value::Null);
    assert_eq!(logo["blob"], "iVBORw0KGgo=");
    // A link out of the folder and a path climbing out are not resources (-32602 in 2026-07-28).
    for i in [3, 4] {
        assert_eq!(report["bodies"][i]["error"]["code"], -32602, "{report:#}");
    }
    assert!(!report.to_string().contains("CANARY"), "{report:#}");
}

#[test]
fn upstream_templates_are_listed_and_templated_reads_reach_their_server() {
    let sandbox = everything::allow_all_sandbox("");
    for mode in ["auto", "legacy"] {
        let report = python_with(
            &sandbox,
            &[
                "--mode",
                mode,
                "--read",
                "demo://resource/dynamic/text/42",
                "--read",
                "demo://resource/dynamic/blob/7",
                "--read",
                "demo://resource/dynamic/text/4/2",
            ],
            &[],
        );
        let templates = strings(&report["templates"]);
        for template in [
            "demo://resource/dynamic/text/{resourceId}",
            "demo://resource/dynamic/blob/{resourceId}",
        ] {
            assert!(templates.iter().any(|t| t == template), "{report:#}");
        }
        let text = body(&report, 0);
        assert_eq!(text["uri"], "demo://resource/dynamic/text/42");
        assert!(text["text"].as_str().unwrap().contains("42"), "{report:#}");
        let blob = body(&report, 1);
        assert!(
            blob["blob"].as_str().is_some_and(|b| !b.is_empty()),
            "{report:#}"
        );
        // `{resourceId}` holds no `/`: the URI matches no template.
        let code = report["bodies"][2]["error"]["code"].clone();
        let expected = if mode == "legacy" { -32002 } else { -32602 };
        assert_eq!(code, json!(expected), "{mode}: {report:#}");
    }
    // An excluded server's templates are not served.
    let report = python_with(
        &sandbox,
        &["--read", "demo://resource/dynamic/text/1"],
        &["--exclude", "everything"],
    );
    assert_eq!(report["templates"], json!([]), "{report:#}");
}

#[test]
fn upstream_prompt_and_resource_list_changes_reach_the_client() {
    let sandbox = Sandbox::new();
    let upstream = repo_root().join("tests/peers/conformance_upstream.mjs");
    sandbox.write_config(&format!(
        "[mcp.servers.up]\ncommand = \"node\"\nargs = [{:?}]\n",
        upstream.display().to_string()
    ));
    // A 2025-11-25 client is sent the notifications; a 2026-07-28 client gets them on its
    // `subscriptions/listen` stream.
    for revision in [&["--mode", "legacy"][..], &["--mode", "auto", "--listen"]] {
        let args = [
            revision,
            &[
                "--call",
                "mcp__up__grow",
                "{}",
                "--wait-list-changed",
                "15",
                "--wait-for",
                "notifications/prompts/list_changed",
                "--wait-for",
                "notifications/resources/list_changed",
                "--prompt",
                "up:grown",
                "{}",
                "--read",
                "test://grown",
            ],
        ]
        .concat();
        let report = python_with(&sandbox, &args, &[]);
        let notified = strings(&report["notifications"]);
        for method in [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
        ] {
            assert!(notified.iter().any(|m| m == method), "{method}: {report:#}");
        }
        assert!(
            strings(&report["prompts"]).iter().any(|p| p == "up:grown"),
            "{report:#}"
        );
        assert_eq!(report["prompted"][0][0]["text"], "grown", "{report:#}");
        assert_eq!(body(&report, 0)["text"], "grown", "{report:#}");
    }
}

#[test]
fn a_subscribed_resources_updates_reach_the_client_in_both_revisions() {
    let sandbox = upstream_sandbox(&["up"]);
    let uri = "test://static-text";
    // A 2025-11-25 client subscribes with resources/subscribe; a 2026-07-28 client names the
    // resource on its subscriptions/listen stream. The upstream's touch tool sends the update
    // only when rho subscribed there.
    for revision in [&["--mode", "legacy"][..], &["--mode", "auto", "--listen"]] {
        let args = [
            revision,
            &[
                "--subscribe",
                uri,
                "--call",
                "mcp__up__touch",
                r#"{"uri": "test://static-text"}"#,
                "--wait-list-changed",
                "15",
                "--wait-for",
                "notifications/resources/updated",
            ],
        ]
        .concat();
        let report = python_with(&sandbox, &args, &[]);
        assert_eq!(
            report["calls"][0]["text"][0], "touched test://static-text",
            "{report:#}"
        );
        assert_eq!(report["updated"], json!([uri]), "{report:#}");
    }
    // Without a subscription nothing is subscribed upstream, and no update comes.
    let report = python_with(
        &sandbox,
        &[
            "--call",
            "mcp__up__touch",
            r#"{"uri": "test://static-text"}"#,
        ],
        &[],
    );
    assert_eq!(
        report["calls"][0]["text"][0], "not subscribed: test://static-text",
        "{report:#}"
    );
    assert_eq!(report["updated"], json!([]), "{report:#}");
}

#[test]
fn a_resource_templates_arguments_are_completed_by_its_server() {
    let sandbox = upstream_sandbox(&["up"]);
    let template = "test://template/{id}/data";
    for mode in ["legacy", "auto"] {
        let report = python_with(
            &sandbox,
            &[
                "--mode",
                mode,
                "--complete-template",
                template,
                "id",
                "4",
                "--complete-template",
                "test://nothing/{id}",
                "id",
                "",
            ],
            &[],
        );
        assert_eq!(report["completed"][0], json!(["42", "420"]), "{report:#}");
        // A template nothing serves: invalid params, naming it.
        let unknown = &report["completed"][1]["error"];
        assert_eq!(unknown["code"], -32602, "{report:#}");
        assert!(
            unknown["message"]
                .as_str()
                .is_some_and(|m| m.contains("test://nothing/{id}")),
            "{report:#}"
        );
    }
}

/// A sandbox with `tests/peers/conformance_upstream.mjs` as each of `servers`.
fn upstream_sandbox(servers: &[&str]) -> Sandbox {
    let upstream = repo_root().join("tests/peers/conformance_upstream.mjs");
    let sandbox = Sandbox::new();
    let config: String = servers
        .iter()
        .map(|id| {
            format!(
                "[mcp.servers.{id}]\ncommand = \"node\"\nargs = [{:?}]\n",
                upstream.display().to_string()
            )
        })
        .collect();
    sandbox.write_config(&config);
    sandbox
}

#[test]
fn upstream_names_serve_a_server_under_its_own_names_and_refuse_a_clash() {
    let sandbox = upstream_sandbox(&["conformance"]);
    let report = python_with(
        &sandbox,
        &[
            "--call",
            "test_simple_text",
            "{}",
            "--prompt",
            "test_prompt_with_arguments",
            r#"{"arg1": "a1", "arg2": "a2"}"#,
        ],
        &["--upstream-names"],
    );
    let tools = crate::mcp_serve::names(&report);
    assert!(
        tools.contains(&"test_audio_content".to_owned())
            && !tools.iter().any(|t| t.starts_with("mcp__")),
        "{report:#}"
    );
    assert_eq!(
        report["calls"][0]["text"][0], "This is a simple text response for testing.",
        "{report:#}"
    );
    let prompts: Vec<&str> = report["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(prompts.contains(&"test_simple_prompt"), "{prompts:?}");
    assert!(
        report["prompted"][0][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("arg1='a1', arg2='a2'")),
        "{report:#}"
    );

    // With the tool search: the search finds a tool by its served name, callable by it.
    let report = python_with(
        &sandbox,
        &[
            "--call",
            "tool_search",
            r#"{"query": "test_error_handling"}"#,
            "--call",
            "test_error_handling",
            "{}",
        ],
        &["--upstream-names", "--tool-search"],
    );
    assert_eq!(
        crate::mcp_serve::names(&report),
        ["tool_search"],
        "{report:#}"
    );
    let found = report["calls"][0]["text"][0].as_str().unwrap_or_default();
    assert!(found.contains("test_error_handling"), "{report:#}");
    assert_eq!(report["calls"][1]["isError"], true, "{report:#}");

    // Two servers with the same tools: refused before serving, naming the first shared name
    // and both servers.
    let sandbox = upstream_sandbox(&["one", "two"]);
    let output = sandbox
        .command(&["mcp", "serve", "--upstream-names"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    for part in [
        "tools would be named \"touch\"",
        "MCP server \"one\"",
        "MCP server \"two\"",
        "--only",
    ] {
        assert!(stderr.contains(part), "{part}: {stderr}");
    }
    // `--only` picks one of them.
    let report = python_with(&sandbox, &[], &["--upstream-names", "--only", "two"]);
    assert!(
        crate::mcp_serve::names(&report).contains(&"test_simple_text".to_owned()),
        "{report:#}"
    );
}
