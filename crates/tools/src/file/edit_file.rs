//! `edit_file`: exact search-and-replace in one text file.
//!
//! Exactness is the point: the model must quote the text it means, so an edit can
//! never land somewhere unintended. Because exact quoting often fails in small
//! ways (indentation, line-number prefixes copied from `read_file`, a stale view of
//! the file), a miss explains itself: where the nearest text is and how it differs.
//! The file's line-ending style is kept, and the write is atomic (see `write_file`).

use std::collections::{BTreeSet, HashMap};

use schemars::JsonSchema;
use serde::Deserialize;
use similar::TextDiff;

use quiver_engine::{Capabilities, Domain, ReadError, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::file::write_file::write_atomically;
use crate::util::{io_error, looks_binary};

/// Diff lines shown in the result; a huge `replace_all` is summarized past this.
const MAX_DIFF_LINES: usize = 150;
/// Whole files are edited in memory; the same bound as read_file's.
const MAX_EDIT_BYTES: u64 = 64 << 20;
/// File lines quoted back in a hint.
const MAX_HINT_LINES: usize = 30;
/// Match positions listed in an "ambiguous" error.
const MAX_LISTED_MATCHES: usize = 20;

pub struct EditFile;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileInput {
    /// File path, relative to the workspace root.
    pub path: String,
    /// Exact text to find, including whitespace; must match once unless replace_all.
    pub old_string: String,
    /// Text to put in its place.
    pub new_string: String,
    /// Replace every occurrence (default false).
    pub replace_all: Option<bool>,
}

impl Tool for EditFile {
    type Input = EditFileInput;
    const NAME: &'static str = "edit_file";
    const DOMAIN: Domain = Domain::File;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::WRITES_FILES;

    fn description(&self) -> String {
        "Replace exact text in a file (old_string must be unique unless replace_all); returns a diff.".into()
    }

    async fn run(&self, input: EditFileInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = ctx.workspace.resolve(&input.path)?;
        let shown = ctx.workspace.display(&path);
        crate::file::protected_write::guard(ctx, &path, &shown).await?;
        match ctx.workspace.symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                return Err(ToolError::model(format!("`{shown}` is a directory; edit_file edits one file")));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ToolError::model(format!("`{shown}` does not exist; create it with write_file")));
            }
            Err(e) => return Err(io_error("read", &shown, &e)),
        }
        if input.old_string.is_empty() {
            return Err(ToolError::model(
                "`old_string` is empty; quote the text to replace (to write a whole file use write_file)",
            ));
        }
        if input.old_string == input.new_string {
            return Err(ToolError::model("`old_string` and `new_string` are identical; there is nothing to change"));
        }
        // Beneath the root, checked on the descriptor: a FIFO is refused, never waited on.
        let ws = ctx.workspace.clone();
        let read_path = path.clone();
        let bytes = tokio::task::spawn_blocking(move || ws.read_regular(&read_path, MAX_EDIT_BYTES))
            .await
            .map_err(|e| ToolError::Fatal(anyhow::anyhow!("edit_file read task panicked: {e}")))?
            .map_err(|e| match e {
                ReadError::NotRegular => ToolError::model(format!(
                    "`{shown}` is not a regular file (a pipe, socket or device); edit_file edits regular files only"
                )),
                ReadError::Directory => ToolError::model(format!("`{shown}` is a directory; edit_file edits one file")),
                ReadError::TooLarge(len) => ToolError::model(format!(
                    "`{shown}` is {} MiB, over the {} MiB edit_file limit",
                    len >> 20,
                    MAX_EDIT_BYTES >> 20
                )),
                ReadError::Io(e) => io_error("read", &shown, &e),
            })?;
        if looks_binary(&bytes) {
            return Err(ToolError::model(format!("`{shown}` is a binary file; edit_file edits text only")));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| ToolError::model(format!("`{shown}` is not valid UTF-8; edit_file edits UTF-8 text only")))?;

        let ending = LineEnding::of(&text);
        // The model usually quotes with `\n` whatever the file uses: try the pair in
        // the file's own style first, then verbatim, then in the other style (a file
        // with mixed endings may hold the quoted region that way). The replacement
        // takes the style its match was found in.
        let mut candidates: Vec<(String, String)> = Vec::new();
        for pair in [
            (ending.apply(&input.old_string), ending.apply(&input.new_string)),
            (input.old_string.clone(), input.new_string.clone()),
            (ending.other().apply(&input.old_string), ending.other().apply(&input.new_string)),
        ] {
            if !candidates.iter().any(|(old, _)| *old == pair.0) {
                candidates.push(pair);
            }
        }
        let Some((old, new_string, starts)) = candidates
            .into_iter()
            .map(|(old, new)| {
                let starts: Vec<usize> = text.match_indices(old.as_str()).map(|(i, _)| i).collect();
                (old, new, starts)
            })
            .find(|(_, _, starts)| !starts.is_empty())
        else {
            return Err(ToolError::model(not_found_message(&shown, &text, &input.old_string)));
        };
        let lines = line_numbers(&text, &starts);
        let replace_all = input.replace_all.unwrap_or(false);
        if lines.len() > 1 && !replace_all {
            return Err(ToolError::model(format!(
                "`old_string` appears {} times in `{shown}` (at lines {}); include more surrounding lines so it matches once, or set replace_all: true",
                lines.len(),
                list_lines(&lines)
            )));
        }
        if old == new_string {
            return Err(ToolError::model("`old_string` and `new_string` are identical; there is nothing to change"));
        }
        let updated = if replace_all {
            text.replace(old.as_str(), &new_string)
        } else {
            text.replacen(old.as_str(), &new_string, 1)
        };
        let rendered = diff(&shown, &text, &updated);
        write_atomically(&ctx.workspace, path, updated.into_bytes(), &shown).await?;

        let count = lines.len();
        let mut out = format!(
            "Edited `{shown}`: {count} replacement{} at line{} {}{}\n",
            if count == 1 { "" } else { "s" },
            if count == 1 { "" } else { "s" },
            list_lines(&lines),
            if ending == LineEnding::Crlf { " (CRLF line endings kept)" } else { "" }
        );
        out.push_str(&rendered);
        Ok(ToolOutput::text(out)
            .with_meta("path", shown)
            .with_meta("replacements", count)
            .with_meta("lines", lines)
            .with_meta("line_endings", ending.name()))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineEnding {
    Lf,
    Crlf,
}

