//! Parsing a git-style unified diff into per-file operations and hunks.
//!
//! Hand-written rather than taken from a diff crate because the tool's contract
//! is its error messages: a model that sends a broken patch must learn which line
//! is wrong and why (counts that disagree with the body, a header that is not a
//! header), and the parser must never silently drop lines past a hunk's counts.

use quiver_engine::ToolError;

/// What a file section of the patch does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Modify { path: String },
    Create { path: String },
    Delete { path: String },
    Rename { from: String, to: String },
    Copy { from: String, to: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Context,
    Remove,
    Add,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    pub op: Op,
    /// The line without its `\n` and without a trailing `\r`.
    pub text: String,
    /// The patch line ended in `\r\n` (used for the line endings of created files).
    pub cr: bool,
    /// Followed by `\ No newline at end of file`.
    pub no_eol: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: usize,
    pub old_count: usize,
    pub new_count: usize,
    /// The `@@ ... @@` part of the header, for messages.
    pub header: String,
    pub lines: Vec<HunkLine>,
}

impl Hunk {
    /// Context and removed lines: what must be found in the file.
    pub fn old_lines(&self) -> impl Iterator<Item = &HunkLine> {
        self.lines.iter().filter(|l| l.op != Op::Add)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    pub action: Action,
    /// Unix permission bits from `new file mode` / `new mode` (e.g. 0o755).
    pub new_mode: Option<u32>,
    pub hunks: Vec<Hunk>,
}

/// One physical line of the patch, 1-based number kept for messages.
struct Lines<'a> {
    lines: Vec<&'a str>,
    pos: usize,
}

impl<'a> Lines<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.lines.get(self.pos).copied()
    }
    fn peek_at(&self, ahead: usize) -> Option<&'a str> {
        self.lines.get(self.pos + ahead).copied()
    }
    /// 1-based number of the line `peek` returns.
    fn number(&self) -> usize {
        self.pos + 1
    }
    /// A `--- ` line directly followed by a `+++ ` line starts a file section.
    fn at_file_header(&self) -> bool {
        let head = |l: Option<&str>, p: &str| l.is_some_and(|l| l.starts_with(p));
        head(self.peek(), "diff --git ") || (head(self.peek(), "--- ") && head(self.peek_at(1), "+++ "))
    }
}

fn err(msg: String) -> ToolError {
    ToolError::model(msg)
}

/// Short, single-line rendering of a patch line for messages.
fn quote(line: &str) -> String {
    let line = line.trim_end_matches('\r');
    if line.chars().count() > 80 {
        format!("`{}…`", line.chars().take(80).collect::<String>())
    } else {
        format!("`{line}`")
    }
}

pub fn parse(patch: &str) -> Result<Vec<FilePatch>, ToolError> {
    let mut body: Vec<&str> = patch.split('\n').collect();
    if body.last() == Some(&"") {
        body.pop();
    }
    if body.iter().find(|l| !l.trim().is_empty()).is_some_and(|l| l.trim() == "*** Begin Patch") {
        return Err(err(
            "this is the `*** Begin Patch` envelope format, not a unified diff; send `git diff` style text: `--- a/path`, `+++ b/path`, then `@@ -start,count +start,count @@` hunks"
                .into(),
        ));
    }
    let mut lines = Lines { lines: body, pos: 0 };
    let mut files = Vec::new();
    while let Some(line) = lines.peek() {
        let line = line.trim_end_matches('\r');
        if line.starts_with("diff --git ") {
            files.push(git_section(&mut lines)?);
        } else if line.starts_with("--- ") {
            if !lines.peek_at(1).is_some_and(|l| l.starts_with("+++ ")) {
                return Err(err(format!(
                    "line {}: {} must be followed by a `+++ b/path` line, found {}",
                    lines.number(),
                    quote(line),
                    lines.peek_at(1).map_or("the end of the patch".into(), quote)
                )));
            }
            files.push(unified_section(&mut lines)?);
        } else if line.starts_with("@@") {
            return Err(err(format!(
                "line {}: hunk header {} comes before any file header; put `--- a/path` and `+++ b/path` lines before a file's first hunk",
                lines.number(),
                quote(line)
            )));
        } else if line.starts_with("+++ ") {
            return Err(err(format!("line {}: {} has no `--- a/path` line before it", lines.number(), quote(line))));
        } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
            return Err(binary_error(line));
        } else {
            // Text before the first file (a commit message), between files, or a
            // `git format-patch` mail signature (`-- ` and a version).
            lines.pos += 1;
        }
    }
    if files.is_empty() {
        return Err(err(
            "no file headers found: a patch needs `--- a/path` and `+++ b/path` lines, each followed by `@@ -start,count +start,count @@` hunks"
                .into(),
        ));
    }
    Ok(files)
}

