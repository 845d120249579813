//! Strict JSON documents: size cap, optional BOM, and duplicate keys found instead of collapsed.
//!
//! `serde_json::Value` keeps the last of two equal keys silently, which would let a second
//! `"command"` or `"env"` entry hide an override. This parser builds the same `Value` but records
//! the JSON pointer of every repeated key, so callers can refuse the narrowest enclosing unit.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// A parsed document and the pointers of the keys that appeared more than once.
#[derive(Debug)]
pub(crate) struct JsonDoc {
    pub value: Value,
    pub duplicates: Vec<String>,
}

/// Why a document is not JSON, with the position serde_json reports.
#[derive(Debug)]
pub(crate) struct JsonSyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for JsonSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid JSON at line {} column {}: {}",
            self.line, self.column, self.message
        )
    }
}

/// A UTF-8 byte order mark; RFC 8259 lets parsers ignore one, and editors on Windows write it.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Parses `bytes` (a leading BOM is ignored) into a value, recording duplicate keys.
pub(crate) fn parse(bytes: &[u8]) -> Result<JsonDoc, JsonSyntaxError> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let walk = Walk::default();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = ValueSeed { walk: &walk }
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| JsonSyntaxError {
            line: e.line(),
            column: e.column(),
            message: strip_position(&e.to_string()),
        })?;
    Ok(JsonDoc {
        value,
        duplicates: walk.duplicates.into_inner(),
    })
}

/// serde_json appends " at line L column C"; the position is reported separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// Escapes one reference token of a JSON pointer (RFC 6901).
pub(crate) fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The state of one parse: the pointer of the value being read, kept as one string that grows
/// and shrinks with the depth (a pointer is only copied out when a key repeats, so a document
/// without duplicates costs no pointer allocations), and the duplicates found so far.
#[derive(Default)]
struct Walk {
    pointer: RefCell<String>,
    duplicates: RefCell<Vec<String>>,
}

impl Walk {
    /// Appends `/token` to the pointer and returns the length to truncate back to.
    fn enter(&self, token: impl fmt::Display) -> usize {
        use std::fmt::Write as _;
        let mut pointer = self.pointer.borrow_mut();
        let len = pointer.len();
        let _ = write!(pointer, "/{token}");
        len
    }

    fn leave(&self, len: usize) {
        self.pointer.borrow_mut().truncate(len);
    }
}

/// A key as a pointer token, escaped only when it needs to be.
struct Token<'a>(&'a str);

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.contains(['~', '/']) {
            f.write_str(&pointer_token(self.0))
        } else {
            f.write_str(self.0)
        }
    }
}

struct ValueSeed<'a> {
    walk: &'a Walk,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        // After an error the parse is over, so the pointer need not be restored on that path.
        loop {
            let len = self.walk.enter(items.len());
            let item = seq.next_element_seed(ValueSeed { walk: self.walk })?;
            self.walk.leave(len);
            match item {
                Some(item) => items.push(item),
                None => break,
            }
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let len = self.walk.enter(Token(&key));
            let value = map.next_value_seed(ValueSeed { walk: self.walk })?;
            if object.contains_key(&key) {
                let pointer = self.walk.pointer.borrow().clone();
                self.walk.duplicates.borrow_mut().push(pointer);
            } else {
                object.insert(key, value);
            }
            self.walk.leave(len);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_duplicates_at_every_depth() {
        let doc = parse(br#"{"a":1,"a":2,"b":{"c":[{"d":1,"d":2}]},"e/f":{"x":0,"x":1}}"#).unwrap();
        assert_eq!(doc.duplicates, vec!["/a", "/b/c/0/d", "/e~1f/x"]);
        assert_eq!(doc.value["a"], 1, "the first occurrence is kept");
    }

    #[test]
    fn pointers_are_restored_between_siblings() {
        let doc =
            parse(br#"{"a":[1,{"b":0,"b":1}],"c":{"d":0,"d":0},"~":[[],{"/":1,"/":2}]}"#).unwrap();
        assert_eq!(doc.duplicates, vec!["/a/1/b", "/c/d", "/~0/1/~1"]);
    }

    #[test]
    fn bom_is_ignored_and_errors_have_positions() {
        assert!(parse(b"\xEF\xBB\xBF{\"a\":1}").is_ok());
        let err = parse(b"{\n  \"a\": 1,\n}").unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.to_string().starts_with("invalid JSON at line 3"));
    }

    #[test]
    fn rejects_what_strict_json_rejects() {
        for bad in [
            &b""[..],
            b"{\"a\":1} x",
            b"// c\n{}",
            b"{\"a\":\"\xff\"}",
            b"{\"a\":1e400}",
            b"{\"a\":\"\\ud800\"}",
            b"{'a':1}",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000);
        assert!(parse(deep.as_bytes()).is_err());
    }
}
