//! The names `rho mcp serve` serves tools and prompts under: rho's exported names
//! (`mcp__<server>__<tool>`, `<server>:<prompt>`) by default, or with `--upstream-names` each
//! server's own (`echo`, `greet`), for a client that wants one wrapped server to look like
//! itself; and the clash of two served components over one such name, which refuses the start.

use rho_component::{ToolOrigin, ToolSpec};

/// Which names MCP tools and prompts are served under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServedNames {
    /// rho's exported names: `mcp__<server>__<tool>`, `<server>:<prompt>`.
    #[default]
    Exported,
    /// Each server's own names (`--upstream-names`); WASM and built-in tools keep theirs.
    Upstream,
}

impl ServedNames {
    /// The name `spec`'s tool is served under.
    pub(super) fn tool(self, spec: &ToolSpec) -> &str {
        match (self, &spec.origin) {
            (Self::Upstream, ToolOrigin::Mcp { tool, .. }) => tool,
            _ => &spec.name,
        }
    }

    /// The name `server`'s prompt `prompt` is served under.
    pub(super) fn prompt(self, server: &str, prompt: &str) -> String {
        match self {
            Self::Exported => format!("{server}:{prompt}"),
            Self::Upstream => prompt.to_owned(),
        }
    }
}

/// What serves a tool, as a clash names it.
pub(super) fn tool_owner(spec: &ToolSpec) -> String {
    match &spec.origin {
        ToolOrigin::Builtin => "rho's built-in tools".to_owned(),
        ToolOrigin::Mcp { server, .. } => format!("MCP server {server:?}"),
        ToolOrigin::Wasm { plugin, .. } => format!("plugin {plugin:?}"),
    }
}

/// Two served components that would share a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameClash {
    /// `tool` or `prompt`.
    pub kind: &'static str,
    /// The name both would get.
    pub name: String,
    /// What serves the first (`MCP server "a"`).
    pub first: String,
    /// What serves the second.
    pub second: String,
}

/// The first name that two of `served` (`(name, owner)`, in serving order) share.
pub(super) fn first_clash(
    kind: &'static str,
    served: impl IntoIterator<Item = (String, String)>,
) -> Option<NameClash> {
    let mut seen: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for (name, owner) in served {
        if let Some(first) = seen.get(&name) {
            return Some(NameClash {
                kind,
                name,
                first: first.clone(),
                second: owner,
            });
        }
        seen.insert(name, owner);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mcp(server: &str, tool: &str) -> ToolSpec {
        ToolSpec {
            name: format!("mcp__{server}__{tool}"),
            title: None,
            description: String::new(),
            input_schema: serde_json::json!({"type": "object"}),
            output_schema: None,
            risk: rho_component::RiskLevel::Destructive,
            origin: ToolOrigin::Mcp {
                server: server.to_owned(),
                plugin: None,
                tool: tool.to_owned(),
            },
        }
    }

    #[test]
    fn upstream_names_are_the_servers_own_and_others_keep_theirs() {
        let echo = mcp("a", "echo");
        assert_eq!(ServedNames::Exported.tool(&echo), "mcp__a__echo");
        assert_eq!(ServedNames::Upstream.tool(&echo), "echo");
        let builtin = ToolSpec {
            name: "read_file".to_owned(),
            origin: ToolOrigin::Builtin,
            ..echo
        };
        assert_eq!(ServedNames::Upstream.tool(&builtin), "read_file");
        assert_eq!(ServedNames::Exported.prompt("a", "greet"), "a:greet");
        assert_eq!(ServedNames::Upstream.prompt("a", "greet"), "greet");
    }

    #[test]
    fn the_first_shared_name_is_the_clash_with_both_owners() {
        let specs = [mcp("a", "echo"), mcp("a", "add"), mcp("b", "echo")];
        let served = specs
            .iter()
            .map(|s| (ServedNames::Upstream.tool(s).to_owned(), tool_owner(s)));
        assert_eq!(
            first_clash("tool", served),
            Some(NameClash {
                kind: "tool",
                name: "echo".to_owned(),
                first: "MCP server \"a\"".to_owned(),
                second: "MCP server \"b\"".to_owned(),
            })
        );
        let exported = specs
            .iter()
            .map(|s| (ServedNames::Exported.tool(s).to_owned(), tool_owner(s)));
        assert_eq!(first_clash("tool", exported), None);
    }
}
