use super::*;
use crate::NewTask;

fn store_with_task() -> (tempfile::TempDir, Store, String) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path()).unwrap();
    let t = s.create_task(&NewTask { prompt: "p".into(), ..Default::default() }).unwrap();
    (dir, s, t.id)
}

fn gate(task: &str, code: Option<i32>, log: &str) -> NewGate {
    NewGate {
        task: Some(task.into()),
        name: "tests".into(),
        command: "cargo test".into(),
        cwd: "/w".into(),
        exit_code: code,
        duration_ms: 1200,
        log: log.as_bytes().to_vec(),
        tree: Some("tree-a".into()),
        ..Default::default()
    }
}

#[test]
fn classification_reads_the_exit_and_the_log() {
    assert_eq!(classify(Some(0), false, "", None), GateClass::Passed);
    assert_eq!(classify(Some(101), false, "test foo ... FAILED", None), GateClass::Failed);
    assert_eq!(classify(Some(127), false, "", None), GateClass::Infra);
    assert_eq!(classify(None, false, "", None), GateClass::Infra);
    assert_eq!(classify(Some(0), true, "", None), GateClass::Infra);
    assert_eq!(classify(Some(1), false, "error: failed to download from crates.io", None), GateClass::Infra);
    assert_eq!(classify(Some(0), false, "", Some(GateClass::Failed)), GateClass::Flaky);
    assert_eq!(classify(Some(0), false, "", Some(GateClass::Passed)), GateClass::Passed);
}

#[test]
fn a_failing_gate_keeps_its_log_as_an_artifact_and_lands_on_the_timeline() {
    let (_d, s, task) = store_with_task();
    let log: String =
        (0..5000).map(|i| format!("line {i}\n")).collect::<String>() + "test result: FAILED. 3 passed; 1 failed\n";
    let g = s.record_gate(&gate(&task, Some(101), &log)).unwrap();
    assert_eq!(g.classification, GateClass::Failed);
    assert!(g.summary.starts_with("failed (exit 101, 1200 ms)"), "{}", g.summary);
    assert!(g.summary.contains("1 failed"), "{}", g.summary);
    let art = g.log_artifact.clone().unwrap();
    assert_eq!(s.artifact_bytes(&art).unwrap(), log.as_bytes());
    let view = s.read_task(&task).unwrap();
    assert!(view.timeline.iter().any(|e| e.kind == "gate" && e.data["classification"] == "failed"));
    assert!(view.timeline.iter().any(|e| e.kind == "artifact"));
    assert_eq!(s.gates_of(&task).unwrap(), vec![g]);
}

#[test]
fn the_same_command_on_the_same_tree_flipping_is_flaky_but_a_changed_tree_is_not() {
    let (_d, s, task) = store_with_task();
    s.record_gate(&gate(&task, Some(1), "FAILED")).unwrap();
    assert_eq!(s.record_gate(&gate(&task, Some(0), "ok")).unwrap().classification, GateClass::Flaky);
    let mut fixed = gate(&task, Some(0), "ok");
    fixed.tree = Some("tree-b".into());
    assert_eq!(s.record_gate(&fixed).unwrap().classification, GateClass::Passed);
}

#[test]
fn a_tampered_artifact_is_reported_not_returned() {
    let (_d, s, task) = store_with_task();
    let g = s.record_gate(&gate(&task, Some(0), "all good")).unwrap();
    let art = s.artifact(g.log_artifact.as_deref().unwrap()).unwrap();
    std::fs::write(&art.path, "changed").unwrap();
    let err = s.artifact_bytes(&art.id).unwrap_err().to_string();
    assert!(err.contains("does not match its recorded sha256"), "{err}");
}

#[test]
fn attempts_and_audit_records_are_kept_on_the_task() {
    let (_d, s, task) = store_with_task();
    let a = s
        .record_attempt(&NewPrAttempt {
            task: Some(task.clone()),
            base_commit: "abc123".into(),
            files: vec!["src/lib.rs".into()],
            additions: 3,
            deletions: 1,
            patch: b"--- a/src/lib.rs\n+++ b/src/lib.rs\n".to_vec(),
            note: None,
        })
        .unwrap();
    assert_eq!(a.id, "pr-1");
    assert_eq!(s.attempt("pr-1").unwrap().files, vec!["src/lib.rs".to_string()]);
    assert_eq!(s.attempts_of(&task).unwrap().len(), 1);
    assert!(s.record_attempt(&NewPrAttempt { base_commit: "x".into(), ..Default::default() }).is_err());
    s.record_audit(Some(&task), "github_comment", &serde_json::json!({"issue": 7})).unwrap();
    assert_eq!(s.audit_of(&task).unwrap()[0].detail["issue"], 7);
    assert!(s.record_audit(Some("task-99"), "x", &serde_json::json!({})).is_err());
}
