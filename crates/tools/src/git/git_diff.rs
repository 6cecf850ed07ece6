//! `git_diff`: working-tree or staged changes as structured files and hunks, with
//! per-file and total line counts, plus a bounded copy of the raw patch.
//!
//! Two git calls, both through the CLI: `--raw --numstat -z` gives the exact file
//! list (NUL-separated, so odd file names need no unquoting) with counts, and the
//! patch gives the hunks. Patch sections are matched to files by their exact header,
//! which survives custom diff orders and type changes (two sections for one path).
//!
//! `rev` names a revision (`main`: it against the work tree, or the index with
//! `staged`) or a range (`HEAD~3..HEAD`, `main...topic`). It reaches git as
//! one argv element, never through a shell, and is checked first: a model's
//! `--output=/tmp/x` in that position would be an option to git, not a
//! revision, so anything starting with `-` (on either side of a range) and any
//! character a revision does not need is refused.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::git::repo;

const DEFAULT_CONTEXT: u32 = 3;
const MAX_CONTEXT: u32 = 200;
/// Bytes of hunk lines returned across all files. With the raw patch's budget this
/// keeps a result under dispatch's spill threshold (32 KiB), so the structure stays
/// in view; a larger diff is narrowed with `path`.
const MAX_HUNK_BYTES: usize = 14 * 1024;
const MAX_LINE_CHARS: usize = 500;
/// The raw patch shown next to the structure, cut at a line boundary.
const MAX_RAW_BYTES: usize = 8 * 1024;
/// Longer than any revision expression a person writes.
const MAX_REV_CHARS: usize = 200;

pub struct GitDiff;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitDiffInput {
    /// Diff the index against HEAD (what would be committed) instead of unstaged changes.
    #[serde(default)]
    pub staged: Option<bool>,
    /// Only this file or directory, relative to the workspace root.
    #[serde(default)]
    pub path: Option<String>,
    /// Context lines around each change (default 3).
    #[serde(default)]
    pub context: Option<u32>,
    /// A revision (`main`: it against the work tree) or range (`HEAD~3..HEAD`, `main...topic`).
    #[serde(default)]
    pub rev: Option<String>,
    /// Only files and line counts (git diff --stat), no hunks.
    #[serde(default)]
    pub stat: Option<bool>,
}

impl Tool for GitDiff {
    type Input = GitDiffInput;
    const NAME: &'static str = "git_diff";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Git diff of unstaged (or staged) changes, or against a revision or range, as JSON: files, hunks, added/deleted line counts, plus the raw patch (or --stat)."
            .into()
    }

    async fn run(&self, input: GitDiffInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let context = input.context.unwrap_or(DEFAULT_CONTEXT);
        if context > MAX_CONTEXT {
            return Err(ToolError::model(format!("`context` must be at most {MAX_CONTEXT} lines, got {context}")));
        }
        let staged = input.staged.unwrap_or(false);
        let stat = input.stat.unwrap_or(false);
        let rev = match input.rev.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
            Some(raw) => Some(check_rev(raw)?),
            None => None,
        };
        if staged && rev.as_deref().is_some_and(|r| r.contains("..")) {
            return Err(ToolError::model(
                "`staged` compares the index with one revision; a range (`A..B`) compares two commits: drop one",
            ));
        }
        let root = ctx.workspace.root();
        // Pathspec magic `:(literal)` keeps `*` or `?` in a real file name from globbing.
        let pathspec = match &input.path {
            Some(raw) => format!(":(literal){}", ctx.workspace.display(&ctx.workspace.resolve(raw)?)),
            None => ".".to_string(),
        };
        let grant = crate::process::authorize(ctx, &CommandRequest::tool("git diff")).await?;
        let launch = crate::process::Launch::new(ctx, grant)?;
        repo::require_repo(&launch, root, Self::NAME).await?;

        let unified = format!("-U{context}");
        let mut common = vec!["diff", "--relative", "-M", "--no-ext-diff"];
        if staged {
            common.push("--cached");
        }
        // Checked by `check_rev`: never an option, so it is a revision to git.
        if let Some(rev) = &rev {
            common.push(rev.as_str());
        }
        let mut list_args = common.clone();
        list_args.extend(["--raw", "--numstat", "-z", "--", &pathspec]);
        let mut patch_args = common;
        if stat {
            patch_args.extend(["--no-color", "--stat", "--", &pathspec]);
        } else {
            patch_args.extend(["--no-color", &unified, "--src-prefix=a/", "--dst-prefix=b/", "--", &pathspec]);
        }
        let (listed, patch) = tokio::join!(repo::run(&launch, root, &list_args), repo::run(&launch, root, &patch_args));
        let mut files = parse_file_list(&listed?);
        let patch = String::from_utf8_lossy(&patch?).into_owned();
        // With `stat` the second call printed `--stat`, which has no hunks.
        let truncated_hunks = !stat && attach_hunks(&mut files, &patch);

        let additions: u64 = files.iter().map(|f| f.additions).sum();
        let deletions: u64 = files.iter().map(|f| f.deletions).sum();
        let (raw, raw_truncated) = bounded(&patch, MAX_RAW_BYTES);
        let mut out = Map::new();
        out.insert("staged".into(), json!(staged));
        if let Some(rev) = &rev {
            out.insert("rev".into(), json!(rev));
        }
        out.insert("files".into(), Value::Array(files.iter().map(FileDiff::to_json).collect()));
        out.insert("stats".into(), json!({"files": files.len(), "additions": additions, "deletions": deletions}));
        if files.is_empty() && rev.is_some() {
            out.insert("note".into(), json!("no differences for this revision and path"));
        } else if files.is_empty() {
            let what = if staged { "no staged changes" } else { "no unstaged changes (staged: true shows the index)" };
            out.insert("note".into(), json!(format!("{what}; git_status lists untracked files")));
        }
        if truncated_hunks || raw_truncated {
            out.insert(
                "truncated".into(),
                json!(format!(
                    "the diff is large: hunk lines are cut after {} KiB and the raw patch after {} KiB; pass `path` for one file or a lower `context`",
                    MAX_HUNK_BYTES / 1024,
                    MAX_RAW_BYTES / 1024
                )),
            );
        }
        out.insert("raw".into(), json!(raw));
        Ok(ToolOutput::json(Value::Object(out))
            .with_meta("files", files.len())
            .with_meta("additions", additions)
            .with_meta("deletions", deletions)
            .with_meta("truncated", truncated_hunks || raw_truncated))
    }
}

