//! One tool call as the conversation shows it: the tool and where it comes from, its
//! arguments, its state ([`CardState`]: waiting, asking for approval, running with progress,
//! finished, refused), its result (folded past [`FOLDED_RESULT_LINES`] lines), and a server's
//! question about it ([`FormView`]), drawn on the card that caused it.

use ratatui::text::{Line, Span};
use rho_component::{
    FieldKind, FormField, RiskLevel, ToolOrigin, ToolSpec, server_hint, server_hints, terminal_safe,
};
use rho_core::session::{CallOutcome, QuestionKind, QuestionRequest};

use crate::arguments::{APPROVAL_ROWS, CARD_ROWS, argument_lines, preview};
use crate::images::{CardImage, ImageState};
use crate::text::wrap_plain;
use crate::theme::{Role, Theme};

/// Result lines shown before a result is folded.
pub const FOLDED_RESULT_LINES: usize = 6;
/// Rows of each message a sampling question shows.
const SAMPLING_ROWS: usize = 4;

/// Where a call is.
#[derive(Debug, Clone, PartialEq)]
pub enum CardState {
    /// The model asked for it; nothing decided yet.
    Requested,
    /// The user is asked to approve it.
    AwaitingApproval {
        /// The tool's risk level.
        risk: RiskLevel,
    },
    /// Running; the latest progress report, if any.
    Running {
        /// How far along, the total when known, and the message.
        progress: Option<(f64, Option<f64>, Option<String>)>,
    },
    /// Finished.
    Done {
        /// Whether it failed.
        is_error: bool,
        /// What the model reads.
        output: String,
    },
    /// Refused by the mode or the user.
    Denied,
    /// The user redirected the model instead.
    Redirected,
    /// Stopped with the turn: before it ran (no output), or while it ran (what it said).
    Cancelled {
        /// The output of a call stopped while it ran.
        output: Option<String>,
    },
}

impl CardState {
    /// How a call that `outcome` describes ended, with `output`, what the model read of it.
    /// The one mapping from the session's outcomes to cards: live results and a resumed
    /// session's history both go through it, so a call looks the same either way.
    pub fn ended(outcome: &CallOutcome, output: String) -> Self {
        match outcome {
            CallOutcome::Success => Self::Done {
                is_error: false,
                output,
            },
            CallOutcome::Error { .. } => Self::Done {
                is_error: true,
                output,
            },
            CallOutcome::Denied => Self::Denied,
            CallOutcome::Redirected => Self::Redirected,
            CallOutcome::Cancelled => Self::Cancelled {
                output: Some(output),
            },
        }
    }
}

/// What a card says about what a call may change: the one wording of the title's label and
/// the approval question, so the two cannot disagree. rho's own level is the only level stated
/// as a fact. An MCP tool is `destructive` to the gate whatever its server says, because rho
/// cannot see what a server does; its card states no level and says instead what the server
/// claims, marked unverified where the claim would make it safer (`docs/mcp.md`, "Tools").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effects {
    /// A tool rho knows (built-in, WASM, or not in the tool list): its level, when known.
    Known(Option<RiskLevel>),
    /// An MCP tool: what its server says of it.
    Claimed(Claim),
}

/// What a server's annotations say a tool changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// `readOnlyHint: true`.
    ReadOnly,
    /// `destructiveHint: true`.
    Destructive,
    /// `destructiveHint: false`.
    NotDestructive,
    /// Neither.
    Silent,
}

impl Effects {
    /// What the card of a tool with `spec` says.
    pub fn of(spec: Option<&ToolSpec>) -> Self {
        let Some(spec) = spec else {
            return Self::Known(None);
        };
        if !matches!(spec.origin, ToolOrigin::Mcp { .. }) {
            return Self::Known(Some(spec.risk));
        }
        let hint = |key| server_hint(&spec.description, key);
        Self::Claimed(match (hint("readOnlyHint"), hint("destructiveHint")) {
            (Some(true), _) => Claim::ReadOnly,
            (_, Some(true)) => Claim::Destructive,
            (_, Some(false)) => Claim::NotDestructive,
            _ => Claim::Silent,
        })
    }

