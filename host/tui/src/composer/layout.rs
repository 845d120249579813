//! How the composer's buffer becomes rows of cells: display units (a grapheme, its escaped
//! form, or a placeholder), soft-wrapping by display width, the cursor's cell, and drawing.

use std::borrow::Cow;
use std::sync::atomic::Ordering;

use ratatui::buffer::{Buffer, CellWidth};
use ratatui::layout::{Position, Rect};
use unicode_segmentation::UnicodeSegmentation;

use super::{CONTINUATION, Composer, GUTTER, HINT, PROMPT};
use crate::theme::{Role, Theme};

/// The spaces a tab is shown as.
const TAB: &str = "    ";
/// What ends a unit too wide for a whole row.
const ELLIPSIS: char = '…';

/// What the buffer holds at one position.
pub(super) enum Item<'a> {
    /// Something shown.
    Unit(Unit<'a>),
    /// A hard line break at this byte offset.
    Newline(usize),
}

/// One thing shown: a grapheme or a placeholder, never cut across rows.
pub(super) struct Unit<'a> {
    /// Its byte range in the raw buffer.
    pub start: usize,
    pub end: usize,
    /// What is drawn: no control characters, every grapheme at least one column wide.
    pub text: Cow<'a, str>,
    /// Its columns, at most the row's width.
    pub width: u16,
    pub role: Role,
    /// Whether a row may break after it.
    pub space: bool,
}

/// One row on screen: the units in `start..end` of the raw buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Row {
    pub start: usize,
    pub end: usize,
    /// The row ends a hard line (a newline or the end of the text), so the cursor may rest at
    /// `end` on it; otherwise `end` is shown at the start of the next row.
    pub hard: bool,
}

/// The gutter's columns and the text's columns (at least 1) in `width` columns.
pub(super) fn geometry(width: u16) -> (u16, u16) {
    if width > GUTTER {
        (GUTTER, width - GUTTER)
    } else {
        (0, width.max(1))
    }
}

/// The columns visible units may fill in a row of `width` text columns: all but the last.
fn visible(width: u16) -> u16 {
    width.saturating_sub(1).max(1)
}

/// The items of `from..to` (which must start and end between units) in rows of `width` text
/// columns, units cut to fit one.
pub(super) fn items(
    composer: &Composer,
    from: usize,
    to: usize,
    width: u16,
) -> impl Iterator<Item = Item<'_>> {
    let buf = composer.buf.as_str();
    let pastes = composer.pastes.as_slice();
    let to = to.min(buf.len());
    let width = visible(width);
    let mut pos = from;
    let mut next = pastes.partition_point(|p| p.end <= from);
    std::iter::from_fn(move || {
        if pos >= to {
            return None;
        }
        if let Some(p) = pastes.get(next)
            && p.start <= pos
        {
            next += 1;
            let start = pos;
            let label = buf.get(start..p.end)?;
            pos = p.end;
            let (text, width) = fit(Cow::Borrowed(label), width_of(label), width);
            return Some(Item::Unit(Unit {
                start,
                end: p.end,
                text,
                width,
                role: Role::Accent,
                space: false,
            }));
        }
        let seg_end = pastes.get(next).map_or(to, |p| p.start.min(to));
        let rest = buf.get(pos..seg_end)?;
        let grapheme = match rest.as_bytes() {
            // Two ASCII bytes always have a grapheme boundary between them (the buffer holds
            // no CR), which spares the segmenter most of the work on ASCII text.
            [first, next, ..] if first.is_ascii() && next.is_ascii() => rest.get(..1)?,
            _ => rest.graphemes(true).next()?,
        };
        let start = pos;
        pos += grapheme.len();
        if grapheme == "\n" {
            return Some(Item::Newline(start));
        }
        let (text, natural, role) = display(grapheme);
        let (text, width) = fit(text, natural, width);
        Some(Item::Unit(Unit {
            start,
            end: pos,
            text,
            width,
            role,
            space: grapheme == " " || grapheme.chars().all(char::is_whitespace),
        }))
    })
}

