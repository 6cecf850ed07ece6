// Tests may panic on setup failures: that is how a test reports them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use quiver_engine::Mode;
use serde_json::json;

use crate::test_support::Harness;

const SRC: &str = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n\nfn helper() {\n    let x = 1;\n}\n";

#[tokio::test]
async fn replaces_a_unique_match_and_shows_a_diff() {
    let h = Harness::new();
    h.write("src/main.rs", SRC);
    let result = h
        .call(
            "edit_file",
            json!({"path": "src/main.rs", "old_string": "    println!(\"{x}\");", "new_string": "    dbg!(x);"}),
        )
        .await;
    assert!(!result.is_error, "{}", result.content_text());
    assert_eq!(
        result.content_text(),
        "Edited `src/main.rs`: 1 replacement at line 3\n\
         --- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,6 +1,6 @@\n fn main() {\n     let x = 1;\n\
         -    println!(\"{x}\");\n+    dbg!(x);\n }\n \n fn helper() {\n"
    );
    assert_eq!(h.read("src/main.rs"), SRC.replace("println!(\"{x}\")", "dbg!(x)"));
    assert_eq!(result.metadata["replacements"], json!(1));
    assert_eq!(result.metadata["lines"], json!([3]));
    assert_eq!(result.metadata["line_endings"], json!("lf"));
}

#[tokio::test]
async fn ambiguous_matches_are_listed_and_replace_all_takes_them_all() {
    let h = Harness::new();
    h.write("a.rs", SRC);
    let err = h.err("edit_file", json!({"path": "a.rs", "old_string": "let x = 1;", "new_string": "let x = 2;"})).await;
    assert!(err.contains("appears 2 times") && err.contains("at lines 2, 7") && err.contains("replace_all"), "{err}");
    assert_eq!(h.read("a.rs"), SRC);
    let out = h
        .ok(
            "edit_file",
            json!({"path": "a.rs", "old_string": "let x = 1;", "new_string": "let x = 2;", "replace_all": true}),
        )
        .await;
    assert!(out.starts_with("Edited `a.rs`: 2 replacements at lines 2, 7\n"), "{out}");
    assert_eq!(h.read("a.rs"), SRC.replace("let x = 1;", "let x = 2;"));
}

#[tokio::test]
async fn crlf_files_stay_crlf() {
    let h = Harness::new();
    h.write("win.txt", "alpha\r\nbeta\r\ngamma\r\n");
    // The model quotes with plain `\n`; the file keeps `\r\n` everywhere.
    let out = h
        .ok(
            "edit_file",
            json!({"path": "win.txt", "old_string": "alpha\nbeta\n", "new_string": "alpha\nBETA\nextra\n"}),
        )
        .await;
    assert!(out.contains("(CRLF line endings kept)") && out.contains("-beta\n+BETA\n+extra\n"), "{out}");
    assert!(!out.contains('\r'), "{out:?}");
    assert_eq!(h.read("win.txt"), "alpha\r\nBETA\r\nextra\r\ngamma\r\n");
    // An LF file stays LF even if the model sends `\r\n`.
    h.write("unix.txt", "a\nb\n");
    h.ok("edit_file", json!({"path": "unix.txt", "old_string": "a\r\nb", "new_string": "a\r\nc"})).await;
    assert_eq!(h.read("unix.txt"), "a\nc\n");
    // Mixed endings: each region keeps its own style.
    h.write("mixed.txt", "a\r\nb\r\nc\nd\ne\n");
    h.ok("edit_file", json!({"path": "mixed.txt", "old_string": "a\nb", "new_string": "a\nB\nb"})).await;
    h.ok("edit_file", json!({"path": "mixed.txt", "old_string": "d\ne", "new_string": "D\nE"})).await;
    assert_eq!(h.read("mixed.txt"), "a\r\nB\r\nb\r\nc\nD\nE\n");
}

#[tokio::test]
async fn a_miss_points_at_the_nearest_text() {
    let h = Harness::new();
    h.write("a.rs", SRC);
    // Wrong indentation: found modulo whitespace, exact text quoted back.
    let err = h
        .err("edit_file", json!({"path": "a.rs", "old_string": "fn helper() {\n  let x = 1;", "new_string": "z"}))
        .await;
    assert!(err.contains("different whitespace") && err.contains("lines 6-7"), "{err}");
    assert!(err.contains("     7\t    let x = 1;\n"), "{err}");
    // A stale quote: the closest region, and the first line that differs.
    let err = h
        .err("edit_file", json!({"path": "a.rs", "old_string": "fn main() {\n    let x = 1;\n    println!(\"{y}\");\n}", "new_string": "z"}))
        .await;
    assert!(err.contains("closest text") && err.contains("lines 1-4"), "{err}");
    assert!(err.contains("First difference, line 3: the file has `println!(\"{x}\");`"), "{err}");
    // Line-number prefixes copied from read_file output.
    let err =
        h.err("edit_file", json!({"path": "a.rs", "old_string": "     2\t    let x = 1;", "new_string": "z"})).await;
    assert!(err.contains("line-number prefixes"), "{err}");
    // Nothing alike at all.
    let err = h.err("edit_file", json!({"path": "a.rs", "old_string": "qqqq wwww zzzz", "new_string": "z"})).await;
    assert!(err.contains("No similar text"), "{err}");
    assert_eq!(h.read("a.rs"), SRC);
}

