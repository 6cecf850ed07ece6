use std::time::Duration;

use quiver_engine::Mode;
use serde_json::json;

use crate::shell::shell_jobs::tests::{FixedApprover, alive, eventually, group_members};
use crate::test_support::{Harness, PATIENCE};

#[tokio::test]
async fn foreground_merges_stdout_and_stderr_in_order() {
    let h = Harness::new();
    let r = h.call("exec_shell", json!({"command": "echo one; echo two >&2; echo three"})).await;
    assert!(!r.is_error, "{}", r.content_text());
    assert!(r.content_text().starts_with("one\ntwo\nthree\n"), "{}", r.content_text());
    assert_eq!(r.metadata["exit_code"], 0);
    assert_eq!(r.metadata["timed_out"], false);
    assert_eq!(r.metadata["permission"], "trusted");
    assert!(r.metadata["duration_ms"].is_u64());
    assert!(r.metadata.get("job_id").is_none());
}

#[tokio::test]
async fn foreground_reports_exit_code_and_cwd() {
    let h = Harness::with_mode(Mode::Yolo);
    h.write("sub/marker", "");
    let r = h.call("exec_shell", json!({"command": "pwd; ls; exit 3", "cwd": "sub"})).await;
    assert!(!r.is_error, "a failing command is a result, not a tool error");
    let text = r.content_text();
    assert!(text.contains("/sub\nmarker\n"), "{text}");
    assert!(text.contains("exited with code 3"), "{text}");
    assert_eq!(r.metadata["exit_code"], 3);
    assert_eq!(r.metadata["cwd"], "sub");
    // A foreground command reading stdin gets end-of-file, not a hang.
    let r = h.call("exec_shell", json!({"command": "cat; echo after", "timeout_ms": 5000})).await;
    assert!(r.content_text().starts_with("after\n"), "{}", r.content_text());
}

#[tokio::test]
async fn long_output_is_windowed_and_logged_in_full() {
    let h = Harness::new();
    let r = h.call("exec_shell", json!({"command": "seq 1 50000"})).await;
    let text = r.content_text();
    assert!(text.starts_with("1\n2\n"), "{}", &text[..20]);
    assert!(text.contains("omitted; the full output is in"), "{}", &text[..200]);
    assert!(text.contains("49999\n50000\n"));
    assert!(text.len() < 32 * 1024, "stays under the spill threshold: {}", text.len());
    assert_eq!(r.metadata["truncated"], true);
    let log = std::fs::read_to_string(r.metadata["log_file"].as_str().unwrap()).unwrap();
    assert_eq!(log.lines().count(), 50000);
}

#[tokio::test]
async fn timeout_kills_the_group_and_hints_background() {
    let h = Harness::with_mode(Mode::Yolo);
    // The backgrounded sleep reports its process group (field 5 of its stat):
    // the shell's, which the timeout must empty. On a loaded machine the timeout
    // can expire before the shell printed that; such a run shows nothing, so it
    // is repeated with a longer timeout.
    let command = "sleep 300 & read -r _ _ _ _ pgid _ < /proc/$!/stat; echo child=$! pgid=$pgid; sleep 300";
    let mut timeout_ms = 1500;
    let (r, text) = loop {
        let r = h.call("exec_shell", json!({"command": command, "timeout_ms": timeout_ms})).await;
        let text = r.content_text();
        if text.lines().any(|l| l.starts_with("child=") && l.contains(" pgid=")) {
            break (r, text);
        }
        assert!(timeout_ms < 60_000, "the shell never printed the group: {text}");
        timeout_ms *= 4;
    };
    assert!(r.is_error);
    assert!(text.contains(&format!("timed out after {timeout_ms} ms")), "{text}");
    assert!(text.contains("background: true") && text.contains("exec_shell_wait"), "{text}");
    assert_eq!(r.metadata["timed_out"], true, "{:?}", r.metadata);
    assert!(r.metadata["duration_ms"].as_u64().is_some_and(|d| d >= timeout_ms), "{:?}", r.metadata);
    // The output line, not the echoed command, which holds the same words.
    let line = text.lines().find(|l| l.starts_with("child=")).unwrap();
    let field = |key: &str| -> i32 {
        let value = line.split_whitespace().find_map(|w| w.strip_prefix(key));
        value.and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no number after {key:?} in {text}"))
    };
    let (child, pgid) = (field("child="), field("pgid="));
    // The sleep is not a group leader, so only a kill of the shell's whole
    // group reaches it (a check of the sleep's own group would always pass).
    assert_ne!(child, pgid, "{text}");
    assert!(
        eventually(PATIENCE, || group_members(pgid).is_empty()).await,
        "left in the group: {:?}",
        group_members(pgid)
    );
    assert!(!alive(child), "the backgrounded sleep {child} survived");
}

