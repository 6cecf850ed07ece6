use std::path::Path;
use std::sync::Arc;

use quiver_engine::{Audience, Engine, Manifest, Mode, Registry, ToolContext, ToolResult, Workspace};
use serde_json::{Value, json};

use super::*;

struct Setup {
    ws: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        Setup { ws: tempfile::tempdir().unwrap(), state: tempfile::tempdir().unwrap() }
    }

    fn ctx(&self, mode: Mode) -> ToolContext {
        let work = WorkStore::new(Some(self.state.path().to_path_buf()));
        let mut registry = Registry::new();
        registry.register(task_create::TaskCreate(work.clone())).unwrap();
        registry.register(task_list::TaskList(work.clone())).unwrap();
        registry.register(task_read::TaskRead(work.clone())).unwrap();
        registry.register(task_cancel::TaskCancel(work.clone())).unwrap();
        registry.register(task_gate_run::TaskGateRun(work.clone())).unwrap();
        registry.register(pr_attempt_record::PrAttemptRecord(work.clone())).unwrap();
        registry.register(pr_attempt_list::PrAttemptList(work.clone())).unwrap();
        registry.register(pr_attempt_read::PrAttemptRead(work.clone())).unwrap();
        registry.register(pr_attempt_preflight::PrAttemptPreflight(work.clone())).unwrap();
        registry.register(automation_create::AutomationCreate(work.clone())).unwrap();
        registry.register(automation_list::AutomationList(work.clone())).unwrap();
        registry.register(automation_read::AutomationRead(work.clone())).unwrap();
        registry.register(automation_update::AutomationUpdate(work.clone())).unwrap();
        registry.register(automation_pause::AutomationPause(work.clone())).unwrap();
        registry.register(automation_resume::AutomationResume(work.clone())).unwrap();
        registry.register(automation_delete::AutomationDelete(work.clone())).unwrap();
        registry.register(automation_run::AutomationRun(work)).unwrap();
        registry.register(crate::evidence::retrieve_tool_result::RetrieveToolResult).unwrap();
        let engine = Arc::new(Engine::new(registry, Manifest::builtin().unwrap()));
        engine.context(Workspace::new(self.ws.path()).unwrap(), Audience { mode, ..Audience::default() })
    }

    fn store(&self) -> quiver_durable::Store {
        quiver_durable::Store::open(self.state.path()).unwrap()
    }
}

async fn call(ctx: &ToolContext, name: &str, args: Value) -> ToolResult {
    ctx.call(name, args).await.unwrap()
}

fn json_of(r: &ToolResult) -> Value {
    assert!(!r.is_error, "{}", r.content_text());
    serde_json::from_str(&r.content_text()).unwrap()
}

