//! Index construction: per-field token streams, BM25F postings, compound-word
//! splitting and the vocabulary used for query expansion.

use std::collections::HashMap;

use super::params::{Field, NFIELDS, RankParams};
use super::several::takes_one;
use super::synonyms::Thesaurus;
use super::tokenize::{Word, WordKind, WordStemmer, is_stopword, split_words};

/// One searchable tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchDoc {
    /// Callable name (for MCP tools `mcp__<server>__<tool>`).
    pub name: String,
    /// Other names that find this tool (old names, hidden aliases).
    pub aliases: Vec<String>,
    /// Domain (`file`, `git`, `mcp`, ...).
    pub domain: String,
    pub description: String,
    pub prompt_snippet: Option<String>,
    /// Search-only example requests for this tool (manifest `phrasings`):
    /// indexed as their own field and, with a model, embedded one by one.
    pub phrasings: Vec<String>,
    /// Synthetic example requests (manifest `examples`): their own lexical
    /// field (`Field::Example`) and, with a model, embedded one by one.
    pub examples: Vec<String>,
    /// (parameter name, parameter description), nested names dotted.
    pub params: Vec<(String, String)>,
    /// MCP server the tool comes from.
    pub server: Option<String>,
}

impl SearchDoc {
    /// The tool's own name without an `mcp__<server>__` prefix.
    pub fn short_name(&self) -> &str {
        if let Some(rest) = self.name.strip_prefix("mcp__") {
            if let Some(server) = &self.server
                && let Some(tail) = rest.strip_prefix(server.as_str()).and_then(|r| r.strip_prefix("__"))
            {
                return tail;
            }
            if let Some(idx) = rest.find("__") {
                return &rest[idx + 2..];
            }
        }
        &self.name
    }
}

/// A posting: document and its length-normalised, field-weighted term
/// frequency (the BM25F pseudo frequency).
#[derive(Debug, Clone, Copy)]
pub(super) struct Posting {
    pub doc: u32,
    pub tf: f32,
}

/// Fields that describe what a tool is (document frequency is counted over
/// these when a term occurs in them anywhere).
const PRIMARY: [Field; 8] = [
    Field::Name,
    Field::NamePart,
    Field::Alias,
    Field::Description,
    Field::Snippet,
    Field::Summary,
    Field::Phrase,
    Field::Example,
];

/// Minimum length of each piece when splitting a compound word.
const MIN_PIECE: usize = 3;

/// Words longer than this (in bytes) are pasted data (a hash, a base64 run, a
/// line without spaces), not words a catalog spells: they match a term only
/// exactly. Splitting them or trying their prefixes costs their length
/// squared, which a request of one 200 kB token turned into seconds.
pub(super) const LONGEST_WORD: usize = 64;

/// Inverted index over [`SearchDoc`]s.
pub struct SearchIndex {
    pub(super) docs: Vec<SearchDoc>,
    pub(super) params: RankParams,
    pub(super) stemmer: WordStemmer,
    pub(super) thesaurus: Thesaurus,
    /// stemmed term -> id
    pub(super) terms: HashMap<String, u32>,
    /// stemmed terms sorted, for prefix lookups
    pub(super) sorted_terms: Vec<(String, u32)>,
    /// terms whose surface form is a compound of other catalog words
    /// (`resourcetype`): not prefix variants of their first piece
    pub(super) compound: Vec<bool>,
    /// raw (unstemmed, lowercase) words seen in any field, with document frequency
    pub(super) words: HashMap<String, u32>,
    pub(super) postings: Vec<Vec<Posting>>,
    pub(super) idf: Vec<f32>,
    /// unique stemmed name terms per doc (own name only, not server)
    pub(super) name_terms: Vec<Vec<u32>>,
    /// action classes (bitmask) of the verbs in each doc's name
    pub(super) name_action: Vec<u8>,
    /// per doc, the action classes of its family: the tools of its server
    /// whose names have the same words besides the verbs (`automation_create`,
    /// `automation_resume`, `automation_pause`)
    pub(super) family_action: Vec<u8>,
    /// per doc, whether its description says it takes one thing ("Append
    /// one item ..."): the wrong tool for a request that lists several
    pub(super) takes_one: Vec<bool>,
    /// per doc, whether its name's verb is `list` (`task_list`): the wrong
    /// tool for a request about one instance named by its number
    pub(super) lists: Vec<bool>,
    /// IDF of each term computed over names only
    pub(super) name_idf: Vec<f32>,
    /// adjacent stemmed term pairs in name/description -> docs (sorted, unique)
    pub(super) bigrams: HashMap<(u32, u32), Vec<u32>>,
    /// rank of each doc when sorted by name (ties are broken by this)
    pub(super) name_rank: Vec<u32>,
    /// per doc, the sorted term ids of each field group (`FIELD_GROUPS`):
    /// which part of a tool's text a request's words matched, for the
    /// learned re-ranker (`signals.rs`)
    pub(super) field_terms: Vec<[Vec<u32>; FIELD_GROUPS.len()]>,
}

