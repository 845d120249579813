//! Server identities as credential file names: reversible, lowercase only, no path syntax.
//!
//! `a`–`z`, `0`–`9` and `-` stand for themselves; `_` becomes `__`, `/` (plugin servers are
//! `<plugin>/<server>`) becomes `_-`, and an upper-case letter becomes `_` and the letter in
//! lower case. `_` always starts a two-character escape, so the encoding is a prefix code and
//! decodes one way only. Names hold no upper case, so two identities never share a file on a
//! case-insensitive file system (`GitHub` and `github` are `_git_hub` and `github`), and never
//! start with `.`, which leaves dot names (temporary files) to the store itself.

/// Longest encoded name: with the `.json` or `.lock` suffix it stays well under the 255 bytes
/// file systems allow, and it fits two 64-character parts even when every letter is escaped.
const MAX_NAME_BYTES: usize = 200;

/// The file stem that stores `server`'s credentials, or why `server` cannot have one.
pub(super) fn encode(server: &str) -> Result<String, &'static str> {
    if server.is_empty() {
        return Err("it is empty");
    }
    let mut parts = 0;
    for part in server.split('/') {
        if part.is_empty() {
            return Err("a part around `/` is empty (plugin servers are `<plugin>/<server>`)");
        }
        parts += 1;
    }
    if parts > 2 {
        return Err("it has more than one `/` (plugin servers are `<plugin>/<server>`)");
    }
    let mut name = String::with_capacity(server.len() + 4);
    for byte in server.bytes() {
        match byte {
            b'a'..=b'z' | b'0'..=b'9' | b'-' => name.push(char::from(byte)),
            b'A'..=b'Z' => {
                name.push('_');
                name.push(char::from(byte.to_ascii_lowercase()));
            }
            b'_' => name.push_str("__"),
            b'/' => name.push_str("_-"),
            _ => return Err("it may hold only ASCII letters, digits, `-`, `_` and one `/`"),
        }
    }
    if name.len() > MAX_NAME_BYTES {
        return Err("it is too long to name a file");
    }
    Ok(name)
}

/// The identity whose credentials a file stem holds; `None` for a stem rho never writes.
pub(super) fn decode(name: &str) -> Option<String> {
    let mut server = String::with_capacity(name.len());
    let mut bytes = name.bytes();
    while let Some(byte) = bytes.next() {
        match byte {
            b'a'..=b'z' | b'0'..=b'9' | b'-' => server.push(char::from(byte)),
            b'_' => match bytes.next()? {
                b'_' => server.push('_'),
                b'-' => server.push('/'),
                escaped @ b'a'..=b'z' => server.push(char::from(escaped.to_ascii_uppercase())),
                _ => return None,
            },
            _ => return None,
        }
    }
    // Structural rules (one `/`, no empty part, the length) live in `encode` only.
    (encode(&server).ok()? == name).then_some(server)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_round_trip_through_readable_names() {
        for (server, name) in [
            ("github", "github"),
            ("my-server", "my-server"),
            ("my_server", "my__server"),
            ("GitHub", "_git_hub"),
            ("docs/search", "docs_-search"),
            ("Data-Tools/fetch_2", "_data-_tools_-fetch__2"),
            ("_", "__"),
            ("-", "-"),
        ] {
            assert_eq!(encode(server).as_deref(), Ok(name), "{server}");
            assert_eq!(decode(name).as_deref(), Some(server), "{name}");
        }
    }

    #[test]
    fn distinct_identities_never_share_a_name_even_ignoring_case() {
        let ids = [
            "a", "A", "a_", "a/b", "a_b", "a-b", "A_B", "a__b", "ab", "_a", "_-", "x/_", "x_/y",
        ];
        let mut names: Vec<String> = ids
            .iter()
            .map(|id| encode(id).unwrap().to_ascii_lowercase())
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ids.len());
    }

    #[test]
    fn identities_that_could_escape_or_collide_are_refused() {
        for bad in [
            "", "/", "a/", "/a", "a//b", "a/b/c", ".", "..", "../x", "a b", "a.b", "é", "a\\b",
            "a\0b",
        ] {
            assert!(encode(bad).is_err(), "{bad:?}");
        }
        assert!(encode(&"A".repeat(101)).is_err());
        assert!(encode(&format!("{}/{}", "p".repeat(64), "S".repeat(64))).is_ok());
    }

    #[test]
    fn only_names_rho_writes_decode() {
        for foreign in [
            "", "GitHub", "a.b", "_", "a_", "_A", "_0", "a_-", "_-a", "a_-b_-c", ".tmp-x", "x y",
        ] {
            assert_eq!(decode(foreign), None, "{foreign:?}");
        }
    }
}
