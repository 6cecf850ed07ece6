//! The lexical ranker's rule signals, one candidate at a time: what each rule
//! added to a doc's score (the BM25 of the terms it implied), which penalties
//! the doc took, and which spans and kinds the request has. The learned
//! re-ranker (`learned.rs`) reads them as features, so it can weigh a rule
//! differently from the hand-set weight the lexical score gave it. They are
//! computed beside the lexical ranking (`SearchIndex::signals` in `rank.rs`):
//! this module only names them, so `query.rs` can record which rule added a
//! term without an import circle.

use super::index::FIELD_GROUPS;

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

#[cfg(test)]
#[path = "signals_tests.rs"]
mod tests;
