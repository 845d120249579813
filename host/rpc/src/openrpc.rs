//! The OpenRPC 1.3.1 document of rho's JSON-RPC mode, generated from the wire types. A test
//! keeps `schemas/rho-rpc.openrpc.json` equal to [`document`] (regenerate with
//! `RHO_UPDATE_SCHEMAS=1 cargo test -p rho-cli --test schemas`), and `rho rpc` answers `rpc.discover`
//! with it ([`DISCOVER`]). OpenRPC has no notion of server-to-client notifications, so they are
//! listed under the `x-notifications` extension with the same shape as methods.
//!
//! The document is written for client generators (`docs/rpc.md`, "The OpenRPC document"): a
//! method's params list the required ones first, because generated clients turn them into
//! positional arguments; methods take params by name or by position (`paramStructure:
//! either`), and by-position params are named after this order (`param_slots`); a `format`
//! is one JSON Schema defines, never schemars' names of Rust number types.

use std::sync::LazyLock;

use schemars::JsonSchema;
use schemars::transform::RecursiveTransform;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::methods::{METHODS, NOTIFICATIONS};

/// The OpenRPC service-discovery method: its result is the document. It is not one of the
/// document's methods (the specification reserves `rpc.`-prefixed names, and a generated
/// client could not name it).
pub const DISCOVER: &str = "rpc.discover";

/// The formats JSON Schema draft-07 (the dialect of OpenRPC 1.3.1) defines. Others, such as
/// the `uint64` and `double` schemars writes for Rust's number types, make strict validators
/// refuse the whole schema.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The JSON Schema of `T` (draft-07, inlined, standard formats only).
pub(crate) fn schema<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| s.inline_subschemas = true)
        .with_transform(RecursiveTransform(standard_formats_only))
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    if let Some(map) = value.as_object_mut() {
        map.remove("$schema");
    }
    value
}

/// Drops a `format` JSON Schema does not define (the range stays in `minimum`).
fn standard_formats_only(schema: &mut schemars::Schema) {
    let standard = schema
        .get("format")
        .and_then(Value::as_str)
        .is_none_or(|format| STANDARD_FORMATS.contains(&format));
    if !standard {
        schema.remove("format");
    }
}

/// Params as OpenRPC content descriptors, from a params struct's schema: the required ones
/// first, in the order the struct declares them (the schema's `required` list keeps it), then
/// the optional ones by name.
pub(crate) fn params_of<T: JsonSchema>() -> Value {
    let schema = schema::<T>();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema["properties"].as_object() else {
        return Value::Array(Vec::new());
    };
    let optional = properties
        .keys()
        .map(String::as_str)
        .filter(|name| !required.contains(name));
    let descriptors = required
        .iter()
        .copied()
        .chain(optional)
        .filter_map(|name| {
            let mut property = properties.get(name)?.clone();
            let description = property
                .as_object_mut()
                .and_then(|p| p.remove("description"));
            let mut descriptor = json!({
                "name": name,
                "required": required.contains(&name),
                "schema": property,
            });
            if let Some(description) = description {
                descriptor["description"] = description;
            }
            Some(descriptor)
        })
        .collect();
    Value::Array(descriptors)
}

