//! Word wrapping and hard wrapping of styled text by display width.
//!
//! Widths are measured per grapheme cluster with `unicode-width`, exactly as ratatui's buffer
//! measures them when it draws, so a line this module calls `w` columns wide takes `w` cells.
//! A grapheme cluster is never split. A cluster wider than the whole width (a wide CJK
//! character at width 1) is drawn as `…` so that no line is ever wider than asked.

use ratatui::style::Style;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Styled text of one line: `(text, style)` runs, the text already terminal-safe.
pub(super) type Pieces = Vec<(String, Style)>;

/// One line of wrapped output and its display width.
pub(super) type WrappedLine = (Pieces, usize);

/// Inline content of a block, before wrapping.
#[derive(Debug, Clone)]
pub(super) enum Inline {
    /// Terminal-safe text without newlines.
    Text(String, Style),
    /// A hard line break.
    Break,
}

/// Appends `text` to `pieces`, joining it to the last run when the style is the same.
pub(super) fn push_piece(pieces: &mut Pieces, text: &str, style: Style) {
    if text.is_empty() {
        return;
    }
    match pieces.last_mut() {
        Some((last, last_style)) if *last_style == style => last.push_str(text),
        _ => pieces.push((text.to_owned(), style)),
    }
}

/// Drops trailing spaces from the end of a line.
pub(super) fn trim_end(pieces: &mut Pieces) {
    while let Some((text, _)) = pieces.last_mut() {
        let kept = text.trim_end_matches(' ').len();
        text.truncate(kept);
        if text.is_empty() {
            pieces.pop();
        } else {
            break;
        }
    }
}

/// The display width of one grapheme cluster, and what to draw for it within `width`.
fn fit(grapheme: &str, width: usize) -> (&str, usize) {
    let w = UnicodeWidthStr::width(grapheme);
    if w > width { ("…", 1) } else { (grapheme, w) }
}

/// Calls `f` with each grapheme cluster of the text of `runs` joined, and the style of the
/// run the cluster starts in (a combining mark in a run of its own stays with its letter).
fn for_each_grapheme<'a>(
    runs: impl IntoIterator<Item = (&'a str, Style)>,
    mut f: impl FnMut(&str, Style),
) {
    let runs: Vec<(&str, Style)> = runs.into_iter().filter(|(t, _)| !t.is_empty()).collect();
    if let [(text, style)] = runs.as_slice() {
        for grapheme in text.graphemes(true) {
            f(grapheme, *style);
        }
        return;
    }
    let mut joined = String::new();
    let mut starts = Vec::with_capacity(runs.len());
    for (text, style) in &runs {
        starts.push((joined.len(), *style));
        joined.push_str(text);
    }
    let mut run = 0;
    for (at, grapheme) in joined.grapheme_indices(true) {
        while run + 1 < starts.len() && starts[run + 1].0 <= at {
            run += 1;
        }
        if let Some((_, style)) = starts.get(run) {
            f(grapheme, *style);
        }
    }
}

/// The text runs of `inlines` between hard breaks.
fn segments(inlines: &[Inline]) -> impl Iterator<Item = &[Inline]> {
    inlines.split(|inline| matches!(inline, Inline::Break))
}

fn runs(segment: &[Inline]) -> impl Iterator<Item = (&str, Style)> {
    segment.iter().filter_map(|inline| match inline {
        Inline::Text(text, style) => Some((text.as_str(), *style)),
        Inline::Break => None,
    })
}

/// The display width of `text`, summed per grapheme cluster.
pub(super) fn display_width(text: &str) -> usize {
    text.graphemes(true).map(UnicodeWidthStr::width).sum()
}

/// Word wrapping state: the line being filled, the spaces waiting before the next word and
/// the word being collected.
struct Wrapper {
    width: usize,
    lines: Vec<WrappedLine>,
    line: Pieces,
    line_w: usize,
    space: Pieces,
    space_w: usize,
    word: Pieces,
    word_w: usize,
}

impl Wrapper {
    fn new(width: usize) -> Self {
        Self {
            width: width.max(1),
            lines: Vec::new(),
            line: Vec::new(),
            line_w: 0,
            space: Vec::new(),
            space_w: 0,
            word: Vec::new(),
            word_w: 0,
        }
    }

