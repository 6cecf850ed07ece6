//! Query analysis: turns a free-text request into weighted index terms.
//!
//! Each content word contributes its stem (weight 1, or `w_placeholder` inside
//! `<placeholders>`), and down-weighted expansions: synonyms, abbreviation
//! expansions, compound joins (`node pool` -> `nodepool`) and splits
//! (`cosmosdb` -> `cosmos` `db`), and prefix variants (`postgresql` ~
//! `postgres`). A term reached several ways keeps its highest weight.

use super::command::command_line;
use super::index::{LONGEST_WORD, SearchIndex, decompound};
use super::intent::{Intent, shape};
use super::objects::{is_file_token, is_github_reference, is_url, kind_of};
use super::pasted::output_lines;
use super::several::{lists_several, names_instance};
use super::signals::{Rule, flag};
use super::tokenize::{Word, WordKind, clause_span, closes_filler, is_stopword, split_words, words_before};
use super::tool_asks::{names_a_tool, tool_purpose};

/// Words inside placeholders that name the kind of value, not the thing.
const PLACEHOLDER_NOISE: &[&str] = &["name", "id", "value"];

/// Minimum shared prefix for the fallback match of unknown words.
const MIN_SHARED: usize = 5;

/// Minimum length for prefix matching.
const MIN_PREFIX: usize = 4;

/// Analyzed query.
#[derive(Debug, Default, Clone)]
pub(super) struct QueryPlan {
    /// (term id, weight), sorted by term id.
    pub terms: Vec<(u32, f32)>,
    /// IDF used for each entry of `terms`: an expansion counts at most as
    /// much as the word it was derived from.
    pub idf: Vec<f32>,
    /// Action classes (bitmask) of the request's opening verb.
    pub action: u8,
    /// Whether the request lists several items (`several::lists_several`).
    pub several: bool,
    /// Whether the request names one instance by its number
    /// (`several::names_instance`).
    pub instance: bool,
    /// Adjacent content-word term pairs with their weight.
    pub pairs: Vec<(u32, u32, f32)>,
    /// Each content word of the request with every term it reached.
    pub words: Vec<WordTerms>,
    /// Terms a rule implied (not the request's own words), with the rule:
    /// the learned re-ranker's per-rule features (`signals.rs`).
    pub implied: Vec<(u32, Rule)>,
    /// Which spans and kinds the request has (`signals::flag` bits).
    pub flags: u16,
}

/// One content word of a request: the terms it reached (its stem and its
/// expansions), its query weight, and its IDF (an unknown word counts as
/// the rarest: nothing in the catalog says what it means).
#[derive(Debug, Default, Clone)]
pub(super) struct WordTerms {
    pub terms: Vec<u32>,
    pub weight: f32,
    pub idf: f32,
}

impl QueryPlan {
    /// Weight of a term in the query (0 if absent).
    pub fn weight(&self, term: u32) -> f32 {
        match self.terms.binary_search_by_key(&term, |(t, _)| *t) {
            Ok(i) => self.terms[i].1,
            Err(_) => 0.0,
        }
    }
}

/// The kinds of value a request carries, as the word a tool's text uses for
/// a parameter of that kind: a URL (`https://...`, `www.example.com`,
/// `docs.rs/serde`), a GitHub issue or pull request (`#231`, or a
/// `github.com/OWNER/REPO/pull/N` or `/issues/N` URL: the page of one).
pub(super) fn value_kinds(query: &str) -> Vec<&'static str> {
    let url = query.split_whitespace().any(is_url);
    // `#231`: how GitHub names an issue or a pull request
    let reference = value_tokens(query).any(|t| {
        t.strip_prefix('#').is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
            || (is_url(t) && is_github_reference(t))
    });
    let mut kinds = Vec::new();
    if url {
        kinds.push("url");
    }
    if reference {
        kinds.push("github");
    }
    kinds
}

