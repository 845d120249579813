//! The on-disk form of one credential (format 2, and format 1 read) and parse errors that
//! never quote the file.
//!
//! The file is rho's own, so it is strict: every key is known and required, except
//! `expires_at`. Errors say where (line and column) and what kind of thing is wrong, but not the
//! text that is there: a hand-edited file may have a token in the wrong place, and the message
//! ends up in terminals and logs.
//!
//! Format 2 added `resource`, the server address the token was issued for. A format 1 file
//! (written before rho bound credentials to their server) is read with no resource, so the MCP
//! client can report it and never send it, and a save replaces it with a format 2 file.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::error::Category;

use super::{Credential, CredentialSummary};

/// The format this rho writes.
const FORMAT: u32 = 2;

/// The older format it still reads: a file without `resource`.
const FORMAT_WITHOUT_RESOURCE: u32 = 1;

/// The keys of a format 2 file, for the message about an unknown one.
const KEYS: &str = "format, server, resource, issuer, client_id, received_at, expires_at, \
                    scopes, refreshable, token";

const NOT_AN_OBJECT: &str = "the file must hold one JSON object";

/// What `save` writes, borrowed from the caller's credential.
#[derive(Serialize)]
struct FileRef<'a> {
    format: u32,
    server: &'a str,
    resource: &'a str,
    issuer: &'a str,
    client_id: &'a str,
    received_at: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_at: Option<u64>,
    scopes: &'a [String],
    refreshable: bool,
    token: &'a Value,
}

/// What `load` accepts: either format (`resource` is required in format 2 and absent in
/// format 1, checked after the parse).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CredentialFile {
    format: u32,
    server: String,
    #[serde(default)]
    resource: Option<String>,
    issuer: String,
    client_id: String,
    received_at: u64,
    #[serde(default)]
    expires_at: Option<u64>,
    scopes: Vec<String>,
    refreshable: bool,
    token: Value,
}

/// Just the format, read leniently when the strict parse fails: a newer rho's file deserves
/// "newer format", not a complaint about the keys it added.
#[derive(Deserialize)]
struct Head {
    format: u64,
}

