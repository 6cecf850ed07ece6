//! The sub-agent output contract: every final answer has five sections in a
//! fixed order. The parent gets them parsed; an answer that breaks the
//! contract is kept whole as SUMMARY and flagged, never dropped.

use serde_json::{Map, Value, json};

pub const SECTIONS: [&str; 5] = ["SUMMARY", "CHANGES", "EVIDENCE", "RISKS", "BLOCKERS"];

pub const FORMAT: &str = "Finish with exactly these five sections, in this order, each starting a line:\n\
SUMMARY: one paragraph; what you did and what happened\n\
CHANGES: files modified, one line each; \"None.\" if read-only\n\
EVIDENCE: one bullet per finding, citing path:line-range\n\
RISKS: what could go wrong; what the parent should double-check\n\
BLOCKERS: what stopped you; \"None.\" if you finished cleanly";

/// The parsed sections, and whether the answer kept the contract.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub sections: Map<String, Value>,
    pub contract_ok: bool,
}

/// Splits `answer` at lines starting with `SECTION:` (optionally as a
/// markdown heading or bold). All five must appear once, in order.
pub fn parse(answer: &str) -> Parsed {
    let mut found: Vec<(usize, String)> = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for line in answer.lines() {
        if let Some((index, rest)) = section_start(line) {
            if let Some(done) = current.take() {
                found.push(done);
            }
            current = Some((index, rest.to_string()));
        } else if let Some((_, text)) = current.as_mut() {
            text.push('\n');
            text.push_str(line);
        } else if !line.trim().is_empty() {
            // Text before the first section breaks the contract.
            found.push((usize::MAX, String::new()));
        }
    }
    if let Some(done) = current {
        found.push(done);
    }
    let in_order = found.len() == SECTIONS.len() && found.iter().enumerate().all(|(i, (index, _))| *index == i);
    if !in_order {
        let mut sections = Map::new();
        sections.insert("SUMMARY".into(), json!(answer.trim()));
        return Parsed { sections, contract_ok: false };
    }
    let sections = found.into_iter().map(|(i, text)| (SECTIONS[i].to_string(), json!(text.trim()))).collect();
    Parsed { sections, contract_ok: true }
}

fn section_start(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_start().trim_start_matches('#').trim_start().trim_start_matches("**");
    SECTIONS.iter().enumerate().find_map(|(i, name)| {
        let rest = trimmed.strip_prefix(name)?;
        let rest = rest.strip_prefix("**").unwrap_or(rest);
        let rest = rest.strip_prefix(':')?;
        Some((i, rest.strip_prefix("**").unwrap_or(rest)))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "contract_tests.rs"]
mod tests;
