//! Claude's permission prompts over the stream-json control protocol
//! (`--permission-prompt-tool stdio`): a `control_request` line with the `can_use_tool`
//! subtype asks whether one call may run, rho answers with one `control_response` line
//! (`allow` with the input unchanged, or `deny` with a message), and a
//! `control_cancel_request` line withdraws a request Claude no longer waits for. Also rho's
//! risk level for Claude's tools (`docs/sessions.md`, "The Claude CLI runtime").

use rho_component::RiskLevel;
use serde_json::{Value, json};

/// The arguments of an approval request, at most (the rest is counted): what a person reads,
/// not what Claude runs (an allowed call runs with its whole input).
pub(crate) const MAX_SHOWN_ARGUMENT_BYTES: usize = 16 * 1024;

/// A control message Claude sent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Control {
    /// May this call run?
    CanUseTool(PermissionAsk),
    /// Claude no longer waits for the answer to this request.
    Cancel {
        /// The request withdrawn.
        request_id: String,
    },
    /// A request rho does not serve (hook callbacks, MCP messages): answered with an error so
    /// Claude never waits for it.
    Unsupported {
        /// The request's id.
        request_id: String,
        /// Its subtype, for the error.
        subtype: String,
    },
}

/// One `can_use_tool` request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PermissionAsk {
    /// The id the answer must carry.
    pub(crate) request_id: String,
    /// Claude's tool name (`Bash`).
    pub(crate) tool_name: String,
    /// The call's `tool_use_id` (the id of its `tool/call`); empty when Claude sent none.
    pub(crate) tool_use_id: String,
    /// The input Claude would run the tool with.
    pub(crate) input: Value,
}

impl PermissionAsk {
    /// The input as a person reads it: JSON, cut at [`MAX_SHOWN_ARGUMENT_BYTES`].
    pub(crate) fn shown_arguments(&self) -> String {
        super::stream::bounded_to(self.input.to_string(), MAX_SHOWN_ARGUMENT_BYTES)
    }
}

/// rho's answer to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Run it.
    Allow,
    /// Do not run it; Claude's model reads `message` as the call's result.
    Deny(String),
}

/// The control message in `value` (a line whose `type` is `control_request` or
/// `control_cancel_request`); `None` for a line of another type or one without a request id.
pub(crate) fn parse(value: &Value) -> Option<Control> {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    match value.get("type").and_then(Value::as_str)? {
        "control_cancel_request" => Some(Control::Cancel {
            request_id: text(value, "request_id")?,
        }),
        "control_request" => {
            let request_id = text(value, "request_id")?;
            let request = value.get("request").unwrap_or(&Value::Null);
            let subtype = text(request, "subtype").unwrap_or_default();
            let tool_name = text(request, "tool_name");
            match (subtype.as_str(), tool_name) {
                ("can_use_tool", Some(tool_name)) => Some(Control::CanUseTool(PermissionAsk {
                    request_id,
                    tool_name,
                    tool_use_id: text(request, "tool_use_id").unwrap_or_default(),
                    input: request.get("input").cloned().unwrap_or_else(|| json!({})),
                })),
                _ => Some(Control::Unsupported {
                    request_id,
                    subtype,
                }),
            }
        }
        _ => None,
    }
}

/// The `control_response` line answering `ask`: an allowed call runs with its input
/// unchanged.
pub(crate) fn encode_answer(ask: &PermissionAsk, answer: &Answer) -> String {
    let response = match answer {
        Answer::Allow => json!({"behavior": "allow", "updatedInput": ask.input}),
        Answer::Deny(message) => json!({"behavior": "deny", "message": message}),
    };
    json!({
        "type": "control_response",
        "response": {"subtype": "success", "request_id": ask.request_id, "response": response},
    })
    .to_string()
}

/// The `control_response` line refusing request `request_id` that rho does not serve.
pub(crate) fn encode_unsupported(request_id: &str, subtype: &str) -> String {
    json!({
        "type": "control_response",
        "response": {
            "subtype": "error",
            "request_id": request_id,
            "error": format!("rho does not serve {subtype:?} control requests"),
        },
    })
    .to_string()
}

