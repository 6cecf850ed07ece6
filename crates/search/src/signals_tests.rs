use super::*;
use crate::SearchIndex;
use crate::query::tests::doc;

fn catalog() -> SearchIndex {
    let mut phrased = doc("git_status", "Show the working tree state.");
    phrased.phrasings = vec!["is my checkout clean".into()];
    SearchIndex::build(vec![
        doc("exec_shell", "Run a shell command and return its output."),
        doc("read_file", "Read a file's text."),
        doc("checklist_add", "Append one item to the checklist."),
        doc("task_list", "List the durable tasks."),
        doc("task_status", "Read one durable task's status."),
        phrased,
    ])
}

fn rule(s: &DocSignals, r: Rule) -> f32 {
    s.rules[RULES.iter().position(|x| *x == r).unwrap()]
}

#[test]
fn a_rule_credits_the_terms_it_implied_to_the_docs_that_have_them() {
    let idx = catalog();
    // a bare command line: the rule adds `command` and `shell`
    let (flags, s) = idx.signals("cargo build --release", &[0, 1]);
    assert_ne!(flags & flag::COMMAND, 0);
    assert!(rule(&s[0], Rule::Command) > 0.0, "{:?}", s[0]);
    assert_eq!(rule(&s[1], Rule::Command), 0.0);
    assert!(s[0].bm25 >= rule(&s[0], Rule::Command));
    // a named file: the rule adds `file` (and `read` for a viewing verb)
    let (flags, s) = idx.signals("show me Cargo.toml", &[0, 1]);
    assert_eq!(flags & (flag::COMMAND | flag::FILE), flag::FILE);
    assert!(rule(&s[1], Rule::File) > 0.0);
    assert_eq!(rule(&s[0], Rule::File), 0.0);
}

#[test]
fn penalties_a_doc_took_are_its_own_signals() {
    let idx = catalog();
    let (flags, s) = idx.signals("make a checklist: fix bug, add test, update docs", &[2]);
    assert_ne!(flags & flag::SEVERAL, 0);
    assert!(s[0].one_of_several);
    let (flags, s) = idx.signals("status of task 42", &[3, 4]);
    assert_ne!(flags & flag::INSTANCE, 0);
    assert!(s[0].list_for_one && !s[1].list_for_one);
    // "run" against a tool named for reading
    let (_, s) = idx.signals("run the linter", &[1]);
    assert!(s[0].action_miss);
}

#[test]
fn field_shares_say_which_part_of_a_tool_matched() {
    let idx = catalog();
    let (_, s) = idx.signals("is my checkout clean", &[5, 1]);
    // only git_status's example request has these words
    assert!(s[0].fields[3] > 0.5, "{:?}", s[0].fields);
    assert_eq!(s[0].fields[0], 0.0);
    assert_eq!(s[1].fields, [0.0; 4]);
}

#[test]
fn pasted_output_and_spans_are_flags() {
    let idx = catalog();
    let (flags, _) = idx.signals("error[E0308]: mismatched types\nwhat does that mean", &[0]);
    assert_ne!(flags & flag::PASTED, 0);
    let (flags, _) = idx.signals("note to self: the flaky test is slow", &[0]);
    assert_ne!(flags & flag::PAYLOAD, 0);
    let (flags, _) = idx.signals("read the file", &[0]);
    assert_eq!(flags, 0);
}