    /// The title's label: `read-only` for a tool rho knows only reads.
    pub fn label(self) -> Option<&'static str> {
        match self {
            Self::Known(Some(RiskLevel::Read)) => Some("read-only"),
            _ => None,
        }
    }

    /// The approval question, for a call the gate asks about at level `asked`.
    pub fn question(self, asked: RiskLevel) -> String {
        let claim = match self {
            Self::Known(_) => {
                let level = match asked {
                    RiskLevel::Read => "read-only",
                    other => other.as_str(),
                };
                return format!("Allow this {level} call?");
            }
            Self::Claimed(claim) => claim,
        };
        let said = match claim {
            Claim::ReadOnly => "The server says this tool only reads (unverified).",
            Claim::Destructive => "The server says this tool may be destructive.",
            Claim::NotDestructive => {
                "The server says this tool changes things but destroys nothing (unverified)."
            }
            Claim::Silent => "The server does not say what this tool changes.",
        };
        format!("{said} Allow this call?")
    }
}

/// A tool call on screen.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCard {
    /// The model's id for the call.
    pub call_id: String,
    /// The exported tool name.
    pub name: String,
    /// What the card's title names: the tool's display name (`server › tool`,
    /// `plugin › tool` or the built-in name: `ToolSpec::display_name`), or the exported name
    /// of a tool the session does not have.
    pub label: String,
    /// The exported name, shown dimmed after the label when it differs from it (MCP and
    /// plugin WASM tools: `ToolSpec::exported_beside`).
    pub exported: Option<String>,
    /// What the card says the call may change.
    pub effects: Effects,
    /// What the tool's server says of it (its annotations), shown as notices.
    pub hints: Vec<String>,
    /// The arguments as the model wrote them.
    pub arguments: String,
    /// Where it is.
    pub state: CardState,
    /// The result is shown whole.
    pub expanded: bool,
    /// A server's question about this call, while it waits for the answer.
    pub question: Option<FormView>,
    /// The result's image, when the terminal draws images and the result had one.
    pub image: Option<ImageState>,
    /// Made for a permission prompt about a call the session never showed (a Claude
    /// subagent's): no result will come, so an approved one ends as approved with the turn.
    pub unshown: bool,
}

impl ToolCard {
    /// A card for a call the model just asked for; `spec` is the tool's, when it is known.
    pub fn new(call_id: &str, name: &str, arguments: &str, spec: Option<&ToolSpec>) -> Self {
        Self {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            label: spec.map_or_else(|| name.to_owned(), ToolSpec::display_name),
            exported: spec.and_then(ToolSpec::exported_beside).map(str::to_owned),
            effects: Effects::of(spec),
            hints: spec
                .map(|s| server_hints(&s.description).map(str::to_owned).collect())
                .unwrap_or_default(),
            arguments: arguments.to_owned(),
            state: CardState::Requested,
            expanded: false,
            question: None,
            image: None,
            unshown: false,
        }
    }

    /// Whether the call is over (nothing more will change but folding).
    pub fn is_finished(&self) -> bool {
        matches!(
            self.state,
            CardState::Done { .. }
                | CardState::Denied
                | CardState::Redirected
                | CardState::Cancelled { .. }
        )
    }

    /// The image drawn in the card's last rows at `width`: a ready image that fits, on a
    /// finished card with no question.
    pub fn image_slot(&self, width: u16) -> Option<&CardImage> {
        match (&self.state, &self.image, &self.question) {
            (CardState::Done { .. }, Some(ImageState::Ready(image)), None)
                if image.size().width.saturating_add(IMAGE_INDENT) <= width =>
            {
                Some(image)
            }
            _ => None,
        }
    }