/// Whether every URL in a request is a GitHub issue or pull request's
/// (`read https://github.com/acme/api/issues/51`): the URL names the issue
/// more than a page to fetch, so its `url` kind counts for less.
pub(super) fn only_reference_urls(query: &str) -> bool {
    let mut urls = value_tokens(query).filter(|t| is_url(t)).peekable();
    urls.peek().is_some() && urls.all(is_github_reference)
}

/// A request's whitespace-separated words without the punctuation that
/// closes a sentence or a clause after a value (`#231,`, `...issues/51.`).
fn value_tokens(query: &str) -> impl Iterator<Item = &str> {
    query.split_whitespace().map(|t| t.trim_end_matches([',', '.', ';', ':', '!', '?', ')']))
}

/// Whether a request names a file (`Cargo.toml`, `src/lib.rs`, `.env.example`,
/// `Makefile`): people say "what's inside Cargo.toml", not "read the file
/// Cargo.toml", so the value's kind stands in for the word `file`. Not a URL,
/// an e-mail address or a version number (`2.1.0`: the extension needs a letter).
pub(super) fn names_a_file(query: &str) -> bool {
    query.split_whitespace().any(is_file_token)
}

/// Verbs that change something: with a named file as their place they
/// change the file's text.
const CHANGE_VERBS: &[&str] = &[
    "change",
    "set",
    "tweak",
    "fix",
    "remove",
    "delete",
    "add",
    "rename",
    "replace",
    "swap",
    "bump",
    "update",
    "insert",
    "modify",
    "edit",
    "drop",
    "append",
    "prepend",
    "increase",
    "decrease",
    "raise",
    "lower",
    "move",
    "comment",
    "uncomment",
    "correct",
    "adjust",
    "strip",
];

/// What a request does to a named file when the file is a place, not the
/// object: a change verb with the file after `in` / `of` / `inside` /
/// `within` ("set timeout = 30 in config.toml", "remove the print on line 12
/// of utils.py") edits the file's text: `edit`; content put `into` a named
/// file ("dump this json into fixtures/users.json") writes it: `write`.
pub(super) fn file_place_verb(query: &str) -> Option<&'static str> {
    let tokens: Vec<String> =
        query.split_whitespace().map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()).to_ascii_lowercase()).collect();
    let raw: Vec<&str> = query.split_whitespace().collect();
    let change = tokens.iter().any(|t| CHANGE_VERBS.contains(&t.as_str()));
    (1..raw.len()).find_map(|i| {
        if !is_file_token(raw[i]) {
            return None;
        }
        match tokens[i - 1].as_str() {
            "in" | "of" | "inside" | "within" if change => Some("edit"),
            "into" => Some("write"),
            _ => None,
        }
    })
}

/// "look at X", "take a look at X": to look at a thing is to view it (not
/// to look it up or look for it). True when "look" / "looks" is followed by
/// "at" anywhere in the request: returns the positions of "look" and of
/// the light verb before "a look" ("take", "have"; `u32::MAX` if none): they
/// say less than the verb they stand for.
fn looks_at(words: &[Word]) -> Option<(u32, u32)> {
    let i = words.windows(2).position(|p| {
        (p[0].text == "look" || p[0].text == "looking") && p[1].text == "at" && p[1].pos == p[0].pos + 1
    })?;
    let light_verb = |w: &Word| ["take", "taking", "took", "have", "having", "had", "give"].contains(&w.text.as_str());
    // "a" may or may not be among the words
    let light = words[..i]
        .iter()
        .rev()
        .find(|w| w.text != "a")
        .filter(|w| light_verb(w) && w.pos + 2 >= words[i].pos)
        .map_or(u32::MAX, |w| w.pos);
    Some((words[i].pos, light))
}

/// Words that ask to see what a named file says: "cat Cargo.toml", "what's
/// inside package.json", "head of CHANGELOG.md". With a file named, the file
/// is the object and reading it is the request.
const VIEW_WORDS: &[&str] = &[
    "show", "print", "cat", "open", "view", "display", "see", "inside", "contents", "content", "head", "peek", "look",
];

