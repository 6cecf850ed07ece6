use quiver_engine::Mode;
use serde_json::json;

use crate::test_support::Harness;

#[tokio::test]
async fn background_task_gives_id_and_wait_shows_output() {
    let h = Harness::new();
    let start =
        h.call("exec_shell", json!({"command": "echo first; sleep 0.3; echo second", "background": true})).await;
    assert!(!start.is_error, "{}", start.content_text());
    let id = start.metadata["job_id"].as_str().unwrap().to_string();
    assert_eq!(id, "job-1");
    assert_eq!(start.metadata["status"], "started");
    assert!(start.content_text().contains("exec_shell_wait"));

    let mut seen = String::new();
    let mut last = None;
    for _ in 0..20 {
        let r = h.call("exec_shell_wait", json!({"job_id": id, "timeout_ms": 2000})).await;
        assert!(!r.is_error, "{}", r.content_text());
        seen.push_str(&r.content_text());
        if r.metadata["status"] == "exited" {
            last = Some(r);
            break;
        }
    }
    let last = last.expect("the task exits");
    assert!(seen.contains("first\n") && seen.contains("second\n"), "{seen}");
    assert_eq!(seen.matches("first").count(), 1, "each poll returns only new output: {seen}");
    assert_eq!(last.metadata["exit_code"], 0);
    assert!(last.content_text().contains("job-1 exited with code 0"));

    // Nothing new after the end.
    let again = h.call("exec_shell_wait", json!({"job_id": id})).await;
    assert!(again.content_text().starts_with("(no new output)"), "{}", again.content_text());
    assert_eq!(again.metadata["new_bytes"], 0);
}

#[tokio::test]
async fn exec_wait_alias_is_byte_identical() {
    let h = Harness::with_mode(Mode::Yolo);
    let start = h.call("exec_shell", json!({"command": "echo hi; exit 4", "background": true})).await;
    let id = start.metadata["job_id"].clone();
    let first = h.call("exec_shell_wait", json!({"job_id": id})).await;
    assert!(first.content_text().starts_with("hi\n"), "{}", first.content_text());
    assert_eq!(first.metadata["exit_code"], 4);
    let canonical = h.call("exec_shell_wait", json!({"job_id": id})).await;
    // The old name with the old argument word, as recorded transcripts call it.
    let alias = h.call("exec_wait", json!({"task_id": id})).await;
    assert_eq!(serde_json::to_string(&alias).unwrap(), serde_json::to_string(&canonical).unwrap());
    assert!(alias.metadata.get("_deprecation").is_none());
}

/// Before one vocabulary a shell job was a `task_id`: recorded calls still
/// run, and a call naming the job both ways with two values is refused.
#[tokio::test]
async fn the_old_task_id_still_names_the_job() {
    let h = Harness::with_mode(Mode::Yolo);
    let start = h.call("exec_shell", json!({"command": "echo old", "background": true})).await;
    let id = start.metadata["job_id"].clone();
    // A recorded call names the job by its former id, `task-N`.
    let former_id = id.as_str().unwrap().replace("job-", "task-");
    let former = h.call("exec_shell_wait", json!({"job_id": former_id})).await;
    assert!(!former.is_error && former.metadata["job_id"] == id, "{}", former.content_text());
    let old = h.call("exec_shell_wait", json!({"task_id": id, "timeout_ms": 2000})).await;
    assert!(!old.is_error && old.metadata["job_id"] == id, "{old:?}");
    let both = h.call("exec_shell_wait", json!({"task_id": id, "job_id": id})).await;
    assert!(!both.is_error, "{both:?}");
    let clash = h.err("exec_shell_wait", json!({"task_id": "task-7", "job_id": id})).await;
    assert!(clash.contains("`task_id` is the former name of `job_id`") && clash.contains("task-7"), "{clash}");
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::new();
    let none = h.err("exec_shell_wait", json!({"job_id": "task-9"})).await;
    assert!(none.contains("unknown job_id `task-9`") && none.contains("no background jobs"), "{none}");
    // A durable task's id (what shell jobs were called before `job-N`) is named as such.
    assert!(none.contains("`task-N` is a durable task; shell jobs are `job-N`"), "{none}");
    h.ok("exec_shell", json!({"command": "true", "background": true})).await;
    // A foreground run never becomes a pollable task.
    h.ok("exec_shell", json!({"command": "true"})).await;
    let unknown = h.err("exec_shell_wait", json!({"job_id": "run-2"})).await;
    assert!(unknown.contains("`job-1`") && !unknown.contains("run-2`,"), "{unknown}");
    assert!(h.err("exec_shell_wait", json!({})).await.contains("job_id"));
    assert!(h.err("exec_shell_wait", json!({"job_id": 1})).await.contains("`job_id`"));
    assert!(h.err("exec_shell_wait", json!({"job_id": "task-1", "timeout_ms": 0})).await.contains("minimum of 1"));
    assert!(h.err("exec_shell_wait", json!({"job_id": "task-1", "timeout_ms": -5})).await.contains("timeout_ms"));
}
