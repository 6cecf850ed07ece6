//! Applying one file's hunks to its content in memory.
//!
//! A file is a list of lines, each keeping its own ending, so lines the patch does
//! not touch come out byte-identical (CRLF, a missing final newline, stray `\r`).
//! Added lines take the file's dominant ending, which is how CRLF files stay CRLF
//! when the model writes its patch with plain `\n`.

use quiver_engine::ToolError;

use super::parse::{Hunk, HunkLine, Op};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    None,
    Lf,
    CrLf,
}

impl Eol {
    fn bytes(self) -> &'static [u8] {
        match self {
            Eol::None => b"",
            Eol::Lf => b"\n",
            Eol::CrLf => b"\r\n",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub text: Vec<u8>,
    pub eol: Eol,
}

pub fn split_lines(bytes: &[u8]) -> Vec<Line> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        match rest.iter().position(|b| *b == b'\n') {
            Some(i) => {
                let (text, eol) = match rest[..i].strip_suffix(b"\r") {
                    Some(t) => (t, Eol::CrLf),
                    None => (&rest[..i], Eol::Lf),
                };
                out.push(Line { text: text.to_vec(), eol });
                rest = &rest[i + 1..];
            }
            None => {
                out.push(Line { text: rest.to_vec(), eol: Eol::None });
                rest = &[];
            }
        }
    }
    out
}

pub fn join_lines(lines: &[Line]) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines.iter().map(|l| l.text.len() + 2).sum());
    for line in lines {
        out.extend_from_slice(&line.text);
        out.extend_from_slice(line.eol.bytes());
    }
    out
}

/// CRLF when most line endings are CRLF; LF otherwise (and for files without any).
pub fn dominant_eol(lines: &[Line]) -> Eol {
    let crlf = lines.iter().filter(|l| l.eol == Eol::CrLf).count();
    let lf = lines.iter().filter(|l| l.eol == Eol::Lf).count();
    if crlf > lf { Eol::CrLf } else { Eol::Lf }
}

/// The line ending a created file gets: what the patch's own lines used.
pub fn patch_eol(hunks: &[Hunk]) -> Eol {
    let lines = hunks.iter().flat_map(|h| h.lines.iter());
    let (cr, total) = lines.fold((0, 0), |(cr, total), l| (cr + usize::from(l.cr), total + 1));
    if total > 0 && cr * 2 > total { Eol::CrLf } else { Eol::Lf }
}

/// What happened to one hunk that applied, for the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkNote {
    pub index: usize,
    /// 1-based line where it applied, and where its header said.
    pub at: usize,
    pub stated: usize,
    pub whitespace_fuzz: bool,
}

enum Found {
    At(usize),
    Ambiguous(usize, usize),
    Nowhere,
}

type LineEq = fn(&[u8], &[u8]) -> bool;

fn exact(a: &[u8], b: &[u8]) -> bool {
    a == b
}

fn trailing_ws_insensitive(a: &[u8], b: &[u8]) -> bool {
    a.trim_ascii_end() == b.trim_ascii_end()
}

/// Applies `hunks` in order. `file` names the file in messages.
pub fn apply_hunks(
    file: &str,
    mut lines: Vec<Line>,
    hunks: &[Hunk],
    new_eol: Eol,
) -> Result<(Vec<Line>, Vec<HunkNote>), ToolError> {
    let total = hunks.len();
    let mut notes = Vec::new();
    // Lines added or removed by earlier hunks shift later ones; a hunk found away
    // from its stated line suggests the next one drifted by as much.
    let mut shift: isize = 0;
    let mut drift: isize = 0;
    for (i, hunk) in hunks.iter().enumerate() {
        let index = i + 1;
        let old: Vec<&[u8]> = hunk.old_lines().map(|l| l.text.as_bytes()).collect();
        let stated = if hunk.old_count == 0 { hunk.old_start } else { hunk.old_start.saturating_sub(1) };
        let shifted = clamp(stated as isize + shift, lines.len());
        let guess = clamp(shifted as isize + drift, lines.len().saturating_sub(old.len()));
        let (pos, fuzz) = if old.is_empty() {
            // Nothing to match: a pure insertion goes where its header says, moved
            // by the drift the previous hunk showed.
            if stated as isize + shift > lines.len() as isize {
                return Err(ToolError::model(format!(
                    "`{file}`: hunk {index} of {total} ({}) inserts after line {} but the file has only {} lines",
                    hunk.header,
                    hunk.old_start,
                    lines.len()
                )));
            }
            (clamp(shifted as isize + drift, lines.len()), false)
        } else {
            match locate(&lines, &old, guess, exact) {
                Found::At(p) => (p, false),
                Found::Ambiguous(a, b) => return Err(ambiguous(file, index, total, hunk, &old, a, b, shifted)),
                Found::Nowhere => match locate(&lines, &old, guess, trailing_ws_insensitive) {
                    Found::At(p) => (p, true),
                    Found::Ambiguous(a, b) => return Err(ambiguous(file, index, total, hunk, &old, a, b, shifted)),
                    Found::Nowhere => return Err(not_found(file, index, total, hunk, &lines, &old, shifted)),
                },
            }
        };
        let replacement = new_side(&lines[pos..pos + old.len()], &hunk.lines, new_eol);
        let added = replacement.len() as isize - old.len() as isize;
        lines.splice(pos..pos + old.len(), replacement);
        notes.push(HunkNote { index, at: pos + 1, stated: shifted + 1, whitespace_fuzz: fuzz });
        drift = pos as isize - shifted as isize;
        shift += added;
    }
    // Only the last line may lack an ending; a hunk that removed the old last
    // line's missing newline must not glue two lines together.
    let count = lines.len();
    for line in lines.iter_mut().take(count.saturating_sub(1)) {
        if line.eol == Eol::None {
            line.eol = new_eol;
        }
    }
    Ok((lines, notes))
}

