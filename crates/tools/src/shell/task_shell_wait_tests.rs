use quiver_engine::Mode;
use serde_json::json;

use crate::shell::shell_jobs::ShellJobs;
use crate::test_support::Harness;

#[tokio::test]
async fn a_finished_task_records_a_gate() {
    let h = Harness::with_mode(Mode::Yolo);
    let start = h.call("task_shell_start", json!({"command": "echo building; sleep 0.2; echo ok"})).await;
    assert!(!start.is_error, "{}", start.content_text());
    let id = start.metadata["task_id"].as_str().unwrap().to_string();
    let r = h.call("task_shell_wait", json!({"task_id": id, "gate": {"name": "build"}, "timeout_ms": 10000})).await;
    let text = r.content_text();
    assert!(text.contains("building\nok\n"), "{text}");
    assert!(text.contains("Gate `build` recorded: passed"), "{text}");
    assert_eq!(r.metadata["gate"]["name"], "build");
    assert_eq!(r.metadata["gate"]["exit_code"], 0);
    assert_eq!(r.metadata["gate"]["command"], "echo building; sleep 0.2; echo ok");
    let log = r.metadata["gate"]["log_file"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(log).unwrap(), "building\nok\n");

    let failing = h.call("task_shell_start", json!({"command": "echo boom; exit 2"})).await;
    let id2 = failing.metadata["task_id"].as_str().unwrap();
    let r = h.call("task_shell_wait", json!({"task_id": id2, "gate": {"name": "tests"}})).await;
    assert_eq!(r.metadata["gate"]["passed"], false);
    let gates = h.ctx.session.state::<ShellJobs>().gates();
    assert_eq!(
        gates.iter().map(|g| (g.name.as_str(), g.exit_code)).collect::<Vec<_>>(),
        vec![("build", 0), ("tests", 2)]
    );
}

#[tokio::test]
async fn a_running_task_records_no_gate() {
    let h = Harness::new();
    let start = h.call("task_shell_start", json!({"command": "sleep 30"})).await;
    let id = start.metadata["task_id"].as_str().unwrap();
    let r = h.call("task_shell_wait", json!({"task_id": id, "gate": {"name": "slow"}, "timeout_ms": 200})).await;
    assert!(!r.is_error);
    assert!(r.content_text().contains("Gate `slow` not recorded"), "{}", r.content_text());
    assert!(r.metadata["gate"].is_null());
    assert!(h.ctx.session.state::<ShellJobs>().gates().is_empty());
    // exec_shell_wait polls the same tasks.
    let w = h.call("exec_shell_wait", json!({"task_id": id, "timeout_ms": 50})).await;
    assert_eq!(w.metadata["status"], "running");
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::new();
    assert!(h.err("task_shell_start", json!({})).await.contains("command"));
    assert!(h.err("task_shell_start", json!({"command": ""})).await.contains("empty"));
    assert!(h.err("task_shell_start", json!({"command": "ls", "cwd": "/"})).await.contains("outside the workspace"));
    assert!(h.err("task_shell_wait", json!({"task_id": "task-3"})).await.contains("unknown task_id"));
    let start = h.call("task_shell_start", json!({"command": "true"})).await;
    let id = start.metadata["task_id"].as_str().unwrap();
    assert!(h.err("task_shell_wait", json!({"task_id": id, "gate": {"name": " "}})).await.contains("gate.name"));
    assert!(h.err("task_shell_wait", json!({"task_id": id, "gate": {}})).await.contains("name"));
    assert!(h.err("task_shell_wait", json!({"task_id": id, "gate": "tests"})).await.contains("gate"));
}