/// Words that ask rather than describe before a subject pronoun ("can you",
/// "did I", "should we"): no relative clause starts there.
const NOT_RELATIVE: &[&str] = &[
    "can", "could", "would", "should", "will", "shall", "do", "did", "does", "have", "has", "had", "must", "may",
    "might", "is", "are", "was", "were", "am", "and", "or", "but", "if", "when", "so", "then", "what", "where", "how",
    "why", "who", "which", "that", "once", "before", "after", "until", "while", "because", "as",
];

/// Where a relative clause that describes the object starts and ends:
/// "restart the automation I paused", "kill the job you started, then ..."
/// (from the word after the pronoun to the end of its clause). Its verb says
/// which item is meant, not what to do with it, so its words weigh like a
/// scope's. Word positions, from [`split_words`] over the text before each end.
fn relative_clause(query: &str) -> Option<(u32, u32)> {
    let base = query.as_ptr() as usize;
    let tokens: Vec<(usize, &str)> = query.split_whitespace().map(|t| (t.as_ptr() as usize - base, t)).collect();
    let k = (1..tokens.len().saturating_sub(1)).find(|&k| {
        let (_, t) = tokens[k];
        let prev = tokens[k - 1].1.to_lowercase();
        let next = tokens[k + 1].1;
        (t == "I" || t.eq_ignore_ascii_case("you") || t.eq_ignore_ascii_case("we"))
            && prev.chars().all(char::is_alphabetic)
            && !is_stopword(&prev)
            && !NOT_RELATIVE.contains(&prev.as_str())
            && next.chars().next().is_some_and(char::is_alphabetic)
    })?;
    Some(clause_span(query, &tokens, k + 1, tokens[k + 1].0))
}

/// Where a request's payload starts and ends: the words after a label that ends in a
/// colon ("note to self: the flaky test ...", "make a checklist: fix bug,
/// add test", "create a task: migrate the schema", "run this in the repl:
/// print(x)"). The label says what to do; the payload is the text the tool
/// is given, so its words weigh like a scope's. A label is one to eight
/// words ending in a letter or `)`, its colon followed by a space or a line
/// break (not `https://`, `9:30` or `path:12`).
fn payload_span(query: &str) -> Option<(u32, u32)> {
    let bytes = query.as_bytes();
    let colon = (1..bytes.len()).find(|&i| {
        bytes[i] == b':'
            && (bytes[i - 1].is_ascii_alphabetic() || bytes[i - 1] == b')')
            && bytes.get(i + 1).is_some_and(u8::is_ascii_whitespace)
    })?;
    let label = &query[..colon];
    if !(1..=8).contains(&label.split_whitespace().count()) {
        return None;
    }
    let start = words_before(query, colon);
    // the payload ends with its sentence: "You have four lists: [..]. Can
    // you sort them?" asks its question after it
    let rest = &query[colon + 1..];
    let end = rest
        .char_indices()
        .find(|&(i, c)| {
            ".?!".contains(c) && {
                let mut next = rest[i + 1..].chars();
                next.next().is_some_and(char::is_whitespace)
                    && next.find(|c| !c.is_whitespace()).is_some_and(char::is_uppercase)
            }
        })
        .map_or(u32::MAX, |(i, _)| words_before(query, colon + 1 + i + 1));
    (start > 0).then_some((start, end))
}

/// Word positions of the lines of program output pasted into a request
/// (`pasted::output_lines`).
fn pasted_spans(query: &str) -> Vec<(u32, u32)> {
    output_lines(query).into_iter().map(|(a, b)| (words_before(query, a), words_before(query, b))).collect()
}

/// Words that open a yes/no question about a state ("is the build ...").
const STATE_QUESTION: &[&str] = &["is", "are", "has", "have", "did", "was", "were"];
/// Words that say a job has ended.
const COMPLETION: &[&str] =
    &["finished", "finish", "done", "complete", "completed", "over", "exited", "ended", "through"];

