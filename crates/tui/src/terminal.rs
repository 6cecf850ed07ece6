//! The terminal: raw mode, the alternate screen, bracketed paste and (where
//! the terminal has it) key disambiguation so Shift+Enter is its own key.
//! Restored on every way out: a normal exit, an error, a panic (the hook
//! restores before the message prints), and around Ctrl-Z.

use std::io::{self, Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// Whether the keyboard flags were pushed (asked once: the question is a
/// round trip to the terminal).
static ENHANCED: AtomicBool = AtomicBool::new(false);

/// Takes the terminal over; [`restore`] gives it back.
pub fn init() -> io::Result<Tui> {
    install_panic_hook();
    enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(out, EnterAlternateScreen, EnableBracketedPaste)?;
    if crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false) {
        let _ = execute!(out, PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES));
        ENHANCED.store(true, Ordering::SeqCst);
    }
    Terminal::new(CrosstermBackend::new(out))
}

/// Puts the terminal back as it was; safe to call more than once.
pub fn restore() {
    let mut out = io::stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(out, DisableBracketedPaste, LeaveAlternateScreen, cursor::Show);
    let _ = disable_raw_mode();
    let _ = out.flush();
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// Ctrl-Z: gives the terminal back, stops until `fg`, then takes it again.
#[cfg(unix)]
pub fn suspend(terminal: &mut Tui) -> io::Result<()> {
    restore();
    // SIGTSTP as the shell would send it; execution resumes here on SIGCONT.
    let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGTSTP);
    enable_raw_mode()?;
    execute!(io::stdout(), EnterAlternateScreen, EnableBracketedPaste)?;
    terminal.clear()
}