/// A revision or range as git should read it, or the model's error. What a
/// revision needs: names (`main`, `origin/main`, `v1.2`), ids, `~N`, `^N`,
/// `@{u}`, `..` and `...`. Nothing else gets through, and no side of a range
/// may start with `-` (git would read `--output=...` as an option).
fn check_rev(raw: &str) -> Result<String, ToolError> {
    let refuse = |why: &str| Err(ToolError::model(format!("`rev` {raw:?} is not a revision or range: {why}")));
    if raw.chars().count() > MAX_REV_CHARS {
        return refuse(&format!("longer than {MAX_REV_CHARS} characters"));
    }
    if let Some(bad) = raw.chars().find(|c| !(c.is_alphanumeric() || "/._-~^@{}".contains(*c))) {
        return refuse(&format!("{bad:?} has no place in one (give e.g. `main`, `HEAD~3..HEAD`, `main...topic`)"));
    }
    let sides: Vec<&str> = raw.split("..").map(|s| s.trim_start_matches('.')).collect();
    if sides.len() > 2 {
        return refuse("a range has one `..` or `...`");
    }
    if sides.iter().any(|s| s.starts_with('-')) {
        return refuse("it starts with `-`, which git would read as an option");
    }
    if sides.iter().all(|s| s.is_empty()) {
        return refuse("name a revision on at least one side of the range");
    }
    Ok(raw.to_string())
}

#[derive(Debug, Default)]
struct FileDiff {
    path: String,
    old_path: Option<String>,
    status: char,
    additions: u64,
    deletions: u64,
    binary: bool,
    hunks: Vec<Hunk>,
}

#[derive(Debug)]
struct Hunk {
    header: String,
    old_start: u64,
    old_lines: u64,
    new_start: u64,
    new_lines: u64,
    lines: Vec<String>,
}

impl FileDiff {
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("path".into(), json!(self.path));
        if let Some(old) = &self.old_path {
            m.insert("old_path".into(), json!(old));
        }
        m.insert("status".into(), json!(repo::letter_word(self.status)));
        m.insert("additions".into(), json!(self.additions));
        m.insert("deletions".into(), json!(self.deletions));
        if self.binary {
            m.insert("binary".into(), json!(true));
        }
        let hunks: Vec<Value> = self
            .hunks
            .iter()
            .map(|h| {
                json!({"header": h.header, "old_start": h.old_start, "old_lines": h.old_lines,
                       "new_start": h.new_start, "new_lines": h.new_lines, "lines": h.lines})
            })
            .collect();
        m.insert("hunks".into(), Value::Array(hunks));
        Value::Object(m)
    }

    /// The `diff --git` (or, for a conflicted file, `diff --cc`) line git prints for this file.
    fn headers(&self) -> [String; 2] {
        let old = self.old_path.as_deref().unwrap_or(&self.path);
        [
            format!("diff --git {} {}", quote_c(&format!("a/{old}")), quote_c(&format!("b/{}", self.path))),
            format!("diff --cc {}", quote_c(&self.path)),
        ]
    }
}

