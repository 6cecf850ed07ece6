//! `grep_files`: regex search over file contents, built on ripgrep's own crates.
//!
//! The walk ([`super::walk`]) filters as ripgrep does (gitignore, hidden files),
//! never follows symlinks and descends by directory descriptor, so it cannot
//! leave the workspace; `grep-searcher` does the matching with binary files
//! skipped. Threads finish in any order, so matches are kept per
//! file in a map ordered by path and rendered afterwards: the output is the same on
//! every run. Memory stays bounded by `limit`: files whose matches can no
//! longer be shown are dropped from the map as soon as they are known (only their
//! counts are kept), and a single file stores at most `limit` matches.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput, Workspace};

use crate::search::walk::{WalkedFile, walk};
use crate::util::io_error;

const DEFAULT_MAX_RESULTS: usize = 200;
const MAX_MAX_RESULTS: usize = 10_000;
const MAX_CONTEXT: usize = 50;
/// Minified files put a whole program on one line; a match there would flood the output.
const MAX_LINE_CHARS: usize = 500;

pub struct GrepFiles;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepFilesInput {
    /// Regular expression (Rust regex syntax).
    pub pattern: String,
    /// File or directory to search, relative to the workspace root (default: the root).
    #[serde(default)]
    pub path: Option<String>,
    /// Only files matching this glob, relative to the root: "*.rs", "src/**/*.ts"; "!" excludes.
    #[serde(default)]
    pub glob: Option<String>,
    /// Match case-insensitively (default false).
    #[serde(default)]
    pub case_insensitive: Option<bool>,
    /// Lines of context before and after each match (default 0).
    #[serde(default)]
    pub context: Option<usize>,
    /// Most matches to show (default 200).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
}

impl Tool for GrepFiles {
    type Input = GrepFilesInput;
    const NAME: &'static str = "grep_files";
    const DOMAIN: Domain = Domain::Search;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;
    // Before one vocabulary the count was `max_results` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("max_results", "limit")];

    fn description(&self) -> String {
        "Regex search of file contents (gitignore-aware, binary files skipped); prints path:line:text, context lines as path-line-text.".into()
    }

    async fn run(&self, input: GrepFilesInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw_path = input.path.as_deref().unwrap_or(".");
        let target = ctx.workspace.resolve(raw_path)?;
        let shown = ctx.workspace.display(&target);
        crate::file::secret_read::guard(ctx, &target, &shown).await?;
        if let Err(e) = std::fs::symlink_metadata(&target) {
            return Err(io_error("search", &shown, &e));
        }
        let max_results = input.limit.unwrap_or(DEFAULT_MAX_RESULTS);
        if max_results == 0 || max_results > MAX_MAX_RESULTS {
            return Err(ToolError::model(format!(
                "`limit` must be between 1 and {MAX_MAX_RESULTS}, got {max_results}"
            )));
        }
        let context = input.context.unwrap_or(0);
        if context > MAX_CONTEXT {
            return Err(ToolError::model(format!("`context` must be at most {MAX_CONTEXT} lines, got {context}")));
        }
        let opts = SearchOptions {
            pattern: input.pattern,
            case_insensitive: input.case_insensitive.unwrap_or(false),
            context,
            max_results,
            glob: input.glob.filter(|g| !g.trim().is_empty()),
        };
        let root = ctx.workspace.root().to_path_buf();
        // The walk and search are blocking, CPU-bound work on their own thread pool.
        let report = tokio::task::spawn_blocking(move || search(&root, &target, &opts).map(|r| (r, opts)))
            .await
            .map_err(|e| ToolError::Fatal(anyhow::anyhow!("grep_files worker failed: {e}")))?;
        let (report, opts) = report?;
        Ok(ToolOutput::text(report.render(&opts, &shown))
            .with_meta("path", shown)
            .with_meta("matches", report.total_matches)
            .with_meta("files_matched", report.files_matched)
            .with_meta("shown_matches", report.shown_matches(opts.max_results))
            .with_meta("binary_files_skipped", report.binary_skipped)
            .with_meta("truncated", report.truncated(opts.max_results)))
    }
}

/// What to search for; shared by the tool and the benchmark example.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    pub pattern: String,
    pub case_insensitive: bool,
    pub context: usize,
    pub max_results: usize,
    pub glob: Option<String>,
}

