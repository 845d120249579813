//! `rho mcp serve` in a project whose plugin is not trusted: a real client (the Python `mcp`
//! SDK) lists none of the plugin's MCP tools, prompts or resources and none of its WASM tools,
//! and the plugin's server process never starts; once the plugin is trusted, they are served.

use rho_e2e::*;

use crate::mcp_serve::python_with;

/// The committed example plugin with WASM tools.
fn example() -> std::path::PathBuf {
    repo_root().join("examples/plugins/data-tools")
}

/// The names of the tools a report lists.
fn tool_names(report: &serde_json::Value) -> Vec<String> {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn an_untrusted_project_plugin_is_not_served_until_trusted() {
    let sandbox = Sandbox::new();
    let plugin = sandbox.project_plugins().join("data-tools");
    copy_tree(&example(), &plugin);
    // Its MCP server records each start, then becomes server-everything.
    let marker = sandbox.outside("marks").join("started");
    write_script(
        &plugin.join("bin/server"),
        &format!(
            "#!/bin/sh\necho started >> '{}'\nexec {}\n",
            marker.display(),
            everything::stdio_shell()
        ),
    );
    make_mcp(
        &plugin,
        r#"{"docs": {"type": "stdio", "command": "./bin/server"}}"#,
    );
    let ask = [
        "--prompt",
        "data-tools/docs:simple-prompt",
        "{}",
        "--read",
        "demo://resource/static/document/architecture.md",
    ];

    let report = python_with(&sandbox, &ask, &[]);
    let tools = tool_names(&report);
    assert!(tools.is_empty(), "untrusted tools served: {tools:?}");
    let prompts = strings(&report["prompts"]);
    assert!(
        prompts.iter().all(|p| p.starts_with("skill:")),
        "untrusted prompts served: {prompts:?}"
    );
    let resources = strings(&report["resources"]);
    assert!(
        resources.iter().all(|r| r.starts_with("skill://")),
        "untrusted resources served: {resources:?}"
    );
    assert_eq!(report["prompted"][0]["error"]["code"], -32602, "{report:#}");
    assert_eq!(report["reads"][0]["error"]["code"], -32602, "{report:#}");
    assert!(
        !marker.exists(),
        "the untrusted plugin's server was started"
    );

    sandbox.rho(&["plugins", "trust", "data-tools"]).ok();
    let report = python_with(&sandbox, &ask, &[]);
    let tools = tool_names(&report);
    assert!(
        tools.iter().any(|t| t == "wasm__data-tools__query"),
        "{tools:?}"
    );
    assert!(
        tools
            .iter()
            .any(|t| t.starts_with("mcp__") && t.ends_with("__echo")),
        "{tools:?}"
    );
    assert!(
        strings(&report["prompts"])
            .iter()
            .any(|p| p == "data-tools/docs:simple-prompt"),
        "{report:#}"
    );
    assert!(report["prompted"][0][0]["text"].is_string(), "{report:#}");
    assert!(
        report["reads"][0][0]
            .as_str()
            .is_some_and(|t| t.starts_with("# Everything Server")),
        "{report:#}"
    );
    assert!(marker.exists(), "the trusted plugin's server did not start");
}
