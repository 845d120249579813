//! A conversation made acceptable to providers again after a crash cut it between a tool
//! call and its result.

use super::*;

/// The conversation as a provider accepts it: every tool call of an assistant message gets
/// exactly one result right after it (a synthetic "not run" result when the session ended
/// before the call finished, e.g. after a crash), and tool results that answer no pending
/// call are dropped.
pub fn repair_history(messages: &[ChatMessage]) -> std::borrow::Cow<'_, [ChatMessage]> {
    if is_well_formed(messages) {
        return std::borrow::Cow::Borrowed(messages);
    }
    let mut out: Vec<ChatMessage> = Vec::with_capacity(messages.len());
    let mut pending: Vec<(String, String)> = Vec::new();
    let close = |out: &mut Vec<ChatMessage>, pending: &mut Vec<(String, String)>| {
        for (id, name) in pending.drain(..) {
            out.push(
                ChatMessage::tool_result(
                    id,
                    name,
                    "Not run: the session ended before this call finished.",
                )
                .with_outcome(CallOutcome::Cancelled),
            );
        }
    };
    for message in messages {
        match message.role {
            Role::Tool => {
                let id = message.tool_call_id.as_deref().unwrap_or_default();
                if let Some(at) = pending.iter().position(|(p, _)| p == id) {
                    pending.remove(at);
                    out.push(message.clone());
                }
            }
            _ => {
                close(&mut out, &mut pending);
                if message.role == Role::Assistant {
                    pending = message
                        .tool_calls
                        .iter()
                        .map(|c| (c.id.clone(), c.name.clone()))
                        .collect();
                }
                out.push(message.clone());
            }
        }
    }
    close(&mut out, &mut pending);
    std::borrow::Cow::Owned(out)
}

/// Whether every tool call is answered exactly once before the next non-tool message, and no
/// tool result answers nothing (the common case: then nothing is copied).
fn is_well_formed(messages: &[ChatMessage]) -> bool {
    let mut pending: Vec<&str> = Vec::new();
    for message in messages {
        if message.role == Role::Tool {
            let id = message.tool_call_id.as_deref().unwrap_or_default();
            match pending.iter().position(|p| *p == id) {
                Some(at) => {
                    pending.remove(at);
                }
                None => return false,
            }
        } else {
            if !pending.is_empty() {
                return false;
            }
            if message.role == Role::Assistant {
                pending = message.tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
        }
    }
    pending.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "t".into(),
            arguments: "{}".into(),
        }
    }

    #[test]
    fn histories_cut_by_a_crash_are_repaired() {
        let history = vec![
            ChatMessage::user("go"),
            ChatMessage::assistant("", vec![call("a"), call("b")]),
            ChatMessage::tool_result("b", "t", "done b"),
            // The session ended here: "a" never got a result.
            ChatMessage::user("again"),
            ChatMessage::tool_result("zombie", "t", "answers nothing"),
            ChatMessage::assistant("", vec![call("c")]),
        ];
        let repaired = repair_history(&history).into_owned();
        let shape: Vec<(Role, Option<&str>)> = repaired
            .iter()
            .map(|m| (m.role, m.tool_call_id.as_deref()))
            .collect();
        assert_eq!(
            shape,
            [
                (Role::User, None),
                (Role::Assistant, None),
                (Role::Tool, Some("b")),
                (Role::Tool, Some("a")),
                (Role::User, None),
                (Role::Assistant, None),
                (Role::Tool, Some("c")),
            ]
        );
        assert!(repaired[3].content.starts_with("Not run"));
        // A well-formed history is left as it is.
        assert!(matches!(
            repair_history(&repaired),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
