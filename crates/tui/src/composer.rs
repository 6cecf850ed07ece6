//! The composer: a multi-line text buffer with a cursor, history, and paste
//! placeholders. A large paste shows as `[Pasted N lines #k]` and the model
//! still gets it whole: [`Composer::take`] expands the placeholders.
//!
//! Terminals that leave mouse reporting on after another program send SGR
//! mouse reports (`ESC [ < b ; x ; y M`) that arrive here as typed text
//! (`[<35;12;5M`); they are dropped as they complete.

/// A paste longer than this many characters, or lines, becomes a placeholder.
const PASTE_CHARS: usize = 800;
const PASTE_LINES: usize = 8;

#[derive(Debug, Default, Clone)]
pub struct Composer {
    text: String,
    /// A byte offset into `text`, always on a char boundary.
    cursor: usize,
    pastes: Vec<(String, String)>,
    history: Vec<String>,
    /// Where Up/Down is in `history`; `None` while editing a new entry.
    browsing: Option<usize>,
    draft: String,
}

impl Composer {
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty()
    }

    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
    }

    pub fn insert_char(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
        if matches!(c, 'M' | 'm') {
            self.drop_mouse_report();
        }
    }

    pub fn insert_str(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    pub fn newline(&mut self) {
        self.insert_char('\n');
    }

    /// A bracketed paste: inline when small, a placeholder when large.
    pub fn paste(&mut self, pasted: &str) {
        let pasted = pasted.replace("\r\n", "\n").replace('\r', "\n");
        let lines = pasted.lines().count();
        if pasted.chars().count() <= PASTE_CHARS && lines <= PASTE_LINES {
            self.insert_str(&pasted);
            return;
        }
        let label = format!("[Pasted {lines} lines, {} chars #{}]", pasted.chars().count(), self.pastes.len() + 1);
        self.insert_str(&label);
        self.pastes.push((label, pasted));
    }

    /// Removes an SGR mouse report that just completed before the cursor.
    fn drop_mouse_report(&mut self) {
        let before = &self.text[..self.cursor];
        let Some(start) = before.rfind("[<") else { return };
        let body = &before[start + 2..before.len() - 1];
        let fields: Vec<&str> = body.split(';').collect();
        if fields.len() == 3 && fields.iter().all(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit())) {
            // An ESC the terminal layer passed through as text goes too.
            let start = if before[..start].ends_with('\u{1b}') { start - 1 } else { start };
            self.text.replace_range(start..self.cursor, "");
            self.cursor = start;
        }
    }

    pub fn backspace(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            // A placeholder goes as a whole, with its paste.
            if c == ']'
                && let Some(index) = self.pastes.iter().position(|(label, _)| self.text[..self.cursor].ends_with(label))
            {
                let (label, _) = self.pastes.remove(index);
                let start = self.cursor - label.len();
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
                return;
            }
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
        }
    }

    pub fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    pub fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    pub fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..].find('\n').map_or(self.text.len(), |i| self.cursor + i)
    }

    pub fn home(&mut self) {
        self.cursor = self.line_start();
    }

    pub fn end(&mut self) {
        self.cursor = self.line_end();
    }

    /// Ctrl-U: deletes back to the start of the line.
    pub fn kill_line_back(&mut self) {
        let start = self.line_start();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Ctrl-K: deletes to the end of the line.
    pub fn kill_line_forward(&mut self) {
        let end = self.line_end();
        self.text.replace_range(self.cursor..end, "");
    }

    /// Ctrl-W: deletes the word before the cursor.
    pub fn kill_word_back(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        let start = trimmed.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Whether the cursor is on the first / last line (Up / Down then browse history).
    pub fn on_first_line(&self) -> bool {
        !self.text[..self.cursor].contains('\n')
    }
    pub fn on_last_line(&self) -> bool {
        !self.text[self.cursor..].contains('\n')
    }

    /// Moves the cursor a line up, keeping its column where it can.
    pub fn up(&mut self) {
        if self.on_first_line() {
            self.history_prev();
            return;
        }
        let column = self.cursor - self.line_start();
        let prev_end = self.line_start() - 1;
        let prev_start = self.text[..prev_end].rfind('\n').map_or(0, |i| i + 1);
        self.cursor = floor_char(&self.text, (prev_start + column).min(prev_end));
    }

    pub fn down(&mut self) {
        if self.on_last_line() {
            self.history_next();
            return;
        }
        let column = self.cursor - self.line_start();
        let next_start = self.line_end() + 1;
        let next_end = self.text[next_start..].find('\n').map_or(self.text.len(), |i| next_start + i);
        self.cursor = floor_char(&self.text, (next_start + column).min(next_end));
    }

    fn history_prev(&mut self) {
        if self.history.is_empty() {
            return;
        }
        let index = match self.browsing {
            None => {
                self.draft = self.text.clone();
                self.history.len() - 1
            }
            Some(0) => 0,
            Some(i) => i - 1,
        };
        self.browsing = Some(index);
        self.set_text(&self.history[index].clone());
    }

    fn history_next(&mut self) {
        let Some(index) = self.browsing else { return };
        if index + 1 < self.history.len() {
            self.browsing = Some(index + 1);
            self.set_text(&self.history[index + 1].clone());
        } else {
            self.browsing = None;
            let draft = std::mem::take(&mut self.draft);
            self.set_text(&draft);
        }
    }

    /// Empties the composer and returns what the model gets (placeholders
    /// expanded); the typed text (with placeholders) goes to the history.
    pub fn take(&mut self) -> String {
        let typed = std::mem::take(&mut self.text);
        self.cursor = 0;
        self.browsing = None;
        if self.history.last() != Some(&typed) && !typed.trim().is_empty() {
            self.history.push(typed.clone());
        }
        let mut full = typed;
        for (label, pasted) in self.pastes.drain(..) {
            full = full.replacen(&label, &pasted, 1);
        }
        full
    }

    /// The `@word` being typed at the cursor, with its start offset.
    pub fn mention(&self) -> Option<(usize, &str)> {
        let before = &self.text[..self.cursor];
        let start = before.rfind(|c: char| c.is_whitespace()).map_or(0, |i| i + 1);
        let word = &before[start..];
        word.strip_prefix('@').map(|rest| (start, rest))
    }

    /// Replaces the `@word` at the cursor with `@path ` (a completion).
    pub fn complete_mention(&mut self, path: &str) {
        if let Some((start, _)) = self.mention() {
            let replacement = format!("@{path} ");
            self.text.replace_range(start..self.cursor, &replacement);
            self.cursor = start + replacement.len();
        }
    }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
#[path = "composer_tests.rs"]
mod tests;