fn binary_error(line: &str) -> ToolError {
    err(format!("binary patches are not supported ({}); apply_patch edits text files only", quote(line)))
}

/// `--- a/x` / `+++ b/x` followed by hunks.
fn unified_section(lines: &mut Lines) -> Result<FilePatch, ToolError> {
    let start_no = lines.number();
    let (old, new, header) = file_header_pair(lines)?;
    let hunks = hunks(lines, &header, start_no)?;
    let action = match (old, new) {
        (None, Some(path)) => Action::Create { path },
        (Some(path), None) => Action::Delete { path },
        // Without git's rename headers a differing name is the usual `diff -u x.orig x`:
        // the new name is the file being changed.
        (Some(_), Some(path)) => Action::Modify { path },
        (None, None) => return Err(err(format!("{header}: both sides are /dev/null"))),
    };
    Ok(FilePatch { action, new_mode: None, hunks })
}

/// Parses a `---`/`+++` pair; `None` stands for `/dev/null`.
fn file_header_pair(lines: &mut Lines) -> Result<(Option<String>, Option<String>, String), ToolError> {
    let minus_no = lines.number();
    let minus = lines.peek().unwrap_or_default().trim_end_matches('\r');
    let plus = lines.peek_at(1).unwrap_or_default().trim_end_matches('\r');
    let old = header_path(&minus[4..], "a/", minus_no)?;
    let new = header_path(&plus[4..], "b/", minus_no + 1)?;
    lines.pos += 2;
    let header = format!("`{}`", new.as_deref().or(old.as_deref()).unwrap_or("/dev/null"));
    Ok((old, new, header))
}

fn header_path(raw: &str, prefix: &str, line_no: usize) -> Result<Option<String>, ToolError> {
    // Traditional diffs append a tab and a timestamp after the name.
    let raw = raw.split('\t').next().unwrap_or_default().trim_end();
    let name = if raw.starts_with('"') { unquote(raw, line_no)? } else { raw.to_string() };
    if name.is_empty() {
        return Err(err(format!("line {line_no}: file header has no path")));
    }
    if name == "/dev/null" {
        return Ok(None);
    }
    Ok(Some(name.strip_prefix(prefix).map(str::to_string).unwrap_or(name)))
}

/// Git C-quotes names with special characters: `"a/tab\there"`.
fn unquote(raw: &str, line_no: usize) -> Result<String, ToolError> {
    let bad = || err(format!("line {line_no}: cannot parse quoted path {}", quote(raw)));
    let inner = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')).ok_or_else(bad)?;
    let mut bytes = Vec::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let escaped = chars.next().ok_or_else(bad)?;
        let byte = match escaped {
            'n' => b'\n',
            't' => b'\t',
            'r' => b'\r',
            'a' => 7,
            'b' => 8,
            'f' => 12,
            'v' => 11,
            '\\' => b'\\',
            '"' => b'"',
            '0'..='3' => {
                let digits: String = [Some(escaped), chars.next(), chars.next()].into_iter().flatten().collect();
                u8::from_str_radix(&digits, 8).map_err(|_| bad())?
            }
            _ => return Err(bad()),
        };
        bytes.push(byte);
    }
    String::from_utf8(bytes).map_err(|_| bad())
}

