//! Ranking: BM25F over the weighted query terms, then name-coverage and
//! phrase signals, then a deterministic sort (score desc, name asc).

use std::cmp::Ordering;

use regex::RegexBuilder;

use super::index::SearchIndex;
use super::query::QueryPlan;
use super::signals::{DocSignals, RULES};

/// Content words of a request the match share tracks (a bit each); words
/// past this many count in neither part of the share.
pub(super) const MAX_WORDS: usize = 64;

/// Floor of the match share in a score, so that a doc reached only through
/// terms the request implies keeps an order among its peers.
const MIN_SHARE: f32 = 1e-3;

/// The weighted share of the request's content words in `mask`.
pub(super) fn share_of(plan: &QueryPlan, mask: u64) -> f32 {
    let (mut found, mut total) = (0f32, 0f32);
    for (i, w) in plan.words.iter().enumerate().take(MAX_WORDS) {
        let mass = w.weight * w.idf;
        total += mass;
        if mask & (1 << i) != 0 {
            found += mass;
        }
    }
    if total > 0.0 { found / total } else { 0.0 }
}

/// One search result: index into [`SearchIndex::docs`] and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub doc: usize,
    pub score: f32,
}

impl SearchIndex {
    /// Ranked search. `keep` filters doc indexes before ranking and `limit`.
    pub fn search(&self, query: &str, limit: usize, keep: &dyn Fn(usize) -> bool) -> Vec<Hit> {
        if limit == 0 || self.docs.is_empty() {
            return Vec::new();
        }
        let p = &self.params;
        let plan = self.analyze(query);
        let mut acc = vec![0f32; self.docs.len()];
        let k1 = p.k1;
        for (&(t, qw), &idf) in plan.terms.iter().zip(&plan.idf) {
            let w = idf * qw * (k1 + 1.0);
            for post in &self.postings[t as usize] {
                acc[post.doc as usize] += w * post.tf / (k1 + post.tf);
            }
        }
        if p.bigram > 0.0 {
            for &(a, b, w) in &plan.pairs {
                if let Some(docs) = self.bigrams.get(&(a, b)) {
                    let bonus = p.bigram * w * 0.5 * (self.idf[a as usize] + self.idf[b as usize]);
                    for &d in docs {
                        if acc[d as usize] > 0.0 {
                            acc[d as usize] += bonus;
                        }
                    }
                }
            }
        }
        let found = if p.share_pow > 0.0 { self.words_found(&plan) } else { Vec::new() };
        let mut hits: Vec<Hit> = Vec::new();
        for (d, &s) in acc.iter().enumerate() {
            if s > 0.0 && keep(d) {
                let (coverage, name_score) = self.name_match(d, &plan);
                let mut score = s * (1.0 + p.coverage * coverage) + p.name_bonus * name_score;
                let action = self.name_action[d];
                if plan.action != 0 && action != 0 && plan.action & action == 0 {
                    score *= p.action_penalty;
                    // a sibling does what the request says: this one is the
                    // family's wrong verb, not merely another verb
                    if self.family_action[d] & plan.action != 0 {
                        score *= p.sibling_penalty;
                    }
                }
                if plan.several && self.takes_one[d] {
                    score *= p.one_penalty;
                }
                if plan.instance && self.lists[d] {
                    score *= p.list_penalty;
                }
                if let Some(&mask) = found.get(d) {
                    // a doc reached only by implied terms (the shape's `list`)
                    // explains nothing of the request's own words
                    score *= share_of(&plan, mask).max(MIN_SHARE).powf(p.share_pow);
                }
                hits.push(Hit { doc: d, score });
            }
        }
        self.top(hits, limit)
    }