/// A question whether something has finished: "is the npm install finished",
/// "has the reviewer agent completed", "did the build finish yet". Returns
/// the subject's positions (between the opening word and the completion
/// word): they say which job, not what to do; the request is to wait for it
/// or read its status. Only an opening question counts, and the completion
/// word must come within eight words of it.
fn completion_question(words: &[Word]) -> Option<(u32, u32)> {
    let skip = ["hey", "so", "ok", "okay", "and", "but", "quick", "question"];
    let first = words.iter().position(|w| !skip.contains(&w.text.as_str()))?;
    if !STATE_QUESTION.contains(&words[first].text.as_str()) {
        return None;
    }
    let done = words[first + 1..].iter().take(8).position(|w| COMPLETION.contains(&w.text.as_str()))?;
    (done > 0).then(|| (words[first].pos + 1, words[first + 1 + done].pos))
}

/// Words that name the kind of thing looked up by its name.
const FILE_WORDS: &[&str] = &["file", "files", "folder", "folders", "directory", "dir", "script", "module"];

/// Words that ask where something is.
const FIND_WORDS: &[&str] = &["find", "where", "wheres", "locate", "search", "look", "which", "path"];

/// A request to find a file by its name: "the file called routes", "a
/// folder named something like userctrl", "where is package.json". The
/// request is about the name, not the contents: returns the position of the
/// naming word (`called`, `named`; it says how the file is known, not what
/// to do with it), or `u32::MAX` for a bare "where is FILE".
fn file_name_lookup(words: &[Word]) -> Option<u32> {
    // a lookup, not "make a folder named X"
    let find = words.iter().any(|w| FIND_WORDS.contains(&w.text.as_str()));
    let named = words
        .windows(2)
        .find(|p| FILE_WORDS.contains(&p[0].text.as_str()) && (p[1].text == "called" || p[1].text == "named"));
    if let Some(p) = named.filter(|_| find) {
        return Some(p[1].pos);
    }
    // "where is package.json": nothing but the file after the question
    let first = words.iter().position(|w| w.text == "where" || w.text == "wheres")?;
    if first > 2 {
        return None;
    }
    let rest: Vec<&Word> = words[first + 1..]
        .iter()
        .filter(|w| !["is", "are", "s", "the", "my", "our", "that", "this"].contains(&w.text.as_str()))
        .collect();
    (!rest.is_empty() && rest.iter().all(|w| w.literal)).then_some(u32::MAX)
}

/// Words that ask where a text occurs.
const LOOKUP_WORDS: &[&str] = &[
    "where",
    "wheres",
    "find",
    "search",
    "grep",
    "locate",
    "which",
    "usages",
    "uses",
    "references",
    "occurrences",
    "mentions",
];

/// A request to find where a code identifier occurs: "where do we use
/// tenant_id", "where do we call parse_args?", "find handleRetry". The
/// identifier is the text looked for (a search tool's `pattern`), not a
/// thing of its own.
pub(super) fn identifier_lookup(query: &str) -> bool {
    let tokens: Vec<&str> = query.split_whitespace().collect();
    let ident = tokens.iter().enumerate().any(|(i, t)| {
        let previous = i.checked_sub(1).map(|j| tokens[j]);
        kind_of(t, previous) == Some("symbol")
    });
    ident
        && tokens.iter().any(|t| {
            let t = t.trim_matches(|c: char| !c.is_alphanumeric()).to_ascii_lowercase();
            LOOKUP_WORDS.contains(&t.as_str())
        })
}

struct Content {
    raw: String,
    stem: String,
    pos: u32,
    weight: f32,
}

impl SearchIndex {
    /// Per doc, whether its text has a word for the kind of value the request
    /// carries (`url` for a URL, `github` for `#231`, `command` or `shell`
    /// for a command line, `file` for a named file); `None` when the request
    /// carries none. A tool without such a word takes no such argument.
    pub fn value_kind_fit(&self, query: &str, docs: &[usize]) -> Option<Vec<bool>> {
        let mut kinds: Vec<&str> = value_kinds(query);
        let command = command_line(query).is_some();
        if command {
            kinds.extend(["command", "shell"]);
        } else if names_a_file(query) {
            kinds.push("file");
        }
        let terms: Vec<u32> = kinds.iter().filter_map(|k| self.term_id(&self.stem_word(k))).collect();
        if terms.is_empty() {
            return None;
        }
        Some(docs.iter().map(|&d| terms.iter().any(|&t| self.contains(t, d))).collect())
    }

