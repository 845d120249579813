//! The evidence a session keeps of each MCP server's part of its tool set (`docs/mcp.md`,
//! "Lifecycle evidence"): what `toolset/initialized` and `toolset/closed` report, what the
//! session file records, and the one digest of a server's tool list. Nothing here ever holds
//! what could carry a credential: no URL, header, command, argument, working directory or
//! environment value, only the server's identity, its transport's kind, counts, whether rho
//! lets it sample, and a digest of its tools' names, schemas and task annotations.

use rho_component::{McpServerSpec, Transport};
use rho_mcp::{ClientOptions, ServerTool};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// Hex digits of a [`tools_digest`] (64 bits: enough to tell two tool lists apart, short
/// enough to read).
pub const TOOLS_DIGEST_HEX: usize = 16;

/// One server's part of a session's tool set, as `toolset/initialized` and `toolset/closed`
/// report it and the session file records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerToolset {
    /// The server identity (config key or `<plugin>/<server>`).
    pub server: String,
    /// `stdio` or `streamable_http`.
    pub transport: Transport,
    /// Whether the list came from the running server (`true`) or from the tool cache, the
    /// server not started (`false`). In `toolset/closed`: whether it was running when closed.
    pub live: bool,
    /// Tools it offers (after `[tools] allow`/`deny`).
    pub tools: usize,
    /// Resources and resource templates it offers.
    pub resources: usize,
    /// Prompts it offers.
    pub prompts: usize,
    /// Whether rho tells it that it may ask for the session's model (MCP sampling).
    pub sampling: bool,
    /// [`tools_digest`] of its tools.
    pub digest: String,
}

impl ServerToolset {
    /// The evidence of `spec`'s server offering `tools`, `prompts` prompts and `resources`
    /// resources, `live` or from the cache, to a session declaring `options`.
    pub fn of(
        spec: &McpServerSpec,
        options: &ClientOptions,
        live: bool,
        tools: &[ServerTool],
        prompts: usize,
        resources: usize,
    ) -> Self {
        Self {
            server: spec.id.clone(),
            transport: spec.transport.kind(),
            live,
            tools: tools.len(),
            resources,
            prompts,
            sampling: options.declares_sampling(spec),
            digest: tools_digest(tools),
        }
    }

    /// Logs it under `rho::mcp` (`what`: `toolset initialized`, `toolset closed`).
    pub(crate) fn log(&self, what: &str) {
        tracing::info!(
            target: "rho::mcp",
            server = self.server.as_str(),
            transport = self.transport.as_str(),
            live = self.live,
            tools = self.tools,
            resources = self.resources,
            prompts = self.prompts,
            sampling = self.sampling,
            digest = self.digest.as_str(),
            "{what}"
        );
    }
}

/// A server whose digest differs from the one the resumed session file recorded
/// (`toolset/changed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolsetChanged {
    /// The server identity.
    pub server: String,
    /// The digest the session file recorded last.
    pub previous: String,
    /// The digest now.
    pub current: String,
    /// Whether `current` is the running server's list (`false`: the tool cache's).
    pub live: bool,
}

/// The digest of a tool list: the first [`TOOLS_DIGEST_HEX`] hex digits of the SHA-256 of a
/// canonical JSON array, one object per tool sorted by name, holding only `name`,
/// `inputSchema`, `outputSchema` (`null` when absent) and `needsTasks`, every object's keys
/// sorted and no whitespace. Descriptions, titles and annotations are left out: a reworded
/// description is the same tool list. The order the server lists its tools in does not count.
pub fn tools_digest(tools: &[ServerTool]) -> String {
    let mut sorted: Vec<&ServerTool> = tools.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut canonical = String::from("[");
    for (i, tool) in sorted.into_iter().enumerate() {
        if i > 0 {
            canonical.push(',');
        }
        let field = |name: &str| tool.definition.get(name).cloned().unwrap_or(Value::Null);
        let entry = serde_json::json!({
            "name": tool.name,
            "inputSchema": field("inputSchema"),
            "outputSchema": field("outputSchema"),
            "needsTasks": tool.needs_tasks,
        });
        write_canonical(&entry, &mut canonical);
    }
    canonical.push(']');
    let mut hex = super::tool_cache::hex(&Sha256::digest(canonical.as_bytes()));
    hex.truncate(TOOLS_DIGEST_HEX);
    hex
}

/// `value` as JSON with every object's keys sorted (whatever order the map keeps them in).
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(value) = map.get(key) {
                    write_canonical(value, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str, definition: Value) -> ServerTool {
        ServerTool {
            name: name.to_owned(),
            definition,
            needs_tasks: false,
        }
    }

    fn pair() -> Vec<ServerTool> {
        vec![
            tool(
                "search",
                json!({"name": "search", "description": "Finds things.",
                       "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}},
                                       "required": ["q"]}}),
            ),
            tool(
                "fetch",
                json!({"name": "fetch", "inputSchema": {"type": "object"},
                       "outputSchema": {"type": "object", "properties": {"body": {"type": "string"}}}}),
            ),
        ]
    }

    #[test]
    fn the_digest_is_sixteen_hex_digits_and_ignores_order() {
        let digest = tools_digest(&pair());
        assert_eq!(digest.len(), TOOLS_DIGEST_HEX);
        assert!(digest.bytes().all(|b| b.is_ascii_hexdigit()), "{digest}");
        let mut reversed = pair();
        reversed.reverse();
        assert_eq!(tools_digest(&reversed), digest);
        // Keys in another order are the same schema.
        let mut shuffled = pair();
        shuffled[0].definition = json!({"inputSchema": {"required": ["q"],
            "properties": {"q": {"type": "string"}}, "type": "object"}, "name": "search"});
        assert_eq!(tools_digest(&shuffled), digest);
        assert_ne!(tools_digest(&[]), digest);
    }

    #[test]
    fn the_digest_changes_with_a_name_a_schema_or_a_task_annotation() {
        let digest = tools_digest(&pair());
        let changed = |change: &dyn Fn(&mut Vec<ServerTool>)| {
            let mut tools = pair();
            change(&mut tools);
            tools_digest(&tools)
        };
        assert_ne!(changed(&|t| t[0].name = "find".into()), digest);
        assert_ne!(
            changed(&|t| t[0].definition["inputSchema"]["required"] = json!([])),
            digest
        );
        assert_ne!(
            changed(&|t| t[1].definition["outputSchema"] = Value::Null),
            digest
        );
        assert_ne!(changed(&|t| t[1].needs_tasks = true), digest);
        assert_ne!(changed(&|t| t.truncate(1)), digest);
    }

    #[test]
    fn the_digest_ignores_descriptions_titles_and_annotations() {
        let digest = tools_digest(&pair());
        let mut reworded = pair();
        reworded[0].definition["description"] = json!("Looks things up.");
        reworded[1].definition["title"] = json!("Fetch");
        reworded[1].definition["annotations"] = json!({"readOnlyHint": true});
        assert_eq!(tools_digest(&reworded), digest);
    }
}
