//! The OpenRPC 1.3.1 document of rho's JSON-RPC mode, generated from the wire types. A test
//! keeps `schemas/rho-rpc.openrpc.json` equal to [`document`] (regenerate with
//! `RHO_UPDATE_SCHEMAS=1 cargo test -p rho-rpc openrpc`). OpenRPC has no notion of
//! server-to-client notifications, so they are listed under the `x-notifications` extension
//! with the same shape as methods.

use schemars::JsonSchema;
use serde_json::{Value, json};

use crate::wire::{
    AgentEndParams, AgentErrorParams, ApprovalRequestParams, ApprovalResponseParams, CompactResult,
    DeltaParams, Empty, ExtensionsResult, MessagesResult, ModelsResult, PromptParams, PromptResult,
    ProvidersResult, ResumeSessionParams, SessionResult, SessionsResult, SetModelParams,
    SetModelResult, StateChangeParams, StateResult, StatsResult, ToolCallParams, ToolDeniedParams,
    ToolProgressParams, ToolResultParams, ToolsResult, UsageParams,
};

fn schema<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    if let Some(map) = value.as_object_mut() {
        map.remove("$schema");
    }
    value
}

/// Params as OpenRPC content descriptors (by name), from a params struct's schema.
fn params_of<T: JsonSchema>() -> Value {
    let schema = schema::<T>();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            let mut property = property.clone();
            let description = property
                .as_object_mut()
                .and_then(|p| p.remove("description"))
                .unwrap_or(Value::Null);
            let mut descriptor = json!({
                "name": name,
                "required": required.contains(&name.as_str()),
                "schema": property,
            });
            if !description.is_null() {
                descriptor["description"] = description;
            }
            out.push(descriptor);
        }
    }
    Value::Array(out)
}

fn method(name: &str, summary: &str, params: Value, result_name: &str, result: Value) -> Value {
    json!({
        "name": name,
        "summary": summary,
        "paramStructure": "by-name",
        "params": params,
        "result": { "name": result_name, "schema": result },
    })
}

fn notification(name: &str, summary: &str, params: Value) -> Value {
    json!({
        "name": name,
        "summary": summary,
        "paramStructure": "by-name",
        "params": params,
    })
}

