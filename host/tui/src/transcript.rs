//! The conversation view: the cells of the session ([`Cell`]) with their rendered lines cached
//! per width, and a scroll position that stays where the user put it while new output
//! arrives. A frame renders only the rows it shows, so its cost does not grow with the
//! length of the session.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::markdown;
use crate::text::wrap_hanging;
use crate::theme::{Role, Theme};
use crate::tool_card::ToolCard;

/// One thing in the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// What the user sent.
    User(String),
    /// The assistant's answer (Markdown), possibly still streaming.
    Assistant(String),
    /// The model's reasoning, folded to one line unless expanded.
    Reasoning {
        /// The text so far.
        text: String,
        /// Shown whole.
        expanded: bool,
    },
    /// A tool call.
    Tool(Box<ToolCard>),
    /// Something rho says (command output, session notices).
    Notice(String),
    /// Something that went wrong.
    Error(String),
}

impl Cell {
    fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let inner = width.saturating_sub(2).max(1);
        let prefixed = |text: &str, first: &'static str, role: Role| -> Vec<Line<'static>> {
            wrap_hanging(text, inner)
                .into_iter()
                .enumerate()
                .map(|(i, row)| {
                    let gutter = if i == 0 { first } else { "  " };
                    Line::from(vec![
                        Span::styled(gutter, theme.style(role)),
                        Span::styled(row, theme.style(role)),
                    ])
                })
                .collect()
        };
        match self {
            Cell::User(text) => prefixed(text, "› ", Role::User),
            Cell::Assistant(text) => markdown::render(text, inner, theme)
                .into_iter()
                .map(|line| {
                    let mut spans = vec![Span::raw("  ")];
                    spans.extend(line.spans);
                    Line::from(spans).style(line.style)
                })
                .collect(),
            Cell::Reasoning { text, expanded } => {
                if *expanded {
                    prefixed(text, "∴ ", Role::Dim)
                } else {
                    let words = text.split_whitespace().count();
                    vec![Line::from(Span::styled(
                        format!("∴ thinking ({words} words) · ctrl+r shows it"),
                        theme.style(Role::Dim),
                    ))]
                }
            }
            Cell::Tool(card) => card.lines(width, theme),
            Cell::Notice(text) => prefixed(text, "• ", Role::Dim),
            Cell::Error(text) => prefixed(text, "✗ ", Role::Error),
        }
    }
}

/// A cell and its lines at the width they were last rendered for.
#[derive(Debug)]
struct Entry {
    cell: Cell,
    cache: Option<(u16, Vec<Line<'static>>)>,
}

impl Entry {
    fn lines(&mut self, width: u16, theme: &Theme) -> &[Line<'static>] {
        let stale = !matches!(&self.cache, Some((w, _)) if *w == width);
        if stale {
            self.cache = Some((width, self.cell.lines(width, theme)));
        }
        match &self.cache {
            Some((_, lines)) => lines,
            None => &[],
        }
    }
}

/// The cells of the session and the scroll position.
#[derive(Debug, Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    /// The first row shown when the user scrolled away from the bottom; `None` follows the
    /// newest output.
    anchor: Option<usize>,
    /// Rows and width of the last frame (for paging).
    viewport: (u16, u16),
}

impl Transcript {
    /// Adds a cell at the end.
    pub fn push(&mut self, cell: Cell) {
        self.entries.push(Entry { cell, cache: None });
    }

    /// The last cell, for streaming into it.
    pub fn last_mut(&mut self) -> Option<&mut Cell> {
        let entry = self.entries.last_mut()?;
        entry.cache = None;
        Some(&mut entry.cell)
    }

    /// The last cell.
    pub fn last(&self) -> Option<&Cell> {
        self.entries.last().map(|e| &e.cell)
    }

    /// The newest card matching `pick`.
    pub fn card_mut(&mut self, pick: impl Fn(&ToolCard) -> bool) -> Option<&mut ToolCard> {
        for entry in self.entries.iter_mut().rev() {
            if let Cell::Tool(card) = &mut entry.cell
                && pick(card)
            {
                entry.cache = None;
                return Some(card);
            }
        }
        None
    }

