//! Markdown to styled terminal lines: what an assistant message looks like in the transcript.
//!
//! [`render`] parses CommonMark with the GFM tables, strikethrough, task list and footnote
//! extensions and lays the document out for a given width. Every piece of text goes through
//! [`terminal_safe`] (model output is untrusted), so control characters, bidi overrides and
//! zero-width characters show as `\u{..}` escapes and never reach the terminal.
//!
//! Layout, block by block:
//!
//! - Blocks are separated by one blank line; list items are not (lists render tight).
//! - Paragraphs are word-wrapped by display width (wide characters take two columns,
//!   combining marks none, grapheme clusters are never split, longer words are broken).
//!   Soft breaks are spaces, hard breaks end the line.
//! - Headings keep their `#` markers (`## Title`) and are styled [`Role::Heading`].
//! - Emphasis is italic, strong bold, strikethrough crossed out, inline code [`Role::Code`]
//!   (without backticks).
//! - Links show their text ([`Role::Link`]) and then ` (url)` dimmed, unless the text is the
//!   URL (autolinks). Images show as `[image: alt]` dimmed, footnote references as `[^n]`.
//! - Lists use `- ` and `1. ` markers (task items add `[ ] ` / `[x] `) and hang wrapped lines
//!   under the item's text. Footnote definitions are items marked `[^n]: `.
//! - Block quotes put a `▌ ` bar ([`Role::Quote`]) before every line, one per level.
//! - Code blocks are indented two columns, with no fences shown. Lines longer than the width
//!   are cut at the width and continue on the next line at the same indent (nothing of the
//!   code is lost, and copying the text gives the code back). A fence whose language syntect
//!   knows is highlighted with the `base16-ocean.dark` theme (see `highlight`), other blocks
//!   are [`Role::Code`]; with colours off there is no highlighting. Tabs become spaces to the
//!   next multiple of four columns. An unterminated fence (a message still streaming) is a
//!   code block up to the end of the text, as CommonMark says.
//! - Tables: see `table` (columns from content, shrunk to fit, header bold, `─┼─` rule).
//! - Horizontal rules are a line of `─` as wide as the text.
//! - HTML, inline or in blocks, is shown as the plain text it is.
//!
//! Nesting: each quote and list level indents its content, but only while at least ten
//! columns are left; deeper levels are not indented further (their list markers then go in
//! front of the text, their quote bars are left out), so any depth renders within the width.
//! Code blocks lose their indent below 13 columns. A grapheme cluster wider than the whole
//! width (a wide character at width 1) is drawn as `…`: no line is ever wider than asked.
//!
//! Limits: code blocks over 2,000 lines or 128 KiB are not highlighted. Rendering is linear in
//! the text; highlighting is the slow part (a 20 KB Rust block takes about 40 ms the first
//! time) and is cached across calls for up to 32 blocks (see `highlight`).

mod highlight;
mod table;
mod wrap;

#[cfg(test)]
mod tests;

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use rho_component::terminal_safe;

use self::table::Table;
use self::wrap::{Inline, Pieces, display_width, hard_wrap, push_piece, trim_end, wrap};
use crate::theme::{Role, Theme};

/// Nesting stops indenting when fewer columns than this would be left for the content.
const MIN_CONTENT: usize = 10;

/// The quote bar, one per level.
const QUOTE_BAR: &str = "▌ ";
/// Columns code blocks are indented by.
const CODE_INDENT: usize = 2;

/// Loads what highlighting code needs (syntect's syntaxes and theme) if it is not loaded yet,
/// so that the first code block drawn does not wait for it. Blocks the calling thread.
pub fn warm_up() {
    highlight::warm_up();
}

/// Renders Markdown `source` as lines at most `width` display columns wide (width >= 1; 0 is
/// taken as 1).
///
/// Fast enough to call on every change of a streaming message: a 20 KB message of prose,
/// lists, tables and code renders in about a millisecond (release build). Highlighted code is
/// cached across calls, so a block already seen costs no highlighting and a block being
/// streamed only has its new lines highlighted. The first highlighted block of a run loads
/// syntect's syntaxes and theme (about 20 ms, once; [`warm_up`] does it ahead); code blocks
/// over 2,000 lines or 128 KiB are not highlighted.
pub fn render(source: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut renderer = Renderer::new(usize::from(width.max(1)), theme);
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    for event in Parser::new_ext(source, options) {
        renderer.event(event);
    }
    renderer.finish()
}

/// A level of nesting that prefixes the lines inside it.
enum Container {
    /// A block quote: a bar on every line.
    Quote,
    /// A list item (or footnote definition): its marker on the first line, as many spaces on
    /// the others.
    Item {
        marker: String,
        width: usize,
        style: Style,
        /// The marker has not been drawn yet.
        pending: bool,
    },
}