    /// The card's lines at `width`.
    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let inner = width.saturating_sub(4).max(1);
        let (icon, icon_role) = match &self.state {
            CardState::Requested => ("◦", Role::Dim),
            CardState::AwaitingApproval { .. } => ("?", Role::Warning),
            CardState::Running { .. } => ("⋯", Role::Accent),
            CardState::Done {
                is_error: false, ..
            } => ("✓", Role::Success),
            CardState::Done { is_error: true, .. } => ("✗", Role::Error),
            CardState::Denied | CardState::Cancelled { .. } => ("⊘", Role::Warning),
            CardState::Redirected => ("↪", Role::Warning),
        };
        let mut title = vec![
            Span::styled(format!("{icon} "), theme.style(icon_role)),
            Span::styled(terminal_safe(&self.label), theme.style(Role::Accent)),
        ];
        if let Some(label) = self.effects.label() {
            title.push(Span::styled(format!("  {label}"), theme.style(Role::Dim)));
        }
        let status = match &self.state {
            CardState::Denied => Some("denied"),
            CardState::Redirected => Some("redirected"),
            CardState::Cancelled { .. } => Some("cancelled"),
            _ => None,
        };
        if let Some(status) = status {
            title.push(Span::styled(
                format!("  {status}"),
                theme.style(Role::Warning),
            ));
        }
        // Last, so a narrow terminal clips the name the model calls before the call's state.
        if let Some(exported) = &self.exported {
            title.push(Span::styled(
                format!("  {}", terminal_safe(exported)),
                theme.style(Role::Dim),
            ));
        }
        let mut lines = vec![Line::from(title)];
        // The result hangs off the card with `└`; arguments and progress are indented.
        let body = |text: &str,
                    role: Role,
                    limit: Option<usize>,
                    first: &'static str,
                    lines: &mut Vec<Line<'static>>| {
            let wrapped = wrap_plain(text, inner);
            let shown = limit.unwrap_or(usize::MAX).min(wrapped.len());
            for (i, row) in wrapped.iter().take(shown).enumerate() {
                let gutter = if i == 0 { first } else { "    " };
                lines.push(Line::from(vec![
                    Span::styled(gutter, theme.style(Role::Dim)),
                    Span::styled(row.clone(), theme.style(role)),
                ]));
            }
            wrapped.len() - shown
        };
        // The server's own words about the tool: notices, never a permission.
        if !self.is_finished() {
            for hint in &self.hints {
                body(
                    &format!("server says: {hint}"),
                    Role::Dim,
                    Some(1),
                    "    ",
                    &mut lines,
                );
            }
        }
        // The start of the arguments, with what is left out counted: while the call waits
        // for approval, `v` shows the rest.
        let awaiting = matches!(self.state, CardState::AwaitingApproval { .. });
        let budget = match (awaiting, self.expanded) {
            (true, _) => Some(APPROVAL_ROWS),
            (false, true) => None,
            (false, false) => Some(CARD_ROWS),
        };
        let shown = preview(&argument_lines(&self.arguments), inner, budget);
        for (row, role) in &shown.rows {
            lines.push(Line::from(vec![
                Span::raw("    "),
                Span::styled(row.clone(), theme.style(*role)),
            ]));
        }
        let how = if awaiting {
            "v to view all"
        } else {
            "ctrl+o expands"
        };
        if let Some(hidden) = shown.hidden_line(how) {
            lines.push(Line::from(vec![
                Span::raw("    "),
                Span::styled(hidden, theme.style(Role::Warning)),
            ]));
        }
        match &self.state {
            CardState::AwaitingApproval { risk } => {
                for row in wrap_plain(&self.effects.question(*risk), inner) {
                    lines.push(Line::from(vec![
                        Span::raw("    "),
                        Span::styled(row, theme.style(Role::Warning)),
                    ]));
                }
                lines.push(Line::from(vec![
                    Span::raw("    "),
                    Span::styled(
                        "y run once · a for this session · n or esc deny · r redirect",
                        theme.style(Role::Accent),
                    ),
                ]));
            }
            CardState::Running { progress } => {
                let text = match progress {
                    Some((done, total, message)) => {
                        progress_text(*done, *total, message.as_deref())
                    }
                    None => "running…".to_owned(),
                };
                body(&text, Role::Dim, Some(2), "    ", &mut lines);
            }
            CardState::Cancelled {
                output: Some(output),
            } => {
                let limit = (!self.expanded).then_some(FOLDED_RESULT_LINES);
                let hidden = body(output, Role::Dim, limit, "  └ ", &mut lines);
                if hidden > 0 {
                    lines.push(fold_line(hidden, "result", theme));
                }
            }
            CardState::Done { is_error, output } => {
                let role = if *is_error { Role::Error } else { Role::Text };
                let limit = (!self.expanded).then_some(FOLDED_RESULT_LINES);
                let text = if output.trim().is_empty() {
                    "(no output)"
                } else {
                    output.as_str()
                };
                let hidden = body(text, role, limit, "  └ ", &mut lines);
                if hidden > 0 {
                    lines.push(fold_line(hidden, "result", theme));
                }
                match &self.image {
                    Some(ImageState::Drawing) => {
                        body("drawing the image…", Role::Dim, None, "    ", &mut lines);
                    }
                    Some(ImageState::Failed(reason)) => {
                        let text = format!("image not drawn: {reason}");
                        body(&text, Role::Dim, Some(2), "    ", &mut lines);
                    }
                    Some(ImageState::Ready(_)) | None => {}
                }
                if let Some(image) = self.image_slot(width) {
                    lines.extend((0..image.size().height).map(|_| Line::default()));
                }
            }
            _ => {}
        }
        if let Some(question) = &self.question {
            lines.extend(question.lines(inner, theme));
        }
        lines
    }
}

