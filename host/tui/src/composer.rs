//! The message input at the bottom of the screen: a multi-line editor with history, folded
//! pastes and the tokens the command and resource palettes complete.
//!
//! [`Composer`] is a pure state machine and renderer: keys and pastes go in
//! ([`Composer::handle_key`], [`Composer::paste`]), an [`Outcome`] comes out, and
//! [`Composer::render`] draws it into a [`Buffer`]. It does no IO.
//!
//! # The buffer
//!
//! The raw buffer is the text as shown, with one exception: a large paste (more than
//! [`FOLD_LINES`] lines or more than [`FOLD_CHARS`] characters) is shown as an atomic
//! placeholder `[Pasted text #N +X lines]` whose payload is kept aside. [`Composer::text`]
//! expands the placeholders (it is what gets sent); [`Composer::buffer`] does not, and the byte
//! offsets of [`Token`] and [`Composer::cursor`] are offsets into it. The cursor never rests
//! inside a placeholder, and an edit that touches one removes it whole.
//!
//! The raw text is kept as typed or pasted, control characters included (CR and CRLF become
//! LF); only the display escapes them, through [`rho_component::terminal_safe`], so the
//! composer never writes a control character to the terminal. A tab is shown as four spaces.
//!
//! The expanded text is limited to [`MAX_BYTES`] (1 MiB): a key, paste or token replacement
//! that would make it longer is refused whole ([`Outcome::Unchanged`], `paste` returns
//! `false`); [`Composer::set_text`] truncates at the limit.
//!
//! # Keys
//!
//! | Key | Action |
//! |---|---|
//! | Enter | submit (unless blank); after a `\`, replace the `\` with a newline |
//! | Shift/Alt/Ctrl-Enter, Ctrl-J | newline |
//! | Backspace, Ctrl-H / Delete | delete the grapheme (or placeholder) before / after the cursor |
//! | Ctrl-D | delete after the cursor; [`Outcome::Ignored`] when the composer is empty |
//! | Left, Ctrl-B / Right, Ctrl-F | one grapheme (a placeholder is one step) |
//! | Ctrl-Left, Alt-Left, Alt-B / Ctrl-Right, Alt-Right, Alt-F | one word |
//! | Home, Ctrl-A / End, Ctrl-E | start / end of the line |
//! | Ctrl-Home / Ctrl-End | start / end of the text |
//! | Up, Ctrl-P / Down, Ctrl-N | previous / next row (wrapped or hard); on the first / last row, older / newer history |
//! | Ctrl-U / Ctrl-K | delete to the start / end of the line (at the edge: the line break) |
//! | Ctrl-W | delete the previous whitespace-delimited word |
//! | Alt-Backspace, Ctrl-Backspace / Alt-D, Alt-Delete, Ctrl-Delete | delete the previous / next word |
//! | Ctrl-Y | insert the text the last delete-to/word command removed |
//!
//! Everything else (Esc, Tab, Ctrl-C, PageUp, function keys, other control and Alt
//! combinations) is [`Outcome::Ignored`] for the caller. Key releases are
//! [`Outcome::Unchanged`] (consumed, nothing to do), so a caller never acts on them twice.
//! Ctrl-Alt with a character types the character (it is AltGr on Windows).

mod history;
mod layout;
mod motion;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use unicode_segmentation::UnicodeSegmentation;

use crate::theme::Theme;

/// The most bytes the expanded text ([`Composer::text`]) may hold: 1 MiB.
pub const MAX_BYTES: usize = 1024 * 1024;
/// A paste with more lines than this becomes a placeholder.
pub const FOLD_LINES: usize = 5;
/// A paste with more characters than this becomes a placeholder.
pub const FOLD_CHARS: usize = 1000;
/// How many submitted texts the history keeps (the oldest go first).
pub const HISTORY_LIMIT: usize = 1000;
/// What an empty composer shows.
pub const HINT: &str = "Ask rho anything · / for commands · @ for resources";
/// The gutter of the first row.
const PROMPT: &str = "› ";
/// The gutter of every other row.
const CONTINUATION: &str = "  ";
/// The gutter's width.
const GUTTER: u16 = 2;

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Enter on a non-blank text: the expanded text, now cleared from the composer and pushed
    /// to its history.
    Submitted(String),
    /// The text or the cursor changed: redraw.
    Changed,
    /// The key was for the composer but did nothing (a refused input, Left at the start, a
    /// key release).
    Unchanged,
    /// The key is not for the composer (Esc, Tab, Ctrl-C, PageUp, ...): the caller handles it.
    Ignored,
}

