//! Fuzzes one line of `rho rpc` input through parsing and the method table's params decoding:
//! never a panic; a refusal is a JSON-RPC 2.0 error response with one of the five standard
//! codes; only a notification (no `id`) may be refused silently; invalid UTF-8 or JSON is
//! always answered; an accepted or echoed id is a string or an integer written as digits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rho_rpc::fuzzing::{LineOutcome, line};
use serde_json::Value;
use serde_json::value::RawValue;

/// The members of a JSON object, each kept as text (a number out of `f64`'s range is valid
/// JSON, which `Value` would refuse).
type Members = std::collections::BTreeMap<String, Box<RawValue>>;

const CODES: [i64; 5] = [-32700, -32600, -32601, -32602, -32603];

/// What `docs/rpc.md` allows as an id: a string, or an integer written as plain digits.
fn valid_id(text: &str) -> bool {
    text.starts_with('"')
        || text
            .strip_prefix('-')
            .unwrap_or(text)
            .bytes()
            .all(|b| b.is_ascii_digit())
}

fuzz_target!(|data: &[u8]| {
    let outcome = line(data);
    let trimmed = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let trimmed = trimmed.strip_suffix(b"\r").unwrap_or(trimmed);
    let parsed: Option<Members> = std::str::from_utf8(trimmed)
        .ok()
        .and_then(|t| serde_json::from_str(t).ok());
    match outcome {
        LineOutcome::Blank => assert!(trimmed.iter().all(u8::is_ascii_whitespace)),
        LineOutcome::Refused(Some(response)) => {
            // As members: an echoed id may be an integer beyond every float, which `Value`
            // refuses although it is valid JSON.
            let v: Members = serde_json::from_str(&response).expect("the response is an object");
            assert_eq!(v.get("jsonrpc").map(|m| m.get()), Some("\"2.0\""));
            let id = v.get("id").expect("the response has no id member").get();
            assert!(id == "null" || valid_id(id), "echoed id {id}");
            assert!(!v.contains_key("result"));
            let error: Value = serde_json::from_str(v.get("error").expect("an error").get())
                .expect("the error is JSON");
            let code = error["code"].as_i64().expect("an integer code");
            assert!(CODES.contains(&code), "code {code}");
            assert!(error["message"].is_string());
            assert!(!response.contains('\n'), "a response spans lines");
        }
        LineOutcome::Refused(None) => {
            let v = parsed.expect("a silent refusal of something other than a JSON object");
            assert!(
                !v.contains_key("id"),
                "a request with an id got no response"
            );
        }
        LineOutcome::Accepted { has_id } => {
            let v = parsed.expect("accepted something other than a JSON object");
            assert_eq!(has_id, v.contains_key("id"));
            if let Some(id) = v.get("id") {
                assert!(valid_id(id.get()), "accepted the id {}", id.get());
            }
        }
    }
});