    /// Name signals: the share of the doc's name terms present in the query
    /// (weighted by query weight), and the name-IDF mass of those matches
    /// divided by the square root of the name length.
    pub(super) fn name_match(&self, doc: usize, plan: &QueryPlan) -> (f32, f32) {
        let names = &self.name_terms[doc];
        if names.is_empty() {
            return (0.0, 0.0);
        }
        let (mut cov, mut mass, mut total) = (0f32, 0f32, 0f32);
        let ci = self.params.coverage_idf;
        for &t in names {
            let w = plan.weight(t).min(1.0);
            let nidf = self.name_idf[t as usize];
            // coverage_idf blends a plain share with an IDF-weighted share, so
            // missing a rare name word (the object) costs more than missing a
            // common one (the verb)
            let cw = 1.0 - ci + ci * nidf;
            cov += w * cw;
            total += cw;
            mass += w * nidf;
        }
        let len = names.len() as f32;
        (if total > 0.0 { cov / total } else { 0.0 }, mass / len.sqrt())
    }

    /// How much of a request each of `docs` accounts for: the share of the
    /// request's content words, weighted by query weight and IDF, that the
    /// doc contains itself or through one of the word's expansions. A request
    /// in the catalog's own words scores near 1 on its tool; one in other
    /// words than the catalog's (everyday phrasing against terse API text)
    /// scores low everywhere, which says a lexical ranking of it is a guess.
    pub fn match_share(&self, query: &str, docs: &[usize]) -> Vec<f32> {
        let plan = self.analyze(query);
        docs.iter()
            .map(|&d| {
                let mut mask = 0u64;
                for (i, w) in plan.words.iter().enumerate().take(MAX_WORDS) {
                    if w.terms.iter().any(|&t| self.contains(t, d)) {
                        mask |= 1 << i;
                    }
                }
                share_of(&plan, mask)
            })
            .collect()
    }

    /// Per doc, a bit set of the request's content words it contains (its
    /// stem or an expansion); one pass over the words' postings.
    fn words_found(&self, plan: &QueryPlan) -> Vec<u64> {
        let mut found = vec![0u64; self.docs.len()];
        for (i, w) in plan.words.iter().enumerate().take(MAX_WORDS) {
            for &t in &w.terms {
                for post in &self.postings[t as usize] {
                    found[post.doc as usize] |= 1 << i;
                }
            }
        }
        found
    }

    /// Whether `doc` has a posting for `term` (postings are in doc order).
    pub(super) fn contains(&self, term: u32, doc: usize) -> bool {
        self.postings[term as usize].binary_search_by_key(&(doc as u32), |p| p.doc).is_ok()
    }

    /// The IDF of a term no document has.
    pub(super) fn rarest_idf(&self) -> f32 {
        super::index::bm25_idf(self.docs.len() as f32, 0.0).powf(self.params.idf_pow)
    }

    fn cmp_hits(&self, a: &Hit, b: &Hit) -> Ordering {
        b.score.total_cmp(&a.score).then_with(|| self.name_rank[a.doc].cmp(&self.name_rank[b.doc]))
    }

    fn top(&self, mut hits: Vec<Hit>, limit: usize) -> Vec<Hit> {
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, |a, b| self.cmp_hits(a, b));
            hits.truncate(limit);
        }
        hits.sort_by(|a, b| self.cmp_hits(a, b));
        hits
    }

    /// Case-insensitive regex search over name, aliases and description.
    /// Score: 3 for a name match, 2 for an alias match, 1 for a description
    /// match (summed). Ties are broken by name.
    pub fn search_regex(
        &self,
        pattern: &str,
        limit: usize,
        keep: &dyn Fn(usize) -> bool,
    ) -> Result<Vec<Hit>, regex::Error> {
        let re = RegexBuilder::new(pattern).case_insensitive(true).size_limit(1 << 20).build()?;
        let mut hits = Vec::new();
        if limit == 0 {
            return Ok(hits);
        }
        for (d, doc) in self.docs.iter().enumerate() {
            if !keep(d) {
                continue;
            }
            let mut score = 0f32;
            if re.is_match(&doc.name) {
                score += 3.0;
            }
            if doc.aliases.iter().any(|a| re.is_match(a)) {
                score += 2.0;
            }
            if re.is_match(&doc.description) {
                score += 1.0;
            }
            if score > 0.0 {
                hits.push(Hit { doc: d, score });
            }
        }
        Ok(self.top(hits, limit))
    }
}

