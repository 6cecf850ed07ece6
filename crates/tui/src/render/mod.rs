//! Drawing the app: the transcript (with the Work panel beside it when shown),
//! a status line, the composer (or the approval in front), and the footer;
//! overlays on top. Reads the state; changes nothing but the scroll clamp.

pub mod cells;
mod overlay;
pub mod transcript;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use unicode_width::UnicodeWidthChar;

use crate::app::{App, RunState};
use crate::theme::Theme;
pub use transcript::TranscriptCache;

#[cfg(test)]
#[path = "screens_tests.rs"]
mod screens_tests;

/// The Work panel's width when shown beside the transcript.
const WORK_WIDTH: u16 = 32;
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

pub fn draw(frame: &mut Frame, app: &mut App, cache: &mut TranscriptCache, theme: &Theme) {
    let area = frame.area();
    let bottom = if app.approvals.is_empty() { composer_height(app, area.width) } else { approval_height(app, area) };
    let [main, status, bottom_area, footer] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(bottom),
        Constraint::Length(1),
    ])
    .areas(area);
    let transcript_area = if app.show_work && main.width >= WORK_WIDTH + 30 {
        let [left, right] = Layout::horizontal([Constraint::Min(30), Constraint::Length(WORK_WIDTH)]).areas(main);
        overlay::work_panel(frame, right, app, theme);
        left
    } else if app.show_work {
        // Too narrow for both: the panel takes the transcript's place.
        overlay::work_panel(frame, main, app, theme);
        Rect::default()
    } else {
        main
    };
    transcript::draw(frame, transcript_area, app, cache, theme);
    draw_status(frame, status, app, theme);
    if app.approvals.is_empty() {
        draw_composer(frame, bottom_area, app, theme);
    } else {
        draw_approval(frame, bottom_area, app, theme);
    }
    draw_footer(frame, footer, app, theme);
    if !app.mentions.is_empty() && app.overlay.is_none() {
        overlay::mentions(frame, bottom_area, app, theme);
    }
    if app.overlay.is_some() {
        overlay::draw(frame, area, app, theme);
    }
}