/// What a palette completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// A `/command`: the first word of a text that starts with `/`.
    Slash,
    /// An `@resource`: a whitespace-delimited word starting with `@`.
    At,
    /// Any whitespace-delimited word (a prompt command's `name=value` argument), from
    /// [`Composer::word_at_cursor`]; its text is the whole word.
    Word,
}

/// The word at the cursor that a palette completes, from [`Composer::token_at_cursor`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// Which palette.
    pub kind: TokenKind,
    /// The byte offset in the raw buffer of the sigil (`/` or `@`).
    pub start: usize,
    /// The byte offset in the raw buffer just past the word.
    pub end: usize,
    /// The word without its sigil (what the palette filters by); may be empty.
    pub text: String,
}

/// A folded paste: the placeholder label occupies `start..end` of the raw buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Paste {
    start: usize,
    end: usize,
    payload: String,
}

/// The editable state, saved while browsing the history.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Snapshot {
    buf: String,
    pastes: Vec<Paste>,
    cursor: usize,
}

/// A submitted text.
#[derive(Debug)]
struct Entry {
    /// The expanded text.
    text: String,
    /// The raw buffer and its placeholders, when it had any: what recalling it shows, so a
    /// large paste comes back folded.
    folded: Option<Snapshot>,
}

/// A walk through the history.
#[derive(Debug)]
struct Browse {
    /// The history entry shown.
    index: usize,
    /// What was being written before the walk began, restored when coming back past the
    /// newest entry.
    draft: Snapshot,
}

/// The message input.
#[derive(Debug, Default)]
pub struct Composer {
    /// The raw text, placeholders unexpanded; never holds a CR.
    buf: String,
    /// A byte offset into `buf`, on a char boundary, never inside a placeholder.
    cursor: usize,
    /// Sorted, non-overlapping.
    pastes: Vec<Paste>,
    /// Placeholders made so far (their numbers count up from 1).
    pasted: usize,
    /// Oldest first.
    history: Vec<Entry>,
    browse: Option<Browse>,
    /// History entries edited while browsing, by index: shown instead of the entry until the
    /// composer is cleared (a submit clears it).
    edits: HashMap<usize, Snapshot>,
    /// The column Up/Down aim for while they repeat.
    goal_col: Option<u16>,
    /// What the last delete-to/word command removed (expanded), for Ctrl-Y.
    kill: String,
    /// The text width of the last render (0 before the first), for Up/Down over wrapped rows.
    width: AtomicU16,
    /// The first row shown by the last render.
    scroll: AtomicUsize,
    /// The rows of the buffer at one width, until the buffer changes.
    rows: Mutex<Option<(u16, Arc<[layout::Row]>)>>,
}

/// A unit of cursor movement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Space,
    Word,
    Punct,
    Paste,
}

impl Composer {
    /// An empty composer with no history.
    pub fn new() -> Self {
        Self::default()
    }

