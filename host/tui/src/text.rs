//! Plain text for the screen: made terminal-safe and word-wrapped by display width (wide
//! characters take two columns, combining marks none, a grapheme cluster is never split, a
//! word longer than the width is broken).

use rho_component::terminal_safe;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Columns a tab becomes.
const TAB: &str = "    ";

/// `text` (which may hold newlines, tabs and control characters) as rows of at most `width`
/// columns, each terminal-safe. An empty text is one empty row.
pub fn wrap_plain(text: &str, width: u16) -> Vec<String> {
    let width = usize::from(width.max(1));
    let mut rows = Vec::new();
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let safe = terminal_safe(&line.replace('\t', TAB));
        wrap_line(&safe, width, &mut rows);
    }
    rows
}

/// Greedy word wrap of one safe line into `rows`.
fn wrap_line(line: &str, width: usize, rows: &mut Vec<String>) {
    let mut row = String::new();
    let mut row_width = 0;
    for word in line.split_word_bounds() {
        let word_width = word.width();
        if row_width + word_width <= width {
            row.push_str(word);
            row_width += word_width;
            continue;
        }
        if word.trim().is_empty() {
            // A space at the end of a row is dropped, not carried over.
            rows.push(std::mem::take(&mut row));
            row_width = 0;
            continue;
        }
        if !row.is_empty() && word_width <= width {
            rows.push(std::mem::take(&mut row).trim_end().to_owned());
            row.push_str(word);
            row_width = word_width;
            continue;
        }
        // Longer than a row: break it by grapheme.
        for grapheme in word.graphemes(true) {
            let w = grapheme.width();
            if row_width + w > width && !row.is_empty() {
                rows.push(std::mem::take(&mut row));
                row_width = 0;
            }
            row.push_str(grapheme);
            row_width += w;
        }
    }
    rows.push(row);
}

/// The display width of `text`.
pub fn width_of(text: &str) -> usize {
    text.width()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_by_display_width_and_escapes_controls() {
        assert_eq!(wrap_plain("hello world", 5), ["hello", "world"]);
        assert_eq!(wrap_plain("日本語テキスト", 6), ["日本語", "テキス", "ト"]);
        assert_eq!(wrap_plain("a\u{1b}[2Jb", 40), ["a\\u{1b}[2Jb"]);
        assert_eq!(wrap_plain("one\r\ntwo", 10), ["one", "two"]);
        assert_eq!(wrap_plain("", 10), [""]);
        for row in wrap_plain("supercalifragilistic e\u{301}e\u{301}", 4) {
            assert!(width_of(&row) <= 4, "{row}");
        }
        assert_eq!(wrap_plain("x", 0), ["x"]);
    }
}