/// Field groups the learned re-ranker sees a match share of: the name (with
/// its pieces and aliases), the description (with its summary, snippet,
/// domain and server), the parameters, the example requests.
pub(super) const FIELD_GROUPS: [&[Field]; 4] = [
    &[Field::Name, Field::NamePart, Field::Alias],
    &[Field::Description, Field::Summary, Field::Snippet, Field::Domain, Field::Server],
    &[Field::ParamName, Field::ParamDesc],
    &[Field::Phrase],
];

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex").field("docs", &self.docs.len()).field("terms", &self.terms.len()).finish()
    }
}

/// Tokens of one doc, per field, as raw lowercase words (stopwords removed).
/// BM25's IDF of a term found in `df` of `n` documents (never negative).
pub(super) fn bm25_idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// Which words of the synthetic example requests are indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Examples {
    /// Any (off when their weight is 0: then they change no other word's
    /// rarity either).
    on: bool,
    /// The literal values too (file names, paths, URLs, quoted text).
    values: bool,
    /// Only words found in at least this many of a tool's examples: a word
    /// its examples share says what the tool is for, a word in one of them
    /// may be that sentence's filler ("pls", a file's name).
    min_examples: usize,
}

impl Examples {
    #[cfg(test)]
    const OFF: Examples = Examples { on: false, values: true, min_examples: 1 };

    fn of(params: &RankParams) -> Examples {
        Examples {
            on: params.field_weight[Field::Example as usize] > 0.0,
            values: params.example_values,
            min_examples: params.example_min.max(1.0) as usize,
        }
    }
}

/// The indexed words of a tool's example requests (see [`Examples`]).
fn example_words(examples: &[String], which: Examples) -> Vec<Word> {
    if !which.on {
        return Vec::new();
    }
    let mut per: Vec<Vec<Word>> = examples
        .iter()
        .map(|e| {
            let mut ws = Vec::new();
            split_words(e, &mut ws);
            ws.retain(|w| which.values || !w.literal);
            ws
        })
        .collect();
    if which.min_examples > 1 {
        let mut count: HashMap<String, usize> = HashMap::new();
        for ws in &per {
            let mut seen: Vec<&str> = ws.iter().map(|w| w.text.as_str()).collect();
            seen.sort_unstable();
            seen.dedup();
            for w in seen {
                *count.entry(w.to_string()).or_insert(0) += 1;
            }
        }
        for ws in &mut per {
            ws.retain(|w| count.get(&w.text).is_some_and(|&c| c >= which.min_examples));
        }
    }
    per.into_iter().flatten().collect()
}