    /// Handles one key; see the module documentation for the bindings.
    pub fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        if key.kind == KeyEventKind::Release {
            return Outcome::Unchanged;
        }
        let goal = self.goal_col.take();
        let outcome = self.dispatch(key, goal);
        if outcome == Outcome::Ignored {
            self.goal_col = goal;
        }
        outcome
    }

    fn dispatch(&mut self, key: KeyEvent, goal: Option<u16>) -> Outcome {
        let mods = key.modifiers;
        if mods.intersects(KeyModifiers::SUPER | KeyModifiers::HYPER) {
            return Outcome::Ignored;
        }
        let ctrl = mods.contains(KeyModifiers::CONTROL);
        let alt = mods.intersects(KeyModifiers::ALT | KeyModifiers::META);
        let shift = mods.contains(KeyModifiers::SHIFT);
        let word = ctrl || alt;
        match key.code {
            KeyCode::Enter if ctrl || alt || shift => self.insert_typed("\n"),
            KeyCode::Enter => self.enter(),
            KeyCode::Char(c) if ctrl && alt => self.insert_char(c),
            KeyCode::Char(c) if ctrl => self.control(c, goal),
            KeyCode::Char(c) if alt => self.meta(c),
            KeyCode::Char(c) => self.insert_char(c),
            KeyCode::Backspace if word => self.kill_range(self.word_left(self.cursor), self.cursor),
            KeyCode::Backspace => self.delete_back(),
            KeyCode::Delete if word => self.kill_range(self.cursor, self.word_right(self.cursor)),
            KeyCode::Delete => self.delete_forward(),
            KeyCode::Left if word => self.move_to(self.word_left(self.cursor)),
            KeyCode::Left => self.move_to(self.prev_boundary(self.cursor)),
            KeyCode::Right if word => self.move_to(self.word_right(self.cursor)),
            KeyCode::Right => self.move_to(self.next_boundary(self.cursor)),
            KeyCode::Home if ctrl => self.move_to(0),
            KeyCode::Home => self.move_to(self.line_start(self.cursor)),
            KeyCode::End if ctrl => self.move_to(self.buf.len()),
            KeyCode::End => self.move_to(self.line_end(self.cursor)),
            KeyCode::Up => self.vertical(true, goal),
            KeyCode::Down => self.vertical(false, goal),
            _ => Outcome::Ignored,
        }
    }

    /// Ctrl with a character.
    fn control(&mut self, c: char, goal: Option<u16>) -> Outcome {
        match c.to_ascii_lowercase() {
            'j' => self.insert_typed("\n"),
            'a' => self.move_to(self.line_start(self.cursor)),
            'e' => self.move_to(self.line_end(self.cursor)),
            'b' => self.move_to(self.prev_boundary(self.cursor)),
            'f' => self.move_to(self.next_boundary(self.cursor)),
            'p' => self.vertical(true, goal),
            'n' => self.vertical(false, goal),
            'h' => self.delete_back(),
            'd' if self.buf.is_empty() => Outcome::Ignored,
            'd' => self.delete_forward(),
            'u' => {
                let start = self.line_start(self.cursor);
                if start < self.cursor {
                    self.kill_range(start, self.cursor)
                } else {
                    // At the start of a line: join it to the one above.
                    self.kill_range(self.cursor.saturating_sub(1), self.cursor)
                }
            }
            'k' => {
                let end = self.line_end(self.cursor);
                if end > self.cursor {
                    self.kill_range(self.cursor, end)
                } else {
                    // At the end of a line: join the next one to it.
                    let next = (self.cursor + 1).min(self.buf.len());
                    self.kill_range(self.cursor, next)
                }
            }
            'w' => self.kill_range(self.unix_word_left(self.cursor), self.cursor),
            'y' => self.yank(),
            _ => Outcome::Ignored,
        }
    }

    /// Alt with a character.
    fn meta(&mut self, c: char) -> Outcome {
        match c.to_ascii_lowercase() {
            'b' => self.move_to(self.word_left(self.cursor)),
            'f' => self.move_to(self.word_right(self.cursor)),
            'd' => self.kill_range(self.cursor, self.word_right(self.cursor)),
            _ => Outcome::Ignored,
        }
    }

    /// Enter without modifiers.
    fn enter(&mut self) -> Outcome {
        let after_backslash = self
            .buf
            .get(..self.cursor)
            .is_some_and(|before| before.ends_with('\\'));
        if after_backslash {
            let at = self.cursor - 1;
            return changed(self.splice(at, self.cursor, "\n", None));
        }
        if self.text().trim().is_empty() {
            return Outcome::Unchanged;
        }
        Outcome::Submitted(self.take())
    }

    fn insert_char(&mut self, c: char) -> Outcome {
        match c {
            '\n' | '\r' => self.insert_typed("\n"),
            c if c.is_control() => Outcome::Ignored,
            c => {
                let mut utf8 = [0; 4];
                self.insert_typed(c.encode_utf8(&mut utf8))
            }
        }
    }

    fn insert_typed(&mut self, text: &str) -> Outcome {
        changed(self.splice(self.cursor, self.cursor, text, None))
    }

    fn delete_back(&mut self) -> Outcome {
        match self.prev_unit(self.cursor) {
            Some((start, _)) => changed(self.splice(start, self.cursor, "", None)),
            None => Outcome::Unchanged,
        }
    }

    fn delete_forward(&mut self) -> Outcome {
        match self.next_unit(self.cursor) {
            Some((end, _)) => changed(self.splice(self.cursor, end, "", None)),
            None => Outcome::Unchanged,
        }
    }

    /// Deletes `start..end`, keeping it (expanded) for Ctrl-Y.
    fn kill_range(&mut self, start: usize, end: usize) -> Outcome {
        if start >= end {
            return Outcome::Unchanged;
        }
        let killed = self.expand(start, end);
        if self.splice(start, end, "", None) {
            self.kill = killed;
            Outcome::Changed
        } else {
            Outcome::Unchanged
        }
    }

    fn yank(&mut self) -> Outcome {
        if self.kill.is_empty() {
            return Outcome::Unchanged;
        }
        let kill = self.kill.clone();
        changed(self.paste(&kill))
    }

    fn move_to(&mut self, to: usize) -> Outcome {
        let to = self.snap(to);
        if to == self.cursor {
            Outcome::Unchanged
        } else {
            self.cursor = to;
            Outcome::Changed
        }
    }

    /// Up or Down: the row above or below, else the history.
    fn vertical(&mut self, up: bool, goal: Option<u16>) -> Outcome {
        let width = match self.width.load(Ordering::Relaxed) {
            0 => u16::MAX,
            width => width,
        };
        let rows = self.rows(width);
        let (row, col) = layout::locate(self, &rows, self.cursor, width);
        let target = if up {
            row.checked_sub(1)
        } else {
            Some(row + 1)
        };
        if let Some(target) = target.and_then(|t| rows.get(t)) {
            let col = goal.unwrap_or(col);
            self.goal_col = Some(col);
            return self.move_to(layout::position_at(self, target, col, width));
        }
        // No row further: the history, else the start or end of the text.
        if up {
            if self.history_older() {
                return Outcome::Changed;
            }
            self.move_to(0)
        } else {
            if self.history_newer() {
                return Outcome::Changed;
            }
            self.move_to(self.buf.len())
        }
    }

    /// Bracketed paste at the cursor: CR and CRLF become LF; a paste of more than
    /// [`FOLD_LINES`] lines or [`FOLD_CHARS`] characters becomes a placeholder
    /// `[Pasted text #N +X lines]` (N counts the composer's placeholders from 1, X the lines of
    /// the paste, a final line break not starting another; `+1 line` for one). Returns false,
    /// changing nothing, when the expanded text would grow past [`MAX_BYTES`].
    pub fn paste(&mut self, text: &str) -> bool {
        let text = normalize_newlines(text);
        if text.is_empty() {
            return true;
        }
        let lines = text.lines().count();
        if lines <= FOLD_LINES && text.chars().count() <= FOLD_CHARS {
            return self.splice(self.cursor, self.cursor, &text, None);
        }
        let number = self.pasted + 1;
        let unit = if lines == 1 { "line" } else { "lines" };
        let label = format!("[Pasted text #{number} +{lines} {unit}]");
        let accepted = self.splice(self.cursor, self.cursor, &label, Some(text));
        if accepted {
            self.pasted = number;
        }
        accepted
    }

    /// The full text, placeholders expanded: what gets sent.
    pub fn text(&self) -> String {
        self.expand(0, self.buf.len())
    }

    /// The raw buffer, placeholders unexpanded: what is shown, and what [`Token`] offsets and
    /// [`Composer::cursor`] index.
    pub fn buffer(&self) -> &str {
        &self.buf
    }

    /// The cursor's byte offset in [`Composer::buffer`].
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// The history, oldest first (to save with a session), expanded texts.
    pub fn history(&self) -> impl DoubleEndedIterator<Item = &str> + ExactSizeIterator {
        self.history.iter().map(|entry| entry.text.as_str())
    }

    /// Whether nothing is written (a placeholder or a space counts as something).
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Replaces everything with `text` (CR and CRLF become LF; truncated at [`MAX_BYTES`]),
    /// the cursor at its end. Ends a history walk (as [`Composer::clear`]).
    pub fn set_text(&mut self, text: &str) {
        self.browse = None;
        self.edits.clear();
        self.replace_all(text);
    }

    /// [`Composer::text`], then clears the composer and pushes the text to the history.
    pub fn take(&mut self) -> String {
        let text = self.text();
        let folded = (!self.pastes.is_empty()).then(|| self.snapshot());
        self.clear();
        self.push_entry(text.clone(), folded);
        text
    }

    /// Empties the composer and ends a history walk, dropping the edits made to history
    /// entries during it (the history stays).
    pub fn clear(&mut self) {
        self.touch();
        self.buf.clear();
        self.pastes.clear();
        self.cursor = 0;
        self.browse = None;
        self.edits.clear();
        self.goal_col = None;
        self.scroll.store(0, Ordering::Relaxed);
    }

    /// The rows the composer needs at `width` columns (its text soft-wrapped), at least 1.
    pub fn desired_height(&self, width: u16) -> u16 {
        if self.buf.is_empty() {
            return 1;
        }
        let (_, text_width) = layout::geometry(width);
        let rows = self.rows(text_width).len();
        u16::try_from(rows).unwrap_or(u16::MAX).max(1)
    }

    /// Draws the composer into `area` (scrolled so the cursor's row shows) and returns the
    /// cursor's absolute position; `None` when `area` is empty.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) -> Option<Position> {
        layout::render(self, area, buf, theme)
    }

    /// The palette token at the cursor, if any:
    ///
    /// - [`TokenKind::Slash`] when the buffer starts with `/` and the cursor is after the `/`
    ///   and within or at the end of the first whitespace-free word;
    /// - [`TokenKind::At`] when the cursor is within or at the end of a whitespace-delimited
    ///   word starting with `@`.
    ///
    /// `start..end` covers the whole word including its sigil; [`Token::text`] is the word
    /// without the sigil. A word stops at a placeholder.
    pub fn token_at_cursor(&self) -> Option<Token> {
        let cursor = self.cursor;
        let (seg_start, seg_end) = self.segment(cursor);
        if self.buf.starts_with('/') && seg_start == 0 {
            let end = self
                .buf
                .get(..seg_end)?
                .find(char::is_whitespace)
                .unwrap_or(seg_end);
            if (1..=end).contains(&cursor) {
                return Some(Token {
                    kind: TokenKind::Slash,
                    start: 0,
                    end,
                    text: self.buf.get(1..end)?.to_owned(),
                });
            }
        }
        let word = self.word_at_cursor()?;
        let text = word.text.strip_prefix('@')?;
        Some(Token {
            kind: TokenKind::At,
            start: word.start,
            end: word.end,
            text: text.to_owned(),
        })
    }

    /// The whitespace-delimited word the cursor is in or at the end of ([`TokenKind::Word`],
    /// the whole word as its text); an empty word at the cursor when it follows whitespace.
    /// `None` inside a placeholder's reach.
    pub fn word_at_cursor(&self) -> Option<Token> {
        let cursor = self.cursor;
        let (seg_start, seg_end) = self.segment(cursor);
        let before = self.buf.get(seg_start..cursor)?;
        let after = self.buf.get(cursor..seg_end)?;
        let start = before
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(seg_start, |(i, c)| seg_start + i + c.len_utf8());
        let end = after
            .find(char::is_whitespace)
            .map_or(seg_end, |i| cursor + i);
        Some(Token {
            kind: TokenKind::Word,
            start,
            end,
            text: self.buf.get(start..end)?.to_owned(),
        })
    }

    /// Replaces `token`'s range with `with` (the whole word: include the sigil if it should
    /// stay), the cursor after it. Does nothing if the buffer no longer holds `token` there as
    /// a whole word (it changed since [`Composer::token_at_cursor`]) or the text would grow
    /// past [`MAX_BYTES`].
    pub fn replace_token(&mut self, token: &Token, with: &str) {
        if !self.holds(token) {
            return;
        }
        let with = normalize_newlines(with);
        if self.splice(token.start, token.end, &with, None) {
            self.goal_col = None;
        }
    }

    /// Whether `token` is still a whole word of the buffer, at its place.
    fn holds(&self, token: &Token) -> bool {
        let word = self.buf.get(token.start..token.end);
        let text = match token.kind {
            TokenKind::Slash => word.and_then(|word| word.strip_prefix('/')),
            TokenKind::At => word.and_then(|word| word.strip_prefix('@')),
            TokenKind::Word => word,
        };
        if text != Some(token.text.as_str()) {
            return false;
        }
        if token.kind == TokenKind::Slash && token.start != 0 {
            return false;
        }
        let (seg_start, seg_end) = self.segment(token.start);
        let before = self.buf.get(seg_start..token.start).unwrap_or_default();
        let after = self.buf.get(token.end..seg_end).unwrap_or_default();
        token.end <= seg_end
            && !token.text.contains(char::is_whitespace)
            && before.chars().next_back().is_none_or(char::is_whitespace)
            && after.chars().next().is_none_or(char::is_whitespace)
    }

    /// Replaces everything with `text`, no placeholders, the cursor at the end.
    fn replace_all(&mut self, text: &str) {
        let mut text = normalize_newlines(text);
        if text.len() > MAX_BYTES {
            let cut = text.floor_char_boundary(MAX_BYTES);
            text.truncate(cut);
        }
        self.touch();
        self.buf = text;
        self.pastes.clear();
        self.cursor = self.buf.len();
        self.goal_col = None;
    }

    /// The one edit: replaces `start..end` (widened to whole placeholders) with `with`, a
    /// placeholder label if `payload` is given, and puts the cursor after it. False, changing
    /// nothing, if the expanded text would grow past [`MAX_BYTES`].
    fn splice(&mut self, start: usize, end: usize, with: &str, payload: Option<String>) -> bool {
        let len = self.buf.len();
        let mut start = self.buf.floor_char_boundary(start.min(len));
        let mut end = self.buf.floor_char_boundary(end.min(len));
        if start > end {
            std::mem::swap(&mut start, &mut end);
        }
        if start == end {
            if let Some(p) = self
                .pastes
                .iter()
                .find(|p| p.start < start && start < p.end)
            {
                start = p.end;
                end = p.end;
            }
        } else {
            for p in &self.pastes {
                if p.start < end && start < p.end {
                    start = start.min(p.start);
                    end = end.max(p.end);
                }
            }
        }
        let removed = self.expanded_len_of(start, end);
        let added = payload.as_ref().map_or(with.len(), String::len);
        if added > removed && self.expanded_len() - removed + added > MAX_BYTES {
            return false;
        }
        if start < end {
            self.pastes.retain(|p| p.end <= start || end <= p.start);
        }
        let cut = end - start;
        for p in &mut self.pastes {
            if p.start >= end {
                p.start = p.start - cut + with.len();
                p.end = p.end - cut + with.len();
            }
        }
        self.touch();
        self.buf.replace_range(start..end, with);
        if let Some(payload) = payload {
            let at = self.pastes.partition_point(|p| p.start < start);
            self.pastes.insert(
                at,
                Paste {
                    start,
                    end: start + with.len(),
                    payload,
                },
            );
        }
        self.cursor = start + with.len();
        true
    }

    /// Forgets the rows of the old buffer: call before every change to it.
    fn touch(&mut self) {
        *self.rows.get_mut().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// The rows of the buffer at `width` text columns, from the cache when it has them.
    fn rows(&self, width: u16) -> Arc<[layout::Row]> {
        let mut cache = self.rows.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((cached, rows)) = cache.as_ref()
            && *cached == width
        {
            return Arc::clone(rows);
        }
        let rows: Arc<[layout::Row]> = layout::rows(self, width).into();
        *cache = Some((width, Arc::clone(&rows)));
        rows
    }

    /// The expanded text of `start..end`, a range that does not cut a placeholder.
    fn expand(&self, start: usize, end: usize) -> String {
        let mut out = String::new();
        let mut at = start;
        for p in &self.pastes {
            if p.end <= start || end <= p.start {
                continue;
            }
            out.push_str(self.buf.get(at..p.start).unwrap_or_default());
            out.push_str(&p.payload);
            at = p.end;
        }
        out.push_str(self.buf.get(at..end).unwrap_or_default());
        out
    }

    /// The length of [`Composer::text`].
    fn expanded_len(&self) -> usize {
        self.expanded_len_of(0, self.buf.len())
    }

    /// The expanded length of `start..end`, a range that does not cut a placeholder.
    fn expanded_len_of(&self, start: usize, end: usize) -> usize {
        self.pastes
            .iter()
            .filter(|p| start <= p.start && p.end <= end)
            .fold(end - start, |len, p| {
                len - (p.end - p.start) + p.payload.len()
            })
    }
}

/// [`Outcome::Changed`] if `changed`, else [`Outcome::Unchanged`].
fn changed(changed: bool) -> Outcome {
    if changed {
        Outcome::Changed
    } else {
        Outcome::Unchanged
    }
}

/// CR LF and lone CR become LF.
fn normalize_newlines(text: &str) -> String {
    if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text.to_owned()
    }
}