fn clamp(v: isize, max: usize) -> usize {
    v.clamp(0, max as isize) as usize
}

/// The lines that replace the matched region: the file's own context lines
/// (so whitespace-fuzzy matches keep the file's bytes), plus the added lines.
fn new_side(matched: &[Line], hunk: &[HunkLine], new_eol: Eol) -> Vec<Line> {
    let mut old = matched.iter();
    let mut out = Vec::new();
    for line in hunk {
        match line.op {
            Op::Context => {
                if let Some(orig) = old.next() {
                    out.push(orig.clone());
                }
            }
            Op::Remove => {
                old.next();
            }
            Op::Add => {
                let eol = if line.no_eol { Eol::None } else { new_eol };
                out.push(Line { text: line.text.clone().into_bytes(), eol });
            }
        }
    }
    out
}

/// Searches outward from `guess`: the nearest match wins; two at the same distance
/// are ambiguous.
fn locate(lines: &[Line], old: &[&[u8]], guess: usize, eq: LineEq) -> Found {
    if old.len() > lines.len() {
        return Found::Nowhere;
    }
    let last = lines.len() - old.len();
    let matches = |p: usize| old.iter().zip(&lines[p..]).all(|(want, have)| eq(want, &have.text));
    for d in 0..=guess.max(last - guess.min(last)) {
        let below = guess.checked_add(d).filter(|p| *p <= last && matches(*p));
        let above = guess.checked_sub(d).filter(|p| d > 0 && *p <= last && matches(*p));
        match (above, below) {
            (Some(a), Some(b)) => return Found::Ambiguous(a, b),
            (Some(p), None) | (None, Some(p)) => return Found::At(p),
            (None, None) => {}
        }
    }
    Found::Nowhere
}

fn render_expected(old: &[&[u8]]) -> String {
    let mut out = String::new();
    for line in old.iter().take(MAX_SHOWN) {
        out.push_str(&format!("        {}\n", String::from_utf8_lossy(line)));
    }
    if old.len() > MAX_SHOWN {
        out.push_str(&format!("        … {} more lines\n", old.len() - MAX_SHOWN));
    }
    out
}

const MAX_SHOWN: usize = 12;

#[allow(clippy::too_many_arguments)]
fn ambiguous(
    file: &str,
    index: usize,
    total: usize,
    hunk: &Hunk,
    old: &[&[u8]],
    a: usize,
    b: usize,
    stated: usize,
) -> ToolError {
    ToolError::model(format!(
        "`{file}`: hunk {index} of {total} ({}) is ambiguous: its {} context and removed lines match at line {} and at line {}, equally far from line {}. Add context lines that tell the two places apart.\nexpected lines:\n{}",
        hunk.header,
        old.len(),
        a + 1,
        b + 1,
        stated + 1,
        render_expected(old)
    ))
}

/// Names the file and hunk and shows what was expected next to the region of the
/// file that resembles it most (so the model sees what actually changed).
fn not_found(
    file: &str,
    index: usize,
    total: usize,
    hunk: &Hunk,
    lines: &[Line],
    old: &[&[u8]],
    stated: usize,
) -> ToolError {
    let mut msg = format!(
        "`{file}`: hunk {index} of {total} ({}) does not apply: its context and removed lines are not in the file (compared exactly, then ignoring trailing whitespace).\nexpected ({} lines, near line {}):\n{}",
        hunk.header,
        old.len(),
        stated + 1,
        render_expected(old)
    );
    let want: Vec<&[u8]> = old.iter().map(|l| l.trim_ascii()).collect();
    let mut best: Option<(usize, usize)> = None; // (score, start)
    for start in 0..lines.len() {
        let score = want.iter().zip(&lines[start..]).filter(|(w, have)| **w == have.text.trim_ascii()).count();
        let better = match best {
            None => score > 0,
            Some((s, p)) => score > s || (score == s && start.abs_diff(stated) < p.abs_diff(stated)),
        };
        if better {
            best = Some((score, start));
        }
    }
    match best {
        Some((score, start)) => {
            let end = (start + old.len()).min(lines.len());
            msg.push_str(&format!(
                "closest region in the file (lines {}-{}, {score} of {} lines equal; `!` marks lines that differ):\n",
                start + 1,
                end,
                old.len()
            ));
            for (k, line) in lines[start..end].iter().enumerate().take(MAX_SHOWN) {
                let same = want.get(k).is_some_and(|w| *w == line.text.trim_ascii());
                let mark = if same { ' ' } else { '!' };
                msg.push_str(&format!("  {:>5}{mark} {}\n", start + k + 1, String::from_utf8_lossy(&line.text)));
            }
        }
        None => msg.push_str(&format!("no line of the hunk occurs in the file ({} lines).\n", lines.len())),
    }
    // Re-sending a patch that already went in is a common slip; say so plainly.
    let new: Vec<&[u8]> = hunk.lines.iter().filter(|l| l.op != Op::Remove).map(|l| l.text.as_bytes()).collect();
    if !new.is_empty() && new != old {
        let guess = stated.min(lines.len().saturating_sub(new.len()));
        if let Found::At(p) | Found::Ambiguous(p, _) = locate(lines, &new, guess, trailing_ws_insensitive) {
            msg.push_str(&format!(
                "The hunk's result (its context and added lines) is already at line {}: this change looks applied already.\n",
                p + 1
            ));
        }
    }
    msg.push_str("Re-read the file and regenerate this hunk from its current content.");
    ToolError::model(msg)
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
