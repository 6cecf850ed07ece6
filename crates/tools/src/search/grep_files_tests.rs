#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use crate::test_support::Harness;

fn meta(result: &quiver_engine::ToolResult, key: &str) -> serde_json::Value {
    result.metadata.get(key).cloned().unwrap_or_default()
}

#[tokio::test]
async fn matches_with_context_lines_and_group_breaks() {
    let h = Harness::new();
    h.write("src/a.rs", "one\ntwo\nfn target() {}\nfour\nfive\nsix\nseven\ntarget again\nnine\n");
    h.write("b.txt", "nothing here\n");
    let out = h.ok("grep_files", json!({"pattern": "target", "context": 1})).await;
    assert_eq!(
        out,
        "src/a.rs-2-two\nsrc/a.rs:3:fn target() {}\nsrc/a.rs-4-four\n--\nsrc/a.rs-7-seven\nsrc/a.rs:8:target again\nsrc/a.rs-9-nine\n"
    );
    let result = h.call("grep_files", json!({"pattern": r"fn \w+\(\)"})).await;
    assert_eq!(result.content_text(), "src/a.rs:3:fn target() {}\n");
    assert_eq!(meta(&result, "matches"), 1);
    assert_eq!(meta(&result, "files_matched"), 1);
    assert_eq!(meta(&result, "truncated"), false);
}

#[tokio::test]
async fn searches_one_file_or_a_subdirectory() {
    let h = Harness::new();
    h.write("src/a.rs", "alpha\n");
    h.write("docs/a.md", "alpha\n");
    assert_eq!(h.ok("grep_files", json!({"pattern": "alpha", "path": "docs"})).await, "docs/a.md:1:alpha\n");
    assert_eq!(h.ok("grep_files", json!({"pattern": "alpha", "path": "src/a.rs"})).await, "src/a.rs:1:alpha\n");
    let none = h.ok("grep_files", json!({"pattern": "beta"})).await;
    assert!(none.starts_with("No matches for /beta/"), "{none}");
    assert!(h.err("grep_files", json!({"pattern": "x", "path": "nope"})).await.contains("no such file"));
}

#[tokio::test]
async fn glob_filters_files() {
    let h = Harness::new();
    h.write("src/main.rs", "needle\n");
    h.write("src/web/app.ts", "needle\n");
    h.write("lib/other.ts", "needle\n");
    h.write("README.md", "needle\n");
    let rs = h.ok("grep_files", json!({"pattern": "needle", "glob": "*.rs"})).await;
    assert_eq!(rs, "src/main.rs:1:needle\n");
    let ts = h.ok("grep_files", json!({"pattern": "needle", "glob": "src/**/*.ts"})).await;
    assert_eq!(ts, "src/web/app.ts:1:needle\n");
    let not_md = h.ok("grep_files", json!({"pattern": "needle", "glob": "!*.md"})).await;
    assert_eq!(not_md, "lib/other.ts:1:needle\nsrc/main.rs:1:needle\nsrc/web/app.ts:1:needle\n");
    let bad = h.err("grep_files", json!({"pattern": "needle", "glob": "src/[a"})).await;
    assert!(bad.contains("invalid glob"), "{bad}");
}

#[tokio::test]
async fn gitignored_and_hidden_files_are_skipped() {
    let h = Harness::new();
    h.write(".gitignore", "target/\n*.log\n");
    h.write("target/debug/out.rs", "needle\n");
    h.write("run.log", "needle\n");
    h.write(".hidden/x.rs", "needle\n");
    h.write("sub/.gitignore", "generated.rs\n");
    h.write("sub/generated.rs", "needle\n");
    h.write("sub/kept.rs", "needle\n");
    h.write("keep.rs", "needle\n");
    let out = h.ok("grep_files", json!({"pattern": "needle"})).await;
    assert_eq!(out, "keep.rs:1:needle\nsub/kept.rs:1:needle\n");
}