impl SearchIndex {
    /// The request's flags ([`crate::signals::flag`] bits) and each of
    /// `docs`' rule signals (`signals.rs`), for the learned re-ranker.
    pub(crate) fn signals(&self, query: &str, docs: &[usize]) -> (u16, Vec<DocSignals>) {
        let plan = self.analyze(query);
        let k1 = self.params.k1;
        let tf = |t: u32, d: usize| {
            let post = &self.postings[t as usize];
            post.binary_search_by_key(&(d as u32), |p| p.doc).map_or(0.0, |i| post[i].tf)
        };
        let out = docs
            .iter()
            .map(|&d| {
                let mut s = DocSignals::default();
                for (&(t, qw), &idf) in plan.terms.iter().zip(&plan.idf) {
                    let f = tf(t, d);
                    if f == 0.0 {
                        continue;
                    }
                    let c = idf * qw * (k1 + 1.0) * f / (k1 + f);
                    s.bm25 += c;
                    for (term, rule) in &plan.implied {
                        if *term == t
                            && let Some(i) = RULES.iter().position(|r| r == rule)
                        {
                            s.rules[i] += c;
                        }
                    }
                }
                (s.coverage, s.name_score) = self.name_match(d, &plan);
                let action = self.name_action[d];
                s.action_miss = plan.action != 0 && action != 0 && plan.action & action == 0;
                s.sibling_miss = s.action_miss && self.family_action[d] & plan.action != 0;
                s.one_of_several = plan.several && self.takes_one[d];
                s.list_for_one = plan.instance && self.lists[d];
                for (g, terms) in self.field_terms[d].iter().enumerate() {
                    let mut mask = 0u64;
                    for (i, w) in plan.words.iter().enumerate().take(MAX_WORDS) {
                        if w.terms.iter().any(|t| terms.binary_search(t).is_ok()) {
                            mask |= 1 << i;
                        }
                    }
                    s.fields[g] = share_of(&plan, mask);
                }
                s
            })
            .collect();
        (plan.flags, out)
    }
}

#[cfg(test)]
#[path = "rank_tests.rs"]
mod tests;

impl SearchIndex {
    /// Debugging aid: how `query` scores against the doc named `name`
    /// (per-term BM25F contributions and the name signals).
    #[doc(hidden)]
    pub fn explain(&self, query: &str, name: &str) -> String {
        use std::fmt::Write;
        let Some(d) = self.docs.iter().position(|x| x.name == name || x.name.ends_with(&format!("__{name}"))) else {
            return format!("no doc {name}\n");
        };
        let plan = self.analyze(query);
        let mut out = String::new();
        let mut inv: Vec<(&String, &u32)> = self.terms.iter().collect();
        inv.sort_by_key(|(_, t)| **t);
        let k1 = self.params.k1;
        let mut total = 0f32;
        for (&(t, qw), &idf) in plan.terms.iter().zip(&plan.idf) {
            let tf = self.postings[t as usize].iter().find(|p| p.doc as usize == d).map_or(0.0, |p| p.tf);
            let c = idf * qw * (k1 + 1.0) * tf / (k1 + tf);
            total += c;
            let _ = writeln!(out, "  {:14} qw={:.2} idf={:.2} tf={:.2} -> {:.3}", inv[t as usize].0, qw, idf, tf, c);
        }
        let (cov, ns) = self.name_match(d, &plan);
        let _ = writeln!(
            out,
            "  bm25={total:.3} coverage={cov:.2} name_score={ns:.2} action={} plan.action={}",
            self.name_action[d], plan.action
        );
        out
    }
}