fn field_words(
    doc: &SearchDoc,
    boiler: &dyn Fn(&(String, String)) -> bool,
    examples: Examples,
) -> [Vec<Word>; NFIELDS] {
    let mut out: [Vec<Word>; NFIELDS] = Default::default();
    let mut add = |field: Field, text: &str| {
        let buf = &mut out[field as usize];
        split_words(text, buf);
    };
    add(Field::Name, doc.short_name());
    for a in &doc.aliases {
        add(Field::Alias, a);
    }
    add(Field::Domain, &doc.domain);
    if let Some(s) = &doc.server {
        add(Field::Server, s);
    }
    let description = drop_negated(&doc.description);
    add(Field::Description, &description);
    // The lead sentence of a long description states what the tool is for;
    // the rest is usage notes that length normalisation should not let
    // drown it. A one-sentence description needs no second copy.
    let lead = first_sentence(&description);
    if lead.len() + 1 < description.trim().len() {
        add(Field::Summary, lead);
    }
    if let Some(p) = &doc.prompt_snippet {
        add(Field::Snippet, p);
    }
    for p in &doc.phrasings {
        add(Field::Phrase, p);
    }
    for param in &doc.params {
        if boiler(param) {
            continue;
        }
        let (n, d) = param;
        add(Field::ParamName, n);
        add(Field::ParamDesc, d);
    }
    out[Field::Example as usize] = example_words(&doc.examples, examples);
    for buf in &mut out {
        buf.retain(|w| !is_stopword(&w.text));
    }
    out
}

/// Phrases that start a clause saying what a tool is NOT for.
const NEGATIONS: &[&str] = &["not for ", "do not use", "don't use", "not to be used", "never use", "instead of "];

/// The description without clauses that say what the tool is not for
/// ("Not for listing multiple keys."): their words describe other tools.
fn drop_negated(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let next = NEGATIONS.iter().filter_map(|n| lower[i..].find(n).map(|p| p + i)).min();
        let Some(start) = next else {
            out.push_str(&text[i..]);
            break;
        };
        out.push_str(&text[i..start]);
        let end = lower[start..].find(['.', '\n', ';']).map_or(text.len(), |p| start + p);
        out.push(' ');
        i = end;
    }
    out
}

/// The first sentence of a description.
fn first_sentence(text: &str) -> &str {
    let t = text.trim_start();
    let mut end = t.len();
    for (i, c) in t.char_indices() {
        if c == '\n' || ((c == '.' || c == '!' || c == '?') && t[i + 1..].starts_with(char::is_whitespace)) {
            end = i;
            break;
        }
    }
    &t[..end]
}

/// Action classes of the verbs a description opens with, joined by `or`,
/// `and` or `/` ("Create or Update ...", "Create/set ...", "Appends ...").
fn leading_actions(summary: &str, stemmer: &WordStemmer, thesaurus: &Thesaurus) -> u8 {
    let mut words = Vec::new();
    split_words(summary, &mut words);
    let mut out = 0u8;
    let mut expect_verb = true;
    for w in words.iter().filter(|w| w.kind != WordKind::Joined) {
        if expect_verb {
            let a = thesaurus.action(&stemmer.stem(&w.text));
            if a == 0 {
                break;
            }
            out |= a;
            expect_verb = false;
        } else if w.text == "or" || w.text == "and" {
            expect_verb = true;
        } else {
            // `Create/set`: the slash vanished in splitting, so a verb may
            // follow a verb directly
            let a = thesaurus.action(&stemmer.stem(&w.text));
            if a == 0 {
                break;
            }
            out |= a;
        }
    }
    out
}

/// Parameters (name and description) shared by at least `share` of the
/// tools of a server (tools without a server count as one server), in
/// servers of at least [`MIN_BOILER_GROUP`] tools: authentication, tenant,
/// retry and paging options that say nothing about what a tool does. Their
/// words are not indexed, so they neither match nor dilute term rarity.
fn boilerplate_params(docs: &[SearchDoc], share: f32) -> std::collections::HashSet<(Option<&str>, &str, &str)> {
    let mut out = std::collections::HashSet::new();
    if share <= 0.0 {
        return out;
    }
    let mut group_size: HashMap<Option<&str>, usize> = HashMap::new();
    let mut count: HashMap<(Option<&str>, &str, &str), usize> = HashMap::new();
    for d in docs {
        let g = d.server.as_deref();
        *group_size.entry(g).or_insert(0) += 1;
        for (n, desc) in &d.params {
            *count.entry((g, n.as_str(), desc.as_str())).or_insert(0) += 1;
        }
    }
    for (key, c) in count {
        let size = group_size.get(&key.0).copied().unwrap_or(0);
        if size >= MIN_BOILER_GROUP && c as f32 >= share * size as f32 {
            out.insert(key);
        }
    }
    out
}