    fn term_id(&self, stem: &str) -> Option<u32> {
        self.terms.get(stem).copied()
    }

    fn stem_word(&self, w: &str) -> String {
        if self.params.stem { self.stemmer.stem(w) } else { w.to_string() }
    }

    /// Terms that are a prefix of `stem` or have `stem` as a prefix, with
    /// the length ratio (shorter / longer).
    fn prefix_variants(&self, stem: &str, out: &mut Vec<(u32, f32)>) {
        let n = stem.len();
        if !(MIN_PREFIX..=LONGEST_WORD).contains(&n) || !stem.is_ascii() {
            return;
        }
        for k in MIN_PREFIX..n {
            if k * 2 < n {
                continue;
            }
            if let Some(t) = self.term_id(&stem[..k]) {
                out.push((t, k as f32 / n as f32));
            }
        }
        let start = self.sorted_terms.partition_point(|(s, _)| s.as_str() <= stem);
        for (s, t) in &self.sorted_terms[start..] {
            if !s.starts_with(stem) {
                break;
            }
            if s.len() <= 2 * n && !self.compound[*t as usize] {
                out.push((*t, n as f32 / s.len() as f32));
            }
        }
    }

    /// Terms sharing the longest common prefix (at least [`MIN_SHARED`]
    /// chars and 60% of the longer word) with `stem`, with the share.
    fn shared_prefix_terms(&self, stem: &str, out: &mut Vec<(u32, f32)>) {
        if !(MIN_SHARED..=LONGEST_WORD).contains(&stem.len()) || !stem.is_ascii() {
            return;
        }
        let mut best = 0usize;
        for k in (MIN_SHARED..=stem.len()).rev() {
            let pre = &stem[..k];
            let start = self.sorted_terms.partition_point(|(s, _)| s.as_str() < pre);
            for (s, t) in &self.sorted_terms[start..] {
                if !s.starts_with(pre) {
                    break;
                }
                let longer = s.len().max(stem.len());
                if k * 10 >= longer * 6 {
                    best = k;
                    out.push((*t, k as f32 / longer as f32));
                }
            }
            if best > 0 || out.len() > 8 {
                break;
            }
        }
        out.truncate(8);
    }