#[tokio::test]
async fn strays_of_a_finished_command_are_stopped() {
    let h = Harness::with_mode(Mode::Yolo);
    let r = h.call("exec_shell", json!({"command": "sleep 300 >/dev/null 2>&1 & echo $!"})).await;
    let pid: i32 = r.content_text().lines().next().unwrap().parse().unwrap();
    assert!(r.content_text().contains("left running in the background were stopped"), "{}", r.content_text());
    assert!(eventually(PATIENCE, || !alive(pid)).await);
}

#[tokio::test]
async fn plan_mode_refuses_and_runs_nothing() {
    let h = Harness::with_mode(Mode::Plan);
    let err = h.err("exec_shell", json!({"command": "touch created.txt"})).await;
    assert!(err.contains("plan mode"), "{err}");
    let err = h.err("exec_shell", json!({"command": "echo hi", "background": true})).await;
    assert!(err.contains("plan mode"), "{err}");
    assert!(h.err("task_shell_start", json!({"command": "touch created.txt"})).await.contains("plan mode"));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!h.path("created.txt").exists());
}

#[tokio::test]
async fn agent_mode_asks_for_untrusted_commands() {
    // The sandbox is the boundary: an untrusted line runs inside it unasked,
    // also with nobody to ask; asking is for leaving the sandbox.
    if !crate::process::sandbox_available() {
        return;
    }
    let h = Harness::new();
    let r = h.call("exec_shell", json!({"command": "touch a.txt"})).await;
    assert!(!r.is_error, "{}", r.content_text());
    assert_eq!(
        (r.metadata["permission"].as_str(), r.metadata["sandbox"].as_str()),
        (Some("sandboxed"), Some("workspace-write"))
    );
    assert!(h.path("a.txt").exists());
    let err = h.err("exec_shell", json!({"command": "touch out.txt", "escalate": "full"})).await;
    assert!(err.contains("nobody to approve") && err.contains("touch out.txt"), "{err}");
    assert!(!h.path("out.txt").exists());

    let mut h = Harness::new();
    let no = FixedApprover::new(false);
    h.ctx.approver = Some(no.clone());
    h.ok("exec_shell", json!({"command": "touch b.txt"})).await;
    assert!(no.asked.lock().unwrap().is_empty(), "a sandboxed line is not asked about");
    assert!(h.err("exec_shell", json!({"command": "touch c.txt", "escalate": "network"})).await.contains("declined"));
    assert!(!h.path("c.txt").exists());
    assert_eq!(no.asked.lock().unwrap().len(), 1);

    let yes = FixedApprover::new(true);
    h.ctx.approver = Some(yes.clone());
    let r = h.call("exec_shell", json!({"command": "touch d.txt && echo made", "escalate": "full"})).await;
    assert_eq!((r.metadata["permission"].as_str(), r.metadata["sandbox"].as_str()), (Some("approved"), Some("full")));
    assert!(h.path("d.txt").exists());
    assert!(yes.asked.lock().unwrap()[0].contains("touch d.txt"));
    let r = h.call("exec_shell", json!({"command": "echo net", "escalate": "network"})).await;
    assert_eq!(r.metadata["sandbox"], "workspace-write+network", "{}", r.content_text());
}