impl LineEnding {
    /// The style most lines use; ties and files without newlines count as LF.
    fn of(text: &str) -> Self {
        let lf = text.matches('\n').count();
        let crlf = text.matches("\r\n").count();
        if crlf * 2 > lf { LineEnding::Crlf } else { LineEnding::Lf }
    }

    /// `s` rewritten to this style.
    fn apply(self, s: &str) -> String {
        let lf = s.replace("\r\n", "\n");
        match self {
            LineEnding::Lf => lf,
            LineEnding::Crlf => lf.replace('\n', "\r\n"),
        }
    }

    fn other(self) -> Self {
        match self {
            LineEnding::Lf => LineEnding::Crlf,
            LineEnding::Crlf => LineEnding::Lf,
        }
    }

    fn name(self) -> &'static str {
        match self {
            LineEnding::Lf => "lf",
            LineEnding::Crlf => "crlf",
        }
    }
}

/// 1-based line numbers of ascending byte offsets, in one pass over the text.
fn line_numbers(text: &str, offsets: &[usize]) -> Vec<usize> {
    let bytes = text.as_bytes();
    let (mut line, mut scanned) = (1, 0);
    offsets
        .iter()
        .map(|&at| {
            line += bytes[scanned..at].iter().filter(|b| **b == b'\n').count();
            scanned = at;
            line
        })
        .collect()
}

