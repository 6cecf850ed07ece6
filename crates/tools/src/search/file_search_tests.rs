#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use crate::test_support::Harness;

fn meta(result: &quiver_engine::ToolResult, key: &str) -> serde_json::Value {
    result.metadata.get(key).cloned().unwrap_or_default()
}

fn tree(h: &Harness) {
    for f in [
        "crates/tools/src/grep_files.rs",
        "crates/tools/src/grep_files_tests.rs",
        "crates/tools/src/file_search.rs",
        "crates/engine/src/lib.rs",
        "crates/tools/src/lib.rs",
        "docs/grep-guide.md",
        "README.md",
    ] {
        h.write(f, "");
    }
}

#[tokio::test]
async fn ranks_by_score_then_path() {
    let h = Harness::new();
    tree(&h);
    let out = h.ok("file_search", json!({"query": "grep_files.rs"})).await;
    assert_eq!(out.lines().next(), Some("crates/tools/src/grep_files.rs"), "{out}");
    let fuzzy = h.ok("file_search", json!({"query": "gfile"})).await;
    assert!(fuzzy.lines().any(|l| l == "crates/tools/src/grep_files.rs"), "{fuzzy}");
    assert!(!fuzzy.contains("README"), "{fuzzy}");
    // Equal scores fall back to path order.
    let libs = h.ok("file_search", json!({"query": "lib.rs"})).await;
    assert_eq!(libs, "crates/engine/src/lib.rs\ncrates/tools/src/lib.rs\n");
    // Path-aware: a term can name a directory and another the file.
    let two = h.ok("file_search", json!({"query": "tools lib"})).await;
    assert_eq!(two.lines().next(), Some("crates/tools/src/lib.rs"), "{two}");
    for _ in 0..5 {
        assert_eq!(h.ok("file_search", json!({"query": "lib.rs"})).await, libs);
    }
}

#[tokio::test]
async fn limit_truncates_and_counts() {
    let h = Harness::new();
    for i in 0..30 {
        h.write(&format!("mod{i:02}/widget.rs"), "");
    }
    let result = h.call("file_search", json!({"query": "widget", "limit": 5})).await;
    let text = result.content_text();
    assert_eq!(text.lines().count(), 6, "{text}");
    assert_eq!(text.lines().next(), Some("mod00/widget.rs"));
    assert!(text.ends_with("… 25 more matches; refine the query or raise limit\n"), "{text}");
    assert_eq!(meta(&result, "matches"), 30);
    assert_eq!(meta(&result, "files_searched"), 30);
    assert_eq!(meta(&result, "truncated"), true);
    let default = h.ok("file_search", json!({"query": "widget"})).await;
    assert_eq!(default.lines().count(), 21);
    let sub = h.ok("file_search", json!({"query": "widget", "path": "mod07"})).await;
    assert_eq!(sub, "mod07/widget.rs\n");
}

#[tokio::test]
async fn ignored_hidden_and_outside_files_are_not_listed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("config.toml"), "").unwrap();
    let h = Harness::new();
    h.write(".gitignore", "target/\n");
    h.write("target/config.toml", "");
    h.write(".cache/config.toml", "");
    h.write("app/config.toml", "");
    std::os::unix::fs::symlink(outside.path(), h.path("linked")).unwrap();
    assert_eq!(h.ok("file_search", json!({"query": "config"})).await, "app/config.toml\n");
    let none = h.ok("file_search", json!({"query": "zzzq"})).await;
    assert!(none.starts_with("No file names match \"zzzq\""), "{none}");
}

#[tokio::test]
async fn malformed_arguments_are_explained() {
    let h = Harness::new();
    h.write("a.txt", "");
    assert!(h.err("file_search", json!({})).await.contains("query"));
    let wrong = h.err("file_search", json!({"query": ["a"]})).await;
    assert!(wrong.contains("`query`") && wrong.contains("expected string"), "{wrong}");
    assert!(h.err("file_search", json!({"query": "  "})).await.contains("empty"));
    assert!(h.err("file_search", json!({"query": "a", "limit": 0})).await.contains("limit"));
    assert!(h.err("file_search", json!({"query": "a", "limit": -1})).await.contains("limit"));
    assert!(h.err("file_search", json!({"query": "a", "path": "a.txt"})).await.contains("is a file"));
    assert!(h.err("file_search", json!({"query": "a", "path": "missing"})).await.contains("no such file"));
    assert!(h.err("file_search", json!({"query": "a", "path": ".."})).await.contains("outside the workspace"));
    assert!(h.err("file_search", json!({"query": "a", "top": 3})).await.contains("top"));
}
