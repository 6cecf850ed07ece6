use quiver_engine::Mode;
use serde_json::json;

use crate::shell::shell_jobs::ShellJobs;
use crate::test_support::Harness;

#[tokio::test]
async fn a_finished_task_records_a_gate() {
    let h = Harness::with_mode(Mode::Yolo);
    let start = h.call("task_shell_start", json!({"command": "echo building; sleep 0.2; echo ok"})).await;
    assert!(!start.is_error, "{}", start.content_text());
    let id = start.metadata["job_id"].as_str().unwrap().to_string();
    let r = h.call("task_shell_wait", json!({"job_id": id, "gate": {"name": "build"}, "timeout_ms": 10000})).await;
    let text = r.content_text();
    assert!(text.contains("building\nok\n"), "{text}");
    assert!(text.contains("Gate `build` recorded: passed"), "{text}");
    assert_eq!(r.metadata["gate"]["name"], "build");
    assert_eq!(r.metadata["gate"]["exit_code"], 0);
    assert_eq!(r.metadata["gate"]["command"], "echo building; sleep 0.2; echo ok");
    let log = r.metadata["gate"]["log_file"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(log).unwrap(), "building\nok\n");

    let failing = h.call("task_shell_start", json!({"command": "echo boom; exit 2"})).await;
    let id2 = failing.metadata["job_id"].as_str().unwrap();
    let r = h.call("task_shell_wait", json!({"job_id": id2, "gate": {"name": "tests"}})).await;
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
    let id = start.metadata["job_id"].as_str().unwrap();
    let r = h.call("task_shell_wait", json!({"job_id": id, "gate": {"name": "slow"}, "timeout_ms": 200})).await;
    assert!(!r.is_error);
    assert!(r.content_text().contains("Gate `slow` not recorded"), "{}", r.content_text());
    assert!(r.metadata["gate"].is_null());
    assert!(h.ctx.session.state::<ShellJobs>().gates().is_empty());
    // exec_shell_wait polls the same tasks.
    let w = h.call("exec_shell_wait", json!({"job_id": id, "timeout_ms": 50})).await;
    assert_eq!(w.metadata["status"], "running");
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::new();
    assert!(h.err("task_shell_start", json!({})).await.contains("command"));
    assert!(h.err("task_shell_start", json!({"command": ""})).await.contains("empty"));
    assert!(h.err("task_shell_start", json!({"command": "ls", "cwd": "/"})).await.contains("outside the workspace"));
    assert!(h.err("task_shell_wait", json!({"job_id": "task-3"})).await.contains("unknown job_id"));
    let start = h.call("task_shell_start", json!({"command": "true"})).await;
    let id = start.metadata["job_id"].as_str().unwrap();
    assert!(h.err("task_shell_wait", json!({"job_id": id, "gate": {"name": " "}})).await.contains("gate.name"));
    assert!(h.err("task_shell_wait", json!({"job_id": id, "gate": {}})).await.contains("name"));
    assert!(h.err("task_shell_wait", json!({"job_id": id, "gate": "tests"})).await.contains("gate"));
}

/// A gate on a background command lands on the durable task with the evidence
/// `task_gate_run` keeps: classification, summary and the log as an artifact
/// readable through its handle.
#[tokio::test]
async fn a_gate_lands_on_the_durable_task_with_its_log() {
    use std::sync::Arc;

    use quiver_engine::{Audience, Engine, Manifest, Registry, Workspace};

    use crate::work::{WorkStore, task_create::TaskCreate, task_read::TaskRead};

    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let work = WorkStore::new(Some(state.path().to_path_buf()));
    let mut registry = Registry::new();
    registry.register(crate::shell::task_shell_start::TaskShellStart).unwrap();
    registry.register(super::TaskShellWait(work.clone())).unwrap();
    registry.register(TaskCreate(work.clone())).unwrap();
    registry.register(TaskRead(work.clone())).unwrap();
    registry.register(crate::evidence::retrieve_tool_result::RetrieveToolResult).unwrap();
    let engine = Arc::new(Engine::new(registry, Manifest::builtin().unwrap()));
    let ctx = engine.context(Workspace::new(ws.path()).unwrap(), Audience { mode: Mode::Yolo, ..Audience::default() });

    let created = ctx.call("task_create", json!({"prompt": "make the tests pass"})).await.unwrap();
    assert_eq!(created.metadata["task_id"], "task-1", "{}", created.content_text());
    let start = ctx
        .call(
            "task_shell_start",
            json!({"command": "echo 'running 3 tests'; echo 'test result: FAILED. 2 passed; 1 failed'; exit 101"}),
        )
        .await
        .unwrap();
    let job = start.metadata["job_id"].as_str().unwrap().to_string();

    // A task id that does not exist is refused before anything is waited for
    // (asked in the words before one vocabulary: `task_id` the job, `task` the task).
    let wrong = ctx
        .call("task_shell_wait", json!({"task_id": job, "gate": {"name": "tests"}, "task": "task-9"}))
        .await
        .unwrap();
    assert!(wrong.is_error && wrong.content_text().contains("task-9"), "{}", wrong.content_text());

    let r = ctx
        .call(
            "task_shell_wait",
            json!({"job_id": job, "gate": {"name": "tests"}, "task_id": "task-1", "timeout_ms": 30000}),
        )
        .await
        .unwrap();
    assert!(!r.is_error, "{}", r.content_text());
    let durable = &r.metadata["task_gate"];
    assert_eq!(durable["task_id"], "task-1", "{durable}");
    assert_eq!(durable["classification"], "failed", "{durable}");
    assert!(r.content_text().contains("On task-1: gate-1 failed"), "{}", r.content_text());

    // The log is an artifact, read back through its handle.
    let handle = durable["log"]["handle"].as_str().unwrap();
    let log = ctx.call("retrieve_tool_result", json!({"handle": handle, "mode": "head"})).await.unwrap();
    assert!(log.content_text().contains("1 failed"), "{}", log.content_text());

    // task_read shows the gate with its evidence.
    let read = ctx.call("task_read", json!({"task_id": "task-1"})).await.unwrap();
    let view: serde_json::Value = serde_json::from_str(&read.content_text()).unwrap();
    assert_eq!(view["gates"][0]["name"], "tests", "{view}");
    assert_eq!(view["gates"][0]["exit_code"], 101, "{view}");
    assert_eq!(view["gates"][0]["classification"], "failed", "{view}");

    // Without a task (none active, none named) the gate stays in the session only.
    let again = ctx.call("task_shell_start", json!({"command": "true"})).await.unwrap();
    let job2 = again.metadata["job_id"].as_str().unwrap();
    let r = ctx.call("task_shell_wait", json!({"job_id": job2, "gate": {"name": "quick"}})).await.unwrap();
    assert!(r.metadata.get("task_gate").is_none(), "{:?}", r.metadata);
    assert_eq!(r.metadata["gate"]["name"], "quick");
}
