//! Code blocks in colour: syntect parses the code with its bundled grammars,
//! and each scope maps to one of the terminal's named colours (never the
//! grammar theme's RGB, which would fight a light or dark background).

use std::sync::OnceLock;

use ratatui::style::{Color, Style};
use ratatui::text::Span;
use syntect::parsing::{ParseState, ScopeStack, SyntaxSet};
use syntect::util::LinesWithEndings;

use crate::theme::Theme;

/// Code longer than this is shown plain: highlighting is for reading, and a
/// huge paste should not cost a frame.
const MAX_HIGHLIGHT_BYTES: usize = 64 * 1024;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// Loads the grammars ahead of the first code block (off the UI thread).
pub fn warm_up() {
    let _ = syntaxes();
}

/// The colour a scope stack gets: the innermost scope that names a kind.
fn style_for(stack: &ScopeStack, theme: &Theme) -> Style {
    for scope in stack.as_slice().iter().rev() {
        let name = scope.build_string();
        let color = if name.starts_with("comment") {
            return theme.dim();
        } else if name.starts_with("string") {
            Color::Green
        } else if name.starts_with("constant") {
            Color::Cyan
        } else if name.starts_with("keyword") || name.starts_with("storage") {
            // `storage` is what grammars call `fn`, `let`, `class`, `const`.
            Color::Magenta
        } else if name.starts_with("entity.name.function") || name.starts_with("support.function") {
            Color::Blue
        } else if name.starts_with("entity.name.type")
            || name.starts_with("support.type")
            || name.starts_with("entity.name.struct")
        {
            Color::Yellow
        } else {
            continue;
        };
        return if theme.color { Style::default().fg(color) } else { Style::default() };
    }
    Style::default()
}

/// `code` in `lang` as styled lines, or `None` when the language is unknown
/// (the caller shows it plain).
pub fn highlight(code: &str, lang: &str, theme: &Theme) -> Option<Vec<Vec<Span<'static>>>> {
    if lang.is_empty() || code.len() > MAX_HIGHLIGHT_BYTES {
        return None;
    }
    let set = syntaxes();
    let syntax = set.find_syntax_by_token(lang)?;
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut lines = Vec::new();
    for line in LinesWithEndings::from(code) {
        let ops = state.parse_line(line, set).ok()?;
        let text = line.trim_end_matches(['\n', '\r']);
        let mut spans = Vec::new();
        let mut at = 0;
        for (offset, op) in ops {
            let offset = offset.min(text.len());
            if offset > at {
                spans.push(Span::styled(text[at..offset].to_string(), style_for(&stack, theme)));
                at = offset;
            }
            stack.apply(&op).ok()?;
        }
        if at < text.len() {
            spans.push(Span::styled(text[at..].to_string(), style_for(&stack, theme)));
        }
        lines.push(spans);
    }
    Some(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_keywords_strings_and_comments_get_named_colours() {
        let lines = highlight("fn main() {\n    let s = \"hi\"; // greet\n}\n", "rust", &Theme::colored()).unwrap();
        assert_eq!(lines.len(), 3);
        let style_of =
            |text: &str| lines.iter().flatten().find(|s| s.content.contains(text)).map(|s| s.style).unwrap_or_default();
        assert_eq!(style_of("fn").fg, Some(Color::Magenta));
        assert_eq!(style_of("hi").fg, Some(Color::Green));
        assert_eq!(style_of("greet"), Theme::colored().dim());
        // The text is kept exactly.
        let text: Vec<String> = lines.iter().map(|l| l.iter().map(|s| s.content.as_ref()).collect()).collect();
        assert_eq!(text, ["fn main() {", "    let s = \"hi\"; // greet", "}"]);
    }

    #[test]
    fn unknown_languages_and_no_color_stay_plain() {
        assert!(highlight("x", "no-such-language", &Theme::colored()).is_none());
        let lines = highlight("fn main() {}", "rs", &Theme::plain()).unwrap();
        assert!(lines.iter().flatten().all(|s| s.style.fg.is_none()));
    }
}
