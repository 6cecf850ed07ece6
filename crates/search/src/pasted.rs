//! Program output pasted into a request. A person who pastes a traceback, a
//! compiler error or a rejected push and then asks ("show me the code around
//! there", "search it", "is rust even installed?") names the tool in the
//! line they typed; the pasted lines name the program that failed (`cargo`,
//! `npm`, `map`, `TypeError`) and would otherwise outvote the ask. Their
//! words are kept, at a lower weight, as the ask's subject.

/// Log levels and outcomes a program prints in capitals at a line's start
/// ("npm ERR!", "FAILED tests/...", "CONFLICT (content): ...").
const LEVELS: &[&str] = &["ERR", "ERROR", "FAIL", "FAILED", "FATAL", "CONFLICT", "WARN", "WARNING", "PANIC"];

/// Labels a program prints before its message ("error: ...", "fatal: ...",
/// "hint: ...", "error[E0277]: ...").
const LABELS: &[&str] = &["error", "warning", "fatal", "hint", "panic", "exception", "traceback"];

/// Endings of a shell's own complaints ("bash: ./run.sh: Permission denied").
const SHELL_COMPLAINTS: &[&str] = &[": command not found", ": no such file or directory", ": permission denied"];

/// Byte ranges of the lines of a request that a program printed, when the
/// request also has a line that does not look printed (the ask). A request
/// of one line, or of output alone, has none.
pub(super) fn output_lines(query: &str) -> Vec<(usize, usize)> {
    let mut lines = Vec::new();
    let mut start = 0;
    for line in query.split('\n') {
        if !line.trim().is_empty() {
            lines.push((start, start + line.len(), is_output_line(line)));
        }
        start += line.len() + 1;
    }
    let asks = lines.iter().any(|&(_, _, output)| !output);
    if lines.len() < 2 || !asks {
        return Vec::new();
    }
    lines.into_iter().filter(|&(_, _, output)| output).map(|(a, b, _)| (a, b)).collect()
}

/// Whether one line reads as a program's output: an exception or a label
/// (`KeyError: 'region'`, `error[E0277]: ...`), a log level in capitals, a
/// traceback frame (`File "x.py", line 3`, `at List.jsx:14`), a panic, a
/// push git rejected, a shell's complaint, or an HTTP error status.
fn is_output_line(line: &str) -> bool {
    let t = line.trim();
    let mut tokens = t.split_whitespace();
    let first = tokens.next().unwrap_or("");
    let second = tokens.next().unwrap_or("");
    let lower = t.to_lowercase();
    let word = |s: &str| s.trim_matches(|c: char| !c.is_alphanumeric()).to_string();
    let level = |s: &str| {
        let w = word(s);
        w.len() >= 3 && LEVELS.contains(&w.as_str())
    };
    // "KeyError:", "error:", "error[E0277]:": a name, a code in brackets, a colon
    let head = first.split('[').next().unwrap_or("");
    let labelled = first.ends_with(':') || first.contains("]:");
    let head = head.trim_end_matches(':').to_lowercase();
    let exception = head.ends_with("error") || head.ends_with("exception");
    let frame = (first == "File" && second.starts_with('"'))
        || (first == "at" && t.split_whitespace().skip(1).any(place_and_line));
    let status = first.len() == 3
        && matches!(first.as_bytes()[0], b'4' | b'5')
        && first.bytes().all(|b| b.is_ascii_digit())
        && second.chars().next().is_some_and(char::is_uppercase);
    (labelled && (exception || LABELS.contains(&head.as_str())))
        || level(first)
        || (first.chars().all(|c| c.is_ascii_lowercase()) && level(second) && second.ends_with(['!', ':']))
        || frame
        || first == "Traceback"
        || (lower.starts_with("thread '") && lower.contains("panicked at"))
        || t.starts_with("! [")
        || SHELL_COMPLAINTS.iter().any(|c| lower.contains(c))
        || status
}

/// A source place with a line number (`Widget.tsx:20`, `(app.js:3:7)`).
fn place_and_line(token: &str) -> bool {
    let token = token.trim_matches(|c: char| "()[]<>,".contains(c));
    token
        .split_once(':')
        .is_some_and(|(place, line)| place.contains('.') && line.chars().next().is_some_and(|c| c.is_ascii_digit()))
}

#[cfg(test)]
#[path = "pasted_tests.rs"]
mod tests;
