//! The OpenRPC 1.3.1 document of rho's JSON-RPC mode, generated from the wire types. A test
//! keeps `schemas/rho-rpc.openrpc.json` equal to [`document`] (regenerate with
//! `RHO_UPDATE_SCHEMAS=1 cargo test -p rho-rpc openrpc`). OpenRPC has no notion of
//! server-to-client notifications, so they are listed under the `x-notifications` extension
//! with the same shape as methods.

use schemars::JsonSchema;
use serde_json::{Value, json};

use crate::methods::{METHODS, NOTIFICATIONS};

/// The JSON Schema of `T` (draft-07, inlined).
pub(crate) fn schema<T: JsonSchema>() -> Value {
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
pub(crate) fn params_of<T: JsonSchema>() -> Value {
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
    let methods: Vec<Value> = METHODS
        .iter()
        .map(|m| {
            let (params, result_name, result) = m.schemas();
            method(m.name(), m.summary(), params, result_name, result)
        })
        .collect();
    let notifications: Vec<Value> = NOTIFICATIONS
        .iter()
        .map(|n| notification(n.name(), n.summary(), n.params_schema()))
        .collect();
    json!({
        "openrpc": "1.3.1",
        "info": {
            "title": "rho JSON-RPC mode",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "rho as a headless agent over JSON-RPC 2.0 on stdin/stdout: one request per line, notifications without id. Errors: -32700 parse error, -32600 invalid request (also: the queue is full, nothing to abort, no approval or question pending, an id still in flight, batches), -32601 method not found, -32602 invalid params, -32603 internal error.",
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
        let methods: Vec<&str> = crate::METHODS.iter().map(|m| m.name()).collect();
        let notifications: Vec<&str> = crate::NOTIFICATIONS.iter().map(|n| n.name()).collect();
        assert_eq!(names("methods"), methods);
        assert_eq!(names("x-notifications"), notifications);
        let prompt = doc["methods"][0]["params"].as_array().unwrap();
        let param = |name: &str| prompt.iter().find(|p| p["name"] == name).unwrap();
        assert_eq!(param("message")["required"], true);
        assert_eq!(param("steer")["required"], false);
        assert_eq!(param("attachments")["required"], false);
    }
}
