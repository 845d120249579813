//! `rho mcp list/show` through the real binary: config.toml and plugin servers, strict config
//! errors, and the guarantee that listing without `--connect` starts and contacts nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::TcpListener;
use std::time::Duration;

use rho_e2e::*;
use serde_json::Value;

#[test]
fn lists_config_and_plugin_servers_without_starting_anything() {
    let sb = Sandbox::new();
    let marker = sb.outside("marker").join("started");
    let script = sb.outside("bin").join("fake-server");
    write_script(
        &script,
        &format!("#!/bin/sh\ntouch {}\nsleep 5\n", marker.display()),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    write(
        &sb.rho_home.join("config.toml"),
        format!(
            r#"
[mcp.servers.local]
command = "{}"
env_from_env = {{ TOKEN = "RHO_TEST_CANARY_TOKEN" }}

[mcp.servers.remote]
url = "http://127.0.0.1:{port}/mcp"
headers = {{ X-Secret = "canary-header-value" }}

[mcp.servers.off]
command = "npx"
enabled = false

[mcp.servers.broken]
command = "npx"
timeout = 3
"#,
            script.display()
        ),
    );
    let plugin = sb.user_plugins().join("pl");
    make_plugin(&plugin, "pl");
    make_mcp(
        &plugin,
        r#"{"srv":{"type":"stdio","command":"npx","args":["-y","pkg"]},"old":{"type":"sse","url":"https://h/sse"}}"#,
    );

    let run = sb.rho(&["mcp", "list", "--json"]).ok();
    std::thread::sleep(Duration::from_millis(200));
    assert!(!marker.exists(), "a server process was started");
    assert!(
        listener.accept().is_err(),
        "something connected to the HTTP server"
    );
    assert!(
        !run.stdout.contains("canary-header-value")
            && !run.stdout.contains("RHO_TEST_CANARY_TOKEN")
    );
    let list = run.json();
    let local = mcp_server(&list, "local");
    assert_eq!(local["source"], "config");
    assert_eq!(local["transport"], "stdio");
    assert_eq!(local["status"], "configured");
    assert_eq!(local["enabled"], true);
    assert_eq!(local["plugin"], Value::Null);
    assert_eq!(local["tools"], serde_json::json!([]));
    assert_eq!(mcp_server(&list, "remote")["transport"], "streamable_http");
    assert_eq!(mcp_server(&list, "off")["status"], "disabled");
    let broken = mcp_server(&list, "broken");
    assert_eq!(broken["status"], "failed");
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .contains("mcp.servers.broken"),
        "{broken}"
    );
    assert!(
        broken["defined_in"]
            .as_str()
            .unwrap()
            .ends_with("config.toml:14"),
        "{broken}"
    );
    let srv = mcp_server(&list, "pl/srv");
    assert_eq!(srv["source"], "plugin");
    assert_eq!(srv["plugin"], "pl");
    assert_eq!(mcp_server(&list, "pl/old")["status"], "failed");

    let human = sb.rho(&["mcp", "list"]).ok().stdout;
    assert!(
        human.starts_with("ID") && human.contains("pl/srv"),
        "{human}"
    );
    let shown = sb.rho(&["mcp", "show", "pl/srv", "--json"]).ok().json();
    assert_eq!(shown["target"], "npx -y pkg");
    assert!(
        sb.rho(&["mcp", "show", "nope"])
            .code(1)
            .stderr
            .contains("no MCP server")
    );
    assert!(!marker.exists());
}

#[test]
fn explicit_config_replaces_the_default_and_must_exist() {
    let sb = Sandbox::new();
    write(
        &sb.rho_home.join("config.toml"),
        "[mcp.servers.from_default]\ncommand = \"npx\"\n",
    );
    let other = sb.project.join(".rho/config.toml");
    write(&other, "[mcp.servers.from_project]\ncommand = \"npx\"\n");
    let list = sb
        .rho(&["--config", ".rho/config.toml", "mcp", "list", "--json"])
        .ok()
        .json();
    let ids: Vec<&str> = list["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["from_project"], "no merge");
    let run = sb.rho(&["--config", "missing.toml", "mcp", "list"]).code(1);
    assert!(run.stderr.contains("missing.toml"), "{}", run.stderr);
}

#[test]
fn config_syntax_and_unknown_sections_are_fatal_with_file_and_line() {
    let sb = Sandbox::new();
    write(
        &sb.rho_home.join("config.toml"),
        "[mcp.servers.a]\ncommand = \"npx\"\n\n[mcpp]\nx = \"secret-ish\"\n",
    );
    let run = sb.rho(&["mcp", "list"]).code(1);
    assert!(
        run.stderr.contains("config.toml")
            && run.stderr.contains("mcpp")
            && run.stderr.contains("line 4"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("secret-ish"));
    write(&sb.rho_home.join("config.toml"), "[mcp.servers.a\n");
    let run = sb.rho(&["mcp", "list"]).code(1);
    assert!(run.stderr.contains("line 1"), "{}", run.stderr);
}

#[test]
fn empty_configuration_lists_nothing() {
    let sb = Sandbox::new();
    assert_eq!(
        sb.rho(&["mcp", "list"]).ok().stdout,
        "no MCP servers configured\n"
    );
    assert_eq!(
        sb.rho(&["mcp", "list", "--json"]).ok().json(),
        serde_json::json!({"servers": []})
    );
}
