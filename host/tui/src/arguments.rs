//! A call's arguments as a person reads them before allowing the call: a string value in its
//! real lines (a command's `\n` escapes become the lines the shell runs), runs of blank lines
//! and long runs of spaces collapsed into markers that say what they stand for, the start of
//! it all on the card with the rest counted (`+301 lines hidden (4.1 KiB) — v to view all`),
//! and the whole of it in a scrollable view ([`ArgumentsView`], `v` while an approval waits).
//! Nothing is ever left out without being counted.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use rho_component::terminal_safe;
use serde_json::Value;

use crate::text::wrap_plain;
use crate::theme::{Role, Theme};

/// Rows of arguments a card shows while it asks for approval.
pub const APPROVAL_ROWS: usize = 10;
/// Rows of arguments a card shows otherwise (`ctrl+o` shows them all).
pub const CARD_ROWS: usize = 3;
/// A run of this many whitespace characters or more is drawn as one `␠×N` marker.
pub const LONG_SPACE_RUN: usize = 16;
/// A run of this many blank lines or more is drawn as one `⋯ N blank lines ⋯` marker.
pub const BLANK_RUN: usize = 2;

/// What a tab is drawn as (as [`wrap_plain`] draws it), counted before runs are collapsed.
const TAB: &str = "    ";
/// The marker characters, shown escaped where the arguments themselves hold them, so that a
/// marker on screen is always rho's.
const SPACE_MARK: char = '␠';
const RUN_MARK: char = '⋯';

/// What a shown line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// Text of the arguments (long runs of spaces collapsed in it).
    Text,
    /// A run of blank lines, collapsed.
    BlankRun,
}

/// One line of the arguments as shown, and how much of the arguments it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentLine {
    /// What is drawn (made terminal-safe when it is wrapped).
    pub text: String,
    /// Text or a marker.
    pub kind: LineKind,
    /// Lines of the arguments it stands for.
    pub lines: usize,
    /// Bytes of the arguments it stands for (each line with its line break).
    pub bytes: usize,
}

/// The lines of `arguments` (the model's JSON text) as a person reads them. A JSON object is
/// shown one key a line, `key: value`; a string value that holds line breaks is shown under
/// its key in its real lines, indented; any other value as compact JSON. Anything that is not
/// a JSON object is shown as written. `{}` and nothing show nothing.
pub fn argument_lines(arguments: &str) -> Vec<ArgumentLine> {
    let trimmed = arguments.trim();
    let mut out = Vec::new();
    if trimmed.is_empty() || trimmed == "{}" {
        return out;
    }
    match serde_json::from_str::<Value>(trimmed) {
        // The same reading the tool gets (`serde_json`, a repeated key's last value wins).
        Ok(Value::Object(map)) => {
            for (key, value) in &map {
                // A key's own line breaks stay escaped: it is one line.
                let key = terminal_safe(key);
                match value {
                    Value::String(text) if text.contains('\n') => {
                        push_text(&mut out, &format!("{key}:"), "");
                        push_block(&mut out, text, "  ");
                    }
                    Value::String(text) => push_text(&mut out, text, &format!("{key}: ")),
                    other => push_text(&mut out, &other.to_string(), &format!("{key}: ")),
                }
            }
        }
        _ => push_block(&mut out, trimmed, ""),
    }
    out
}