/// A `diff --git` section: extended headers, then optional `---`/`+++` and hunks.
fn git_section(lines: &mut Lines) -> Result<FilePatch, ToolError> {
    let start_no = lines.number();
    let first = lines.peek().unwrap_or_default().trim_end_matches('\r');
    let (git_old, git_new) = git_paths(&first["diff --git ".len()..])
        .ok_or_else(|| err(format!("line {start_no}: cannot read the two paths of {}", quote(first))))?;
    lines.pos += 1;
    let (mut rename_from, mut rename_to, mut copy_from, mut copy_to) = (None, None, None, None);
    let (mut created, mut deleted, mut new_mode) = (false, false, None);
    while let Some(line) = lines.peek() {
        let line = line.trim_end_matches('\r');
        if lines.at_file_header() || line.starts_with("@@") || line.starts_with("--- ") {
            break;
        }
        let no = lines.number();
        if let Some(mode) = line.strip_prefix("new file mode ") {
            created = true;
            new_mode = Some(file_mode(mode, no)?);
        } else if let Some(mode) = line.strip_prefix("deleted file mode ") {
            deleted = true;
            file_mode(mode, no)?;
        } else if let Some(mode) = line.strip_prefix("new mode ") {
            new_mode = Some(file_mode(mode, no)?);
        } else if let Some(mode) = line.strip_prefix("old mode ") {
            file_mode(mode, no)?;
        } else if let Some(p) = line.strip_prefix("rename from ") {
            rename_from = Some(plain_or_quoted(p, no)?);
        } else if let Some(p) = line.strip_prefix("rename to ") {
            rename_to = Some(plain_or_quoted(p, no)?);
        } else if let Some(p) = line.strip_prefix("copy from ") {
            copy_from = Some(plain_or_quoted(p, no)?);
        } else if let Some(p) = line.strip_prefix("copy to ") {
            copy_to = Some(plain_or_quoted(p, no)?);
        } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
            return Err(binary_error(line));
        } else if !(line.starts_with("index ")
            || line.starts_with("similarity index ")
            || line.starts_with("dissimilarity index ")
            || line.is_empty())
        {
            return Err(err(format!(
                "line {no}: {} is not a git extended header (expected `index`, `new file mode`, `rename from`, ... or `--- a/path`)",
                quote(line)
            )));
        }
        lines.pos += 1;
    }

    let (mut old, mut new) = (Some(git_old), Some(git_new));
    let mut header = format!("`{}`", new.as_deref().unwrap_or_default());
    if lines.peek().is_some_and(|l| l.starts_with("--- ")) {
        if !lines.peek_at(1).is_some_and(|l| l.starts_with("+++ ")) {
            return Err(err(format!(
                "line {}: {} must be followed by a `+++ b/path` line",
                lines.number(),
                quote(lines.peek().unwrap_or_default())
            )));
        }
        (old, new, header) = file_header_pair(lines)?;
    }
    let has_body = lines.peek().is_some_and(|l| l.starts_with("@@"));
    let hunks = if has_body { hunks(lines, &header, start_no)? } else { Vec::new() };

    let action = match (rename_from, rename_to, copy_from, copy_to) {
        (Some(from), Some(to), _, _) => Action::Rename { from, to },
        (_, _, Some(from), Some(to)) => Action::Copy { from, to },
        (None, None, None, None) => match (old, new) {
            (None, Some(path)) => Action::Create { path },
            (Some(path), None) => Action::Delete { path },
            (Some(_), Some(path)) if created => Action::Create { path },
            (Some(path), Some(_)) if deleted => Action::Delete { path },
            (Some(_), Some(path)) => Action::Modify { path },
            (None, None) => return Err(err(format!("line {start_no}: both sides are /dev/null"))),
        },
        _ => {
            return Err(err(format!(
                "line {start_no}: `rename from`/`rename to` (or `copy from`/`copy to`) must come as a pair"
            )));
        }
    };
    if let Action::Modify { path } = &action
        && hunks.is_empty()
        && new_mode.is_none()
    {
        return Err(no_hunks(&format!("`{path}`"), start_no));
    }
    Ok(FilePatch { action, new_mode, hunks })
}

