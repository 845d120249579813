//! The conversation view: the cells of the session ([`Cell`]) with their rendered lines cached
//! per width, and a scroll position that stays where the user put it while new output
//! arrives. The position is a cell and a row within it, and the bottom is found by walking
//! back from the newest cell, so a frame (and a page of scrolling) lays out only the cells it
//! shows: its cost does not grow with the length of the session, and a resumed session's
//! older cells are never rendered until the user scrolls to them.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::markdown;
use crate::text::wrap_hanging;
use crate::theme::{Role, Theme};
use crate::tool_card::{IMAGE_INDENT, ToolCard};
use crate::welcome::Welcome;

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
    /// The welcome of a new session.
    Welcome(Box<Welcome>),
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
            Cell::Welcome(welcome) => welcome.lines(width, theme),
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

/// A row of the conversation: row `row` of cell `entry`, counting the blank row after each
/// cell. Positions order as the rows do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Position {
    entry: usize,
    row: usize,
}

/// The cells of the session and the scroll position.
#[derive(Debug, Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    /// The first row shown when the user scrolled away from the bottom; `None` follows the
    /// newest output.
    anchor: Option<Position>,
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

    /// The welcome, while it is in the conversation.
    pub fn welcome_mut(&mut self) -> Option<&mut Welcome> {
        let entry = self.entries.first_mut()?;
        match &mut entry.cell {
            Cell::Welcome(welcome) => {
                entry.cache = None;
                Some(welcome)
            }
            _ => None,
        }
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
        if self.bottom_top(theme) == (Position { entry: 0, row: 0 }) {
            // Everything fits: there is nothing to scroll to.
            return;
        }
        let top = self.top_row(theme);
        self.anchor = Some(self.back(top, rows, theme));
    }

    /// Scrolls towards newer output by `rows`; reaching the bottom follows again.
    pub fn scroll_down(&mut self, rows: usize, theme: &Theme) {
        let Some(anchor) = self.anchor else { return };
        let bottom = self.bottom_top(theme);
        self.anchor = self
            .forward(anchor, rows, theme)
            .filter(|next| *next < bottom);
    }

    /// Back to following the newest output.
    pub fn scroll_to_bottom(&mut self) {
        self.anchor = None;
    }

    /// The last frame's width (80 before the first frame).
    pub fn width(&self) -> u16 {
        match self.viewport.1 {
            0 => 80,
            width => width,
        }
    }

    /// A page: the rows of the last frame, less one for context.
    pub fn page(&self) -> usize {
        usize::from(self.viewport.0.saturating_sub(1).max(1))
    }

    /// Rows of cell `entry` at the last frame's width, with the blank row after it.
    fn height(&mut self, entry: usize, theme: &Theme) -> usize {
        let width = self.viewport.1;
        self.entries
            .get_mut(entry)
            .map_or(0, |e| e.lines(width, theme).len() + 1)
    }

    /// `rows` rows before `from`, or the first row.
    fn back(&mut self, from: Position, mut rows: usize, theme: &Theme) -> Position {
        let mut at = from;
        loop {
            if rows <= at.row {
                at.row -= rows;
                return at;
            }
            if at.entry == 0 {
                return Position { entry: 0, row: 0 };
            }
            rows -= at.row + 1;
            at.entry -= 1;
            at.row = self.height(at.entry, theme).saturating_sub(1);
        }
    }

    /// `rows` rows after `from`; `None` past the last row.
    fn forward(&mut self, from: Position, mut rows: usize, theme: &Theme) -> Option<Position> {
        let mut at = from;
        loop {
            let height = self.height(at.entry, theme);
            if at.entry >= self.entries.len() {
                return None;
            }
            if at.row + rows < height {
                at.row += rows;
                return Some(at);
            }
            rows -= height - at.row;
            at = Position {
                entry: at.entry + 1,
                row: 0,
            };
        }
    }

    /// The first row shown when following: the viewport's height above the end, found by
    /// laying out only the newest cells that fill it.
    fn bottom_top(&mut self, theme: &Theme) -> Position {
        let end = Position {
            entry: self.entries.len(),
            row: 0,
        };
        self.back(end, usize::from(self.viewport.0), theme)
    }

    /// The first row shown: the anchor (within its cell, whose height may have changed with
    /// the width), but never past the bottom.
    fn top_row(&mut self, theme: &Theme) -> Position {
        let bottom = self.bottom_top(theme);
        let Some(mut anchor) = self.anchor else {
            return bottom;
        };
        let height = self.height(anchor.entry, theme);
        anchor.row = anchor.row.min(height.saturating_sub(1));
        anchor.min(bottom)
    }

    /// Draws the rows in view into `area`; remembers its size for paging.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        self.viewport = (area.height, area.width);
        let top = self.top_row(theme);
        if self.anchor.is_some() {
            // Keep the anchor valid if the width changed its cell's height.
            self.anchor = Some(top);
        }
        let mut y = area.y;
        let mut skip = top.row;
        for entry in self.entries.iter_mut().skip(top.entry) {
            if y >= area.bottom() {
                break;
            }
            let first_y = i64::from(y) - skip as i64;
            let lines = entry.lines(area.width, theme);
            let rows = lines.len();
            for line in lines.iter().skip(skip) {
                if y >= area.bottom() {
                    break;
                }
                buf.set_line(area.x, y, line, area.width);
                y += 1;
            }
            // An image fills its card's last rows, drawn only when all of them are in view.
            if let Cell::Tool(card) = &entry.cell
                && let Some(image) = card.image_slot(area.width)
            {
                let top = first_y + rows as i64 - i64::from(image.size().height);
                if let Ok(top) = u16::try_from(top)
                    && top >= area.y
                {
                    image.render(area.x + IMAGE_INDENT, top, area, buf);
                }
            }
            // The blank row between cells.
            if skip <= rows {
                y += 1;
            }
            skip = skip.saturating_sub(rows + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme() -> Theme {
        Theme::plain()
    }

    /// A transcript of `cells` user messages of one line each (`m0`, `m1`, ...): two rows a
    /// cell with the blank row.
    fn transcript(cells: usize) -> Transcript {
        let mut t = Transcript::default();
        for n in 0..cells {
            t.push(Cell::User(format!("m{n}")));
        }
        t
    }

    /// The text of each row of a `width`×`height` frame.
    fn draw(t: &mut Transcript, width: u16, height: u16) -> Vec<String> {
        let area = Rect::new(0, 0, width, height);
        let mut buf = Buffer::empty(area);
        t.render(area, &mut buf, &theme());
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn follows_the_end_and_pages_back_and_forth() {
        let mut t = transcript(10);
        assert_eq!(draw(&mut t, 20, 5), ["", "› m8", "", "› m9", ""]);
        assert!(t.follows());
        assert_eq!(t.page(), 4);
        t.scroll_up(t.page(), &theme());
        assert!(!t.follows());
        assert_eq!(draw(&mut t, 20, 5), ["", "› m6", "", "› m7", ""]);
        t.scroll_up(3, &theme());
        assert_eq!(draw(&mut t, 20, 5), ["› m4", "", "› m5", "", "› m6"]);
        // New output does not move a view scrolled away from the end.
        t.push(Cell::User("new".into()));
        assert_eq!(draw(&mut t, 20, 5), ["› m4", "", "› m5", "", "› m6"]);
        t.scroll_up(100, &theme());
        assert_eq!(draw(&mut t, 20, 5), ["› m0", "", "› m1", "", "› m2"]);
        t.scroll_down(4, &theme());
        assert_eq!(draw(&mut t, 20, 5), ["› m2", "", "› m3", "", "› m4"]);
        // Reaching the bottom follows again.
        t.scroll_down(100, &theme());
        assert!(t.follows());
        assert_eq!(draw(&mut t, 20, 5), ["", "› m9", "", "› new", ""]);
    }

    #[test]
    fn a_short_transcript_starts_at_the_top() {
        let mut t = transcript(2);
        assert_eq!(draw(&mut t, 20, 6), ["› m0", "", "› m1", "", "", ""]);
        t.scroll_up(3, &theme());
        assert_eq!(draw(&mut t, 20, 6), ["› m0", "", "› m1", "", "", ""]);
        t.scroll_down(1, &theme());
        assert!(t.follows());
    }

    #[test]
    fn a_view_inside_a_cell_survives_a_wider_terminal() {
        let mut t = transcript(10);
        t.entries[5].cell = Cell::User("one two three four five".into());
        // At width 8 the cell is five rows and its blank; the view starts at its fourth.
        draw(&mut t, 8, 4);
        t.scroll_up(100, &theme());
        t.scroll_down(10 + 3, &theme());
        assert_eq!(draw(&mut t, 8, 4), ["  four", "  five", "", "› m6"]);
        // At width 40 it is one row: the view starts at its last row (the blank one).
        assert_eq!(draw(&mut t, 40, 4), ["", "› m6", "", "› m7"]);
        assert!(!t.follows());
    }

    #[test]
    fn cells_out_of_view_are_not_laid_out() {
        let mut t = transcript(2_000);
        draw(&mut t, 40, 10);
        let laid_out = |t: &Transcript| t.entries.iter().filter(|e| e.cache.is_some()).count();
        assert!(laid_out(&t) <= 6, "{} cells laid out", laid_out(&t));
        t.scroll_up(t.page(), &theme());
        draw(&mut t, 40, 10);
        assert!(laid_out(&t) <= 12, "{} cells laid out", laid_out(&t));
    }
}
