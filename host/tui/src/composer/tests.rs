use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::{Buffer, CellWidth};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};

use super::*;
use crate::theme::{Role, Theme};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn with(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

fn ctrl(c: char) -> KeyEvent {
    with(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn alt(c: char) -> KeyEvent {
    with(KeyCode::Char(c), KeyModifiers::ALT)
}

/// Types `text` key by key (a newline as Shift-Enter).
fn type_text(composer: &mut Composer, text: &str) {
    for c in text.chars() {
        let event = match c {
            '\n' => with(KeyCode::Enter, KeyModifiers::SHIFT),
            c => key(KeyCode::Char(c)),
        };
        composer.handle_key(event);
        check(composer);
    }
}

fn typed(text: &str) -> Composer {
    let mut composer = Composer::new();
    type_text(&mut composer, text);
    composer
}

fn press(composer: &mut Composer, event: KeyEvent, times: usize) {
    for _ in 0..times {
        composer.handle_key(event);
        check(composer);
    }
}

fn lines(n: usize) -> String {
    (1..=n)
        .map(|i| format!("line {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The invariants every state keeps.
fn check(c: &Composer) {
    assert!(c.cursor <= c.buf.len(), "cursor past the end");
    assert!(
        c.buf.is_char_boundary(c.cursor),
        "cursor off a char boundary"
    );
    assert!(!c.buf.contains('\r'));
    let mut last = 0;
    for p in &c.pastes {
        assert!(last <= p.start && p.start < p.end && p.end <= c.buf.len());
        assert!(c.buf[p.start..p.end].starts_with("[Pasted text #"));
        assert!(c.buf[p.start..p.end].ends_with(']'));
        assert!(
            !(p.start < c.cursor && c.cursor < p.end),
            "cursor inside a placeholder"
        );
        last = p.end;
    }
    let text = c.text();
    assert!(text.len() <= MAX_BYTES);
    assert_eq!(c.expanded_len(), text.len());
}

/// Renders into a `width`x`height` buffer: its rows between bars, then the cursor.
fn screen(c: &Composer, width: u16, height: u16) -> String {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    let cursor = c.render(area, &mut buf, &Theme::plain());
    let mut out = String::new();
    for y in 0..height {
        out.push('|');
        let mut x = 0;
        while x < width {
            let symbol = buf[(x, y)].symbol();
            assert!(!symbol.contains(char::is_control), "a control char drawn");
            out.push_str(symbol);
            x += symbol.cell_width().max(1);
        }
        out.push_str("|\n");
    }
    out.push_str(&format!("cursor: {:?}", cursor.map(|p| (p.x, p.y))));
    out
}

fn history(c: &Composer) -> Vec<&str> {
    c.history().collect()
}

fn cursor_at(c: &Composer, width: u16, height: u16) -> (u16, u16) {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    let p = c.render(area, &mut buf, &Theme::plain()).unwrap();
    (p.x, p.y)
}

// ---- Submitting and newlines ----

#[test]
fn enter_submits_clears_and_pushes_history() {
    let mut c = typed("hello rho");
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        Outcome::Submitted("hello rho".into())
    );
    assert!(c.is_empty());
    assert_eq!(history(&c), ["hello rho"]);
}

#[test]
fn enter_on_blank_text_is_unchanged() {
    let mut c = Composer::new();
    assert_eq!(c.handle_key(key(KeyCode::Enter)), Outcome::Unchanged);
    type_text(&mut c, "  \n ");
    assert_eq!(c.handle_key(key(KeyCode::Enter)), Outcome::Unchanged);
    assert_eq!(c.text(), "  \n ");
    assert_eq!(c.history().len(), 0);
}

#[test]
fn newline_keys_insert_a_line_break() {
    let newline_keys = [
        with(KeyCode::Enter, KeyModifiers::SHIFT),
        with(KeyCode::Enter, KeyModifiers::ALT),
        with(KeyCode::Enter, KeyModifiers::CONTROL),
        ctrl('j'),
        key(KeyCode::Char('\n')),
    ];
    for event in newline_keys {
        let mut c = typed("a");
        assert_eq!(c.handle_key(event), Outcome::Changed, "{event:?}");
        type_text(&mut c, "b");
        assert_eq!(c.text(), "a\nb", "{event:?}");
    }
}

#[test]
fn backslash_enter_is_a_newline() {
    let mut c = typed("first\\");
    assert_eq!(c.handle_key(key(KeyCode::Enter)), Outcome::Changed);
    assert_eq!(c.text(), "first\n");
    type_text(&mut c, "second");
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        Outcome::Submitted("first\nsecond".into())
    );
}

#[test]
fn key_releases_do_nothing() {
    let mut c = typed("ab");
    let release = KeyEvent::new_with_kind(
        KeyCode::Char('x'),
        KeyModifiers::NONE,
        KeyEventKind::Release,
    );
    assert_eq!(c.handle_key(release), Outcome::Unchanged);
    let release =
        KeyEvent::new_with_kind(KeyCode::Enter, KeyModifiers::NONE, KeyEventKind::Release);
    assert_eq!(c.handle_key(release), Outcome::Unchanged);
    assert_eq!(c.text(), "ab");
    let repeat =
        KeyEvent::new_with_kind(KeyCode::Char('c'), KeyModifiers::NONE, KeyEventKind::Repeat);
    assert_eq!(c.handle_key(repeat), Outcome::Changed);
    assert_eq!(c.text(), "abc");
}

#[test]
fn keys_for_the_caller_are_ignored() {
    let mut c = typed("draft");
    for event in [
        key(KeyCode::Esc),
        ctrl('c'),
        key(KeyCode::PageUp),
        key(KeyCode::PageDown),
        key(KeyCode::Tab),
        key(KeyCode::BackTab),
        key(KeyCode::F(1)),
        ctrl('l'),
        alt('x'),
        with(KeyCode::Char('a'), KeyModifiers::SUPER),
    ] {
        assert_eq!(c.handle_key(event), Outcome::Ignored, "{event:?}");
    }
    assert_eq!(c.text(), "draft");
    assert_eq!(c.cursor(), 5);
}

#[test]
fn ctrl_d_deletes_forward_or_is_ignored_when_empty() {
    let mut c = Composer::new();
    assert_eq!(c.handle_key(ctrl('d')), Outcome::Ignored);
    type_text(&mut c, "ab");
    press(&mut c, key(KeyCode::Home), 1);
    assert_eq!(c.handle_key(ctrl('d')), Outcome::Changed);
    assert_eq!(c.text(), "b");
}

#[test]
fn uppercase_and_altgr_characters_are_typed() {
    let mut c = Composer::new();
    c.handle_key(with(KeyCode::Char('A'), KeyModifiers::SHIFT));
    c.handle_key(with(
        KeyCode::Char('@'),
        KeyModifiers::CONTROL | KeyModifiers::ALT,
    ));
    assert_eq!(c.text(), "A@");
}

// ---- Editing ----

#[test]
fn graphemes_are_edited_whole() {
    // "e" + combining acute: one grapheme of two chars.
    let mut c = typed("ae\u{301}b");
    press(&mut c, key(KeyCode::Left), 1);
    assert_eq!(c.cursor(), 4);
    press(&mut c, key(KeyCode::Left), 1);
    assert_eq!(c.cursor(), 1);
    press(&mut c, key(KeyCode::Delete), 1);
    assert_eq!(c.text(), "ab");

    // A ZWJ family and a flag: one grapheme each.
    let mut c = typed("x👨\u{200d}👩\u{200d}👧🇫🇷");
    press(&mut c, key(KeyCode::Backspace), 1);
    assert_eq!(c.text(), "x👨\u{200d}👩\u{200d}👧");
    press(&mut c, key(KeyCode::Backspace), 1);
    assert_eq!(c.text(), "x");

    let mut c = typed("日本語");
    press(&mut c, key(KeyCode::Left), 1);
    assert_eq!(c.cursor(), 6);
    press(&mut c, key(KeyCode::Backspace), 1);
    assert_eq!(c.text(), "日語");
    press(&mut c, ctrl('b'), 1);
    press(&mut c, ctrl('f'), 2);
    assert_eq!(c.cursor(), 6);
    assert_eq!(c.handle_key(key(KeyCode::Right)), Outcome::Unchanged);
    press(&mut c, ctrl('h'), 1);
    assert_eq!(c.text(), "日");
}

#[test]
fn word_motions() {
    let mut c = typed("hello, wide world");
    press(&mut c, with(KeyCode::Left, KeyModifiers::CONTROL), 1);
    assert_eq!(c.cursor(), 12);
    press(&mut c, alt('b'), 1);
    assert_eq!(c.cursor(), 7);
    press(&mut c, with(KeyCode::Left, KeyModifiers::ALT), 1);
    assert_eq!(c.cursor(), 5, "punctuation is a word of its own");
    press(&mut c, alt('b'), 1);
    assert_eq!(c.cursor(), 0);
    assert_eq!(c.handle_key(alt('b')), Outcome::Unchanged);
    press(&mut c, alt('f'), 1);
    assert_eq!(c.cursor(), 5);
    press(&mut c, with(KeyCode::Right, KeyModifiers::CONTROL), 2);
    assert_eq!(c.cursor(), 11);
    press(&mut c, alt('f'), 1);
    assert_eq!(c.cursor(), 17);
}

#[test]
fn home_end_and_their_emacs_keys_work_on_the_line() {
    let mut c = typed("one\ntwo\nthree");
    press(&mut c, key(KeyCode::Up), 1);
    assert_eq!(c.cursor(), 7);
    press(&mut c, key(KeyCode::Home), 1);
    assert_eq!(c.cursor(), 4);
    press(&mut c, ctrl('e'), 1);
    assert_eq!(c.cursor(), 7);
    press(&mut c, ctrl('a'), 1);
    assert_eq!(c.cursor(), 4);
    press(&mut c, key(KeyCode::End), 1);
    assert_eq!(c.cursor(), 7);
    press(&mut c, with(KeyCode::Home, KeyModifiers::CONTROL), 1);
    assert_eq!(c.cursor(), 0);
    press(&mut c, with(KeyCode::End, KeyModifiers::CONTROL), 1);
    assert_eq!(c.cursor(), 13);
}

#[test]
fn ctrl_u_and_ctrl_k_delete_to_the_line_edges_then_join_lines() {
    let mut c = typed("one\ntwo three");
    press(&mut c, ctrl('u'), 1);
    assert_eq!(c.text(), "one\n");
    press(&mut c, ctrl('u'), 1);
    assert_eq!(c.text(), "one");
    press(&mut c, ctrl('u'), 1);
    assert_eq!(c.text(), "");
    assert_eq!(c.handle_key(ctrl('u')), Outcome::Unchanged);

    let mut c = typed("one\ntwo");
    press(&mut c, with(KeyCode::Home, KeyModifiers::CONTROL), 1);
    press(&mut c, key(KeyCode::Right), 1);
    press(&mut c, ctrl('k'), 1);
    assert_eq!(c.text(), "o\ntwo");
    press(&mut c, ctrl('k'), 1);
    assert_eq!(c.text(), "otwo");
    assert_eq!(c.cursor(), 1);
    press(&mut c, ctrl('y'), 1);
    assert_eq!(c.text(), "o\ntwo", "Ctrl-Y yanks the last deletion");
}

#[test]
fn ctrl_w_deletes_a_whitespace_word_alt_backspace_a_word() {
    let mut c = typed("cd ~/src/rho-tui");
    press(&mut c, ctrl('w'), 1);
    assert_eq!(c.text(), "cd ");
    press(&mut c, ctrl('w'), 1);
    assert_eq!(c.text(), "");

    let mut c = typed("cd ~/src/rho-tui  ");
    press(&mut c, with(KeyCode::Backspace, KeyModifiers::ALT), 1);
    assert_eq!(c.text(), "cd ~/src/rho-");
    press(&mut c, with(KeyCode::Backspace, KeyModifiers::CONTROL), 1);
    assert_eq!(c.text(), "cd ~/src/rho");
    press(&mut c, ctrl('y'), 1);
    assert_eq!(c.text(), "cd ~/src/rho-");

    let mut c = typed("fix this bug");
    press(&mut c, with(KeyCode::Home, KeyModifiers::NONE), 1);
    press(&mut c, alt('d'), 1);
    assert_eq!(c.text(), " this bug");
    press(&mut c, with(KeyCode::Delete, KeyModifiers::CONTROL), 1);
    assert_eq!(c.text(), " bug");
}

#[test]
fn up_and_down_move_between_hard_lines_keeping_the_column() {
    let mut c = typed("abcdef\nab\nabcdef");
    press(&mut c, key(KeyCode::Up), 1);
    assert_eq!(c.cursor(), 9, "end of the short line");
    press(&mut c, key(KeyCode::Up), 1);
    assert_eq!(c.cursor(), 6, "the goal column is kept");
    press(&mut c, key(KeyCode::Down), 2);
    assert_eq!(c.cursor(), 16);
    press(&mut c, ctrl('p'), 1);
    press(&mut c, key(KeyCode::Left), 1);
    press(&mut c, ctrl('n'), 1);
    assert_eq!(c.cursor(), 11, "a sideways move resets the goal column");
}

#[test]
fn up_and_down_move_between_wrapped_rows() {
    let mut c = typed("aaaa bbbb cccc dddd");
    // 12 columns: a text width of 10.
    assert_eq!(c.desired_height(12), 2);
    let _ = screen(&c, 12, 2);
    assert_eq!(cursor_at(&c, 12, 2), (11, 1));
    press(&mut c, key(KeyCode::Up), 1);
    assert_eq!(c.cursor(), 9);
    assert_eq!(cursor_at(&c, 12, 2), (11, 0));
    press(&mut c, key(KeyCode::Down), 1);
    assert_eq!(c.cursor(), 19);
}

#[test]
fn up_without_history_goes_to_the_start_and_down_to_the_end() {
    let mut c = typed("abc");
    assert_eq!(c.handle_key(key(KeyCode::Up)), Outcome::Changed);
    assert_eq!(c.cursor(), 0);
    assert_eq!(c.handle_key(key(KeyCode::Up)), Outcome::Unchanged);
    assert_eq!(c.handle_key(key(KeyCode::Down)), Outcome::Changed);
    assert_eq!(c.cursor(), 3);
    assert_eq!(c.handle_key(key(KeyCode::Down)), Outcome::Unchanged);
}

#[test]
fn typing_past_the_limit_is_refused() {
    let mut c = Composer::new();
    c.set_text(&"x".repeat(MAX_BYTES - 1));
    assert_eq!(c.handle_key(key(KeyCode::Char('a'))), Outcome::Changed);
    assert_eq!(c.handle_key(key(KeyCode::Char('b'))), Outcome::Unchanged);
    assert!(!c.paste("cd"));
    assert_eq!(c.text().len(), MAX_BYTES);
    press(&mut c, key(KeyCode::Backspace), 2);
    assert!(!c.paste("abc"), "a paste is refused whole");
    assert!(c.paste("ab"));
    assert_eq!(c.text().len(), MAX_BYTES);

    c.set_text(&"é".repeat(MAX_BYTES));
    check(&c);
    assert_eq!(c.text().len(), MAX_BYTES, "set_text truncates");
}

#[test]
fn folded_pastes_count_their_payload_toward_the_limit() {
    let mut c = Composer::new();
    c.set_text(&"x".repeat(MAX_BYTES - 2000));
    let big = "y".repeat(2001);
    assert!(!c.paste(&big));
    assert!(c.pastes.is_empty());
    assert!(c.paste(&"y".repeat(1999)));
    assert_eq!(c.text().len(), MAX_BYTES - 1);
    check(&c);
}

// ---- History ----

#[test]
fn history_recall_keeps_the_draft() {
    let mut c = Composer::new();
    c.push_history("first".into());
    c.push_history("second\nlines".into());
    type_text(&mut c, "my draft");
    press(&mut c, key(KeyCode::Left), 2);

    assert_eq!(c.handle_key(key(KeyCode::Up)), Outcome::Changed);
    assert_eq!(c.text(), "second\nlines");
    assert_eq!(c.cursor(), 6, "at the end of the first line");
    assert_eq!(c.handle_key(key(KeyCode::Up)), Outcome::Changed);
    assert_eq!(c.text(), "first");
    assert_eq!(c.handle_key(key(KeyCode::Up)), Outcome::Changed);
    assert_eq!(c.cursor(), 0, "no older entry: to the start");
    assert_eq!(c.handle_key(key(KeyCode::Up)), Outcome::Unchanged);

    press(&mut c, key(KeyCode::Down), 1);
    assert_eq!(c.text(), "second\nlines");
    assert_eq!(c.cursor(), 12, "at the end going forward");
    press(&mut c, key(KeyCode::Down), 1);
    assert_eq!(c.text(), "my draft");
    assert_eq!(c.cursor(), 6, "the draft's cursor is back too");
    assert_eq!(c.handle_key(key(KeyCode::Down)), Outcome::Changed);
    assert_eq!(c.cursor(), 8);
    assert_eq!(c.handle_key(key(KeyCode::Down)), Outcome::Unchanged);
}

#[test]
fn history_edits_are_kept_until_submit() {
    let mut c = Composer::new();
    c.push_history("first".into());
    c.push_history("second".into());
    press(&mut c, key(KeyCode::Up), 1);
    type_text(&mut c, "!");
    assert_eq!(c.text(), "second!");
    press(&mut c, key(KeyCode::Up), 1);
    assert_eq!(c.text(), "first");
    press(&mut c, key(KeyCode::Down), 1);
    assert_eq!(c.text(), "second!");
    press(&mut c, key(KeyCode::Down), 1);
    assert_eq!(c.text(), "");
    press(&mut c, key(KeyCode::Up), 1);
    assert_eq!(c.text(), "second!");
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        Outcome::Submitted("second!".into())
    );
    assert_eq!(history(&c), ["first", "second", "second!"]);
    press(&mut c, key(KeyCode::Up), 2);
    assert_eq!(c.text(), "second", "the entry itself never changed");
}

#[test]
fn recalled_pastes_come_back_folded() {
    let mut c = typed("see ");
    c.paste(&lines(30));
    let sent = format!("see {}", lines(30));
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        Outcome::Submitted(sent.clone())
    );
    assert_eq!(history(&c), [sent.as_str()]);
    type_text(&mut c, "draft");
    press(&mut c, key(KeyCode::Up), 1);
    assert_eq!(c.buffer(), "see [Pasted text #1 +30 lines]");
    assert_eq!(c.text(), sent);
    assert_eq!(c.cursor(), c.buffer().len());
    press(&mut c, key(KeyCode::Backspace), 1);
    assert_eq!(c.text(), "see ");
    press(&mut c, key(KeyCode::Down), 1);
    assert_eq!(c.text(), "draft");
    press(&mut c, key(KeyCode::Up), 1);
    assert_eq!(c.text(), "see ", "the edit is kept");
    c.clear();
    press(&mut c, key(KeyCode::Up), 1);
    assert_eq!(c.text(), sent, "and dropped by clear");
}

#[test]
fn history_skips_blanks_and_repeats_and_is_bounded() {
    let mut c = Composer::new();
    c.push_history("  ".into());
    c.push_history("same".into());
    c.push_history("same".into());
    assert_eq!(history(&c), ["same"]);
    for i in 0..HISTORY_LIMIT + 5 {
        c.push_history(format!("entry {i}"));
    }
    assert_eq!(c.history().len(), HISTORY_LIMIT);
    assert_eq!(c.history().next(), Some("entry 5"));
}

#[test]
fn take_set_text_and_clear() {
    let mut c = typed("abc");
    c.set_text("x\r\ny");
    assert_eq!(c.text(), "x\ny");
    assert_eq!(c.cursor(), 3);
    assert_eq!(c.take(), "x\ny");
    assert!(c.is_empty());
    assert_eq!(history(&c), ["x\ny"]);
    type_text(&mut c, "zz");
    c.clear();
    assert!(c.is_empty());
    assert_eq!(c.cursor(), 0);
    assert_eq!(c.take(), "");
    assert_eq!(c.history().len(), 1, "an empty take is not history");
}

// ---- Pastes ----

#[test]
fn small_pastes_are_inserted_and_crlf_becomes_lf() {
    let mut c = typed("ab");
    press(&mut c, key(KeyCode::Left), 1);
    assert!(c.paste("1\r\n2\r3\n4"));
    check(&c);
    assert_eq!(c.text(), "a1\n2\n3\n4b");
    assert_eq!(c.buffer(), c.text());
    assert_eq!(c.cursor(), 8);
    assert!(c.paste(""));
}

#[test]
fn large_pastes_fold_into_placeholders() {
    let mut c = typed("see ");
    let six = lines(6);
    assert!(c.paste(&six.replace('\n', "\r\n")));
    type_text(&mut c, " and ");
    let long = "z".repeat(FOLD_CHARS + 1);
    assert!(c.paste(&long));
    check(&c);
    assert_eq!(
        c.buffer(),
        "see [Pasted text #1 +6 lines] and [Pasted text #2 +1 line]"
    );
    assert_eq!(c.text(), format!("see {six} and {long}"));

    // At the thresholds: inserted as text.
    let mut c = Composer::new();
    assert!(c.paste(&lines(FOLD_LINES)));
    assert!(c.paste(&"q".repeat(FOLD_CHARS - c.text().chars().count())));
    assert!(c.pastes.is_empty());
}

#[test]
fn backspace_and_delete_remove_a_placeholder_whole() {
    let mut c = typed("a");
    c.paste(&lines(10));
    type_text(&mut c, "b");
    press(&mut c, key(KeyCode::Left), 1);
    assert_eq!(c.handle_key(key(KeyCode::Backspace)), Outcome::Changed);
    assert_eq!(c.buffer(), "ab");
    assert_eq!(c.text(), "ab");
    assert_eq!(c.cursor(), 1);

    c.paste(&lines(10));
    press(&mut c, key(KeyCode::Left), 1);
    assert_eq!(c.cursor(), 1);
    assert_eq!(c.handle_key(key(KeyCode::Delete)), Outcome::Changed);
    assert_eq!(c.text(), "ab");
    c.paste(&lines(7));
    assert_eq!(
        c.buffer(),
        "a[Pasted text #3 +7 lines]b",
        "numbers count up"
    );
}

#[test]
fn cursor_moves_skip_over_placeholders() {
    let mut c = typed("a");
    c.paste(&lines(10));
    type_text(&mut c, "b");
    let label_end = c.buffer().len() - 1;
    press(&mut c, key(KeyCode::Left), 1);
    assert_eq!(c.cursor(), label_end);
    press(&mut c, key(KeyCode::Left), 1);
    assert_eq!(c.cursor(), 1);
    press(&mut c, key(KeyCode::Right), 1);
    assert_eq!(c.cursor(), label_end);
    press(&mut c, alt('b'), 1);
    assert_eq!(c.cursor(), 1, "a placeholder is a word by itself");
    press(&mut c, alt('f'), 1);
    assert_eq!(c.cursor(), label_end);
    press(&mut c, ctrl('w'), 1);
    assert_eq!(
        c.text(),
        "b",
        "Ctrl-W takes the placeholder and the word glued to it"
    );
    press(&mut c, ctrl('y'), 1);
    assert_eq!(c.text(), format!("a{}b", lines(10)));
    check(&c);
    assert_eq!(c.pastes.len(), 1, "a large yank folds again");
}

#[test]
fn up_and_down_never_land_inside_a_placeholder() {
    let mut c = typed("0123456789");
    type_text(&mut c, "\n");
    c.paste(&lines(8));
    press(&mut c, key(KeyCode::Up), 1);
    press(&mut c, key(KeyCode::End), 1);
    press(&mut c, key(KeyCode::Down), 1);
    check(&c);
    assert_eq!(c.cursor(), 11, "column 10 is within the label: before it");
    press(&mut c, key(KeyCode::Up), 1);
    press(&mut c, key(KeyCode::Down), 1);
    assert_eq!(c.cursor(), 11);
}

#[test]
fn control_characters_are_kept_but_shown_escaped() {
    let mut c = Composer::new();
    assert!(c.paste("a\u{1b}[31mb\tc\u{7}"));
    assert_eq!(c.text(), "a\u{1b}[31mb\tc\u{7}");
    let shown = screen(&c, 40, 1);
    assert_eq!(
        shown,
        "|› a\\u{1b}[31mb    c\\u{7}                |\ncursor: Some((24, 0))"
    );
    // Typed control characters (other than newlines) are not text.
    assert_eq!(c.handle_key(key(KeyCode::Char('\u{1b}'))), Outcome::Ignored);
}

#[test]
fn a_lone_combining_mark_is_shown_escaped() {
    let mut c = Composer::new();
    c.paste("\u{301}x");
    assert_eq!(
        screen(&c, 20, 1),
        "|› \\u{301}x          |\ncursor: Some((10, 0))"
    );
}

// ---- Tokens ----

#[test]
fn slash_tokens() {
    let mut c = typed("/mo");
    let token = c.token_at_cursor().unwrap();
    assert_eq!(
        token,
        Token {
            kind: TokenKind::Slash,
            start: 0,
            end: 3,
            text: "mo".into()
        }
    );
    c.replace_token(&token, "/model ");
    assert_eq!(c.text(), "/model ");
    assert_eq!(c.cursor(), 7);
    assert_eq!(c.token_at_cursor(), None, "past the first word");
    press(&mut c, key(KeyCode::Left), 3);
    assert_eq!(c.token_at_cursor().unwrap().text, "model");
    press(&mut c, key(KeyCode::Home), 1);
    assert_eq!(c.token_at_cursor(), None, "before the slash");

    let c = typed("/");
    assert_eq!(c.token_at_cursor().unwrap().text, "");
    let c = typed("a /b");
    assert_eq!(c.token_at_cursor(), None, "not at the start");
}

#[test]
fn at_tokens() {
    let mut c = typed("look at @src/ma");
    let token = c.token_at_cursor().unwrap();
    assert_eq!(
        token,
        Token {
            kind: TokenKind::At,
            start: 8,
            end: 15,
            text: "src/ma".into()
        }
    );
    press(&mut c, key(KeyCode::Left), 3);
    assert_eq!(c.token_at_cursor(), Some(token.clone()), "within the word");
    press(&mut c, key(KeyCode::End), 1);
    c.replace_token(&token, "@src/main.rs ");
    assert_eq!(c.text(), "look at @src/main.rs ");
    assert_eq!(c.cursor(), 21);
    assert_eq!(c.token_at_cursor(), None);

    assert_eq!(typed("mail a@b.c").token_at_cursor(), None);
    assert_eq!(typed("x @").token_at_cursor().unwrap().text, "");
    assert_eq!(
        typed("/cmd @fi").token_at_cursor().unwrap().kind,
        TokenKind::At
    );
    assert_eq!(typed("@日本").token_at_cursor().unwrap().text, "日本");
}

#[test]
fn a_stale_token_is_not_replaced() {
    let mut c = typed("@ab");
    let token = c.token_at_cursor().unwrap();
    type_text(&mut c, "c");
    c.replace_token(&token, "@zzz");
    assert_eq!(c.text(), "@abc");
    press(&mut c, key(KeyCode::Home), 1);
    type_text(&mut c, "x");
    let moved = Token {
        start: 1,
        end: 4,
        ..token.clone()
    };
    c.replace_token(&moved, "@zzz");
    assert_eq!(c.text(), "x@abc", "not a whole word");
    c.replace_token(
        &Token {
            start: 90,
            end: 99,
            ..token
        },
        "@zzz",
    );
    assert_eq!(c.text(), "x@abc");
}

#[test]
fn tokens_stop_at_placeholders() {
    let mut c = typed("@fo");
    c.paste(&lines(6));
    assert_eq!(c.token_at_cursor(), None);
    press(&mut c, key(KeyCode::Left), 1);
    let token = c.token_at_cursor().unwrap();
    assert_eq!((token.start, token.end, token.text.as_str()), (0, 3, "fo"));
    c.replace_token(&token, "@foo.rs");
    assert_eq!(c.text(), format!("@foo.rs{}", lines(6)));
    check(&c);
}

// ---- Layout ----

#[test]
fn wide_characters_move_the_cursor_two_columns() {
    let mut c = typed("日本語");
    assert_eq!(cursor_at(&c, 40, 1), (8, 0));
    press(&mut c, key(KeyCode::Left), 1);
    assert_eq!(cursor_at(&c, 40, 1), (6, 0));
    // 7 columns: 5 for text, 4 of them for visible units, so 語 goes to the next row.
    let mut c = typed("日本語");
    assert_eq!(c.desired_height(7), 2);
    assert_eq!(
        screen(&c, 7, 2),
        "|› 日本 |\n|  語   |\ncursor: Some((4, 1))"
    );
    press(&mut c, key(KeyCode::Up), 1);
    assert_eq!(
        c.cursor(),
        3,
        "column 2 on the row above is between 日 and 本"
    );
    press(&mut c, key(KeyCode::Right), 1);
    press(&mut c, key(KeyCode::Down), 1);
    assert_eq!(c.cursor(), 9, "column 4 is past 語: its end");
}

#[test]
fn desired_height_counts_wrapped_rows() {
    assert_eq!(Composer::new().desired_height(40), 1);
    assert_eq!(typed("a\nb\nc").desired_height(40), 3);
    assert_eq!(typed(&"x".repeat(100)).desired_height(42), 3);
    // The last column is for the cursor or a hanging space.
    assert_eq!(typed(&"x".repeat(39)).desired_height(42), 1);
    assert_eq!(typed(&"x".repeat(40)).desired_height(42), 2);
    assert_eq!(typed(&format!("{} ", "x".repeat(39))).desired_height(42), 2);
    assert_eq!(
        typed(&format!("{} y", "x".repeat(38))).desired_height(42),
        2
    );
    assert_eq!(typed("abc").desired_height(0), 4);
}

#[test]
fn rendering_is_absolute_and_clipped() {
    let c = typed("hi");
    let mut buf = Buffer::empty(Rect::new(0, 0, 50, 10));
    let at = c.render(Rect::new(5, 2, 30, 3), &mut buf, &Theme::plain());
    assert_eq!(at, Some(Position::new(9, 2)));
    assert_eq!(buf[(5, 2)].symbol(), "›");
    assert_eq!(
        c.render(Rect::new(5, 2, 0, 3), &mut buf, &Theme::plain()),
        None
    );
    let at = c.render(Rect::new(45, 8, 30, 5), &mut buf, &Theme::plain());
    assert_eq!(at, Some(Position::new(49, 8)), "clipped to the buffer");
}

#[test]
fn styles_come_from_the_theme() {
    let theme = Theme { color: true };
    let mut c = typed("x");
    c.paste(&lines(6));
    let area = Rect::new(0, 0, 40, 1);
    let mut buf = Buffer::empty(area);
    c.render(area, &mut buf, &theme);
    assert_eq!(buf[(0, 0)].fg, Color::Cyan, "the prompt is an accent");
    assert_eq!(buf[(2, 0)].fg, Color::Reset);
    assert_eq!(buf[(2, 0)].modifier, Modifier::empty());
    assert_eq!(buf[(3, 0)].fg, Color::Cyan, "the placeholder is an accent");
    assert_eq!(buf[(3, 0)].modifier, theme.style(Role::Accent).add_modifier);
    let mut buf = Buffer::empty(area);
    Composer::new().render(area, &mut buf, &theme);
    assert_eq!(buf[(2, 0)].fg, Color::DarkGray, "the hint is dim");
    assert!(buf[(2, 0)].modifier.contains(Modifier::DIM));
}

// ---- Snapshots ----

#[test]
fn snapshot_empty_with_hint() {
    let c = Composer::new();
    insta::assert_snapshot!("empty_40x6", screen(&c, 40, 6));
    insta::assert_snapshot!("empty_80x3", screen(&c, 80, 3));
}

#[test]
fn snapshot_multi_line_draft() {
    let mut c = typed("Fix the failing test:\n\n  - check the fixture\n  - rerun it");
    press(&mut c, key(KeyCode::Up), 1);
    insta::assert_snapshot!("multi_line_40x6", screen(&c, 40, 6));
}

#[test]
fn snapshot_wrapped_cjk() {
    let c = typed(
        "The word 日本語のテキスト wraps across rows without ever splitting 漢字 at the edge",
    );
    insta::assert_snapshot!("wrapped_cjk_40x6", screen(&c, 40, 6));
    insta::assert_snapshot!("wrapped_cjk_80x3", screen(&c, 80, 3));
    // CJK breaks between characters; a wide one never straddles the edge (37 columns for
    // visible text, 31 after "Wrap: " on the first row: its 16th character goes to the next).
    let c = typed("Wrap: 日本語のテキストは空白なしで長く続くので文字単位で折り返されます。");
    insta::assert_snapshot!("wrapped_cjk_run_40x6", screen(&c, 40, 6));
}

#[test]
fn snapshot_folded_paste() {
    let mut c = typed("Review this log: ");
    c.paste(&lines(42));
    type_text(&mut c, " and explain the failure");
    insta::assert_snapshot!("folded_paste_80x3", screen(&c, 80, 3));
    insta::assert_snapshot!("folded_paste_40x6", screen(&c, 40, 6));
}

#[test]
fn snapshot_taller_than_the_area_scrolls_to_the_cursor() {
    let mut c = typed(&lines(12));
    insta::assert_snapshot!("tall_at_end_40x6", screen(&c, 40, 6));
    press(&mut c, key(KeyCode::Up), 7);
    insta::assert_snapshot!("tall_moved_up_40x6", screen(&c, 40, 6));
    press(&mut c, key(KeyCode::Up), 2);
    insta::assert_snapshot!("tall_scrolled_up_40x6", screen(&c, 40, 6));
    press(&mut c, with(KeyCode::Home, KeyModifiers::CONTROL), 1);
    insta::assert_snapshot!("tall_top_40x6", screen(&c, 40, 6));
}

// ---- Robustness ----

/// A deterministic linear congruential generator.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[test]
fn random_keys_and_pastes_never_break_the_invariants() {
    let chars = [
        'a', 'Z', ' ', ' ', '/', '@', '\\', '日', '語', 'e', '\u{301}', '👍', '\u{200d}', '🇫',
        '\u{1b}', '\t', '\n', 'j', 'w', 'u', 'k', 'y', 'd', 'b', 'f', 'h', 'p', 'n', '_', '-',
    ];
    let codes = [
        KeyCode::Enter,
        KeyCode::Backspace,
        KeyCode::Delete,
        KeyCode::Left,
        KeyCode::Right,
        KeyCode::Up,
        KeyCode::Down,
        KeyCode::Home,
        KeyCode::End,
        KeyCode::Tab,
        KeyCode::Esc,
        KeyCode::PageUp,
    ];
    let mods = [
        KeyModifiers::NONE,
        KeyModifiers::NONE,
        KeyModifiers::NONE,
        KeyModifiers::SHIFT,
        KeyModifiers::CONTROL,
        KeyModifiers::ALT,
        KeyModifiers::CONTROL | KeyModifiers::ALT,
    ];
    let pastes = [
        "x",
        "a\r\nb",
        "\r",
        "日本\t語\u{1b}[0m",
        "@file path",
        "/cmd",
        "e\u{301}\u{301}",
    ];
    let mut rng = Lcg(0x5eed);
    let mut c = Composer::new();
    c.push_history("old one".into());
    c.push_history("old\ntwo".into());
    for step in 0..6000 {
        match rng.below(20) {
            0 => {
                let mut text = rng.pick(&pastes).to_string();
                if rng.below(4) == 0 {
                    text = format!("{text}\n").repeat(1 + rng.below(9));
                }
                c.paste(&text);
            }
            1 => {
                let width = rng.below(50) as u16;
                let height = 1 + rng.below(8) as u16;
                let area = Rect::new(1, 1, width, height);
                let mut buf = Buffer::empty(Rect::new(0, 0, 60, 12));
                if let Some(p) = c.render(area, &mut buf, &Theme::plain()) {
                    assert!(
                        area.contains(p),
                        "step {step}: cursor {p:?} outside {area:?}"
                    );
                }
                assert!(c.desired_height(width) >= 1);
            }
            2 => {
                if let Some(token) = c.token_at_cursor() {
                    assert!(token.start <= c.cursor() && c.cursor() <= token.end);
                    c.replace_token(&token, "@done ");
                }
            }
            3 if rng.below(10) == 0 => {
                c.take();
            }
            _ => {
                let code = if rng.below(3) == 0 {
                    *rng.pick(&codes)
                } else {
                    KeyCode::Char(*rng.pick(&chars))
                };
                let kind = if rng.below(15) == 0 {
                    KeyEventKind::Release
                } else {
                    KeyEventKind::Press
                };
                c.handle_key(KeyEvent::new_with_kind(code, *rng.pick(&mods), kind));
            }
        }
        check(&c);
        let width = c.width.load(Ordering::Relaxed).max(1);
        assert_eq!(
            *c.rows(width),
            *layout::rows(&c, width),
            "step {step}: a stale cache"
        );
    }
}
