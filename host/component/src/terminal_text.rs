//! The one rule for text that reaches a terminal: whatever a server, a plugin or a file
//! supplied goes through [`terminal_safe`] before any part of rho prints it, and JSON rho
//! prints (`--json`, JSON-RPC lines) through [`terminal_safe_json`].

use std::borrow::Cow;

/// Makes text from packages, servers and files safe for a terminal: control characters
/// (escape sequences, carriage returns, newlines), bidi overrides, zero-width and tag
/// characters are shown escaped (`\u{1b}`); tabs become spaces. Everything else is kept.
pub fn terminal_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push(' '),
            c if c.is_control() || is_invisible(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out
}

/// [`terminal_safe`] for text of several lines: each line made safe, the line breaks (`\n`,
/// and `\r\n` read as one) kept. A lone `\r`, which would overwrite the line, is escaped.
pub fn terminal_safe_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&terminal_safe(line.strip_suffix('\r').unwrap_or(line)));
    }
    out
}

/// Serialized JSON made safe for a terminal without changing what it means: every character
/// [`terminal_safe`] would escape that the serializer left as it is (serde_json escapes only
/// those below U+0020; DEL, the C1 controls such as U+009B, a one-character escape sequence
/// introducer on some terminals, the bidi overrides and the other invisible characters) is
/// written as a JSON `\uXXXX` escape, as a surrogate pair beyond U+FFFF. Outside strings JSON
/// has only ASCII, so the escapes land only inside strings, whose values stay the same.
pub fn terminal_safe_json(json: &str) -> Cow<'_, str> {
    // The whitespace between tokens stays; inside strings serde_json has escaped it already.
    let unsafe_char =
        |c: char| (c.is_control() && !matches!(c, '\n' | '\r' | '\t')) || is_invisible(c);
    if !json.chars().any(unsafe_char) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if unsafe_char(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Characters that change how the text around them looks without showing themselves: the
/// zero-width space, the direction marks, embeddings, overrides and isolates, the invisible
/// operators, the byte-order mark and the tag characters. The zero-width joiner and
/// non-joiner (U+200D, U+200C) are kept: emoji sequences and several scripts need them, and
/// they cannot reorder or hide text.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{200B}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{E0000}'..='\u{E007F}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_tricks_and_keeps_the_rest() {
        assert_eq!(terminal_safe("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(terminal_safe("a\rb\nc"), "a\\u{d}b\\u{a}c");
        assert_eq!(
            terminal_safe("x\u{202E}y\u{200B}z\u{E0041}"),
            "x\\u{202e}y\\u{200b}z\\u{e0041}"
        );
        assert_eq!(terminal_safe("tab\there é"), "tab here é");
        // Joiners stay: an emoji sequence is one picture.
        assert_eq!(terminal_safe("👩\u{200D}💻"), "👩\u{200D}💻");
    }

    #[test]
    fn lines_keep_their_breaks_and_lose_their_tricks() {
        assert_eq!(terminal_safe_lines("a\nb\r\nc\n"), "a\nb\nc\n");
        assert_eq!(
            terminal_safe_lines("ok\rfake\n\u{1b}]0;title\u{7}"),
            "ok\\u{d}fake\n\\u{1b}]0;title\\u{7}"
        );
        assert_eq!(terminal_safe_lines(""), "");
    }

    #[test]
    fn json_keeps_its_meaning_and_loses_its_tricks() {
        let value = serde_json::json!({"t": "a\u{9b}31mb\u{7f}\u{202e}c\u{e0041}", "n": "x\ny"});
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let safe = terminal_safe_json(&pretty);
        assert!(
            safe.chars()
                .all(|c| !(c.is_control() || is_invisible(c)) || c == '\n'),
            "{safe}"
        );
        assert!(
            safe.contains("\\u009b") && safe.contains("\\udb40\\udc41"),
            "{safe}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
        // Nothing to escape: the same text, not a copy.
        assert!(matches!(
            terminal_safe_json("{\"a\":\"é\"}"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn making_text_safe_twice_changes_nothing() {
        let once = terminal_safe_lines("a\u{1b}[2Jb\rc\nd");
        assert_eq!(terminal_safe_lines(&once), once);
    }
}
