//! An elicitation's `requestedSchema` as a [`Form`] rho can show, and the text answers typed
//! back to that schema (`docs/mcp.md`, "Questions from a server"). The mapping is lossy in one
//! direction only: constraints become help text and are not enforced, but every field sent back
//! carries its declared JSON type, and an answer that cannot carry it declines the request.

use std::collections::BTreeMap;

use rho_component::{Choice, FieldKind, Form, FormField};
use serde_json::{Map, Number, Value};

/// More fields than this is not a form a person fills in; the request is declined.
const MAX_FIELDS: usize = 100;
/// More values than this in one choice field is declined too.
const MAX_CHOICES: usize = 1000;

/// Constraints shown as help text, in this order, with the words they are shown with.
const CONSTRAINTS: [(&str, &str); 8] = [
    ("format", "format {}"),
    ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"),
    ("pattern", "matching {}"),
    ("minimum", "at least {}"),
    ("maximum", "at most {}"),
    ("minItems", "at least {} choices"),
    ("maxItems", "at most {} choices"),
];

/// A form and how each of its fields' answers is typed back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FormPlan {
    /// What the user is shown.
    pub form: Form,
    /// One entry per field of `form`, in the same order.
    typing: Vec<Typing>,
}

/// How the text answer of one field becomes JSON.
#[derive(Debug, Clone, PartialEq)]
enum Typing {
    Text,
    Number,
    Integer,
    Boolean,
    /// The JSON value each choice sends back, in the order of the field's choices.
    Choice(Vec<Value>),
    MultiChoice(Vec<Value>),
}

/// Maps `schema` to a form, with the properties in `order` (the wire order; properties missing
/// from it follow in name order). `Err` says why rho cannot render it: the request is declined
/// whole rather than shown as a partial form.
pub(crate) fn plan(
    message: &str,
    schema: &Value,
    order: Option<&[String]>,
) -> Result<FormPlan, String> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("the requested schema is not an object".into());
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Err("the requested schema has no properties".into());
    };
    if properties.is_empty() {
        return Err("the requested schema has no properties".into());
    }
    if properties.len() > MAX_FIELDS {
        return Err(format!(
            "the requested schema has more than {MAX_FIELDS} fields"
        ));
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut names: Vec<&String> = order
        .unwrap_or_default()
        .iter()
        .filter(|n| properties.contains_key(n.as_str()))
        .collect();
    for name in properties.keys() {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let mut fields = Vec::with_capacity(names.len());
    let mut typing = Vec::with_capacity(names.len());
    for name in names {
        let property = &properties[name.as_str()];
        let (field, how) = field(name, property, required.contains(&name.as_str()))
            .map_err(|why| format!("field {name}: {why}"))?;
        fields.push(field);
        typing.push(how);
    }
    Ok(FormPlan {
        form: Form {
            message: message.to_owned(),
            fields,
            key: None,
            schema: None,
        },
        typing,
    })
}

fn field(name: &str, property: &Value, required: bool) -> Result<(FormField, Typing), String> {
    let Some(object) = property.as_object() else {
        return Err("its schema is not an object".into());
    };
    let declared = object.get("type").and_then(Value::as_str);
    let (kind, choices, typing) = if declared == Some("array") {
        let items = object.get("items").unwrap_or(&Value::Null);
        let (choices, values) = choices_of(items)?
            .ok_or("an array field must list its values (items.enum or items.anyOf)")?;
        (FieldKind::MultiChoice, choices, Typing::MultiChoice(values))
    } else if let Some((choices, values)) = choices_of(property)? {
        (FieldKind::Choice, choices, Typing::Choice(values))
    } else {
        match declared {
            Some("string") => (FieldKind::Text, Vec::new(), Typing::Text),
            Some("number") => (FieldKind::Number, Vec::new(), Typing::Number),
            Some("integer") => (FieldKind::Integer, Vec::new(), Typing::Integer),
            Some("boolean") => (FieldKind::Boolean, Vec::new(), Typing::Boolean),
            Some("object") => return Err("nested objects cannot be shown".into()),
            Some(other) => return Err(format!("type {other:?} cannot be shown")),
            None => return Err("it declares no type".into()),
        }
    };
    let default = object.get("default").and_then(default_text);
    Ok((
        FormField {
            name: name.to_owned(),
            title: object
                .get("title")
                .and_then(Value::as_str)
                .map(str::to_owned),
            kind,
            choices,
            default,
            required,
            help: help(object),
        },
        typing,
    ))
}

/// The choices of a field, and the JSON value each sends back.
type Listed = (Vec<Choice>, Vec<Value>);

/// The choices a (single or item) schema lists: `enum` (titled by legacy `enumNames` when it
/// has one per value), or `oneOf`/`anyOf` entries of `const` and `title`. `Ok(None)` when it
/// lists none; an empty or malformed list is an error.
fn choices_of(schema: &Value) -> Result<Option<Listed>, String> {
    let titled = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array);
    let (entries, titles): (Vec<Value>, Vec<Option<String>>) =
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            let names = schema.get("enumNames").and_then(Value::as_array);
            let titles = match names {
                Some(names) if names.len() == values.len() => names
                    .iter()
                    .map(|n| n.as_str().map(str::to_owned))
                    .collect(),
                _ => vec![None; values.len()],
            };
            (values.clone(), titles)
        } else if let Some(options) = titled {
            let mut values = Vec::with_capacity(options.len());
            let mut titles = Vec::with_capacity(options.len());
            for option in options {
                let value = option
                    .get("const")
                    .ok_or("a oneOf/anyOf entry has no const")?;
                values.push(value.clone());
                titles.push(
                    option
                        .get("title")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                );
            }
            (values, titles)
        } else {
            return Ok(None);
        };
    if entries.is_empty() {
        return Err("an enum with no values".into());
    }
    if entries.len() > MAX_CHOICES {
        return Err(format!("more than {MAX_CHOICES} values"));
    }
    let mut choices = Vec::with_capacity(entries.len());
    for (value, title) in entries.iter().zip(titles) {
        let value_text = match value {
            Value::String(text) => text.clone(),
            Value::Number(number) => number.to_string(),
            Value::Bool(flag) => flag.to_string(),
            _ => return Err("an enum value that is not a string, number or boolean".into()),
        };
        choices.push(Choice {
            value: value_text,
            title,
        });
    }
    Ok(Some((choices, entries)))
}

