use super::*;

#[test]
fn numbered_and_comma_lists_are_several() {
    assert!(lists_several("todo: 1) migrate db 2) update api 3) deploy"));
    assert!(lists_several("plan for this: 1. read 2. write"));
    assert!(lists_several("make a todo list: 1 split module 2 add tests 3 docs"));
    assert!(lists_several("make a checklist: fix bug, add test, update docs"));
    assert!(lists_several("new one: lint, test and ship"));
}

#[test]
fn one_item_a_number_or_a_sentence_is_not_several() {
    assert!(!lists_several("one more item for the list: rotate the secrets"));
    assert!(!lists_several("mark item 2 as done"));
    assert!(!lists_several("set sub_rlm depth 2, then 1 more"));
    assert!(!lists_several("note: the build is slow, the cache is cold, and nobody knows why it happens at night"));
    assert!(!lists_several("so, well, what is in main.rs"));
}

#[test]
fn an_instance_named_by_its_number() {
    assert!(names_instance("status of task 42"));
    assert!(names_instance("read attempt 3 of the task"));
    assert!(names_instance("comment on #88 that the fix is in"));
    assert!(names_instance("read the second PR attempt"));
    assert!(!names_instance("show the last 5 commits"));
    assert!(!names_instance("list tasks from 2 days ago"));
    assert!(!names_instance("lines 50-80 of handlers.py"));
    assert!(!names_instance("first, run the tests"));
    assert!(!names_instance("tree of pkg/, 3 levels"));
    assert!(!names_instance("wait 5 minutes"));
    assert!(!names_instance("todo: 1) migrate db 2) update api"));
    assert!(!names_instance("list the attempts for task 9"));
}

#[test]
fn a_description_that_takes_one() {
    assert!(takes_one("Append one item to the task checklist"));
    assert!(takes_one("Read one automation and its recent runs (enqueued tasks)"));
    assert!(!takes_one("Apply a unified diff to one or more files"));
    assert!(!takes_one("Cancel a running sub-agent (and its children) or release a finished one"));
    assert!(!takes_one("Replace the task checklist (pending/in_progress/completed) to track multi-step work"));
}

fn doc(name: &str, description: &str) -> crate::SearchDoc {
    crate::SearchDoc { name: name.into(), description: description.into(), ..Default::default() }
}

/// The score of `a` over the score of `b` for `q`.
fn ratio(idx: &crate::SearchIndex, q: &str, a: &str, b: &str) -> f32 {
    let hits = idx.search(q, 10, &|_| true);
    let score = |n: &str| hits.iter().find(|h| idx.docs()[h.doc].name == n).map_or(0.0, |h| h.score);
    score(a) / score(b)
}

#[test]
fn several_items_pass_over_the_tool_that_takes_one() {
    let docs = vec![
        doc("checklist_add", "Append one item to the task checklist."),
        doc("checklist_write", "Replace the task checklist (pending/in_progress/completed) to track multi-step work."),
    ];
    let off =
        crate::SearchIndex::build_with(docs.clone(), crate::RankParams { one_penalty: 1.0, ..Default::default() });
    let on = crate::SearchIndex::build(docs);
    let q = "make a checklist: fix bug, add test, update docs";
    let (before, after) =
        (ratio(&off, q, "checklist_add", "checklist_write"), ratio(&on, q, "checklist_add", "checklist_write"));
    assert!((after / before - on.params().one_penalty).abs() < 1e-4, "{before} -> {after}");
    // one item: no change
    let q = "add rotate the secrets to the checklist";
    assert_eq!(ratio(&off, q, "checklist_add", "checklist_write"), ratio(&on, q, "checklist_add", "checklist_write"));
}

#[test]
fn one_instance_named_by_its_number_passes_over_the_listing() {
    let docs = vec![
        doc("task_list", "List durable background tasks (id, state, prompt, times), newest first."),
        doc("task_read", "Read a durable task: result, checklist, timeline, gate evidence."),
    ];
    let off =
        crate::SearchIndex::build_with(docs.clone(), crate::RankParams { list_penalty: 1.0, ..Default::default() });
    let on = crate::SearchIndex::build(docs);
    let q = "state of task 42";
    let (before, after) = (ratio(&off, q, "task_list", "task_read"), ratio(&on, q, "task_list", "task_read"));
    assert!((after / before - on.params().list_penalty).abs() < 1e-4, "{before} -> {after}");
    let q = "list the durable tasks";
    assert_eq!(ratio(&off, q, "task_list", "task_read"), ratio(&on, q, "task_list", "task_read"));
}