    fn grapheme(&mut self, grapheme: &str, style: Style) {
        if grapheme == " " {
            self.commit();
            push_piece(&mut self.space, grapheme, style);
            self.space_w += 1;
            return;
        }
        let (grapheme, w) = fit(grapheme, self.width);
        if w >= 2 {
            // Wide (CJK) characters may break anywhere: each is a word of its own.
            self.commit();
            push_piece(&mut self.word, grapheme, style);
            self.word_w = w;
            self.commit();
        } else {
            push_piece(&mut self.word, grapheme, style);
            self.word_w += w;
        }
    }

    fn new_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        self.lines.push((line, self.line_w));
        self.line_w = 0;
    }

    fn drop_space(&mut self) {
        self.space.clear();
        self.space_w = 0;
    }

    fn take_space(&mut self) {
        for (text, style) in std::mem::take(&mut self.space) {
            push_piece(&mut self.line, &text, style);
        }
        self.line_w += self.space_w;
        self.space_w = 0;
    }

    /// Places the pending spaces and word on the current line or the next.
    fn commit(&mut self) {
        if self.word.is_empty() {
            return;
        }
        let word = std::mem::take(&mut self.word);
        let word_w = std::mem::replace(&mut self.word_w, 0);
        if self.line_w + self.space_w + word_w <= self.width {
            self.take_space();
        } else if word_w <= self.width {
            if !self.line.is_empty() {
                self.new_line();
            }
            self.drop_space();
        } else {
            // Longer than a whole line: start it here when there is room and break it.
            if self.line_w + self.space_w < self.width {
                self.take_space();
            } else {
                if !self.line.is_empty() {
                    self.new_line();
                }
                self.drop_space();
            }
            let mut graphemes = Vec::new();
            let runs = word.iter().map(|(text, style)| (text.as_str(), *style));
            for_each_grapheme(runs, |grapheme, style| {
                graphemes.push((grapheme.to_owned(), style));
            });
            for (grapheme, style) in graphemes {
                let (grapheme, w) = fit(&grapheme, self.width);
                if self.line_w + w > self.width && self.line_w > 0 {
                    self.new_line();
                }
                push_piece(&mut self.line, grapheme, style);
                self.line_w += w;
            }
            return;
        }
        for (text, style) in word {
            push_piece(&mut self.line, &text, style);
        }
        self.line_w += word_w;
    }

    fn hard_break(&mut self) {
        self.commit();
        self.drop_space();
        self.new_line();
    }

    fn finish(mut self) -> Vec<WrappedLine> {
        self.commit();
        if !self.line.is_empty() {
            self.new_line();
        }
        self.lines
    }
}

/// Word-wraps `inlines` to lines at most `width` columns wide. Spaces at a wrap point are
/// dropped; spaces at the start of the block or after a hard break are kept. A word longer
/// than the width is broken between grapheme clusters; wide characters may break anywhere.
pub(super) fn wrap(inlines: &[Inline], width: usize) -> Vec<WrappedLine> {
    let mut wrapper = Wrapper::new(width);
    for (i, segment) in segments(inlines).enumerate() {
        if i > 0 {
            wrapper.hard_break();
        }
        for_each_grapheme(runs(segment), |grapheme, style| {
            wrapper.grapheme(grapheme, style);
        });
    }
    wrapper.finish()
}

/// Cuts one line of code into lines at most `width` columns wide, keeping every space.
pub(super) fn hard_wrap(pieces: &[(String, Style)], width: usize) -> Vec<WrappedLine> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = Vec::new();
    let mut line_w = 0;
    let runs = pieces.iter().map(|(text, style)| (text.as_str(), *style));
    for_each_grapheme(runs, |grapheme, style| {
        let (grapheme, w) = fit(grapheme, width);
        if line_w + w > width {
            lines.push((std::mem::take(&mut line), line_w));
            line_w = 0;
        }
        push_piece(&mut line, grapheme, style);
        line_w += w;
    });
    lines.push((line, line_w));
    lines
}

/// The width `inlines` take on one line, and the width of their longest unbreakable word.
pub(super) fn measure(inlines: &[Inline]) -> (usize, usize) {
    let (mut widest, mut longest) = (0, 0);
    for segment in segments(inlines) {
        let (mut line, mut word) = (0, 0);
        for_each_grapheme(runs(segment), |grapheme, _| {
            let w = UnicodeWidthStr::width(grapheme);
            line += w;
            if grapheme == " " || w >= 2 {
                longest = longest.max(word).max(w);
                word = 0;
            } else {
                word += w;
            }
        });
        widest = widest.max(line);
        longest = longest.max(word);
    }
    (widest, longest)
}
