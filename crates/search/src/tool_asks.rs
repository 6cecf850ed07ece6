//! Requests about tools themselves: one that asks for a tool ("is there a
//! tool to resize images") and one that names a tool to use ("use the
//! sentry server's get_event tool"). The words that describe the tool wanted
//! are not the request's own subject.

use super::objects::{camel_identifier, snake_identifier};
use super::tokenize::clause_span;

/// Where a request for a tool names what the tool should do: "is there a
/// tool to resize images", "I need a tool for GitHub things, load it" (from
/// the word after `for` / `to` / `that` to the end of its clause). The
/// request is to find a tool; those words say which, so they weigh like a
/// scope's and a tool that merely does that thing does not outvote it.
pub(super) fn tool_purpose(query: &str) -> Option<(u32, u32)> {
    let base = query.as_ptr() as usize;
    let tokens: Vec<(usize, &str)> = query.split_whitespace().map(|t| (t.as_ptr() as usize - base, t)).collect();
    let lower = |k: usize| tokens[k].1.to_lowercase();
    let k = (0..tokens.len().saturating_sub(2)).find(|&k| {
        matches!(lower(k).as_str(), "tool" | "tools") && ["for", "to", "that", "which"].contains(&lower(k + 1).as_str())
    })?;
    // From the word after `for` / `to` to the end of its clause.
    Some(clause_span(query, &tokens, k + 2, tokens[k + 1].0 + tokens[k + 1].1.len()))
}

/// Whether a request names a tool by its identifier ("tool create_ticket",
/// "the sentry server's get_event tool", "its search_issues tool"): a tool
/// named to be used is a tool to call.
pub(super) fn names_a_tool(query: &str) -> bool {
    let tokens: Vec<String> = query
        .split_whitespace()
        .map(|t| t.trim_matches(|c: char| "()[]<>'\"`,;:!?.".contains(c)).to_string())
        .collect();
    let ident = |t: &str| snake_identifier(t) || camel_identifier(t);
    tokens.windows(2).any(|p| {
        let tool = |t: &str| t.eq_ignore_ascii_case("tool");
        (tool(&p[0]) && ident(&p[1])) || (ident(&p[0]) && tool(&p[1]))
    })
}

#[cfg(test)]
#[path = "tool_asks_tests.rs"]
mod tests;
