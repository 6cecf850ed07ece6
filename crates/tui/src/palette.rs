//! The command palette (Ctrl+P): slash commands and the tool surface, MCP
//! tools grouped by server under the names the model sees (`mcp__srv__tool`),
//! matched fuzzily with nucleo as the person types.

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// Added to a match in an entry's name, above any description-only match.
const NAME_BONUS: u32 = 1 << 20;

#[derive(Debug, Clone, PartialEq)]
pub struct PaletteEntry {
    /// "command", "tools" or "mcp: SERVER".
    pub group: String,
    pub label: String,
    pub detail: String,
    pub choice: PaletteChoice,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PaletteChoice {
    /// Runs this composer line.
    Run(String),
    /// Puts this text in the composer to finish.
    Insert(String),
}

/// A tool the palette lists: its runtime name, its MCP server if any, and
/// its one-line description.
#[derive(Debug, Clone, PartialEq)]
pub struct PaletteTool {
    pub name: String,
    pub server: Option<String>,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Palette {
    pub query: String,
    pub entries: Vec<PaletteEntry>,
    /// Indices into `entries`, best match first.
    pub shown: Vec<usize>,
    pub selected: usize,
}

impl Palette {
    pub fn new(entries: Vec<PaletteEntry>) -> Self {
        let mut p = Palette { query: String::new(), shown: Vec::new(), entries, selected: 0 };
        p.refilter();
        p
    }

    pub fn type_str(&mut self, s: &str) {
        self.query.push_str(s);
        self.refilter();
    }

    pub fn backspace(&mut self) {
        self.query.pop();
        self.refilter();
    }

    pub fn move_by(&mut self, delta: isize) {
        if self.shown.is_empty() {
            return;
        }
        let n = self.shown.len() as isize;
        self.selected = (self.selected as isize + delta).rem_euclid(n) as usize;
    }

    pub fn choice(&self) -> Option<PaletteChoice> {
        self.shown.get(self.selected).map(|&i| self.entries[i].choice.clone())
    }

    fn refilter(&mut self) {
        self.selected = 0;
        if self.query.trim().is_empty() {
            self.shown = (0..self.entries.len()).collect();
            return;
        }
        let pattern = Pattern::parse(&self.query, CaseMatching::Ignore, Normalization::Smart);
        let mut matcher = Matcher::new(Config::DEFAULT);
        let mut buf = Vec::new();
        let mut scored: Vec<(u32, usize)> = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                // A match in the name beats any match in the description:
                // "stat" finds /status before a tool that mentions a status.
                if let Some(score) = pattern.score(Utf32Str::new(&e.label, &mut buf), &mut matcher) {
                    return Some((score + NAME_BONUS, i));
                }
                let hay = format!("{} {}", e.group, e.detail);
                pattern.score(Utf32Str::new(&hay, &mut buf), &mut matcher).map(|s| (s, i))
            })
            .collect();
        // Best first; ties keep the list's own order, so the result is stable.
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        self.shown = scored.into_iter().map(|(_, i)| i).collect();
    }
}

/// Commands first, then the tools, grouped by MCP server.
pub fn entries(palette_tools: &[PaletteTool]) -> Vec<PaletteEntry> {
    {
        let mut entries: Vec<PaletteEntry> = crate::slash::COMMANDS
            .iter()
            .map(|(name, args, help)| PaletteEntry {
                group: "command".into(),
                label: if args.is_empty() { name.to_string() } else { format!("{name} {args}") },
                detail: help.to_string(),
                choice: if args.is_empty() {
                    PaletteChoice::Run(name.to_string())
                } else {
                    PaletteChoice::Insert(format!("{name} "))
                },
            })
            .collect();
        let mut tools = palette_tools.to_vec();
        // Grouped by server, in name order within a group: the same list every time.
        tools.sort_by(|a, b| a.server.cmp(&b.server).then(a.name.cmp(&b.name)));
        for tool in tools {
            entries.push(PaletteEntry {
                group: match &tool.server {
                    Some(server) => format!("mcp: {server}"),
                    None => "tools".into(),
                },
                label: tool.name.clone(),
                detail: crate::cells::first_line(&tool.description).to_string(),
                choice: PaletteChoice::Insert(format!("use {} to ", tool.name)),
            });
        }
        entries
    }
}

/// The best `limit` of `files` for a fuzzy `query` (path-aware scoring).
pub fn fuzzy_paths(files: &[String], query: &str, limit: usize) -> Vec<String> {
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let mut buf = Vec::new();
    let mut scored: Vec<(u32, &String)> =
        files.iter().filter_map(|f| pattern.score(Utf32Str::new(f, &mut buf), &mut matcher).map(|s| (s, f))).collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.len().cmp(&b.1.len())).then(a.1.cmp(b.1)));
    scored.into_iter().take(limit).map(|(_, f)| f.clone()).collect()
}
