//! Selecting a value inside a document: JSON Pointer (`/a/0/b`) or a dotted path
//! (`a[0].b`, `a.0.b`, `a."key.with.dots"`).

use serde_json::Value;

use crate::format::kind;

/// One step of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// An object key; on an array, a key of decimal digits is an index.
    Key(String),
    /// `[n]`: an array index, counted from the end when negative.
    Index(i64),
}

/// Parses a selector: `""` or `"."` is the whole document, a leading `/` makes a JSON
/// Pointer (RFC 6901), anything else is a dotted path.
pub fn parse(selector: &str) -> Result<Vec<Step>, String> {
    if selector.is_empty() || selector == "." {
        return Ok(Vec::new());
    }
    if let Some(pointer) = selector.strip_prefix('/') {
        return pointer
            .split('/')
            .map(|token| {
                if token.contains('~') && !valid_escapes(token) {
                    return Err(format!(
                        "JSON Pointer token {token:?}: `~` must be followed by 0 or 1"
                    ));
                }
                Ok(Step::Key(token.replace("~1", "/").replace("~0", "~")))
            })
            .collect();
    }
    dotted(selector)
}

fn valid_escapes(token: &str) -> bool {
    let bytes = token.as_bytes();
    bytes
        .iter()
        .enumerate()
        .all(|(i, &b)| b != b'~' || matches!(bytes.get(i + 1), Some(b'0' | b'1')))
}

fn dotted(selector: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let mut chars = selector.char_indices().peekable();
    if selector.starts_with('.') {
        chars.next();
    }
    let problem = |at: usize, what: &str| format!("selector {selector:?}, at byte {at}: {what}");
    loop {
        let Some(&(start, c)) = chars.peek() else {
            return Err(problem(
                selector.len(),
                "a key or [index] is missing at the end",
            ));
        };
        match c {
            '[' => {
                chars.next();
                let mut digits = String::new();
                loop {
                    match chars.next() {
                        Some((_, ']')) => break,
                        Some((_, d)) if d.is_ascii_digit() || (d == '-' && digits.is_empty()) => {
                            digits.push(d);
                        }
                        _ => {
                            return Err(problem(
                                start,
                                "`[` must hold an integer index and close with `]`",
                            ));
                        }
                    }
                }
                let index = digits
                    .parse::<i64>()
                    .map_err(|_| problem(start, "`[` must hold an integer index"))?;
                steps.push(Step::Index(index));
            }
            '"' => {
                chars.next();
                let mut key = String::new();
                loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, e @ ('"' | '\\'))) => key.push(e),
                            _ => return Err(problem(start, "only \\\" and \\\\ escape in quotes")),
                        },
                        Some((_, other)) => key.push(other),
                        None => return Err(problem(start, "the quoted key is not closed")),
                    }
                }
                steps.push(Step::Key(key));
            }
            '.' => return Err(problem(start, "an empty key (two dots in a row?)")),
            _ => {
                let mut key = String::new();
                while let Some(&(_, c)) = chars.peek() {
                    if c == '.' || c == '[' {
                        break;
                    }
                    if c == '"' || c == ']' {
                        return Err(problem(start, "quote keys that hold `\"` or `]`"));
                    }
                    key.push(c);
                    chars.next();
                }
                steps.push(Step::Key(key));
            }
        }
        match chars.peek() {
            None => return Ok(steps),
            Some(&(_, '.')) => {
                chars.next();
            }
            Some(&(_, '[')) => {}
            Some(&(at, _)) => return Err(problem(at, "expected `.` or `[` after a key")),
        }
    }
}

/// The dotted path of `key` below `parent` (quoted when needed), for messages.
pub fn child_path(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && !key
            .chars()
            .any(|c| matches!(c, '.' | '[' | ']' | '"') || c.is_whitespace());
    let key = if plain {
        key.to_owned()
    } else {
        format!("\"{}\"", key.replace('\\', "\\\\").replace('"', "\\\""))
    };
    if parent.is_empty() {
        key
    } else {
        format!("{parent}.{key}")
    }
}

fn describe(path: &str) -> String {
    if path.is_empty() {
        "the top level".to_owned()
    } else {
        format!("`{path}`")
    }
}