/// The same tree through `rg -l --no-require-git needle` (ripgrep 13) gives
/// exactly these files: `.ignore` outranks `.gitignore`, a deeper `.gitignore`
/// outranks a shallower one, `.git/info/exclude` applies, a whitelisted hidden
/// file is searched, symlinks and FIFOs are not; a glob override outranks all
/// of them; a subdirectory search still applies its ancestors' ignore files.
#[tokio::test]
async fn filters_and_their_precedence_match_ripgrep() {
    let h = Harness::new();
    h.write(".gitignore", "*.log\n!keep.log\nbuild/\n*.tmp\n*.gen\n!.keep\n");
    h.write(".ignore", "secret.txt\n!want.tmp\n");
    h.write(".git/info/exclude", "excluded.rs\n");
    h.write("sub/.gitignore", "/local.txt\n!ok.gen\n");
    for f in [
        "a.log",
        "keep.log",
        "build/x.rs",
        "x.tmp",
        "want.tmp",
        "secret.txt",
        "excluded.rs",
        "sub/local.txt",
        "sub/deeper/local.txt",
        "sub/ok.gen",
        "sub/no.gen",
        ".keep",
        ".h.rs",
        "hid/.x.rs",
        ".hidden.txt",
        "plain.rs",
        "sub/deeper/excluded.rs",
        "gen/in/ok.gen",
    ] {
        h.write(f, "needle\n");
    }
    rustix::fs::mknodat(
        rustix::fs::CWD,
        h.path("pipe.rs"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_bits_truncate(0o644),
        0,
    )
    .unwrap();
    std::os::unix::fs::symlink("plain.rs", h.path("link.rs")).unwrap();
    let files = |out: String| out.lines().map(|l| l.split(':').next().unwrap().to_string()).collect::<Vec<_>>();
    let all = h.ok("grep_files", json!({"pattern": "needle"})).await;
    assert_eq!(files(all), [".keep", "keep.log", "plain.rs", "sub/deeper/local.txt", "sub/ok.gen", "want.tmp"]);
    let rs = h.ok("grep_files", json!({"pattern": "needle", "glob": "*.rs"})).await;
    assert_eq!(files(rs), [".h.rs", "excluded.rs", "hid/.x.rs", "plain.rs", "sub/deeper/excluded.rs"]);
    let sub = h.ok("grep_files", json!({"pattern": "needle", "path": "sub"})).await;
    assert_eq!(files(sub), ["sub/deeper/local.txt", "sub/ok.gen"]);
}

#[tokio::test]
async fn binary_files_are_skipped() {
    let h = Harness::new();
    std::fs::write(h.path("blob.bin"), b"needle\n\0\x01\x02needle\n").unwrap();
    h.write("text.txt", "needle\n");
    let result = h.call("grep_files", json!({"pattern": "needle"})).await;
    assert_eq!(result.content_text(), "text.txt:1:needle\n");
    assert_eq!(meta(&result, "binary_files_skipped"), 1);
    assert_eq!(meta(&result, "matches"), 1);
}

#[tokio::test]
async fn case_insensitive_matching() {
    let h = Harness::new();
    h.write("a.txt", "Hello\nhello\nHELLO\nhelp\n");
    assert_eq!(h.ok("grep_files", json!({"pattern": "hello"})).await, "a.txt:2:hello\n");
    let out = h.ok("grep_files", json!({"pattern": "hello", "case_insensitive": true})).await;
    assert_eq!(out, "a.txt:1:Hello\na.txt:2:hello\na.txt:3:HELLO\n");
}

#[tokio::test]
async fn invalid_regex_reports_the_regex_error() {
    let h = Harness::new();
    h.write("a.txt", "x\n");
    let err = h.err("grep_files", json!({"pattern": "fn foo("})).await;
    assert!(err.contains("invalid regex /fn foo(/"), "{err}");
    assert!(err.contains("unclosed group"), "{err}");
    let multi = h.err("grep_files", json!({"pattern": r"a\nb"})).await;
    assert!(multi.contains("one line at a time"), "{multi}");
}

#[tokio::test]
async fn path_escapes_are_refused_and_symlinks_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "needle\n").unwrap();
    let h = Harness::new();
    h.write("inside.txt", "needle\n");
    std::os::unix::fs::symlink(outside.path(), h.path("link_dir")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), h.path("link_file.txt")).unwrap();
    assert_eq!(h.ok("grep_files", json!({"pattern": "needle"})).await, "inside.txt:1:needle\n");
    for path in ["../", "/etc", "link_dir", "link_file.txt", "sub/../../x"] {
        let err = h.err("grep_files", json!({"pattern": "needle", "path": path})).await;
        assert!(err.contains("outside the workspace"), "{path}: {err}");
    }
}