/// The document.
pub fn document() -> Value {
    let none = || Value::Array(Vec::new());
    let methods = vec![
        method(
            "prompt",
            "Send a user message to the agent (or a mid-turn steering nudge when steer is true)",
            params_of::<PromptParams>(),
            "reply",
            schema::<PromptResult>(),
        ),
        method(
            "abort",
            "Cancel the current operation",
            none(),
            "empty",
            schema::<Empty>(),
        ),
        method(
            "clear",
            "Clear conversation history",
            none(),
            "empty",
            schema::<Empty>(),
        ),
        method(
            "getState",
            "Return model, provider, and cwd",
            none(),
            "state",
            schema::<StateResult>(),
        ),
        method(
            "getMessages",
            "Return all messages on active path",
            none(),
            "messages",
            schema::<MessagesResult>(),
        ),
        method(
            "setModel",
            "Switch model (id or provider:id)",
            params_of::<SetModelParams>(),
            "model",
            schema::<SetModelResult>(),
        ),
        method(
            "listModels",
            "List available models from providers",
            none(),
            "models",
            schema::<ModelsResult>(),
        ),
        method(
            "listProviders",
            "List configured providers with reachability",
            none(),
            "providers",
            schema::<ProvidersResult>(),
        ),
        method(
            "getSessionStats",
            "Return token budget / usage info",
            none(),
            "stats",
            schema::<StatsResult>(),
        ),
        method(
            "listSessions",
            "List previous sessions for project",
            none(),
            "sessions",
            schema::<SessionsResult>(),
        ),
        method(
            "listExtensions",
            "List loaded extensions and tools",
            none(),
            "extensions",
            schema::<ExtensionsResult>(),
        ),
        method(
            "reloadExtensions",
            "Reload extensions from disk (a new tool set for the next turn)",
            none(),
            "extensions",
            schema::<ExtensionsResult>(),
        ),
        method(
            "compact",
            "Trigger context compaction",
            none(),
            "summary",
            schema::<CompactResult>(),
        ),
        method(
            "resumeSession",
            "Resume a previous session from JSONL",
            params_of::<ResumeSessionParams>(),
            "session",
            schema::<SessionResult>(),
        ),
        method(
            "newSession",
            "Start a fresh session (preserves model, provider, tools)",
            none(),
            "session",
            schema::<SessionResult>(),
        ),
        method(
            "listTools",
            "List registered tools with schemas and risk levels",
            none(),
            "tools",
            schema::<ToolsResult>(),
        ),
        method(
            "approvalResponse",
            "Respond to an approval/request; approved false with a message is a redirect",
            params_of::<ApprovalResponseParams>(),
            "empty",
            schema::<Empty>(),
        ),
    ];
    let notifications = vec![
        notification("ready", "Emitted once on startup", none()),
        notification("agent/start", "Agent began processing a prompt", none()),
        notification(
            "agent/end",
            "Agent finished with full result",
            params_of::<AgentEndParams>(),
        ),
        notification(
            "agent/error",
            "Agent loop encountered an error",
            params_of::<AgentErrorParams>(),
        ),
        notification(
            "state/change",
            "Loop state transition (thinking, executing_tool, awaiting_approval, idle)",
            params_of::<StateChangeParams>(),
        ),
        notification(
            "message/delta",
            "Streaming text chunk",
            params_of::<DeltaParams>(),
        ),
        notification(
            "reasoning/delta",
            "Streaming reasoning chunk",
            params_of::<DeltaParams>(),
        ),
        notification(
            "tool/call",
            "Model requested a tool call",
            params_of::<ToolCallParams>(),
        ),
        notification(
            "tool/progress",
            "A running tool reported progress (rho's addition; dropped when the reader falls behind)",
            params_of::<ToolProgressParams>(),
        ),
        notification(
            "tool/result",
            "Tool finished executing",
            params_of::<ToolResultParams>(),
        ),
        notification(
            "tool/denied",
            "Tool call denied by approval gate",
            params_of::<ToolDeniedParams>(),
        ),
        notification(
            "approval/request",
            "Approval required — send approvalResponse",
            params_of::<ApprovalRequestParams>(),
        ),
        notification(
            "usage",
            "Per-iteration token/cost delta and live context snapshot",
            params_of::<UsageParams>(),
        ),
    ];
    json!({
        "openrpc": "1.3.1",
        "info": {
            "title": "rho JSON-RPC mode",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "rho as a headless agent over JSON-RPC 2.0 on stdin/stdout: one request per line, notifications without id. Errors: -32700 parse error, -32600 invalid request (also: a prompt already running, nothing to abort, no approval pending, an id still in flight, batches), -32601 method not found, -32602 invalid params, -32603 internal error.",
        },
        "methods": methods,
        "x-notifications": notifications,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn the_checked_in_openrpc_document_is_generated_from_the_wire_types() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../schemas/rho-rpc.openrpc.json");
        let mut generated = serde_json::to_string_pretty(&document()).unwrap();
        generated.push('\n');
        if std::env::var_os("RHO_UPDATE_SCHEMAS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == generated,
            "schemas/rho-rpc.openrpc.json is stale: run RHO_UPDATE_SCHEMAS=1 cargo test -p rho-rpc openrpc"
        );
    }

    #[test]
    fn every_method_and_notification_is_documented() {
        let doc = document();
        let names = |key: &str| -> Vec<String> {
            doc[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["name"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(names("methods"), crate::METHODS);
        assert_eq!(names("x-notifications"), crate::NOTIFICATIONS);
        let prompt = &doc["methods"][0]["params"];
        assert_eq!(prompt[0]["name"], "message");
        assert_eq!(prompt[0]["required"], true);
        assert_eq!(prompt[1]["name"], "steer");
        assert_eq!(prompt[1]["required"], false);
    }
}