fn no_hunks(header: &str, line_no: usize) -> ToolError {
    err(format!(
        "{header} (line {line_no}) has no hunks: after its `+++` line each file needs at least one `@@ -start,count +start,count @@` hunk"
    ))
}

fn plain_or_quoted(raw: &str, line_no: usize) -> Result<String, ToolError> {
    if raw.starts_with('"') { unquote(raw, line_no) } else { Ok(raw.to_string()) }
}

fn file_mode(raw: &str, line_no: usize) -> Result<u32, ToolError> {
    match raw.trim() {
        "100644" => Ok(0o644),
        "100755" => Ok(0o755),
        "120000" | "160000" => Err(err(format!(
            "line {line_no}: symlink and submodule entries (mode {}) are not supported; apply_patch edits regular files",
            raw.trim()
        ))),
        other => Err(err(format!("line {line_no}: unknown file mode `{other}` (expected 100644 or 100755)"))),
    }
}

/// The two paths of `diff --git a/x b/x`. Names may contain spaces, so the split
/// is where the two halves agree, else at ` b/`.
fn git_paths(rest: &str) -> Option<(String, String)> {
    if let Some(quoted) = rest.strip_prefix('"') {
        let end = quoted.find('"').map(|i| i + 2)?;
        let old = unquote(&rest[..end], 0).ok()?;
        let new_raw = rest[end..].trim_start();
        let new = if new_raw.starts_with('"') { unquote(new_raw, 0).ok()? } else { new_raw.to_string() };
        return Some((strip(old, "a/"), strip(new, "b/")));
    }
    let bytes = rest.len();
    if bytes % 2 == 1 && rest.is_char_boundary(bytes / 2) && rest.is_char_boundary(bytes / 2 + 1) {
        let (a, b) = (&rest[..bytes / 2], &rest[bytes / 2 + 1..]);
        if rest.as_bytes()[bytes / 2] == b' ' && a.strip_prefix("a/") == b.strip_prefix("b/") {
            return Some((strip(a.into(), "a/"), strip(b.into(), "b/")));
        }
    }
    let (a, b) = rest.split_once(" b/").map(|(a, b)| (a.to_string(), format!("b/{b}")))?;
    Some((strip(a, "a/"), strip(b, "b/")))
}

fn strip(path: String, prefix: &str) -> String {
    path.strip_prefix(prefix).map(str::to_string).unwrap_or(path)
}

/// Every `@@` hunk of one file; at least one.
fn hunks(lines: &mut Lines, file: &str, section_no: usize) -> Result<Vec<Hunk>, ToolError> {
    let mut out: Vec<Hunk> = Vec::new();
    loop {
        // Blank lines between hunks are harmless.
        while lines.peek().is_some_and(|l| l.trim_end_matches('\r').is_empty()) {
            lines.pos += 1;
        }
        let Some(line) = lines.peek() else { break };
        let line = line.trim_end_matches('\r');
        if line.starts_with("@@") {
            let hunk = hunk(lines, file, out.len() + 1)?;
            out.push(hunk);
            continue;
        }
        if lines.at_file_header() || line == "-- " {
            break;
        }
        if let Some(last) = out.last()
            && (line.starts_with('+') || line.starts_with('-') || line.starts_with(' '))
        {
            return Err(err(format!(
                "{file}: hunk {} ({}) has more lines than its header counts: it promises {} old and {} new lines, but line {} ({}) continues it; fix the counts in the header",
                out.len(),
                last.header,
                last.old_count,
                last.new_count,
                lines.number(),
                quote(line)
            )));
        }
        if out.is_empty() {
            return Err(err(format!(
                "{file}: line {}: expected a hunk header `@@ -start,count +start,count @@`, found {}",
                lines.number(),
                quote(line)
            )));
        }
        break;
    }
    if out.is_empty() {
        return Err(no_hunks(file, section_no));
    }
    Ok(out)
}

