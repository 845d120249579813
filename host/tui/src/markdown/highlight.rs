//! Code block lines: tabs expanded, highlighted with syntect when the fence names a language
//! it knows, made terminal-safe.
//!
//! The syntax set and the `base16-ocean.dark` theme are loaded once, on the first highlighted
//! block or when the interactive loop starts (`warm_up`, on a blocking thread: loading takes
//! tens of milliseconds, which a frame should not wait for). Highlighting is
//! the slow part of rendering, and a streaming message is re-rendered whole on every change,
//! so results are cached: a block whose complete lines were highlighted before (the same
//! block in the next frame, or the same block at another width) costs a lookup, and a block
//! that grew (the one being streamed) resumes from the parser state after its last complete
//! line instead of starting over.
//!
//! syntect runs on Oniguruma (`regex-onig`), the engine the syntaxes were written for: with
//! `fancy-regex` each language a conversation used cost 5–12 MiB of compiled regex state
//! (55 MiB for the warm-up's eight), with Oniguruma all eight cost under 5 MiB. Oniguruma's
//! parser states cannot move between threads, so the cache belongs to the thread that draws.

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::OnceLock;

use ratatui::style::{Modifier, Style};
use rho_component::terminal_safe;
use syntect::easy::HighlightLines;
use syntect::highlighting::{
    FontStyle, HighlightState, Highlighter, Style as SynStyle, Theme as SynTheme, ThemeSet,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};
use unicode_width::UnicodeWidthChar;

use super::wrap::Pieces;
use crate::theme::{Role, Theme};

/// Blocks with more lines than this are not highlighted.
pub(super) const MAX_HIGHLIGHT_LINES: usize = 2_000;
/// Blocks larger than this (bytes) are not highlighted.
pub(super) const MAX_HIGHLIGHT_BYTES: usize = 128 * 1024;
/// Columns between tab stops in code blocks.
const TAB_STOP: usize = 4;
/// Highlighted blocks kept in the cache.
const CACHE_ENTRIES: usize = 32;

/// What highlighting needs, loaded once.
struct Assets {
    syntaxes: SyntaxSet,
    theme: SynTheme,
}

fn assets() -> Option<&'static Assets> {
    static ASSETS: OnceLock<Option<Assets>> = OnceLock::new();
    ASSETS
        .get_or_init(|| {
            let theme = ThemeSet::load_defaults()
                .themes
                .remove("base16-ocean.dark")?;
            Some(Assets {
                syntaxes: SyntaxSet::load_defaults_newlines(),
                theme,
            })
        })
        .as_ref()
}

/// Loads the syntax set and the theme if they are not loaded yet, then parses a few lines of
/// the languages replies use most: syntect compiles a syntax's patterns when a line first
/// needs them, which would otherwise land in the frame that shows a reply's first code block.
pub(super) fn warm_up() {
    let Some(assets) = assets() else { return };
    for (token, sample) in WARM_UP_SAMPLES {
        let Some(syntax) = assets.syntaxes.find_syntax_by_token(token) else {
            continue;
        };
        let mut state = ParseState::new(syntax);
        for line in sample.split_inclusive('\n') {
            if state.parse_line(line, &assets.syntaxes).is_err() {
                break;
            }
        }
    }
}

/// What [`warm_up`] parses: a fence's language and lines that reach its common patterns.
const WARM_UP_SAMPLES: &[(&str, &str)] = &[
    (
        "rust",
        "use std::io;\n/// Doc.\n#[derive(Debug)]\npub struct A<'a> { x: &'a str }\nimpl A<'_> {\n    pub fn f(&self) -> Result<u8, String> { let v = vec![1, 2]; match v.len() { 0 => Ok(0), n => Err(format!(\"{n}\")) } }\n}\n",
    ),
    (
        "python",
        "import os\n@decorator\nclass A(B):\n    def f(self, x: int = 1) -> str:\n        return f\"{x}\" if x else 'no'  # comment\n",
    ),
    (
        "js",
        "import { a } from './a.js';\nexport const f = async (x) => { const y = `t${x}`; return /re/.test(y) ? 1 : null; };\nclass C extends D { constructor() { super(); } }\n",
    ),
    (
        "sh",
        "#!/bin/sh\nset -eu\nfor f in *.txt; do echo \"$f\" | grep -q x && cat \"${f}\"; done\nif [ -n \"$1\" ]; then exit 1; fi\n",
    ),
    (
        "json",
        "{\"a\": [1, 2.5, true, null], \"b\": {\"c\": \"d\"}}\n",
    ),
    (
        "diff",
        "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-old\n+new\n context\n",
    ),
    (
        "go",
        "package main\nimport \"fmt\"\nfunc main() { x := []int{1}; for _, v := range x { fmt.Println(v) } }\n",
    ),
    (
        "c",
        "#include <stdio.h>\nint main(void) { char *s = \"x\"; /* c */ return printf(\"%s\\n\", s); }\n",
    ),
];

