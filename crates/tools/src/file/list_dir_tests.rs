// Tests may panic on setup failures: that is how a test reports them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use crate::test_support::Harness;

fn tree(h: &Harness) {
    h.write("Cargo.toml", "[package]\n");
    h.write("src/lib.rs", "");
    h.write("src/tools/a.rs", "");
    h.write("src/tools/deep/deeper/x.rs", "");
    h.write(".env", "SECRET=1\n");
    h.write(".gitignore", "target/\n*.log\n");
    h.write("target/debug/out", "");
    h.write("build.log", "");
    h.write("b.txt", "");
}

#[tokio::test]
async fn lists_one_level_sorted_with_dirs_marked() {
    let h = Harness::new();
    tree(&h);
    let out = h.ok("list_dir", json!({})).await;
    assert_eq!(out, "./\n  Cargo.toml\n  b.txt\n  src/\n");
    // The same listing twice is byte-identical.
    assert_eq!(out, h.ok("list_dir", json!({"path": "."})).await);
}

#[tokio::test]
async fn depth_descends_and_respects_gitignore_without_git() {
    let h = Harness::new();
    tree(&h);
    let out = h.ok("list_dir", json!({"path": "src", "depth": 2})).await;
    assert_eq!(out, "src/\n  lib.rs\n  tools/\n    a.rs\n    deep/\n");
    let all = h.ok("list_dir", json!({"depth": 5})).await;
    assert!(all.contains("        deeper/\n          x.rs\n"), "{all}");
    assert!(!all.contains("target") && !all.contains("build.log"), "{all}");
    // Asking for an ignored directory by name still lists it.
    let ignored = h.ok("list_dir", json!({"path": "target"})).await;
    assert_eq!(ignored, "target/\n  debug/\n");
}

#[tokio::test]
async fn hidden_files_on_request_and_git_internals_never_entered() {
    let h = Harness::new();
    tree(&h);
    h.write(".git/HEAD", "ref: refs/heads/main\n");
    let out = h.ok("list_dir", json!({"include_hidden": true, "depth": 2})).await;
    assert!(out.contains("  .env\n") && out.contains("  .gitignore\n") && out.contains("  .git/\n"), "{out}");
    assert!(!out.contains("HEAD"), "{out}");
    assert!(!out.contains("target"), "{out}");
    let plain = h.ok("list_dir", json!({})).await;
    assert!(!plain.contains(".env"), "{plain}");
}

#[tokio::test]
async fn symlinks_are_shown_not_followed() {
    let h = Harness::new();
    h.write("real/inner.txt", "");
    std::os::unix::fs::symlink("/etc", h.path("outside")).unwrap();
    std::os::unix::fs::symlink("real", h.path("inside")).unwrap();
    let out = h.ok("list_dir", json!({"depth": 3})).await;
    assert_eq!(out, "./\n  inside -> real\n  outside -> /etc\n  real/\n    inner.txt\n");
    let escape = h.err("list_dir", json!({"path": "outside"})).await;
    assert!(escape.contains("outside the workspace"), "{escape}");
    // A link inside the workspace may be listed explicitly.
    assert_eq!(h.ok("list_dir", json!({"path": "inside"})).await, "real/\n  inner.txt\n");
}

#[tokio::test]
async fn big_directories_are_cut_with_a_note() {
    let h = Harness::new();
    for i in 0..(super::MAX_ENTRIES + 7) {
        h.write(&format!("many/f{i:04}"), "");
    }
    let result = h.call("list_dir", json!({"path": "many"})).await;
    let out = result.content_text();
    assert!(!result.is_error);
    assert_eq!(out.lines().filter(|l| l.starts_with("  f")).count(), super::MAX_ENTRIES);
    assert!(
        out.ends_with("… listing cut at 500 entries (7 more); list a subdirectory or use a smaller depth\n"),
        "{out}"
    );
    assert_eq!(result.metadata["truncated"], json!(true));
    assert_eq!(result.metadata["entries"], json!(500));
}

#[tokio::test]
async fn empty_directory_says_so() {
    let h = Harness::new();
    std::fs::create_dir(h.path("empty")).unwrap();
    let out = h.ok("list_dir", json!({"path": "empty"})).await;
    assert!(out.starts_with("empty/\n  (empty"), "{out}");
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::new();
    tree(&h);
    assert!(h.err("list_dir", json!({"path": "nope"})).await.contains("no such file"));
    assert!(h.err("list_dir", json!({"path": "b.txt"})).await.contains("read_file"));
    assert!(h.err("list_dir", json!({"depth": 0})).await.contains("minimum of 1"));
    assert!(h.err("list_dir", json!({"depth": 6})).await.contains("between 1 and 5"));
    assert!(h.err("list_dir", json!({"path": "../"})).await.contains("outside the workspace"));
    assert!(h.err("list_dir", json!({"path": "/etc"})).await.contains("outside the workspace"));
    let wrong = h.err("list_dir", json!({"depth": "2"})).await;
    assert!(wrong.contains("`depth`") && wrong.contains("integer") && wrong.contains("got string"), "{wrong}");
    let wrong = h.err("list_dir", json!({"include_hidden": "yes"})).await;
    assert!(wrong.contains("`include_hidden`") && wrong.contains("boolean"), "{wrong}");
    let unknown = h.err("list_dir", json!({"recursive": true})).await;
    assert!(unknown.contains("recursive"), "{unknown}");
    let negative = h.err("list_dir", json!({"depth": -1})).await;
    assert!(negative.contains("`depth`"), "{negative}");
}
