//! JSON-RPC 2.0 framing: one line in, a [`Request`] or the error response to send back; and
//! the response and notification lines rho writes.
//!
//! Decisions (documented in `docs/rpc.md`): batches are not supported (an array gets one
//! `-32600`, as MCP dropped batches); ids are echoed byte for byte (a big integer is never
//! rewritten as a float), and must be a string or an integer written as plain digits; a `null`,
//! object, array, boolean, fractional or exponent-form (`1e3`) id is `-32600` with a `null` id;
//! a leading BOM and a trailing `\r` are tolerated; params go by name (an object) or by
//! position (an array, named after the method's params in its OpenRPC order).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::value::RawValue;

/// Lines longer than this are refused with `-32600` (and the stream resynchronizes at the
/// next newline).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Ids longer than this (as JSON text) are refused.
pub const MAX_ID_BYTES: usize = 1024;
/// Method names longer than this are refused.
pub const MAX_METHOD_BYTES: usize = 256;

/// The JSON-RPC error codes rho uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// Not JSON.
    Parse,
    /// Not a valid request (or not valid in the current state).
    InvalidRequest,
    /// No such method.
    MethodNotFound,
    /// The params do not fit the method.
    InvalidParams,
    /// The method failed.
    Internal,
}

impl ErrorCode {
    /// The numeric code.
    pub fn code(self) -> i32 {
        match self {
            Self::Parse => -32700,
            Self::InvalidRequest => -32600,
            Self::MethodNotFound => -32601,
            Self::InvalidParams => -32602,
            Self::Internal => -32603,
        }
    }
}

/// Params that do not fit their method (answered with [`ErrorCode::InvalidParams`]); names the
/// method.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid params for {method}: {reason}")]
pub struct ParamsError {
    /// The method the params were sent to.
    pub method: String,
    /// What does not fit.
    pub reason: String,
}

impl ParamsError {
    /// The JSON-RPC code of the error response (`-32602`).
    pub fn code(&self) -> ErrorCode {
        ErrorCode::InvalidParams
    }
}

/// A line that is not a request rho takes: the JSON-RPC code and message of the error
/// response it gets, and the id that response echoes (`None` where the line has no usable
/// id). The message names what is wrong (the line, the id, `"jsonrpc"`, `"method"`,
/// `"params"`).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct LineError {
    /// The id to answer with (`None`: written as `null`).
    pub id: Option<Box<RawValue>>,
    /// [`ErrorCode::Parse`] or [`ErrorCode::InvalidRequest`].
    pub code: ErrorCode,
    /// What is wrong with the line.
    pub message: String,
}

impl LineError {
    fn new(id: Option<Box<RawValue>>, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            id,
            code,
            message: message.into(),
        }
    }

    /// The error response line to send back.
    pub fn response_line(&self) -> String {
        error_line(self.id.as_deref(), self.code, &self.message)
    }
}

/// A well-formed request or notification.
#[derive(Debug, Clone)]
pub struct Request {
    /// The id as sent (`None`: a notification, which gets no response).
    pub id: Option<Box<RawValue>>,
    /// The method.
    pub method: String,
    /// The params as sent.
    pub params: Option<Box<RawValue>>,
}

impl Request {
    /// The id's JSON text as sent.
    pub fn id_text(&self) -> Option<&str> {
        self.id.as_deref().map(RawValue::get)
    }

    /// The id as a key for duplicate detection: a string id by its value (so `"a"` and
    /// `"\u0061"` are the same id), a number by its text.
    pub fn id_key(&self) -> Option<String> {
        let text = self.id_text()?;
        Some(match serde_json::from_str::<String>(text) {
            Ok(value) => format!("s:{value}"),
            Err(_) => format!("n:{text}"),
        })
    }

