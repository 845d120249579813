//! The three data formats: naming, detection, parsing into a JSON value and rendering one.

use serde::Deserialize;
use serde_json::{Map, Number, Value};

use crate::selector::child_path;

/// A data format the tools read and write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// JSON (RFC 8259).
    Json,
    /// TOML 1.0; the top level is always a table.
    Toml,
    /// YAML 1.2, one document.
    #[serde(alias = "yml")]
    Yaml,
}

impl Format {
    /// Its lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Toml => "toml",
            Self::Yaml => "yaml",
        }
    }

    /// The format a file name's extension names, if any.
    pub fn from_path(path: &str) -> Option<Self> {
        let (_, extension) = path.rsplit_once('.')?;
        match extension.to_ascii_lowercase().as_str() {
            "json" => Some(Self::Json),
            "toml" => Some(Self::Toml),
            "yaml" | "yml" => Some(Self::Yaml),
            _ => None,
        }
    }

    /// Detects the format of `text` and parses it: JSON if it parses as JSON, else TOML if it
    /// parses as TOML, else YAML. YAML reads almost any text as one string; when a text that
    /// looks like JSON or TOML (and is not) comes out like that, or when nothing parses, the
    /// error is the one of the format the text looks like.
    pub fn detect(text: &str) -> Result<(Self, Value), (Self, String)> {
        let looks_like = Self::looks_like(text);
        let mut errors = Vec::new();
        for format in [Self::Json, Self::Toml, Self::Yaml] {
            match format.parse(text) {
                Ok(Value::String(_)) if format == Self::Yaml && looks_like != Self::Yaml => break,
                Ok(value) => return Ok((format, value)),
                Err(e) => errors.push((format, e)),
            }
        }
        Err(errors
            .into_iter()
            .find(|(format, _)| *format == looks_like)
            .unwrap_or((looks_like, "not a JSON, TOML or YAML document".into())))
    }

    /// The format a document that parses as none of them most looks like.
    fn looks_like(text: &str) -> Self {
        let Some(first) = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
        else {
            return Self::Yaml;
        };
        let table_header = first.starts_with('[')
            && first.ends_with(']')
            && !first.contains(',')
            && !first.contains('"');
        let assignment = first
            .find('=')
            .is_some_and(|eq| first.find(':').is_none_or(|colon| eq < colon));
        if table_header || (assignment && !first.starts_with(['{', '['])) {
            Self::Toml
        } else if first.starts_with(['{', '[']) {
            Self::Json
        } else {
            Self::Yaml
        }
    }

    /// Parses `text` into a JSON value. TOML date-times become RFC 3339 strings.
    pub fn parse(self, text: &str) -> Result<Value, String> {
        match self {
            Self::Json => serde_json::from_str(text).map_err(|e| e.to_string()),
            Self::Toml => {
                let table: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
                toml_to_json(toml::Value::Table(table), "")
            }
            Self::Yaml => {
                let mut documents: Vec<Value> =
                    serde_saphyr::from_str_multiple(text).map_err(|e| e.to_string())?;
                Ok(match documents.len() {
                    0 => Value::Null,
                    1 => documents.remove(0),
                    _ => Value::Array(documents),
                })
            }
        }
    }

    /// Renders `value`. `compact` JSON is one line; TOML needs a table at the top and has no
    /// null.
    pub fn render(self, value: &Value, compact: bool) -> Result<String, String> {
        match self {
            Self::Json if compact => serde_json::to_string(value).map_err(|e| e.to_string()),
            Self::Json => serde_json::to_string_pretty(value).map_err(|e| e.to_string()),
            Self::Toml => {
                let toml::Value::Table(table) = json_to_toml(value, "")? else {
                    return Err(format!(
                        "TOML needs a table at the top, and this value is {}",
                        kind(value)
                    ));
                };
                toml::to_string(&table).map_err(|e| e.to_string())
            }
            Self::Yaml => serde_saphyr::to_string(value).map_err(|e| e.to_string()),
        }
    }
}

/// What a JSON value is, with an article, for messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn at(path: &str) -> String {
    if path.is_empty() {
        "the top level".to_owned()
    } else {
        format!("`{path}`")
    }
}

