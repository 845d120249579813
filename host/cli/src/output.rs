//! Writing to stdout and stderr without panicking when the reader goes away, the two ways a
//! `--json` shape is printed, and terminal-safe text.
#![allow(clippy::print_stdout, clippy::print_stderr)] // this module owns the process's output

use std::io::Write;
use std::path::Path;

use rho_component::{Diagnostic, ToolOutput};

/// Writes `text` to stdout, made terminal-safe line by line (whatever a caller forgot to clean,
/// no escape sequence or carriage return gets through). A closed pipe (`rho ... | head`) is not
/// an error.
pub fn out(text: &str) {
    let text = rho_component::terminal_safe_lines(text);
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Writes content whose bytes matter (a model's answer a user may redirect into a file) to
/// stdout: as it is when stdout is a file or a pipe, made terminal-safe as [`out`] does when
/// it is a terminal.
pub fn out_content(text: &str) {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        return out(text);
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Prints a shape as pretty JSON with its object keys sorted at every level (the order most
/// commands' documents have always had), with a trailing newline.
pub fn json_sorted<T: serde::Serialize + ?Sized>(value: &T) {
    match serde_json::to_value(value) {
        Ok(value) => json_write(&value),
        Err(e) => error_line(&format!("error: cannot write JSON: {e}")),
    }
}

/// Prints a shape as pretty JSON in the declaration order of its fields, with a trailing
/// newline.
pub fn json_write<T: serde::Serialize + ?Sized>(value: &T) {
    let text = match serde_json::to_string_pretty(value) {
        Ok(text) => text,
        Err(e) => return error_line(&format!("error: cannot write JSON: {e}")),
    };
    // The same document, with no control or invisible character left raw for a terminal.
    let text = rho_component::terminal_safe_json(&text);
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush());
}

/// Writes one line to stderr, terminal-safe (an error may quote what a server said).
pub fn error_line(text: &str) {
    let text = rho_component::terminal_safe_lines(text);
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
}

/// Writes `text` to stderr, terminal-safe, with no newline added.
pub fn error_text(text: &str) {
    let text = rho_component::terminal_safe_lines(text);
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.flush());
}

/// A path for output (lossy only for names that are not UTF-8).
pub fn path_str(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Makes text from packages, servers and files safe for a terminal (the shared rule,
/// [`rho_component::terminal_safe`], under the name the CLI's output code uses).
pub use rho_component::terminal_safe as clean;

/// Text of several lines (a tool result, a skill body) made safe for a terminal, without its
/// final line break: the caller ends the block.
pub fn clean_block(text: &str) -> String {
    let text = text.strip_suffix('\n').unwrap_or(text);
    rho_component::terminal_safe_lines(text.strip_suffix('\r').unwrap_or(text))
}

/// A call's result as a person reads it: the text the model reads, then a line for the image
/// kept for display, if any (`rho tools call`, `rho mcp call`).
pub fn call_result(output: &ToolOutput) -> String {
    let mut text = clean_block(&output.text);
    text.push('\n');
    if let Some(image) = &output.image {
        text.push_str(&format!(
            "[image kept for display: {}, {} encoded bytes]\n",
            clean(&image.mime_type),
            image.data.len()
        ));
    }
    text
}

/// `text` cut to at most `max` characters, ending in `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The first line of `text`, cut to at most `max` characters.
pub fn first_line(text: &str, max: usize) -> String {
    truncate(text.lines().next().unwrap_or_default(), max)
}

/// One line per diagnostic, for human output.
pub fn diagnostic_line(d: &Diagnostic) -> String {
    format!(
        "{:<7} {:<30} {}",
        d.severity.as_str(),
        d.code.as_str(),
        diagnostic_text(d)
    )
}

/// Diagnostics of several components as an indented table (component, severity, code, what
/// and where), so the columns line up whatever the components' names.
pub fn diagnostic_table<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> String {
    let rows: Vec<Vec<String>> = diagnostics
        .into_iter()
        .map(|d| {
            vec![
                format!(
                    "  {}",
                    d.component.as_deref().map(clean).unwrap_or_default()
                ),
                d.severity.as_str().to_owned(),
                d.code.as_str().to_owned(),
                diagnostic_text(d),
            ]
        })
        .collect();
    table(&rows)
}

/// A diagnostic's message and, when it has one, its file.
fn diagnostic_text(d: &Diagnostic) -> String {
    match &d.path {
        Some(path) => format!("{} ({})", clean(&d.message), clean(&path_str(path))),
        None => clean(&d.message),
    }
}

/// A plain text table: the first row is the header; columns are padded to their widest cell.
pub fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[c] - cell.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_loses_its_final_break_and_its_tricks() {
        assert_eq!(clean_block("a\nb\n"), "a\nb");
        assert_eq!(clean_block("a\r\n\n"), "a\n");
        assert_eq!(clean_block("x\u{1b}[2J\ry"), "x\\u{1b}[2J\\u{d}y");
        assert_eq!(clean_block(""), "");
    }

    #[test]
    fn table_pads_columns() {
        let t = table(&[
            vec!["A".into(), "B".into()],
            vec!["long".into(), "x".into()],
        ]);
        assert_eq!(t, "A     B\nlong  x\n");
    }
}