/// Columns between a card's left edge and its image.
pub const IMAGE_INDENT: u16 = 4;

fn fold_line(hidden: usize, what: &str, theme: &Theme) -> Line<'static> {
    let s = if hidden == 1 { "" } else { "s" };
    Line::from(vec![
        Span::raw("    "),
        Span::styled(
            format!("… {hidden} more {what} line{s} · ctrl+o expands"),
            theme.style(Role::Dim),
        ),
    ])
}

fn progress_text(done: f64, total: Option<f64>, message: Option<&str>) -> String {
    let mut text = match total {
        Some(total) if total > 0.0 => {
            let fraction = (done / total).clamp(0.0, 1.0);
            let filled = (fraction * 10.0).round() as usize;
            format!(
                "[{}{}] {:.0}%",
                "█".repeat(filled),
                "·".repeat(10 - filled),
                fraction * 100.0
            )
        }
        _ => "running…".to_owned(),
    };
    if let Some(message) = message {
        text.push(' ');
        text.push_str(message);
    }
    text
}

/// A server's question on a card, as the user fills it in.
#[derive(Debug, Clone, PartialEq)]
pub struct FormView {
    /// The question as the host sent it.
    pub request: QuestionRequest,
    /// One answer per field, as text.
    pub values: Vec<String>,
    /// The field being edited.
    pub focus: usize,
    /// Why the last Enter did not send the form.
    pub problem: Option<String>,
}

/// What a key did to a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormOutcome {
    /// Still being filled in.
    Editing,
    /// Accepted with these answers by field name.
    Accept(std::collections::BTreeMap<String, String>),
    /// Declined (`ctrl+d`).
    Decline,
    /// Dismissed (`esc`): ends the turn.
    Cancel,
}