/// Smallest server whose shared parameters can be recognised as boilerplate.
const MIN_BOILER_GROUP: usize = 10;

/// Split `word` into 2..=3 known words (each at least [`MIN_PIECE`] chars),
/// preferring fewer and more even pieces. Returns None if impossible.
pub(super) fn decompound(word: &str, known: &dyn Fn(&str) -> bool) -> Option<Vec<String>> {
    if !word.is_ascii()
        || word.len() < 2 * MIN_PIECE
        || word.len() > LONGEST_WORD
        || word.bytes().any(|b| b.is_ascii_digit())
    {
        return None;
    }
    let n = word.len();
    let mut best: Option<(usize, usize, Vec<String>)> = None; // (pieces, -sum sq, parts)
    let mut consider = |parts: Vec<&str>| {
        let pieces = parts.len();
        let sq: usize = parts.iter().map(|p| p.len() * p.len()).sum();
        let better = match &best {
            None => true,
            Some((bp, bsq, _)) => pieces < *bp || (pieces == *bp && sq < *bsq),
        };
        if better {
            best = Some((pieces, sq, parts.iter().map(|p| (*p).to_string()).collect()));
        }
    };
    for i in MIN_PIECE..=n - MIN_PIECE {
        let (a, rest) = word.split_at(i);
        if !known(a) {
            continue;
        }
        if known(rest) {
            consider(vec![a, rest]);
        }
        if rest.len() >= 2 * MIN_PIECE {
            for j in MIN_PIECE..=rest.len() - MIN_PIECE {
                let (b, c) = rest.split_at(j);
                if known(b) && known(c) {
                    consider(vec![a, b, c]);
                }
            }
        }
    }
    best.map(|(_, _, parts)| parts)
}

impl SearchIndex {
    /// Build an index with the default ranking parameters.
    pub fn build(docs: Vec<SearchDoc>) -> SearchIndex {
        Self::build_with(docs, RankParams::default())
    }