/// rho's risk level for Claude's tool `name`: its read tools read, its file edit tools write,
/// and everything else (`Bash`, web access, tools rho does not know) is destructive.
pub(crate) fn risk(name: &str) -> RiskLevel {
    match name {
        "Read" | "Glob" | "Grep" | "LS" => RiskLevel::Read,
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => RiskLevel::Write,
        _ => RiskLevel::Destructive,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request as Claude Code 2.1.332 writes it (recorded against the scripted endpoint).
    const ASK: &str = r#"{"type":"control_request","request_id":"e206f854-c1df-4797-931e-964ecfa5b2ab","request":{"subtype":"can_use_tool","tool_name":"Bash","display_name":"Bash","input":{"command":"touch /p/ran.txt","description":"make a file"},"description":"make a file","blocked_path":"/p/ran.txt","matched_ask_rule":{"source":"flagSettings","tool_name":"Bash"},"tool_use_id":"toolu_0001"}}"#;

    fn ask() -> PermissionAsk {
        let value: Value = serde_json::from_str(ASK).unwrap();
        match parse(&value) {
            Some(Control::CanUseTool(ask)) => ask,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_can_use_tool_request_is_read() {
        let ask = ask();
        assert_eq!(ask.request_id, "e206f854-c1df-4797-931e-964ecfa5b2ab");
        assert_eq!(ask.tool_name, "Bash");
        assert_eq!(ask.tool_use_id, "toolu_0001");
        assert_eq!(
            ask.input,
            json!({"command": "touch /p/ran.txt", "description": "make a file"})
        );
        assert_eq!(
            ask.shown_arguments(),
            r#"{"command":"touch /p/ran.txt","description":"make a file"}"#
        );
    }

    #[test]
    fn answers_are_control_responses_carrying_the_request_id() {
        let ask = ask();
        let allow: Value = serde_json::from_str(&encode_answer(&ask, &Answer::Allow)).unwrap();
        assert_eq!(
            allow,
            json!({"type": "control_response", "response": {
                "subtype": "success",
                "request_id": "e206f854-c1df-4797-931e-964ecfa5b2ab",
                "response": {"behavior": "allow", "updatedInput": ask.input},
            }})
        );
        let deny: Value =
            serde_json::from_str(&encode_answer(&ask, &Answer::Deny("no".into()))).unwrap();
        assert_eq!(
            deny["response"]["response"],
            json!({"behavior": "deny", "message": "no"})
        );
        let error: Value =
            serde_json::from_str(&encode_unsupported("r1", "hook_callback")).unwrap();
        assert_eq!(error["response"]["subtype"], "error");
        assert_eq!(error["response"]["request_id"], "r1");
    }

    #[test]
    fn cancels_other_requests_and_other_lines_are_told_apart() {
        let parsed = |line: &str| parse(&serde_json::from_str::<Value>(line).unwrap());
        assert_eq!(
            parsed(r#"{"type":"control_cancel_request","request_id":"r1"}"#),
            Some(Control::Cancel {
                request_id: "r1".into()
            })
        );
        assert_eq!(
            parsed(
                r#"{"type":"control_request","request_id":"r2","request":{"subtype":"hook_callback"}}"#
            ),
            Some(Control::Unsupported {
                request_id: "r2".into(),
                subtype: "hook_callback".into()
            })
        );
        // A can_use_tool without a tool name cannot be asked about: it is refused as such.
        assert!(matches!(
            parsed(
                r#"{"type":"control_request","request_id":"r3","request":{"subtype":"can_use_tool"}}"#
            ),
            Some(Control::Unsupported { .. })
        ));
        assert_eq!(parsed(r#"{"type":"control_request","request":{}}"#), None);
        assert_eq!(parsed(r#"{"type":"assistant"}"#), None);
        // An input that is not given is an empty object.
        let Some(Control::CanUseTool(ask)) = parsed(
            r#"{"type":"control_request","request_id":"r4","request":{"subtype":"can_use_tool","tool_name":"X"}}"#,
        ) else {
            panic!("not read")
        };
        assert_eq!(ask.input, json!({}));
        assert_eq!(ask.tool_use_id, "");
    }

    #[test]
    fn shown_arguments_are_bounded() {
        let mut ask = ask();
        ask.input = json!({"command": "x".repeat(3 * MAX_SHOWN_ARGUMENT_BYTES)});
        let shown = ask.shown_arguments();
        assert!(
            shown.len() < MAX_SHOWN_ARGUMENT_BYTES + 64,
            "{}",
            shown.len()
        );
        assert!(shown.ends_with("more bytes"), "{shown}");
    }

    #[test]
    fn claudes_tools_have_rhos_risk_levels() {
        for (name, risk_level) in [
            ("Read", RiskLevel::Read),
            ("Glob", RiskLevel::Read),
            ("Grep", RiskLevel::Read),
            ("LS", RiskLevel::Read),
            ("Edit", RiskLevel::Write),
            ("Write", RiskLevel::Write),
            ("NotebookEdit", RiskLevel::Write),
            ("Bash", RiskLevel::Destructive),
            ("WebFetch", RiskLevel::Destructive),
            ("mcp__x__y", RiskLevel::Destructive),
        ] {
            assert_eq!(risk(name), risk_level, "{name}");
        }
    }
}