fn toml_to_json(value: toml::Value, path: &str) -> Result<Value, String> {
    Ok(match value {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::Number(i.into()),
        toml::Value::Float(f) => Value::Number(Number::from_f64(f).ok_or_else(|| {
            format!(
                "{}: {f} has no JSON form (JSON numbers are finite)",
                at(path)
            )
        })?),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| toml_to_json(item, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        toml::Value::Table(table) => {
            let mut map = Map::with_capacity(table.len());
            for (key, item) in table {
                let child = toml_to_json(item, &child_path(path, &key))?;
                map.insert(key, child);
            }
            Value::Object(map)
        }
    })
}

fn json_to_toml(value: &Value, path: &str) -> Result<toml::Value, String> {
    Ok(match value {
        Value::Null => {
            return Err(format!(
                "{}: TOML has no null; remove the key or give it a value first",
                at(path)
            ));
        }
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => toml::Value::Integer(i),
            (None, Some(_)) if n.is_u64() => {
                return Err(format!(
                    "{}: {n} is too large for a TOML integer (at most {})",
                    at(path),
                    i64::MAX
                ));
            }
            (None, Some(f)) => toml::Value::Float(f),
            (None, None) => return Err(format!("{}: {n} is not a TOML number", at(path))),
        },
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(items) => toml::Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| json_to_toml(item, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => {
            let mut table = toml::Table::new();
            for (key, item) in map {
                table.insert(key.clone(), json_to_toml(item, &child_path(path, key))?);
            }
            toml::Value::Table(table)
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn formats_round_trip_and_keep_key_order() {
        let value = json!({"zeta": 1, "alpha": {"list": [1, 2.5, "x"], "on": true}});
        for format in [Format::Json, Format::Toml, Format::Yaml] {
            let text = format.render(&value, false).unwrap();
            assert_eq!(format.parse(&text).unwrap(), value, "{format:?}: {text}");
            assert!(
                text.find("zeta").unwrap() < text.find("alpha").unwrap(),
                "{text}"
            );
        }
    }

    #[test]
    fn yaml_streams_read_as_arrays() {
        assert_eq!(
            Format::Yaml.parse("---\na: 1\n---\nb: 2\n").unwrap(),
            json!([{"a": 1}, {"b": 2}])
        );
        assert_eq!(Format::Yaml.parse("").unwrap(), Value::Null);
    }

    #[test]
    fn toml_dates_become_strings_and_nulls_are_refused() {
        let v = Format::Toml.parse("when = 2024-05-01T10:00:00Z\n").unwrap();
        assert_eq!(v, json!({"when": "2024-05-01T10:00:00Z"}));
        let e = Format::Toml
            .render(&json!({"a": {"b": [1, null]}}), false)
            .unwrap_err();
        assert!(e.starts_with("`a.b[1]`: TOML has no null"), "{e}");
        let e = Format::Toml.render(&json!([1]), false).unwrap_err();
        assert!(e.contains("an array"), "{e}");
        let e = Format::Toml
            .render(&json!({"n": u64::MAX}), false)
            .unwrap_err();
        assert!(e.contains("too large"), "{e}");
    }

    #[test]
    fn detection_and_extensions() {
        let detect = |text: &str| Format::detect(text).map(|(format, _)| format);
        assert_eq!(detect(r#"{"a": 1}"#), Ok(Format::Json));
        assert_eq!(detect("a = 1\n[b]\nc = 'x'\n"), Ok(Format::Toml));
        assert_eq!(detect("a: 1\nb: [x, y]\n"), Ok(Format::Yaml));
        for (broken, looks_like) in [
            ("{\"a\": 1,", Format::Json),
            ("[1, 2", Format::Json),
            ("[package]\nname = \n", Format::Toml),
            ("# c\nname = \"x\"\nname = \"y\"\n", Format::Toml),
            ("a: [1\nb: c: d", Format::Yaml),
        ] {
            assert_eq!(
                detect(broken).map_err(|(f, _)| f),
                Err(looks_like),
                "{broken}"
            );
        }
        assert_eq!(Format::from_path("config/app.YML"), Some(Format::Yaml));
        assert_eq!(Format::from_path("Cargo.toml"), Some(Format::Toml));
        assert_eq!(Format::from_path("README"), None);
    }
}