/// Parses `--raw --numstat -z`: all raw records first, then the numstat records in
/// the same order.
fn parse_file_list(raw: &[u8]) -> Vec<FileDiff> {
    let text = String::from_utf8_lossy(raw);
    let mut tokens = text.split('\0').peekable();
    let mut files: Vec<FileDiff> = Vec::new();
    let mut counted = 0;
    while let Some(token) = tokens.next() {
        if let Some(meta) = token.strip_prefix(':') {
            let status = meta.rsplit(' ').next().and_then(|s| s.chars().next()).unwrap_or('M');
            let first = tokens.next().unwrap_or_default().to_string();
            let file = if matches!(status, 'R' | 'C') {
                let new = tokens.next().unwrap_or_default().to_string();
                FileDiff { path: new, old_path: Some(first), status, ..FileDiff::default() }
            } else {
                FileDiff { path: first, status, ..FileDiff::default() }
            };
            files.push(file);
        } else if let Some((adds, rest)) = token.split_once('\t') {
            let (dels, path) = rest.split_once('\t').unwrap_or((rest, ""));
            if path.is_empty() {
                // A rename: the two paths follow as their own records.
                tokens.next();
                tokens.next();
            }
            if let Some(file) = files.get_mut(counted) {
                file.binary = adds == "-";
                file.additions = adds.parse().unwrap_or(0);
                file.deletions = dels.parse().unwrap_or(0);
            }
            counted += 1;
        }
    }
    files
}

/// Splits the patch into per-file sections and parses their hunks into `files`.
/// Returns whether the byte budget cut any hunk.
fn attach_hunks(files: &mut [FileDiff], patch: &str) -> bool {
    let mut budget = MAX_HUNK_BYTES;
    let mut truncated = false;
    let mut current: Option<usize> = None;
    for line in patch.lines() {
        if line.starts_with("diff --git ") || line.starts_with("diff --cc ") || line.starts_with("diff --combined ") {
            current = files.iter().position(|f| f.headers().iter().any(|h| h == line));
            continue;
        }
        let Some(file) = current.and_then(|i| files.get_mut(i)) else { continue };
        if line.starts_with("@@") {
            if budget < line.len() {
                truncated = true;
                continue;
            }
            budget -= line.len();
            file.hunks.push(parse_hunk_header(line));
        } else if let Some(hunk) = file.hunks.last_mut()
            && matches!(line.as_bytes().first(), Some(b' ' | b'+' | b'-' | b'\\'))
        {
            let line = clip(line);
            if budget < line.len() {
                truncated = true;
                continue;
            }
            budget -= line.len();
            hunk.lines.push(line);
        }
    }
    truncated
}

/// `@@ -a,b +c,d @@ heading` (or `@@@ -a,b -c,d +e,f @@@` in a combined diff: the
/// first `-` range is taken as old). An omitted count means 1.
fn parse_hunk_header(line: &str) -> Hunk {
    let mut hunk =
        Hunk { header: line.to_string(), old_start: 0, old_lines: 0, new_start: 0, new_lines: 0, lines: vec![] };
    let range = |r: &str| -> (u64, u64) {
        let (start, len) = r.split_once(',').unwrap_or((r, "1"));
        (start.parse().unwrap_or(0), len.parse().unwrap_or(0))
    };
    let mut seen_old = false;
    for token in line.split(' ').skip(1).take_while(|t| !t.starts_with("@@")) {
        if let Some(r) = token.strip_prefix('-').filter(|_| !seen_old) {
            (hunk.old_start, hunk.old_lines) = range(r);
            seen_old = true;
        } else if let Some(r) = token.strip_prefix('+') {
            (hunk.new_start, hunk.new_lines) = range(r);
        }
    }
    hunk
}

fn clip(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!("{}… [line truncated]", &line[..cut]),
        None => line.to_string(),
    }
}

/// At most `max` bytes of `text`, cut at a line end.
fn bounded(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_string(), false);
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &text[..cut];
    let head = head.rfind('\n').map_or(head, |i| &head[..=i]);
    (format!("{head}… [{} more bytes]\n", text.len() - head.len()), true)
}

/// Git's C-style quoting of a path in patch headers (with `core.quotepath=off`,
/// only `"`, `\` and control characters trigger it).
fn quote_c(path: &str) -> String {
    if !path.chars().any(|c| c == '"' || c == '\\' || c < ' ' || c == '\x7f') {
        return path.to_string();
    }
    let mut out = String::from("\"");
    for c in path.chars() {
        match c {
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c < ' ' || c == '\x7f' => out.push_str(&format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
#[path = "git_diff_tests.rs"]
mod tests;
