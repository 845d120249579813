//! The JSON lines the bench reads from the processes it drives (`rho rpc`, `fake-mcp`), parsed
//! with serde_json: a line that is not JSON fails with a message naming who printed it, and a
//! JSON-RPC response is told from a notification or a request by its `id` and no `method`;
//! and the requests the bench writes: `prompt` to `rho rpc`, and a bare MCP client's handshake
//! and `tools/call` to a server.

use serde_json::{Value, json};

/// The `prompt` request `id` to `rho rpc` with the user's `message`, as one line.
pub fn prompt_request(id: usize, message: &str) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "prompt",
        "params": {"message": message},
    })
    .to_string()
}

/// A bare MCP client's handshake, as its two lines: `initialize` with id `id` (the 2025-11-25
/// era `fake-mcp` speaks, no client capabilities) and `notifications/initialized`.
pub fn mcp_handshake(id: u64) -> [String; 2] {
    [
        json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "rho-bench", "version": "0"},
            },
        })
        .to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    ]
}

/// `tools/call` of `tool` with id `id`, the id as its one argument (`call`), as one line.
pub fn mcp_call(tool: &str, id: u64) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": {"call": id}},
    })
    .to_string()
}

/// One line `who` printed, parsed.
pub fn parse(line: &str, who: &str) -> Result<Value, String> {
    serde_json::from_str(line).map_err(|e| format!("{who} printed {line:?}: {e}"))
}

/// One line `rho rpc` printed, parsed and checked to be a JSON-RPC 2.0 message.
pub fn rpc_line(line: &str) -> Result<Value, String> {
    let message = parse(line, "rho")?;
    if message["jsonrpc"] != "2.0" {
        return Err(format!(
            "rho printed a line that is not JSON-RPC 2.0: {line}"
        ));
    }
    Ok(message)
}

/// Whether `message` is a response (an `id`, no `method`).
pub fn is_response(message: &Value) -> bool {
    message.get("method").is_none() && message.get("id").is_some()
}

/// Whether `message` is the response to request `id`.
pub fn is_response_to(message: &Value, id: u64) -> bool {
    is_response(message) && message["id"] == id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_parsed_or_named_in_the_error() {
        assert_eq!(parse(r#"{"a":[1]}"#, "rho").unwrap()["a"][0], 1);
        let error = parse("{", "fake-mcp").unwrap_err();
        assert!(error.starts_with("fake-mcp printed \"{\": "), "{error}");
        assert!(rpc_line(r#"{"jsonrpc":"2.0","method":"ready"}"#).is_ok());
        assert!(rpc_line(r#"{"jsonrpc":"1.0","method":"ready"}"#).is_err());
        assert!(rpc_line(r#"[1]"#).is_err());
    }

    #[test]
    fn responses_are_told_by_id_without_method() {
        let response = parse(r#"{"id":7,"jsonrpc":"2.0","result":{}}"#, "rho").unwrap();
        assert!(is_response(&response));
        assert!(is_response_to(&response, 7));
        assert!(!is_response_to(&response, 70));
        let request = parse(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#, "rho").unwrap();
        assert!(!is_response(&request));
        assert!(!is_response_to(&request, 7));
        let notification = parse(r#"{"jsonrpc":"2.0","method":"ready"}"#, "rho").unwrap();
        assert!(!is_response(&notification));
    }
}