fn draw_status(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let mut spans = Vec::new();
    if let RunState::Running { turn, .. } = app.run {
        let elapsed = app.elapsed().unwrap_or_default();
        let frame_no = (elapsed.as_millis() / 100) as usize % SPINNER.len();
        spans.push(Span::styled(format!("{} ", SPINNER[frame_no]), theme.accent()));
        spans.push(Span::raw(format!("working · {}s", elapsed.as_secs())));
        if turn > 0 {
            spans.push(Span::styled(format!(" · turn {turn}"), theme.dim()));
        }
        spans.push(Span::styled(" · Esc interrupts", theme.dim()));
        let queued = app.queued().len();
        if queued > 0 {
            spans.push(Span::styled(format!(" · {queued} queued for the next turn"), theme.warn()));
        }
    } else if app.quit_armed.is_some() {
        spans.push(Span::styled("Ctrl+C again to quit", theme.warn()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The composer's text laid out in rows of `width` cells, and the cursor's
/// (row, column).
fn composer_rows(text: &str, cursor: usize, width: u16) -> (Vec<String>, (u16, u16)) {
    let width = width.max(1) as usize;
    let mut rows = vec![String::new()];
    let mut col = 0usize;
    let mut at = (0u16, 0u16);
    for (i, c) in text.char_indices() {
        if i == cursor {
            at = ((rows.len() - 1) as u16, col as u16);
        }
        if c == '\n' {
            rows.push(String::new());
            col = 0;
            continue;
        }
        let cw = c.width().unwrap_or(0);
        if col + cw > width {
            rows.push(String::new());
            col = 0;
        }
        if let Some(row) = rows.last_mut() {
            row.push(c);
        }
        col += cw;
    }
    if cursor >= text.len() {
        if col >= width {
            rows.push(String::new());
            col = 0;
        }
        at = ((rows.len() - 1) as u16, col as u16);
    }
    (rows, at)
}

fn composer_height(app: &App, width: u16) -> u16 {
    let (rows, _) = composer_rows(app.composer.text(), app.composer.cursor(), width.saturating_sub(4));
    (rows.len() as u16).clamp(1, 6) + 2
}

fn draw_composer(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let hint = if app.running() { " Enter queues a follow-up " } else { " Enter sends · Shift+Enter newline " };
    let block = Block::default().borders(Borders::ALL).border_style(theme.dim()).title(Span::styled(hint, theme.dim()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width < 3 || inner.height == 0 {
        return;
    }
    let text_width = inner.width - 2;
    let (rows, (row, col)) = composer_rows(app.composer.text(), app.composer.cursor(), text_width);
    let top = (row as usize + 1).saturating_sub(inner.height as usize);
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .skip(top)
        .take(inner.height as usize)
        .map(|(i, r)| {
            let mark = if i == 0 { Span::styled("› ", theme.user()) } else { Span::raw("  ") };
            Line::from(vec![mark, Span::raw(r.clone())])
        })
        .collect();
    if app.composer.text().is_empty() {
        let placeholder =
            if app.running() { "steer the running turn…" } else { "ask quiver to do something (/ for commands)" };
        frame.render_widget(
            Paragraph::new(Line::from(vec![Span::styled("› ", theme.user()), Span::styled(placeholder, theme.dim())])),
            inner,
        );
    } else {
        frame.render_widget(Paragraph::new(lines), inner);
    }
    if app.overlay.is_none() {
        frame.set_cursor_position((inner.x + 2 + col, inner.y + row - top as u16));
    }
}

fn approval_lines(app: &App, width: u16) -> Vec<String> {
    let Some(approval) = app.approvals.front() else { return Vec::new() };
    let text: Vec<Line<'static>> = approval.question.lines().map(|l| Line::from(l.to_string())).collect();
    crate::wrap::wrap_lines(&text, width.saturating_sub(2))
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

fn approval_height(app: &App, area: Rect) -> u16 {
    let max = area.height.saturating_sub(4).max(3);
    (approval_lines(app, area.width).len() as u16 + 3).min(max)
}

fn draw_approval(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let more = app.approvals.len().saturating_sub(1);
    let title =
        if more > 0 { format!(" quiver needs approval (+{more} waiting) ") } else { " quiver needs approval ".into() };
    let block =
        Block::default().borders(Borders::ALL).border_style(theme.warn()).title(Span::styled(title, theme.warn()));
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let mut lines: Vec<Line> = approval_lines(app, area.width)
        .into_iter()
        .take(inner.height.saturating_sub(1) as usize)
        .map(|l| Line::from(Span::raw(l)))
        .collect();
    lines.push(Line::from(vec![
        Span::styled("[y]", theme.ok()),
        Span::raw(" once  "),
        Span::styled("[a]", theme.ok()),
        Span::raw(" always this session  "),
        Span::styled("[n]", theme.error()),
        Span::raw(" no"),
    ]));
    frame.render_widget(Paragraph::new(lines), inner);
}

/// `12345` → "12.3k".
fn tokens(n: u64) -> String {
    match n {
        0..1000 => n.to_string(),
        1000..1_000_000 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

fn draw_footer(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let f = &app.footer;
    let context = match f.context_used {
        Some(used) if f.context_window > 0 => {
            format!(
                "ctx {}/{} ({:.0}%)",
                tokens(used),
                tokens(f.context_window),
                used as f64 * 100.0 / f.context_window as f64
            )
        }
        Some(used) => format!("ctx {}", tokens(used)),
        None => "ctx —".into(),
    };
    let cached = match f.cached_share {
        Some(share) if f.cached_estimated => format!("cached ~{:.0}% (est.)", share * 100.0),
        Some(share) => format!("cached {:.0}%", share * 100.0),
        None => "cached —".into(),
    };
    // Most important first: a narrow terminal drops from the end, whole parts only.
    let parts = [format!("{} · {}", f.provider, f.model), context, cached, "Ctrl+P palette · /help".to_string()];
    let mut spans = vec![Span::styled(app.mode.as_str().to_string(), theme.mode(app.mode))];
    let mut used = app.mode.as_str().len();
    for (i, part) in parts.into_iter().enumerate() {
        let width = 3 + unicode_width::UnicodeWidthStr::width(part.as_str());
        if used + width > area.width as usize {
            break;
        }
        used += width;
        spans.push(Span::styled(" │ ", theme.dim()));
        spans.push(if i == 3 { Span::styled(part, theme.dim()) } else { Span::raw(part) });
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