/// `text`'s lines after `indent`, runs of blank lines collapsed. A line of spaces longer than
/// a run of spaces is not blank: it is shown, collapsed.
fn push_block(out: &mut Vec<ArgumentLine>, text: &str, indent: &str) {
    // The bytes of each blank line of the run being read.
    let mut blank: Vec<usize> = Vec::new();
    let flush = |out: &mut Vec<ArgumentLine>, blank: &mut Vec<usize>| {
        if blank.len() >= BLANK_RUN {
            out.push(ArgumentLine {
                text: format!("{indent}{RUN_MARK} {} blank lines {RUN_MARK}", blank.len()),
                kind: LineKind::BlankRun,
                lines: blank.len(),
                bytes: blank.iter().sum(),
            });
        } else {
            out.extend(blank.iter().map(|&bytes| ArgumentLine {
                text: indent.to_owned(),
                kind: LineKind::Text,
                lines: 1,
                bytes,
            }));
        }
        blank.clear();
    };
    for (i, line) in text.split('\n').enumerate() {
        // Every line but the first follows a line break.
        let bytes = line.len() + usize::from(i > 0);
        if line.trim().is_empty() && line.replace('\t', TAB).chars().count() < LONG_SPACE_RUN {
            blank.push(bytes);
            continue;
        }
        flush(out, &mut blank);
        push_text(out, line, indent);
        if let Some(last) = out.last_mut() {
            last.bytes = bytes;
        }
    }
    flush(out, &mut blank);
}

/// One line of text after `prefix`, long runs of spaces collapsed.
fn push_text(out: &mut Vec<ArgumentLine>, line: &str, prefix: &str) {
    out.push(ArgumentLine {
        text: format!("{prefix}{}", collapse_spaces(line)),
        kind: LineKind::Text,
        lines: 1,
        bytes: line.len(),
    });
}

/// `line` with each run of [`LONG_SPACE_RUN`] whitespace characters or more (a tab counts as
/// the four columns it is drawn as) replaced by `␠×N`, and the marker characters escaped.
fn collapse_spaces(line: &str) -> String {
    let expanded = line.replace('\t', TAB);
    let mut out = String::with_capacity(expanded.len());
    let mut run = String::new();
    let end_run = |out: &mut String, run: &mut String| {
        let count = run.chars().count();
        if count >= LONG_SPACE_RUN {
            out.push_str(&format!("{SPACE_MARK}×{count}"));
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in expanded.chars() {
        if c.is_whitespace() {
            run.push(c);
            continue;
        }
        end_run(&mut out, &mut run);
        match c {
            SPACE_MARK | RUN_MARK => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    end_run(&mut out, &mut run);
    out
}

/// The start of the arguments on a card, and what it leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// The rows shown, with their style.
    pub rows: Vec<(String, Role)>,
    /// Lines of the arguments not shown (a line cut short counts as not shown).
    pub hidden_lines: usize,
    /// Their bytes.
    pub hidden_bytes: usize,
}

/// The first `budget` rows of `lines` wrapped at `width` (`None`: all of them). Lines past the
/// budget are only counted, never wrapped, so a huge argument costs little.
pub fn preview(lines: &[ArgumentLine], width: u16, budget: Option<usize>) -> Preview {
    let budget = budget.unwrap_or(usize::MAX);
    let mut preview = Preview {
        rows: Vec::new(),
        hidden_lines: 0,
        hidden_bytes: 0,
    };
    let mut full = false;
    for line in lines {
        if !full {
            let wrapped = wrap_plain(&line.text, width);
            let room = budget.saturating_sub(preview.rows.len());
            full = wrapped.len() > room;
            let role = role_of(line.kind);
            preview
                .rows
                .extend(wrapped.into_iter().take(room).map(|row| (row, role)));
            if !full {
                continue;
            }
        }
        preview.hidden_lines += line.lines;
        preview.hidden_bytes += line.bytes;
    }
    preview
}

impl Preview {
    /// The line that says what is hidden and how to see it (`how`: `v to view all`), when
    /// something is.
    pub fn hidden_line(&self, how: &str) -> Option<String> {
        (self.hidden_lines > 0).then(|| {
            let s = if self.hidden_lines == 1 { "" } else { "s" };
            format!(
                "+{} line{s} hidden ({}) — {how}",
                self.hidden_lines,
                size(self.hidden_bytes)
            )
        })
    }
}

fn role_of(kind: LineKind) -> Role {
    match kind {
        LineKind::Text => Role::Dim,
        LineKind::BlankRun => Role::Accent,
    }
}

/// `bytes` for a person: `412 bytes`, `4.1 KiB`, `2.0 MiB`.
pub fn size(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} byte{}", if bytes == 1 { "" } else { "s" })
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{:.1} MiB", b / (KIB * KIB))
    }
}

/// What a key did in the [`ArgumentsView`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewKey {
    /// The view used it (scrolling), or ignores it (the approval's own keys: the question is
    /// answered on the card, where it can be read).
    Kept,
    /// Back to the card (`q`, Esc, `v`).
    Close,
}

