//! Keys and pastes: what each does depends on what is in front (an approval,
//! an overlay, the composer). Returns the actions for the runner.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use quiver_engine::Mode;

use crate::app::{Action, Answer, App, Overlay};
use crate::palette::{Palette, PaletteChoice};
use crate::slash::{self, Slash};

/// A second Ctrl-C within this long quits.
const QUIT_WINDOW: Duration = Duration::from_secs(2);

impl App {
    pub fn on_paste(&mut self, text: &str) {
        match &mut self.overlay {
            Some(Overlay::Palette(p)) => p.type_str(text.lines().next().unwrap_or_default()),
            _ => {
                self.composer.paste(text);
                self.refresh_mentions();
            }
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return self.ctrl_c();
        }
        self.quit_armed = None;
        if ctrl && key.code == KeyCode::Char('z') {
            return vec![Action::Suspend];
        }
        if !self.approvals.is_empty() {
            return self.approval_key(key);
        }
        // A terminal sends Esc and a character typed right after it as one
        // Alt+character. With an overlay open that can only mean "close it,
        // then type" (Esc, then `/mcp ...`): the character goes to the
        // composer instead of being lost. The yolo question keeps its own keys.
        if key.modifiers == KeyModifiers::ALT
            && let KeyCode::Char(c) = key.code
            && self.overlay.as_ref().is_some_and(|o| !matches!(o, Overlay::ConfirmYolo))
        {
            self.overlay = None;
            return self.composer_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        if self.overlay.is_some() {
            return self.overlay_key(key);
        }
        self.composer_key(key)
    }

    fn ctrl_c(&mut self) -> Vec<Action> {
        if self.quit_armed.is_some_and(|t| self.now.saturating_duration_since(t) < QUIT_WINDOW) {
            self.should_quit = true;
            return vec![Action::Quit];
        }
        self.quit_armed = Some(self.now);
        self.overlay = None;
        if !self.approvals.is_empty() {
            self.answer(Answer::No);
        }
        if self.running() {
            return vec![Action::Interrupt];
        }
        self.composer.take();
        Vec::new()
    }

    fn approval_key(&mut self, key: KeyEvent) -> Vec<Action> {
        match key.code {
            KeyCode::Char('y') | KeyCode::Enter => self.answer(Answer::Once),
            KeyCode::Char('a') => self.answer(Answer::Always),
            KeyCode::Char('n') | KeyCode::Esc => self.answer(Answer::No),
            _ => {}
        }
        Vec::new()
    }

    fn overlay_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let Some(overlay) = &mut self.overlay else { return Vec::new() };
        match overlay {
            Overlay::ConfirmYolo => {
                let yes = matches!(key.code, KeyCode::Char('y') | KeyCode::Enter);
                self.overlay = None;
                if yes {
                    self.yolo_confirmed = true;
                    return vec![Action::Command(Slash::Mode(Some(Mode::Yolo)))];
                }
            }
            Overlay::Palette(palette) => match key.code {
                KeyCode::Esc => self.overlay = None,
                KeyCode::Up => palette.move_by(-1),
                KeyCode::Down | KeyCode::Tab => palette.move_by(1),
                KeyCode::Backspace => palette.backspace(),
                KeyCode::Enter => {
                    let choice = palette.choice();
                    self.overlay = None;
                    return self.palette_choice(choice);
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => palette.type_str(&c.to_string()),
                _ => {}
            },
            Overlay::Sessions { items, selected } => match key.code {
                KeyCode::Esc => self.overlay = None,
                KeyCode::Up => *selected = selected.saturating_sub(1),
                KeyCode::Down => *selected = (*selected + 1).min(items.len().saturating_sub(1)),
                KeyCode::Enter => {
                    let id = items.get(*selected).map(|(id, _)| id.clone());
                    self.overlay = None;
                    return id.map(Action::Resume).into_iter().collect();
                }
                _ => {}
            },
            Overlay::Panel { scroll, lines, .. } => match key.code {
                KeyCode::Up => *scroll = scroll.saturating_sub(1),
                KeyCode::Down => *scroll = (*scroll + 1).min(lines.len().saturating_sub(1)),
                KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
                KeyCode::PageDown => *scroll = (*scroll + 10).min(lines.len().saturating_sub(1)),
                _ => self.overlay = None,
            },
            Overlay::Help => self.overlay = None,
        }
        Vec::new()
    }

    fn palette_choice(&mut self, choice: Option<PaletteChoice>) -> Vec<Action> {
        match choice {
            // A command that takes arguments goes to the composer to finish.
            Some(PaletteChoice::Insert(text)) => {
                self.composer.set_text(&text);
                Vec::new()
            }
            Some(PaletteChoice::Run(line)) => self.submit_line(&line),
            None => Vec::new(),
        }
    }

    fn composer_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if shift || alt => self.composer.newline(),
            KeyCode::Char('j') if ctrl => self.composer.newline(),
            KeyCode::Enter => {
                let line = self.composer.take();
                self.mentions.clear();
                return self.submit_line(&line);
            }
            KeyCode::Esc if self.running() => return vec![Action::Interrupt],
            KeyCode::Esc => self.mentions.clear(),
            KeyCode::Tab if !self.mentions.is_empty() => {
                let first = self.mentions[0].clone();
                self.composer.complete_mention(&first);
                self.mentions.clear();
            }
            KeyCode::BackTab => {
                let next = self.next_mode();
                return self.request_mode(next).into_iter().collect();
            }
            KeyCode::Char('p') if ctrl => self.open_palette(),
            KeyCode::Char('r') if ctrl => return vec![Action::Command(Slash::Resume)],
            KeyCode::Char('t') if ctrl => self.show_work = !self.show_work,
            KeyCode::Char('o') if ctrl => self.toggle_fold(),
            KeyCode::Char('d') if ctrl && self.composer.text().is_empty() => {
                self.should_quit = true;
                return vec![Action::Quit];
            }
            KeyCode::Char('a') if ctrl => self.composer.home(),
            KeyCode::Char('e') if ctrl => self.composer.end(),
            KeyCode::Char('u') if ctrl => self.composer.kill_line_back(),
            KeyCode::Char('k') if ctrl => self.composer.kill_line_forward(),
            KeyCode::Char('w') if ctrl => self.composer.kill_word_back(),
            KeyCode::Char(c) if !ctrl => self.composer.insert_char(c),
            KeyCode::Backspace => self.composer.backspace(),
            KeyCode::Delete => self.composer.delete(),
            KeyCode::Left => self.composer.left(),
            KeyCode::Right => self.composer.right(),
            KeyCode::Up if alt => self.select_foldable(true),
            KeyCode::Down if alt => self.select_foldable(false),
            KeyCode::Up => self.composer.up(),
            KeyCode::Down => self.composer.down(),
            KeyCode::Home => self.composer.home(),
            KeyCode::End => self.composer.end(),
            KeyCode::PageUp => self.scroll += 10,
            KeyCode::PageDown => self.scroll = self.scroll.saturating_sub(10),
            _ => {}
        }
        self.refresh_mentions();
        Vec::new()
    }

    fn open_palette(&mut self) {
        self.overlay = Some(Overlay::Palette(Palette::new(crate::palette::entries(&self.palette_tools))));
    }

    /// What Enter does with a composer line: a command, a prompt, or a
    /// follow-up queued for the running turn.
    pub fn submit_line(&mut self, line: &str) -> Vec<Action> {
        self.declined = false;
        if line.trim().is_empty() {
            return Vec::new();
        }
        if line.starts_with('/') && !line.starts_with("//") {
            return match slash::parse(line) {
                Ok(Slash::Help) => {
                    self.overlay = Some(Overlay::Help);
                    Vec::new()
                }
                Ok(Slash::Work) => {
                    self.show_work = !self.show_work;
                    Vec::new()
                }
                Ok(Slash::Quit) => {
                    self.should_quit = true;
                    vec![Action::Quit]
                }
                Ok(Slash::Mode(Some(mode))) => self.request_mode(mode).into_iter().collect(),
                Ok(command) => vec![Action::Command(command)],
                Err(message) => {
                    self.error(message);
                    Vec::new()
                }
            };
        }
        if self.running() {
            if let Ok(mut queue) = self.queued.lock() {
                queue.push(line.to_string());
            }
            return Vec::new();
        }
        vec![Action::Submit(line.to_string())]
    }

    /// Fuzzy completions for the `@path` at the cursor.
    pub fn refresh_mentions(&mut self) {
        self.mentions = match self.composer.mention() {
            Some((_, query)) => crate::palette::fuzzy_paths(&self.files, query, 6),
            None => Vec::new(),
        };
    }
}
