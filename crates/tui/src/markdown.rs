//! The model's markdown as terminal lines (pulldown-cmark's events): headings
//! bold, emphasis, inline code and code blocks set apart (with the fence's
//! language named, and coloured by `highlight`), lists with bullets or numbers, quotes with a bar, links
//! with their target. Lines are unwrapped here; `wrap` fits them to a width.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::theme::Theme;

/// `highlight`: colour code blocks (off while an answer streams, so a long
/// block is parsed once, when it is whole).
pub fn render(markdown: &str, theme: &Theme, highlight: bool) -> Vec<Line<'static>> {
    let mut w = Writer { theme: *theme, highlight, ..Writer::default() };
    let options = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(markdown, options) {
        w.event(event);
    }
    w.flush();
    while w.lines.last().is_some_and(|l| l.spans.is_empty()) {
        w.lines.pop();
    }
    w.lines
}

#[derive(Default)]
struct Writer {
    theme: Theme,
    lines: Vec<Line<'static>>,
    current: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// Open lists: the next number of an ordered one, `None` for bullets.
    lists: Vec<Option<u64>>,
    quote_depth: usize,
    /// The fenced block being read: its language and text so far.
    in_code: Option<(String, String)>,
    highlight: bool,
    link: Option<String>,
    /// The next text starts a list item (its marker is already out).
    item_start: bool,
    /// The line being built starts with a list marker (which carries its own indent).
    marker_line: bool,
}

impl Default for Theme {
    fn default() -> Self {
        Theme::plain()
    }
}

impl Writer {
    fn style(&self) -> Style {
        self.styles.iter().fold(Style::default(), |acc, s| acc.patch(*s))
    }

    fn prefix(&self) -> Vec<Span<'static>> {
        let mut spans = Vec::new();
        for _ in 0..self.quote_depth {
            spans.push(Span::styled("│ ", self.theme.dim()));
        }
        if !self.lists.is_empty() && !self.marker_line {
            spans.push(Span::raw("  ".repeat(self.lists.len())));
        }
        spans
    }

    fn flush(&mut self) {
        if !self.current.is_empty() {
            let mut spans = self.prefix();
            spans.append(&mut self.current);
            self.lines.push(Line::from(spans));
        }
        self.marker_line = false;
    }

    fn blank(&mut self) {
        self.flush();
        if self.lines.last().is_some_and(|l| !l.spans.is_empty()) {
            self.lines.push(Line::default());
        }
    }

    fn text(&mut self, text: &str) {
        if let Some((_, code)) = &mut self.in_code {
            code.push_str(text);
            return;
        }
        self.item_start = false;
        self.current.push(Span::styled(text.to_string(), self.style()));
    }

    /// The finished block's lines: highlighted when its language is known.
    fn code_block(&mut self, lang: &str, code: &str) {
        let code = code.strip_suffix('\n').unwrap_or(code);
        let colored = if self.highlight { crate::highlight::highlight(code, lang, &self.theme) } else { None };
        let rows: Vec<Vec<Span<'static>>> = colored.unwrap_or_else(|| {
            code.split('\n').map(|l| vec![Span::styled(l.to_string(), self.theme.code())]).collect()
        });
        for row in rows {
            let mut spans = self.prefix();
            spans.push(Span::raw("  "));
            spans.extend(row);
            self.lines.push(Line::from(spans));
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(code) => {
                self.item_start = false;
                self.current.push(Span::styled(code.to_string(), self.theme.code()));
            }
            Event::SoftBreak => self.current.push(Span::raw(" ")),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.blank();
                self.lines.push(Line::from(Span::styled("───", self.theme.dim())));
            }
            Event::TaskListMarker(done) => self.current.push(Span::raw(if done { "[x] " } else { "[ ] " })),
            Event::Html(html) | Event::InlineHtml(html) => self.text(&html),
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]")),
            Event::InlineMath(m) | Event::DisplayMath(m) => self.text(&m),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph if !self.item_start => self.flush(),
            Tag::Heading { level, .. } => {
                self.blank();
                let marks = match level {
                    HeadingLevel::H1 => "# ",
                    HeadingLevel::H2 => "## ",
                    _ => "### ",
                };
                self.current.push(Span::styled(marks, self.theme.dim()));
                self.styles.push(self.theme.heading());
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.quote_depth += 1;
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                let lang = match kind {
                    CodeBlockKind::Fenced(lang) => lang.split(',').next().unwrap_or_default().trim().to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                let label = if lang.is_empty() { "code".to_string() } else { lang.clone() };
                self.lines.push(Line::from(Span::styled(format!("  ┌ {label}"), self.theme.dim())));
                self.in_code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                self.current.push(Span::raw(format!("{}{marker}", "  ".repeat(depth))));
                self.item_start = true;
                self.marker_line = true;
            }
            Tag::Emphasis => self.styles.push(Style::default().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(Style::default().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.styles.push(Style::default().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.link = Some(dest_url.to_string());
                self.styles.push(Style::default().add_modifier(Modifier::UNDERLINED));
            }
            Tag::Table(_) | Tag::TableHead | Tag::TableRow => self.flush(),
            Tag::TableCell => self.current.push(Span::styled("│ ", self.theme.dim())),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                if self.lists.is_empty() {
                    self.lines.push(Line::default());
                }
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.flush();
                self.lines.push(Line::default());
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote_depth = self.quote_depth.saturating_sub(1);
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.in_code.take() {
                    self.code_block(&lang, &code);
                }
                self.lines.push(Line::from(Span::styled("  └", self.theme.dim())));
                self.lines.push(Line::default());
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.lines.push(Line::default());
                }
            }
            TagEnd::Item => {
                self.flush();
                self.item_start = false;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.link.take() {
                    self.current.push(Span::styled(format!(" ({url})"), self.theme.dim()));
                }
            }
            TagEnd::TableHead | TagEnd::TableRow => self.flush(),
            TagEnd::Table => {
                self.flush();
                self.lines.push(Line::default());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
