//! The palettes above the composer: `/` offers built-in commands, skills and MCP prompts
//! (`/mcp:<server>:<prompt>`); `@` offers server resources. Both filter as one types (every
//! typed character in order, case-insensitive, prefix matches first) and keep a selection.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};
use rho_component::terminal_safe;

use crate::text::width_of;
use crate::theme::{Role, Theme};

/// Rows a palette shows at most.
pub const VISIBLE_ROWS: usize = 8;

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// One of rho's commands.
    Command,
    /// A skill.
    Skill,
    /// A server's prompt.
    Prompt,
    /// A server's resource.
    Resource,
    /// A server's resource template (inserted as text, to be filled in).
    Template,
    /// An argument a prompt command takes (`name=`).
    Argument,
    /// A value a server suggests for a prompt argument.
    Value,
    /// A file of the workspace.
    File,
}

/// One choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// What is inserted (`/help`, `/mcp:docs:search`, a resource URI).
    pub insert: String,
    /// A short description.
    pub description: String,
    /// What it is.
    pub kind: EntryKind,
    /// For resources: the server that serves it.
    pub server: Option<String>,
}

/// The built-in commands: `(name, what it does)`, in the order `/help` lists them.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "keys and commands"),
    (
        "/mcp",
        "MCP servers: status, tools, prompts, resources, OAuth",
    ),
    ("/doctor", "what loaded, what failed and why"),
    (
        "/context",
        "what the next request costs: system prompt, tools, conversation",
    ),
    ("/plugins", "plugins and their components"),
    ("/skills", "skills after precedence"),
    ("/tools", "the session's tools and their risk"),
    ("/model", "show or switch the model (/model <id>)"),
    ("/new", "start a fresh session"),
    ("/resume", "pick a saved session of this project"),
    ("/compact", "replace the history with a summary"),
    ("/clear", "forget the conversation"),
    ("/quit", "leave rho"),
];

/// An open palette.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Palette {
    entries: Vec<Entry>,
    /// Indices of `entries` matching the query, best first.
    matches: Vec<usize>,
    selected: usize,
    query: String,
}

impl Palette {
    /// A palette over `entries`, filtered by `query`.
    pub fn new(entries: Vec<Entry>, query: &str) -> Self {
        let mut palette = Self {
            entries,
            matches: Vec::new(),
            selected: 0,
            query: String::new(),
        };
        palette.filter(query);
        palette
    }