#[tokio::test]
async fn hints_stay_fast_on_big_files() {
    let h = Harness::new();
    let big: String = (0..50_000).map(|i| format!("line number {i} with some text\n")).collect();
    h.write("big.txt", &big);
    let started = thread_cpu_time();
    let quote: String = (100..140).map(|i| format!("line numbr {i} with some text\n")).collect();
    let err = h.err("edit_file", json!({"path": "big.txt", "old_string": quote, "new_string": "x"})).await;
    assert!(err.contains("lines 101-140"), "{err}");
    let used = thread_cpu_time() - started;
    assert!(used < std::time::Duration::from_secs(10), "{used:?} of CPU for one hint");
}

/// CPU time this thread has used (the tool runs on the test's own thread):
/// unlike wall time, it does not grow while other processes hold the cores.
fn thread_cpu_time() -> std::time::Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    // Fields after the command name start at field 3 (state); utime and stime
    // are fields 14 and 15, in ticks of 1/100 s (USER_HZ, fixed for /proc).
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    std::time::Duration::from_millis(ticks * 10)
}

#[tokio::test]
async fn bad_requests_are_explained() {
    let h = Harness::new();
    h.write("a.txt", "same\n");
    h.write("bin", "a\0b");
    std::fs::write(h.path("latin1"), b"caf\xe9\n").unwrap();
    let e = h.err("edit_file", json!({"path": "a.txt", "old_string": "same", "new_string": "same"})).await;
    assert!(e.contains("identical"), "{e}");
    assert!(h.err("edit_file", json!({"path": "a.txt", "old_string": "", "new_string": "x"})).await.contains("empty"));
    let e = h.err("edit_file", json!({"path": "nope.txt", "old_string": "a", "new_string": "b"})).await;
    assert!(e.contains("does not exist") && e.contains("write_file"), "{e}");
    assert!(h.err("edit_file", json!({"path": ".", "old_string": "a", "new_string": "b"})).await.contains("directory"));
    assert!(h.err("edit_file", json!({"path": "bin", "old_string": "a", "new_string": "b"})).await.contains("binary"));
    assert!(
        h.err("edit_file", json!({"path": "latin1", "old_string": "caf", "new_string": "b"})).await.contains("UTF-8")
    );
    assert!(!h.path("nope.txt").exists());
}

#[tokio::test]
async fn malformed_arguments_are_explained() {
    let h = Harness::new();
    h.write("a.txt", "x\n");
    let e = h.err("edit_file", json!({"path": "a.txt", "old_string": "x", "new_string": 1})).await;
    assert!(e.contains("`new_string`") && e.contains("expected string"), "{e}");
    let e =
        h.err("edit_file", json!({"path": "a.txt", "old_string": "x", "new_string": "y", "replace_all": "yes"})).await;
    assert!(e.contains("`replace_all`") && e.contains("boolean"), "{e}");
    let e = h.err("edit_file", json!({"path": "a.txt", "new_string": "y"})).await;
    assert!(e.contains("missing required field `old_string`"), "{e}");
    let e = h.err("edit_file", json!({"path": "a.txt", "old_string": "x", "new_string": "y", "old_str": "x"})).await;
    assert!(e.contains("old_str"), "{e}");
    assert_eq!(h.read("a.txt"), "x\n");
}

#[tokio::test]
async fn workspace_escapes_are_refused() {
    let h = Harness::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("t.txt"), "secret\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("t.txt"), h.path("link.txt")).unwrap();
    let args = |p: &str| json!({"path": p, "old_string": "secret", "new_string": "owned"});
    assert!(h.err("edit_file", args("../t.txt")).await.contains("outside the workspace"));
    let abs = outside.path().join("t.txt");
    assert!(h.err("edit_file", args(abs.to_str().unwrap())).await.contains("outside the workspace"));
    assert!(h.err("edit_file", args("link.txt")).await.contains("outside the workspace"));
    assert_eq!(std::fs::read_to_string(abs).unwrap(), "secret\n");
}

#[tokio::test]
async fn plan_mode_refuses_and_leaves_the_file_alone() {
    let h = Harness::with_mode(Mode::Plan);
    h.write("a.txt", "keep\n");
    let e = h.err("edit_file", json!({"path": "a.txt", "old_string": "keep", "new_string": "lose"})).await;
    assert!(e.contains("plan mode"), "{e}");
    assert_eq!(h.read("a.txt"), "keep\n");
}