/// A schema `default` as the text an answer would be (several choices comma-separated).
fn default_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::Array(_) | Value::Object(_) | Value::Null => None,
                other => default_text(other),
            })
            .collect::<Option<Vec<_>>>()
            .map(|texts| texts.join(", ")),
        Value::Null | Value::Object(_) => None,
    }
}

/// The description, then the constraints rho shows but does not enforce.
fn help(property: &Map<String, Value>) -> Option<String> {
    let items = property.get("items").and_then(Value::as_object);
    let mut constraints = Vec::new();
    for (key, words) in CONSTRAINTS {
        let value = property.get(key).or_else(|| items.and_then(|i| i.get(key)));
        let Some(value) = value else { continue };
        let text = match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        constraints.push(words.replace("{}", &text));
    }
    let description = property
        .get("description")
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty());
    match (description, constraints.is_empty()) {
        (None, true) => None,
        (Some(d), true) => Some(d.to_owned()),
        (None, false) => Some(constraints.join(", ")),
        (Some(d), false) => Some(format!("{d} ({})", constraints.join(", "))),
    }
}

impl FormPlan {
    /// The `content` of an accept: every answered field typed to its schema, unanswered
    /// optional fields left out. `Err` (the request is declined) when an answer cannot carry
    /// its field's type or a required field is unanswered.
    pub(crate) fn content(&self, answers: &BTreeMap<String, String>) -> Result<Value, String> {
        let mut content = Map::new();
        for (field, typing) in self.form.fields.iter().zip(&self.typing) {
            let answer = answers.get(&field.name).map(String::as_str);
            // A blank answer to anything but free text is no answer at all.
            let answer = match (answer, typing) {
                (Some(text), Typing::Text) => Some(text),
                (Some(text), _) if text.trim().is_empty() => None,
                (other, _) => other,
            };
            let Some(text) = answer else {
                if field.required {
                    return Err(format!(
                        "the required field {} was not answered",
                        field.name
                    ));
                }
                continue;
            };
            let value =
                typed(field, typing, text).map_err(|why| format!("field {}: {why}", field.name))?;
            content.insert(field.name.clone(), value);
        }
        Ok(Value::Object(content))
    }
}

fn typed(field: &FormField, typing: &Typing, text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    match typing {
        Typing::Text => Ok(Value::String(text.to_owned())),
        Typing::Number => number(trimmed).ok_or_else(|| format!("{trimmed:?} is not a number")),
        Typing::Integer => integer(trimmed).ok_or_else(|| format!("{trimmed:?} is not an integer")),
        Typing::Boolean => match trimmed.to_ascii_lowercase().as_str() {
            "yes" | "y" | "true" | "1" => Ok(Value::Bool(true)),
            "no" | "n" | "false" | "0" => Ok(Value::Bool(false)),
            _ => Err(format!("{trimmed:?} is not yes or no")),
        },
        Typing::Choice(values) => choose(field, values, trimmed),
        Typing::MultiChoice(values) => trimmed
            .split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(|part| choose(field, values, part))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
    }
}

/// A number as JSON: integral text stays an integer (`"3"` is `3`, not `3.0`).
fn number(text: &str) -> Option<Value> {
    if let Ok(whole) = text.parse::<i64>() {
        return Some(Value::Number(whole.into()));
    }
    let float = text.parse::<f64>().ok().filter(|f| f.is_finite())?;
    Number::from_f64(float).map(Value::Number)
}

fn integer(text: &str) -> Option<Value> {
    if let Ok(whole) = text.parse::<i64>() {
        return Some(Value::Number(whole.into()));
    }
    // "3.0" is integral; "3.5" is not.
    let float = text.parse::<f64>().ok().filter(|f| f.is_finite())?;
    #[allow(clippy::cast_possible_truncation)] // checked integral and in range just before
    let whole = (float.fract() == 0.0 && float.abs() < 9.0e15).then_some(float as i64)?;
    Some(Value::Number(whole.into()))
}

/// The value an answer names: a choice's value, or its title (exact first, then ignoring case).
fn choose(field: &FormField, values: &[Value], text: &str) -> Result<Value, String> {
    let exact = field
        .choices
        .iter()
        .position(|c| c.value == text)
        .or_else(|| {
            field
                .choices
                .iter()
                .position(|c| c.title.as_deref() == Some(text))
        });
    let loose = || {
        field.choices.iter().position(|c| {
            c.value.eq_ignore_ascii_case(text)
                || c.title
                    .as_deref()
                    .is_some_and(|t| t.eq_ignore_ascii_case(text))
        })
    };
    exact
        .or_else(loose)
        .and_then(|at| values.get(at).cloned())
        .ok_or_else(|| format!("{text:?} is not one of the choices"))
}

#[cfg(test)]
#[path = "elicitation_tests.rs"]
mod tests;
