//! `quiver sandbox -- CMD` runs a command the way agent mode runs a
//! model-written line, and `quiver sandbox --check` says what this machine offers.

use std::path::Path;
use std::process::{Command, Output};

use crate::mcp_support::quiver_bin;

fn quiver(workspace: &Path, args: &[&str]) -> Output {
    Command::new(quiver_bin())
        .arg("sandbox")
        .args(args)
        .current_dir(workspace)
        .env("QUIVER_CONFIG_DIR", workspace.join(".test-user-config"))
        .env("QUIVER_STATE_DIR", workspace.join(".test-state"))
        .env("QUIVER_CACHE_DIR", workspace.join(".test-cache"))
        .env("QUIVER_LOG", "warn")
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A git workspace, or `None` (after a skip) where this kernel has no namespace sandbox.
fn workspace() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().unwrap();
    let check = quiver(dir.path(), &["--check"]);
    if !text(&check).contains("in use: namespaces") {
        quiver_testkit::require_or_skip("the namespace sandbox", &text(&check));
        return None;
    }
    assert!(Command::new("git").args(["init", "-q"]).current_dir(dir.path()).status().unwrap().success());
    Some(dir)
}

#[test]
fn check_names_every_mechanism_and_what_it_protects() {
    let dir = tempfile::tempdir().unwrap();
    let out = quiver(dir.path(), &["--check"]);
    let report = text(&out);
    for line in ["namespaces: ", "landlock: ", "seccomp: ", "in use: "] {
        assert!(report.contains(line), "{report}");
    }
    if report.contains("in use: namespaces") {
        assert!(out.status.success(), "{report}");
        assert!(report.contains("protects:") && report.contains(".git/hooks"), "{report}");
    }
}

#[test]
fn ordinary_work_runs_and_what_escapes_is_refused() {
    let Some(dir) = workspace() else { return };
    let line = "mkdir build && echo hi > build/x && touch notes.md && git add notes.md \
                && git -c user.name=t -c user.email=t@t commit -qm x && echo WORKED; \
                touch /etc/quiver-sandbox-probe 2>&1; echo planted > .git/hooks/post-checkout 2>&1; \
                cat /proc/1/environ >/dev/null 2>&1 || echo NO-ENVIRON; exit 7";
    let out = quiver(dir.path(), &["--", "sh", "-c", line]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(7), "the command's own exit code: {report}");
    assert!(report.contains("WORKED"), "{report}");
    assert!(report.contains("NO-ENVIRON"), "{report}");
    assert_eq!(report.matches("Read-only file system").count(), 2, "{report}");
    assert_eq!(std::fs::read_to_string(dir.path().join("build/x")).unwrap(), "hi\n");
    assert!(!Path::new("/etc/quiver-sandbox-probe").exists());
    assert!(!dir.path().join(".git/hooks/post-checkout").exists());
}

#[test]
fn read_only_policy_writes_nothing_and_network_stays_off_unless_asked() {
    let Some(dir) = workspace() else { return };
    let out = quiver(dir.path(), &["--policy", "read-only", "--", "touch", "new.txt"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("Read-only file system"), "{}", text(&out));
    assert!(!dir.path().join("new.txt").exists());

    // Only loopback in the sandbox's network namespace: no other interface.
    let ifaces = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ' '";
    let out = quiver(dir.path(), &["--", "sh", "-c", ifaces]);
    assert_eq!(text(&out).trim(), "lo", "{}", text(&out));
    let out = quiver(dir.path(), &["--network", "--", "sh", "-c", ifaces]);
    assert_ne!(text(&out).trim(), "lo", "--network keeps the host's interfaces: {}", text(&out));
}

#[test]
fn the_landlock_fallback_can_be_chosen_and_a_bad_call_is_explained() {
    let Some(dir) = workspace() else { return };
    let out = quiver(dir.path(), &["--mechanism", "landlock", "--", "sh", "-c", "echo ok > /etc/x 2>&1; echo fine"]);
    let report = text(&out);
    assert!(out.status.success(), "{report}");
    assert!(report.contains("fine") && !Path::new("/etc/x").exists(), "{report}");

    let out = quiver(dir.path(), &["--", "no-such-program-quiver"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("no-such-program-quiver"), "{}", text(&out));
}
