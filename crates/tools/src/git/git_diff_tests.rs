use serde_json::{Value, json};

use super::{bounded, check_rev, parse_hunk_header, quote_c};
use crate::git::repo::test_git;
use crate::test_support::Harness;

/// A repository with one commit: `a.txt` (five lines), `old.txt`, `bin.dat`.
fn repo() -> Harness {
    let h = Harness::new();
    let root = h.ctx.workspace.root().to_path_buf();
    test_git(&root, &["init", "-q"]);
    h.write("a.txt", "1\n2\n3\n4\n5\n");
    h.write("old.txt", "moving\nfile\nwith\nlines\n");
    std::fs::write(h.path("bin.dat"), [0u8, 1, 2, 3]).unwrap();
    test_git(&root, &["add", "."]);
    test_git(&root, &["commit", "-qm", "init"]);
    h
}

async fn diff(h: &Harness, args: Value) -> Value {
    let result = h.call("git_diff", args).await;
    assert!(!result.is_error, "{}", result.content_text());
    result.content
}

fn file<'a>(d: &'a Value, path: &str) -> &'a Value {
    d["files"].as_array().unwrap().iter().find(|f| f["path"] == path).unwrap_or_else(|| panic!("{path} not in {d}"))
}

#[tokio::test]
async fn unstaged_changes_are_structured() {
    let h = repo();
    h.write("a.txt", "1\nTWO\n3\n4\n5\nsix\n");
    std::fs::write(h.path("bin.dat"), [9u8, 0, 9]).unwrap();
    let d = diff(&h, json!({})).await;
    assert_eq!(d["staged"], false);
    let a = file(&d, "a.txt");
    assert_eq!(
        (a["status"].as_str(), a["additions"].as_u64(), a["deletions"].as_u64()),
        (Some("modified"), Some(2), Some(1))
    );
    let hunks = a["hunks"].as_array().unwrap();
    assert_eq!(hunks.len(), 1);
    assert_eq!(hunks[0]["header"], "@@ -1,5 +1,6 @@");
    assert_eq!((hunks[0]["old_start"].as_u64(), hunks[0]["old_lines"].as_u64()), (Some(1), Some(5)));
    assert_eq!((hunks[0]["new_start"].as_u64(), hunks[0]["new_lines"].as_u64()), (Some(1), Some(6)));
    assert_eq!(hunks[0]["lines"], json!([" 1", "-2", "+TWO", " 3", " 4", " 5", "+six"]));
    let bin = file(&d, "bin.dat");
    assert_eq!(bin["binary"], true);
    assert_eq!(d["stats"], json!({"files": 2, "additions": 2, "deletions": 1}));
    assert!(d["raw"].as_str().unwrap().contains("+TWO"));
    assert!(d.get("truncated").is_none());

    // `context` and `path` narrow it.
    let narrow = diff(&h, json!({"path": "a.txt", "context": 0})).await;
    assert_eq!(narrow["files"].as_array().unwrap().len(), 1);
    let hunks = narrow["files"][0]["hunks"].as_array().unwrap();
    assert_eq!(hunks.len(), 2);
    assert_eq!(hunks[0]["lines"], json!(["-2", "+TWO"]));
    assert_eq!(hunks[1]["header"], "@@ -5,0 +6 @@");
    assert_eq!((hunks[1]["new_start"].as_u64(), hunks[1]["new_lines"].as_u64()), (Some(6), Some(1)));
}

#[tokio::test]
async fn staged_renames_additions_and_odd_names() {
    let h = repo();
    let root = h.ctx.workspace.root().to_path_buf();
    test_git(&root, &["mv", "old.txt", "new name.txt"]);
    h.write("quo\"te\tand ünï.txt", "x\n");
    test_git(&root, &["add", "."]);
    test_git(&root, &["rm", "-q", "bin.dat"]);
    h.write("a.txt", "unstaged only\n");

    let d = diff(&h, json!({"staged": true})).await;
    assert_eq!(d["staged"], true);
    let renamed = file(&d, "new name.txt");
    assert_eq!((renamed["status"].as_str(), renamed["old_path"].as_str()), (Some("renamed"), Some("old.txt")));
    assert_eq!(renamed["hunks"], json!([]));
    let odd = file(&d, "quo\"te\tand ünï.txt");
    assert_eq!(odd["status"], "added");
    assert_eq!(odd["hunks"][0]["lines"], json!(["+x"]));
    assert_eq!(file(&d, "bin.dat")["status"], "deleted");
    assert!(d["files"].as_array().unwrap().iter().all(|f| f["path"] != "a.txt"), "{d}");

    let unstaged = diff(&h, json!({})).await;
    assert_eq!(unstaged["files"].as_array().unwrap().len(), 1);
    assert_eq!(file(&unstaged, "a.txt")["deletions"], 5);
}

#[tokio::test]
async fn empty_diff_has_a_note_and_large_diffs_are_bounded() {
    let h = repo();
    let clean = diff(&h, json!({})).await;
    assert_eq!(clean["files"], json!([]));
    assert!(clean["note"].as_str().unwrap().contains("no unstaged changes"));

    let big: String = (0..3000).map(|i| format!("line {i}\n")).collect();
    h.write("a.txt", &big);
    let result = h.call("git_diff", json!({})).await;
    assert_eq!(result.metadata["truncated"], true);
    let d = result.content;
    assert!(d["truncated"].as_str().unwrap().contains("pass `path`"), "{d}");
    let a = file(&d, "a.txt");
    assert_eq!(a["additions"], 3000);
    let shown: usize = a["hunks"].as_array().unwrap().iter().map(|h| h["lines"].as_array().unwrap().len()).sum();
    assert!(shown > 1000 && shown < 3000, "{shown}");
    assert!(d["raw"].as_str().unwrap().len() <= super::MAX_RAW_BYTES + 64);
    // Bounded below the dispatch spill threshold, so the structure is not spilled.
    assert!(d.to_string().len() < 32 * 1024, "{}", d.to_string().len());
}

