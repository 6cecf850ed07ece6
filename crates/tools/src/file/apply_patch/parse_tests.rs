#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn one(patch: &str) -> FilePatch {
    let mut files = parse(patch).unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    files.remove(0)
}

fn message(patch: &str) -> String {
    match parse(patch) {
        Err(ToolError::Model(m)) => m,
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[test]
fn reads_git_headers_for_every_action() {
    let created = one("diff --git a/n.txt b/n.txt\nnew file mode 100755\nindex 0000000..e69de29\n");
    assert_eq!(created.action, Action::Create { path: "n.txt".into() });
    assert_eq!(created.new_mode, Some(0o755));
    assert!(created.hunks.is_empty());
    let deleted = one("diff --git a/d.txt b/d.txt\ndeleted file mode 100644\nindex e69de29..0000000\n");
    assert_eq!(deleted.action, Action::Delete { path: "d.txt".into() });
    let renamed = one("diff --git a/x y.rs b/z w.rs\nsimilarity index 100%\nrename from x y.rs\nrename to z w.rs\n");
    assert_eq!(renamed.action, Action::Rename { from: "x y.rs".into(), to: "z w.rs".into() });
    let copied = one(
        "diff --git a/a b/b\nsimilarity index 90%\ncopy from a\ncopy to b\n--- a/a\n+++ b/b\n@@ -1 +1 @@\n-x\n+y\n",
    );
    assert_eq!(copied.action, Action::Copy { from: "a".into(), to: "b".into() });
    let chmod = one("diff --git a/s.sh b/s.sh\nold mode 100644\nnew mode 100755\n");
    assert_eq!((chmod.action, chmod.new_mode), (Action::Modify { path: "s.sh".into() }, Some(0o755)));
}

#[test]
fn paths_with_spaces_quotes_and_timestamps() {
    assert_eq!(
        git_paths("a/with space.txt b/with space.txt"),
        Some(("with space.txt".into(), "with space.txt".into()))
    );
    assert_eq!(git_paths("\"a/tab\\there\" \"b/tab\\there\""), Some(("tab\there".into(), "tab\there".into())));
    let f = one(
        "--- a/src/x.rs\t2024-01-01 10:00:00.000000000 +0000\n+++ b/src/x.rs\t2024-01-02 10:00:00.000000000 +0000\n@@ -1 +1 @@\n-a\n+b\n",
    );
    assert_eq!(f.action, Action::Modify { path: "src/x.rs".into() });
    let quoted = one("--- \"a/caf\\303\\251.txt\"\n+++ \"b/caf\\303\\251.txt\"\n@@ -1 +1 @@\n-a\n+b\n");
    assert_eq!(quoted.action, Action::Modify { path: "café.txt".into() });
    // Without a/ b/ prefixes (`git diff --no-prefix`, `diff -u`) names are kept.
    let plain = one("--- src/y.rs\n+++ src/y.rs\n@@ -1 +1 @@\n-a\n+b\n");
    assert_eq!(plain.action, Action::Modify { path: "src/y.rs".into() });
}

#[test]
fn hunk_lines_counts_and_markers() {
    let f = one("--- a/f\n+++ b/f\n@@ -3 +3,2 @@ fn section()\n-old\r\n\\ No newline at end of file\n+new\n+\n");
    let h = &f.hunks[0];
    assert_eq!((h.old_start, h.old_count, h.new_count), (3, 1, 2));
    assert_eq!(h.header, "`@@ -3 +3,2 @@`");
    assert_eq!(h.lines[0], HunkLine { op: Op::Remove, text: "old".into(), cr: true, no_eol: true });
    assert_eq!(h.lines[2], HunkLine { op: Op::Add, text: String::new(), cr: false, no_eol: false });
    // An empty line inside a hunk is an empty context line (editors strip the space).
    let f = one("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n");
    assert_eq!(f.hunks[0].lines[1].op, Op::Context);
}

#[test]
fn a_format_patch_series_keeps_every_mail() {
    let mail = "From 1 Mon Sep 17 00:00:00 2001\nSubject: [PATCH 1/2] fix\n\n    indented body\n---\n f | 2 +-\n\ndiff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n-- \n2.43.0\n\nFrom 2 Mon Sep 17 00:00:00 2001\nSubject: [PATCH 2/2] more\n\n---\ndiff --git a/g b/g\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-c\n+d\n-- \n2.43.0\n";
    let files = parse(mail).unwrap();
    let paths: Vec<_> = files.iter().map(|f| f.action.clone()).collect();
    assert_eq!(paths, [Action::Modify { path: "f".into() }, Action::Modify { path: "g".into() }]);
    assert!(files.iter().all(|f| f.hunks.len() == 1 && f.hunks[0].lines.len() == 2));
}

#[test]
fn header_problems_name_the_line() {
    assert!(
        message("diff --git a/f b/f\nsomething odd\n").contains("line 2: `something odd` is not a git extended header")
    );
    assert!(message("diff --git a/f b/f\nnew file mode 120000\n").contains("symlink"));
    assert!(message("diff --git a/f b/f\nnew mode 100600\n").contains("unknown file mode `100600`"));
    assert!(message("diff --git a/f b/f\nrename from f\n").contains("must come as a pair"));
    assert!(message("diff --git a/f b/f\nindex 1..2 100644\n").contains("`f` (line 1) has no hunks"));
    assert!(message("--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+x\n").contains("both sides are /dev/null"));
    assert!(message("+++ b/f\n@@ -1 +1 @@\n").contains("line 1: `+++ b/f` has no `--- a/path` line before it"));
    assert!(message("--- a/f\n+++ b/f\n@@ -1 +1\n-a\n+b\n").contains("malformed hunk header `@@ -1 +1`"));
    assert!(message("--- \"a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n").contains("line 1: cannot parse quoted path"));
}