    /// Build an index with explicit ranking parameters.
    pub fn build_with(docs: Vec<SearchDoc>, params: RankParams) -> SearchIndex {
        let stemmer = WordStemmer::new();
        let thesaurus = Thesaurus::new(&stemmer);
        let boiler = boilerplate_params(&docs, params.boiler_share);
        let with_examples = Examples::of(&params);
        let per_doc: Vec<[Vec<Word>; NFIELDS]> = docs
            .iter()
            .map(|d| {
                field_words(d, &|p| boiler.contains(&(d.server.as_deref(), p.0.as_str(), p.1.as_str())), with_examples)
            })
            .collect();

        // raw word document frequencies
        let mut words: HashMap<String, u32> = HashMap::new();
        for fields in &per_doc {
            let mut seen: Vec<&str> = fields.iter().flatten().map(|w| w.text.as_str()).collect();
            seen.sort_unstable();
            seen.dedup();
            for w in seen {
                *words.entry(w.to_string()).or_insert(0) += 1;
            }
        }
        // words known for compound splitting: alphabetic, >= MIN_PIECE chars
        let known = |w: &str| w.len() >= MIN_PIECE && words.contains_key(w);

        let mut terms: HashMap<String, u32> = HashMap::new();
        let term_of = |s: String, terms: &mut HashMap<String, u32>| -> u32 {
            let next = terms.len() as u32;
            *terms.entry(s).or_insert(next)
        };

        let stem = |w: &str| if params.stem { stemmer.stem(w) } else { w.to_string() };
        let stemmed_words: std::collections::HashSet<String> =
            if params.join_pairs { words.keys().map(|w| stem(w)).collect() } else { Default::default() };
        // per doc: stemmed term ids per field
        let mut doc_terms: Vec<[Vec<u32>; NFIELDS]> = Vec::with_capacity(docs.len());
        let mut name_terms = Vec::with_capacity(docs.len());
        let mut name_action = Vec::with_capacity(docs.len());
        let mut lists = Vec::with_capacity(docs.len());
        let mut family_key: Vec<Option<(Option<&str>, Vec<String>)>> = Vec::with_capacity(docs.len());
        let mut bigrams: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
        for (d, fields) in per_doc.iter().enumerate() {
            let mut ids: [Vec<u32>; NFIELDS] = Default::default();
            for (f, ws) in fields.iter().enumerate() {
                for w in ws {
                    ids[f].push(term_of(stem(&w.text), &mut terms));
                }
            }
            if params.join_pairs {
                // "resource groups" also indexes as "resourcegroups" when that
                // spelling occurs somewhere in the catalog, so both spellings
                // of a compound match the same documents.
                for (f, ws) in fields.iter().enumerate() {
                    for k in 1..ws.len() {
                        let (a, b) = (&ws[k - 1], &ws[k]);
                        if b.pos != a.pos + 1 || (a.kind == WordKind::Part && b.kind == WordKind::Part) {
                            continue;
                        }
                        if a.text.len() < MIN_PIECE || b.text.len() < MIN_PIECE {
                            continue;
                        }
                        let joined = stem(&format!("{}{}", a.text, b.text));
                        if stemmed_words.contains(&joined) {
                            ids[f].push(term_of(joined, &mut terms));
                        }
                    }
                }
            }
            if params.decompound {
                for w in &fields[Field::Name as usize] {
                    if let Some(parts) = decompound(&w.text, &known) {
                        for p in parts {
                            ids[Field::NamePart as usize].push(term_of(stem(&p), &mut terms));
                        }
                    }
                }
            }
            let mut action =
                fields[Field::Name as usize].iter().fold(0u8, |acc, w| acc | thesaurus.action(&stemmer.stem(&w.text)));
            if action != 0 {
                // "Create or update a namespace." named `namespace_update`:
                // the verbs the description opens with are the tool's too.
                action |= leading_actions(first_sentence(&docs[d].description), &stemmer, &thesaurus);
            }
            name_action.push(action);
            lists.push(fields[Field::Name as usize].iter().any(|w| w.text == "list" || w.text == "enumerate"));
            let object: Vec<String> = fields[Field::Name as usize]
                .iter()
                .map(|w| stemmer.stem(&w.text))
                .filter(|s| thesaurus.action(s) == 0)
                .collect();
            family_key.push((action != 0 && !object.is_empty()).then(|| (docs[d].server.as_deref(), object)));
            let mut nt = ids[Field::Name as usize].clone();
            nt.sort_unstable();
            nt.dedup();
            name_terms.push(nt);
            for f in [Field::Name, Field::Description] {
                let ws = &fields[f as usize];
                let is = &ids[f as usize];
                for k in 1..ws.len() {
                    if ws[k].pos > ws[k - 1].pos && (ws[k].pos - ws[k - 1].pos) as f32 <= params.bigram_gap {
                        let list = bigrams.entry((is[k - 1], is[k])).or_default();
                        if list.last() != Some(&(d as u32)) {
                            list.push(d as u32);
                        }
                    }
                }
            }
            doc_terms.push(ids);
        }

        // field length statistics
        let n = docs.len().max(1) as f32;
        let mut avg = [0f32; NFIELDS];
        let field_terms = doc_terms
            .iter()
            .map(|ids| {
                FIELD_GROUPS.map(|group| {
                    let mut t: Vec<u32> = group.iter().flat_map(|&f| ids[f as usize].iter().copied()).collect();
                    t.sort_unstable();
                    t.dedup();
                    t
                })
            })
            .collect();
        for ids in &doc_terms {
            for f in 0..NFIELDS {
                avg[f] += ids[f].len() as f32;
            }
        }
        for a in &mut avg {
            *a /= n;
        }

        let mut postings: Vec<Vec<Posting>> = vec![Vec::new(); terms.len()];
        let mut tf_buf: Vec<(u32, [f32; NFIELDS])> = Vec::new();
        let mut primary_df = vec![0u32; terms.len()];
        for (d, ids) in doc_terms.iter().enumerate() {
            tf_buf.clear();
            for f in 0..NFIELDS {
                for &t in &ids[f] {
                    match tf_buf.iter_mut().find(|(x, _)| *x == t) {
                        Some((_, c)) => c[f] += 1.0,
                        None => {
                            let mut c = [0f32; NFIELDS];
                            c[f] = 1.0;
                            tf_buf.push((t, c));
                        }
                    }
                }
            }
            for (t, counts) in &tf_buf {
                if PRIMARY.iter().any(|&f| counts[f as usize] > 0.0) {
                    primary_df[*t as usize] += 1;
                }
                let mut tf = 0f32;
                for f in 0..NFIELDS {
                    if counts[f] > 0.0 {
                        let b = params.field_b[f];
                        let norm = if avg[f] > 0.0 { 1.0 - b + b * ids[f].len() as f32 / avg[f] } else { 1.0 };
                        tf += params.field_weight[f] * counts[f] / norm;
                    }
                }
                if tf > 0.0 {
                    postings[*t as usize].push(Posting { doc: d as u32, tf });
                }
            }
        }
        let idf = postings
            .iter()
            .zip(&primary_df)
            .map(|(p, &pdf)| {
                // Document frequency over the fields that say what a tool is:
                // boilerplate parameter text shared by every tool of a server
                // (auth, retry, tenant options) must not make a word common.
                let df = if params.primary_idf && pdf > 0 { pdf } else { p.len() as u32 } as f32;
                bm25_idf(n, df).powf(params.idf_pow)
            })
            .collect();

        let mut name_df = vec![0u32; terms.len()];
        for nt in &name_terms {
            for &t in nt {
                name_df[t as usize] += 1;
            }
        }
        let name_idf = name_df.iter().map(|&df| bm25_idf(n, df as f32)).collect();

        let mut compound = vec![false; terms.len()];
        for w in words.keys() {
            if let Some(&t) = terms.get(&stem(w))
                && decompound(w, &known).is_some()
            {
                compound[t as usize] = true;
            }
        }

        let mut sorted_terms: Vec<(String, u32)> = terms.iter().map(|(k, v)| (k.clone(), *v)).collect();
        sorted_terms.sort();

        let mut order: Vec<usize> = (0..docs.len()).collect();
        order.sort_by(|&a, &b| docs[a].name.cmp(&docs[b].name).then(a.cmp(&b)));
        let mut name_rank = vec![0u32; docs.len()];
        for (r, &d) in order.iter().enumerate() {
            name_rank[d] = r as u32;
        }

        let mut families: HashMap<&(Option<&str>, Vec<String>), u8> = HashMap::new();
        for (key, &action) in family_key.iter().zip(&name_action) {
            if let Some(k) = key {
                *families.entry(k).or_insert(0) |= action;
            }
        }
        let family_action: Vec<u8> =
            family_key.iter().map(|k| k.as_ref().and_then(|k| families.get(k)).copied().unwrap_or(0)).collect();
        drop(families);
        drop(family_key);
        let takes_one = docs.iter().map(|d| takes_one(first_sentence(&d.description))).collect();

        SearchIndex {
            docs,
            params,
            stemmer,
            thesaurus,
            terms,
            sorted_terms,
            compound,
            words,
            postings,
            idf,
            name_terms,
            name_action,
            family_action,
            takes_one,
            lists,
            name_idf,
            bigrams,
            name_rank,
            field_terms,
        }
    }

    /// The indexed documents, in the order given to [`SearchIndex::build`].
    /// Name order of two docs: the tie-break every ranking shares.
    pub(crate) fn name_order(&self, a: usize, b: usize) -> std::cmp::Ordering {
        self.name_rank[a].cmp(&self.name_rank[b])
    }

    pub fn docs(&self) -> &[SearchDoc] {
        &self.docs
    }

    /// The ranking parameters in use.
    pub fn params(&self) -> &RankParams {
        &self.params
    }
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
