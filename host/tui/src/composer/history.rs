//! The message box's history: what was sent, walked with up and down (the text being written
//! kept and given back), with folded pastes remembered.

use super::*;

impl Composer {
    /// Shows the next older history entry; false when there is none.
    pub(super) fn history_older(&mut self) -> bool {
        let Some(newest) = self.history.len().checked_sub(1) else {
            return false;
        };
        let index = match &self.browse {
            None => {
                let draft = self.snapshot();
                self.browse = Some(Browse {
                    index: newest,
                    draft,
                });
                newest
            }
            Some(browse) if browse.index == 0 => return false,
            Some(browse) => {
                let from = browse.index;
                self.remember(from);
                (from - 1).min(newest)
            }
        };
        if let Some(browse) = &mut self.browse {
            browse.index = index;
        }
        self.load_history(index, false);
        true
    }

    /// Shows the next newer history entry, or the draft past the newest; false when not
    /// browsing.
    pub(super) fn history_newer(&mut self) -> bool {
        let Some(from) = self.browse.as_ref().map(|browse| browse.index) else {
            return false;
        };
        self.remember(from);
        if from + 1 >= self.history.len() {
            if let Some(browse) = self.browse.take() {
                self.restore(browse.draft);
            }
            return true;
        }
        if let Some(browse) = &mut self.browse {
            browse.index = from + 1;
        }
        self.load_history(from + 1, true);
        true
    }

    /// Keeps what history entry `index` has become, if it was edited.
    fn remember(&mut self, index: usize) {
        let unedited = match self.history.get(index) {
            Some(Entry {
                folded: Some(folded),
                ..
            }) => folded.buf == self.buf && folded.pastes == self.pastes,
            Some(entry) => entry.text == self.buf && self.pastes.is_empty(),
            None => false,
        };
        if unedited {
            self.edits.remove(&index);
        } else {
            let current = self.snapshot();
            self.edits.insert(index, current);
        }
    }

    /// Shows history entry `index` (or its edit in this walk): the cursor at the end of its
    /// first line going back (so Up again goes further back), at its end going forward.
    fn load_history(&mut self, index: usize, at_end: bool) {
        if let Some(snapshot) = self.edits.remove(&index) {
            self.restore(snapshot);
            return;
        }
        match self.history.get(index) {
            Some(Entry {
                folded: Some(folded),
                ..
            }) => {
                let folded = folded.clone();
                self.restore(folded);
                self.cursor = self.buf.len();
            }
            Some(entry) => {
                let text = entry.text.clone();
                self.replace_all(&text);
            }
            None => self.replace_all(""),
        }
        if !at_end {
            self.cursor = self.line_end(0);
        }
    }

    pub(super) fn snapshot(&self) -> Snapshot {
        Snapshot {
            buf: self.buf.clone(),
            pastes: self.pastes.clone(),
            cursor: self.cursor,
        }
    }

    fn restore(&mut self, snapshot: Snapshot) {
        self.touch();
        self.buf = snapshot.buf;
        self.pastes = snapshot.pastes;
        self.cursor = self.snap(snapshot.cursor);
        self.goal_col = None;
    }

    /// Appends `text` to the history (newest last), unless it is blank or repeats the newest
    /// entry; beyond [`HISTORY_LIMIT`] entries the oldest go.
    pub fn push_history(&mut self, text: String) {
        self.push_entry(normalize_newlines(&text), None);
    }

    pub(super) fn push_entry(&mut self, text: String, folded: Option<Snapshot>) {
        let repeat = self.history.last().is_some_and(|last| last.text == text);
        if text.trim().is_empty() || repeat {
            return;
        }
        self.history.push(Entry { text, folded });
        let excess = self.history.len().saturating_sub(HISTORY_LIMIT);
        if excess > 0 {
            self.history.drain(..excess);
            if let Some(browse) = &mut self.browse {
                browse.index = browse.index.saturating_sub(excess);
            }
            self.edits = std::mem::take(&mut self.edits)
                .into_iter()
                .filter_map(|(index, edit)| Some((index.checked_sub(excess)?, edit)))
                .collect();
        }
    }
}
