use std::sync::Arc;

use super::*;
use crate::ManualClock;

fn store() -> (tempfile::TempDir, Store, Arc<ManualClock>) {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let store = Store::open_with_clock(dir.path(), clock.clone()).unwrap();
    (dir, store, clock)
}

fn new(prompt: &str) -> NewTask {
    NewTask { prompt: prompt.into(), ..Default::default() }
}

#[test]
fn a_task_runs_from_queued_to_succeeded_with_its_timeline() {
    let (_d, s, clock) = store();
    let t = s.create_task(&NewTask { checklist: vec!["read".into(), "fix".into()], ..new("fix the bug") }).unwrap();
    assert_eq!((t.id.as_str(), t.state), ("task-1", TaskState::Queued));
    let claimed = s.claim_next("w1", 30_000).unwrap().unwrap();
    assert_eq!(claimed.state, TaskState::Running);
    clock.advance_ms(5);
    s.append_task_event(&t.id, "tool_call", &serde_json::json!({"name": "read_file"})).unwrap();
    s.finish_task(&t.id, "w1", TaskState::Succeeded, Some("done"), None).unwrap();
    let view = s.read_task("task-1").unwrap();
    assert_eq!(view.task.state, TaskState::Succeeded);
    assert_eq!(view.task.result.as_deref(), Some("done"));
    let kinds: Vec<&str> = view.timeline.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["state", "state", "tool_call", "state"]);
    assert_eq!(view.checklist.len(), 2);
    assert_eq!(view.checklist[0].status, "pending");
}

#[test]
fn claims_are_oldest_first_and_exclusive() {
    let (_d, s, _c) = store();
    s.create_task(&new("a")).unwrap();
    s.create_task(&new("b")).unwrap();
    assert_eq!(s.claim_next("w1", 1000).unwrap().unwrap().prompt, "a");
    assert_eq!(s.claim_next("w2", 1000).unwrap().unwrap().prompt, "b");
    assert!(s.claim_next("w3", 1000).unwrap().is_none());
}

#[test]
fn a_lapsed_lease_becomes_interrupted_and_the_late_worker_cannot_overwrite_it() {
    let (_d, s, clock) = store();
    let t = s.create_task(&new("long")).unwrap();
    s.claim_next("dead", 1000).unwrap();
    clock.advance_ms(500);
    assert!(s.recover_interrupted().unwrap().is_empty(), "lease still valid");
    assert_eq!(s.renew_lease("dead", 1000).unwrap(), 1);
    clock.advance_ms(1500);
    assert_eq!(s.recover_interrupted().unwrap(), vec!["task-1".to_string()]);
    assert_eq!(s.task(&t.id).unwrap().state, TaskState::Interrupted);
    let err = s.finish_task(&t.id, "dead", TaskState::Succeeded, Some("late"), None).unwrap_err();
    assert!(err.to_string().contains("already decided"), "{err}");
    assert_eq!(s.task(&t.id).unwrap().result, None);
}

#[test]
fn cancel_stops_a_queued_task_asks_a_running_one_and_refuses_a_finished_one() {
    let (_d, s, _c) = store();
    let q = s.create_task(&new("queued")).unwrap();
    assert_eq!(s.cancel_task(&q.id).unwrap().state, TaskState::Cancelled);
    let r = s.create_task(&new("running")).unwrap();
    s.claim_next("w", 1000).unwrap();
    let asked = s.cancel_task(&r.id).unwrap();
    assert_eq!((asked.state, asked.cancel_requested), (TaskState::Running, true));
    s.finish_task(&r.id, "w", TaskState::Cancelled, None, Some("cancelled by request")).unwrap();
    let err = s.cancel_task(&r.id).unwrap_err().to_string();
    assert!(err.contains("already ended (cancelled)"), "{err}");
}

#[test]
fn filters_ids_and_bad_input_give_precise_errors() {
    let (_d, s, _c) = store();
    s.create_task(&new("a")).unwrap();
    s.create_task(&new("b")).unwrap();
    s.claim_next("w", 1000).unwrap();
    let running = s.list_tasks(&TaskFilter { states: vec![TaskState::Running], limit: None }).unwrap();
    assert_eq!(running.len(), 1);
    assert_eq!(s.list_tasks(&TaskFilter { states: vec![], limit: Some(1) }).unwrap()[0].prompt, "b");
    assert_eq!(s.task("2").unwrap().prompt, "b");
    assert!(s.task("task-x").unwrap_err().to_string().contains("not a task id"));
    assert!(s.task("task-99").unwrap_err().to_string().contains("no task with id 'task-99'"));
    assert!(s.create_task(&new("  ")).unwrap_err().to_string().contains("non-empty prompt"));
    assert!(TaskState::parse("done").unwrap_err().to_string().contains("queued, running"));
    assert!(s.finish_task("task-1", "w", TaskState::Running, None, None).is_err());
}

#[test]
fn the_checklist_belongs_to_the_task() {
    let (_d, s, _c) = store();
    let t = s.create_task(&new("a")).unwrap();
    let items = vec![ChecklistItem { idx: 1, text: "write test".into(), status: "done".into() }];
    s.set_checklist(&t.id, &items).unwrap();
    let view = s.read_task(&t.id).unwrap();
    assert_eq!(view.checklist, items);
    assert_eq!(view.timeline.last().unwrap().kind, "checklist");
}

#[test]
fn strum_names_are_the_serde_names() {
    use strum::VariantArray;
    quiver_testkit::assert_strum_matches_serde::<TaskState>();
    quiver_testkit::assert_strum_matches_serde::<crate::evidence::GateClass>();
    assert_eq!(TaskState::ALL.as_slice(), TaskState::VARIANTS, "ALL lists every state");
    for state in TaskState::ALL {
        assert_eq!(TaskState::parse(state.as_str()).unwrap(), state);
    }
}