impl SearchOptions {
    pub fn new(pattern: impl Into<String>) -> Self {
        SearchOptions {
            pattern: pattern.into(),
            case_insensitive: false,
            context: 0,
            max_results: DEFAULT_MAX_RESULTS,
            glob: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKind {
    Match,
    Context,
    /// A gap between non-adjacent groups of context.
    Break,
}

#[derive(Debug, Clone)]
struct Line {
    number: u64,
    kind: LineKind,
    /// Byte range of the line's text in `FileHits::text`, terminator excluded.
    start: usize,
    end: usize,
}

/// The stored lines of one file. Text lives in one buffer per file so a match
/// costs no allocation of its own.
#[derive(Debug, Default)]
struct FileHits {
    shown: String,
    matches: u64,
    stored_matches: u64,
    lines: Vec<Line>,
    text: Vec<u8>,
}

/// The outcome of a search: matching files in path order, and totals over all files.
#[derive(Debug, Default)]
pub struct SearchReport {
    files: Vec<FileHits>,
    pub total_matches: u64,
    pub files_matched: u64,
    pub binary_skipped: u64,
    pub unreadable: u64,
}

impl SearchReport {
    pub fn truncated(&self, max_results: usize) -> bool {
        self.total_matches > max_results as u64
    }

    pub fn shown_matches(&self, max_results: usize) -> u64 {
        self.total_matches.min(max_results as u64)
    }

    /// `path:line:text` for matches, `path-line-text` for context, `--` between groups.
    pub fn render(&self, opts: &SearchOptions, searched: &str) -> String {
        if self.total_matches == 0 {
            let mut out = format!("No matches for /{}/ in `{searched}`", opts.pattern);
            if let Some(glob) = &opts.glob {
                out.push_str(&format!(" (glob `{glob}`)"));
            }
            if self.binary_skipped > 0 {
                out.push_str(&format!("; {} binary files skipped", self.binary_skipped));
            }
            out.push('\n');
            return out;
        }
        let budget = opts.max_results as u64;
        let mut out = String::new();
        let mut shown = 0u64;
        let mut last_match_line = 0u64;
        'files: for (i, file) in self.files.iter().enumerate() {
            if opts.context > 0 && i > 0 {
                out.push_str("--\n");
            }
            for line in &file.lines {
                if shown >= budget {
                    // Only the trailing context of the last shown match still belongs.
                    if line.kind != LineKind::Context || line.number > last_match_line + opts.context as u64 {
                        break 'files;
                    }
                }
                match line.kind {
                    LineKind::Break => out.push_str("--\n"),
                    kind => {
                        let sep = if kind == LineKind::Match { ':' } else { '-' };
                        out.push_str(&file.shown);
                        out.push(sep);
                        out.push_str(&line.number.to_string());
                        out.push(sep);
                        push_line_text(&mut out, &file.text[line.start..line.end]);
                        out.push('\n');
                        if kind == LineKind::Match {
                            shown += 1;
                            last_match_line = line.number;
                        }
                    }
                }
            }
        }
        if self.truncated(opts.max_results) {
            out.push_str(&format!(
                "… showing the first {shown} of {} matches ({} files); narrow with path/glob or raise limit\n",
                self.total_matches, self.files_matched
            ));
        }
        out
    }
}

fn push_line_text(out: &mut String, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            out.push_str(&text[..cut]);
            out.push_str(&format!("… [+{rest} chars]"));
        }
        None => out.push_str(&text),
    }
}

/// Searches every file under `target`; `root` anchors globs and shown paths.
/// The walk ([`walk`]) goes from directory descriptor to directory descriptor
/// and opens each file relative to its directory's, never by path string.
pub fn search(root: &Path, target: &Path, opts: &SearchOptions) -> Result<SearchReport, ToolError> {
    let ws = Workspace::new(root).map_err(|e| ToolError::model(format!("cannot open the workspace root: {e}")))?;
    let (ws, root) = (&ws, ws.root());
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(opts.case_insensitive)
        // Lets the matcher search whole buffers and then find lines, as ripgrep does.
        .line_terminator(Some(b'\n'))
        .build(&opts.pattern)
        .map_err(|e| {
            let hint =
                if opts.pattern.contains("\\n") { " (grep_files matches within one line at a time)" } else { "" };
            ToolError::model(format!("invalid regex /{}/: {e}{hint}", opts.pattern))
        })?;
    let mut searcher = SearcherBuilder::new();
    searcher
        .line_number(true)
        .before_context(opts.context)
        .after_context(opts.context)
        .binary_detection(BinaryDetection::quit(0));

    let budget = opts.max_results as u64;
    let collector = Mutex::new(Collector { files: BTreeMap::new(), stored: 0, budget });
    let totals = Totals::default();
    let (collector_ref, totals_ref) = (&collector, &totals);
    let unlisted = walk(ws, target, opts.glob.as_deref(), || {
        let mut searcher = searcher.build();
        let matcher = matcher.clone();
        move |file: &WalkedFile<'_>| {
            search_one(&mut searcher, &matcher, file, root, budget, opts.context as u64, collector_ref, totals_ref)
        }
    })?;
    totals.unreadable.fetch_add(unlisted, Ordering::Relaxed);

    let collector = collector.into_inner();
    Ok(SearchReport {
        files: collector.files.into_values().collect(),
        total_matches: totals.matches.load(Ordering::Relaxed),
        files_matched: totals.files.load(Ordering::Relaxed),
        binary_skipped: totals.binary.load(Ordering::Relaxed),
        unreadable: totals.unreadable.load(Ordering::Relaxed),
    })
}

