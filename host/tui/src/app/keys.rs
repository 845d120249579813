//! What keys do, in precedence: a question on screen, a server's form on a card, a pending
//! approval (or the view of its arguments), a picker, an open palette, then the global keys,
//! then the message box.

use super::*;

impl App {
    /// Applies a pasted text (bracketed paste).
    pub fn on_paste(&mut self, text: &str) {
        if self.composer.paste(text) {
            self.update_palette();
        } else {
            self.error("the paste is too large for the message box (1 MiB at most)");
        }
    }

    /// Applies one key.
    pub fn on_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        if self.confirm_key(key) {
            return;
        }
        if self.form_key(key) || self.approval_key(key) || self.picker_key(key) {
            return;
        }
        if self.palette_key(key) || self.global_key(key) {
            return;
        }
        match self.composer.handle_key(key) {
            Outcome::Submitted(text) => self.submit(text),
            Outcome::Changed => {
                self.armed = None;
                self.update_palette();
            }
            Outcome::Unchanged | Outcome::Ignored => {}
        }
    }

    fn confirm_key(&mut self, key: KeyEvent) -> bool {
        if self.confirm.is_none() {
            return false;
        }
        let answer = match key.code {
            KeyCode::Char('y') => Some(true),
            KeyCode::Char('n') | KeyCode::Esc => Some(false),
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.quit = true;
                Some(false)
            }
            _ => None,
        };
        if let Some(answer) = answer {
            if let Some((title, _)) = self.confirm.take() {
                let said = if answer { "yes" } else { "no" };
                self.notice(format!("{title} {said}"));
            }
            self.confirm_answer = Some(answer);
        }
        true
    }

    /// Keys that work whatever is asked: scrolling, and ctrl+c to stop the turn.
    fn passes_through(key: &KeyEvent) -> bool {
        matches!(key.code, KeyCode::PageUp | KeyCode::PageDown)
            || (key.code == KeyCode::End && key.modifiers.contains(KeyModifiers::CONTROL))
            || (key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL))
    }

    fn form_key(&mut self, key: KeyEvent) -> bool {
        if Self::passes_through(&key) {
            return false;
        }
        let mut answer = None;
        let card = self.transcript.card_mut(|c| c.question.is_some());
        let Some(card) = card else { return false };
        let Some(form) = card.question.as_mut() else {
            return false;
        };
        match form.key(key) {
            FormOutcome::Editing => {}
            FormOutcome::Accept(values) => {
                answer = Some((form.request.id, QuestionAnswer::Accept(values)))
            }
            FormOutcome::Decline => answer = Some((form.request.id, QuestionAnswer::Decline)),
            FormOutcome::Cancel => answer = Some((form.request.id, QuestionAnswer::Cancel)),
        }
        if let Some((question, answer)) = answer {
            card.question = None;
            self.send(
                Operation::AnswerQuestion { question, answer },
                Purpose::Quiet,
            );
        }
        true
    }

    fn approval_key(&mut self, key: KeyEvent) -> bool {
        let Some(call_id) = self.approval.clone() else {
            return false;
        };
        if self.redirecting {
            match key.code {
                KeyCode::Esc => {
                    self.redirecting = false;
                    return true;
                }
                _ => return false,
            }
        }
        // The whole arguments: the view takes every key but ctrl+c (which still stops the
        // turn). The question is answered on the card, where it can be read: `y` and `n` do
        // nothing here.
        if let Some(view) = self.viewing.as_mut() {
            if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
                return false;
            }
            if view.key(key) == ViewKey::Close {
                self.viewing = None;
            }
            return true;
        }
        if Self::passes_through(&key) {
            return false;
        }
        let decision = match key.code {
            KeyCode::Char('v') => {
                let card = self.transcript.cells().find_map(|c| match c {
                    Cell::Tool(card) if card.call_id == call_id => Some(card),
                    _ => None,
                });
                if let Some(card) = card {
                    self.viewing = Some(ArgumentsView::new(
                        &card.call_id,
                        &card.label,
                        &card.arguments,
                    ));
                }
                None
            }
            KeyCode::Char('y') => Some(ApprovalDecision::Approve),
            KeyCode::Char('a') => Some(ApprovalDecision::ApproveForSession),
            KeyCode::Char('n') | KeyCode::Esc => Some(ApprovalDecision::Deny),
            KeyCode::Char('r') => {
                self.redirecting = true;
                None
            }
            _ => None,
        };
        if let Some(decision) = decision {
            self.decide(&call_id, decision);
        }
        true
    }

    pub(super) fn decide(&mut self, call_id: &str, decision: ApprovalDecision) {
        if let Some(card) = self.transcript.card_mut(|c| c.call_id == call_id) {
            if matches!(decision, ApprovalDecision::Redirect(_)) {
                self.redirected = true;
            }
            card.state = match decision {
                ApprovalDecision::Deny => CardState::Denied,
                ApprovalDecision::Redirect(_) => CardState::Redirected,
                _ => CardState::Running { progress: None },
            };
        }
        self.approval = None;
        self.viewing = None;
        self.redirecting = false;
        self.send(Operation::AnswerApproval(decision), Purpose::Quiet);
    }

    fn picker_key(&mut self, key: KeyEvent) -> bool {
        let Some(picker) = self.picker.as_mut() else {
            return false;
        };
        match key.code {
            KeyCode::Up => picker.selected = picker.selected.saturating_sub(1),
            KeyCode::Down => {
                picker.selected =
                    (picker.selected + 1).min(picker.sessions.len().saturating_sub(1));
            }
            KeyCode::Esc => self.picker = None,
            KeyCode::Enter => {
                let path = picker.sessions.get(picker.selected).map(|s| s.path.clone());
                self.picker = None;
                if let Some(path) = path {
                    self.send(Operation::ResumeSession(path), Purpose::Session);
                }
            }
            _ => {}
        }
        true
    }

    fn palette_key(&mut self, key: KeyEvent) -> bool {
        let Some((kind, palette)) = self.palette.as_mut() else {
            return false;
        };
        match key.code {
            KeyCode::Up => palette.move_selection(false),
            KeyCode::Down => palette.move_selection(true),
            KeyCode::Esc => self.palette = None,
            // Suggestions for an argument are taken with Tab; Enter still sends the message.
            KeyCode::Enter if *kind == TokenKind::Word => {
                self.palette = None;
                return false;
            }
            KeyCode::Tab | KeyCode::Enter => {
                let kind = *kind;
                let Some(entry) = palette.selected().cloned() else {
                    self.palette = None;
                    return key.code == KeyCode::Tab;
                };
                self.palette = None;
                self.accept_entry(kind, &entry, key.code == KeyCode::Enter);
            }
            _ => return false,
        }
        true
    }

    fn global_key(&mut self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let now = Instant::now();
        let armed = self.armed.take();
        match key.code {
            KeyCode::Char('c') if ctrl => {
                if !self.composer.is_empty() {
                    let draft = self.composer.take();
                    drop(draft);
                } else if self.running {
                    self.send(Operation::Abort, Purpose::Quiet);
                } else if matches!(armed, Some(Armed::Quit(at)) if now - at < SECOND_PRESS) {
                    self.quit = true;
                } else {
                    self.armed = Some(Armed::Quit(now));
                }
            }
            KeyCode::Char('d') if ctrl && self.composer.is_empty() => self.quit = true,
            KeyCode::Esc if self.running => {
                if matches!(armed, Some(Armed::Stop(at)) if now - at < SECOND_PRESS) {
                    self.send(Operation::Abort, Purpose::Quiet);
                } else {
                    self.armed = Some(Armed::Stop(now));
                }
            }
            KeyCode::Esc if !self.attachments.is_empty() => {
                self.attachments.clear();
                self.send_waiting_message();
            }
            KeyCode::PageUp => {
                let page = self.transcript.page();
                self.transcript.scroll_up(page, &self.theme);
            }
            KeyCode::PageDown => {
                let page = self.transcript.page();
                self.transcript.scroll_down(page, &self.theme);
            }
            KeyCode::End if ctrl => self.transcript.scroll_to_bottom(),
            KeyCode::Char('o') if ctrl => {
                let expand = self
                    .transcript
                    .cells()
                    .any(|c| matches!(c, Cell::Tool(card) if !card.expanded));
                self.transcript.update_cards(|card| {
                    let changed = card.expanded != expand;
                    card.expanded = expand;
                    changed
                });
            }
            KeyCode::Char('r') if ctrl => {
                self.transcript.for_each_mut(|cell| {
                    if let Cell::Reasoning { expanded, .. } = cell {
                        *expanded = !*expanded;
                    }
                });
            }
            KeyCode::Backspace if self.composer.is_empty() && !self.attachments.is_empty() => {
                self.attachments.pop();
                self.send_waiting_message();
            }
            _ => {
                self.armed = armed;
                return false;
            }
        }
        true
    }
}
