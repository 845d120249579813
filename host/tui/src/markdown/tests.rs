#![allow(clippy::unwrap_used)]

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

use super::render;
use crate::theme::Theme;

const COLOR: Theme = Theme { color: true };

/// The text of `lines`, one per line.
fn text(lines: &[Line<'_>]) -> String {
    lines
        .iter()
        .map(|line| {
            line.spans
                .iter()
                .map(|span| span.content.as_ref())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn plain(source: &str, width: u16) -> String {
    let lines = render(source, width, &Theme::plain());
    assert_fits(&lines, width);
    text(&lines)
}

/// The text of `lines` rendered with colours, styled spans marked: `**bold**`, `_italic_`,
/// `~~crossed~~`, `` `code` `` (Role::Code), `<link>`, `{dim}`, `«highlighted»` (RGB).
fn marked(source: &str, width: u16) -> String {
    let lines = render(source, width, &COLOR);
    assert_fits(&lines, width);
    lines
        .iter()
        .map(|line| {
            line.spans
                .iter()
                .map(|span| mark(&span.content, span.style))
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn mark(content: &str, style: Style) -> String {
    if content.trim().is_empty() {
        return content.to_owned();
    }
    let mut s = content.to_owned();
    let m = style.add_modifier;
    if m.contains(Modifier::CROSSED_OUT) {
        s = format!("~~{s}~~");
    }
    if m.contains(Modifier::ITALIC) {
        s = format!("_{s}_");
    }
    if m.contains(Modifier::BOLD) {
        s = format!("**{s}**");
    }
    if m.contains(Modifier::UNDERLINED) {
        s = format!("<{s}>");
    }
    if m.contains(Modifier::DIM) {
        s = format!("{{{s}}}");
    }
    match style.fg {
        Some(Color::Yellow) => s = format!("`{s}`"),
        Some(Color::Rgb(..)) => s = format!("«{s}»"),
        _ => {}
    }
    s
}

fn line_width(line: &Line<'_>) -> usize {
    line.spans
        .iter()
        .map(|span| {
            span.content
                .graphemes(true)
                .map(UnicodeWidthStr::width)
                .sum::<usize>()
        })
        .sum()
}

#[track_caller]
fn assert_fits(lines: &[Line<'_>], width: u16) {
    let width = usize::from(width.max(1));
    for line in lines {
        assert!(
            line_width(line) <= width && line.width() <= width,
            "line wider than {width}: {line:?}"
        );
        for span in &line.spans {
            assert!(
                !span.content.chars().any(|c| c.is_control()),
                "control character in {span:?}"
            );
        }
    }
}

const EVERYTHING: &str = r#"# Heading one

## Heading *two* with `code`

A paragraph with *emphasis*, **strong**, ~~struck~~ and `inline code`. It is long enough
to be wrapped at narrow widths, and it has a soft break above.
A hard break follows\
and a [link](https://example.com/docs) and <https://example.com/auto> and
[https://example.com/same](https://example.com/same).

- bullet one
- bullet two, long enough to wrap onto a second line when the width is thirty
  - nested bullet
    1. ordered inside
    2. second
- [ ] open task
- [x] done task

3. three
4. four

> A quote with **bold**.
>
> > A nested quote.

```rust
fn main() {
	println!("hi");
}
```

    indented code

| Left | Center | Right |
|:-----|:------:|------:|
| a    | b      | c     |
| long cell text | x | 42 |

---

Inline <b>html</b> and an image ![alt text](img.png) and a footnote[^1].

<div>
  html block
</div>

[^1]: The footnote text.
"#;

#[test]
fn everything_at_80() {
    insta::assert_snapshot!("everything_80", plain(EVERYTHING, 80));
}

#[test]
fn everything_at_30() {
    insta::assert_snapshot!("everything_30", plain(EVERYTHING, 30));
}

#[test]
fn everything_styled() {
    insta::assert_snapshot!("everything_styled_80", marked(EVERYTHING, 80));
}

#[test]
fn everything_at_tiny_widths_fits() {
    for width in 1..=40 {
        let lines = render(EVERYTHING, width, &COLOR);
        assert_fits(&lines, width);
        let lines = render(EVERYTHING, width, &Theme::plain());
        assert_fits(&lines, width);
    }
}

#[test]
fn width_zero_is_width_one() {
    let lines = render("hello *world*", 0, &Theme::plain());
    assert_fits(&lines, 1);
}

const WIDE: &str = "日本語のテキストはスペースなしで折り返されます。混合 text with 中文字符 and e\u{301}e\u{301}e\u{301} combining marks, 👩‍👩‍👧 family, and naïve cafe\u{301}s.\n\n# 見出しの長いテキスト\n\n- 項目のテキストがとても長いので折り返します";

#[test]
fn wide_and_combining_characters_wrap_by_display_width() {
    insta::assert_snapshot!("wide_30", plain(WIDE, 30));
    insta::assert_snapshot!("wide_11", plain(WIDE, 11));
    for width in 1..=12 {
        plain(WIDE, width);
    }
    // A combining mark stays with its letter.
    let out = plain("e\u{301}e\u{301}e\u{301}e\u{301}", 2);
    assert_eq!(out, "e\u{301}e\u{301}\ne\u{301}e\u{301}");
    // A wide character is two columns.
    assert_eq!(plain("日本語", 4), "日本\n語");
    // Wider than the whole width: an ellipsis instead.
    assert_eq!(plain("日", 1), "…");
}

const TABLE: &str = "| Name | Description | Default |\n|---|:---:|--:|\n| `width` | The number of columns the table may take before it has to shrink | 80 |\n| theme | Colours or none | auto |\n";

#[test]
fn tables_fit_and_shrink() {
    insta::assert_snapshot!("table_80", plain(TABLE, 80));
    insta::assert_snapshot!("table_30", plain(TABLE, 30));
    insta::assert_snapshot!("table_8", plain(TABLE, 8));
    insta::assert_snapshot!("table_styled_80", marked(TABLE, 80));
    for width in 1..=40 {
        plain(TABLE, width);
    }
}

#[test]
fn tables_too_wide_for_their_columns_become_records() {
    let header = (1..=12).map(|i| format!("c{i}")).collect::<Vec<_>>();
    let source = format!(
        "| {} |\n|{}\n| {} |\n| {} |\n",
        header.join(" | "),
        "---|".repeat(12),
        (1..=12)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(" | "),
        ["x"; 12].join(" | ")
    );
    let out = plain(&source, 40);
    assert!(out.starts_with("c1: 1\nc2: 2\n"), "{out}");
    assert!(out.contains("c12: 12\n────────────────────────────────────────\nc1: x\n"));
    // Wide enough: side by side.
    assert!(plain(&source, 80).starts_with("c1 │ c2 │"));
    // Only a header (the body has not streamed in yet).
    assert_eq!(plain("| a | b |\n|---|---|\n", 3), "a\nb");
}

#[test]
fn table_alignment() {
    let out = plain(
        "| a | b | c |\n|:--|:-:|--:|\n| x | y | z |\n| long | long | long |\n",
        80,
    );
    assert_eq!(
        out,
        "a    │  b   │    c\n─────┼──────┼─────\nx    │  y   │    z\nlong │ long │ long"
    );
}

const NESTED: &str = "- one\n  - two\n    - three, with text long enough to wrap at thirty columns\n      > quoted in a list\n      > > and nested\n- back\n\n> quote\n> - list in quote\n>   continued lazily\n> > inner quote\n> > ```\n> > code in quote\n> > ```\n\n1. first\n2. second\n3. third\n4. fourth\n5. fifth\n6. sixth\n7. seventh\n8. eighth\n9. ninth\n10. tenth, whose marker is wider so the text hangs further in\n";

#[test]
fn nested_lists_and_quotes() {
    insta::assert_snapshot!("nested_80", plain(NESTED, 80));
    insta::assert_snapshot!("nested_30", plain(NESTED, 30));
}

#[test]
fn deep_nesting_stays_within_the_width() {
    let quotes = format!("{} deep", ">".repeat(1000));
    let bullets = format!("{}deep", "- ".repeat(1000));
    let mut indented = String::new();
    for depth in 0..1000 {
        indented.push_str(&"  ".repeat(depth));
        indented.push_str("- item\n");
    }
    let ordered = format!("{}deep", "1. ".repeat(500));
    let mixed = "> - ".repeat(500) + "deep\n\n```\ncode\n```";
    for source in [&quotes, &bullets, &indented, &ordered, &mixed] {
        for width in [1, 2, 11, 30, 80] {
            let lines = render(source, width, &COLOR);
            assert_fits(&lines, width);
            let out = text(&lines).replace(['\n', ' '], "");
            assert!(
                out.contains("deep") || out.contains("item"),
                "{width}: {:?}",
                out.get(..200)
            );
        }
    }
    // The indentation stops where ten columns would be left.
    let lines = render(&quotes, 30, &Theme::plain());
    assert_eq!(text(&lines), "▌ ▌ ▌ ▌ ▌ ▌ ▌ ▌ ▌ ▌ deep");
}

#[test]
fn deeply_nested_markers_still_show() {
    let out = plain(&format!("{}deep", "- ".repeat(20)), 30);
    // Ten levels indent at width 30; the markers of the ten below go before the text.
    assert_eq!(
        out,
        "- - - - - - - - - - - - - - -\n                    - - - - -\n                    deep"
    );
}

#[test]
fn unterminated_fence_renders_as_code() {
    let source = "Here is the code:\n\n```rust\nfn main() {\n    let x = 1;";
    insta::assert_snapshot!("unterminated_80", plain(source, 80));
    insta::assert_snapshot!("unterminated_30", plain(source, 30));
    let lines = render(source, 80, &COLOR);
    assert_eq!(text(&lines[2..]), "  fn main() {\n      let x = 1;");
    // Highlighted as Rust, not shown as a paragraph.
    assert!(
        lines[2..]
            .iter()
            .flat_map(|l| &l.spans)
            .any(|s| matches!(s.style.fg, Some(Color::Rgb(..))))
    );
    // Just the opening fence: nothing yet, and no stray paragraph.
    assert_eq!(plain("```rust\n", 80), "");
    assert_eq!(plain("```rust", 80), "");
}

#[test]
fn streaming_a_code_block_highlights_like_rendering_it_whole() {
    let source = "```rust\n// streaming-test-marker\nstruct Point { x: i32, y: i32 }\n\nimpl Point {\n    /// Docs with \"quotes\n    fn new() -> Self {\n        Self { x: 1, y: 2 } // comment\n    }\n}\n```\n";
    let whole = render(source, 40, &COLOR);
    for end in 0..=source.len() {
        if !source.is_char_boundary(end) {
            continue;
        }
        let lines = render(&source[..end], 40, &COLOR);
        assert_fits(&lines, 40);
        // Every complete line is highlighted as in the whole block.
        let body = &source[..end];
        let complete = body.matches('\n').count().saturating_sub(1);
        for (i, line) in lines.iter().enumerate().take(complete.min(whole.len())) {
            if i + 1 < lines.len() {
                assert_eq!(line, &whole[i], "prefix of {end} bytes, line {i}");
            }
        }
    }
    assert_eq!(render(source, 40, &COLOR), whole);
}

#[test]
fn control_characters_are_escaped() {
    let source = "Text with \u{1b}[31mESC\u{1b}[0m, a CR\rhere, bidi \u{202e}reversed\u{202c} and zero\u{200b}width.\n\n```sh\necho \u{1b}]0;title\u{7} \u{202e}x\r\n```\n\n```\nplain \u{1b}[2J\u{8}\n```\n\n[l\u{1b}ink](http://x.test/\u{1b}y) [l\u{1b}ink](http://x.test/y\u{202e})";
    insta::assert_snapshot!("control_80", plain(source, 80));
    for width in [1, 5, 30, 80] {
        let lines = render(source, width, &COLOR);
        assert_fits(&lines, width);
        assert!(!text(&lines).contains('\u{1b}'));
    }
}

#[test]
fn code_tabs_expand_to_tab_stops() {
    let out = plain("```\n\tone\na\ttwo\nabcd\tthree\n```", 80);
    assert_eq!(out, "      one\n  a   two\n  abcd    three");
}

#[test]
fn long_code_lines_wrap_without_losing_indentation() {
    let out = plain(
        "```\n    let long = \"0123456789012345678901234567890\";\n```",
        20,
    );
    assert_eq!(
        out,
        "      let long = \"01\n  234567890123456789\n  01234567890\";"
    );
}

#[test]
fn links() {
    assert_eq!(
        marked("[docs](https://x.test)", 80),
        "<docs>{ (https://x.test)}"
    );
    assert_eq!(plain("<https://x.test/a>", 80), "https://x.test/a");
    assert_eq!(
        plain("[https://x.test](https://x.test)", 80),
        "https://x.test"
    );
    assert_eq!(plain("<me@x.test>", 80), "me@x.test");
    assert_eq!(plain("[a](b) [c]()", 80), "a (b) c");
    assert_eq!(plain("![alt](i.png)", 80), "[image: alt]");
    assert_eq!(
        plain("<https://x.test>[https://x.test](https://x.test)", 80),
        "https://x.testhttps://x.test"
    );
    assert_eq!(
        plain("[![logo](l.png)](https://x.test)", 80),
        "[image: logo] (https://x.test)"
    );
}

#[test]
fn span_styles() {
    let theme = COLOR;
    let lines = render("**b** _i_ ~~s~~ `c` [l](u)", 80, &theme);
    let spans = &lines[0].spans;
    let find = |content: &str| {
        spans
            .iter()
            .find(|s| s.content == content)
            .map(|s| s.style)
            .unwrap()
    };
    assert!(find("b").add_modifier.contains(Modifier::BOLD));
    assert!(find("i").add_modifier.contains(Modifier::ITALIC));
    assert!(find("s").add_modifier.contains(Modifier::CROSSED_OUT));
    assert_eq!(find("c").fg, Some(Color::Yellow));
    assert_eq!(find("l").fg, Some(Color::Blue));
    assert!(find("l").add_modifier.contains(Modifier::UNDERLINED));
    assert!(find(" (u)").add_modifier.contains(Modifier::DIM));
    let heading = render("# H", 80, &theme);
    assert!(
        heading[0]
            .spans
            .iter()
            .all(|s| s.style.fg == Some(Color::Magenta))
    );
}

#[test]
fn no_color_means_no_colours_anywhere() {
    let source = format!("{EVERYTHING}\n\n```python\ndef f():\n    return 1\n```\n");
    for width in [30, 80] {
        for line in render(&source, width, &Theme::plain()) {
            assert_eq!(line.style, Style::default());
            for span in &line.spans {
                assert_eq!(span.style.fg, None, "{span:?}");
                assert_eq!(span.style.bg, None, "{span:?}");
            }
        }
    }
}

#[test]
fn known_languages_are_highlighted_and_unknown_ones_are_code() {
    let rgb = |source: &str| {
        render(source, 80, &COLOR)
            .iter()
            .flat_map(|l| l.spans.clone())
            .filter(|s| !s.content.trim().is_empty())
            .map(|s| s.style.fg)
            .collect::<Vec<_>>()
    };
    for lang in [
        "rust", "rs", "py", "python", "js", "sh", "bash", "json", "c++", "go",
    ] {
        let fgs = rgb(&format!("```{lang}\nx = \"a\" // 1\n```"));
        assert!(
            fgs.iter().all(|fg| matches!(fg, Some(Color::Rgb(..)))),
            "{lang}: {fgs:?}"
        );
    }
    for lang in ["", "no-such-language", "text"] {
        let fgs = rgb(&format!("```{lang}\nx = 1\n```"));
        assert_eq!(fgs, vec![Some(Color::Yellow)], "{lang}");
    }
}

#[test]
fn big_code_blocks_are_not_highlighted() {
    let source = format!("```rust\n{}```", "let x = 1;\n".repeat(2_001));
    let lines = render(&source, 80, &COLOR);
    assert_eq!(lines.len(), 2_001);
    assert!(
        lines
            .iter()
            .flat_map(|l| &l.spans)
            .filter(|s| !s.content.trim().is_empty())
            .all(|s| s.style.fg == Some(Color::Yellow))
    );
}

#[test]
fn paragraphs_wrap_and_break_long_words() {
    assert_eq!(
        plain("the quick brown fox jumps over the lazy dog", 10),
        "the quick\nbrown fox\njumps over\nthe lazy\ndog"
    );
    assert_eq!(plain("a abcdefghijklmnop", 6), "a abcd\nefghij\nklmnop");
    assert_eq!(
        plain("one\\\ntwo  \nthree\nfour", 80),
        "one\ntwo\nthree four"
    );
}

/// A small deterministic generator, for inputs no one would write.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn random_input_never_panics_and_fits() {
    const PIECES: &[&str] = &[
        "#",
        "##### ",
        "*",
        "**",
        "_",
        "~~",
        "`",
        "```",
        "```rust\n",
        "~~~",
        "\n",
        "\n\n",
        " ",
        "    ",
        "\t",
        ">",
        "> ",
        "- ",
        "* ",
        "1. ",
        "99999999999. ",
        "[",
        "]",
        "(",
        ")",
        "![",
        "<",
        ">",
        "http://x.test",
        "|",
        "|---|",
        ":-:",
        "\\",
        "[^1]",
        "[^1]: ",
        "---",
        "***",
        "<div>",
        "</div>",
        "<!--",
        "-->",
        "&amp;",
        "&#0;",
        "[ ]",
        "[x]",
        "word",
        "日本",
        "e\u{301}",
        "\u{1b}",
        "\r",
        "\u{202e}",
        "\u{200b}",
        "\u{0}",
        "\u{7f}",
        "\u{85}",
        "👩‍👩‍👧",
        "\u{fe0f}",
        "\u{ffff}",
        "\u{10ffff}",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..400 {
        let mut source = String::new();
        for _ in 0..rng.below(80) {
            source.push_str(PIECES[rng.below(PIECES.len())]);
        }
        let width = [1, 2, 3, 7, 12, 30, 80][rng.below(7)];
        let lines = render(&source, width, &COLOR);
        assert_fits(&lines, width);
    }
    // Pathological repetitions.
    for piece in [
        "*", "_", "[", "](", "`", "~", "<", "|", "|-", "\\", "&", "#", "> -", "1.", "\t",
    ] {
        let source = format!("{}\n{}\n", piece.repeat(3_000), piece.repeat(3_000));
        for width in [1, 30] {
            assert_fits(&render(&source, width, &COLOR), width);
        }
    }
    // Random bytes, as text.
    for _ in 0..200 {
        let bytes: Vec<u8> = (0..rng.below(200)).map(|_| rng.next() as u8).collect();
        let source = String::from_utf8_lossy(&bytes);
        for width in [1, 2, 40] {
            assert_fits(&render(&source, width, &COLOR), width);
        }
    }
}

/// About 20 KB of a typical assistant message.
fn message_20kb() -> String {
    let section = "## Changes\n\nThe renderer now wraps **paragraphs** by display width, keeps `inline code` \
        intact and shows [links](https://example.com/a/long/path) with their URL. It also handles \
        *emphasis* and ~~strikethrough~~.\n\n- first point, which is long enough to wrap at eighty columns \
        once it goes on for a while\n- second point\n  - nested point\n1. one\n2. two\n\n> A quote that \
        explains something important.\n\n| File | Lines | Notes |\n|---|--:|---|\n| `markdown.rs` | 420 | \
        the renderer |\n| `wrap.rs` | 180 | wrapping |\n\n```rust\nfn main() {\n    let x = vec![1, 2, 3];\n    \
        println!(\"{x:?}\");\n}\n```\n\n";
    let mut out = String::new();
    while out.len() < 20_000 {
        out.push_str(section);
    }
    out
}

#[test]
fn a_20kb_message_renders() {
    let source = message_20kb();
    for width in [30, 80, 120] {
        assert_fits(&render(&source, width, &COLOR), width);
    }
}

/// `cargo test --release -p rho-tui markdown::tests::timing -- --ignored --nocapture`
#[test]
#[ignore = "timing, run in release"]
#[allow(clippy::print_stderr)]
fn timing() {
    use std::time::Instant;
    let source = message_20kb();
    let started = Instant::now();
    render(&source, 80, &COLOR);
    eprintln!("first render (loads syntect): {:?}", started.elapsed());
    for (name, theme) in [("colour", COLOR), ("plain", Theme::plain())] {
        let runs = 50;
        let started = Instant::now();
        for _ in 0..runs {
            render(&source, 80, &theme);
        }
        eprintln!(
            "{} bytes, {name}: {:?} per render",
            source.len(),
            started.elapsed() / runs
        );
    }
    // Streaming: every 40 bytes a new render of the text so far.
    let mut ends: Vec<usize> = (0..source.len()).step_by(40).collect();
    ends.push(source.len());
    let started = Instant::now();
    let mut worst = std::time::Duration::ZERO;
    for end in &ends {
        let t = Instant::now();
        render(&source[..*end], 80, &COLOR);
        worst = worst.max(t.elapsed());
    }
    eprintln!(
        "streamed in {} steps: {:?} per render, worst {worst:?}",
        ends.len(),
        started.elapsed() / ends.len() as u32
    );
    // A 20 KB code block, highlighted from scratch and then cached.
    let code = format!(
        "```rust\n{}```\n",
        "fn f(x: u32) -> u32 { x + 1 } // add one\n".repeat(480)
    );
    let started = Instant::now();
    render(&code, 80, &COLOR);
    eprintln!(
        "{} bytes of Rust, first: {:?}",
        code.len(),
        started.elapsed()
    );
    let started = Instant::now();
    render(&code, 80, &COLOR);
    eprintln!(
        "{} bytes of Rust, cached: {:?}",
        code.len(),
        started.elapsed()
    );
}