#[derive(Default)]
struct Totals {
    matches: AtomicU64,
    files: AtomicU64,
    binary: AtomicU64,
    unreadable: AtomicU64,
}

/// Files that may still be shown, keyed by path relative to the root (`Path`
/// ordering compares component by component, so a directory's files stay together).
struct Collector {
    files: BTreeMap<PathBuf, FileHits>,
    stored: u64,
    budget: u64,
}

impl Collector {
    fn add(&mut self, key: PathBuf, hits: FileHits) {
        self.stored += hits.stored_matches;
        self.files.insert(key, hits);
        // Drop trailing files once the ones before them already fill the budget.
        while let Some((_, last)) = self.files.last_key_value() {
            if self.stored - last.stored_matches < self.budget {
                break;
            }
            self.stored -= last.stored_matches;
            self.files.pop_last();
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn search_one(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: &WalkedFile<'_>,
    root: &Path,
    budget: u64,
    context: u64,
    collector: &Mutex<Collector>,
    totals: &Totals,
) {
    let mut sink = Collect { hits: FileHits::default(), budget, context, storing: true, last_match: 0, binary: false };
    // A file swapped for a symlink or a FIFO mid-walk is counted unreadable,
    // never followed or waited on (see `WalkedFile::open`).
    let path = file.path();
    let Ok(file) = file.open() else {
        totals.unreadable.fetch_add(1, Ordering::Relaxed);
        return;
    };
    if searcher.search_file(matcher, &file, &mut sink).is_err() {
        totals.unreadable.fetch_add(1, Ordering::Relaxed);
        return;
    }
    if sink.binary {
        totals.binary.fetch_add(1, Ordering::Relaxed);
        return;
    }
    if sink.hits.matches == 0 {
        return;
    }
    totals.matches.fetch_add(sink.hits.matches, Ordering::Relaxed);
    totals.files.fetch_add(1, Ordering::Relaxed);
    let rel = path.strip_prefix(root).unwrap_or(path).to_path_buf();
    let mut hits = sink.hits;
    hits.shown = rel.to_string_lossy().replace('\\', "/");
    let mut collector = collector.lock();
    collector.add(rel, hits);
}

/// Receives one file's matches. After `budget` matches it only counts, keeping
/// just the after-context of the last stored match.
struct Collect {
    hits: FileHits,
    budget: u64,
    context: u64,
    storing: bool,
    last_match: u64,
    binary: bool,
}

impl Collect {
    fn push(&mut self, number: u64, kind: LineKind, bytes: &[u8]) {
        let text = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let start = self.hits.text.len();
        self.hits.text.extend_from_slice(text);
        self.hits.lines.push(Line { number, kind, start, end: self.hits.text.len() });
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.hits.matches += 1;
        if self.storing {
            if self.hits.stored_matches < self.budget {
                let number = mat.line_number().unwrap_or(0);
                self.push(number, LineKind::Match, mat.bytes());
                self.hits.stored_matches += 1;
                self.last_match = number;
            } else {
                self.storing = false;
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if self.storing {
            let number = ctx.line_number().unwrap_or(0);
            if self.hits.stored_matches >= self.budget && number > self.last_match + self.context {
                self.storing = false;
            } else {
                self.push(number, LineKind::Context, ctx.bytes());
            }
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        if self.storing && !self.hits.lines.is_empty() {
            self.hits.lines.push(Line { number: 0, kind: LineKind::Break, start: 0, end: 0 });
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        // Same rule as ripgrep's default for files found by walking: a NUL byte
        // means binary, and the whole file is left out.
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
#[path = "grep_files_tests.rs"]
mod tests;