    pub(super) fn analyze(&self, query: &str) -> QueryPlan {
        let p = &self.params;
        let mut words: Vec<Word> = Vec::new();
        split_words(query, &mut words);
        let known = |w: &str| self.words.contains_key(w);
        let shape = shape(&words, &known);
        // a command line's words are its argument, and its verb is "run"
        let command = command_line(query);
        let in_command = |w: &str| command.as_ref().is_some_and(|c| c.iter().any(|x| x == w));
        let relative = relative_clause(query);
        let wanted = if p.w_tool_purpose < 1.0 { tool_purpose(query) } else { None };
        let payload = if p.w_payload < 1.0 { payload_span(query) } else { None };
        let pasted = if p.w_pasted < 1.0 { pasted_spans(query) } else { Vec::new() };
        let completion = if p.w_completion > 0.0 { completion_question(&words) } else { None };
        let name_lookup = if p.w_file_name > 0.0 { file_name_lookup(&words) } else { None };
        // "take a look at X" (the opening "look at" is the phrasal verb's)
        let look_at = if p.w_look_at > 0.0 && shape.phrasal_pos.is_none() { looks_at(&words) } else { None };
        let mut content: Vec<Content> = Vec::with_capacity(words.len());
        let mut joined_known = false;
        for (i, w) in words.iter().enumerate() {
            let previous = i.checked_sub(1).and_then(|j| words.get(j)).filter(|p| p.pos + 1 == w.pos);
            if is_stopword(&w.text)
                || closes_filler(previous.map(|p| p.text.as_str()), &w.text)
                || (w.placeholder && PLACEHOLDER_NOISE.contains(&w.text.as_str()))
            {
                continue;
            }
            if name_lookup == Some(w.pos) {
                continue;
            }
            let stem = self.stem_word(&w.text);
            let mut weight = if w.placeholder { p.w_placeholder } else { 1.0 };
            if w.literal || in_command(&w.text) {
                weight *= p.w_literal;
            }
            if shape.read_opener_pos == Some(w.pos) {
                weight *= p.w_opener;
            }
            if shape.phrasal_pos.is_some_and(|v| w.pos == v || w.pos == v + 1)
                || look_at.is_some_and(|(l, v)| w.pos == l || w.pos == v)
            {
                weight *= p.w_phrasal;
            }
            let instrument =
                shape.instrument_pos.is_some_and(|i| w.pos > i) && shape.purpose_pos.is_none_or(|end| w.pos < end);
            if instrument {
                weight *= p.w_instrument;
            } else if shape.scope_pos.is_some_and(|s| w.pos >= s)
                || shape.purpose_pos.is_some_and(|e| w.pos > e)
                || relative.is_some_and(|(a, b)| (a..b).contains(&w.pos))
                || completion.is_some_and(|(a, b)| (a..b).contains(&w.pos))
            {
                weight *= p.w_scope;
            }
            if payload.is_some_and(|(a, b)| (a..b).contains(&w.pos)) {
                weight *= p.w_payload;
            }
            if wanted.is_some_and(|(a, b)| (a..b).contains(&w.pos)) {
                weight *= p.w_tool_purpose;
            }
            if pasted.iter().any(|&(a, b)| (a..b).contains(&w.pos)) {
                weight *= p.w_pasted;
            }
            match w.kind {
                WordKind::Joined => joined_known = self.terms.contains_key(&stem),
                WordKind::Part if joined_known => weight *= p.w_part,
                WordKind::Part => {}
                WordKind::Whole => joined_known = false,
            }
            content.push(Content { stem, weight, pos: w.pos, raw: w.text.clone() });
        }

        let mut terms: Vec<(u32, f32, f32)> = Vec::new();
        let add = |terms: &mut Vec<(u32, f32, f32)>, t: Option<u32>, w: f32| {
            if let Some(t) = t
                && w > 0.0
            {
                terms.push((t, w, f32::INFINITY));
            }
        };
        // an expansion of a word the catalog knows is capped at that word's IDF
        let cap = if p.expansion_idf_cap {
            |idf: Option<f32>| idf.unwrap_or(f32::INFINITY)
        } else {
            |_: Option<f32>| f32::INFINITY
        };
        let add_capped = |terms: &mut Vec<(u32, f32, f32)>, t: Option<u32>, w: f32, src: Option<u32>| {
            if let Some(t) = t
                && w > 0.0
            {
                terms.push((t, w, cap(src.map(|s| self.idf[s as usize]))));
            }
        };
        let mut implied: Vec<(u32, Rule)> = Vec::new();
        let mut imply = |t: Option<u32>, rule: Rule| implied.extend(t.map(|t| (t, rule)));
        let mut variants = Vec::new();
        let intent_words: &[&str] = match shape.intent {
            Intent::None => &[],
            Intent::List => &["list"],
            Intent::Get => &["get", "show", "detail"],
        };
        if let Some(o) = shape.opener
            && !words.iter().any(|w| w.text == o)
        {
            add(&mut terms, self.term_id(&self.stem_word(o)), p.w_abbrev);
            imply(self.term_id(&self.stem_word(o)), Rule::Intent);
        }
        for w in intent_words {
            add(&mut terms, self.term_id(&self.stem_word(w)), p.w_intent);
            imply(self.term_id(&self.stem_word(w)), Rule::Intent);
        }
        let reference_urls = only_reference_urls(query);
        for kind in value_kinds(query) {
            if !words.iter().any(|w| w.text == kind) {
                let w =
                    if kind == "url" && reference_urls { p.w_value_kind * p.w_reference_url } else { p.w_value_kind };
                add(&mut terms, self.term_id(&self.stem_word(kind)), w);
                imply(self.term_id(&self.stem_word(kind)), Rule::ValueKind);
            }
        }
        // "is X finished": a request to wait for X or read its status
        if completion.is_some() && !words.iter().any(|w| w.text == "wait") {
            add(&mut terms, self.term_id(&self.stem_word("wait")), p.w_completion);
            imply(self.term_id(&self.stem_word("wait")), Rule::Completion);
        }
        // "the file called X": a lookup by name
        if name_lookup.is_some() && !words.iter().any(|w| w.text == "name") {
            add(&mut terms, self.term_id(&self.stem_word("name")), p.w_file_name);
            imply(self.term_id(&self.stem_word("name")), Rule::FileName);
        }
        // the kind of a command line: what a tool that runs one says it takes
        let mut command_kind = Vec::new();
        if command.is_some() {
            for kind in ["command", "shell"] {
                let t = self.term_id(&self.stem_word(kind));
                if !words.iter().any(|w| w.text == kind) {
                    add(&mut terms, t, p.w_command_kind);
                    imply(t, Rule::Command);
                    command_kind.extend(t.filter(|_| p.w_command_kind > 0.0));
                }
            }
        }
        // the kind of a named file: a tool that takes a file accounts for
        // the file name's words
        let mut file_kind = Vec::new();
        if command.is_none() && names_a_file(query) {
            if !words.iter().any(|w| w.text == "file") {
                let t = self.term_id(&self.stem_word("file"));
                add(&mut terms, t, p.w_file_kind);
                imply(t, Rule::File);
                file_kind.extend(t.filter(|_| p.w_file_kind > 0.0 && p.file_share));
            }
            let view = words.iter().any(|w| !w.literal && VIEW_WORDS.contains(&w.text.as_str()));
            if view && !words.iter().any(|w| w.text == "read") {
                add(&mut terms, self.term_id(&self.stem_word("read")), p.w_file_read);
                imply(self.term_id(&self.stem_word("read")), Rule::File);
            }
        }
        // "set X in config.toml": the file's text changes; "into FILE": it is written
        if command.is_none()
            && p.w_file_edit > 0.0
            && let Some(verb) = file_place_verb(query)
            && !words.iter().any(|w| w.text == verb)
        {
            add(&mut terms, self.term_id(&self.stem_word(verb)), p.w_file_edit);
            imply(self.term_id(&self.stem_word(verb)), Rule::File);
        }
        // "where do we use tenant_id": the identifier is the text a search
        // tool's `pattern` looks for
        if p.w_pattern > 0.0
            && name_lookup.is_none()
            && identifier_lookup(query)
            && !words.iter().any(|w| w.text == "pattern")
        {
            add(&mut terms, self.term_id(&self.stem_word("pattern")), p.w_pattern);
            imply(self.term_id(&self.stem_word("pattern")), Rule::Pattern);
        }
        // "use the get_event tool": a tool named by its identifier is called
        if p.w_tool_named > 0.0 && names_a_tool(query) && !words.iter().any(|w| w.text == "call") {
            add(&mut terms, self.term_id(&self.stem_word("call")), p.w_tool_named);
            imply(self.term_id(&self.stem_word("call")), Rule::ToolNamed);
        }
        // "take a look at X": a request to view X (the opener case is the phrasal verb's)
        if look_at.is_some() && !words.iter().any(|w| w.text == "read") {
            add(&mut terms, self.term_id(&self.stem_word("read")), p.w_look_at);
            imply(self.term_id(&self.stem_word("read")), Rule::LookAt);
        }
        let literal_words: Vec<&str> = words.iter().filter(|w| w.literal).map(|w| w.text.as_str()).collect();
        let rarest = self.rarest_idf();
        let mut word_terms = Vec::with_capacity(content.len());
        for c in &content {
            let before = terms.len();
            let direct = self.term_id(&c.stem);
            add(&mut terms, direct, c.weight);
            if p.w_synonym > 0.0 {
                for s in self.thesaurus.synonyms(&c.stem) {
                    add_capped(&mut terms, self.term_id(s), c.weight * p.w_synonym, direct);
                }
            }
            if p.w_abbrev > 0.0 {
                for s in self.thesaurus.expansion(&c.stem) {
                    add_capped(&mut terms, self.term_id(s), c.weight * p.w_abbrev, direct);
                }
            }
            if direct.is_none()
                && p.w_compound > 0.0
                && let Some(parts) = decompound(&c.raw, &known)
            {
                for part in parts {
                    add(&mut terms, self.term_id(&self.stem_word(&part)), c.weight * p.w_compound);
                }
            }
            if p.w_prefix > 0.0 {
                variants.clear();
                self.prefix_variants(&c.stem, &mut variants);
                for &(t, ratio) in &variants {
                    add_capped(&mut terms, Some(t), c.weight * p.w_prefix * ratio, direct);
                }
            }
            if terms.len() == before && p.w_fuzzy > 0.0 {
                // nothing in the catalog matches this word in any way: fall
                // back to the terms sharing the longest common prefix with it
                variants.clear();
                self.shared_prefix_terms(&c.stem, &mut variants);
                for &(t, ratio) in &variants {
                    add(&mut terms, Some(t), c.weight * p.w_fuzzy * ratio);
                }
            }
            let mut reached: Vec<u32> = terms[before..].iter().map(|x| x.0).collect();
            if in_command(&c.raw) {
                // a tool that runs commands accounts for the command's words
                reached.extend(&command_kind);
            } else if literal_words.contains(&c.raw.as_str()) {
                reached.extend(&file_kind);
            }
            word_terms.push(WordTerms {
                terms: reached,
                weight: c.weight,
                idf: direct.map_or(rarest, |t| self.idf[t as usize]),
            });
        }
        let mut pairs = Vec::new();
        for i in 1..content.len() {
            let (a, b) = (&content[i - 1], &content[i]);
            let w = a.weight.min(b.weight);
            if p.w_compound > 0.0 && b.pos == a.pos + 1 {
                let joined = self.stem_word(&format!("{}{}", a.raw, b.raw));
                add(&mut terms, self.term_id(&joined), w * p.w_compound);
            }
            if let (Some(ta), Some(tb)) = (self.term_id(&a.stem), self.term_id(&b.stem)) {
                pairs.push((ta, tb, w));
            }
        }
        if p.w_abbrev > 0.0 {
            let stems: Vec<String> = content.iter().map(|c| c.stem.clone()).collect();
            for i in 0..stems.len() {
                for (abbr, len) in self.thesaurus.phrases_at(&stems[i..]) {
                    let w = content[i..i + len].iter().map(|c| c.weight).fold(1.0f32, f32::min);
                    add(&mut terms, self.term_id(abbr), w * p.w_abbrev);
                }
            }
        }
        terms.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(b.2.total_cmp(&a.2)));
        terms.dedup_by_key(|(t, _, _)| *t);
        let idf = terms.iter().map(|&(t, _, c)| self.idf[t as usize].min(c)).collect();
        let terms = terms.into_iter().map(|(t, w, _)| (t, w)).collect();
        let opener = if command.is_some() { Some("run") } else { shape.opener };
        let action = opener.map_or(0, |o| self.thesaurus.action(&self.stemmer.stem(o)));
        let several = p.one_penalty < 1.0 && lists_several(query);
        let instance = p.list_penalty < 1.0 && names_instance(query);
        let flags = [
            (!pasted.is_empty(), flag::PASTED),
            (wanted.is_some(), flag::TOOL_PURPOSE),
            (payload.is_some(), flag::PAYLOAD),
            (command.is_some(), flag::COMMAND),
            (command.is_none() && names_a_file(query), flag::FILE),
            (several, flag::SEVERAL),
            (instance, flag::INSTANCE),
            (completion.is_some() || relative.is_some(), flag::CLAUSE),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |acc, (_, bit)| acc | bit);
        QueryPlan { terms, idf, action, several, instance, pairs, words: word_terms, implied, flags }
    }
}

#[cfg(test)]
#[path = "query_tests.rs"]
pub(crate) mod tests;
