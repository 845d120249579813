//! Drawing a frame: the transcript, the message box, the footer's hints (fitted to the
//! width), the status line, and the picker and question overlays.

use super::*;

impl App {
    /// Draws the whole screen.
    pub fn render(&mut self, frame: &mut Frame<'_>) {
        let area = frame.area();
        let theme = self.theme;
        let composer_rows = self.composer.desired_height(area.width).clamp(
            1,
            COMPOSER_MAX_ROWS.min(area.height.saturating_sub(3).max(1)),
        );
        let chips = u16::from(!self.attachments.is_empty());
        let [body, chips_area, composer_area, footer, status] = Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(chips),
            Constraint::Length(composer_rows),
            Constraint::Length(1),
            Constraint::Length(1),
        ])
        .areas(area);
        let buf = frame.buffer_mut();
        self.transcript.render(body, buf, &theme);
        // A view of a call no longer asked about (answered, the turn stopped) is gone.
        if self.viewing.as_ref().map(|v| &v.call_id) != self.approval.as_ref() || self.redirecting {
            self.viewing = None;
        }
        if let Some(view) = self.viewing.as_mut() {
            view.render(body, buf, &theme);
        }
        if let Some((_, palette)) = &self.palette {
            let height = palette.height().min(body.height);
            let popup = Rect::new(body.x, body.bottom() - height, body.width, height);
            palette.render(popup, buf, &theme);
        }
        if let Some(picker) = &self.picker {
            render_picker(picker, body, buf, &theme);
        }
        if let Some((title, details)) = &self.confirm {
            render_confirm(title, details, body, buf, &theme);
        }
        if chips > 0 {
            let text: Vec<String> = self
                .attachments
                .iter()
                .map(|a| {
                    let reading = if a.reading { " · reading" } else { "" };
                    format!("[resource: {}{reading}]", terminal_safe(&a.uri))
                })
                .collect();
            let line = Line::from(vec![
                Span::styled(text.join(" "), theme.style(Role::Accent)),
                Span::styled(
                    "  backspace on an empty line removes · esc removes all",
                    theme.style(Role::Dim),
                ),
            ]);
            buf.set_line(chips_area.x, chips_area.y, &line, chips_area.width);
        }
        let cursor = self.composer.render(composer_area, buf, &theme);
        buf.set_line(
            footer.x,
            footer.y,
            &self.footer_line(footer.width),
            footer.width,
        );
        buf.set_line(
            status.x,
            status.y,
            &self.status_line(status.width),
            status.width,
        );
        let busy = self.approval.is_some() && !self.redirecting
            || self
                .transcript
                .cells()
                .any(|c| matches!(c, Cell::Tool(card) if card.question.is_some()));
        if let Some(cursor) =
            cursor.filter(|_| !busy && self.picker.is_none() && self.confirm.is_none())
        {
            frame.set_cursor_position(cursor);
        }
    }

    fn form_open(&self) -> bool {
        self.transcript
            .cells()
            .any(|c| matches!(c, Cell::Tool(card) if card.question.is_some()))
    }

    fn footer_line(&self, width: u16) -> Line<'static> {
        let theme = &self.theme;
        let hint = match self.armed {
            Some(Armed::Quit(_)) => "ctrl+c again to quit".to_owned(),
            Some(Armed::Stop(_)) => "esc again to stop the turn".to_owned(),
            None if self.confirm.is_some() => "answer the question above: y or n".to_owned(),
            None if self.waiting_message.is_some() => {
                "the message goes once its attachments are read · backspace drops one".to_owned()
            }
            None if self.redirecting => {
                "type what the model should do instead · enter sends · esc back".to_owned()
            }
            None if self.viewing.is_some() => {
                "↑/↓ pgup/pgdn home/end scroll · q or esc back to the question".to_owned()
            }
            None if self.approval.is_some() => {
                "answer on the card · v all arguments · pgup/pgdn scroll · ctrl+c stops the turn"
                    .to_owned()
            }
            None if self.form_open() => {
                "a server asks: answer on the card · pgup/pgdn scroll · ctrl+c stops the turn"
                    .to_owned()
            }
            None if matches!(self.palette, Some((TokenKind::Word, _))) => {
                "↑/↓ choose · tab takes a suggestion · enter sends · esc close".to_owned()
            }
            None if self.palette.is_some() => self.palette_hint(),
            None if self.running => format!(
                "{} · enter steers · esc esc stops",
                match self.loop_state {
                    LoopState::Thinking => "thinking",
                    LoopState::ExecutingTool => "running tools",
                    LoopState::AwaitingApproval => "waiting for approval",
                    LoopState::Idle => "working",
                }
            ),
            None => "enter send · ctrl+j newline · / commands · @ resources · pgup/pgdn scroll"
                .to_owned(),
        };
        Line::from(Span::styled(
            format!(" {}", fit_hint(&hint, usize::from(width).saturating_sub(1))),
            theme.style(Role::Dim),
        ))
    }

    /// What the keys of the open palette do, for its selected row.
    fn palette_hint(&self) -> String {
        match &self.palette {
            Some((kind, palette)) => match palette.selected() {
                Some(entry) => format!(
                    "↑/↓ choose · enter {} · tab {} · esc close",
                    Take::of(*kind, entry, true).hint(),
                    Take::of(*kind, entry, false).hint()
                ),
                None => "no match · esc close".to_owned(),
            },
            None => String::new(),
        }
    }

    fn status_line(&self, width: u16) -> Line<'static> {
        let mut parts = Vec::new();
        match &self.state {
            Some(state) => {
                parts.push(
                    match (&state.model, &state.provider, state.provider_source) {
                        // rho's default is a guess, not the user's choice: the line says so.
                        (Some(model), Some(provider), Some(ProviderSource::Builtin)) => {
                            format!("no model configured (trying {model} · {provider})")
                        }
                        (Some(model), Some(provider), _) => format!("{model} · {provider}"),
                        _ => "no model".to_owned(),
                    },
                );
                parts.push(short_path(&state.cwd));
            }
            None => parts.push("starting…".to_owned()),
        }
        if let Some(context) = &self.context {
            match context.percent {
                Some(percent) => parts.push(format!("context {percent:.0}%")),
                None => parts.push(format!(
                    "context {}",
                    crate::reports::tokens(context.tokens)
                )),
            }
        }
        if self.tokens > 0 {
            let mut used = format!("{} tokens", crate::reports::tokens(self.tokens));
            if self.cost > 0.0 {
                used.push_str(&format!(" · ${:.2}", self.cost));
            }
            parts.push(used);
        }
        let (up, failed) = self.servers;
        if up + failed > 0 {
            let mut servers = format!("mcp {up} up");
            if failed > 0 {
                servers.push_str(&format!(" {failed} failed"));
            }
            parts.push(servers);
        }
        if !self.transcript.follows() {
            parts.push("scrolled · ctrl+end".to_owned());
        }
        let mut text = format!(" {}", terminal_safe(&parts.join("  │  ")));
        let pad = usize::from(width).saturating_sub(width_of(&text));
        text.push_str(&" ".repeat(pad));
        Line::from(Span::styled(text, self.theme.style(Role::Status)))
    }
}