/// How a grapheme is shown, and its width: itself, or (control characters, invisible ones, a
/// lone combining mark) its escaped form, dim.
fn display(grapheme: &str) -> (Cow<'_, str>, u16, Role) {
    match grapheme.as_bytes() {
        [b'\t'] => return (Cow::Borrowed(TAB), width_of(TAB), Role::Text),
        [b] if b.is_ascii_graphic() || *b == b' ' => {
            return (Cow::Borrowed(grapheme), 1, Role::Text);
        }
        _ => {}
    }
    let safe = rho_component::terminal_safe(grapheme);
    let width = width_of(&safe);
    if width > 0 {
        if safe == grapheme {
            return (Cow::Borrowed(grapheme), width, Role::Text);
        }
        return (Cow::Owned(safe), width, Role::Dim);
    }
    let escaped: String = grapheme.chars().flat_map(char::escape_unicode).collect();
    let width = width_of(&escaped);
    (Cow::Owned(escaped), width, Role::Dim)
}

/// The columns `text` takes when drawn (as ratatui draws it: zero-width graphemes dropped).
fn width_of(text: &str) -> u16 {
    text.graphemes(true)
        .filter(|g| !g.contains(char::is_control))
        .fold(0, |sum: u16, g| sum.saturating_add(g.cell_width()))
}

/// `text` of `width` columns, cut to `max` columns with an ellipsis if wider.
fn fit(text: Cow<'_, str>, width: u16, max: u16) -> (Cow<'_, str>, u16) {
    if width <= max {
        return (text, width);
    }
    let room = max.saturating_sub(1);
    let mut cut = String::new();
    let mut used = 0;
    for g in text.graphemes(true) {
        let w = g.cell_width();
        if used + w > room {
            break;
        }
        cut.push_str(g);
        used += w;
    }
    cut.push(ELLIPSIS);
    (Cow::Owned(cut), used + 1)
}

/// The rows of the whole buffer at `width` text columns: hard lines soft-wrapped at the last
/// break before the unit that does not fit (after a space, or on either side of a wide
/// character, as CJK text breaks between characters), else between graphemes.
///
/// Visible units fill at most `width - 1` columns: the last column is for the cursor at the
/// end of a line, or for a space left hanging at the end of a row (a space never starts a
/// continuation row unless several meet the edge). A hard line whose last row is still full
/// gets an empty row after it, where the cursor at its end shows.
pub(super) fn rows(composer: &Composer, width: u16) -> Vec<Row> {
    let width = width.max(1);
    let visible = visible(width);
    let mut rows = Vec::new();
    // The current row's units: start, width, whether a row may break after it.
    let mut current: Vec<(usize, u16, bool)> = Vec::new();
    let mut used: u16 = 0;
    let mut row_start = 0;
    for item in items(composer, 0, composer.buf.len(), width) {
        match item {
            Item::Newline(at) => {
                end_line(&mut rows, &mut current, &mut used, row_start, at, width);
                row_start = at + 1;
            }
            Item::Unit(unit) => {
                let wide = unit.width >= 2 && !unit.space;
                if wide && let Some(last) = current.last_mut() {
                    last.2 = true;
                }
                let limit = if unit.space { width } else { visible };
                while !current.is_empty() && used.saturating_add(unit.width) > limit {
                    let split = if unit.space {
                        current.len()
                    } else {
                        current
                            .iter()
                            .rposition(|&(_, _, breaks)| breaks)
                            .map_or(current.len(), |i| i + 1)
                    };
                    let end = current
                        .get(split)
                        .map_or(unit.start, |&(start, _, _)| start);
                    rows.push(Row {
                        start: row_start,
                        end,
                        hard: false,
                    });
                    row_start = end;
                    current.drain(..split);
                    used = current.iter().map(|&(_, w, _)| w).sum();
                }
                current.push((unit.start, unit.width, unit.space || wide));
                used = used.saturating_add(unit.width);
            }
        }
    }
    let end = composer.buf.len();
    end_line(&mut rows, &mut current, &mut used, row_start, end, width);
    rows
}

