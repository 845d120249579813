//! Fuzzes one line of `rho rpc` input through parsing and the method table's params decoding:
//! never a panic; a refusal is a JSON-RPC 2.0 error response with one of the five standard
//! codes; only a notification (no `id`) may be refused silently; invalid UTF-8 or JSON is
//! always answered.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rho_rpc::fuzzing::{LineOutcome, line};
use serde_json::Value;
use serde_json::value::RawValue;

/// The members of a JSON object, each kept as text (a number out of `f64`'s range is valid
/// JSON, which `Value` would refuse).
type Members = std::collections::BTreeMap<String, Box<RawValue>>;

const CODES: [i64; 5] = [-32700, -32600, -32601, -32602, -32603];

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
            let v: Value = serde_json::from_str(&response).expect("the response is JSON");
            assert_eq!(v["jsonrpc"], "2.0");
            assert!(v.get("id").is_some(), "the response has no id member");
            assert!(v.get("result").is_none());
            let code = v["error"]["code"].as_i64().expect("an integer code");
            assert!(CODES.contains(&code), "code {code}");
            assert!(v["error"]["message"].is_string());
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
        }
    }
});
