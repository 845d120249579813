//! Where the cursor may stand and how it moves: grapheme and paste-fold boundaries, words
//! (and the shell's idea of a word for ctrl+w), line starts and ends.

use super::*;

impl Composer {
    /// The nearest position at or before `pos` where the cursor may be.
    pub(super) fn snap(&self, pos: usize) -> usize {
        let pos = self.buf.floor_char_boundary(pos.min(self.buf.len()));
        match self.pastes.iter().find(|p| p.start < pos && pos < p.end) {
            Some(p) => p.start,
            None => pos,
        }
    }

    /// The bytes around `pos` free of placeholders: from the end of the one before to the
    /// start of the one after.
    pub(super) fn segment(&self, pos: usize) -> (usize, usize) {
        let start = self
            .pastes
            .iter()
            .rev()
            .find(|p| p.end <= pos)
            .map_or(0, |p| p.end);
        let end = self
            .pastes
            .iter()
            .find(|p| p.start >= pos)
            .map_or(self.buf.len(), |p| p.start);
        (start, end.max(start))
    }

    /// The unit (grapheme or placeholder) ending at `pos`: its start and class.
    pub(super) fn prev_unit(&self, pos: usize) -> Option<(usize, Class)> {
        if pos == 0 {
            return None;
        }
        if let Some(p) = self.pastes.iter().find(|p| p.start < pos && pos <= p.end) {
            return Some((p.start, Class::Paste));
        }
        let (seg_start, _) = self.segment(pos);
        let grapheme = self.buf.get(seg_start..pos)?.graphemes(true).next_back()?;
        Some((pos - grapheme.len(), class_of(grapheme)))
    }

    /// The unit (grapheme or placeholder) starting at `pos`: its end and class.
    pub(super) fn next_unit(&self, pos: usize) -> Option<(usize, Class)> {
        if pos >= self.buf.len() {
            return None;
        }
        if let Some(p) = self.pastes.iter().find(|p| p.start <= pos && pos < p.end) {
            return Some((p.end, Class::Paste));
        }
        let (_, seg_end) = self.segment(pos);
        let grapheme = self.buf.get(pos..seg_end)?.graphemes(true).next()?;
        Some((pos + grapheme.len(), class_of(grapheme)))
    }

    pub(super) fn prev_boundary(&self, pos: usize) -> usize {
        self.prev_unit(pos).map_or(pos, |(start, _)| start)
    }

    pub(super) fn next_boundary(&self, pos: usize) -> usize {
        self.next_unit(pos).map_or(pos, |(end, _)| end)
    }

    /// The start of the word before `pos`: spaces skipped, then a run of word characters or
    /// of punctuation (a placeholder is a word by itself).
    pub(super) fn word_left(&self, mut pos: usize) -> usize {
        while let Some((start, Class::Space)) = self.prev_unit(pos) {
            pos = start;
        }
        if let Some((start, class)) = self.prev_unit(pos) {
            pos = start;
            if class != Class::Paste {
                while let Some((start, c)) = self.prev_unit(pos)
                    && c == class
                {
                    pos = start;
                }
            }
        }
        pos
    }

    /// The end of the word after `pos`, as [`Composer::word_left`] the other way.
    pub(super) fn word_right(&self, mut pos: usize) -> usize {
        while let Some((end, Class::Space)) = self.next_unit(pos) {
            pos = end;
        }
        if let Some((end, class)) = self.next_unit(pos) {
            pos = end;
            if class != Class::Paste {
                while let Some((end, c)) = self.next_unit(pos)
                    && c == class
                {
                    pos = end;
                }
            }
        }
        pos
    }

    /// The start of the whitespace-delimited word before `pos` (Ctrl-W).
    pub(super) fn unix_word_left(&self, mut pos: usize) -> usize {
        while let Some((start, Class::Space)) = self.prev_unit(pos) {
            pos = start;
        }
        while let Some((start, c)) = self.prev_unit(pos)
            && c != Class::Space
        {
            pos = start;
        }
        pos
    }

    pub(super) fn line_start(&self, pos: usize) -> usize {
        self.buf
            .get(..pos)
            .and_then(|before| before.rfind('\n'))
            .map_or(0, |i| i + 1)
    }

    pub(super) fn line_end(&self, pos: usize) -> usize {
        self.buf
            .get(pos..)
            .and_then(|after| after.find('\n'))
            .map_or(self.buf.len(), |i| pos + i)
    }
}

fn class_of(grapheme: &str) -> Class {
    match grapheme.chars().next() {
        Some(c) if c.is_whitespace() => Class::Space,
        Some(c) if c.is_alphanumeric() || c == '_' => Class::Word,
        _ => Class::Punct,
    }
}