/// The lines of a code block with language `lang` (the fence's first word, maybe empty):
/// one [`Pieces`] per source line, tabs expanded, every run terminal-safe.
pub(super) fn code_lines(lang: &str, text: &str, theme: &Theme) -> Vec<Pieces> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        return Vec::new();
    }
    let lines: Vec<Cow<'_, str>> = body
        .split('\n')
        .map(|line| expand_tabs(line.strip_suffix('\r').unwrap_or(line)))
        .collect();
    let complete = text.ends_with('\n');
    if theme.color
        && !lang.is_empty()
        && lines.len() <= MAX_HIGHLIGHT_LINES
        && text.len() <= MAX_HIGHLIGHT_BYTES
        && let Some(lines) = highlighted(lang, &lines, complete, theme)
    {
        return lines;
    }
    let style = theme.style(Role::Code);
    lines
        .iter()
        .map(|line| {
            let mut pieces = Vec::new();
            if !line.is_empty() {
                pieces.push((terminal_safe(line), style));
            }
            pieces
        })
        .collect()
}

/// Replaces tabs with spaces up to the next tab stop.
fn expand_tabs(line: &str) -> Cow<'_, str> {
    if !line.contains('\t') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut column = 0;
    for c in line.chars() {
        if c == '\t' {
            let spaces = TAB_STOP - column % TAB_STOP;
            out.extend(std::iter::repeat_n(' ', spaces));
            column += spaces;
        } else {
            out.push(c);
            column += c.width().unwrap_or(0);
        }
    }
    Cow::Owned(out)
}

/// The syntax for a fence's language token, if syntect's default set has one.
fn syntax_for<'a>(syntaxes: &'a SyntaxSet, lang: &str) -> Option<&'a SyntaxReference> {
    let token = lang.to_ascii_lowercase();
    let token = match token.as_str() {
        "shell" | "console" | "zsh" | "bash" | "shellscript" => "sh",
        "ts" | "typescript" | "tsx" | "jsx" | "javascript" | "mjs" | "cjs" => "js",
        "jsonc" | "json5" => "json",
        "c++" => "cpp",
        "golang" => "go",
        "python3" | "py3" => "py",
        "rust" => "rs",
        "yml" => "yaml",
        "md" => "markdown",
        other => other,
    };
    syntaxes
        .find_syntax_by_token(token)
        .filter(|syntax| syntax.name != "Plain Text")
}

/// A highlighted prefix of some block: its complete lines, their highlighting and the state
/// after them.
struct Entry {
    syntax: String,
    /// The complete lines highlighted, each followed by `\n`.
    text: String,
    lines: Vec<Vec<(SynStyle, String)>>,
    highlight: HighlightState,
    parse: ParseState,
    used: u64,
}

struct Cache {
    entries: Vec<Entry>,
    clock: u64,
}

thread_local! {
    /// The cache of the thread that draws (the screen draws on one thread; a parser state
    /// holds Oniguruma regions, which stay on the thread that made them).
    static CACHE: RefCell<Cache> = const {
        RefCell::new(Cache {
            entries: Vec::new(),
            clock: 0,
        })
    };
}

/// Highlights `lines` (the last one incomplete unless `complete`), or `None` when the
/// language is unknown or syntect fails.
fn highlighted(
    lang: &str,
    lines: &[Cow<'_, str>],
    complete: bool,
    theme: &Theme,
) -> Option<Vec<Pieces>> {
    let assets = assets()?;
    let syntax = syntax_for(&assets.syntaxes, lang)?;
    let complete_count = if complete {
        lines.len()
    } else {
        lines.len().saturating_sub(1)
    };
    let mut key = String::new();
    for line in &lines[..complete_count] {
        key.push_str(line);
        key.push('\n');
    }

    CACHE.with_borrow_mut(|cache| {
        let block = Block {
            syntax,
            key,
            lines,
            complete_count,
        };
        highlighted_in(cache, assets, block, theme)
    })
}

/// A block to highlight: its syntax, its complete lines joined (each followed by `\n`), all
/// its lines and how many of them are complete.
struct Block<'a, 'l> {
    syntax: &'a SyntaxReference,
    key: String,
    lines: &'a [Cow<'l, str>],
    complete_count: usize,
}