/// The whole of a pending call's arguments, over the conversation, scrolled by rows.
#[derive(Debug, Clone)]
pub struct ArgumentsView {
    /// The call whose arguments these are.
    pub call_id: String,
    /// The card's title (`server · tool`).
    label: String,
    lines: Vec<ArgumentLine>,
    /// The rows at the width last drawn.
    cache: Option<(u16, Vec<(String, Role)>)>,
    /// The first row shown.
    top: usize,
    /// Rows of text in the last frame (for paging).
    page: usize,
}

impl ArgumentsView {
    /// The view of call `call_id`'s `arguments`, titled `label`.
    pub fn new(call_id: &str, label: &str, arguments: &str) -> Self {
        Self {
            call_id: call_id.to_owned(),
            label: label.to_owned(),
            lines: argument_lines(arguments),
            cache: None,
            top: 0,
            page: 10,
        }
    }

    /// Applies a key.
    pub fn key(&mut self, key: crossterm::event::KeyEvent) -> ViewKey {
        use crossterm::event::KeyCode;
        let page = self.page.max(1);
        match key.code {
            KeyCode::Char('q' | 'v') | KeyCode::Esc => return ViewKey::Close,
            KeyCode::Up | KeyCode::Char('k') => self.top = self.top.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.top = self.top.saturating_add(1),
            KeyCode::PageUp | KeyCode::Char('b') => self.top = self.top.saturating_sub(page),
            KeyCode::PageDown | KeyCode::Char(' ') => self.top = self.top.saturating_add(page),
            KeyCode::Home | KeyCode::Char('g') => self.top = 0,
            KeyCode::End | KeyCode::Char('G') => self.top = usize::MAX,
            _ => {}
        }
        ViewKey::Kept
    }

    /// Draws the view over `area`: a title row, the rows, and where they are.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        ratatui::widgets::Widget::render(ratatui::widgets::Clear, area, buf);
        if area.height == 0 {
            return;
        }
        let width = area.width.saturating_sub(2).max(1);
        if !matches!(&self.cache, Some((w, _)) if *w == width) {
            let rows = preview(&self.lines, width, None).rows;
            self.cache = Some((width, rows));
        }
        let rows = self.cache.as_ref().map_or(&[][..], |(_, rows)| rows);
        let page = usize::from(area.height.saturating_sub(1));
        self.page = page;
        self.top = self.top.min(rows.len().saturating_sub(page));
        let last = (self.top + page).min(rows.len());
        let lines: usize = self.lines.iter().map(|l| l.lines).sum();
        let title = format!(
            " arguments of {} · {lines} line{} · rows {}–{last} of {}",
            terminal_safe(&self.label),
            if lines == 1 { "" } else { "s" },
            (self.top + 1).min(last),
            rows.len(),
        );
        buf.set_line(
            area.x,
            area.y,
            &Line::from(Span::styled(title, theme.style(Role::Accent))),
            area.width,
        );
        for (i, (row, role)) in rows[self.top..last].iter().enumerate() {
            let y = area.y + 1 + u16::try_from(i).unwrap_or(u16::MAX);
            let line = Line::from(vec![
                Span::raw("  "),
                Span::styled(row.clone(), theme.style(*role)),
            ]);
            buf.set_line(area.x, y, &line, area.width);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[ArgumentLine]) -> Vec<&str> {
        lines.iter().map(|l| l.text.as_str()).collect()
    }

