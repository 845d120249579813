//! A standalone MCP servers file (`rho rpc --mcp-config <file>`), for programs that embed rho:
//! `{"mcpServers": {"<id>": {...}}}`, each entry taking the keys of a `config.toml` server
//! table (resolved by the same code into [`McpServerSpec`]), plus `type` (`stdio` or `http`)
//! as other hosts spell the transport. Strict as a whole: any problem in any entry refuses the
//! file, naming the file, the server and the key, since a program that hands rho its servers
//! wants all of them or an error, not a session missing one.

use std::path::{Path, PathBuf};

use rho_component::{McpServerSpec, Startup};

use crate::ConfigError;
use crate::config_file::resolve_server;

/// A servers file larger than this is refused.
pub const MCP_CONFIG_MAX_BYTES: u64 = 1024 * 1024;

/// The key every problem of a server is named under: `mcpServers.<id>.<key>`.
const PREFIX: &str = "mcpServers";

/// The servers of one `--mcp-config` file, in identity order.
#[derive(Debug, Clone)]
pub struct McpServersFile {
    /// The file read.
    pub path: PathBuf,
    /// Every server it declares, resolved (an entry with `"enabled": false` included).
    pub servers: Vec<McpServerSpec>,
}

/// Reads `path` (a regular file of at most [`MCP_CONFIG_MAX_BYTES`], never a FIFO or a device)
/// and resolves every server it declares, or fails naming the file, the server and the key.
/// Relative `command` paths and `cwd` anchor at the file's directory, as in `config.toml`.
pub fn load_mcp_servers_file(path: &Path) -> Result<McpServersFile, ConfigError> {
    let bytes =
        rho_component::read_regular(path, MCP_CONFIG_MAX_BYTES).map_err(ConfigError::Read)?;
    let invalid = |message: String| ConfigError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let text = String::from_utf8(bytes).map_err(|_| invalid("not valid UTF-8".into()))?;
    parse_mcp_servers(&text, path).map_err(invalid)
}

/// Parses the text of a servers file; `path` anchors relative paths.
fn parse_mcp_servers(text: &str, path: &Path) -> Result<McpServersFile, String> {
    // Syntax errors say where (line and column), never quoting the text.
    let document: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let serde_json::Value::Object(mut top) = document else {
        return Err(format!("must be a JSON object holding {PREFIX}"));
    };
    let servers = top
        .remove(PREFIX)
        .ok_or_else(|| format!("needs {PREFIX}, an object of servers by identity"))?;
    if let Some(unknown) = top.keys().next() {
        return Err(format!(
            "{unknown:?}: unknown key (the file holds only {PREFIX})"
        ));
    }
    let serde_json::Value::Object(servers) = servers else {
        return Err(format!(
            "{PREFIX}: must be an object of servers by identity"
        ));
    };
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut resolved = Vec::new();
    for (id, entry) in servers {
        let serde_json::Value::Object(entry) = entry else {
            return Err(format!("{PREFIX}.{id}: must be an object"));
        };
        let table = server_table(&id, entry)?;
        let spec = resolve_server(PREFIX, &id, table, &base, Startup::default())
            .map_err(|problems| problems.join("; "))?;
        resolved.push(spec);
    }
    Ok(McpServersFile {
        path: path.to_path_buf(),
        servers: resolved,
    })
}

/// One entry as the table `resolve_server` reads: `type` becomes `transport`, and values that
/// TOML cannot hold (`null`) are refused by key.
fn server_table(
    id: &str,
    entry: serde_json::Map<String, serde_json::Value>,
) -> Result<toml::Table, String> {
    let mut table = toml::Table::new();
    for (key, value) in entry {
        let at = format!("{PREFIX}.{id}.{key}");
        if key == "type" {
            if table.contains_key("transport") {
                return Err(format!("{at}: set either type or transport, not both"));
            }
            let transport = match value.as_str() {
                Some("stdio") => "stdio",
                Some("http" | "streamable_http") => "streamable_http",
                _ => {
                    return Err(format!(
                        "{at}: must be \"stdio\" or \"http\" (Streamable HTTP; rho has no SSE transport)"
                    ));
                }
            };
            table.insert("transport".into(), toml::Value::String(transport.into()));
            continue;
        }
        if key == "transport" && table.contains_key("transport") {
            return Err(format!("{at}: set either type or transport, not both"));
        }
        table.insert(key, toml_value(&at, value)?);
    }
    Ok(table)
}