fn list_lines(lines: &[usize]) -> String {
    let mut shown: Vec<String> = lines.iter().take(MAX_LISTED_MATCHES).map(usize::to_string).collect();
    if lines.len() > MAX_LISTED_MATCHES {
        shown.push(format!("… {} more", lines.len() - MAX_LISTED_MATCHES));
    }
    shown.join(", ")
}

/// A unified diff of the change, shown with `\n` endings whatever the file uses
/// (a `\r` on every line would only be noise), cut at [`MAX_DIFF_LINES`].
pub(crate) fn diff(shown: &str, before: &str, after: &str) -> String {
    let before = before.replace("\r\n", "\n");
    let after = after.replace("\r\n", "\n");
    let text_diff = TextDiff::from_lines(&before, &after);
    let rendered =
        text_diff.unified_diff().context_radius(3).header(&format!("a/{shown}"), &format!("b/{shown}")).to_string();
    let total = rendered.lines().count();
    if total <= MAX_DIFF_LINES {
        return rendered;
    }
    let mut out: String = rendered.lines().take(MAX_DIFF_LINES).flat_map(|l| [l, "\n"]).collect();
    out.push_str(&format!("… diff cut: {} more lines (read the file to see the rest)\n", total - MAX_DIFF_LINES));
    out
}

/// Why the search text was not found, with the best help we can give.
fn not_found_message(shown: &str, text: &str, old: &str) -> String {
    let mut msg = format!("`old_string` was not found in `{shown}`.");
    let file_lines: Vec<&str> = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let old_lines: Vec<&str> = old.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    if old_lines.is_empty() {
        msg.push_str(" It holds only line breaks; quote some visible text around the spot instead.");
        return msg;
    }
    if has_line_number_prefixes(&old_lines) {
        msg.push_str(
            " It seems to include the line-number prefixes read_file shows (`    12\\t`); quote only the file's own text.",
        );
        return msg;
    }
    if let Some(start) = whitespace_insensitive_match(&file_lines, &old_lines) {
        let end = start + old_lines.len() - 1;
        msg.push_str(&format!(
            " The same text with different whitespace or indentation is at {}; copy it exactly (tabs vs spaces, trailing spaces):\n{}",
            span(start, end),
            quote(&file_lines, start, end)
        ));
        return msg;
    }
    match closest_window(&file_lines, &old_lines) {
        Some((start, score)) if score >= 0.5 => {
            let end = (start + old_lines.len()).min(file_lines.len()) - 1;
            msg.push_str(&format!(
                " The closest text ({:.0}% similar) is at {}:\n{}",
                score * 100.0,
                span(start, end),
                quote(&file_lines, start, end)
            ));
            let last = old_lines.len() - 1;
            if let Some((j, file_line)) = (start..=end)
                .map(|k| file_lines[k])
                .enumerate()
                .find(|(j, l)| !line_matches(&norm(l), &norm(old_lines[*j]), *j == 0, *j == last))
            {
                msg.push_str(&format!(
                    "First difference, line {}: the file has `{}` where old_string has `{}`.\n",
                    start + j + 1,
                    clip(file_line.trim()),
                    clip(old_lines[j].trim())
                ));
            }
            msg.push_str("Read the file again if it may have changed.");
        }
        _ => msg.push_str(" No similar text either; read the file to see its current content."),
    }
    msg
}

/// Every non-empty line starts with digits and a tab, as read_file renders lines.
fn has_line_number_prefixes(lines: &[&str]) -> bool {
    let mut any = false;
    for line in lines.iter().filter(|l| !l.trim().is_empty()) {
        let rest = line.trim_start();
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || !rest[digits..].starts_with('\t') {
            return false;
        }
        any = true;
    }
    any
}

