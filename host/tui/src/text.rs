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

/// Like [`wrap_plain`], but a wrapped line continues under where its text begins: under its
/// last column when it is a row of a table (columns apart by two spaces or more), else under
/// its own indentation. Reports stay readable when their rows wrap.
pub fn wrap_hanging(text: &str, width: u16) -> Vec<String> {
    let width = usize::from(width.max(1));
    let mut rows = Vec::new();
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let safe = terminal_safe(&line.replace('\t', TAB));
        let hang = hang_of(&safe);
        if hang == 0 || hang + MIN_HANGING_TEXT > width {
            wrap_line(&safe, width, &mut rows);
            continue;
        }
        let mut first = Vec::new();
        wrap_line(&safe, width, &mut first);
        let Some(head) = first.first().cloned() else {
            continue;
        };
        if first.len() == 1 {
            rows.push(head);
            continue;
        }
        // Everything after the first row, wrapped again into the narrower column.
        let rest = safe[head.len()..].trim_start();
        rows.push(head);
        let mut tail = Vec::new();
        wrap_line(rest, width - hang, &mut tail);
        rows.extend(tail.into_iter().map(|t| format!("{}{t}", " ".repeat(hang))));
    }
    rows
}

/// Columns a hanging continuation needs for its text at least.
const MIN_HANGING_TEXT: usize = 16;

/// The column a wrapped continuation of `line` starts at.
fn hang_of(line: &str) -> usize {
    let indent = line.len() - line.trim_start().len();
    let body = &line[indent..];
    match body.rfind("  ") {
        Some(gap) => {
            let after = &body[gap..];
            let spaces = after.len() - after.trim_start().len();
            width_of(&line[..indent + gap + spaces])
        }
        None => width_of(&line[..indent]),
    }
}

/// Greedy word wrap of one safe line into `rows`.
fn wrap_line(line: &str, width: usize, rows: &mut Vec<String>) {
    let mut row = String::new();
    let mut row_width = 0;
    for word in words(line) {
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

/// `line` cut into runs of spaces and runs of anything else (a word keeps its punctuation:
/// `problem(s)` never wraps inside).
fn words(line: &str) -> impl Iterator<Item = &str> {
    let mut rest = line;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let space = first == ' ';
        let end = rest
            .char_indices()
            .find(|(_, c)| (*c == ' ') != space)
            .map_or(rest.len(), |(i, _)| i);
        let (word, tail) = rest.split_at(end);
        rest = tail;
        Some(word)
    })
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

    #[test]
    fn hanging_rows_continue_under_their_column() {
        let rows = wrap_hanging("  skills  ok  3 available, 1 shadowed; 0 problem(s)", 34);
        assert_eq!(
            rows,
            [
                "  skills  ok  3 available, 1",
                "              shadowed; 0",
                "              problem(s)"
            ]
        );
        let rows = wrap_hanging("    tools: one, two, three, four", 20);
        assert_eq!(rows, ["    tools: one, two,", "    three, four"]);
        assert_eq!(wrap_hanging("short", 20), ["short"]);
    }
}
