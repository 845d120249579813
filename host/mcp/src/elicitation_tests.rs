//! The elicitation mapping table, both ways: schema to form, text answers to typed JSON.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeMap;

use rho_component::{Choice, FieldKind};
use serde_json::{Value, json};

use super::{FormPlan, plan};

fn object(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

fn one(property: Value) -> FormPlan {
    plan("m", &object(json!({"f": property})), None).unwrap()
}

fn answers(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn answer(plan: &FormPlan, text: &str) -> Result<Value, String> {
    plan.content(&answers(&[("f", text)]))
        .map(|content| content["f"].clone())
}

fn choice(value: &str, title: Option<&str>) -> Choice {
    Choice {
        value: value.into(),
        title: title.map(str::to_owned),
    }
}

#[test]
fn primitive_types_map_to_their_kinds() {
    for (schema, kind) in [
        (json!({"type": "string"}), FieldKind::Text),
        (json!({"type": "number"}), FieldKind::Number),
        (json!({"type": "integer"}), FieldKind::Integer),
        (json!({"type": "boolean"}), FieldKind::Boolean),
        (json!({"type": "string", "enum": ["a"]}), FieldKind::Choice),
        (
            json!({"type": "array", "items": {"enum": ["a"]}}),
            FieldKind::MultiChoice,
        ),
    ] {
        assert_eq!(one(schema.clone()).form.fields[0].kind, kind, "{schema}");
    }
}

#[test]
fn single_choices_come_from_enum_one_of_and_legacy_enum_names() {
    let untitled = one(json!({"type": "string", "enum": ["a", "b"]}));
    assert_eq!(
        untitled.form.fields[0].choices,
        vec![choice("a", None), choice("b", None)]
    );
    let titled = one(json!({"type": "string", "oneOf": [
        {"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Batman"}
    ]}));
    assert_eq!(
        titled.form.fields[0].choices,
        vec![choice("h1", Some("Superman")), choice("h2", Some("Batman"))]
    );
    let legacy =
        one(json!({"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"]}));
    assert_eq!(
        legacy.form.fields[0].choices,
        vec![choice("p1", Some("Cats")), choice("p2", Some("Dogs"))]
    );
    // enumNames that do not match the values one to one are ignored, not misapplied.
    let mismatched = one(json!({"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats"]}));
    assert_eq!(mismatched.form.fields[0].choices[0].title, None);
}

#[test]
fn multi_choices_come_from_items_enum_or_items_any_of() {
    let untitled = one(json!({"type": "array", "items": {"type": "string", "enum": ["x", "y"]}}));
    assert_eq!(
        untitled.form.fields[0].choices,
        vec![choice("x", None), choice("y", None)]
    );
    let titled = one(json!({"type": "array", "items": {"anyOf": [
        {"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"}
    ]}}));
    assert_eq!(
        titled.form.fields[0].choices,
        vec![choice("f1", Some("Tuna")), choice("f2", Some("Trout"))]
    );
}

#[test]
fn description_and_constraints_become_help_in_a_fixed_order() {
    let field = &one(json!({
        "type": "string", "description": "Your email", "format": "email",
        "minLength": 3, "maxLength": 50, "pattern": "^.+@.+$"
    }))
    .form
    .fields[0];
    assert_eq!(
        field.help.as_deref(),
        Some(
            "Your email (format email, at least 3 characters, at most 50 characters, matching ^.+@.+$)"
        )
    );
    let number = &one(json!({"type": "number", "minimum": 0, "maximum": 1000}))
        .form
        .fields[0];
    assert_eq!(number.help.as_deref(), Some("at least 0, at most 1000"));
    let multi =
        &one(json!({"type": "array", "minItems": 1, "maxItems": 3, "items": {"enum": ["a"]}}))
            .form
            .fields[0];
    assert_eq!(
        multi.help.as_deref(),
        Some("at least 1 choices, at most 3 choices")
    );
    let plain = &one(json!({"type": "string", "description": "Name"}))
        .form
        .fields[0];
    assert_eq!(plain.help.as_deref(), Some("Name"));
    assert_eq!(one(json!({"type": "string"})).form.fields[0].help, None);
}

#[test]
fn defaults_become_answer_text() {
    let cases = [
        (json!({"type": "string", "default": "John Doe"}), "John Doe"),
        (json!({"type": "integer", "default": 30}), "30"),
        (json!({"type": "number", "default": 95.5}), "95.5"),
        (json!({"type": "boolean", "default": true}), "true"),
        (
            json!({"type": "string", "enum": ["active", "x"], "default": "active"}),
            "active",
        ),
        (
            json!({"type": "array", "items": {"enum": ["a", "b"]}, "default": ["a", "b"]}),
            "a, b",
        ),
    ];
    for (schema, text) in cases {
        let plan = one(schema.clone());
        assert_eq!(
            plan.form.fields[0].default.as_deref(),
            Some(text),
            "{schema}"
        );
        // A default given back as the answer types back to the default itself.
        assert_eq!(answer(&plan, text).unwrap(), schema["default"], "{schema}");
    }
    assert_eq!(
        one(json!({"type": "string", "default": {"x": 1}}))
            .form
            .fields[0]
            .default,
        None
    );
}