fn norm(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// First window where old's lines equal the file's once whitespace is collapsed.
/// The first and last quoted lines may be partial (a quote can start mid-line).
fn whitespace_insensitive_match(file: &[&str], old: &[&str]) -> Option<usize> {
    let old: Vec<String> = old.iter().map(|l| norm(l)).collect();
    if old.iter().all(String::is_empty) || old.len() > file.len() {
        return None;
    }
    let last = old.len() - 1;
    (0..=file.len() - old.len())
        .find(|&start| old.iter().enumerate().all(|(j, o)| line_matches(&norm(file[start + j]), o, j == 0, j == last)))
}

/// Whether a normalized file line matches a normalized quoted line. The first and
/// last quoted lines may be partial, since a quote can start or end mid-line.
fn line_matches(file_line: &str, quoted: &str, first: bool, last: bool) -> bool {
    match (first, last) {
        (true, true) => file_line.contains(quoted),
        (true, false) => file_line.ends_with(quoted),
        (false, true) => file_line.starts_with(quoted),
        (false, false) => file_line == quoted,
    }
}

/// The window of the file most like the quoted lines, by mean per-line bigram
/// similarity. Only windows anchored on a likely line are scored, which keeps the
/// cost linear in the file size even for long quotes.
fn closest_window(file: &[&str], old: &[&str]) -> Option<(usize, f64)> {
    const MAX_WINDOWS: usize = 500;
    const ANCHORS_PER_LINE: usize = 20;
    if file.is_empty() {
        return None;
    }
    let clipped = |l: &str| -> String { norm(l).chars().take(300).collect() };
    let file_norm: Vec<String> = file.iter().map(|l| clipped(l)).collect();
    let old_norm: Vec<String> = old.iter().take(60).map(|l| clipped(l)).collect();
    let width = old_norm.len().min(file_norm.len());
    let max_start = file_norm.len() - width;

    let mut starts = BTreeSet::new();
    // Anchors: exact line matches, and the lines most like the quote's longest line.
    let mut index: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, line) in file_norm.iter().enumerate().filter(|(_, l)| l.len() >= 4) {
        index.entry(line.as_str()).or_default().push(k);
    }
    for (j, line) in old_norm.iter().enumerate() {
        for &k in index.get(line.as_str()).into_iter().flatten().take(ANCHORS_PER_LINE) {
            starts.insert(k.saturating_sub(j).min(max_start));
        }
    }
    if let Some((j, longest)) = old_norm.iter().enumerate().max_by_key(|(j, l)| (l.len(), usize::MAX - j)) {
        let mut scored: Vec<(f64, usize)> =
            file_norm.iter().enumerate().map(|(k, l)| (strsim::sorensen_dice(l, longest), k)).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, k) in scored.into_iter().take(ANCHORS_PER_LINE) {
            starts.insert(k.saturating_sub(j).min(max_start));
        }
    }
    let mut best: Option<(usize, f64)> = None;
    for start in starts.into_iter().take(MAX_WINDOWS) {
        let score = (0..width).map(|j| strsim::sorensen_dice(&file_norm[start + j], &old_norm[j])).sum::<f64>()
            / old_norm.len() as f64;
        if best.is_none_or(|(_, s)| score > s) {
            best = Some((start, score));
        }
    }
    best
}

fn span(start: usize, end: usize) -> String {
    if start == end { format!("line {}", start + 1) } else { format!("lines {}-{}", start + 1, end + 1) }
}

/// File lines `start..=end`, numbered like read_file, at most [`MAX_HINT_LINES`].
fn quote(file: &[&str], start: usize, end: usize) -> String {
    let mut out = String::new();
    for (k, line) in file.iter().enumerate().take(end + 1).skip(start).take(MAX_HINT_LINES) {
        out.push_str(&format!("{:>6}\t{}\n", k + 1, line));
    }
    if end + 1 - start > MAX_HINT_LINES {
        out.push_str(&format!("… {} more lines\n", end + 1 - start - MAX_HINT_LINES));
    }
    out
}

fn clip(s: &str) -> String {
    if s.chars().count() <= 120 { s.to_string() } else { format!("{}…", s.chars().take(120).collect::<String>()) }
}

#[cfg(test)]
#[path = "edit_file_tests.rs"]
mod tests;
