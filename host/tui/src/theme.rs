//! The TUI's styles, in one place: every widget asks the [`Theme`] for a role's style rather
//! than naming colours, so `NO_COLOR` (<https://no-color.org>) turns every colour off while
//! bold, italics, underline and reverse video stay.

use ratatui::style::{Color, Modifier, Style};

/// What a piece of text is, for its style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Ordinary text.
    Text,
    /// Secondary text: hints, timings, URLs after link text, folded content.
    Dim,
    /// What the user wrote.
    User,
    /// Headings in rendered Markdown.
    Heading,
    /// Inline code and code blocks without highlighting.
    Code,
    /// Link text.
    Link,
    /// Block quote bars and text.
    Quote,
    /// Tool and server names on tool cards, the palette's selection.
    Accent,
    /// A finished, successful tool call.
    Success,
    /// Warnings: approvals, read-only marks, servers that failed to start.
    Warning,
    /// Errors.
    Error,
    /// The status line.
    Status,
}

/// The styles of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Whether colours are used (`NO_COLOR` unset or empty).
    pub color: bool,
}

impl Theme {
    /// Colours unless `NO_COLOR` is set to a non-empty value.
    pub fn from_env() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self { color: !no_color }
    }

    /// A theme without colours (what snapshot tests of layout use).
    pub fn plain() -> Self {
        Self { color: false }
    }

    /// The style of `role`.
    pub fn style(&self, role: Role) -> Style {
        let (color, modifier) = match role {
            Role::Text => (None, Modifier::empty()),
            Role::Dim => (Some(Color::DarkGray), Modifier::DIM),
            Role::User => (Some(Color::Cyan), Modifier::empty()),
            Role::Heading => (Some(Color::Magenta), Modifier::BOLD),
            Role::Code => (Some(Color::Yellow), Modifier::empty()),
            Role::Link => (Some(Color::Blue), Modifier::UNDERLINED),
            Role::Quote => (Some(Color::Green), Modifier::ITALIC),
            Role::Accent => (Some(Color::Cyan), Modifier::BOLD),
            Role::Success => (Some(Color::Green), Modifier::empty()),
            Role::Warning => (Some(Color::Yellow), Modifier::BOLD),
            Role::Error => (Some(Color::Red), Modifier::BOLD),
            Role::Status => (None, Modifier::REVERSED),
        };
        let style = Style::default().add_modifier(modifier);
        match color {
            Some(color) if self.color => style.fg(color),
            _ => style,
        }
    }

    /// A foreground colour from a highlighter, or nothing without colours.
    pub fn rgb(&self, r: u8, g: u8, b: u8) -> Style {
        if self.color {
            Style::default().fg(Color::Rgb(r, g, b))
        } else {
            Style::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_keeps_modifiers_and_drops_colours() {
        let plain = Theme::plain();
        assert_eq!(
            plain.style(Role::Error),
            Style::default().add_modifier(Modifier::BOLD)
        );
        assert_eq!(plain.rgb(1, 2, 3), Style::default());
        let colored = Theme { color: true };
        assert_eq!(colored.style(Role::Error).fg, Some(Color::Red));
    }
}
