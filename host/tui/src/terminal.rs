//! The terminal's modes for a session and their restoration: raw mode, the alternate screen,
//! bracketed paste and the kitty keyboard flags (so Shift+Enter is told apart from Enter where
//! the terminal can), undone in reverse on every way out (return, error, panic; signals end
//! the loop, which returns). Restoring twice is harmless.

use std::io::{Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// Whether the modes are on (so a panic restores only what was set).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether the keyboard flags were pushed (popping unpushed flags upsets some terminals).
static KEYBOARD_FLAGS: AtomicBool = AtomicBool::new(false);

/// The terminal a session draws on.
pub type Tty = Terminal<CrosstermBackend<Stdout>>;

/// Sets the session's modes and returns the terminal; installs a panic hook that restores the
/// terminal before the panic message is printed.
pub fn enter() -> std::io::Result<Tty> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut stdout = std::io::stdout();
    if let Err(e) = execute!(stdout, EnterAlternateScreen, EnableBracketedPaste) {
        restore();
        return Err(e);
    }
    if crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false)
        && execute!(
            stdout,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )
        .is_ok()
    {
        KEYBOARD_FLAGS.store(true, Ordering::SeqCst);
    }
    match Terminal::new(CrosstermBackend::new(stdout)) {
        Ok(terminal) => Ok(terminal),
        Err(e) => {
            restore();
            Err(e)
        }
    }
}

/// Undoes [`enter`]: keyboard flags, paste, alternate screen, raw mode, cursor shown.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut stdout = std::io::stdout();
    if KEYBOARD_FLAGS.swap(false, Ordering::SeqCst) {
        let _ = execute!(stdout, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        stdout,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = stdout.flush();
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// Restores the terminal when dropped (the normal and the error path).
#[derive(Debug)]
pub struct RestoreOnDrop;

impl Drop for RestoreOnDrop {
    fn drop(&mut self) {
        restore();
    }
}
