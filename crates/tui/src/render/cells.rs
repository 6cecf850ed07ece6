//! One cell as terminal lines (before wrapping): the person's words, the
//! model's markdown, folded reasoning, tool calls with status and a result
//! that unfolds, diffs in colour, notices and errors.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use crate::cells::{Cell, CellKind, ToolCell, ToolStatus};
use crate::theme::Theme;

/// Result lines a folded tool cell shows.
const FOLDED_LINES: usize = 3;
/// Diff lines a folded edit shows.
const FOLDED_DIFF_LINES: usize = 12;

pub fn cell_lines(cell: &Cell, selected: bool, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = match &cell.kind {
        CellKind::User { text, steered } => {
            let mut lines = Vec::new();
            for (i, line) in text.lines().enumerate() {
                let mark = match (i, steered) {
                    (0, false) => "› ",
                    (0, true) => "↳ ",
                    _ => "  ",
                };
                lines.push(Line::from(vec![
                    Span::styled(mark, theme.user()),
                    Span::styled(line.to_string(), theme.user()),
                ]));
            }
            lines
        }
        CellKind::Assistant { text, streaming } => {
            let mut lines = crate::markdown::render(text, theme, !*streaming);
            if *streaming {
                match lines.last_mut() {
                    Some(last) => last.spans.push(Span::styled("▌", theme.accent())),
                    None => lines.push(Line::from(Span::styled("▌", theme.accent()))),
                }
            }
            lines
        }
        CellKind::Reasoning { text, chars } => {
            let mark = if cell.expanded { "▾" } else { "▸" };
            let mut lines = vec![Line::from(Span::styled(
                format!("{mark} thinking ({} chars)", group(*chars as u64)),
                theme.dim(),
            ))];
            if cell.expanded {
                lines.extend(text.lines().map(|l| Line::from(Span::styled(format!("  {l}"), theme.dim()))));
            }
            lines
        }
        CellKind::Tool(tool) => tool_lines(tool, cell.expanded, theme),
        CellKind::Info { text } => {
            text.lines().map(|l| Line::from(Span::styled(format!("· {l}"), theme.dim()))).collect()
        }
        CellKind::Error { text } => text
            .lines()
            .enumerate()
            .map(|(i, l)| Line::from(Span::styled(format!("{}{l}", if i == 0 { "✗ " } else { "  " }), theme.error())))
            .collect(),
    };
    if selected && let Some(first) = lines.first_mut() {
        for span in &mut first.spans {
            span.style = span.style.add_modifier(Modifier::REVERSED);
        }
    }
    lines.push(Line::default());
    lines
}

fn tool_lines(tool: &ToolCell, expanded: bool, theme: &Theme) -> Vec<Line<'static>> {
    let (glyph, style) = match tool.status {
        ToolStatus::Running => ("⋯", theme.warn()),
        ToolStatus::Done => ("✓", theme.ok()),
        ToolStatus::Failed => ("✗", theme.error()),
        ToolStatus::Cancelled => ("⊘", theme.dim()),
    };
    let mut header = vec![Span::styled(format!("{glyph} "), style), Span::styled(tool.name.clone(), theme.heading())];
    let summary = tool.summary();
    if !summary.is_empty() {
        header.push(Span::styled(format!(" {summary}"), theme.dim()));
    }
    match (tool.status.clone(), tool.duration) {
        (ToolStatus::Running, _) => header.push(Span::styled(" · running", theme.dim())),
        (ToolStatus::Cancelled, _) => header.push(Span::styled(" · interrupted", theme.dim())),
        (_, Some(d)) => header.push(Span::styled(format!(" · {}", duration(d)), theme.dim())),
        _ => {}
    }
    let mut lines = vec![Line::from(header)];
    // What an edit does is its diff: the patch it was given, or the one it reports.
    let args = tool.args();
    let patch = args.get("patch").and_then(|p| p.as_str()).map(str::to_string);
    let body = match patch {
        Some(patch) if tool.status != ToolStatus::Failed => patch,
        _ => tool.display_output(),
    };
    let is_diff = looks_like_diff(&body);
    let all: Vec<&str> = body.lines().collect();
    let keep = if expanded {
        all.len()
    } else if is_diff {
        FOLDED_DIFF_LINES
    } else {
        FOLDED_LINES
    };
    for line in all.iter().take(keep) {
        let style = if is_diff {
            diff_style(line, theme)
        } else if tool.status == ToolStatus::Failed {
            theme.error()
        } else {
            theme.dim()
        };
        lines.push(Line::from(vec![Span::styled("  │ ", theme.dim()), Span::styled(line.to_string(), style)]));
    }
    if all.len() > keep {
        lines.push(Line::from(Span::styled(
            format!("  … {} more lines (Ctrl+O unfolds)", all.len() - keep),
            theme.dim(),
        )));
    }
    lines
}

fn looks_like_diff(text: &str) -> bool {
    text.lines().any(|l| l.starts_with("@@")) || (text.contains("\n+++ ") && text.contains("--- "))
}

fn diff_style(line: &str, theme: &Theme) -> ratatui::style::Style {
    if line.starts_with("+++") || line.starts_with("---") {
        theme.heading()
    } else if line.starts_with('+') {
        theme.added()
    } else if line.starts_with('-') {
        theme.removed()
    } else if line.starts_with("@@") {
        theme.hunk()
    } else {
        theme.text()
    }
}

/// 1234567 → "1,234,567".
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn duration(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms / 1000) % 60)
    }
}
