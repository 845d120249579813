//! The welcome that opens a new session: rho's version, the model (or that none is
//! configured, and what to do about it), the project, what loaded and where help is. It is
//! on screen from the first frame and fills in as the host answers.

use ratatui::text::{Line, Span};
use rho_component::terminal_safe;
use rho_core::host::{Extensions, HostState};
use rho_core::{CONFIGURE_A_MODEL, PluginStatus, ProviderSource};

use crate::text::wrap_hanging;
use crate::theme::{Role, Theme};

/// What the welcome knows so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Welcome {
    state: Option<HostState>,
    /// Plugins loaded, skills, MCP servers, from the first extensions report.
    loaded: Option<(usize, usize, usize)>,
    tools: Option<usize>,
}

/// The width of the labels' column.
const LABEL: usize = 10;

impl Welcome {
    /// The host's state arrived.
    pub fn set_state(&mut self, state: &HostState) {
        self.state = Some(state.clone());
    }

    /// The extensions arrived.
    pub fn set_extensions(&mut self, extensions: &Extensions) {
        let plugins = extensions
            .plugins
            .iter()
            .filter(|p| p.status == PluginStatus::Loaded)
            .count();
        self.loaded = Some((plugins, extensions.skills.len(), extensions.servers.len()));
    }

    /// The tools arrived.
    pub fn set_tools(&mut self, tools: usize) {
        self.tools = Some(tools);
    }

    /// Its lines at `width` columns.
    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut lines = vec![Line::from(vec![
            Span::styled(
                format!("rho {}", env!("CARGO_PKG_VERSION")),
                theme.style(Role::Accent),
            ),
            Span::styled(" · an agent host", theme.style(Role::Dim)),
        ])];
        let (model, advice) = self.model();
        let rows = [
            ("model", model),
            ("", advice.unwrap_or_default()),
            (
                "project",
                self.state
                    .as_ref()
                    .map_or_else(|| "…".to_owned(), |s| s.cwd.display().to_string()),
            ),
            ("loaded", self.loaded()),
            ("help", "/help lists keys and commands".to_owned()),
        ];
        let inner = width.saturating_sub(u16::try_from(LABEL + 2).unwrap_or(u16::MAX));
        for (label, text) in rows {
            if text.is_empty() {
                continue;
            }
            for (i, row) in wrap_hanging(&terminal_safe(&text), inner.max(1))
                .into_iter()
                .enumerate()
            {
                let label = if i == 0 { label } else { "" };
                lines.push(Line::from(vec![
                    Span::styled(format!("  {label:<LABEL$}"), theme.style(Role::Dim)),
                    Span::raw(row),
                ]));
            }
        }
        lines
    }

    /// The model line, and what to do when none is configured.
    fn model(&self) -> (String, Option<String>) {
        let Some(state) = &self.state else {
            return ("…".to_owned(), None);
        };
        match (&state.model, &state.provider, state.provider_source) {
            (Some(model), Some(provider), Some(ProviderSource::Builtin)) => (
                format!("none configured (trying {model} · {provider}, rho's default)"),
                Some(format!("to choose one, {CONFIGURE_A_MODEL}")),
            ),
            (Some(model), Some(provider), _) => (format!("{model} · {provider}"), None),
            _ => (
                "none".to_owned(),
                Some(
                    state
                        .provider_error
                        .clone()
                        .unwrap_or_else(|| CONFIGURE_A_MODEL.to_owned()),
                ),
            ),
        }
    }

    fn loaded(&self) -> String {
        let count =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        match (self.loaded, self.tools) {
            (Some((plugins, skills, servers)), tools) => {
                let mut parts = vec![
                    count(plugins, "plugin", "plugins"),
                    count(skills, "skill", "skills"),
                    count(servers, "MCP server", "MCP servers"),
                ];
                parts.push(match tools {
                    Some(tools) => count(tools, "tool", "tools"),
                    None => "… tools".to_owned(),
                });
                parts.join(" · ")
            }
            (None, _) => "…".to_owned(),
        }
    }
}