/// `git remote add` writes `.git/config`, which the sandbox keeps read-only:
/// agent mode asks for it by name before it runs (it used to run sandboxed
/// and fail with "Device or resource busy"), and with nobody to ask refuses
/// it with the reason. Reading git's settings still runs unasked.
#[tokio::test]
async fn writing_git_settings_is_asked_for_by_name() {
    if !crate::process::sandbox_available() {
        return;
    }
    let h = Harness::new();
    crate::git::repo::test_git(h.ctx.workspace.root(), &["init", "-q"]);
    let err = h.err("exec_shell", json!({"command": "git remote add origin https://example.com/r.git"})).await;
    assert!(err.contains("nobody to approve") && err.contains(".git/config"), "{err}");
    assert!(!h.read(".git/config").contains("example.com"));
    h.ok("exec_shell", json!({"command": "git config --get core.bare"})).await;

    let mut h = h;
    let no = FixedApprover::new(false);
    h.ctx.approver = Some(no.clone());
    assert!(h.err("exec_shell", json!({"command": "git config user.email me@example.com"})).await.contains("declined"));
    assert!(no.asked.lock().unwrap()[0].contains("writes .git/config"), "{:?}", no.asked.lock().unwrap());

    let yes = FixedApprover::new(true);
    h.ctx.approver = Some(yes.clone());
    let r = h.call("exec_shell", json!({"command": "git remote add origin https://example.com/r.git"})).await;
    assert_eq!((r.metadata["permission"].as_str(), r.metadata["sandbox"].as_str()), (Some("approved"), Some("full")));
    assert!(h.read(".git/config").contains("https://example.com/r.git"));
    let asked = yes.asked.lock().unwrap().clone();
    assert!(asked.len() == 1 && asked[0].contains("git remote add") && asked[0].contains(".git/config"), "{asked:?}");
}

#[tokio::test]
async fn deny_rules_hold_in_yolo_mode() {
    let h = Harness::with_mode(Mode::Yolo);
    let err = h.err("exec_shell", json!({"command": "touch marker && sudo ls"})).await;
    assert!(err.contains("deny rule `sudo`"), "{err}");
    let err = h.err("exec_shell", json!({"command": "echo \"$(rm -rf /)\"", "background": true})).await;
    assert!(err.contains("deny rule `rm -rf /`"), "{err}");
    assert!(!h.path("marker").exists());
    // Yolo runs untrusted commands without asking.
    let r = h.call("exec_shell", json!({"command": "touch marker"})).await;
    assert_eq!(r.metadata["permission"], "yolo");
    assert!(h.path("marker").exists());
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::new();
    let missing = h.err("exec_shell", json!({})).await;
    assert!(missing.contains("command"), "{missing}");
    let wrong = h.err("exec_shell", json!({"command": 5})).await;
    assert!(wrong.contains("`command`"), "{wrong}");
    assert!(h.err("exec_shell", json!({"command": "  "})).await.contains("empty"));
    assert!(h.err("exec_shell", json!({"command": "ls", "timeout_ms": 0})).await.contains("minimum of 1"));
    assert!(h.err("exec_shell", json!({"command": "ls", "timeout_ms": 600001})).await.contains("between 1 and 600000"));
    assert!(h.err("exec_shell", json!({"command": "ls", "cwd": "../"})).await.contains("outside the workspace"));
    assert!(h.err("exec_shell", json!({"command": "ls", "cwd": "nope"})).await.contains("does not exist"));
    h.write("file.txt", "");
    assert!(h.err("exec_shell", json!({"command": "ls", "cwd": "file.txt"})).await.contains("not a directory"));
    assert!(h.err("exec_shell", json!({"command": "ls", "shell": "zsh"})).await.contains("shell"));
}

#[tokio::test]
async fn manifest_exec_policy_rules_apply() {
    use quiver_engine::{Audience, Engine, Manifest, Workspace};
    let mut manifest = Manifest::builtin().unwrap();
    manifest.overlay_toml("[exec_policy]\ndeny_prefixes = [\"printf\"]\ntrusted_prefixes = [\"touch\"]\n").unwrap();
    let engine = std::sync::Arc::new(Engine::new(crate::native_registry().unwrap(), manifest));
    let dir = tempfile::tempdir().unwrap();
    let ctx = engine.context(Workspace::new(dir.path()).unwrap(), Audience::default());
    let denied = ctx.call("exec_shell", json!({"command": "printf hi"})).await.unwrap();
    assert!(denied.is_error && denied.content_text().contains("deny rule `printf`"), "{}", denied.content_text());
    // `touch` is trusted by the manifest, so agent mode runs it without anyone
    // to ask, in the workspace-write sandbox (which cannot add entries directly
    // to the workspace root: see quiver-sandbox's Landlock rules).
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let trusted = ctx.call("exec_shell", json!({"command": "touch sub/made.txt"})).await.unwrap();
    assert!(!trusted.is_error, "{}", trusted.content_text());
    assert!(dir.path().join("sub/made.txt").exists());
}
