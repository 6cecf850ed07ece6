//! The transcript view: each cell's lines are wrapped once per width and
//! kept until the cell changes, and a frame walks back from the bottom only
//! as far as the screen (plus the scroll) reaches. A 5,000-message session
//! draws as fast as a short one.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use crate::app::App;
use crate::render::cells::cell_lines;
use crate::theme::Theme;
use crate::wrap::wrap_lines;

#[derive(Default)]
pub struct TranscriptCache {
    entries: Vec<Option<Entry>>,
}

struct Entry {
    version: u64,
    width: u16,
    selected: bool,
    lines: Vec<Line<'static>>,
}

impl TranscriptCache {
    fn lines(&mut self, app: &App, index: usize, width: u16, theme: &Theme) -> &[Line<'static>] {
        if self.entries.len() < app.transcript.cells.len() {
            self.entries.resize_with(app.transcript.cells.len(), || None);
        }
        let cell = &app.transcript.cells[index];
        let selected = app.selected == Some(index);
        let fresh = matches!(&self.entries[index], Some(e) if e.version == cell.version && e.width == width && e.selected == selected);
        if !fresh {
            let lines = wrap_lines(&cell_lines(cell, selected, theme), width);
            self.entries[index] = Some(Entry { version: cell.version, width, selected, lines });
        }
        match &self.entries[index] {
            Some(entry) => &entry.lines,
            None => &[],
        }
    }

    /// Forgets every cell (a new session's transcript).
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

pub fn draw(frame: &mut Frame, area: Rect, app: &mut App, cache: &mut TranscriptCache, theme: &Theme) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let height = area.height as usize;
    let want = height + app.scroll;
    // Walk back from the newest cell until the screen and the scroll are
    // covered, reading only heights (each cell is wrapped once, then cached).
    let mut total = 0usize;
    let mut first = app.transcript.cells.len();
    while first > 0 && total < want {
        first -= 1;
        total += cache.lines(app, first, area.width, theme).len();
    }
    // Scrolled past the top: stop at the first line.
    if total < want {
        app.scroll = total.saturating_sub(height);
    }
    // Rows from `first`'s top: the window is [total - scroll - height, total - scroll).
    let end = total.saturating_sub(app.scroll);
    let start = end.saturating_sub(height);
    let mut visible: Vec<Line<'static>> = Vec::with_capacity(height);
    let mut row = 0usize;
    for index in first..app.transcript.cells.len() {
        if row >= end {
            break;
        }
        let lines = cache.lines(app, index, area.width, theme);
        let next = row + lines.len();
        if next > start {
            let from = start.saturating_sub(row);
            let to = (end - row).min(lines.len());
            visible.extend(lines[from..to].iter().cloned());
        }
        row = next;
    }
    frame.render_widget(Paragraph::new(visible), area);
}
