use serde_json::{Value, json};

use crate::git::repo::{EntryKind, parse_status, test_git, test_git_output};
use crate::test_support::Harness;

async fn status(h: &Harness) -> Value {
    let result = h.call("git_status", json!({})).await;
    assert!(!result.is_error, "{}", result.content_text());
    result.content
}

#[tokio::test]
async fn reports_branch_and_every_kind_of_change() {
    let h = Harness::new();
    let root = h.ctx.workspace.root().to_path_buf();
    test_git(&root, &["init", "-q"]);
    h.write("keep.txt", "one\n");
    h.write("old name.txt", "rename me\n");
    h.write("gone.txt", "bye\n");
    test_git(&root, &["add", "."]);
    test_git(&root, &["commit", "-qm", "init"]);

    h.write("keep.txt", "one\ntwo\n");
    test_git(&root, &["add", "keep.txt"]);
    h.write("keep.txt", "one\ntwo\nthree\n");
    test_git(&root, &["mv", "old name.txt", "nëw name.txt"]);
    std::fs::remove_file(h.path("gone.txt")).unwrap();
    h.write("fresh.txt", "new\n");

    let s = status(&h).await;
    assert_eq!(s["branch"], "main");
    assert_eq!(s["detached"], false);
    assert_eq!(s["clean"], false);
    assert_eq!(s["head"].as_str().unwrap().len(), 12);
    assert_eq!(s["upstream"], Value::Null);
    let staged = s["staged"].as_array().unwrap();
    assert!(staged.contains(&json!({"path": "keep.txt", "status": "modified"})), "{s}");
    assert!(
        staged.contains(
            &json!({"path": "nëw name.txt", "status": "renamed", "old_path": "old name.txt", "similarity": 100})
        ),
        "{s}"
    );
    let unstaged = s["unstaged"].as_array().unwrap();
    assert!(unstaged.contains(&json!({"path": "keep.txt", "status": "modified"})), "{s}");
    assert!(unstaged.contains(&json!({"path": "gone.txt", "status": "deleted"})), "{s}");
    assert_eq!(s["untracked"], json!(["fresh.txt"]));
    assert_eq!(s["counts"], json!({"staged": 2, "unstaged": 2, "untracked": 1, "conflicted": 0}));
}

#[tokio::test]
async fn clean_repo_upstream_and_ahead_behind() {
    let h = Harness::new();
    let root = h.ctx.workspace.root().to_path_buf();
    let remote = tempfile::tempdir().unwrap();
    test_git(remote.path(), &["init", "-q", "--bare"]);
    test_git(&root, &["init", "-q"]);
    h.write("a.txt", "a\n");
    test_git(&root, &["add", "."]);
    test_git(&root, &["commit", "-qm", "one"]);
    test_git(&root, &["remote", "add", "origin", remote.path().to_str().unwrap()]);
    test_git(&root, &["push", "-q", "-u", "origin", "main"]);
    test_git(&root, &["commit", "-q", "--allow-empty", "-m", "two"]);
    test_git(&root, &["commit", "-q", "--allow-empty", "-m", "three"]);

    let s = status(&h).await;
    assert_eq!(s["clean"], true);
    assert_eq!(s["upstream"], "origin/main");
    assert_eq!(s["ahead"], 2);
    assert_eq!(s["behind"], 0);
    let result = h.call("git_status", json!({})).await;
    assert_eq!(result.metadata["clean"], true);
    assert_eq!(result.metadata["branch"], "main");
}

