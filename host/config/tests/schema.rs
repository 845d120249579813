//! The config schema (derived from the `*Toml` types, checked in as
//! `schemas/rho-config.schema.json`) must describe exactly what rho-config accepts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use serde_json::Value;

fn schema() -> Value {
    rho_config::config_schema()
}

fn keys(value: &Value) -> Vec<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn server_keys_match_the_schema_and_the_parser() {
    let schema = schema();
    let in_schema = keys(&schema["$defs"]["server"]["properties"]);
    assert_eq!(in_schema.len(), 19, "{in_schema:?}");
    // serde's own list of expected fields (from an unknown-key error) is the second witness.
    let config =
        rho_config::parse_config("[mcp.servers.x]\nzzz = 1\n", Path::new("/c.toml")).unwrap();
    let problem = config.mcp_servers[0].spec.as_ref().unwrap_err()[0].clone();
    for key in &in_schema {
        assert!(
            problem.contains(&format!("`{key}`")),
            "{key} missing from {problem}"
        );
    }
}

/// Documents whose validity JSON Schema can judge must get the same verdict from both.
#[test]
fn verdicts_agree_on_schema_expressible_cases() {
    let validator = jsonschema::options().offline().build(&schema()).unwrap();
    let cases = [
        "",
        "[mcp.servers.a]\ncommand = \"npx\"\nargs = [\"-y\", \"pkg\"]\n",
        "[mcp.servers.a]\ntransport = \"streamable_http\"\nurl = \"https://h/mcp\"\nheaders = { X-A = \"1\" }\n",
        "[mcp.servers.a]\ncommand = \"npx\"\nenabled = \"yes\"\n",
        "[mcp.servers.a]\ncommand = \"npx\"\ntransport = \"websocket\"\n",
        "[mcp.servers.a]\ncommand = \"npx\"\nlog_level = \"loud\"\n",
        "[mcp.servers.a]\ncommand = \"npx\"\nsampling = \"always\"\n",
        "[mcp.servers.a]\ncommand = \"npx\"\nstartup_timeout_sec = 0\n",
        "[mcp.servers.a]\ncommand = \"npx\"\ncall_timeout_sec = 1.5\n",
        "[mcp.servers.a]\ncommand = \"npx\"\nmax_output_bytes = 0\n",
        "[mcp.servers.a]\ncommand = \"npx\"\ntools = { allow = [\"x\"], deny = [\"y\"] }\n",
        "[mcp.servers.a]\ncommand = \"npx\"\ntools = { only = [\"x\"] }\n",
        "[mcp.servers.a]\ncommand = \"npx\"\nenv = { A = 1 }\n",
        "[mcp.servers.a]\nurl = \"https://h/\"\noauth = { client_id = \"c\", scopes = [\"r\"] }\n",
        "[mcp.servers.a]\nurl = \"https://h/\"\noauth = { secret = \"s\" }\n",
        "[mcp.servers.\"a b\"]\ncommand = \"npx\"\n",
        "[mcp.servers.a]\ncommand = \"\"\n",
        "[mcp.servers.a]\ncommand = \"npx\"\nstartup = \"lazy\"\ndefer = false\n",
        "[mcp.servers.a]\ncommand = \"npx\"\nstartup = \"later\"\n",
        "[mcp.servers.a]\ncommand = \"npx\"\ndefer = \"no\"\n",
        "[mcp]\nstartup = \"lazy\"\n",
        "[mcp]\nstartup = \"Lazy\"\n",
        "[mcp.plugin_servers.\"my-plugin/github\"]\nstartup = \"lazy\"\ndefer = false\n",
        "[mcp.plugin_servers.\"my-plugin\"]\ndefer = false\n",
        "[mcp.plugin_servers.\"My-Plugin/github\"]\ndefer = false\n",
        "[mcp.plugin_servers.\"p/s\"]\ndefr = false\n",
        "[mcp.plugin_servers.\"p/s\"]\nstartup = \"soon\"\n",
    ];
    for text in cases {
        let value: toml::Value = toml::from_str(text).unwrap();
        let json = serde_json::to_value(&value).unwrap();
        let schema_ok = validator.is_valid(&json);
        let rho_ok = match rho_config::parse_config(text, Path::new("/c.toml")) {
            Ok(config) => config.mcp_servers.iter().all(|s| s.spec.is_ok()),
            Err(_) => false,
        };
        assert_eq!(schema_ok, rho_ok, "{text}");
    }
}