    /// This request with by-position params named: element `i` of an array becomes the member
    /// `slots[i].0` of an object (`slots` are the method's params in order, each with whether
    /// it is required). A `null` in an optional slot is left out, since a client that skips an
    /// argument can only send `null` there; more elements than slots is an error. By-name
    /// params (and none) are returned as they are.
    pub fn named(&self, slots: &[(&str, bool)]) -> Result<Cow<'_, Self>, ParamsError> {
        let Some(raw) = &self.params else {
            return Ok(Cow::Borrowed(self));
        };
        if !raw.get().trim_start().starts_with('[') {
            return Ok(Cow::Borrowed(self));
        }
        let invalid = |reason: String| self.invalid_params(reason);
        let values: Vec<&RawValue> =
            serde_json::from_str(raw.get()).map_err(|e| invalid(e.to_string()))?;
        if values.len() > slots.len() {
            return Err(invalid(format!(
                "{} params by position, it takes at most {}",
                values.len(),
                slots.len()
            )));
        }
        let mut members = Vec::with_capacity(values.len());
        for (value, (name, required)) in values.iter().zip(slots) {
            if !required && value.get().trim() == "null" {
                continue;
            }
            let name = serde_json::to_string(name).map_err(|e| invalid(e.to_string()))?;
            members.push(format!("{name}:{}", value.get()));
        }
        let object = RawValue::from_string(format!("{{{}}}", members.join(",")))
            .map_err(|e| invalid(e.to_string()))?;
        Ok(Cow::Owned(Self {
            id: self.id.clone(),
            method: self.method.clone(),
            params: Some(object),
        }))
    }

    /// Deserializes the params; absent, `null`, `{}` and `[]` count as no params.
    pub fn params<T: serde::de::DeserializeOwned + Default>(&self) -> Result<T, ParamsError> {
        let Some(raw) = &self.params else {
            return Ok(T::default());
        };
        let text = raw.get().trim();
        if text == "null" || text == "[]" {
            return Ok(T::default());
        }
        serde_json::from_str(text).map_err(|e| self.invalid_params(e.to_string()))
    }

    /// Deserializes required params.
    pub fn required_params<T: serde::de::DeserializeOwned>(&self) -> Result<T, ParamsError> {
        let text = self.params.as_deref().map_or("null", RawValue::get);
        serde_json::from_str(text).map_err(|e| self.invalid_params(e.to_string()))
    }

    fn invalid_params(&self, reason: String) -> ParamsError {
        ParamsError {
            method: self.method.clone(),
            reason,
        }
    }
}

#[derive(serde::Deserialize)]
struct Envelope {
    #[serde(default)]
    jsonrpc: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Box<RawValue>>,
    #[serde(default)]
    method: Option<serde_json::Value>,
    #[serde(default)]
    params: Option<Box<RawValue>>,
}

/// Keeps an explicit `null` id visible (plain `Option` would turn it into "absent").
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

/// Parses one line. `Ok(None)` for a blank line; an error carries the error response to send
/// ([`LineError::response_line`]).
pub fn parse_line(line: &[u8]) -> Result<Option<Request>, LineError> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Err(LineError::new(
            None,
            ErrorCode::Parse,
            "the line is not valid UTF-8",
        ));
    };
    if let Err(e) = serde_json::from_str::<&RawValue>(text) {
        return Err(LineError::new(
            None,
            ErrorCode::Parse,
            format!("not valid JSON: {e}"),
        ));
    }
    match text.trim_start().as_bytes().first() {
        Some(b'[') => {
            return Err(LineError::new(
                None,
                ErrorCode::InvalidRequest,
                "batches are not supported: send one request per line",
            ));
        }
        Some(b'{') => {}
        _ => {
            return Err(LineError::new(
                None,
                ErrorCode::InvalidRequest,
                "a request must be a JSON object",
            ));
        }
    }
    let envelope: Envelope = serde_json::from_str(text).map_err(|e| {
        LineError::new(
            None,
            ErrorCode::InvalidRequest,
            format!("not a request object: {e}"),
        )
    })?;
    let id = match envelope.id {
        None => None,
        Some(raw) => {
            let t = raw.get();
            let valid = t.len() <= MAX_ID_BYTES
                && match t.as_bytes().first() {
                    Some(b'"') => true,
                    // Digits only: `1e3` or `5e-1` is a float to most clients, and `1e400`
                    // is one no client can hold.
                    Some(b'-' | b'0'..=b'9') => t
                        .strip_prefix('-')
                        .unwrap_or(t)
                        .bytes()
                        .all(|b| b.is_ascii_digit()),
                    _ => false,
                };
            if !valid {
                return Err(LineError::new(
                    None,
                    ErrorCode::InvalidRequest,
                    "the id must be a string or an integer (at most 1024 characters)",
                ));
            }
            Some(raw)
        }
    };
    let invalid = |message: &str| {
        Err(LineError::new(
            id.clone(),
            ErrorCode::InvalidRequest,
            message,
        ))
    };
    if envelope.jsonrpc.as_ref().and_then(|v| v.as_str()) != Some("2.0") {
        return invalid("\"jsonrpc\" must be \"2.0\"");
    }
    let method = match envelope.method {
        Some(serde_json::Value::String(m)) if m.len() <= MAX_METHOD_BYTES => m,
        Some(serde_json::Value::String(_)) => return invalid("the method name is too long"),
        Some(_) => return invalid("\"method\" must be a string"),
        None => return invalid("\"method\" is missing"),
    };
    if let Some(params) = &envelope.params {
        let first = params.get().trim_start().as_bytes().first().copied();
        if !matches!(first, Some(b'{' | b'[' | b'n')) {
            return invalid("\"params\" must be an object or an array");
        }
    }
    Ok(Some(Request {
        id,
        method,
        params: envelope.params,
    }))
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: i32,
    message: &'a str,
}