#[tokio::test]
async fn limit_truncates_in_path_order_with_total_count() {
    let h = Harness::new();
    for f in 0..30 {
        let body: String = (0..10).map(|i| format!("hit {i}\n")).collect();
        h.write(&format!("d{}/f{f:02}.txt", f % 3), &body);
    }
    let result = h.call("grep_files", json!({"pattern": "hit", "limit": 25})).await;
    let text = result.content_text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 26, "{text}");
    assert_eq!(lines[0], "d0/f00.txt:1:hit 0");
    assert_eq!(lines[10], "d0/f03.txt:1:hit 0");
    assert_eq!(lines[24], "d0/f06.txt:5:hit 4");
    assert!(lines[25].contains("first 25 of 300 matches (30 files)"), "{}", lines[25]);
    assert_eq!(meta(&result, "matches"), 300);
    assert_eq!(meta(&result, "files_matched"), 30);
    assert_eq!(meta(&result, "shown_matches"), 25);
    assert_eq!(meta(&result, "truncated"), true);

    // The last shown match keeps its after-context, nothing beyond it.
    let ctx = h.ok("grep_files", json!({"pattern": "hit [05]", "limit": 1, "context": 1, "path": "d1"})).await;
    assert_eq!(ctx.lines().take(2).collect::<Vec<_>>(), ["d1/f01.txt:1:hit 0", "d1/f01.txt-2-hit 1"]);
    assert!(ctx.lines().nth(2).is_some_and(|l| l.starts_with("… showing the first 1 of 20")), "{ctx}");
}

#[tokio::test]
async fn ordering_is_deterministic_across_runs() {
    let h = Harness::new();
    for d in ["b", "a", "a/z", "c/y", "a.d"] {
        for f in ["k.txt", "b.txt", "a.txt"] {
            h.write(&format!("{d}/{f}"), "x\nmatch\nx\nmatch\n");
        }
    }
    let first = h.ok("grep_files", json!({"pattern": "match", "limit": 17})).await;
    for _ in 0..10 {
        assert_eq!(h.ok("grep_files", json!({"pattern": "match", "limit": 17})).await, first);
    }
    let files: Vec<&str> = first.lines().filter_map(|l| l.split(':').next()).collect();
    assert_eq!(
        &files[..8],
        ["a/a.txt", "a/a.txt", "a/b.txt", "a/b.txt", "a/k.txt", "a/k.txt", "a/z/a.txt", "a/z/a.txt"]
    );
    assert_eq!((files[12], files[16]), ("a.d/a.txt", "a.d/k.txt"));
    assert!(files[17].starts_with("… showing the first 17 of 30"), "{first}");
}

#[tokio::test]
async fn long_lines_are_shortened() {
    let h = Harness::new();
    h.write("min.js", &format!("{}needle{}\n", "a".repeat(10), "b".repeat(2000)));
    let out = h.ok("grep_files", json!({"pattern": "needle"})).await;
    assert!(out.contains("… [+1516 chars]"), "{out}");
    assert!(out.len() < 600);
}

#[tokio::test]
async fn malformed_arguments_are_explained() {
    let h = Harness::new();
    let missing = h.err("grep_files", json!({})).await;
    assert!(missing.contains("pattern"), "{missing}");
    let wrong = h.err("grep_files", json!({"pattern": 3})).await;
    assert!(wrong.contains("`pattern`") && wrong.contains("expected string"), "{wrong}");
    let ctx = h.err("grep_files", json!({"pattern": "x", "context": "two"})).await;
    assert!(ctx.contains("context"), "{ctx}");
    let unknown = h.err("grep_files", json!({"pattern": "x", "regex": "y"})).await;
    assert!(unknown.contains("regex"), "{unknown}");
    assert!(h.err("grep_files", json!({"pattern": "x", "limit": 0})).await.contains("limit"));
    assert!(h.err("grep_files", json!({"pattern": "x", "context": 1000})).await.contains("at most 50"));
}
