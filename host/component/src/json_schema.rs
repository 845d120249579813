//! JSON Schema both ways: the schema of what a Rust type reads ([`input_schema`], derived with
//! schemars: `config.toml`, the built-in tools' arguments), and how a violation reads wherever
//! rho validates a document a package or a server supplies ([`schema_problems`]: an Agent
//! Plugins manifest, an `mcp.json`, a tool's structured output), and [`json_kind`], the one
//! wording of a JSON value's type where a message says what was found instead.

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
use serde_json::Value;

/// The JSON Schema (2020-12) of the documents `T` deserializes from, its descriptions taken
/// from `T`'s doc comments. Written for inputs that have no null (TOML, a tool's JSON
/// arguments): an `Option` field is one that may be absent, so schemars' `null` alternative
/// (and a `null` default) goes, as does `format`, which names Rust's number types (`uint32`,
/// `double`) rather than anything a reader checks; descriptions lose the doc comments' line
/// wrapping (paragraphs stay).
pub fn input_schema<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .with_transform(RecursiveTransform(tidy))
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

fn tidy(schema: &mut Schema) {
    if schema.get("default") == Some(&Value::Null) {
        schema.remove("default");
    }
    schema.remove("format");
    if let Some(Value::String(text)) = schema.get_mut("description") {
        *text = text
            .split("\n\n")
            .map(|paragraph| paragraph.replace('\n', " "))
            .collect::<Vec<_>>()
            .join("\n\n");
    }
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            schema.insert("type".into(), only);
        }
    }
    let Some(Value::Array(branches)) = schema.get_mut("anyOf") else {
        return;
    };
    branches.retain(|b| b.get("type").and_then(Value::as_str) != Some("null"));
    if branches.len() == 1 {
        let only = branches.remove(0);
        schema.remove("anyOf");
        if let Value::Object(only) = only {
            for (key, value) in only {
                schema.insert(key, value);
            }
        }
    }
}

/// One line per violation of `validator` by `instance` (`/servers/a/url: "x" is not a "uri"`;
/// a violation at the root has no path), in the validator's order.
pub fn schema_problems<'a>(
    validator: &'a jsonschema::Validator,
    instance: &'a Value,
) -> impl Iterator<Item = String> + 'a {
    validator.iter_errors(instance).map(|e| {
        let at = e.instance_path().to_string();
        if at.is_empty() {
            e.to_string()
        } else {
            format!("{at}: {e}")
        }
    })
}

/// The kind of a JSON value as a message names it (`expected an object, got an array`):
/// `null`, `a boolean`, `a number`, `a string`, `an array` or `an object`.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Implements `serde::Serialize` and `schemars::JsonSchema` for a unit enum through its
/// `as_str(self)` and its `ALL` list, so the word a value serializes to, the words its schema
/// allows and the word a table prints are one definition (strum's `IntoStaticStr` and
/// `VariantArray` derive those two from the variants). The crate using it depends on serde and
/// schemars.
#[macro_export]
macro_rules! serialize_as_words {
    ($ty:ident, $description:literal) => {
        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl ::schemars::JsonSchema for $ty {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }

            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                let words: ::std::vec::Vec<&str> = Self::ALL.iter().map(|v| v.as_str()).collect();
                ::schemars::json_schema!({
                    "description": $description,
                    "type": "string",
                    "enum": words,
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    /// What the text of the file says.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Example {
        /// The name,
        /// wrapped over two lines.
        name: String,
        /// How many.
        count: Option<u32>,
        /// The kind.
        kind: Option<Kind>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Kind {
        A,
    }

    #[test]
    fn input_schemas_have_no_null_and_no_rust_formats() {
        let schema = input_schema::<Example>();
        let text = schema.to_string();
        assert!(!text.contains("null") && !text.contains("format"), "{text}");
        let properties = &schema["properties"];
        assert_eq!(properties["count"]["type"], "integer");
        assert_eq!(properties["kind"]["$ref"], "#/$defs/Kind");
        assert_eq!(
            properties["name"]["description"],
            "The name, wrapped over two lines."
        );
        assert_eq!(schema["required"], json!(["name"]));
    }

    #[test]
    fn problems_name_where_and_what() {
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        let validator = jsonschema::options().offline().build(&schema).unwrap();
        let missing: Vec<String> = schema_problems(&validator, &json!({})).collect();
        assert_eq!(missing, [r#""n" is a required property"#]);
        let wrong: Vec<String> = schema_problems(&validator, &json!({"n": "x"})).collect();
        assert_eq!(wrong, [r#"/n: "x" is not of type "integer""#]);
        assert_eq!(schema_problems(&validator, &json!({"n": 1})).count(), 0);
    }

    #[test]
    fn kinds_read_as_a_message_says_them() {
        let kinds: Vec<&str> = [
            json!(null),
            json!(true),
            json!(1.5),
            json!("x"),
            json!([]),
            json!({}),
        ]
        .iter()
        .map(json_kind)
        .collect();
        assert_eq!(
            kinds,
            [
                "null",
                "a boolean",
                "a number",
                "a string",
                "an array",
                "an object"
            ]
        );
    }
}