#[derive(Serialize)]
struct ErrorResponse<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RawValue>,
    error: ErrorBody<'a>,
}

#[derive(Serialize)]
struct ResultResponse<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    result: &'a T,
}

#[derive(Serialize)]
struct Notification<'a, T: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a T>,
}

/// An error response (`id` `None` is written as `null`).
pub fn error_line(id: Option<&RawValue>, code: ErrorCode, message: &str) -> String {
    serde_json::to_string(&ErrorResponse {
        jsonrpc: "2.0",
        id,
        error: ErrorBody {
            code: code.code(),
            message,
        },
    })
    .unwrap_or_else(|_| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{{\"code\":{},\"message\":\"internal error\"}}}}",
            ErrorCode::Internal.code()
        )
    })
}

/// A result response.
pub fn result_line<T: Serialize>(id: &RawValue, result: &T) -> String {
    serde_json::to_string(&ResultResponse {
        jsonrpc: "2.0",
        id,
        result,
    })
    .unwrap_or_else(|e| error_line(Some(id), ErrorCode::Internal, &e.to_string()))
}

/// A notification (no id), with params when given.
pub fn notification_line<T: Serialize>(method: &str, params: Option<&T>) -> String {
    serde_json::to_string(&Notification {
        jsonrpc: "2.0",
        method,
        params,
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn error_of(line: &str) -> serde_json::Value {
        serde_json::from_str(&parse_line(line.as_bytes()).unwrap_err().response_line()).unwrap()
    }

    #[test]
    fn malformed_lines_get_the_right_codes_and_ids() {
        let null = serde_json::Value::Null;
        let mut cases: Vec<(&str, i64, serde_json::Value)> = vec![
            ("{bad json", -32700, null.clone()),
            (r#"{"jsonrpc":"1.0","method":"x","id":1}"#, -32600, 1.into()),
            (r#"{"method":"x","id":"a"}"#, -32600, "a".into()),
            (r#"{"jsonrpc":"2.0","method":5,"id":2}"#, -32600, 2.into()),
            (r#"{"jsonrpc":"2.0","id":3}"#, -32600, 3.into()),
            (
                r#"{"jsonrpc":"2.0","method":"x","params":5,"id":4}"#,
                -32600,
                4.into(),
            ),
        ];
        // Not a request, or an id that is no string or integer: invalid, answered with a
        // null id.
        let ids = ["{}", "[1]", "true", "1.5", "5e-1", "1e3", "null"];
        let lines: Vec<String> = ids
            .iter()
            .map(|id| format!(r#"{{"jsonrpc":"2.0","method":"x","id":{id}}}"#))
            .collect();
        let not_requests = [
            "1",
            "\"x\"",
            "null",
            "[]",
            "[1,2]",
            // Found by the rpc_line fuzz target: out of every float's range.
            r#"{"jsonrpc":"2.0","method":"x","id":2e22222223}"#,
        ];
        cases.extend(
            lines
                .iter()
                .map(String::as_str)
                .chain(not_requests)
                .map(|line| (line, -32600, null.clone())),
        );
        for (line, code, id) in cases {
            let error = error_of(line);
            assert_eq!(error["error"]["code"], code, "{line}");
            assert_eq!(error["id"], id, "{line}");
        }
        let invalid_utf8 = parse_line(b"{\"a\":\"\xff\"}").unwrap_err();
        assert_eq!(invalid_utf8.code, ErrorCode::Parse);
        assert!(invalid_utf8.response_line().contains("-32700"));
    }

    #[test]
    fn big_ids_are_echoed_byte_for_byte() {
        let huge = "9".repeat(400); // beyond every float too, but an integer as written
        for id in ["18446744073709551616", huge.as_str(), "\"\\u00e9\"", "-0"] {
            let line = format!(r#"{{"jsonrpc":"2.0","method":"getState","id":{id}}}"#);
            let request = parse_line(line.as_bytes()).unwrap().unwrap();
            let response = result_line(request.id.as_deref().unwrap(), &serde_json::json!({}));
            assert!(response.contains(&format!("\"id\":{id}")), "{response}");
        }
    }

    #[test]
    fn equal_string_ids_have_one_key() {
        let key = |id: &str| {
            let line = format!(r#"{{"jsonrpc":"2.0","method":"x","id":{id}}}"#);
            parse_line(line.as_bytes())
                .unwrap()
                .unwrap()
                .id_key()
                .unwrap()
        };
        assert_eq!(key(r#""a""#), key(r#""\u0061""#));
        assert_ne!(key(r#""1""#), key("1"));
    }

    #[test]
    fn bom_crlf_and_blank_lines_are_tolerated() {
        let request = parse_line(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"abort\"}\r")
            .unwrap()
            .unwrap();
        assert_eq!(request.method, "abort");
        assert!(request.id.is_none());
        assert!(parse_line(b"  \r").unwrap().is_none());
    }
}