#[tokio::test]
async fn conflicts_detached_head_and_empty_repo() {
    let h = Harness::new();
    let root = h.ctx.workspace.root().to_path_buf();
    test_git(&root, &["init", "-q"]);
    let empty = status(&h).await;
    assert_eq!(empty["no_commits_yet"], true);
    assert_eq!(empty["head"], Value::Null);
    assert_eq!(empty["branch"], "main");

    h.write("c.txt", "base\n");
    test_git(&root, &["add", "."]);
    test_git(&root, &["commit", "-qm", "base"]);
    test_git(&root, &["checkout", "-qb", "other"]);
    h.write("c.txt", "theirs\n");
    test_git(&root, &["commit", "-qam", "theirs"]);
    test_git(&root, &["checkout", "-q", "main"]);
    h.write("c.txt", "ours\n");
    test_git(&root, &["commit", "-qam", "ours"]);
    // The merge fails with a conflict; that is the state under test.
    assert!(!test_git_output(&root, &["merge", "-q", "other"]).status.success());
    let s = status(&h).await;
    assert_eq!(s["conflicted"], json!([{"path": "c.txt", "status": "both_modified"}]));
    test_git(&root, &["merge", "--abort"]);

    test_git(&root, &["checkout", "-q", "--detach", "HEAD"]);
    let d = status(&h).await;
    assert_eq!(d["detached"], true);
    assert_eq!(d["branch"], Value::Null);
}

#[tokio::test]
async fn subdirectory_workspace_is_scoped() {
    let outer = tempfile::tempdir().unwrap();
    test_git(outer.path(), &["init", "-q"]);
    std::fs::create_dir_all(outer.path().join("sub")).unwrap();
    std::fs::write(outer.path().join("sub/in.txt"), "x").unwrap();
    std::fs::write(outer.path().join("out.txt"), "y").unwrap();
    std::fs::write(outer.path().join("sub/tracked.txt"), "t").unwrap();
    test_git(outer.path(), &["add", "sub/tracked.txt"]);
    let h = Harness::new();
    let workspace = quiver_engine::Workspace::new(outer.path().join("sub")).unwrap();
    let ctx = quiver_engine::ToolContext { workspace, ..h.ctx.clone() };
    let result = ctx.call("git_status", json!({})).await.unwrap();
    assert!(!result.is_error, "{}", result.content_text());
    assert_eq!(result.content["untracked"], json!(["in.txt"]));
    assert_eq!(result.content["staged"], json!([{"path": "tracked.txt", "status": "added"}]));
    assert!(result.content["scope"].as_str().unwrap().contains("sub/"));
}

#[tokio::test]
async fn not_a_repo_and_bad_input() {
    let h = Harness::new();
    let err = h.err("git_status", json!({})).await;
    assert!(err.contains("not inside a git repository") && err.contains("git init"), "{err}");
    let extra = h.err("git_status", json!({"path": "x"})).await;
    assert!(extra.contains("path"), "{extra}");
}

#[test]
fn parses_porcelain_v2_records() {
    let raw =
        b"# branch.oid (initial)\0# branch.head (detached)\0# branch.upstream origin/x\0# branch.ab +3 -1\0# stash 2\0\
1 .M N... 100644 100644 100644 aaa aaa dir/with space.txt\0\
2 R. N... 100644 100644 100644 bbb bbb R87 new.txt\0old.txt\0\
u UU N... 100644 100644 100644 100644 c1 c2 c3 both.txt\0? untracked dir/\0! ignored.log\0";
    let s = parse_status(raw).unwrap();
    assert_eq!((s.oid, s.branch, s.upstream.as_deref()), (None, None, Some("origin/x")));
    assert_eq!((s.ahead, s.behind, s.stash), (Some(3), Some(1), 2));
    assert_eq!(s.entries.len(), 5);
    assert_eq!(s.entries[0].path, "dir/with space.txt");
    assert_eq!(s.entries[1].orig_path.as_deref(), Some("old.txt"));
    assert_eq!(s.entries[1].kind, EntryKind::Changed { index: 'R', worktree: '.', score: Some(87) });
    assert_eq!(s.entries[2].kind, EntryKind::Unmerged { xy: "UU".into() });
    assert_eq!(s.entries[3].path, "untracked dir/");
    assert!(parse_status(b"1 .M short\0").is_err());
    assert!(parse_status(b"2 R. N... 1 1 1 a b R100 new.txt\0").is_err());
    assert!(parse_status(b"z what\0").is_err());
}