/// The file `save` writes for `credential`, issued for `resource`: indented JSON (people do
/// open these files) with a final newline.
pub(super) fn to_bytes(credential: &Credential, resource: &str) -> serde_json::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(&FileRef {
        format: FORMAT,
        server: &credential.server,
        resource,
        issuer: &credential.summary.issuer,
        client_id: &credential.summary.client_id,
        received_at: credential.summary.received_at,
        expires_at: credential.summary.expires_at,
        scopes: &credential.summary.scopes,
        refreshable: credential.summary.refreshable,
        token: &credential.token,
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The credential in `bytes`, read from the file named after `server`; the error is the reason
/// the file is unreadable, safe to show.
pub(super) fn parse(bytes: &[u8], server: &str) -> Result<Credential, String> {
    // serde would also take the fields as an array, in order; a file rho wrote never is one.
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|&b| b != b'{') {
        return Err(NOT_AN_OBJECT.into());
    }
    let file: CredentialFile = match serde_json::from_slice(bytes) {
        Ok(file) => file,
        Err(error) => {
            if let Ok(head) = serde_json::from_slice::<Head>(bytes)
                && !known(head.format)
            {
                return Err(other_format(head.format));
            }
            return Err(describe(bytes, &error));
        }
    };
    if !known(file.format.into()) {
        return Err(other_format(file.format.into()));
    }
    match (file.format, &file.resource) {
        (FORMAT, None) => {
            return Err(
                "missing field `resource` (a format 2 file names the server address its token \
                 was issued for)"
                    .into(),
            );
        }
        (FORMAT_WITHOUT_RESOURCE, Some(_)) => {
            return Err(format!(
                "a format {FORMAT_WITHOUT_RESOURCE} file has no `resource` key (format {FORMAT} \
                 files do)"
            ));
        }
        _ => {}
    }
    if file.server != server {
        // A file copied or renamed by hand would hand one server's tokens to another.
        return Err(format!(
            "its \"server\" is not `{server}`, the identity its file name encodes"
        ));
    }
    Ok(Credential {
        server: file.server,
        summary: CredentialSummary {
            resource: file.resource,
            issuer: file.issuer,
            client_id: file.client_id,
            received_at: file.received_at,
            expires_at: file.expires_at,
            scopes: file.scopes,
            refreshable: file.refreshable,
        },
        token: file.token,
    })
}

fn known(format: u64) -> bool {
    format == u64::from(FORMAT) || format == u64::from(FORMAT_WITHOUT_RESOURCE)
}

fn other_format(format: u64) -> String {
    format!(
        "it is in format {format}, and this rho reads formats {FORMAT_WITHOUT_RESOURCE} and \
         {FORMAT} only"
    )
}

/// Line, column and the kind of error, with nothing quoted from the file. Syntax errors are
/// serde_json's own fixed phrases; data errors can quote values (`invalid type: string
/// "…"`), so those are rebuilt from the key's path and what was expected.
fn describe(bytes: &[u8], error: &serde_json::Error) -> String {
    let at = format!("line {}, column {}", error.line(), error.column());
    let text = error.to_string();
    let text = text
        .rfind(" at line ")
        .map_or(text.as_str(), |end| &text[..end]);
    if error.classify() != Category::Data {
        return format!("{at}: {text}");
    }
    if text.starts_with("missing field") || text.starts_with("duplicate field") {
        // Both name one of the keys above, never something from the file.
        return format!("{at}: {text}");
    }
    if text.starts_with("unknown field") {
        return format!("{at}: an unknown key (a credentials file holds {KEYS})");
    }
    // Parsing again is only paid on this error path; it finds which key holds the bad value.
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let key = serde_path_to_error::deserialize::<_, CredentialFile>(&mut deserializer)
        .err()
        .map(|e| e.path().to_string())
        .filter(|key| key != ".");
    let Some(key) = key else {
        return NOT_AN_OBJECT.into();
    };
    // serde's own text ends with what it expected (a type name of ours); the value it found,
    // which comes first, is left out.
    match text.rsplit_once(", expected ") {
        Some((_, expected)) => format!("{at}: {key}: expected {expected}"),
        None => format!("{at}: {key}: not a valid value"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANARY: &str = "canary-8d1f3a";

    fn credential() -> Credential {
        Credential {
            server: "docs/search".into(),
            summary: CredentialSummary {
                resource: Some("https://mcp.example.com/mcp".into()),
                issuer: "https://auth.example.com".into(),
                client_id: "client-1".into(),
                received_at: 1_700_000_000,
                expires_at: Some(1_700_003_600),
                scopes: vec!["read".into(), "write".into()],
                refreshable: true,
            },
            token: serde_json::json!({"access_token": CANARY, "refresh_token": CANARY}),
        }
    }

    fn to_bytes(credential: &Credential) -> serde_json::Result<Vec<u8>> {
        super::to_bytes(credential, credential.summary.resource.as_deref().unwrap())
    }

    #[test]
    fn a_written_file_reads_back_whole() {
        let bytes = to_bytes(&credential()).unwrap();
        assert!(String::from_utf8_lossy(&bytes).contains("\"format\": 2"));
        assert_eq!(parse(&bytes, "docs/search").unwrap(), credential());
        let mut without_expiry = credential();
        without_expiry.summary.expires_at = None;
        let bytes = to_bytes(&without_expiry).unwrap();
        assert!(!String::from_utf8_lossy(&bytes).contains("expires_at"));
        assert_eq!(parse(&bytes, "docs/search").unwrap(), without_expiry);
    }

    /// `{"format": 2, ...}` from the good file with one key's JSON replaced.
    fn with(key: &str, value: &str) -> Vec<u8> {
        let mut file: serde_json::Map<String, Value> =
            serde_json::from_slice(&to_bytes(&credential()).unwrap()).unwrap();
        file.insert(key.into(), serde_json::from_str(value).unwrap());
        serde_json::to_vec_pretty(&file).unwrap()
    }

    #[test]
    fn errors_say_where_and_what_without_quoting_the_file() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                with("received_at", &format!("{CANARY:?}")),
                "received_at: expected u64",
            ),
            (
                with("scopes", &format!("[1, {CANARY:?}]")),
                "scopes[0]: expected a string",
            ),
            (
                with("refreshable", &format!("{CANARY:?}")),
                "refreshable: expected a boolean",
            ),
            (with(CANARY, "1"), "an unknown key"),
            (with("expires_at", "-1"), "expires_at: expected u64"),
            (
                format!("{{\"token\": \"{CANARY}\"}}").into_bytes(),
                "missing field `format`",
            ),
            (format!("[\"{CANARY}\"]").into_bytes(), NOT_AN_OBJECT),
            (format!(" 1 {CANARY}").into_bytes(), NOT_AN_OBJECT),
            (
                format!("{{\"token\": \"{CANARY}").into_bytes(),
                "EOF while parsing a string",
            ),
            (
                format!("{{\"token\": {CANARY}}}").into_bytes(),
                "expected value",
            ),
            (b"".to_vec(), "EOF while parsing a value"),
        ];
        for (bytes, expected) in cases {
            let reason = parse(&bytes, "docs/search").unwrap_err();
            assert!(reason.contains(expected), "{reason}");
            assert!(
                reason.starts_with("line ") || reason == NOT_AN_OBJECT,
                "{reason}"
            );
            assert!(!reason.contains(CANARY), "{reason}");
        }
    }

    /// The good file as an older rho wrote it: format 1, no `resource`.
    fn format_1() -> serde_json::Map<String, Value> {
        let mut file: serde_json::Map<String, Value> =
            serde_json::from_slice(&with("format", "1")).unwrap();
        file.remove("resource");
        file
    }

    #[test]
    fn a_format_1_file_reads_without_a_resource() {
        let bytes = serde_json::to_vec_pretty(&format_1()).unwrap();
        let read = parse(&bytes, "docs/search").unwrap();
        let mut expected = credential();
        expected.summary.resource = None;
        assert_eq!(read, expected);
        // Each format has its own keys: no `resource` in format 1, a required one in 2.
        let mut with_resource = format_1();
        with_resource.insert("resource".into(), Value::String(CANARY.into()));
        let reason =
            parse(&serde_json::to_vec(&with_resource).unwrap(), "docs/search").unwrap_err();
        assert!(
            reason.contains("format 1 file has no `resource`"),
            "{reason}"
        );
        assert!(!reason.contains(CANARY), "{reason}");
        let mut without = format_1();
        without.insert("format".into(), 2.into());
        let reason = parse(&serde_json::to_vec(&without).unwrap(), "docs/search").unwrap_err();
        assert!(reason.contains("missing field `resource`"), "{reason}");
        let reason = parse(&with("resource", "null"), "docs/search").unwrap_err();
        assert!(reason.contains("missing field `resource`"), "{reason}");
        let reason = parse(&with("resource", "7"), "docs/search").unwrap_err();
        assert!(reason.contains("resource: expected a string"), "{reason}");
    }

    #[test]
    fn a_newer_format_or_another_server_is_refused() {
        for format in ["0", "3"] {
            let reason = parse(&with("format", format), "docs/search").unwrap_err();
            assert!(reason.contains(&format!("format {format},")), "{reason}");
            assert!(reason.contains("formats 1 and 2"), "{reason}");
        }
        let mut newer: serde_json::Map<String, Value> =
            serde_json::from_slice(&with("format", "3")).unwrap();
        newer.insert("added_later".into(), Value::Bool(true));
        let reason = parse(&serde_json::to_vec(&newer).unwrap(), "docs/search").unwrap_err();
        assert!(reason.contains("format 3"), "{reason}");
        let reason = parse(&to_bytes(&credential()).unwrap(), "docs").unwrap_err();
        assert!(reason.contains("its \"server\" is not `docs`"), "{reason}");
    }
}
