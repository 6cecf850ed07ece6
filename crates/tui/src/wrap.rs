//! Fits styled lines to a width, breaking at spaces where it can and inside a
//! word only when the word alone is wider than the line. The transcript knows
//! each cell's height from this, so it draws only what is on screen.

use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

pub fn wrap_lines(lines: &[Line<'static>], width: u16) -> Vec<Line<'static>> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        wrap_line(line, width.max(1) as usize, &mut out);
    }
    out
}

fn wrap_line(line: &Line<'static>, width: usize, out: &mut Vec<Line<'static>>) {
    if line.width() <= width {
        out.push(line.clone());
        return;
    }
    let mut row: Vec<Span<'static>> = Vec::new();
    let mut used = 0usize;
    for span in &line.spans {
        let style = span.style;
        for word in split_keeping_spaces(&span.content) {
            let w = word.width();
            if used + w > width && used > 0 {
                // The space that ended the row is not carried to the next one.
                if word.trim().is_empty() {
                    continue;
                }
                out.push(Line::from(std::mem::take(&mut row)).style(line.style));
                used = 0;
            }
            if w <= width - used {
                row.push(Span::styled(word.to_string(), style));
                used += w;
                continue;
            }
            // A word wider than what is left: break it by characters.
            let mut piece = String::new();
            for c in word.chars() {
                let cw = c.width().unwrap_or(0);
                if used + cw > width && (used > 0 || !piece.is_empty()) {
                    row.push(Span::styled(std::mem::take(&mut piece), style));
                    out.push(Line::from(std::mem::take(&mut row)).style(line.style));
                    used = 0;
                }
                piece.push(c);
                used += cw;
            }
            if !piece.is_empty() {
                row.push(Span::styled(piece, style));
            }
        }
    }
    if !row.is_empty() {
        out.push(Line::from(row).style(line.style));
    }
}

/// "a bc  d" → ["a ", "bc  ", "d"]: each word with the spaces after it.
fn split_keeping_spaces(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    for (i, c) in s.char_indices() {
        if c == ' ' {
            in_space = true;
        } else if in_space {
            parts.push(&s[start..i]);
            start = i;
            in_space = false;
        }
    }
    if start < s.len() {
        parts.push(&s[start..]);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'static>]) -> Vec<String> {
        lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    #[test]
    fn breaks_at_spaces_and_inside_only_overlong_words() {
        let line = Line::from(vec![Span::raw("the quick "), Span::raw("brown fox")]);
        assert_eq!(texts(&wrap_lines(&[line], 10)), ["the quick ", "brown fox"]);
        let long = Line::from("abcdefghijkl mn");
        assert_eq!(texts(&wrap_lines(&[long], 5)), ["abcde", "fghij", "kl mn"]);
    }

    #[test]
    fn wide_characters_count_double() {
        let line = Line::from("接力接力接力");
        let rows = wrap_lines(&[line], 5);
        assert!(rows.iter().all(|r| r.width() <= 5), "{:?}", texts(&rows));
        assert_eq!(texts(&rows).concat(), "接力接力接力");
    }
}