    /// The oldest card matching `pick` (approvals are asked in call order).
    pub fn first_card_mut(&mut self, pick: impl Fn(&ToolCard) -> bool) -> Option<&mut ToolCard> {
        for entry in &mut self.entries {
            if let Cell::Tool(card) = &mut entry.cell
                && pick(card)
            {
                entry.cache = None;
                return Some(card);
            }
        }
        None
    }

    /// Every cell, oldest first.
    pub fn cells(&self) -> impl Iterator<Item = &Cell> {
        self.entries.iter().map(|e| &e.cell)
    }

    /// Applies `change` to every cell (folding all results, say).
    pub fn for_each_mut(&mut self, mut change: impl FnMut(&mut Cell)) {
        for entry in &mut self.entries {
            change(&mut entry.cell);
            entry.cache = None;
        }
    }

    /// Applies `change` to every tool card; only cards it reports changed are drawn again.
    pub fn update_cards(&mut self, mut change: impl FnMut(&mut ToolCard) -> bool) {
        for entry in &mut self.entries {
            if let Cell::Tool(card) = &mut entry.cell
                && change(card)
            {
                entry.cache = None;
            }
        }
    }

    /// Forgets every cell.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.anchor = None;
    }

    /// How many cells.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the view follows the newest output.
    pub fn follows(&self) -> bool {
        self.anchor.is_none()
    }

    /// Scrolls towards older output by `rows`.
    pub fn scroll_up(&mut self, rows: usize, theme: &Theme) {
        if self.bottom_top(theme) == 0 {
            // Everything fits: there is nothing to scroll to.
            return;
        }
        let top = self.top_row(theme);
        self.anchor = Some(top.saturating_sub(rows));
    }

    /// Scrolls towards newer output by `rows`; reaching the bottom follows again.
    pub fn scroll_down(&mut self, rows: usize, theme: &Theme) {
        let Some(anchor) = self.anchor else { return };
        let next = anchor + rows;
        if next >= self.bottom_top(theme) {
            self.anchor = None;
        } else {
            self.anchor = Some(next);
        }
    }

    /// Back to following the newest output.
    pub fn scroll_to_bottom(&mut self) {
        self.anchor = None;
    }

    /// A page: the rows of the last frame, less one for context.
    pub fn page(&self) -> usize {
        usize::from(self.viewport.0.saturating_sub(1).max(1))
    }

    fn total_rows(&mut self, width: u16, theme: &Theme) -> usize {
        self.entries
            .iter_mut()
            .map(|e| e.lines(width, theme).len() + 1)
            .sum()
    }

    /// The first row shown when following.
    fn bottom_top(&mut self, theme: &Theme) -> usize {
        let (height, width) = self.viewport;
        self.total_rows(width, theme)
            .saturating_sub(usize::from(height))
    }

    fn top_row(&mut self, theme: &Theme) -> usize {
        let bottom = self.bottom_top(theme);
        self.anchor.map_or(bottom, |a| a.min(bottom))
    }

    /// Draws the rows in view into `area`; remembers its size for paging.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        self.viewport = (area.height, area.width);
        let top = self.top_row(theme);
        let mut row = 0usize;
        let mut y = area.y;
        let end = top + usize::from(area.height);
        for entry in &mut self.entries {
            if row >= end {
                break;
            }
            let lines = entry.lines(area.width, theme);
            let height = lines.len() + 1;
            if row + height <= top {
                row += height;
                continue;
            }
            for line in lines.iter() {
                if row >= top && row < end {
                    buf.set_line(area.x, y, line, area.width);
                    y += 1;
                }
                row += 1;
            }
            // The blank row between cells.
            if row >= top && row < end {
                y += 1;
            }
            row += 1;
        }
        if let Some(anchor) = self.anchor {
            // Keep the anchor valid if the session shrank (a clear, a compaction).
            self.anchor = Some(anchor.min(self.bottom_top(theme)));
        }
    }
}
