//! The checklist family, and its deprecated `todo_*` names.

use serde_json::json;

use crate::test_support::Harness;

#[tokio::test]
async fn write_add_update_list_round_trip() {
    let h = Harness::new();
    let written = h
        .ok(
            "checklist_write",
            json!({"items": [
                {"content": "read the code", "status": "completed"},
                {"content": "write the fix", "status": "in_progress"}
            ]}),
        )
        .await;
    assert_eq!(written, "Checklist (1/2 completed)\n[x] 1. read the code\n[~] 2. write the fix");
    h.ok("checklist_add", json!({"content": "run tests"})).await;
    h.ok("checklist_update", json!({"item_id": 2, "status": "completed"})).await;
    let listed = h.ok("checklist_list", json!({})).await;
    assert_eq!(listed, "Checklist (2/3 completed)\n[x] 1. read the code\n[x] 2. write the fix\n[ ] 3. run tests");
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::new();
    let bad_status = h.err("checklist_write", json!({"items": [{"content": "x", "status": "done"}]})).await;
    assert!(bad_status.contains("items.0.status"), "{bad_status}");
    let empty = h.err("checklist_write", json!({"items": [{"content": "  ", "status": "pending"}]})).await;
    assert!(empty.contains("items[0].content") && empty.contains("empty"), "{empty}");
    assert!(h.err("checklist_write", json!({"items": "x"})).await.contains("expected array"));
    assert!(
        h.err("checklist_update", json!({"item_id": 9, "status": "completed"})).await.contains("checklist is empty")
    );
    assert!(h.err("checklist_update", json!({"item_id": 1})).await.contains("nothing to update"));
    assert!(h.err("checklist_update", json!({"item_id": -1, "status": "completed"})).await.contains("`item_id`"));
    assert!(h.err("checklist_add", json!({"content": "x", "extra": 1})).await.contains("extra"));
}

#[tokio::test]
async fn planning_works_in_plan_mode() {
    let h = Harness::with_mode(quiver_engine::Mode::Plan);
    h.ok("checklist_write", json!({"items": [{"content": "plan", "status": "pending"}]})).await;
    h.ok("update_plan", json!({"plan": [{"step": "look", "status": "in_progress"}]})).await;
    h.ok("note", json!({"text": "remember this"})).await;
}

/// Every deprecated `todo_*` name gives exactly its canonical twin's content,
/// plus the `_deprecation` block; the canonical name carries no notice.
#[tokio::test]
async fn todo_aliases_replay_like_checklist_tools() {
    let calls = [
        ("todo_write", "checklist_write", json!({"items": [{"content": "a", "status": "pending"}]})),
        ("todo_add", "checklist_add", json!({"content": "b"})),
        ("todo_update", "checklist_update", json!({"item_id": 1, "status": "completed"})),
        ("todo_list", "checklist_list", json!({})),
    ];
    let (old, new) = (Harness::new(), Harness::new());
    for (alias, canonical, args) in calls {
        let a = old.call(alias, args.clone()).await;
        let c = new.call(canonical, args).await;
        assert!(!a.is_error, "{alias}: {}", a.content_text());
        assert_eq!(a.content, c.content, "{alias} differs from {canonical}");
        assert!(c.metadata.get("_deprecation").is_none());
        let mut without = a.metadata.clone();
        let notice = without.remove("_deprecation").expect("deprecated alias carries a notice");
        assert_eq!(without, c.metadata);
        assert_eq!(notice["this_tool"], alias);
        assert_eq!(notice["use_instead"], canonical);
        assert_eq!(notice["removed_in"], "TBD");
        assert_eq!(notice["message"], format!("Tool '{alias}' is deprecated; use '{canonical}' instead."));
    }
}

#[tokio::test]
async fn update_plan_and_note() {
    let h = Harness::new();
    let plan = h
        .ok(
            "update_plan",
            json!({"explanation": "two phases", "plan": [
            {"step": "survey", "status": "completed"}, {"step": "change", "status": "in_progress"}]}),
        )
        .await;
    assert_eq!(plan, "Plan updated (1/2 steps completed)\n[x] 1. survey\n[~] 2. change");
    let two = h
        .err(
            "update_plan",
            json!({"plan": [
            {"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]}),
        )
        .await;
    assert!(two.contains("at most one"), "{two}");
    assert!(h.err("update_plan", json!({"plan": []})).await.contains("at least one"));
    h.ok("note", json!({"text": "first"})).await;
    assert_eq!(h.ok("note", json!({})).await, "1 note(s)\n1. first");
}

#[tokio::test]
async fn a_deprecated_name_carries_its_notice_on_error_results_too() {
    let h = Harness::new();
    let r = h.call("todo_write", json!({"items": "x"})).await;
    assert!(r.is_error);
    assert_eq!(r.metadata["_deprecation"]["use_instead"], "checklist_write");
}
