//! Tokenization: splitting identifiers and prose into lowercase words, stopwords,
//! and stemming.
//!
//! Splitting rules: any non-alphanumeric character separates words (`_`, `-`,
//! `.`, `/`, spaces ...); inside an alphanumeric run, camelCase boundaries
//! (`listItems`, `HTTPServer`) and letter/digit boundaries (`gen2`) separate
//! words too. When a run is split at a digit boundary the joined form (`k8s`,
//! `gpt4o`) is emitted as well, so both spellings match. CJK ideographs become
//! one token each. Single letters are dropped.

use rust_stemmers::{Algorithm, Stemmer};

use super::objects::kind_of;

/// A word produced by [`split_words`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Lowercased surface form.
    pub text: String,
    /// Position of the word in the token stream (joined digit forms share the
    /// position of their first part).
    pub pos: u32,
    /// True when the word came from inside a `<placeholder>` in the text.
    pub placeholder: bool,
    /// True when the word is part of a literal value the text quotes or
    /// names (`'timeout = 30'`, `src/main.rs`, a URL): an argument for a
    /// tool, not a description of the tool.
    pub literal: bool,
    /// How the word relates to the alphanumeric run it came from.
    pub kind: WordKind,
}

/// Whether a word is a whole run, or the joined form or a piece of a run
/// that was split at camelCase / digit boundaries (`MySQL` -> joined `mysql`,
/// parts `my`, `sql`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordKind {
    Whole,
    Joined,
    Part,
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
}

fn class_of(c: char) -> Class {
    if c.is_numeric() {
        Class::Digit
    } else if c.is_uppercase() {
        Class::Upper
    } else {
        Class::Lower
    }
}

/// Split `text` into lowercase words, appending to `out`.
pub fn split_words(text: &str, out: &mut Vec<Word>) {
    let mut pos: u32 = out.last().map_or(0, |w| w.pos + 1);
    let chars: Vec<char> = text.chars().collect();
    let literal = literal_chars(&chars);
    let mut run: Vec<char> = Vec::new();
    let mut in_placeholder = false;
    let mut run_flags = Flags::default();
    let flush = |run: &mut Vec<char>, pos: &mut u32, flags: Flags, out: &mut Vec<Word>| {
        if !run.is_empty() {
            emit_run(run, pos, flags, out);
            run.clear();
        }
    };
    for (i, &c) in chars.iter().enumerate() {
        if is_cjk(c) {
            flush(&mut run, &mut pos, run_flags, out);
            out.push(Word {
                text: c.to_string(),
                pos,
                placeholder: in_placeholder,
                literal: literal[i],
                kind: WordKind::Whole,
            });
            pos += 1;
        } else if c.is_alphanumeric() {
            if run.is_empty() {
                run_flags = Flags { placeholder: in_placeholder, literal: literal[i] };
            }
            run.push(c);
        } else {
            flush(&mut run, &mut pos, run_flags, out);
            if c == '<' {
                in_placeholder = true;
            } else if c == '>' {
                in_placeholder = false;
            }
        }
    }
    flush(&mut run, &mut pos, run_flags, out);
}

#[derive(Clone, Copy, Default)]
struct Flags {
    placeholder: bool,
    literal: bool,
}

/// Which characters belong to a literal value: a span in double quotes or
/// backticks, a span in single quotes (an apostrophe inside a word, as in
/// `don't`, opens none), and whitespace-separated tokens shaped like a path,
/// a file name with an extension, or a URL. A quote without its closing
/// partner marks nothing.
fn literal_chars(chars: &[char]) -> Vec<bool> {
    let mut out = vec![false; chars.len()];
    let alnum = |i: Option<usize>| i.and_then(|i| chars.get(i)).is_some_and(|c| c.is_alphanumeric());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let close = match c {
            '"' | '`' | '\u{201c}' => {
                let want = if c == '\u{201c}' { '\u{201d}' } else { c };
                chars[i + 1..].iter().position(|&x| x == want).map(|p| i + 1 + p)
            }
            '\'' | '\u{2018}' if !alnum(i.checked_sub(1)) && alnum(Some(i + 1)) => {
                let want = if c == '\u{2018}' { '\u{2019}' } else { c };
                (i + 1..chars.len()).find(|&j| chars[j] == want && !alnum(Some(j + 1)))
            }
            _ => None,
        };
        if let Some(end) = close {
            out[i..=end].iter_mut().for_each(|x| *x = true);
            i = end + 1;
        } else {
            i += 1;
        }
    }
    let mut start = 0;
    for end in (0..=chars.len()).filter(|&j| j == chars.len() || chars[j].is_whitespace()) {
        if end > start && path_like(&chars[start..end]) {
            out[start..end].iter_mut().for_each(|x| *x = true);
        }
        start = end + 1;
    }
    out
}

/// A token shaped like a path (`src/main.rs`, `./build`, `a/b/c`), a file
/// name with an extension (`server.toml`), a URL, or a code identifier
/// (`parse_args`, `fetchData`: what `objects::kind_of` calls a symbol):
/// people quote their own symbols by name, and the parts (`args`, `url`)
/// say nothing about which tool they want. One slash between two words
/// (`CI/CD`, `OGG/Opus`) is prose, not a path.
fn path_like(token: &[char]) -> bool {
    let t: String = token.iter().collect();
    let t = t.trim_end_matches([',', '.', ';', ':', '!', '?', ')', ']', '\'', '"']);
    let t = t.trim_start_matches(['(', '[', '\'', '"']);
    if t.contains("://") || t.starts_with("./") || t.starts_with("~/") || t.starts_with("../") {
        return true;
    }
    let slashes = t.matches(['/', '\\']).count();
    let extension = t.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && stem.chars().last().is_some_and(char::is_alphanumeric)
            && (2..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    });
    slashes >= 2
        || extension
        || (slashes == 1 && t.len() > 1 && t.starts_with('/'))
        || kind_of(t, None) == Some("symbol")
}

