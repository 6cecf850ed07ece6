// Tests may panic on setup failures: that is how a test reports them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use crate::test_support::Harness;

fn project(h: &Harness) {
    h.write("Cargo.toml", "[workspace]\n");
    h.write("README.md", "# demo\n");
    h.write("LICENSE-MIT", "");
    h.write("Makefile", "all:\n");
    h.write("crates/cli/Cargo.toml", "");
    h.write("crates/cli/src/main.rs", "");
    h.write("crates/cli/src/args.rs", "");
    h.write("crates/core/Cargo.toml", "");
    h.write("crates/core/src/lib.rs", "");
    h.write("crates/core/src/deep/inner/x.rs", "");
    h.write("web/package.json", "{}");
    h.write("web/index.ts", "");
    h.write("docs/guide.md", "");
    h.write(".gitignore", "target/\nnode_modules/\n");
    h.write("target/debug/big.rlib", "");
    h.write("web/node_modules/dep/index.js", "");
    h.write(".github/workflows/ci.yml", "");
    h.write(".hidden/secret.rs", "");
}

#[tokio::test]
async fn maps_languages_notable_files_and_tree() {
    let h = Harness::new();
    project(&h);
    let result = h.call("project_map", json!({})).await;
    assert!(!result.is_error, "{}", result.content_text());
    let expected = "\
Project map of `.`: 13 files in 9 directories (gitignored and hidden entries skipped)
Languages (files): Rust 4 (30%), TOML 3 (23%), Markdown 2 (15%), JSON 1 (7%), Make 1 (7%), TypeScript 1 (7%)
Notable files:
  .github/workflows (CI)
  Cargo.toml (Rust)
  LICENSE-MIT
  Makefile (tasks)
  README.md
  web/package.json (Node)
  crates/cli/Cargo.toml (Rust)
  crates/core/Cargo.toml (Rust)
  crates/cli/src/main.rs (entry point)
Tree (3 levels; file counts include subdirectories):
  ./ 13 files (rs 4, toml 3, md 2, …)
    crates/ 6 files (rs 4, toml 2)
      cli/ 3 files (rs 2, toml 1)
        src/ 2 files (rs 2)
      core/ 3 files (rs 2, toml 1)
        src/ 2 files (rs 2)
    docs/ 1 file (md 1)
    web/ 2 files (json 1, ts 1)
";
    assert_eq!(result.content_text(), expected);
    assert_eq!(result.metadata["files"], json!(13));
    assert_eq!(result.metadata["truncated"], json!(false));
    // Deterministic to the byte.
    assert_eq!(h.ok("project_map", json!({})).await, expected);
}

#[tokio::test]
async fn depth_path_and_limit_shape_the_tree() {
    let h = Harness::new();
    project(&h);
    let shallow = h.ok("project_map", json!({"depth": 1})).await;
    assert!(shallow.ends_with("  ./ 13 files (rs 4, toml 3, md 2, …)\n    crates/ 6 files (rs 4, toml 2)\n    docs/ 1 file (md 1)\n    web/ 2 files (json 1, ts 1)\n"), "{shallow}");
    let sub = h.ok("project_map", json!({"path": "crates/core", "depth": 5})).await;
    assert!(sub.starts_with("Project map of `crates/core`: 3 files in 3 directories"), "{sub}");
    assert!(sub.contains("      deep/ 1 file (rs 1)\n        inner/ 1 file (rs 1)\n"), "{sub}");
    let cut = h.call("project_map", json!({"limit": 2})).await;
    let text = cut.content_text();
    assert!(text.contains("    crates/ 6 files") && !text.contains("      cli/"), "{text}");
    assert!(
        text.ends_with("… 6 more directories not shown; raise limit, lower depth, or map a subdirectory\n"),
        "{text}"
    );
    assert_eq!(cut.metadata["truncated"], json!(true));
}

#[tokio::test]
async fn notable_files_skip_fixtures_and_deep_docs() {
    let h = Harness::new();
    h.write("README.md", "");
    h.write("tests/fixtures/case/Cargo.toml", "");
    h.write("vendor/lib/package.json", "");
    h.write("a/b/c/README.md", "");
    h.write("a/b/c/Cargo.toml", "");
    let out = h.ok("project_map", json!({})).await;
    assert!(out.contains("Notable files:\n  README.md\n  a/b/c/Cargo.toml (Rust)\nTree"), "{out}");
}

#[tokio::test]
async fn symlinks_are_not_followed() {
    let h = Harness::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("Cargo.toml"), "").unwrap();
    h.write("src/a.py", "");
    std::os::unix::fs::symlink(outside.path(), h.path("linked")).unwrap();
    let out = h.ok("project_map", json!({})).await;
    assert!(out.starts_with("Project map of `.`: 1 file in 1 directory"), "{out}");
    assert!(!out.contains("Cargo.toml") && !out.contains("linked"), "{out}");
    let escape = h.err("project_map", json!({"path": "linked"})).await;
    assert!(escape.contains("outside the workspace"), "{escape}");
}

#[tokio::test]
async fn empty_project_still_maps() {
    let h = Harness::new();
    let out = h.ok("project_map", json!({})).await;
    assert_eq!(
        out,
        "Project map of `.`: 0 files in 0 directories (gitignored and hidden entries skipped)\n\
         Tree (3 levels; file counts include subdirectories):\n  ./ (no files)\n"
    );
}

#[tokio::test]
async fn is_deferred_and_loads_when_called() {
    let h = Harness::new();
    let catalog = h.engine.catalog(&h.ctx.audience, &[]);
    let names = catalog.names();
    assert!(!names.iter().any(|n| n == "project_map") && names.iter().any(|n| n == "list_dir"), "{names:?}");
    h.ok("project_map", json!({})).await;
    assert!(h.ctx.session.is_loaded("project_map"));
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::new();
    project(&h);
    assert!(h.err("project_map", json!({"path": "README.md"})).await.contains("not a directory"));
    assert!(h.err("project_map", json!({"path": "missing"})).await.contains("no such file"));
    assert!(h.err("project_map", json!({"depth": 0})).await.contains("minimum of 1"));
    assert!(h.err("project_map", json!({"depth": 11})).await.contains("between 1 and 10"));
    assert!(h.err("project_map", json!({"limit": 0})).await.contains("minimum of 1"));
    assert!(h.err("project_map", json!({"path": "../.."})).await.contains("outside the workspace"));
    assert!(h.err("project_map", json!({"path": "/usr"})).await.contains("outside the workspace"));
    let wrong = h.err("project_map", json!({"depth": true})).await;
    assert!(wrong.contains("`depth`") && wrong.contains("integer"), "{wrong}");
    let wrong = h.err("project_map", json!({"path": ["src"]})).await;
    assert!(wrong.contains("`path`") && wrong.contains("string"), "{wrong}");
    let unknown = h.err("project_map", json!({"languages": true})).await;
    assert!(unknown.contains("languages"), "{unknown}");
}