fn hunk(lines: &mut Lines, file: &str, index: usize) -> Result<Hunk, ToolError> {
    let header_no = lines.number();
    let raw = lines.peek().unwrap_or_default().trim_end_matches('\r');
    let (old_start, old_count, new_count, header) = hunk_header(raw).ok_or_else(|| {
        err(format!(
            "{file}: line {header_no}: malformed hunk header {}; expected `@@ -START,COUNT +START,COUNT @@` with numbers",
            quote(raw)
        ))
    })?;
    lines.pos += 1;
    let mut body = Vec::new();
    let (mut old_seen, mut new_seen) = (0usize, 0usize);
    let short = |lines: &Lines, old_seen: usize, new_seen: usize| {
        let found = lines
            .peek()
            .map_or("the end of the patch".to_string(), |l| format!("line {} ({})", lines.number(), quote(l)));
        err(format!(
            "{file}: hunk {index} ({header}) ends early: its header promises {old_count} old and {new_count} new lines, but only {old_seen} old and {new_seen} new lines come before {found}; fix the counts in the header"
        ))
    };
    while old_seen < old_count || new_seen < new_count {
        let Some(line) = lines.peek() else { return Err(short(lines, old_seen, new_seen)) };
        if lines.at_file_header() {
            return Err(short(lines, old_seen, new_seen));
        }
        let (op, text) = match line.as_bytes().first() {
            // Editors strip the lone space of an empty context line; accept that.
            None | Some(b'\r') => (Op::Context, ""),
            Some(b' ') => (Op::Context, &line[1..]),
            Some(b'-') => (Op::Remove, &line[1..]),
            Some(b'+') => (Op::Add, &line[1..]),
            Some(b'\\') => {
                mark_no_eol(&mut body);
                lines.pos += 1;
                continue;
            }
            _ => return Err(short(lines, old_seen, new_seen)),
        };
        let (old_inc, new_inc) = match op {
            Op::Context => (1, 1),
            Op::Remove => (1, 0),
            Op::Add => (0, 1),
        };
        if old_seen + old_inc > old_count || new_seen + new_inc > new_count {
            let side = if old_seen + old_inc > old_count { "old" } else { "new" };
            return Err(err(format!(
                "{file}: hunk {index} ({header}) does not match its header: line {} ({}) would be {side} line {} but the header counts only {}; the header promises {old_count} old and {new_count} new lines",
                lines.number(),
                quote(line),
                if side == "old" { old_seen + 1 } else { new_seen + 1 },
                if side == "old" { old_count } else { new_count },
            )));
        }
        old_seen += old_inc;
        new_seen += new_inc;
        let cr = text.ends_with('\r');
        body.push(HunkLine { op, text: text.trim_end_matches('\r').to_string(), cr, no_eol: false });
        lines.pos += 1;
    }
    if lines.peek().is_some_and(|l| l.starts_with('\\')) {
        mark_no_eol(&mut body);
        lines.pos += 1;
    }
    Ok(Hunk { old_start, old_count, new_count, header, lines: body })
}

fn mark_no_eol(body: &mut [HunkLine]) {
    if let Some(last) = body.last_mut() {
        last.no_eol = true;
    }
}

/// `@@ -a[,b] +c[,d] @@ optional section` → (a, b, d, "`@@ -a,b +c,d @@`"). The new
/// start is checked for form only: where a hunk lands is decided by its context.
fn hunk_header(line: &str) -> Option<(usize, usize, usize, String)> {
    let rest = line.strip_prefix("@@ ")?;
    let end = rest.find(" @@")?;
    let mut parts = rest[..end].split_whitespace();
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    if parts.next().is_some() {
        return None;
    }
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((s, c)) => Some((s.parse().ok()?, c.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (_, d) = range(new)?;
    Some((a, b, d, format!("`@@ {} @@`", &rest[..end])))
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