fn emit_run(run: &[char], pos: &mut u32, flags: Flags, out: &mut Vec<Word>) {
    let Flags { placeholder, literal } = flags;
    let mut parts: Vec<String> = Vec::new();
    let mut cur = String::new();

    for (i, &c) in run.iter().enumerate() {
        if i > 0 {
            let prev = class_of(run[i - 1]);
            let this = class_of(c);
            let next_lower = run.get(i + 1).is_some_and(|n| class_of(*n) == Class::Lower);
            let boundary = match (prev, this) {
                (Class::Lower, Class::Upper) => true,
                (Class::Upper, Class::Upper) => next_lower,
                (Class::Digit, Class::Digit) => false,
                (Class::Digit, _) | (_, Class::Digit) => true,
                _ => false,
            };
            if boundary && !cur.is_empty() {
                parts.push(std::mem::take(&mut cur));
            }
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    let kind = if parts.len() > 1 {
        let joined: String = parts.concat();
        out.push(Word { text: joined, pos: *pos, placeholder, literal, kind: WordKind::Joined });
        WordKind::Part
    } else {
        WordKind::Whole
    };
    for p in parts {
        if p.chars().count() < 2 && !p.chars().all(char::is_numeric) {
            continue;
        }
        out.push(Word { text: p, pos: *pos, placeholder, literal, kind });
        *pos += 1;
    }
}

/// Common English function words plus request filler that carries no
/// information about which tool is wanted.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    // indefinite pronouns: "did anything break", "is something running"
    "anything",
    "everything",
    "nothing",
    "something",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "each",
    "either",
    "else",
    "etc",
    "every",
    "for",
    "from",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "let",
    "may",
    "me",
    "might",
    "mine",
    "more",
    "most",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "out",
    "over",
    "own",
    "please",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "upon",
    "us",
    "very",
    "via",
    "was",
    "we",
    "were",
    "what",
    "whats",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "want",
    "need",
    "like",
    "using",
    "use",
    "used",
    "give",
    "tell",
    "currently",
    // "yet" says when, not what: "is the build done yet", "nothing yet"
    "yet",
    "s",
    "t",
    "re",
    "ll",
    "ve",
    "d",
    "m",
    "don",
    "i'm",
    "im",
    "e",
    "g",
    "eg",
    "ie",
];

/// True for words that should not be searched for.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// Two-word fillers whose second word is a content word elsewhere: "so far"
/// means "until now" (it says when, not which tool), but "far" alone matched
/// a tool whose text mentions "the conversation so far".
const FILLER_PAIRS: &[(&str, &str)] = &[("so", "far")];

/// True when `word`, following `previous` (both lowercased), closes a filler pair.
pub fn closes_filler(previous: Option<&str>, word: &str) -> bool {
    previous.is_some_and(|p| FILLER_PAIRS.contains(&(p, word)))
}

/// Nouns the stemmer would fold into a common action verb (`settings` ->
/// `set`), which tool names use with a different meaning.
const STEM_EXCEPTIONS: &[(&str, &str)] = &[("setting", "setting"), ("settings", "setting")];

/// Stems English words (Snowball English). Non-ASCII words are returned as is.
pub struct WordStemmer {
    inner: Stemmer,
}

impl Default for WordStemmer {
    fn default() -> Self {
        Self::new()
    }
}

impl WordStemmer {
    pub fn new() -> Self {
        WordStemmer { inner: Stemmer::create(Algorithm::English) }
    }

    pub fn stem(&self, word: &str) -> String {
        if word.len() < 3 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
            return word.to_string();
        }
        if let Some((_, s)) = STEM_EXCEPTIONS.iter().find(|(w, _)| *w == word) {
            return (*s).to_string();
        }
        self.inner.stem(word).into_owned()
    }
}

/// The word positions from the byte `start_byte` of `query` to the end of
/// the clause that runs on from token `from` (the first token ending in
/// punctuation, else the last): the span a clause's words weigh in.
/// `tokens` are `query`'s whitespace tokens with their byte offsets.
pub(crate) fn clause_span(query: &str, tokens: &[(usize, &str)], from: usize, start_byte: usize) -> (u32, u32) {
    let ends = |t: &str| t.ends_with([',', '.', '?', '!', ';', ':']);
    let last = (from..tokens.len()).find(|&j| ends(tokens[j].1)).unwrap_or(tokens.len() - 1);
    let (end_at, end_token) = tokens[last];
    (words_before(query, start_byte), words_before(query, end_at + end_token.len()))
}

/// The word position where `query`'s text from byte `byte` on starts: how
/// many word positions [`split_words`] gives the text before it.
pub(crate) fn words_before(query: &str, byte: usize) -> u32 {
    let mut before = Vec::new();
    split_words(&query[..byte], &mut before);
    before.last().map_or(0, |w| w.pos + 1)
}

#[cfg(test)]
#[path = "tokenize_tests.rs"]
mod tests;
