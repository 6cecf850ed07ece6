//! Styles. Only the terminal's named colours are used, never a fixed RGB
//! foreground or background: the person's palette decides what "green" is, so
//! the same styles read on light and dark backgrounds. With `NO_COLOR` set,
//! colours are dropped and only weight, italics and reverse video remain.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    /// Colour unless `NO_COLOR` is set to anything non-empty (no-color.org).
    pub fn from_env() -> Self {
        Theme { color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) }
    }

    pub const fn plain() -> Self {
        Theme { color: false }
    }

    pub const fn colored() -> Self {
        Theme { color: true }
    }

    fn fg(&self, color: Color) -> Style {
        if self.color { Style::default().fg(color) } else { Style::default() }
    }

    pub fn text(&self) -> Style {
        Style::default()
    }
    pub fn dim(&self) -> Style {
        if self.color { self.fg(Color::DarkGray) } else { Style::default().add_modifier(Modifier::DIM) }
    }
    pub fn user(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub fn accent(&self) -> Style {
        self.fg(Color::Magenta)
    }
    pub fn ok(&self) -> Style {
        self.fg(Color::Green)
    }
    pub fn error(&self) -> Style {
        self.fg(Color::Red)
    }
    pub fn warn(&self) -> Style {
        self.fg(Color::Yellow)
    }
    pub fn added(&self) -> Style {
        self.fg(Color::Green)
    }
    pub fn removed(&self) -> Style {
        self.fg(Color::Red)
    }
    pub fn hunk(&self) -> Style {
        self.fg(Color::Cyan)
    }
    pub fn code(&self) -> Style {
        self.fg(Color::Yellow)
    }
    pub fn heading(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }
    pub fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
    pub fn mode(&self, mode: quiver_engine::Mode) -> Style {
        let color = match mode {
            quiver_engine::Mode::Plan => Color::Blue,
            quiver_engine::Mode::Agent => Color::Green,
            quiver_engine::Mode::Yolo => Color::Red,
        };
        self.fg(color).add_modifier(Modifier::BOLD)
    }
}