#[tokio::test]
async fn not_a_repo_and_bad_input() {
    let h = Harness::new();
    let err = h.err("git_diff", json!({})).await;
    assert!(err.contains("not inside a git repository"), "{err}");
    let h = repo();
    assert!(h.err("git_diff", json!({"path": "../x"})).await.contains("outside the workspace"));
    assert!(h.err("git_diff", json!({"context": 5000})).await.contains("at most 200"));
    let wrong = h.err("git_diff", json!({"staged": "yes"})).await;
    assert!(wrong.contains("staged"), "{wrong}");
    let negative = h.err("git_diff", json!({"context": -1})).await;
    assert!(negative.contains("context"), "{negative}");
}

#[test]
fn helpers() {
    assert_eq!(quote_c("a/plain ü.txt"), "a/plain ü.txt");
    assert_eq!(quote_c("a/q\"t\\\t\x01"), "\"a/q\\\"t\\\\\\t\\001\"");
    let h = parse_hunk_header("@@ -3 +4,2 @@ fn main()");
    assert_eq!((h.old_start, h.old_lines, h.new_start, h.new_lines), (3, 1, 4, 2));
    let cc = parse_hunk_header("@@@ -1,2 -1,3 +1,5 @@@");
    assert_eq!((cc.old_start, cc.old_lines, cc.new_start, cc.new_lines), (1, 2, 1, 5));
    assert_eq!(bounded("ab\ncd\nef\n", 7), ("ab\ncd\n… [3 more bytes]\n".to_string(), true));
    assert_eq!(bounded("short", 7), ("short".to_string(), false));
}

/// A second and third commit on top of `repo()`'s, on a branch `topic`, with
/// `main` left at the first.
fn repo_with_history() -> Harness {
    let h = repo();
    let root = h.ctx.workspace.root().to_path_buf();
    test_git(&root, &["branch", "-M", "main"]);
    test_git(&root, &["checkout", "-qb", "topic"]);
    h.write("a.txt", "1\n2\n3\n4\n5\n6\n");
    test_git(&root, &["commit", "-qam", "six"]);
    h.write("b.txt", "new\n");
    test_git(&root, &["add", "b.txt"]);
    test_git(&root, &["commit", "-qm", "b"]);
    h
}

#[tokio::test]
async fn a_revision_or_a_range_is_diffed() {
    let h = repo_with_history();
    // One revision: it against the work tree (an unstaged edit shows too).
    h.write("old.txt", "changed\n");
    let d = diff(&h, json!({"rev": "main"})).await;
    assert_eq!(d["rev"], "main");
    let mut paths: Vec<&str> = d["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["a.txt", "b.txt", "old.txt"]);
    assert_eq!(file(&d, "a.txt")["hunks"][0]["lines"].as_array().unwrap().last().unwrap(), "+6");

    // A range: the commits only, not the work tree.
    let r = diff(&h, json!({"rev": "HEAD~2..HEAD"})).await;
    let mut paths: Vec<&str> = r["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["a.txt", "b.txt"]);
    assert_eq!(r["stats"], json!({"files": 2, "additions": 2, "deletions": 0}));
    let one = diff(&h, json!({"rev": "HEAD~1..HEAD"})).await;
    assert_eq!(one["stats"]["files"], 1);
    let sym = diff(&h, json!({"rev": "main...topic"})).await;
    assert_eq!(sym["stats"]["files"], 2);
    let none = diff(&h, json!({"rev": "HEAD..HEAD"})).await;
    assert_eq!(none["files"], json!([]));
    assert!(none["note"].as_str().unwrap().contains("no differences"), "{none}");
}

#[tokio::test]
async fn stat_gives_counts_without_hunks() {
    let h = repo_with_history();
    let d = diff(&h, json!({"rev": "HEAD~2..HEAD", "stat": true})).await;
    let a = file(&d, "a.txt");
    assert_eq!((a["additions"].as_u64(), a["deletions"].as_u64()), (Some(1), Some(0)));
    assert_eq!(a["hunks"], json!([]));
    let raw = d["raw"].as_str().unwrap();
    assert!(raw.contains("2 files changed, 2 insertions(+)"), "{raw}");
    assert!(!raw.contains("@@"), "{raw}");
}

#[tokio::test]
async fn hostile_revisions_are_refused_before_git_runs() {
    let h = repo_with_history();
    let out = std::env::temp_dir().join(format!("quiver-git-diff-{}", std::process::id()));
    let hostile = format!("--output={}", out.display());
    for bad in
        [hostile.as_str(), "-p", "HEAD..--output=x", "main;rm -rf /", "$(id)", "main HEAD", "a..b..c", "..", "`x`"]
    {
        let r = h.call("git_diff", json!({"rev": bad})).await;
        assert!(r.is_error, "{bad:?} was accepted: {}", r.content_text());
        assert!(r.content_text().contains("is not a revision or range"), "{bad:?}: {}", r.content_text());
    }
    assert!(!out.exists(), "git wrote {}", out.display());
    let r = h.call("git_diff", json!({"rev": "HEAD~1..HEAD", "staged": true})).await;
    assert!(r.is_error && r.content_text().contains("`staged` compares the index"), "{}", r.content_text());
    for ok in ["main", "HEAD~3..HEAD", "main...topic", "origin/main", "v1.2.0^", "@{u}..", "a1b2c3d"] {
        assert_eq!(check_rev(ok).unwrap(), ok);
    }
}
