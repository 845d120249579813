//! The description a model sees for an exported MCP tool: the server's text, the readable
//! title, the owning server, and the server's annotations as `Server hint:` lines. Hints come
//! from a server rho does not control: they inform, they never relax an approval.

use crate::ServerTool;

/// Builds the exported description of `tool` from server `server`.
pub fn exported_description(server: &str, tool: &ServerTool) -> String {
    let mut out = String::new();
    if let Some(title) = tool.title().or_else(|| {
        tool.definition
            .pointer("/annotations/title")
            .and_then(serde_json::Value::as_str)
    }) {
        out.push_str(title);
        out.push_str(": ");
    }
    out.push_str(tool.description().unwrap_or("(no description)"));
    out.push_str(&format!(
        "\n(MCP tool `{}` of server `{server}`)",
        tool.name
    ));
    let hint = |key: &str| {
        tool.definition
            .pointer(&format!("/annotations/{key}"))
            .and_then(serde_json::Value::as_bool)
    };
    for (key, yes, no) in [
        ("readOnlyHint", "read-only", "may modify its environment"),
        ("destructiveHint", "may be destructive", "not destructive"),
        ("idempotentHint", "idempotent", "not idempotent"),
        ("openWorldHint", "reaches outside systems", "closed world"),
    ] {
        if let Some(value) = hint(key) {
            out.push_str(&format!(
                "\n{}{} ({key}: {value})",
                rho_component::SERVER_HINT_PREFIX,
                if value { yes } else { no }
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_server_title_and_hints() {
        let tool = ServerTool {
            name: "rm".into(),
            definition: json!({"name": "rm", "title": "Remove", "description": "Deletes a file.",
                "annotations": {"destructiveHint": true, "readOnlyHint": false}}),
            needs_tasks: false,
        };
        let d = exported_description("files", &tool);
        assert_eq!(
            d,
            "Remove: Deletes a file.\n(MCP tool `rm` of server `files`)\n\
             Server hint: may modify its environment (readOnlyHint: false)\n\
             Server hint: may be destructive (destructiveHint: true)"
        );
    }
}