/// `hint` (parts joined by ` · `) in `width` columns: whole parts from the start while they
/// fit, so a narrow window loses the last parts rather than cutting one mid-word; a first part
/// wider than the window is cut at a word with `…`.
fn fit_hint(hint: &str, width: usize) -> String {
    let mut fitted = String::new();
    for part in hint.split(" · ") {
        let candidate = if fitted.is_empty() {
            part.to_owned()
        } else {
            format!("{fitted} · {part}")
        };
        if width_of(&candidate) > width {
            break;
        }
        fitted = candidate;
    }
    if fitted.is_empty() {
        let mut words = String::new();
        for word in hint.split(' ') {
            let candidate = if words.is_empty() {
                word.to_owned()
            } else {
                format!("{words} {word}")
            };
            if width_of(&candidate) + 1 > width {
                break;
            }
            words = candidate;
        }
        if !words.is_empty() {
            fitted = format!("{words}…");
        }
    }
    fitted
}

fn render_picker(picker: &Picker, body: Rect, buf: &mut ratatui::buffer::Buffer, theme: &Theme) {
    let rows = picker
        .sessions
        .len()
        .min(usize::from(body.height.saturating_sub(1)))
        .max(1);
    let height = u16::try_from(rows + 1)
        .unwrap_or(body.height)
        .min(body.height);
    let area = Rect::new(body.x, body.bottom() - height, body.width, height);
    ratatui::widgets::Widget::render(ratatui::widgets::Clear, area, buf);
    buf.set_line(
        area.x,
        area.y,
        &Line::from(Span::styled(
            " resume a session · ↑/↓ · enter · esc",
            theme.style(Role::Accent),
        )),
        area.width,
    );
    let first = picker.selected.saturating_sub(rows.saturating_sub(1));
    for (row, (i, session)) in picker
        .sessions
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .enumerate()
    {
        let marker = if i == picker.selected { "› " } else { "  " };
        let prompt = session.first_prompt.as_deref().unwrap_or("(no prompt)");
        let line = Line::from(vec![
            Span::styled(marker, theme.style(Role::Accent)),
            Span::styled(
                format!(
                    "{}  {:>5} messages  ",
                    day(session.modified),
                    session.messages
                ),
                theme.style(Role::Dim),
            ),
            Span::styled(terminal_safe(prompt), theme.style(Role::Text)),
        ]);
        let y = area.y + 1 + u16::try_from(row).unwrap_or(0);
        buf.set_line(area.x, y, &line, area.width);
    }
}

fn render_confirm(
    title: &str,
    details: &[String],
    body: Rect,
    buf: &mut ratatui::buffer::Buffer,
    theme: &Theme,
) {
    let width = body.width.saturating_sub(4).max(1);
    let mut lines = vec![Line::from(Span::styled(
        format!(" {}", terminal_safe(title)),
        theme.style(Role::Warning),
    ))];
    for detail in details {
        for row in crate::text::wrap_hanging(detail, width) {
            lines.push(Line::from(Span::styled(
                format!("   {row}"),
                theme.style(Role::Text),
            )));
        }
    }
    lines.push(Line::from(Span::styled(
        " y yes · n or esc no",
        theme.style(Role::Accent),
    )));
    let height = u16::try_from(lines.len())
        .unwrap_or(body.height)
        .min(body.height);
    let area = Rect::new(body.x, body.bottom() - height, body.width, height);
    ratatui::widgets::Widget::render(ratatui::widgets::Clear, area, buf);
    let skip = lines.len().saturating_sub(usize::from(height));
    for (row, line) in lines.iter().skip(skip).enumerate() {
        let y = area.y + u16::try_from(row).unwrap_or(0);
        buf.set_line(area.x, y, line, area.width);
    }
}