fn method(name: &str, summary: &str, params: Value, result_name: &str, result: Value) -> Value {
    json!({
        "name": name,
        "summary": summary,
        // Generated clients send by position (`docs/rpc.md`, "The OpenRPC document").
        "paramStructure": "either",
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

/// The document, built once: `rpc.discover` and by-position params read it.
static DOCUMENT: LazyLock<Value> = LazyLock::new(document);

/// The document as `rpc.discover` answers it (`None` if it could not be written as JSON, which
/// the tests rule out).
pub(crate) fn discover_result() -> Option<&'static RawValue> {
    static TEXT: LazyLock<Option<Box<RawValue>>> =
        LazyLock::new(|| serde_json::value::to_raw_value(&*DOCUMENT).ok());
    TEXT.as_deref()
}

/// The params of `method` in the document's order, as by-position params fill them: each
/// one's name and whether it is required.
pub(crate) fn param_slots(method: &str) -> Vec<(&'static str, bool)> {
    let descriptors = DOCUMENT["methods"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["name"] == method)
        .and_then(|m| m["params"].as_array());
    descriptors
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["name"].as_str()?, p["required"] == true)))
        .collect()
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
            "description": "rho as a headless agent over JSON-RPC 2.0 on stdin/stdout: one request per line, notifications without id. Errors: -32700 parse error, -32600 invalid request (also: the queue is full, nothing to abort, no approval or question pending, an id still in flight, batches), -32601 method not found, -32602 invalid params, -32603 internal error. Params go by name or by position (in the order listed); rpc.discover answers this document.",
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

    #[test]
    fn every_summary_is_its_doc_comment_joined_with_single_spaces() {
        let summaries = crate::METHODS
            .iter()
            .map(|m| (m.name(), m.summary()))
            .chain(crate::NOTIFICATIONS.iter().map(|n| (n.name(), n.summary())));
        for (name, summary) in summaries {
            // An entry without a doc comment, or a `#[doc]` line without its leading space,
            // would give an empty summary or two words run together.
            assert!(!summary.is_empty(), "{name} has no doc comment");
            assert!(!summary.contains("  "), "{name}: {summary:?}");
            assert!(
                summary.chars().next().is_some_and(char::is_uppercase)
                    || summary.starts_with("rho "),
                "{name}: {summary:?} does not begin a sentence"
            );
        }
    }

    /// Every entry of `key` with its params' names and whether each is required.
    fn params(doc: &Value, key: &str) -> Vec<(String, Vec<(String, bool)>)> {
        doc[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let params = m["params"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| {
                        let name = p["name"].as_str().unwrap().to_owned();
                        (name, p["required"].as_bool().unwrap())
                    })
                    .collect();
                (m["name"].as_str().unwrap().to_owned(), params)
            })
            .collect()
    }

    /// Generated clients make params positional arguments, and an optional argument cannot
    /// come before a required one; required ones keep their declared order.
    #[test]
    fn required_params_come_first_in_declared_order() {
        let doc = document();
        for key in ["methods", "x-notifications"] {
            for (method, params) in params(&doc, key) {
                let first_optional = params.iter().position(|(_, required)| !required);
                let last_required = params.iter().rposition(|(_, required)| *required);
                if let (Some(optional), Some(required)) = (first_optional, last_required) {
                    assert!(required < optional, "{method}: {params:?}");
                }
            }
        }
        let order = |method: &str| -> Vec<String> {
            let all = params(&doc, "methods");
            let (_, params) = all.into_iter().find(|(name, _)| name == method).unwrap();
            params.into_iter().map(|(name, _)| name).collect()
        };
        assert_eq!(order("prompt"), ["message", "attachments", "steer"]);
        assert_eq!(
            order("complete"),
            ["command", "argument", "value", "filledArguments"]
        );
        assert_eq!(order("approvalResponse"), ["approved", "message"]);
        assert_eq!(
            order("questionResponse"),
            ["questionId", "action", "answers"]
        );
        // By-position params are named in exactly this order.
        assert_eq!(
            param_slots("complete"),
            [
                ("command", true),
                ("argument", true),
                ("value", true),
                ("filledArguments", false)
            ]
        );
    }

    /// Words JavaScript reserves in strict mode (where generated TypeScript clients run), with
    /// `arguments` and `eval`, which strict mode forbids as parameter names.
    const RESERVED: &[&str] = &[
        "arguments",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "eval",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "function",
        "if",
        "implements",
        "import",
        "in",
        "instanceof",
        "interface",
        "let",
        "new",
        "null",
        "package",
        "private",
        "protected",
        "public",
        "return",
        "static",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
    ];

    /// A generated client has a member per method and a parameter per param: each name must
    /// be an identifier JavaScript allows there.
    #[test]
    fn method_and_param_names_are_usable_javascript_identifiers() {
        let identifier = |name: &str| {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
                && !RESERVED.contains(&name)
        };
        for (method, params) in params(&document(), "methods") {
            assert!(identifier(&method), "method {method}");
            for (param, _) in params {
                assert!(identifier(&param), "{method}: param {param}");
            }
        }
    }

    /// Every `format` anywhere in the document, with where it is.
    fn formats(value: &Value, at: &str, found: &mut Vec<(String, String)>) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    let path = format!("{at}/{key}");
                    if key == "format"
                        && let Some(format) = inner.as_str()
                    {
                        found.push((path.clone(), format.to_owned()));
                    }
                    formats(inner, &path, found);
                }
            }
            Value::Array(items) => {
                for (i, inner) in items.iter().enumerate() {
                    formats(inner, &format!("{at}/{i}"), found);
                }
            }
            _ => {}
        }
    }

    /// Strict validators (ajv, which generated clients use) refuse a schema with a format
    /// they do not know; schemars' names for Rust's number types are not JSON Schema's.
    #[test]
    fn the_document_uses_only_formats_json_schema_defines() {
        let doc = document();
        let mut found = Vec::new();
        formats(&doc, "", &mut found);
        let other: Vec<_> = found
            .iter()
            .filter(|(_, format)| !STANDARD_FORMATS.contains(&format.as_str()))
            .collect();
        assert!(
            other.is_empty(),
            "formats JSON Schema does not define: {other:?}"
        );
        // The number types keep their range without a format.
        let question_id = &doc["methods"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "questionResponse")
            .unwrap()["params"][0]["schema"];
        assert_eq!(question_id, &json!({"type": "integer", "minimum": 0}));
    }

    #[test]
    fn methods_take_params_by_name_or_by_position() {
        let doc = document();
        for method in doc["methods"].as_array().unwrap() {
            assert_eq!(method["paramStructure"], "either", "{}", method["name"]);
        }
        for notification in doc["x-notifications"].as_array().unwrap() {
            assert_eq!(notification["paramStructure"], "by-name");
        }
    }
}