impl Container {
    fn width(&self) -> usize {
        match self {
            Container::Quote => display_width(QUOTE_BAR),
            Container::Item { width, .. } => *width,
        }
    }
}

/// A link being collected.
struct OpenLink {
    url: String,
    autolink: bool,
    /// Where its text starts in the inline buffer.
    start: usize,
}

/// Turns parser events into lines.
struct Renderer<'t> {
    theme: &'t Theme,
    width: usize,
    out: Vec<Line<'static>>,
    containers: Vec<Container>,
    quotes: usize,
    /// The inline content of the block being collected.
    inline: Vec<Inline>,
    /// A block ended: the next one is preceded by a blank line.
    blank_pending: bool,
    emphasis: usize,
    strong: usize,
    strike: usize,
    links: Vec<OpenLink>,
    images: usize,
    heading: bool,
    /// The next number of each open list, `None` for bullet lists.
    lists: Vec<Option<u64>>,
    /// The open code block: its language and text.
    code: Option<(String, String)>,
    /// The open HTML block's text.
    html: Option<String>,
    table: Option<Table>,
}

impl<'t> Renderer<'t> {
    fn new(width: usize, theme: &'t Theme) -> Self {
        Self {
            theme,
            width,
            out: Vec::new(),
            containers: Vec::new(),
            quotes: 0,
            inline: Vec::new(),
            blank_pending: false,
            emphasis: 0,
            strong: 0,
            strike: 0,
            links: Vec::new(),
            images: 0,
            heading: false,
            lists: Vec::new(),
            code: None,
            html: None,
            table: None,
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some((_, code)) = &mut self.code {
                    code.push_str(&text);
                } else if let Some(html) = &mut self.html {
                    html.push_str(&text);
                } else {
                    self.text(&text, self.text_style());
                }
            }
            Event::Code(text) => self.text(&text, self.code_style()),
            Event::Html(text) => {
                if let Some(html) = &mut self.html {
                    html.push_str(&text);
                } else {
                    self.text(&text, self.text_style());
                }
            }
            Event::InlineHtml(text) | Event::InlineMath(text) | Event::DisplayMath(text) => {
                self.text(&text, self.text_style());
            }
            Event::FootnoteReference(label) => {
                let style = self.text_style().patch(self.theme.style(Role::Dim));
                self.text(&format!("[^{label}]"), style);
            }
            Event::SoftBreak => self.text(" ", self.text_style()),
            Event::HardBreak => self.inline.push(Inline::Break),
            Event::Rule => {
                self.start_block();
                self.overflow_markers_line();
                let rule = "─".repeat(self.content_width());
                self.emit(vec![(rule, self.theme.style(Role::Dim))]);
                self.blank_pending = true;
            }
            Event::TaskListMarker(done) => {
                self.text(if done { "[x] " } else { "[ ] " }, self.text_style());
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::DefinitionList | Tag::MetadataBlock(_) => self.start_block(),
            Tag::DefinitionListTitle | Tag::DefinitionListDefinition => self.flush_inline(),
            Tag::Heading { level, .. } => {
                self.start_block();
                self.heading = true;
                let marks = "#".repeat(level as usize);
                self.text(&format!("{marks} "), self.text_style());
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                self.containers.push(Container::Quote);
                self.quotes += 1;
            }
            Tag::CodeBlock(kind) => {
                self.start_block();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
                        .next()
                        .unwrap_or("")
                        .trim_start_matches('.')
                        .to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::HtmlBlock => {
                self.start_block();
                self.html = Some(String::new());
            }
            Tag::List(first) => {
                self.start_block();
                self.lists.push(first);
            }
            Tag::Item => {
                self.flush_inline();
                self.blank_pending = false;
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let marker = format!("{n}. ");
                        *n = n.saturating_add(1);
                        marker
                    }
                    _ => "- ".to_owned(),
                };
                self.push_item(marker, self.theme.style(Role::Text));
            }
            Tag::FootnoteDefinition(label) => {
                self.start_block();
                let marker = format!("[^{}]: ", terminal_safe(&label.replace('\n', " ")));
                self.push_item(marker, self.theme.style(Role::Dim));
            }
            Tag::Table(aligns) => {
                self.start_block();
                self.table = Some(Table {
                    aligns,
                    ..Table::default()
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.row.clear();
                }
            }
            Tag::TableCell => self.inline.clear(),
            Tag::Emphasis => self.emphasis += 1,
            Tag::Strong => self.strong += 1,
            Tag::Strikethrough => self.strike += 1,
            Tag::Superscript | Tag::Subscript => {}
            Tag::Link {
                link_type,
                dest_url,
                ..
            } => self.links.push(OpenLink {
                url: terminal_safe(&dest_url.replace(['\n', '\r'], "")),
                autolink: matches!(link_type, LinkType::Autolink | LinkType::Email),
                start: self.inline.len(),
            }),
            Tag::Image { .. } => {
                self.images += 1;
                self.text("[image: ", self.text_style());
            }
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::DefinitionList | TagEnd::MetadataBlock(_) => {
                self.end_block();
            }
            TagEnd::DefinitionListTitle | TagEnd::DefinitionListDefinition => {
                self.flush_inline();
            }
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.heading = false;
                self.blank_pending = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.containers.pop();
                self.quotes = self.quotes.saturating_sub(1);
                self.blank_pending = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, text)) = self.code.take() {
                    self.code_block(&lang, &text);
                }
                self.blank_pending = true;
            }
            TagEnd::HtmlBlock => {
                if let Some(html) = self.html.take() {
                    let style = self.text_style();
                    for (i, line) in html.trim_end_matches('\n').split('\n').enumerate() {
                        if i > 0 {
                            self.inline.push(Inline::Break);
                        }
                        self.text(line, style);
                    }
                }
                self.end_block();
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
                self.blank_pending = true;
            }
            TagEnd::Item | TagEnd::FootnoteDefinition => {
                self.flush_inline();
                if matches!(
                    self.containers.last(),
                    Some(Container::Item { pending: true, .. })
                ) {
                    // An empty item still shows its marker.
                    self.overflow_markers_line();
                    self.emit(Vec::new());
                }
                self.containers.pop();
                if tag == TagEnd::FootnoteDefinition {
                    self.blank_pending = true;
                }
            }
            TagEnd::Table => {
                self.inline.clear();
                if let Some(table) = self.table.take() {
                    self.overflow_markers_line();
                    for line in table::render(&table, self.content_width(), self.theme) {
                        self.emit(line);
                    }
                }
                self.blank_pending = true;
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                    table.head_rows = table.rows.len();
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.inline);
                if let Some(table) = &mut self.table {
                    table.row.push(cell);
                }
            }
            TagEnd::Emphasis => self.emphasis = self.emphasis.saturating_sub(1),
            TagEnd::Strong => self.strong = self.strong.saturating_sub(1),
            TagEnd::Strikethrough => self.strike = self.strike.saturating_sub(1),
            TagEnd::Superscript | TagEnd::Subscript => {}
            TagEnd::Link => {
                if let Some(link) = self.links.pop() {
                    self.close_link(link);
                }
            }
            TagEnd::Image => {
                self.text("]", self.text_style());
                self.images = self.images.saturating_sub(1);
            }
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        if let Some((lang, text)) = self.code.take() {
            self.code_block(&lang, &text);
        }
        self.flush_inline();
        self.out
    }

    /// ` (url)` after a link's text, unless the text is the URL.
    fn close_link(&mut self, link: OpenLink) {
        if link.autolink || link.url.is_empty() {
            return;
        }
        let mut text = String::new();
        for inline in self.inline.get(link.start..).unwrap_or_default() {
            if let Inline::Text(t, _) = inline {
                text.push_str(t);
            }
        }
        let bare = link.url.strip_prefix("mailto:").unwrap_or(&link.url);
        if text == link.url || text == bare {
            return;
        }
        let style = self.text_style().patch(self.theme.style(Role::Dim));
        self.inline
            .push(Inline::Text(format!(" ({})", link.url), style));
    }

    // Styles.

    fn base_style(&self) -> Style {
        if self.heading {
            self.theme.style(Role::Heading)
        } else if self.quotes > 0 {
            self.theme.style(Role::Quote)
        } else {
            self.theme.style(Role::Text)
        }
    }

    fn text_style(&self) -> Style {
        let mut style = self.base_style();
        if !self.links.is_empty() {
            style = style.patch(self.theme.style(Role::Link));
        }
        if self.images > 0 {
            style = style.patch(self.theme.style(Role::Dim));
        }
        if self.emphasis > 0 {
            style = style.add_modifier(Modifier::ITALIC);
        }
        if self.strong > 0 {
            style = style.add_modifier(Modifier::BOLD);
        }
        if self.strike > 0 {
            style = style.add_modifier(Modifier::CROSSED_OUT);
        }
        style
    }

    fn code_style(&self) -> Style {
        self.text_style().patch(self.theme.style(Role::Code))
    }

    /// Adds inline text (newlines become spaces).
    fn text(&mut self, text: &str, style: Style) {
        let safe = if text.contains('\n') {
            terminal_safe(&text.replace('\n', " "))
        } else {
            terminal_safe(text)
        };
        // A link's text starts a new run, for `close_link` to read it.
        let link_starts = self
            .links
            .last()
            .is_some_and(|link| link.start == self.inline.len());
        match self.inline.last_mut() {
            Some(Inline::Text(last, last_style)) if *last_style == style && !link_starts => {
                last.push_str(&safe);
            }
            _ => self.inline.push(Inline::Text(safe, style)),
        }
    }

    // Blocks.

    /// Before a block: what was collected is laid out, and a blank line separates it from
    /// the block before.
    fn start_block(&mut self) {
        self.flush_inline();
        if self.blank_pending && !self.out.is_empty() {
            let mut line = self.prefix(true);
            trim_end(&mut line);
            self.out.push(to_line(line));
        }
        self.blank_pending = false;
    }

    fn end_block(&mut self) {
        self.flush_inline();
        self.blank_pending = true;
    }

    fn push_item(&mut self, marker: String, style: Style) {
        let width = display_width(&marker);
        self.containers.push(Container::Item {
            marker,
            width,
            style,
            pending: true,
        });
    }

    /// How many of the outer containers indent, and by how much.
    fn indenting(&self) -> (usize, usize) {
        let mut used = 0;
        for (i, container) in self.containers.iter().enumerate() {
            let w = container.width();
            if used + w + MIN_CONTENT > self.width {
                return (i, used);
            }
            used += w;
        }
        (self.containers.len(), used)
    }

    /// Columns left for content inside the containers.
    fn content_width(&self) -> usize {
        self.width.saturating_sub(self.indenting().1).max(1)
    }

    /// The indentation of the next line; its pending item markers are drawn (not on blank
    /// lines).
    fn prefix(&mut self, blank: bool) -> Pieces {
        let (count, _) = self.indenting();
        let quote = self.theme.style(Role::Quote);
        let mut pieces = Vec::new();
        for container in self.containers.iter_mut().take(count) {
            match container {
                Container::Quote => push_piece(&mut pieces, QUOTE_BAR, quote),
                Container::Item {
                    marker,
                    width,
                    style,
                    pending,
                } => {
                    if *pending && !blank {
                        *pending = false;
                        push_piece(&mut pieces, marker, *style);
                    } else {
                        push_piece(&mut pieces, &" ".repeat(*width), Style::default());
                    }
                }
            }
        }
        pieces
    }

    /// The pending markers of items nested too deep to indent, as inline text.
    fn overflow_markers(&mut self) -> Vec<Inline> {
        let (count, _) = self.indenting();
        let mut inlines = Vec::new();
        for container in self.containers.iter_mut().skip(count) {
            if let Container::Item {
                marker,
                style,
                pending,
                ..
            } = container
                && *pending
            {
                *pending = false;
                inlines.push(Inline::Text(marker.clone(), *style));
            }
        }
        inlines
    }

    /// Overflowing markers on a line of their own, before a block that is not text.
    fn overflow_markers_line(&mut self) {
        let markers = self.overflow_markers();
        if !markers.is_empty() {
            for (line, _) in wrap(&markers, self.content_width()) {
                self.emit(line);
            }
        }
    }

    /// Lays out the collected inline content.
    fn flush_inline(&mut self) {
        if self.inline.is_empty() || self.table.is_some() {
            return;
        }
        let mut inlines = self.overflow_markers();
        inlines.append(&mut self.inline);
        for (line, _) in wrap(&inlines, self.content_width()) {
            self.emit(line);
        }
    }

    fn code_block(&mut self, lang: &str, text: &str) {
        self.overflow_markers_line();
        let width = self.content_width();
        let indent = if width > CODE_INDENT + MIN_CONTENT {
            CODE_INDENT
        } else {
            0
        };
        for source_line in highlight::code_lines(lang, text, self.theme) {
            for (piece, _) in hard_wrap(&source_line, width - indent) {
                let mut line = Vec::new();
                push_piece(&mut line, &" ".repeat(indent), Style::default());
                line.extend(piece);
                self.emit(line);
            }
        }
    }

    /// Adds a line of content after the containers' prefix.
    fn emit(&mut self, content: Pieces) {
        let mut line = self.prefix(false);
        for (text, style) in content {
            push_piece(&mut line, &text, style);
        }
        trim_end(&mut line);
        self.out.push(to_line(line));
    }
}

fn to_line(pieces: Pieces) -> Line<'static> {
    Line::from(
        pieces
            .into_iter()
            .map(|(text, style)| Span::styled(text, style))
            .collect::<Vec<_>>(),
    )
}
