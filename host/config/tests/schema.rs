//! `schemas/rho-config.schema.json` must describe exactly what rho-config accepts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use serde_json::Value;

fn schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/rho-config.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn server_keys_match_the_schema_and_the_parser() {
    let schema = schema();
    let mut in_schema: Vec<String> = schema["$defs"]["server"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    in_schema.sort();
    let mut in_code: Vec<String> = rho_config::SERVER_KEYS
        .iter()
        .map(|s| s.to_string())
        .collect();
    in_code.sort();
    assert_eq!(in_schema, in_code);
    // serde's own list of expected fields (from an unknown-key error) is the third witness.
    let config =
        rho_config::parse_config("[mcp.servers.x]\nzzz = 1\n", Path::new("/c.toml")).unwrap();
    let problem = config.mcp_servers[0].spec.as_ref().unwrap_err()[0].clone();
    for key in rho_config::SERVER_KEYS {
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
fn agent_and_provider_keys_match_the_schema() {
    let schema = schema();
    let keys = |value: &Value| {
        let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    let sorted = |list: &[&str]| {
        let mut list: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        list.sort();
        list
    };
    assert_eq!(
        keys(&schema["properties"]["agent"]["properties"]),
        sorted(rho_config::AGENT_KEYS)
    );
    assert_eq!(
        keys(&schema["$defs"]["provider"]["properties"]),
        sorted(rho_config::PROVIDER_KEYS)
    );
    let validator = jsonschema::options().offline().build(&schema).unwrap();
    let cases = [
        "[agent]\nmodel = \"m\"\npermission_mode = \"ask\"\nmax_iterations = 3\n",
        "[agent]\npermission_mode = \"yolo\"\n",
        "[agent]\nmax_iterations = 0\n",
        "[agent]\nmodel = \"\"\n",
        "[agent]\nseed = 1\n",
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
