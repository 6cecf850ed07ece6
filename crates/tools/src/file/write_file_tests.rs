// Tests may panic on setup failures: that is how a test reports them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;

use quiver_engine::Mode;
use serde_json::json;

use crate::test_support::Harness;

fn mode_of(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn creates_with_parents_then_overwrites() {
    let h = Harness::new();
    let created = h.call("write_file", json!({"path": "a/b/c.txt", "content": "one\ntwo\n"})).await;
    assert!(!created.is_error, "{}", created.content_text());
    assert_eq!(created.content_text(), "Created `a/b/c.txt` (8 bytes, 2 lines)");
    assert_eq!(created.metadata["created"], json!(true));
    assert_eq!(created.metadata["bytes"], json!(8));
    assert_eq!(h.read("a/b/c.txt"), "one\ntwo\n");

    let over = h.call("write_file", json!({"path": "a/b/c.txt", "content": "x"})).await;
    assert_eq!(over.content_text(), "Overwrote `a/b/c.txt` (1 bytes, 1 lines; was 8 bytes)");
    assert_eq!(over.metadata["created"], json!(false));
    assert_eq!(h.read("a/b/c.txt"), "x");

    let same = h.call("write_file", json!({"path": "a/b/c.txt", "content": "x"})).await;
    assert!(same.content_text().contains("nothing written"), "{}", same.content_text());
    assert_eq!(same.metadata["changed"], json!(false));

    let empty = h.ok("write_file", json!({"path": "empty", "content": ""})).await;
    assert_eq!(empty, "Created `empty` (0 bytes, 0 lines)");
    // No temp files are left next to the targets.
    let names: Vec<String> = std::fs::read_dir(h.path("a/b"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["c.txt".to_string()]);
}

#[tokio::test]
async fn permissions_follow_the_file_not_the_temp_file() {
    let h = Harness::new();
    // A new file gets what any ordinary create would get under this umask.
    std::fs::write(h.path("reference"), "").unwrap();
    h.ok("write_file", json!({"path": "new.txt", "content": "n"})).await;
    assert_eq!(mode_of(&h.path("new.txt")), mode_of(&h.path("reference")));
    // An existing executable stays executable.
    h.write("run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(h.path("run.sh"), std::fs::Permissions::from_mode(0o751)).unwrap();
    h.ok("write_file", json!({"path": "run.sh", "content": "#!/bin/sh\necho hi\n"})).await;
    assert_eq!(mode_of(&h.path("run.sh")), 0o751);
    // A read-only file is refused, as a plain write would be.
    h.write("locked.txt", "locked");
    std::fs::set_permissions(h.path("locked.txt"), std::fs::Permissions::from_mode(0o444)).unwrap();
    let err = h.err("write_file", json!({"path": "locked.txt", "content": "x"})).await;
    assert!(err.contains("permission denied"), "{err}");
    assert_eq!(h.read("locked.txt"), "locked");
}

#[tokio::test]
async fn readers_never_see_a_half_written_file() {
    let h = Harness::new();
    let size = 4 << 20;
    h.write("big", &"a".repeat(size));
    let path = h.path("big");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let bytes = std::fs::read(&path).unwrap();
                assert_eq!(bytes.len(), size, "a reader saw a partial file");
                assert!(bytes.iter().all(|b| *b == bytes[0]), "a reader saw a mix of old and new");
                reads += 1;
            }
            reads
        })
    };
    for i in 0..16 {
        let fill = if i % 2 == 0 { "b" } else { "a" };
        h.ok("write_file", json!({"path": "big", "content": fill.repeat(size)})).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
}

#[tokio::test]
async fn writes_through_an_inside_symlink_to_its_target() {
    let h = Harness::new();
    h.write("real.txt", "old");
    std::os::unix::fs::symlink("real.txt", h.path("link.txt")).unwrap();
    h.ok("write_file", json!({"path": "link.txt", "content": "new"})).await;
    assert_eq!(h.read("real.txt"), "new");
    assert!(std::fs::symlink_metadata(h.path("link.txt")).unwrap().file_type().is_symlink());
}

#[tokio::test]
async fn refuses_directories_and_file_parents() {
    let h = Harness::new();
    h.write("dir/x", "");
    assert!(h.err("write_file", json!({"path": "dir", "content": "x"})).await.contains("is a directory"));
    assert!(h.err("write_file", json!({"path": "new/", "content": "x"})).await.contains("ends with `/`"));
    assert!(!h.path("new").exists());
    let parent = h.err("write_file", json!({"path": "dir/x/y.txt", "content": "x"})).await;
    assert!(parent.contains("dir/x/y.txt") && parent.contains("Not a directory"), "{parent}");
    assert_eq!(h.read("dir/x"), "");
}

#[tokio::test]
async fn workspace_escapes_are_refused() {
    let h = Harness::new();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), h.path("out")).unwrap();
    assert!(h.err("write_file", json!({"path": "../x.txt", "content": "x"})).await.contains("outside the workspace"));
    let abs = outside.path().join("abs.txt");
    let err = h.err("write_file", json!({"path": abs.to_str().unwrap(), "content": "x"})).await;
    assert!(err.contains("outside the workspace"), "{err}");
    let err = h.err("write_file", json!({"path": "out/x.txt", "content": "x"})).await;
    assert!(err.contains("outside the workspace"), "{err}");
    // A dangling link pointing outside cannot be written through either.
    std::os::unix::fs::symlink(outside.path().join("dangling"), h.path("dangle")).unwrap();
    assert!(h.err("write_file", json!({"path": "dangle", "content": "x"})).await.contains("outside the workspace"));
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn plan_mode_refuses_and_leaves_the_file_alone() {
    let h = Harness::with_mode(Mode::Plan);
    h.write("keep.txt", "original");
    let err = h.err("write_file", json!({"path": "keep.txt", "content": "changed"})).await;
    assert!(err.contains("plan mode"), "{err}");
    assert_eq!(h.read("keep.txt"), "original");
    assert!(h.err("write_file", json!({"path": "fresh.txt", "content": "x"})).await.contains("plan mode"));
    assert!(!h.path("fresh.txt").exists());
}

#[tokio::test]
async fn malformed_arguments_are_explained() {
    let h = Harness::new();
    let wrong = h.err("write_file", json!({"path": "a.txt", "content": 5})).await;
    assert!(wrong.contains("`content`") && wrong.contains("expected string"), "{wrong}");
    let missing = h.err("write_file", json!({"path": "a.txt"})).await;
    assert!(missing.contains("missing required field `content`"), "{missing}");
    let unknown = h.err("write_file", json!({"path": "a.txt", "content": "x", "mode": "append"})).await;
    assert!(unknown.contains("mode"), "{unknown}");
    assert!(h.err("write_file", json!({"path": "", "content": "x"})).await.contains("empty"));
    assert!(!h.path("a.txt").exists());
}
