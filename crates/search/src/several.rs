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

/// Words before a number that make it a count, a time or a quantity
/// ("top 10", "last 5", "every 2", "within 3"), not an instance's id.
const QUANTIFIERS: &[&str] = &[
    "top", "last", "first", "next", "latest", "past", "over", "under", "than", "about", "around", "every", "each",
    "within", "after", "before", "until", "since", "by", "at", "to", "from", "in", "on", "of", "for", "with", "and",
    "or", "the", "a", "is", "are", "be", "x", "version", "v",
];

/// Ordinals that pick one of a collection ("the second PR attempt").
const ORDINALS: &[&str] =
    &["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"];

/// Whether a request names one instance by its number: a word then an
/// integer ("task 42", "attempt 3", "item 2"; not a count such as "3
/// levels"), `#88`, or an ordinal after "the" ("the second PR attempt"). A
/// request about one thing named by its id wants the tool that reads or
/// changes that one, not a listing, unless it asks for a list itself.
pub(super) fn names_instance(query: &str) -> bool {
    let raw: Vec<&str> = query.split_whitespace().collect();
    let tokens: Vec<String> =
        raw.iter().map(|t| t.trim_matches(|c: char| !c.is_alphanumeric() && c != '#').to_lowercase()).collect();
    if tokens.iter().any(|t| t == "list" || t == "lists") {
        return false;
    }
    tokens.iter().enumerate().any(|(i, t)| {
        let prev = i.checked_sub(1).map(|j| tokens[j].as_str());
        let joined = i > 0 && raw[i - 1].ends_with(|c: char| c.is_alphanumeric());
        let count = tokens.get(i + 1).is_some_and(|n| n.len() > 2 && n.ends_with('s'));
        // a bare number ("task 42?"), not a list's marker ("db 2) update")
        let bare = raw[i].trim_end_matches([',', '.', '?', '!', ';']);
        let number = !bare.is_empty() && bare.len() <= 6 && bare.bytes().all(|b| b.is_ascii_digit());
        let id = number
            && joined
            && !count
            && prev.is_some_and(|p| {
                p.len() >= 2
                    && p.bytes().all(|b| b.is_ascii_lowercase())
                    && !p.ends_with('s')
                    && !QUANTIFIERS.contains(&p)
            });
        let reference = t.strip_prefix('#').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        let ordinal = prev == Some("the") && ORDINALS.contains(&t.as_str());
        id || reference || ordinal
    })
}

/// Whether a tool's description says it takes one thing ("Append one item
/// ...", "Read one automation ..."): `one` before a word, not "one or
/// more", "one of" or a pronoun at the sentence's end ("a finished one").
pub(super) fn takes_one(first_sentence: &str) -> bool {
    let words: Vec<String> =
        first_sentence.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
    words.windows(2).any(|p| p[0] == "one" && !["or", "of", "and", "by", "to"].contains(&p[1].as_str()))
}

#[cfg(test)]
#[path = "several_tests.rs"]
mod tests;