impl FormView {
    /// A form with each field at its default.
    pub fn new(request: QuestionRequest) -> Self {
        let values = request
            .fields
            .iter()
            .map(|f| match (&f.default, f.kind) {
                (Some(default), _) => default.clone(),
                (None, FieldKind::Choice) => f
                    .choices
                    .first()
                    .map(|c| c.value.clone())
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .collect();
        Self {
            request,
            values,
            focus: 0,
            problem: None,
        }
    }

    /// Applies a key.
    pub fn key(&mut self, key: crossterm::event::KeyEvent) -> FormOutcome {
        use crossterm::event::{KeyCode, KeyModifiers};
        let fields = self.request.fields.len();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if key.code != KeyCode::Enter {
            self.problem = None;
        }
        match key.code {
            KeyCode::Esc => return FormOutcome::Cancel,
            KeyCode::Char('d') if ctrl => return FormOutcome::Decline,
            KeyCode::Tab | KeyCode::Down => {
                self.focus = (self.focus + 1).min(fields.saturating_sub(1));
            }
            KeyCode::BackTab | KeyCode::Up => self.focus = self.focus.saturating_sub(1),
            KeyCode::Enter => {
                if self.request.kind == QuestionKind::Sampling {
                    return FormOutcome::Accept(self.answers());
                }
                if self.focus + 1 < fields {
                    self.focus += 1;
                } else if let Some(missing) = self.first_missing() {
                    // A required field left blank: go there instead of sending.
                    self.focus = missing;
                    self.problem = Some("this field is required".to_owned());
                } else {
                    return FormOutcome::Accept(self.answers());
                }
                return FormOutcome::Editing;
            }
            _ if self.request.kind == QuestionKind::Sampling => {}
            KeyCode::Left | KeyCode::Right => self.cycle(key.code == KeyCode::Right),
            KeyCode::Char(' ') if self.focused_kind() == Some(FieldKind::Boolean) => {
                self.cycle(true);
            }
            KeyCode::Backspace => {
                if let Some(value) = self.values.get_mut(self.focus) {
                    value.pop();
                }
            }
            KeyCode::Char(c) if !ctrl => {
                if let Some(value) = self.values.get_mut(self.focus)
                    && value.len() < 64 * 1024
                {
                    value.push(c);
                }
            }
            _ => {}
        }
        FormOutcome::Editing
    }

    /// The first required field left blank.
    fn first_missing(&self) -> Option<usize> {
        self.request
            .fields
            .iter()
            .zip(&self.values)
            .position(|(f, v)| f.required && v.trim().is_empty())
    }

    fn focused_kind(&self) -> Option<FieldKind> {
        self.request.fields.get(self.focus).map(|f| f.kind)
    }

    /// Left/Right through a choice's values, or yes/no.
    fn cycle(&mut self, forward: bool) {
        let Some(field) = self.request.fields.get(self.focus) else {
            return;
        };
        let options: Vec<String> = match field.kind {
            FieldKind::Boolean => vec!["true".into(), "false".into()],
            FieldKind::Choice => field.choices.iter().map(|c| c.value.clone()).collect(),
            _ => return,
        };
        if options.is_empty() {
            return;
        }
        let Some(value) = self.values.get_mut(self.focus) else {
            return;
        };
        let at = options.iter().position(|o| o == value);
        let next = match (at, forward) {
            (None, _) => 0,
            (Some(i), true) => (i + 1) % options.len(),
            (Some(i), false) => (i + options.len() - 1) % options.len(),
        };
        *value = options[next].clone();
    }

    /// The answers, leaving out blank optional fields.
    fn answers(&self) -> std::collections::BTreeMap<String, String> {
        self.request
            .fields
            .iter()
            .zip(&self.values)
            .filter(|(f, v)| f.required || !v.trim().is_empty())
            .map(|(f, v)| (f.name.clone(), v.trim().to_owned()))
            .collect()
    }

    fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let indent = |spans: Vec<Span<'static>>| {
            let mut all = vec![Span::raw("    ")];
            all.extend(spans);
            Line::from(all)
        };
        let request = &self.request;
        let heading = match request.kind {
            QuestionKind::Elicitation => format!("{} asks:", request.server),
            QuestionKind::Sampling => format!("{} asks to use your model:", request.server),
        };
        let mut lines = vec![indent(vec![Span::styled(
            terminal_safe(&heading),
            theme.style(Role::Warning),
        )])];
        for row in wrap_plain(&request.message, width.saturating_sub(4).max(1)) {
            lines.push(indent(vec![Span::styled(row, theme.style(Role::Text))]));
        }
        if request.kind == QuestionKind::Sampling {
            for message in &request.messages {
                let role = match message.role {
                    rho_component::SamplingRole::User => "user",
                    rho_component::SamplingRole::Assistant => "assistant",
                };
                let text = format!("{role}: {}", message.text);
                let rows = wrap_plain(&text, width.saturating_sub(6).max(1));
                for row in rows.iter().take(SAMPLING_ROWS) {
                    lines.push(indent(vec![Span::styled(
                        format!("  {row}"),
                        theme.style(Role::Dim),
                    )]));
                }
                if rows.len() > SAMPLING_ROWS {
                    lines.push(indent(vec![Span::styled(
                        format!("  … {} more lines", rows.len() - SAMPLING_ROWS),
                        theme.style(Role::Dim),
                    )]));
                }
            }
            if let Some(max) = request.max_tokens {
                lines.push(indent(vec![Span::styled(
                    format!("at most {max} tokens"),
                    theme.style(Role::Dim),
                )]));
            }
            lines.push(indent(vec![Span::styled(
                "enter allow · ctrl+d refuse · esc cancel the turn",
                theme.style(Role::Accent),
            )]));
            return lines;
        }
        for (i, (field, value)) in request.fields.iter().zip(&self.values).enumerate() {
            lines.extend(field_lines(field, value, i == self.focus, width, theme));
        }
        if let Some(problem) = &self.problem {
            lines.push(indent(vec![Span::styled(
                problem.clone(),
                theme.style(Role::Error),
            )]));
        }
        lines.push(indent(vec![Span::styled(
            "tab next · enter submit · ctrl+d decline · esc cancel the turn",
            theme.style(Role::Accent),
        )]));
        lines
    }
}