    #[test]
    fn a_command_shows_its_real_lines_with_blank_runs_counted() {
        let command = format!("touch X\n{}echo hello", "\n".repeat(300));
        let arguments = serde_json::json!({ "command": command }).to_string();
        let lines = argument_lines(&arguments);
        assert_eq!(
            texts(&lines),
            [
                "command:",
                "  touch X",
                "  ⋯ 300 blank lines ⋯",
                "  echo hello"
            ]
        );
        assert_eq!(lines.iter().map(|l| l.lines).sum::<usize>(), 303);
        let shown = preview(&lines, 40, Some(APPROVAL_ROWS));
        assert_eq!(shown.hidden_lines, 0);
        assert_eq!(shown.rows.len(), 4);
    }

    #[test]
    fn flat_objects_show_one_key_a_line_and_anything_else_as_written() {
        let lines = argument_lines(r#"{"path":"a.txt","limit":3,"opts":{"x":[1]}}"#);
        assert_eq!(
            texts(&lines),
            ["limit: 3", "opts: {\"x\":[1]}", "path: a.txt"]
        );
        assert_eq!(texts(&argument_lines("not json")), ["not json"]);
        assert!(argument_lines(" {} ").is_empty());
        assert!(argument_lines("").is_empty());
        // A single blank line is a line; a key's line break stays escaped.
        let lines = argument_lines(r#"{"a\nb":"one\n\ntwo"}"#);
        assert_eq!(texts(&lines), ["a\\u{a}b:", "  one", "  ", "  two"]);
    }

    #[test]
    fn long_runs_of_spaces_become_visible_markers() {
        let arguments = serde_json::json!({
            "command": format!("echo hi{}&& rm -rf ~", " ".repeat(40)),
        })
        .to_string();
        assert_eq!(
            texts(&argument_lines(&arguments)),
            ["command: echo hi␠×40&& rm -rf ~"]
        );
        // Fifteen stay spaces; tabs count as the columns they take.
        assert_eq!(
            collapse_spaces(&format!("a{}b", " ".repeat(15))),
            format!("a{}b", " ".repeat(15))
        );
        assert_eq!(collapse_spaces("a\t\t\t\tb"), "a␠×16b");
        // A marker in the arguments themselves is shown escaped: it cannot pass for rho's.
        assert_eq!(collapse_spaces("␠×40 ⋯"), "\\u{2420}×40 \\u{22ef}");
        // A whitespace-only line longer than a run is text, not a blank line.
        let block = format!("a\n{}\nb", " ".repeat(40));
        let mut out = Vec::new();
        push_block(&mut out, &block, "");
        assert_eq!(texts(&out), ["a", "␠×40", "b"]);
    }

    #[test]
    fn the_preview_counts_what_it_leaves_out() {
        let command: String = (1..=40).map(|i| format!("echo {i}\n")).collect();
        let arguments = serde_json::json!({ "command": command }).to_string();
        let lines = argument_lines(&arguments);
        let shown = preview(&lines, 40, Some(APPROVAL_ROWS));
        assert_eq!(shown.rows.len(), APPROVAL_ROWS);
        assert_eq!(shown.rows[1].0, "  echo 1");
        // `command:` and echo 1..9 are shown; echo 10..40 and the empty last line are not.
        assert_eq!(shown.hidden_lines, 32);
        let hidden: usize = (10..=40)
            .map(|i| format!("echo {i}").len() + 1)
            .sum::<usize>()
            + 1;
        assert_eq!(shown.hidden_bytes, hidden);
        assert_eq!(
            shown.hidden_line("v to view all").unwrap(),
            format!("+32 lines hidden ({hidden} bytes) — v to view all")
        );
        assert_eq!(preview(&lines, 40, None).hidden_lines, 0);
        // A line longer than the budget shows its start and counts as hidden.
        let long = serde_json::json!({ "data": "x".repeat(5000) }).to_string();
        let shown = preview(&argument_lines(&long), 40, Some(3));
        assert_eq!(shown.rows.len(), 3);
        assert_eq!((shown.hidden_lines, shown.hidden_bytes), (1, 5000));
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size(1), "1 byte");
        assert_eq!(size(412), "412 bytes");
        assert_eq!(size(4200), "4.1 KiB");
        assert_eq!(size(2 << 20), "2.0 MiB");
    }
}