/// Ends a hard line at byte `at`: the current row, and an empty one for the cursor if that
/// row is full.
fn end_line(
    rows: &mut Vec<Row>,
    current: &mut Vec<(usize, u16, bool)>,
    used: &mut u16,
    start: usize,
    at: usize,
    width: u16,
) {
    let full = !current.is_empty() && *used >= width;
    rows.push(Row {
        start,
        end: at,
        hard: !full,
    });
    if full {
        rows.push(Row {
            start: at,
            end: at,
            hard: true,
        });
    }
    current.clear();
    *used = 0;
}

/// The row and column where the cursor at `pos` shows.
pub(super) fn locate(composer: &Composer, rows: &[Row], pos: usize, width: u16) -> (usize, u16) {
    let index = rows
        .partition_point(|r| r.end < pos || (r.end == pos && !r.hard))
        .min(rows.len().saturating_sub(1));
    let Some(row) = rows.get(index) else {
        return (0, 0);
    };
    let mut col: u16 = 0;
    for item in items(composer, row.start, row.end, width) {
        if let Item::Unit(unit) = item {
            if unit.end > pos {
                break;
            }
            col = col.saturating_add(unit.width);
        }
    }
    (index, col)
}

/// The cursor position on `row` nearest to column `col` at or before it.
pub(super) fn position_at(composer: &Composer, row: &Row, col: u16, width: u16) -> usize {
    let mut at: u16 = 0;
    let mut best = row.start;
    for item in items(composer, row.start, row.end, width) {
        if let Item::Unit(unit) = item {
            if at > col {
                break;
            }
            best = unit.start;
            at = at.saturating_add(unit.width);
        }
    }
    if row.hard && at <= col {
        best = row.end;
    }
    best
}

/// [`Composer::render`].
pub(super) fn render(
    composer: &Composer,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) -> Option<Position> {
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return None;
    }
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            if let Some(cell) = buf.cell_mut((x, y)) {
                cell.reset();
            }
        }
    }
    let (gutter, width) = geometry(area.width);
    composer.width.store(width, Ordering::Relaxed);
    let text_x = area.x + gutter;
    let last_x = area.right() - 1;
    let gutter_style = theme.style(Role::Accent);
    if composer.buf.is_empty() {
        buf.set_stringn(area.x, area.y, PROMPT, gutter.into(), gutter_style);
        buf.set_stringn(text_x, area.y, HINT, width.into(), theme.style(Role::Dim));
        composer.scroll.store(0, Ordering::Relaxed);
        return Some(Position::new(text_x.min(last_x), area.y));
    }
    let rows = composer.rows(width);
    let (cursor_row, cursor_col) = locate(composer, &rows, composer.cursor, width);
    let height = usize::from(area.height);
    let mut top = composer
        .scroll
        .load(Ordering::Relaxed)
        .min(rows.len().saturating_sub(height));
    if cursor_row < top {
        top = cursor_row;
    } else if cursor_row >= top + height {
        top = cursor_row + 1 - height;
    }
    composer.scroll.store(top, Ordering::Relaxed);
    for (y, (index, row)) in (area.top()..area.bottom()).zip(rows.iter().enumerate().skip(top)) {
        let prompt = if index == 0 { PROMPT } else { CONTINUATION };
        buf.set_stringn(area.x, y, prompt, gutter.into(), gutter_style);
        let mut x = text_x;
        for item in items(composer, row.start, row.end, width) {
            let Item::Unit(unit) = item else { continue };
            if x >= area.right() {
                break;
            }
            let room = usize::from(area.right() - x);
            buf.set_stringn(x, y, &unit.text, room, theme.style(unit.role));
            x = x.saturating_add(unit.width);
        }
    }
    let row_offset = u16::try_from(cursor_row - top).unwrap_or(u16::MAX);
    Some(Position::new(
        text_x.saturating_add(cursor_col).min(last_x),
        area.y.saturating_add(row_offset).min(area.bottom() - 1),
    ))
}