#[test]
fn required_title_and_wire_order_are_kept() {
    let schema = json!({
        "type": "object",
        "properties": {"b": {"type": "string", "title": "Bee"}, "a": {"type": "string"}, "c": {"type": "string"}},
        "required": ["a"]
    });
    let order = vec!["c".to_owned(), "b".to_owned(), "gone".to_owned()];
    let plan = plan("hello", &schema, Some(&order)).unwrap();
    assert_eq!(plan.form.message, "hello");
    let names: Vec<&str> = plan.form.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["c", "b", "a"], "wire order first, the rest by name");
    assert!(plan.form.fields[2].required);
    assert!(!plan.form.fields[0].required);
    assert_eq!(plan.form.fields[1].title.as_deref(), Some("Bee"));
}

#[test]
fn schemas_rho_cannot_render_are_refused_whole() {
    for schema in [
        json!({"type": "object"}),
        json!({"type": "object", "properties": {}}),
        json!({"type": "array", "items": {"type": "string"}}),
        json!("object"),
        object(json!({"f": {"type": "string", "enum": []}})),
        object(json!({"f": {"type": "string", "oneOf": []}})),
        object(json!({"f": {"type": "object", "properties": {"x": {"type": "string"}}}})),
        object(json!({"f": {"type": "array", "items": {"type": "object"}}})),
        object(json!({"f": {"type": "array", "items": {"anyOf": [{"title": "no const"}]}}})),
        object(json!({"f": {"type": "null"}})),
        object(json!({"f": {"description": "no type"}})),
        object(json!({"f": 3})),
        object(json!({"f": {"enum": [{"nested": true}]}})),
        object(json!({"ok": {"type": "string"}, "f": {"type": "object"}})),
    ] {
        assert!(
            plan("m", &schema, None).is_err(),
            "{schema} must be refused"
        );
    }
    let many: serde_json::Map<String, Value> = (0..101)
        .map(|i| (format!("f{i}"), json!({"type": "string"})))
        .collect();
    assert!(plan("m", &object(Value::Object(many)), None).is_err());
}

#[test]
fn numbers_are_typed_never_strings() {
    let number = one(json!({"type": "number"}));
    assert_eq!(answer(&number, "3").unwrap(), json!(3));
    assert!(answer(&number, "3").unwrap().is_number());
    assert_eq!(answer(&number, " 2.5 ").unwrap(), json!(2.5));
    assert_eq!(answer(&number, "-1e3").unwrap(), json!(-1000.0));
    for bad in ["three", "NaN", "inf", "1,5"] {
        assert!(answer(&number, bad).is_err(), "{bad}");
    }
    let integer = one(json!({"type": "integer"}));
    assert_eq!(answer(&integer, "42").unwrap(), json!(42));
    assert_eq!(answer(&integer, "3.0").unwrap(), json!(3));
    for bad in ["3.5", "x", "1e300"] {
        assert!(answer(&integer, bad).is_err(), "{bad}");
    }
}

#[test]
fn booleans_accept_the_usual_words() {
    let flag = one(json!({"type": "boolean"}));
    for (text, value) in [
        ("yes", true),
        ("Y", true),
        ("true", true),
        ("1", true),
        ("no", false),
        ("n", false),
        ("FALSE", false),
        ("0", false),
    ] {
        assert_eq!(answer(&flag, text).unwrap(), json!(value), "{text}");
    }
    assert!(answer(&flag, "maybe").is_err());
}

#[test]
fn choices_accept_values_or_titles_and_send_values() {
    let titled = one(json!({"type": "string", "oneOf": [
        {"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Green Lantern"}
    ]}));
    assert_eq!(answer(&titled, "hero-2").unwrap(), json!("hero-2"));
    assert_eq!(answer(&titled, "Superman").unwrap(), json!("hero-1"));
    assert_eq!(answer(&titled, "green lantern").unwrap(), json!("hero-2"));
    assert!(answer(&titled, "Batman").is_err());
    let numeric = one(json!({"type": "number", "enum": [1, 2.5]}));
    assert_eq!(answer(&numeric, "2.5").unwrap(), json!(2.5));
    let multi = one(json!({"type": "array", "items": {"anyOf": [
        {"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}
    ]}}));
    assert_eq!(
        answer(&multi, "Tuna, fish-2").unwrap(),
        json!(["fish-1", "fish-2"])
    );
    assert_eq!(answer(&multi, "fish-1,").unwrap(), json!(["fish-1"]));
    assert!(answer(&multi, "Tuna, Shark").is_err());
}

#[test]
fn unanswered_fields_are_omitted_unless_required() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"}, "age": {"type": "integer"}, "note": {"type": "string"}
        },
        "required": ["name"]
    });
    let plan = plan("m", &schema, None).unwrap();
    assert_eq!(
        plan.content(&answers(&[("name", "Ann"), ("age", "  "), ("stray", "x")]))
            .unwrap(),
        json!({"name": "Ann"})
    );
    // Free text keeps an empty answer: it is a string the user gave.
    assert_eq!(
        plan.content(&answers(&[("name", "Ann"), ("note", "")]))
            .unwrap(),
        json!({"name": "Ann", "note": ""})
    );
    assert!(
        plan.content(&answers(&[("age", "3")])).is_err(),
        "name is required"
    );
    assert!(
        plan.content(&answers(&[("name", "Ann"), ("age", "old")]))
            .is_err()
    );
}

#[test]
fn the_conformance_defaults_form_accepted_with_its_defaults_types_back() {
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": true}
    }, "required": []});
    let plan = plan("m", &schema, None).unwrap();
    let defaults: BTreeMap<String, String> = plan
        .form
        .fields
        .iter()
        .filter_map(|f| Some((f.name.clone(), f.default.clone()?)))
        .collect();
    assert_eq!(
        plan.content(&defaults).unwrap(),
        json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true})
    );
}
