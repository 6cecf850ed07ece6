//! The lexical ranker's rule signals, one candidate at a time: what each rule
//! added to a doc's score (the BM25 of the terms it implied), which penalties
//! the doc took, and which spans and kinds the request has. The learned
//! re-ranker (`learned.rs`) reads them as features, so it can weigh a rule
//! differently from the hand-set weight the lexical score gave it.

use super::index::{FIELD_GROUPS, SearchIndex};
use super::rank::{MAX_WORDS, share_of};

/// A rule of `query.rs` that adds a term the request implies rather than says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// The shape's intent words (`list`, `get`) and a read opener's verb.
    Intent,
    /// A URL's `url`, a `#231`'s `github`.
    ValueKind,
    /// "is X finished": `wait`.
    Completion,
    /// "the file called X": `name`.
    FileName,
    /// A command line: `command`, `shell`.
    Command,
    /// A named file: `file`, and `read` / `edit` / `write` by its verb.
    File,
    /// "where do we use tenant_id": `pattern`.
    Pattern,
    /// "use the get_event tool": `call`.
    ToolNamed,
    /// "take a look at X": `read`.
    LookAt,
}

/// The rules, in the order of [`DocSignals::rules`].
pub(crate) const RULES: [Rule; 9] = [
    Rule::Intent,
    Rule::ValueKind,
    Rule::Completion,
    Rule::FileName,
    Rule::Command,
    Rule::File,
    Rule::Pattern,
    Rule::ToolNamed,
    Rule::LookAt,
];

/// Bits of `QueryPlan::flags`: spans and kinds of value a request has.
pub(crate) mod flag {
    /// Lines of pasted program output.
    pub const PASTED: u16 = 1;
    /// "a tool that can ..." / "something to ...": the tool asked for by purpose.
    pub const TOOL_PURPOSE: u16 = 1 << 1;
    /// A label and a colon, then the text given to the tool.
    pub const PAYLOAD: u16 = 1 << 2;
    /// A command line.
    pub const COMMAND: u16 = 1 << 3;
    /// A named file (and no command line).
    pub const FILE: u16 = 1 << 4;
    /// Several items listed.
    pub const SEVERAL: u16 = 1 << 5;
    /// One instance named by its number.
    pub const INSTANCE: u16 = 1 << 6;
    /// A relative clause or a completion question.
    pub const CLAUSE: u16 = 1 << 7;
    /// Every flag, in the order the re-ranker's features list them.
    pub const ALL: [u16; 8] = [PASTED, TOOL_PURPOSE, PAYLOAD, COMMAND, FILE, SEVERAL, INSTANCE, CLAUSE];
}

/// One candidate's lexical signals (before the match-share factor).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DocSignals {
    /// BM25F over every query term.
    pub bm25: f32,
    /// Share of the doc's name terms the request covers.
    pub coverage: f32,
    /// Name-IDF mass of the covered name terms over sqrt(name length).
    pub name_score: f32,
    /// The name's verb is of another action class than the request's.
    pub action_miss: bool,
    /// ... and a sibling of its family does what the request says.
    pub sibling_miss: bool,
    /// The request lists several items; the doc takes one.
    pub one_of_several: bool,
    /// The request names one instance; the doc lists.
    pub list_for_one: bool,
    /// BM25F of the terms each rule implied, in [`RULES`] order.
    pub rules: [f32; RULES.len()],
    /// The match share of the request in each field group (`FIELD_GROUPS`:
    /// name, description, parameters, example requests).
    pub fields: [f32; FIELD_GROUPS.len()],
}

impl SearchIndex {
    /// The request's flags ([`flag`] bits) and each of `docs`' signals.
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
#[path = "signals_tests.rs"]
mod tests;