#[tokio::test]
async fn create_list_and_read_a_task() {
    let s = Setup::new();
    std::fs::create_dir(s.ws.path().join("sub")).unwrap();
    let ctx = s.ctx(Mode::Agent);
    let r = call(
        &ctx,
        "task_create",
        json!({"prompt": "fix the flaky test", "cwd": "sub", "checklist": ["reproduce", "fix"]}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content_text());
    assert_eq!(r.metadata["task_id"], "task-1");
    let list = json_of(&call(&ctx, "task_list", json!({"state": ["queued"]})).await);
    assert_eq!(list["count"], 1);
    assert_eq!(list["tasks"][0]["prompt"], "fix the flaky test");
    let read = json_of(&call(&ctx, "task_read", json!({"task_id": "task-1"})).await);
    assert_eq!(read["task"]["state"], "queued");
    assert_eq!(read["task"]["mode"], "agent");
    let cwd = read["task"]["cwd"].as_str().unwrap();
    assert!(Path::new(cwd).ends_with("sub"), "{cwd}");
    assert_eq!(read["checklist"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_task_never_gets_a_looser_mode_or_a_path_outside_the_workspace() {
    let s = Setup::new();
    let ctx = s.ctx(Mode::Agent);
    let r = call(&ctx, "task_create", json!({"prompt": "x", "mode": "yolo"})).await;
    assert!(r.is_error && r.content_text().contains("looser mode"), "{}", r.content_text());
    let r = call(&ctx, "task_create", json!({"prompt": "x", "cwd": "../.."})).await;
    assert!(r.is_error, "{}", r.content_text());
    let r = call(&ctx, "task_create", json!({"prompt": "x", "mode": "sideways"})).await;
    assert!(r.is_error && r.content_text().contains("unknown mode"), "{}", r.content_text());
    let plan = s.ctx(Mode::Plan);
    let r = call(&plan, "task_create", json!({"prompt": "x"})).await;
    assert!(r.is_error && r.content_text().contains("plan mode"), "{}", r.content_text());
    assert!(s.store().list_tasks(&Default::default()).unwrap().is_empty(), "nothing was queued");
}

#[tokio::test]
async fn cancel_needs_approval_in_agent_mode() {
    let s = Setup::new();
    let agent = s.ctx(Mode::Agent);
    call(&agent, "task_create", json!({"prompt": "x"})).await;
    let r = call(&agent, "task_cancel", json!({"task_id": "task-1"})).await;
    assert!(r.is_error && r.content_text().contains("needs approval"), "{}", r.content_text());
    assert_eq!(s.store().task("task-1").unwrap().state, quiver_durable::TaskState::Queued);
    let yolo = s.ctx(Mode::Yolo);
    let r = call(&yolo, "task_cancel", json!({"task_id": "task-1"})).await;
    assert_eq!(r.metadata["state"], "cancelled", "{}", r.content_text());
    let again = call(&yolo, "task_cancel", json!({"task_id": "task-1"})).await;
    assert!(again.is_error && again.content_text().contains("already ended"), "{}", again.content_text());
    let missing = call(&yolo, "task_cancel", json!({"task_id": "task-42"})).await;
    assert!(missing.is_error && missing.content_text().contains("no task with id 'task-42'"));
}

#[tokio::test]
async fn a_failing_gate_is_classified_with_its_log_readable_by_handle() {
    let s = Setup::new();
    let ctx = s.ctx(Mode::Yolo);
    call(&ctx, "task_create", json!({"prompt": "x"})).await;
    let r = call(&ctx, "task_gate_run", json!({
        "command": "for i in $(seq 1 3000); do echo line $i; done; echo 'test result: FAILED. 1 failed' >&2; exit 3",
        "name": "unit tests", "task_id": "task-1",
    }))
    .await;
    let gate = json_of(&r);
    assert_eq!(gate["classification"], "failed");
    assert_eq!(gate["exit_code"], 3);
    assert!(gate["summary"].as_str().unwrap().contains("1 failed"), "{gate}");
    let handle = gate["log"]["handle"].as_str().unwrap().to_string();
    let tail = call(&ctx, "retrieve_tool_result", json!({"handle": handle, "mode": "tail", "n": 2})).await;
    assert!(tail.content_text().contains("FAILED"), "{}", tail.content_text());
    let read = json_of(&call(&ctx, "task_read", json!({"task_id": "task-1"})).await);
    assert_eq!(read["gates"][0]["classification"], "failed");
    assert_eq!(read["gates"][0]["name"], "unit tests");
    let log = s.store().artifact_bytes(gate["log"]["artifact"].as_str().unwrap()).unwrap();
    assert!(String::from_utf8_lossy(&log).contains("line 3000"));
}

#[tokio::test]
async fn passing_and_timed_out_gates_and_refusals() {
    let s = Setup::new();
    let yolo = s.ctx(Mode::Yolo);
    let ok = json_of(&call(&yolo, "task_gate_run", json!({"command": "echo fine"})).await);
    assert_eq!(ok["classification"], "passed");
    assert!(ok["note"].as_str().unwrap().contains("no active task"));
    let slow = json_of(&call(&yolo, "task_gate_run", json!({"command": "sleep 20", "timeout_ms": 300})).await);
    assert_eq!((slow["classification"].as_str(), slow["timed_out"].as_bool()), (Some("infra"), Some(true)));
    assert!(slow["duration_ms"].as_u64().unwrap() < 10_000);
    let bad_task = call(&yolo, "task_gate_run", json!({"command": "echo x", "task_id": "task-9"})).await;
    assert!(bad_task.is_error && bad_task.content_text().contains("task-9"));
    // Agent mode, nobody to ask: a command no trusted rule covers runs inside
    // the sandbox (a task builds and tests unattended); with no sandbox it is refused.
    let agent = s.ctx(Mode::Agent);
    let r = call(&agent, "task_gate_run", json!({"command": "touch made-by-gate"})).await;
    if crate::process::sandbox_available() {
        assert!(!r.is_error, "{}", r.content_text());
        assert!(s.ws.path().join("made-by-gate").exists());
    } else {
        assert!(r.is_error, "{}", r.content_text());
        assert!(!s.ws.path().join("made-by-gate").exists());
    }
}

#[tokio::test]
async fn automation_writes_ask_first_and_bad_schedules_fail_before_asking() {
    let s = Setup::new();
    let agent = s.ctx(Mode::Agent);
    let args =
        json!({"name": "nightly", "prompt": "triage issues", "schedule": "0 3 * * *", "timezone": "Europe/Berlin"});
    let r = call(&agent, "automation_create", args.clone()).await;
    assert!(r.is_error && r.content_text().contains("needs approval"), "{}", r.content_text());
    assert!(
        r.content_text().contains("'0 3 * * *' (Europe/Berlin)"),
        "the question shows the schedule: {}",
        r.content_text()
    );
    let bad = call(&agent, "automation_create", json!({"name": "x", "prompt": "p", "schedule": "nightly"})).await;
    assert!(bad.is_error && bad.content_text().contains("invalid schedule"), "{}", bad.content_text());
    assert!(s.store().list_automations().unwrap().is_empty());

    let yolo = s.ctx(Mode::Yolo);
    let created = json_of(&call(&yolo, "automation_create", args).await);
    assert_eq!(created["automation"]["tz"], "Europe/Berlin");
    assert_eq!(json_of(&call(&yolo, "automation_list", json!({})).await)["count"], 1);
    let paused = json_of(&call(&yolo, "automation_pause", json!({"automation_id": "nightly"})).await);
    assert_eq!(paused["paused"]["state"], "paused");
    let resumed = json_of(&call(&yolo, "automation_resume", json!({"automation_id": "auto-1"})).await);
    assert_eq!(resumed["resumed"]["state"], "active");
    let updated =
        json_of(&call(&yolo, "automation_update", json!({"automation_id": "nightly", "schedule": "@hourly"})).await);
    assert_eq!(updated["automation"]["schedule"], "@hourly");
    let ran = json_of(&call(&yolo, "automation_run", json!({"automation_id": "nightly"})).await);
    assert_eq!((ran["automation_id"].as_str(), ran["task_id"].as_str()), (Some("auto-1"), Some("task-1")));
    let read = json_of(&call(&yolo, "automation_read", json!({"automation_id": "nightly"})).await);
    assert_eq!(read["recent_runs"][0]["outcome"], "manual");
    assert!(call(&agent, "automation_delete", json!({"automation_id": "nightly"})).await.is_error, "delete asks too");
    json_of(&call(&yolo, "automation_delete", json!({"automation_id": "nightly"})).await);
    let gone = call(&yolo, "automation_read", json!({"automation_id": "nightly"})).await;
    assert!(gone.is_error && gone.content_text().contains("no automation"), "{}", gone.content_text());
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test]
async fn pr_attempts_capture_untracked_files_and_preflight_names_the_conflict() {
    if quiver_testkit::program_or_skip("git", "apt-get install git").is_none() {
        return;
    }
    let s = Setup::new();
    let ws = s.ws.path();
    git(ws, &["init", "-q"]);
    std::fs::write(ws.join("lib.rs"), "fn a() {}\nfn b() {}\nfn c() {}\n").unwrap();
    git(ws, &["add", "."]);
    git(ws, &["commit", "-qm", "base"]);
    std::fs::write(ws.join("lib.rs"), "fn a() {}\nfn b() { todo() }\nfn c() {}\n").unwrap();
    std::fs::write(ws.join("new.rs"), "fn new() {}\n").unwrap();
    let index_before = std::fs::read(ws.join(".git/index")).unwrap();

    let ctx = s.ctx(Mode::Agent);
    call(&ctx, "task_create", json!({"prompt": "x"})).await;
    let rec = json_of(&call(&ctx, "pr_attempt_record", json!({"task_id": "task-1", "note": "first try"})).await);
    let attempt = &rec["attempt"];
    assert_eq!(attempt["files"], json!(["lib.rs", "new.rs"]), "{rec}");
    assert_eq!((attempt["additions"].as_u64(), attempt["deletions"].as_u64()), (Some(2), Some(1)));
    assert_eq!(std::fs::read(ws.join(".git/index")).unwrap(), index_before, "the user's index is untouched");
    let listed = json_of(&call(&ctx, "pr_attempt_list", json!({"task_id": "task-1"})).await);
    assert_eq!(listed["count"], 1);
    let read = json_of(&call(&ctx, "pr_attempt_read", json!({"attempt_id": "pr-1"})).await);
    assert!(read["patch"].as_str().unwrap().contains("+fn new() {}"), "{read}");

    let ok = json_of(&call(&ctx, "pr_attempt_preflight", json!({"attempt_id": "pr-1"})).await);
    assert_eq!(ok["applies"], true, "{ok}");
    // Upstream moves on and changes the same line: the attempt no longer applies.
    git(ws, &["stash", "-u", "-q"]);
    std::fs::write(ws.join("lib.rs"), "fn a() {}\nfn b() { other() }\nfn c() {}\n").unwrap();
    git(ws, &["commit", "-qam", "upstream"]);
    let work_tree_before = std::fs::read(ws.join("lib.rs")).unwrap();
    let bad = json_of(&call(&ctx, "pr_attempt_preflight", json!({"attempt_id": "pr-1"})).await);
    assert_eq!(bad["applies"], false, "{bad}");
    assert!(bad["errors"].to_string().contains("lib.rs"), "{bad}");
    assert!(bad["conflicting_hunks"][0].as_str().unwrap().contains("+fn b() { todo() }"), "{bad}");
    assert_eq!(std::fs::read(ws.join("lib.rs")).unwrap(), work_tree_before, "preflight never touches the work tree");
    let against_base =
        json_of(&call(&ctx, "pr_attempt_preflight", json!({"attempt_id": "pr-1", "onto": "HEAD~1"})).await);
    assert_eq!(against_base["applies"], true, "{against_base}");
    let hostile = call(&ctx, "pr_attempt_preflight", json!({"attempt_id": "pr-1", "onto": "--output=/tmp/x"})).await;
    assert!(hostile.is_error, "{}", hostile.content_text());
}

#[tokio::test]
async fn every_artifact_task_read_lists_is_readable_by_handle_in_any_session() {
    let s = Setup::new();
    let ctx = s.ctx(Mode::Yolo);
    call(&ctx, "task_create", json!({"prompt": "x"})).await;
    let gate = json_of(
        &call(
            &ctx,
            "task_gate_run",
            json!({"command": "echo first; echo 'LAST LINE' >&2; exit 1", "task_id": "task-1"}),
        )
        .await,
    );
    // A body kept by another tool, with no trailing newline.
    s.store().put_artifact(Some("task-1"), "body", "issue body", b"line one\nline two\nthe end").unwrap();

    // The same session reuses the handle the gate gave; nothing is adopted twice.
    let read = json_of(&call(&ctx, "task_read", json!({"task_id": "task-1"})).await);
    let arts = read["artifacts"].as_array().unwrap();
    assert_eq!(arts.len(), 2, "{read}");
    assert_eq!(arts[0]["handle"], gate["log"]["handle"]);
    let again = json_of(&call(&ctx, "task_read", json!({"task_id": "task-1"})).await);
    assert_eq!(again["artifacts"], read["artifacts"], "stable handles across reads");

    // A fresh session (another process, a later day) gets handles of its own.
    let later = s.ctx(Mode::Agent);
    let read = json_of(&call(&later, "task_read", json!({"task_id": "task-1"})).await);
    let log = read["artifacts"][0]["handle"].as_str().unwrap().to_string();
    let tail = call(&later, "retrieve_tool_result", json!({"handle": log, "mode": "tail", "n": 1})).await;
    assert!(tail.content_text().contains("LAST LINE"), "{}", tail.content_text());
    let body = read["artifacts"][1]["handle"].as_str().unwrap().to_string();
    let lines =
        call(&later, "retrieve_tool_result", json!({"handle": body, "mode": "lines", "start": 3, "end": 3})).await;
    assert!(lines.content_text().contains("the end"), "{}", lines.content_text());
    assert_eq!(lines.metadata["total_lines"], 3);
    assert_eq!(read["audit"], json!([]));
}
