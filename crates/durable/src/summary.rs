//! Compact summaries of large bodies: what a tool result carries instead of the
//! whole log, with the artifact id pointing at the rest.

/// The first and last lines of `text`, at most `max_chars` in all, with a marker
/// saying how many lines were left out. Failures are usually at the end of a log
/// and the command's own header at the start, so both ends are kept.
pub fn summarize(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let lines: Vec<&str> = text.lines().collect();
    let budget = max_chars / 2;
    let mut head = Vec::new();
    let mut used = 0;
    for line in &lines {
        let n = line.chars().count() + 1;
        if used + n > budget {
            break;
        }
        used += n;
        head.push(*line);
    }
    let mut tail = Vec::new();
    used = 0;
    for line in lines.iter().rev().take(lines.len().saturating_sub(head.len())) {
        let n = line.chars().count() + 1;
        if used + n > budget {
            break;
        }
        used += n;
        tail.push(*line);
    }
    tail.reverse();
    let omitted = lines.len().saturating_sub(head.len() + tail.len());
    if head.is_empty() && tail.is_empty() {
        // One enormous line: cut it by characters.
        let start: String = text.chars().take(budget).collect();
        let total = text.chars().count();
        let end: String = text.chars().skip(total.saturating_sub(budget)).collect();
        return format!("{start}\n… [{} characters omitted] …\n{end}", total.saturating_sub(2 * budget));
    }
    format!("{}\n… [{omitted} lines omitted] …\n{}", head.join("\n"), tail.join("\n"))
}

#[cfg(test)]
#[path = "summary_tests.rs"]
mod tests;