fn toml_value(at: &str, value: serde_json::Value) -> Result<toml::Value, String> {
    use serde_json::Value as Json;
    Ok(match value {
        Json::Null => return Err(format!("{at}: null is not a value (leave the key out)")),
        Json::Bool(b) => toml::Value::Boolean(b),
        Json::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => toml::Value::Integer(i),
            (None, Some(f)) => toml::Value::Float(f),
            (None, None) => return Err(format!("{at}: not a number rho can read")),
        },
        Json::String(s) => toml::Value::String(s),
        Json::Array(items) => toml::Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| toml_value(&format!("{at}[{i}]"), item))
                .collect::<Result<_, _>>()?,
        ),
        Json::Object(map) => toml::Value::Table(
            map.into_iter()
                .map(|(k, v)| {
                    let inner = format!("{at}.{k}");
                    toml_value(&inner, v).map(|v| (k, v))
                })
                .collect::<Result<_, _>>()?,
        ),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use rho_component::{McpTransport, StdioCommand};

    use super::*;

    fn parse(text: &str) -> Result<McpServersFile, String> {
        parse_mcp_servers(text, Path::new("/etc/rho/servers.json"))
    }

    fn problem(text: &str) -> String {
        match parse(text) {
            Ok(file) => panic!("accepted: {file:?}"),
            Err(problem) => problem,
        }
    }

    #[test]
    fn the_common_shape_resolves_with_rhos_own_keys() {
        let file = parse(
            r#"{"mcpServers": {
                "files": {"command": "npx", "args": ["-y", "server-filesystem"],
                          "env": {"LOG": "1"}, "cwd": "work", "call_timeout_sec": 30},
                "tracker": {"type": "http", "url": "https://mcp.example/mcp",
                            "headers": {"X-Team": "core"}, "startup_timeout_sec": 2.5},
                "local": {"type": "stdio", "command": "./bin/server", "startup": "lazy"}
            }}"#,
        )
        .unwrap();
        let ids: Vec<&str> = file.servers.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["files", "local", "tracker"]);
        let files = &file.servers[0];
        assert_eq!(files.call_timeout, std::time::Duration::from_secs(30));
        let McpTransport::Stdio(stdio) = &files.transport else {
            panic!("{files:?}")
        };
        assert_eq!(stdio.command, StdioCommand::Bare("npx".into()));
        assert_eq!(stdio.cwd.as_deref(), Some(Path::new("/etc/rho/work")));
        let McpTransport::Stdio(local) = &file.servers[1].transport else {
            panic!()
        };
        assert_eq!(
            local.command,
            StdioCommand::Path("/etc/rho/./bin/server".into())
        );
        assert_eq!(file.servers[1].startup, Startup::Lazy);
        let tracker = &file.servers[2];
        assert!(matches!(tracker.transport, McpTransport::StreamableHttp(_)));
        assert_eq!(
            tracker.startup_timeout,
            std::time::Duration::from_millis(2500)
        );
    }

    #[test]
    fn every_strictness_problem_names_the_server_and_key() {
        for (text, expected) in [
            (
                r#"{"servers": {}}"#,
                "needs mcpServers, an object of servers by identity",
            ),
            (
                r#"{"mcpServers": {}, "extra": 1}"#,
                "\"extra\": unknown key (the file holds only mcpServers)",
            ),
            (
                r#"{"mcpServers": []}"#,
                "mcpServers: must be an object of servers by identity",
            ),
            (
                r#"{"mcpServers": {"a": 1}}"#,
                "mcpServers.a: must be an object",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "colour": "red"}}}"#,
                "mcpServers.a.colour: unknown field `colour`",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "url": "https://h/mcp"}}}"#,
                "mcpServers.a.transport: both command and url are set; set transport to choose",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "https://h/mcp", "args": ["x"]}}}"#,
                "mcpServers.a.args: not used by the streamable_http transport",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "headers": {"A": "b"}}}}"#,
                "mcpServers.a.headers: not used by the stdio transport",
            ),
            (
                r#"{"mcpServers": {"a": {"args": ["x"]}}}"#,
                "mcpServers.a: needs command (stdio) or url (streamable_http)",
            ),
            (
                r#"{"mcpServers": {"a": {"type": "http"}}}"#,
                "mcpServers.a.url: required for the streamable_http transport",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "call_timeout_sec": 0}}}"#,
                "mcpServers.a.call_timeout_sec: must be more than 0 and at most 86400 seconds",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "startup_timeout_sec": 0}}}"#,
                "mcpServers.a.startup_timeout_sec: must be more than 0 and at most 86400 seconds",
            ),
            (
                r#"{"mcpServers": {"a": {"type": "sse", "url": "https://h/sse"}}}"#,
                "mcpServers.a.type: must be \"stdio\" or \"http\" (Streamable HTTP; rho has no SSE transport)",
            ),
            (
                r#"{"mcpServers": {"a": {"command": null}}}"#,
                "mcpServers.a.command: null is not a value (leave the key out)",
            ),
        ] {
            // The whole message, but for serde's list of the keys it expected.
            let problem = problem(text);
            let problem = problem
                .split(", expected one of")
                .next()
                .unwrap_or_default();
            assert_eq!(problem, expected, "{text}");
        }
        assert!(
            problem("{\"mcpServers\": ").contains("line 1"),
            "syntax errors say where"
        );
    }
}
