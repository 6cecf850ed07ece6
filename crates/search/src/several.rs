//! Several items given, one taken. A request that lists several things to
//! do ("make a checklist: fix bug, add test, update docs", "todo: 1) migrate
//! 2) deploy") asks for the tool that takes the whole list, not for the one
//! whose description says it takes one ("Append one item to the
//! checklist"), however well the latter's verb matches "make".

/// Whether a request lists several items: numbered ones ("1) a 2) b",
/// "1. a 2. b", "1 split module 2 add tests"), or three or more short ones
/// separated by commas after a label's colon ("make a checklist: fix bug,
/// add test, update docs").
pub(super) fn lists_several(query: &str) -> bool {
    numbered(query) || comma_list(query)
}

/// "1" then, later and past at least one word, "2": each a token of its
/// own, bare or marked (`1)`, `1.`, `(1)`).
fn numbered(query: &str) -> bool {
    let marker = |t: &str| t.trim_start_matches('(').trim_end_matches([')', '.', ':']).to_string();
    let tokens: Vec<String> = query.split_whitespace().map(marker).collect();
    let Some(one) = tokens.iter().position(|t| t == "1") else { return false };
    tokens[one + 1..].iter().position(|t| t == "2").is_some_and(|k| k > 0)
}

/// Three or more items of at most six words each, separated by commas (or a
/// last `and`), after the first colon that ends a label.
fn comma_list(query: &str) -> bool {
    let Some((label, rest)) = query.split_once(": ") else { return false };
    if label.is_empty() || !label.ends_with(|c: char| c.is_alphanumeric() || c == ')') {
        return false;
    }
    let rest = rest.split(['.', '?', '!', '\n']).next().unwrap_or("");
    let items: Vec<&str> = rest.split([',', ';']).flat_map(|s| s.split(" and ")).map(str::trim).collect();
    items.len() >= 3 && items.iter().all(|i| (1..=6).contains(&i.split_whitespace().count()))
}

/// Whether a tool's description says it takes one thing ("Append one item
/// ...", "Read one automation ..."): `one` before a word, not "one or
/// more", "one of" or a pronoun at the sentence's end ("a finished one").
pub(super) fn takes_one(first_sentence: &str) -> bool {
    let words: Vec<String> = first_sentence
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.windows(2).any(|p| p[0] == "one" && !["or", "of", "and", "by", "to"].contains(&p[1].as_str()))
}

#[cfg(test)]
#[path = "several_tests.rs"]
mod tests;
