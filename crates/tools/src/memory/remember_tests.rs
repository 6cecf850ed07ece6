use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use quiver_engine::{Audience, Engine, Manifest, Mode, Registry, ToolContext, Workspace};
use serde_json::json;

use super::{Remember, memory_file};
use crate::test_support::Harness;

/// A context whose `remember` writes to `file` (the default one would write to the
/// real user's memory file).
fn ctx_with_memory(file: &Path, workspace: &Path, mode: Mode) -> ToolContext {
    let mut registry = Registry::new();
    registry.register(Remember::at(file)).unwrap();
    let engine = Arc::new(Engine::new(registry, Manifest::builtin().unwrap()));
    engine.context(Workspace::new(workspace).unwrap(), Audience { mode, ..Audience::default() })
}

#[tokio::test]
async fn appends_timestamped_entries_without_approval_and_never_in_plan_mode() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let file = home.path().join("nested/dir/memory.md");
    // Persisting a note outside the workspace is a write: plan mode refuses it.
    let plan = ctx_with_memory(&file, ws.path(), Mode::Plan);
    let refused = plan.call("remember", json!({"text": "x"})).await.unwrap();
    assert!(refused.is_error && refused.content_text().contains("plan mode"), "{}", refused.content_text());
    assert!(!file.exists());
    for mode in [Mode::Agent, Mode::Yolo] {
        let ctx = ctx_with_memory(&file, ws.path(), mode);
        let result = ctx
            .call("remember", json!({"text": "  The build uses nextest.  ", "tags": ["#build", "ci", "build"]}))
            .await
            .unwrap();
        assert!(!result.is_error, "{mode}: {}", result.content_text());
        assert_eq!(result.metadata["tags"], json!(["build", "ci"]));
        assert_eq!(result.metadata["path"], file.display().to_string());
    }
    let ctx = ctx_with_memory(&file, ws.path(), Mode::Agent);
    let result = ctx.call("remember", json!({"text": "line one\nline two"})).await.unwrap();
    assert!(result.content_text().contains("memory.md"));

    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    for line in &lines[..2] {
        let (stamp, rest) = line.strip_prefix("- ").unwrap().split_once(' ').unwrap();
        assert!(humantime::parse_rfc3339(stamp).is_ok(), "{stamp}");
        assert_eq!(rest, "[build, ci] The build uses nextest.");
    }
    assert!(lines[2].ends_with("Z line one"), "{}", lines[2]);
    assert_eq!(lines[3], "  line two");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    // Nothing lands in the workspace.
    assert_eq!(std::fs::read_dir(ws.path()).unwrap().count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_never_interleave() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let file = home.path().join("memory.md");
    let ctx = ctx_with_memory(&file, ws.path(), Mode::Agent);
    let body = "x".repeat(1500);
    let mut tasks = Vec::new();
    for writer in 0..8 {
        let ctx = ctx.clone();
        let body = body.clone();
        tasks.push(tokio::spawn(async move {
            for n in 0..25 {
                let text = format!("w{writer}n{n} {body}\nsecond line of w{writer}n{n}");
                let result = ctx.call("remember", json!({"text": text})).await.unwrap();
                assert!(!result.is_error, "{}", result.content_text());
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8 * 25 * 2);
    for pair in lines.chunks(2) {
        let id = pair[0].split(' ').nth(2).unwrap();
        assert!(pair[0].ends_with(&body), "{}", &pair[0][..40]);
        assert_eq!(pair[1], format!("  second line of {id}"));
    }
}

#[test]
fn memory_file_location_follows_the_environment() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| pairs.iter().find(|(name, _)| *name == k).map(|(_, v)| OsString::from(v))
    };
    assert_eq!(
        memory_file(env(&[("QUIVER_MEMORY_FILE", "/tmp/m.md"), ("QUIVER_HOME", "/q")])),
        Some(PathBuf::from("/tmp/m.md"))
    );
    assert_eq!(
        memory_file(env(&[("QUIVER_MEMORY_FILE", ""), ("QUIVER_HOME", "/q")])),
        Some(PathBuf::from("/q/memory.md"))
    );
    let default = memory_file(env(&[])).unwrap();
    assert!(default.ends_with("quiver/memory.md"), "{}", default.display());
}

/// The real `QUIVER_MEMORY_FILE` variable, end to end: the test binary re-runs itself
/// for the child test below with the variable set (tests must not mutate their own
/// process environment, which other tests share).
#[test]
fn env_override_is_respected() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("from-env.md");
    // The child test's full name, derived so that moving this module cannot make
    // `--exact` match nothing (the child then runs 0 tests; see "1 passed" below).
    let child = format!("{}::child_writes_via_env", module_path!().split_once("::").unwrap().1);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", child.as_str(), "--ignored", "--test-threads=1"])
        .env("QUIVER_MEMORY_FILE", &file)
        .env("QUIVER_MEMORY_TEST_CHILD", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"), "{}", String::from_utf8_lossy(&out.stdout));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.ends_with(" [env] written through the environment\n"), "{text}");
}

#[tokio::test]
#[ignore = "run by env_override_is_respected in a child process"]
async fn child_writes_via_env() {
    if std::env::var_os("QUIVER_MEMORY_TEST_CHILD").is_none() {
        return; // Run by hand it would write to the real memory file.
    }
    let h = Harness::new();
    h.ok("remember", json!({"text": "written through the environment", "tags": ["env"]})).await;
}

#[tokio::test]
async fn bad_input_is_explained() {
    // Every call here fails validation before the memory file is resolved.
    let h = Harness::new();
    assert!(h.err("remember", json!({"text": "   "})).await.contains("empty"));
    assert!(h.err("remember", json!({"text": "y".repeat(4001)})).await.contains("under 4000"));
    assert!(h.err("remember", json!({"text": "x", "tags": ["two words"]})).await.contains("not a short label"));
    assert!(h.err("remember", json!({"text": "x", "tags": [""]})).await.contains("not a short label"));
    let many: Vec<String> = (0..11).map(|i| format!("t{i}")).collect();
    assert!(h.err("remember", json!({"text": "x", "tags": many})).await.contains("at most 10"));
    let missing = h.err("remember", json!({})).await;
    assert!(missing.contains("text"), "{missing}");
    let wrong = h.err("remember", json!({"text": "x", "tags": "build"})).await;
    assert!(wrong.contains("tags"), "{wrong}");
}