    /// Filters again by `query` (what follows the `/` or `@`).
    pub fn filter(&mut self, query: &str) {
        if query == self.query && !self.matches.is_empty() {
            return;
        }
        query.clone_into(&mut self.query);
        let query = query.to_lowercase();
        // Files come after everything else: a workspace holds far more of them.
        let mut scored: Vec<(bool, u8, usize)> = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                let target = e.insert.trim_start_matches(['/', '@']).to_lowercase();
                score(&target, &query).map(|s| (e.kind == EntryKind::File, s, i))
            })
            .collect();
        scored.sort_unstable();
        self.matches = scored.into_iter().map(|(_, _, i)| i).collect();
        self.selected = 0;
    }

    /// Whether nothing matches.
    pub fn is_empty(&self) -> bool {
        self.matches.is_empty()
    }

    /// Moves the selection.
    pub fn move_selection(&mut self, down: bool) {
        if self.matches.is_empty() {
            return;
        }
        let n = self.matches.len();
        self.selected = if down {
            (self.selected + 1) % n
        } else {
            (self.selected + n - 1) % n
        };
    }

    /// The selected entry.
    pub fn selected(&self) -> Option<&Entry> {
        self.matches
            .get(self.selected)
            .and_then(|&i| self.entries.get(i))
    }

    /// Rows it needs.
    pub fn height(&self) -> u16 {
        let rows = self.matches.len().clamp(1, VISIBLE_ROWS);
        u16::try_from(rows).unwrap_or(1)
    }

    /// Draws it into `area` (cleared first).
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        Clear.render(area, buf);
        if self.matches.is_empty() {
            buf.set_line(
                area.x,
                area.y,
                &Line::from(Span::styled("  no match", theme.style(Role::Dim))),
                area.width,
            );
            return;
        }
        let rows = usize::from(area.height);
        // The last row says how many more there are, when they do not all fit.
        let more = self.matches.len() > rows;
        let shown_rows = if more {
            rows.saturating_sub(1).max(1)
        } else {
            rows
        };
        let first = self.selected.saturating_sub(shown_rows.saturating_sub(1));
        let visible = || {
            self.matches
                .iter()
                .skip(first)
                .take(shown_rows)
                .filter_map(|&i| self.entries.get(i))
        };
        let name_width = visible()
            .map(|e| width_of(&e.insert))
            .max()
            .unwrap_or(0)
            .min(usize::from(area.width) / 2);
        if more {
            let hidden = self.matches.len() - shown_rows;
            let y = area.y + u16::try_from(shown_rows).unwrap_or(0);
            buf.set_line(
                area.x,
                y,
                &Line::from(Span::styled(
                    format!("  … {hidden} more · keep typing to narrow"),
                    theme.style(Role::Dim),
                )),
                area.width,
            );
        }
        for (row, &index) in self.matches.iter().skip(first).take(shown_rows).enumerate() {
            let Some(entry) = self.entries.get(index) else {
                continue;
            };
            let selected = first + row == self.selected;
            let role = if selected { Role::Accent } else { Role::Text };
            let marker = if selected { "› " } else { "  " };
            let name = terminal_safe(&entry.insert);
            let pad = name_width.saturating_sub(width_of(&name));
            let kind = match entry.kind {
                EntryKind::Command => "",
                EntryKind::Skill => "skill · ",
                EntryKind::Prompt => "prompt · ",
                EntryKind::Resource => "resource · ",
                EntryKind::Template => "template · ",
                EntryKind::Argument => "argument · ",
                EntryKind::Value | EntryKind::File => "",
            };
            let room = usize::from(area.width).saturating_sub(2 + name_width + 2);
            let description = fit(
                &format!("{kind}{}", terminal_safe(&entry.description)),
                room,
            );
            let line = Line::from(vec![
                Span::styled(marker, theme.style(Role::Accent)),
                Span::styled(format!("{name}{}  ", " ".repeat(pad)), theme.style(role)),
                Span::styled(description, theme.style(Role::Dim)),
            ]);
            let y = area.y + u16::try_from(row).unwrap_or(0);
            buf.set_line(area.x, y, &line, area.width);
        }
    }
}

/// `text` cut to `room` columns, ending in `…` when cut.
fn fit(text: &str, room: usize) -> String {
    if width_of(text) <= room {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = width_of(c.encode_utf8(&mut [0; 4]));
        if used + w + 1 > room {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// How well `target` matches `query`: 0 a prefix, 1 a substring, 2 the characters in order;
/// `None` no match.
fn score(target: &str, query: &str) -> Option<u8> {
    if target.starts_with(query) {
        return Some(0);
    }
    if target.contains(query) {
        return Some(1);
    }
    let mut chars = target.chars();
    query.chars().all(|q| chars.any(|t| t == q)).then_some(2)
}

/// The built-in commands as palette entries.
pub fn command_entries() -> Vec<Entry> {
    COMMANDS
        .iter()
        .map(|(name, description)| Entry {
            insert: (*name).to_owned(),
            description: (*description).to_owned(),
            kind: EntryKind::Command,
            server: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_prefix_first_then_substring_then_in_order() {
        let mut palette = Palette::new(command_entries(), "");
        assert_eq!(palette.selected().map(|e| e.insert.as_str()), Some("/help"));
        palette.filter("m");
        let names: Vec<_> = palette
            .matches
            .iter()
            .map(|&i| palette.entries[i].insert.as_str())
            .collect();
        assert_eq!(names[..2], ["/mcp", "/model"]);
        palette.filter("qt");
        assert_eq!(palette.selected().map(|e| e.insert.as_str()), Some("/quit"));
        palette.filter("zzz");
        assert!(palette.is_empty());
        assert_eq!(palette.selected(), None);
    }

    #[test]
    fn selection_wraps() {
        let mut palette = Palette::new(command_entries(), "");
        palette.move_selection(false);
        assert_eq!(palette.selected().map(|e| e.insert.as_str()), Some("/quit"));
        palette.move_selection(true);
        assert_eq!(palette.selected().map(|e| e.insert.as_str()), Some("/help"));
    }
}
