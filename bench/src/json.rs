//! A small JSON reader, enough to check what `rho plugins list --json` printed without pulling a
//! JSON crate into the bench, and a string writer for the JSON files the benchmarks generate.
//! Numbers are recognised but not converted; nothing here needs them.

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 128;

/// A parsed JSON value.
#[derive(Debug, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number (its value is not kept).
    Number,
    /// A string, unescaped.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object, members in document order.
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The elements of an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The text of a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(text) => Some(text),
            _ => None,
        }
    }

    /// Visits this value and every value nested in it.
    pub fn walk<'a>(&'a self, visit: &mut impl FnMut(&'a Value)) {
        visit(self);
        match self {
            Value::Array(items) => items.iter().for_each(|v| v.walk(visit)),
            Value::Object(members) => members.iter().for_each(|(_, v)| v.walk(visit)),
            _ => {}
        }
    }
}

/// One line `rho rpc` printed, parsed and checked to be a JSON-RPC 2.0 message.
pub fn rpc_line(line: &str) -> Result<Value, String> {
    let message = parse(line.as_bytes()).map_err(|e| format!("rho printed {line:?}: {e}"))?;
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(format!(
            "rho printed a line that is not JSON-RPC 2.0: {line}"
        ));
    }
    Ok(message)
}

/// Parses one JSON document (surrounding whitespace allowed).
pub fn parse(bytes: &[u8]) -> Result<Value, String> {
    let mut parser = Parser { bytes, pos: 0 };
    let value = parser.value(0)?;
    parser.skip_ws();
    if parser.pos != bytes.len() {
        return Err(parser.error("trailing data after the document"));
    }
    Ok(value)
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        format!("invalid JSON at byte {}: {what}", self.pos)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        self.skip_ws();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected `{}`", byte as char)))
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, String> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("unknown literal"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.skip_ws();
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("unexpected character")),
            None => Err(self.error("unexpected end of input")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a member name"));
            }
            let key = self.string()?;
            self.expect(b':')?;
            members.push((key, self.value(depth + 1)?));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.pos;
        while matches!(
            self.peek(),
            Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
        ) {
            self.pos += 1;
        }
        if self.bytes[start..self.pos].iter().any(u8::is_ascii_digit) {
            Ok(Value::Number)
        } else {
            Err(self.error("malformed number"))
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(byte) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            self.pos += 1;
            match byte {
                b'"' => break,
                b'\\' => self.escape(&mut out)?,
                0..=0x1f => return Err(self.error("control character in string")),
                _ => out.push(byte),
            }
        }
        String::from_utf8(out).map_err(|_| self.error("string is not UTF-8"))
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), String> {
        let Some(byte) = self.peek() else {
            return Err(self.error("unterminated escape"));
        };
        self.pos += 1;
        let simple = match byte {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let ch = self.unicode_escape()?;
                out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                return Ok(());
            }
            _ => return Err(self.error("unknown escape")),
        };
        out.push(simple);
        Ok(())
    }

    /// The code point after `\u`, joining a surrogate pair when one follows.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let high = self.hex4()?;
        let code = if (0xd800..0xdc00).contains(&high) {
            if !self.bytes[self.pos..].starts_with(b"\\u") {
                return Err(self.error("lone high surrogate"));
            }
            self.pos += 2;
            let low = self.hex4()?;
            if !(0xdc00..0xe000).contains(&low) {
                return Err(self.error("bad low surrogate"));
            }
            0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)
        } else {
            high
        };
        char::from_u32(code).ok_or_else(|| self.error("invalid code point"))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.error("bad \\u escape"))?;
        self.pos += 4;
        Ok(digits)
    }
}

/// The raw text of member `key` of the JSON object `doc`, without parsing the rest.
pub fn member_span<'a>(doc: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let mut pos = skip_ws(doc, 0);
    if doc.get(pos) != Some(&b'{') {
        return None;
    }
    pos += 1;
    loop {
        pos = skip_ws(doc, pos);
        if doc.get(pos) != Some(&b'"') {
            return None;
        }
        let name_end = skip_string(doc, pos)?;
        let name = doc.get(pos + 1..name_end - 1)?;
        pos = skip_ws(doc, name_end);
        if doc.get(pos) != Some(&b':') {
            return None;
        }
        pos = skip_ws(doc, pos + 1);
        let end = skip_value(doc, pos)?;
        if name == key.as_bytes() {
            return doc.get(pos..end);
        }
        pos = skip_ws(doc, end);
        match doc.get(pos) {
            Some(b',') => pos += 1,
            _ => return None,
        }
    }
}

fn skip_ws(doc: &[u8], mut pos: usize) -> usize {
    while matches!(doc.get(pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        pos += 1;
    }
    pos
}

/// The position after the string opening at `pos`.
fn skip_string(doc: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos + 1;
    loop {
        match doc.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The position after the value starting at `pos`.
fn skip_value(doc: &[u8], pos: usize) -> Option<usize> {
    match doc.get(pos)? {
        b'"' => skip_string(doc, pos),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = pos;
            loop {
                match doc.get(i)? {
                    b'"' => {
                        i = skip_string(doc, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = pos;
            while doc
                .get(i)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
            {
                i += 1;
            }
            (i > pos).then_some(i)
        }
    }
}

/// A JSON string literal.
pub fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nested_documents() {
        let v =
            parse(br#" { "a": [1, -2.5e3, true, null], "b": {"c": "x\"\u00e9\ud83d\ude00"} } "#)
                .unwrap();
        assert_eq!(
            v.get("a").and_then(Value::as_array).map(<[_]>::len),
            Some(4)
        );
        let c = v.get("b").and_then(|b| b.get("c")).and_then(Value::as_str);
        assert_eq!(c, Some("x\"é😀"));
        let mut count = 0;
        v.walk(&mut |_| count += 1);
        assert_eq!(count, 8);
    }

    #[test]
    fn refuses_malformed_documents() {
        for bad in [
            &b""[..],
            b"{",
            b"[1,]",
            b"{\"a\" 1}",
            b"\"\\ud800\"",
            b"1 2",
            b"tru",
            b"\"a\nb\"",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn member_span_finds_nested_values_in_any_order() {
        let doc = br#"{"a":"x\"}","body":{"m":[1,{"k":"]"}],"n":null},"z":true}"#;
        assert_eq!(
            member_span(doc, "body"),
            Some(&br#"{"m":[1,{"k":"]"}],"n":null}"#[..])
        );
        assert_eq!(member_span(doc, "z"), Some(&b"true"[..]));
        assert_eq!(member_span(doc, "a"), Some(&br#""x\"}""#[..]));
        assert_eq!(member_span(doc, "missing"), None);
        assert_eq!(member_span(b"[1]", "body"), None);
        assert_eq!(member_span(br#"{"body":{"#, "body"), None);
    }

    #[test]
    fn json_strings_round_trip() {
        let text = "a \"b\" \\ c\nd\te\u{1}";
        let doc = parse(json_string(text).as_bytes()).unwrap();
        assert_eq!(doc.as_str(), Some(text));
    }
}