#[test]
fn mcp_and_plugin_server_keys_match_the_schema_and_the_parser() {
    let schema = schema();
    for (table, text, expected) in [
        (&schema["$defs"]["mcp"]["properties"], "[mcp]\nzzz = 1\n", 3),
        (
            &schema["$defs"]["plugin_server"]["properties"],
            "[mcp.plugin_servers.\"p/s\"]\nzzz = 1\n",
            2,
        ),
    ] {
        let keys = keys(table);
        assert_eq!(keys.len(), expected, "{keys:?}");
        let problem = rho_config::parse_config(text, Path::new("/c.toml"))
            .unwrap_err()
            .to_string();
        for key in &keys {
            assert!(
                problem.contains(&format!("`{key}`")),
                "{key} missing from {problem}"
            );
        }
    }
}

#[test]
fn agent_and_provider_keys_match_the_schema() {
    let schema = schema();
    for (table, text, name) in [
        (
            &schema["$defs"]["agent"]["properties"],
            "[agent]\nzzz = 1\n",
            "agent",
        ),
        (
            &schema["$defs"]["provider"]["properties"],
            "[providers.p]\nzzz = 1\n",
            "provider",
        ),
    ] {
        let keys = keys(table);
        assert!(keys.len() >= 5, "{name}: {keys:?}");
        let problem = match rho_config::parse_config(text, Path::new("/c.toml")) {
            Err(e) => e.to_string(),
            Ok(config) => config.providers[0]
                .settings
                .as_ref()
                .unwrap_err()
                .join("; "),
        };
        for key in &keys {
            assert!(
                problem.contains(&format!("`{key}`")),
                "{name}: {key} missing from {problem}"
            );
        }
    }
    let validator = jsonschema::options().offline().build(&schema).unwrap();
    let cases = [
        "[agent]\nmodel = \"m\"\npermission_mode = \"ask\"\nmax_iterations = 3\n",
        "[agent]\npermission_mode = \"yolo\"\n",
        "[agent]\nmax_iterations = 0\n",
        "[agent]\nmodel = \"\"\n",
        "[agent]\nseed = 1\n",
        "[agent]\ntool_search = \"never\"\ntool_search_budget_percent = 100\n",
        "[agent]\ntool_search = \"always\"\ntool_search_budget_percent = 1\n",
        "[agent]\ntool_search = \"sometimes\"\n",
        "[agent]\ntool_search_budget_percent = 0\n",
        "[agent]\ntool_search_budget_percent = 101\n",
        "[agent]\ntool_search_budget_percent = 2.5\n",
        "[providers.p]\nendpoint = \"https://h/v1\"\napi_key_env = \"KEY\"\ncontext_window = 8192\n",
        "[providers.p]\nendpoint = \"https://h/v1\"\napi_key_env = \"sk-1\"\n",
        "[providers.p]\nendpoint = \"https://h/v1\"\nrequest_timeout_sec = 0\n",
        "[providers.p]\nendpoint = \"https://h/v1\"\ncontext_window = 0\n",
        "[providers.p]\ndefault_model = \"m\"\n",
        "[providers.p]\nendpoint = \"https://h/v1\"\nextra = 1\n",
    ];
    for text in cases {
        let value: toml::Value = toml::from_str(text).unwrap();
        let json = serde_json::to_value(&value).unwrap();
        let schema_ok = validator.is_valid(&json);
        let rho_ok = match rho_config::parse_config(text, Path::new("/c.toml")) {
            Ok(config) => config.providers.iter().all(|p| p.settings.is_ok()),
            Err(_) => false,
        };
        assert_eq!(schema_ok, rho_ok, "{text}");
    }
}
