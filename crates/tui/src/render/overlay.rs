//! What is drawn over or beside the transcript: help, the palette, command
//! panels, the session picker, the yolo confirmation, `@path` completions,
//! and the Work panel.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::app::{App, Overlay};
use crate::theme::Theme;

const KEYS: &[(&str, &str)] = &[
    ("Enter", "send (while a turn runs: queue a follow-up it reads next)"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("Esc", "interrupt the running turn"),
    ("Ctrl+C twice", "quit"),
    ("Shift+Tab", "next mode: plan → agent → yolo"),
    ("Ctrl+P", "palette: commands and tools"),
    ("Ctrl+R", "resume a session of this workspace"),
    ("Ctrl+O / Alt+↑↓", "unfold a tool result / pick which"),
    ("Ctrl+T", "Work panel"),
    ("PageUp/PageDown", "scroll the transcript"),
    ("@path", "mention a file (Tab completes)"),
    ("Ctrl+Z", "suspend"),
];

/// A box `w`×`h` centred in `area`, clipped to it.
fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h }
}

fn boxed(frame: &mut Frame, rect: Rect, title: &str, theme: &Theme) -> Rect {
    let block =
        Block::default().borders(Borders::ALL).border_style(theme.accent()).title(Span::styled(title, theme.accent()));
    let inner = block.inner(rect);
    frame.render_widget(Clear, rect);
    frame.render_widget(block, rect);
    inner
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let Some(overlay) = &app.overlay else { return };
    let rect = centered(area, area.width.saturating_sub(4).min(90), area.height.saturating_sub(2));
    match overlay {
        Overlay::Help => {
            let inner = boxed(frame, rect, " help · any key closes ", theme);
            let mut lines: Vec<Line> = KEYS
                .iter()
                .map(|(k, v)| Line::from(vec![Span::styled(format!("{k:<20}"), theme.heading()), Span::raw(*v)]))
                .collect();
            lines.push(Line::default());
            for (name, args, help) in crate::slash::COMMANDS {
                lines.push(Line::from(vec![
                    Span::styled(format!("{name} "), theme.heading()),
                    Span::styled(format!("{args} "), theme.dim()),
                    Span::raw(*help),
                ]));
            }
            frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
        }
        Overlay::Palette(palette) => {
            let inner = boxed(frame, rect, " palette · ↑↓ Enter Esc ", theme);
            let mut lines = vec![Line::from(vec![Span::styled("› ", theme.user()), Span::raw(palette.query.clone())])];
            let rows = inner.height.saturating_sub(1) as usize;
            let top = (palette.selected + 1).saturating_sub(rows);
            let mut group = None;
            for (pos, &i) in palette.shown.iter().enumerate().skip(top).take(rows) {
                let entry = &palette.entries[i];
                let style = if pos == palette.selected { theme.selected() } else { theme.text() };
                let label = if group != Some(&entry.group) { entry.group.as_str() } else { "" };
                group = Some(&entry.group);
                lines.push(Line::from(vec![
                    Span::styled(format!("{label:<12.12} "), theme.dim()),
                    Span::styled(entry.label.clone(), style),
                    Span::styled(format!("  {}", entry.detail), theme.dim()),
                ]));
            }
            if palette.shown.is_empty() {
                lines.push(Line::from(Span::styled("nothing matches", theme.dim())));
            }
            frame.render_widget(Paragraph::new(lines), inner);
        }
        Overlay::Panel { title, lines, scroll } => {
            let inner = boxed(frame, rect, title, theme);
            let shown: Vec<Line> = lines.iter().skip(*scroll).map(|l| Line::from(l.clone())).collect();
            frame.render_widget(Paragraph::new(shown).wrap(Wrap { trim: false }), inner);
        }
        Overlay::Sessions { items, selected } => {
            let inner = boxed(frame, rect, " resume a session · ↑↓ Enter Esc ", theme);
            let rows = inner.height as usize;
            let top = (selected + 1).saturating_sub(rows);
            let lines: Vec<Line> = if items.is_empty() {
                vec![Line::from(Span::styled("no recorded sessions in this workspace", theme.dim()))]
            } else {
                items
                    .iter()
                    .enumerate()
                    .skip(top)
                    .take(rows)
                    .map(|(i, (id, about))| {
                        let style = if i == *selected { theme.selected() } else { theme.text() };
                        Line::from(vec![
                            Span::styled(id.clone(), style),
                            Span::styled(format!("  {about}"), theme.dim()),
                        ])
                    })
                    .collect()
            };
            frame.render_widget(Paragraph::new(lines), inner);
        }
        Overlay::ConfirmYolo => {
            let rect = centered(area, 56, 7);
            let inner = boxed(frame, rect, " switch to yolo? ", theme);
            let lines = vec![
                Line::from("yolo runs every step without asking."),
                Line::from("Deny rules still hold; the sandbox does not."),
                Line::default(),
                Line::from(vec![
                    Span::styled("[y]", theme.ok()),
                    Span::raw(" switch  "),
                    Span::styled("[n]", theme.error()),
                    Span::raw(" stay"),
                ]),
            ];
            frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
        }
    }
}

/// `@path` completions, just above the composer.
pub fn mentions(frame: &mut Frame, composer: Rect, app: &App, theme: &Theme) {
    let h = app.mentions.len() as u16 + 2;
    if composer.y < h {
        return;
    }
    let w = app.mentions.iter().map(|m| m.len() as u16).max().unwrap_or(10).saturating_add(4).min(composer.width);
    let rect = Rect { x: composer.x, y: composer.y - h, width: w, height: h };
    let inner = boxed(frame, rect, " Tab ", theme);
    let lines: Vec<Line> = app
        .mentions
        .iter()
        .enumerate()
        .map(|(i, m)| Line::from(Span::styled(m.clone(), if i == 0 { theme.selected() } else { theme.text() })))
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The Work panel: checklist, the active durable task, running jobs and
/// sub-agents; drawn the same in every mode.
pub fn work_panel(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let inner = boxed(frame, area, " Work ", theme);
    let w = &app.work;
    let mut lines = Vec::new();
    let section = |lines: &mut Vec<Line<'static>>, title: &str| {
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        lines.push(Line::from(Span::styled(title.to_string(), theme.heading())));
    };
    section(&mut lines, "Checklist");
    if w.checklist.is_empty() {
        lines.push(Line::from(Span::styled("  (empty)", theme.dim())));
    }
    for (done, text) in &w.checklist {
        let (mark, style) = if *done { ("[x] ", theme.dim()) } else { ("[ ] ", theme.text()) };
        lines.push(Line::from(Span::styled(format!("{mark}{text}"), style)));
    }
    section(&mut lines, "Task");
    match &w.task {
        Some((id, title, state)) => lines.push(Line::from(format!("{id} {state}: {title}"))),
        None => lines.push(Line::from(Span::styled("  (none)", theme.dim()))),
    }
    section(&mut lines, "Jobs");
    if w.jobs.is_empty() {
        lines.push(Line::from(Span::styled("  (none running)", theme.dim())));
    }
    for job in &w.jobs {
        lines.push(Line::from(vec![
            Span::styled(format!("{} ", job.id), theme.dim()),
            Span::raw(format!("{} {}s {}", job.status, job.elapsed_secs, job.command)),
        ]));
    }
    section(&mut lines, "Agents");
    if w.agents.is_empty() {
        lines.push(Line::from(Span::styled("  (none)", theme.dim())));
    }
    for agent in &w.agents {
        lines.push(Line::from(format!("{} {} {}", agent.id, agent.state, agent.name)));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}