fn field_lines(
    field: &FormField,
    value: &str,
    focused: bool,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let name = field.title.as_deref().unwrap_or(&field.name);
    let marker = if focused { "› " } else { "  " };
    let required = if field.required { " *" } else { "" };
    let typed = !matches!(field.kind, FieldKind::Boolean | FieldKind::Choice);
    let shown = match field.kind {
        FieldKind::Boolean => match value {
            "true" => "yes".to_owned(),
            "false" => "no".to_owned(),
            _ => "yes / no".to_owned(),
        },
        FieldKind::Choice => field
            .choices
            .iter()
            .find(|c| c.value == value)
            .map(|c| c.title.clone().unwrap_or_else(|| c.value.clone()))
            .unwrap_or_else(|| value.to_owned()),
        _ => value.to_owned(),
    };
    let mut lines = vec![Line::from(vec![
        Span::raw("    "),
        Span::styled(marker, theme.style(Role::Accent)),
        Span::styled(
            format!("{}{required}: ", terminal_safe(name)),
            theme.style(Role::Text),
        ),
        Span::styled(
            format!(
                "{}{}",
                terminal_safe(&shown),
                if focused && typed { "▏" } else { "" }
            ),
            theme.style(Role::User),
        ),
    ])];
    let mut help = Vec::new();
    match field.kind {
        FieldKind::Choice | FieldKind::MultiChoice => {
            let values: Vec<String> = field
                .choices
                .iter()
                .map(|c| c.title.clone().unwrap_or_else(|| c.value.clone()))
                .collect();
            let how = if field.kind == FieldKind::Choice {
                "←/→ to choose"
            } else {
                "comma-separated"
            };
            help.push(format!("{how}: {}", values.join(", ")));
        }
        FieldKind::Boolean => help.push("←/→ or space".to_owned()),
        FieldKind::Number | FieldKind::Integer => help.push("a number".to_owned()),
        FieldKind::Text => {}
    }
    if let Some(text) = &field.help {
        help.push(text.clone());
    }
    // Only the field being filled in explains itself, so a long form stays on screen.
    if !focused {
        help.clear();
    }
    for text in help {
        for row in wrap_plain(&text, width.saturating_sub(8).max(1)) {
            lines.push(Line::from(vec![
                Span::raw("        "),
                Span::styled(row, theme.style(Role::Dim)),
            ]));
        }
    }
    lines
}