/// [`highlighted`] with the cache in hand.
fn highlighted_in(
    cache: &mut Cache,
    assets: &Assets,
    block: Block<'_, '_>,
    theme: &Theme,
) -> Option<Vec<Pieces>> {
    let Block {
        syntax,
        key,
        lines,
        complete_count,
    } = block;
    cache.clock += 1;
    let clock = cache.clock;
    let found = cache
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.syntax == syntax.name && key.starts_with(e.text.as_str()))
        .max_by_key(|(_, e)| e.text.len())
        .map(|(i, _)| i);
    let mut entry = match found {
        Some(i) => cache.entries.swap_remove(i),
        None => {
            let highlighter = Highlighter::new(&assets.theme);
            Entry {
                syntax: syntax.name.clone(),
                text: String::new(),
                lines: Vec::new(),
                highlight: HighlightState::new(&highlighter, ScopeStack::new()),
                parse: ParseState::new(syntax),
                used: clock,
            }
        }
    };
    entry.used = clock;

    if entry.lines.len() < complete_count {
        let mut h = HighlightLines::from_state(&assets.theme, entry.highlight, entry.parse);
        for line in &lines[entry.lines.len()..complete_count] {
            entry
                .lines
                .push(highlight_line(&mut h, line, &assets.syntaxes)?);
        }
        (entry.highlight, entry.parse) = h.state();
        entry.text = key;
    }
    let last = if complete_count < lines.len() {
        let mut h =
            HighlightLines::from_state(&assets.theme, entry.highlight.clone(), entry.parse.clone());
        let line = lines.last().map_or("", |line| line.as_ref());
        Some(highlight_line(&mut h, line, &assets.syntaxes)?)
    } else {
        None
    };

    let out = entry
        .lines
        .iter()
        .chain(last.as_ref())
        .map(|ranges| {
            ranges
                .iter()
                .map(|(style, text)| (terminal_safe(text), map_style(*style, theme)))
                .collect()
        })
        .collect();

    if cache.entries.len() >= CACHE_ENTRIES
        && let Some(oldest) = cache
            .entries
            .iter()
            .enumerate()
            .min_by_key(|(_, e)| e.used)
            .map(|(i, _)| i)
    {
        cache.entries.swap_remove(oldest);
    }
    cache.entries.push(entry);
    Some(out)
}

/// Highlights one line (given without its newline).
fn highlight_line(
    h: &mut HighlightLines<'_>,
    line: &str,
    syntaxes: &SyntaxSet,
) -> Option<Vec<(SynStyle, String)>> {
    let with_newline = format!("{line}\n");
    let ranges = h.highlight_line(&with_newline, syntaxes).ok()?;
    Some(
        ranges
            .into_iter()
            .filter_map(|(style, text)| {
                let text = text.strip_suffix('\n').unwrap_or(text);
                (!text.is_empty()).then(|| (style, text.to_owned()))
            })
            .collect(),
    )
}

/// A highlighter style as a terminal style: its foreground colour (through the theme, so no
/// colour without colours), bold and italics; never its background.
fn map_style(style: SynStyle, theme: &Theme) -> Style {
    let fg = style.foreground;
    let mut out = theme.rgb(fg.r, fg.g, fg.b);
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_warm_up_sample_names_a_known_syntax_and_parses() {
        let assets = assets().unwrap_or_else(|| panic!("the default theme is missing"));
        for (token, sample) in WARM_UP_SAMPLES {
            let syntax = assets
                .syntaxes
                .find_syntax_by_token(token)
                .unwrap_or_else(|| panic!("no syntax for {token}"));
            let mut state = ParseState::new(syntax);
            for line in sample.split_inclusive('\n') {
                assert!(state.parse_line(line, &assets.syntaxes).is_ok(), "{token}");
            }
        }
        warm_up();
    }
}
