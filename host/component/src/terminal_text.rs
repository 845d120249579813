//! The one rule for text that reaches a terminal: whatever a server, a plugin or a file
//! supplied goes through [`terminal_safe`] before any part of rho prints it.

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
    fn making_text_safe_twice_changes_nothing() {
        let once = terminal_safe_lines("a\u{1b}[2Jb\rc\nd");
        assert_eq!(terminal_safe_lines(&once), once);
    }
}
