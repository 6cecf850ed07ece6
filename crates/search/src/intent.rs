//! Request shape: whether a request asks for a collection ("show me the
//! keys", "list all ...") or for one item ("show key <name>", "details of
//! ..."), and where the head of the request ends and its scope qualifiers
//! ("in resource group X", "on server Y") begin.
//!
//! Tool catalogs almost universally pair `list_x` with `get_x`, so knowing
//! which one a request means is worth an explicit signal. Words in the scope
//! part name where to look, not what to return, and weigh a little less.

use super::tokenize::{Word, WordKind};

/// What the request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Intent {
    None,
    /// A collection: `list`, `all`, or a plural object.
    List,
    /// One item: `details`, or a singular object followed by a placeholder.
    Get,
}

/// Shape of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape<'a> {
    pub intent: Intent,
    /// The request's first word after filler (normally its verb).
    pub opener: Option<&'a str>,
    /// Position of the opener when it is a generic read verb (`show`,
    /// `list`, `get`): the request's shape already carries its meaning.
    pub read_opener_pos: Option<u32>,
    /// Position of the first word of the scope part, if any.
    pub scope_pos: Option<u32>,
    /// Position of `using` / `via` / `use` introducing the means of the
    /// request ("... using Azure CLI", "use Bicep to ..."), if any.
    pub instrument_pos: Option<u32>,
    /// Position of the `to` that ends a `use X to ...` means: what follows
    /// is the purpose, which the means serves.
    pub purpose_pos: Option<u32>,
    /// Position of an opening phrasal verb ("shut down", "set up"): its
    /// meaning is `opener`; its two words say it less well.
    pub phrasal_pos: Option<u32>,
}

/// Prepositions that introduce a scope qualifier.
const SCOPE: &[&str] = &["in", "within", "inside", "under", "across", "on", "from", "at"];
/// Words that introduce the means of a request.
const INSTRUMENT: &[&str] = &["using", "via"];
/// Words asking for a collection.
const LIST_WORDS: &[&str] = &["list", "lists", "enumerate", "all", "every", "ls"];
/// Words asking for one item.
const GET_WORDS: &[&str] = &["details", "detail", "describe", "properties", "metadata"];
/// Words that open a read request ("show me ...", "what are ...").
const READ_OPENERS: &[&str] = &[
    "show",
    "list",
    "get",
    "display",
    "view",
    "give",
    "fetch",
    "retrieve",
    "describe",
    "what",
    "which",
    "whats",
    "enumerate",
    "see",
    "print",
    "return",
    "lookup",
    "find",
    "read",
    "tell",
    "are",
    "is",
    "do",
    "does",
    "how",
    "where",
    "who",
    "check",
    "inspect",
    "report",
];
/// Politeness and filler before the verb.
const FILLER: &[&str] = &[
    "please", "can", "could", "would", "will", "you", "i", "we", "want", "need", "like", "to", "kindly", "help", "me",
    "let", "us", "just", "now", "hey", "hi", "ok", "okay",
];

/// Words that stand before a placeholder without being the thing named.
const NAMING: &[&str] = &["named", "called", "titled", "name", "id", "with"];

/// Phrasal verbs that open a request, and the verb they mean.
const PHRASAL: &[(&str, &str, &str)] = &[
    ("set", "up", "create"),
    ("spin", "up", "create"),
    ("stand", "up", "create"),
    ("tear", "down", "delete"),
    ("clean", "up", "delete"),
    ("get", "rid", "delete"),
    ("shut", "down", "stop"),
    ("look", "up", "lookup"),
    ("find", "out", "find"),
    ("turn", "off", "stop"),
    ("turn", "on", "start"),
    ("look", "at", "read"),
    ("look", "for", "find"),
];

/// True if `word` looks like an English plural of a known word.
pub(super) fn looks_plural(word: &str, known: &dyn Fn(&str) -> bool) -> bool {
    let n = word.len();
    if n < 4 || !word.is_ascii() || !word.ends_with('s') {
        return false;
    }
    if word.ends_with("ss") || word.ends_with("us") || word.ends_with("is") {
        return false;
    }
    if word.ends_with("ies") && known(&format!("{}y", &word[..n - 3])) {
        return true;
    }
    known(&word[..n - 1]) || (word.ends_with("es") && known(&word[..n - 2]))
}

/// Determine the shape of a request from its words (stopwords included).
pub(super) fn shape<'a>(words: &'a [Word], known: &dyn Fn(&str) -> bool) -> Shape<'a> {
    let mut list = false;
    let mut get = false;
    let mut plural = false;
    let mut named_single = false;
    let mut scope_pos = None;
    let mut seen_content = false;
    let mut prev_singular = false;
    let first = words.iter().position(|w| !FILLER.contains(&w.text.as_str()));
    let mut phrasal_pos = None;
    let opener = first.map(|i| {
        let t = words[i].text.as_str();
        let next = words.get(i + 1).map(|w| w.text.as_str());
        match PHRASAL.iter().find(|(a, b, _)| *a == t && Some(*b) == next) {
            Some((_, _, v)) => {
                phrasal_pos = Some(words[i].pos);
                *v
            }
            None => t,
        }
    });
    let read = opener.is_some_and(|t| READ_OPENERS.contains(&t));
    let read_opener_pos = if read { first.map(|i| words[i].pos) } else { None };
    for w in words {
        let t = w.text.as_str();
        if w.placeholder {
            if prev_singular {
                named_single = true;
            }
            prev_singular = false;
            continue;
        }
        if w.kind == WordKind::Part {
            continue;
        }
        if SCOPE.contains(&t) {
            if seen_content {
                scope_pos = Some(w.pos);
                break;
            }
            continue;
        }
        if LIST_WORDS.contains(&t) {
            list = true;
        }
        if GET_WORDS.contains(&t) {
            get = true;
        }
        let is_plural = looks_plural(t, known);
        plural |= is_plural;
        prev_singular = !is_plural && !NAMING.contains(&t) && t.chars().all(char::is_alphabetic) && t.len() > 2;
        seen_content = true;
    }
    let intent = if !read {
        Intent::None
    } else if list {
        Intent::List
    } else if get || named_single {
        Intent::Get
    } else if plural {
        Intent::List
    } else {
        Intent::None
    };
    let (instrument_pos, purpose_pos) = means(words, first);
    Shape { intent, opener, read_opener_pos, scope_pos, instrument_pos, purpose_pos, phrasal_pos }
}

/// The means of a request: `using X` / `via X` to the end, or `use X to Y`
/// with X the means and Y its purpose. Returns (start, purpose start).
fn means(words: &[Word], first: Option<usize>) -> (Option<u32>, Option<u32>) {
    for (i, w) in words.iter().enumerate() {
        if w.placeholder {
            continue;
        }
        let after_opener = first.is_some_and(|f| i > f);
        if after_opener && INSTRUMENT.contains(&w.text.as_str()) {
            return (Some(w.pos), None);
        }
        if w.text == "use" {
            // "use X to Y": X must be at least one word, and the `to` close
            if let Some(to) = words[i + 1..].iter().take(5).skip(1).position(|x| x.text == "to") {
                return (Some(w.pos), Some(words[i + 2 + to].pos));
            }
        }
    }
    (None, None)
}

#[cfg(test)]
#[path = "intent_tests.rs"]
mod tests;