/// Follows `steps` from `root`. The error names the deepest place reached and what is there.
pub fn select<'a>(root: &'a Value, steps: &[Step]) -> Result<&'a Value, String> {
    let mut here = root;
    let mut path = String::new();
    for step in steps {
        let (next, next_path) = match (here, step) {
            (Value::Object(map), Step::Key(key)) => match map.get(key) {
                Some(v) => (v, child_path(&path, key)),
                None => {
                    let mut keys: Vec<&str> = map.keys().map(String::as_str).take(20).collect();
                    if map.len() > keys.len() {
                        keys.push("...");
                    }
                    return Err(if keys.is_empty() {
                        format!("no key {key:?} at {}: the object is empty", describe(&path))
                    } else {
                        format!(
                            "no key {key:?} at {} (keys there: {})",
                            describe(&path),
                            keys.join(", ")
                        )
                    });
                }
            },
            (Value::Object(_), Step::Index(i)) => {
                return Err(format!(
                    "{} is an object: use a key, not [{i}]",
                    describe(&path)
                ));
            }
            (Value::Array(items), step) => {
                let index = match step {
                    Step::Index(i) => *i,
                    Step::Key(key)
                        if !key.is_empty() && key.bytes().all(|b| b.is_ascii_digit()) =>
                    {
                        key.parse::<i64>().unwrap_or(i64::MAX)
                    }
                    Step::Key(key) => {
                        return Err(format!(
                            "{} is an array of {}: {key:?} is not an index",
                            describe(&path),
                            items.len()
                        ));
                    }
                };
                let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
                let resolved = if index < 0 { len + index } else { index };
                match usize::try_from(resolved).ok().and_then(|i| items.get(i)) {
                    Some(v) => (v, format!("{path}[{index}]")),
                    None => {
                        return Err(format!(
                            "index {index} is out of range at {}: an array of {}",
                            describe(&path),
                            items.len()
                        ));
                    }
                }
            }
            (scalar, step) => {
                let wanted = match step {
                    Step::Key(key) => format!("key {key:?}"),
                    Step::Index(i) => format!("index [{i}]"),
                };
                return Err(format!(
                    "{} is {}, which has no {wanted}",
                    describe(&path),
                    kind(scalar)
                ));
            }
        };
        here = next;
        path = next_path;
    }
    Ok(here)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({"package": {"name": "rho", "authors": ["a", "b"]},
               "a.b": {"c": 1}, "list": [{"id": 7}], "": 0})
    }

    fn get(selector: &str) -> Result<Value, String> {
        let steps = parse(selector)?;
        select(&doc(), &steps).cloned()
    }

    #[test]
    fn dotted_paths_and_pointers_agree() {
        assert_eq!(get("package.name").unwrap(), json!("rho"));
        assert_eq!(get(".package.authors[1]").unwrap(), json!("b"));
        assert_eq!(get("package.authors.0").unwrap(), json!("a"));
        assert_eq!(get("package.authors[-1]").unwrap(), json!("b"));
        assert_eq!(get("list[0].id").unwrap(), json!(7));
        assert_eq!(get("\"a.b\".c").unwrap(), json!(1));
        assert_eq!(get("/a.b/c").unwrap(), json!(1));
        assert_eq!(get("/list/0/id").unwrap(), json!(7));
        assert_eq!(get("/").unwrap(), json!(0));
        assert_eq!(get("").unwrap(), doc());
        assert_eq!(get(".").unwrap(), doc());
    }

    #[test]
    fn errors_name_the_place() {
        let e = get("package.version").unwrap_err();
        assert_eq!(
            e,
            "no key \"version\" at `package` (keys there: name, authors)"
        );
        let e = get("package.authors[5]").unwrap_err();
        assert_eq!(
            e,
            "index 5 is out of range at `package.authors`: an array of 2"
        );
        let e = get("package.name.first").unwrap_err();
        assert_eq!(e, "`package.name` is a string, which has no key \"first\"");
        let e = get("package[0]").unwrap_err();
        assert!(e.contains("is an object"), "{e}");
        let e = get("\"a.b\".c.d").unwrap_err();
        assert!(e.starts_with("`\"a.b\".c` is a number"), "{e}");
    }

    #[test]
    fn bad_selectors_are_refused() {
        for bad in ["a..b", "a.", "a[x]", "a[1", "\"open", "a]b", "/a~2"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
