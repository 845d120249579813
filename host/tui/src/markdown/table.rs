//! Tables: columns as wide as their content, shrunk to fit, cells wrapped within their
//! column.
//!
//! Layout: cells separated by ` │ `, no outer border; under the header a line of `─` with
//! `┼` under each separator. When the content does not fit, columns are shrunk by water
//! filling (the widest first), never below their longest word while that is possible, then
//! down to one column each; cell text wraps within its column. When even one column per cell
//! does not fit, each body row becomes a record: one `Header: value` entry per cell, wrapped,
//! a rule between rows.

use pulldown_cmark::Alignment;
use ratatui::style::{Modifier, Style};

use super::wrap::{Inline, Pieces, measure, push_piece, wrap};
use crate::theme::{Role, Theme};

/// A table being collected from parser events.
#[derive(Debug, Default)]
pub(super) struct Table {
    /// Column alignments from the delimiter row.
    pub(super) aligns: Vec<Alignment>,
    /// Rows of cells of inline content; the first `head_rows` are the header.
    pub(super) rows: Vec<Vec<Vec<Inline>>>,
    /// How many of `rows` are the header.
    pub(super) head_rows: usize,
    /// The row being collected.
    pub(super) row: Vec<Vec<Inline>>,
}

const SEPARATOR: &str = " │ ";
const SEPARATOR_WIDTH: usize = 3;

/// Lines of `table`, each at most `width` columns wide.
pub(super) fn render(table: &Table, width: usize, theme: &Theme) -> Vec<Pieces> {
    let cols = table
        .rows
        .iter()
        .map(Vec::len)
        .max()
        .unwrap_or(0)
        .max(table.aligns.len());
    if cols == 0 {
        return Vec::new();
    }
    let rows: Vec<Vec<Vec<Inline>>> = table
        .rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            if i < table.head_rows {
                row.iter().map(|cell| bold(cell)).collect()
            } else {
                row.clone()
            }
        })
        .collect();
    let separators = SEPARATOR_WIDTH * (cols - 1);
    if width < separators + cols {
        return narrow(&rows, table.head_rows, width, theme);
    }

    let mut natural = vec![1; cols];
    let mut longest = vec![1; cols];
    for row in &rows {
        for (c, cell) in row.iter().enumerate() {
            let (n, l) = measure(cell);
            natural[c] = natural[c].max(n);
            longest[c] = longest[c].max(l);
        }
    }
    let widths = fit_columns(&natural, &longest, width - separators);
    let dim = theme.style(Role::Dim);
    let empty = Vec::new();
    let mut out = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let cells: Vec<_> = (0..cols)
            .map(|c| wrap(row.get(c).unwrap_or(&empty), widths[c]))
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(0).max(1);
        for k in 0..height {
            let mut line = Vec::new();
            for (c, cell) in cells.iter().enumerate() {
                if c > 0 {
                    push_piece(&mut line, SEPARATOR, dim);
                }
                let (pieces, w): (&[(String, Style)], usize) = match cell.get(k) {
                    Some((pieces, w)) => (pieces, *w),
                    None => (&[], 0),
                };
                let gap = widths[c].saturating_sub(w);
                let (left, right) = match table.aligns.get(c) {
                    Some(Alignment::Right) => (gap, 0),
                    Some(Alignment::Center) => (gap / 2, gap - gap / 2),
                    _ => (0, gap),
                };
                push_piece(&mut line, &" ".repeat(left), Style::default());
                for (text, style) in pieces {
                    push_piece(&mut line, text, *style);
                }
                push_piece(&mut line, &" ".repeat(right), Style::default());
            }
            out.push(line);
        }
        if r + 1 == table.head_rows {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            out.push(vec![(rule.join("─┼─"), dim)]);
        }
    }
    out
}

/// `cell` in bold.
fn bold(cell: &[Inline]) -> Vec<Inline> {
    cell.iter()
        .map(|inline| match inline {
            Inline::Text(text, style) => {
                Inline::Text(text.clone(), style.add_modifier(Modifier::BOLD))
            }
            Inline::Break => Inline::Break,
        })
        .collect()
}

/// Column widths within `budget` (which is at least one per column): the natural widths
/// when they fit, otherwise the widest columns cut down to a common level, each kept at its
/// longest word when all of those fit, at one otherwise.
fn fit_columns(natural: &[usize], longest: &[usize], budget: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= budget {
        return natural.to_vec();
    }
    let words: Vec<usize> = natural
        .iter()
        .zip(longest)
        .map(|(n, l)| (*l).min(*n))
        .collect();
    let floor = if words.iter().sum::<usize>() <= budget {
        words
    } else {
        vec![1; natural.len()]
    };
    let at = |level: usize| -> Vec<usize> {
        natural
            .iter()
            .zip(&floor)
            .map(|(n, f)| level.min(*n).max(*f))
            .collect()
    };
    // The highest level whose widths fit (level 0 gives the floors, which fit).
    let (mut lo, mut hi) = (0, natural.iter().copied().max().unwrap_or(1));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if at(mid).iter().sum::<usize>() <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut widths = at(lo);
    let mut spare = budget.saturating_sub(widths.iter().sum());
    for (w, n) in widths.iter_mut().zip(natural) {
        if spare == 0 {
            break;
        }
        if *w < *n {
            *w += 1;
            spare -= 1;
        }
    }
    widths
}

/// Rows as records when the columns cannot fit side by side: each body cell on lines of its
/// own after its column's header and `: `, a dim rule between rows.
fn narrow(rows: &[Vec<Vec<Inline>>], head_rows: usize, width: usize, theme: &Theme) -> Vec<Pieces> {
    let dim = theme.style(Role::Dim);
    let (head, body) = rows.split_at(head_rows.min(rows.len()));
    let header = head.last();
    let mut out = Vec::new();
    if body.is_empty() {
        for cell in header.into_iter().flatten() {
            out.extend(wrap(cell, width).into_iter().map(|(line, _)| line));
        }
    }
    for (r, row) in body.iter().enumerate() {
        if r > 0 {
            out.push(vec![("─".repeat(width), dim)]);
        }
        for (c, cell) in row.iter().enumerate() {
            let mut inlines: Vec<Inline> = match header.and_then(|h| h.get(c)) {
                Some(name) if !name.is_empty() => {
                    let mut name = name.clone();
                    name.push(Inline::Text(": ".to_owned(), dim));
                    name
                }
                _ => Vec::new(),
            };
            inlines.extend(cell.iter().cloned());
            out.extend(wrap(&inlines, width).into_iter().map(|(line, _)| line));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::fit_columns;

    #[test]
    fn columns_fit_their_budget() {
        assert_eq!(fit_columns(&[3, 4], &[3, 4], 10), vec![3, 4]);
        assert_eq!(fit_columns(&[30, 4], &[5, 4], 20), vec![16, 4]);
        assert_eq!(fit_columns(&[30, 30], &[5, 5], 21), vec![11, 10]);
        // Words no longer fit: everything may shrink to one column.
        assert_eq!(fit_columns(&[30, 30, 30], &[20, 20, 20], 9), vec![3, 3, 3]);
        assert_eq!(fit_columns(&[5, 5], &[5, 5], 2), vec![1, 1]);
    }
}
