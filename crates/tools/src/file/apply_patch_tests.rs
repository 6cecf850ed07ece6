#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use quiver_engine::Mode;
use serde_json::json;

use crate::test_support::Harness;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apply_patch").join(name)
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// Every file under `dir` (relative path → bytes), to compare whole trees.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn patch(text: &str) -> serde_json::Value {
    json!({ "patch": text })
}

#[tokio::test]
async fn git_patch_modifies_creates_deletes_and_renames() {
    let h = Harness::new();
    copy_tree(&fixture("multi/before"), h.dir.path());
    let diff = std::fs::read_to_string(fixture("multi/patch.diff")).unwrap();
    let result = h.call("apply_patch", patch(&diff)).await;
    assert!(!result.is_error, "{}", result.content_text());
    assert_eq!(tree(h.dir.path()), tree(&fixture("multi/after")));

    let summary = result.content_text();
    for line in [
        "Applied patch to 8 file(s), +13 -7",
        "modified README.md (+1 -1)",
        "modified config.ini (+1 -1)",
        "renamed  docs/guide.md -> docs/GUIDE.md (+0 -0)",
        "deleted  old_notes.txt (+0 -3)",
        "created  src/bin/run.sh (+2 -0)",
        "renamed  src/util.rs -> src/helpers.rs (+1 -1)",
        "modified src/lib.rs (+7 -1)",
        "created  src/version.rs (+1 -0)",
    ] {
        assert!(summary.contains(line), "missing {line:?} in:\n{summary}");
    }
    assert!(!summary.contains("notes:"), "an exact patch needs no notes:\n{summary}");
    let files = result.metadata["files"].as_array().unwrap();
    assert_eq!(files.len(), 8);
    assert_eq!(
        files[2],
        json!({"path": "docs/GUIDE.md", "action": "renamed", "from": "docs/guide.md", "added": 0, "removed": 0})
    );
    assert_eq!(result.metadata["added"], 13);
    assert_eq!(result.metadata["removed"], 7);
    // `new file mode 100755` makes the script executable; other files stay 0644.
    let mode = |rel: &str| std::fs::metadata(h.path(rel)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("src/bin/run.sh"), 0o755);
    assert_eq!(mode("src/version.rs"), 0o644);
}

#[tokio::test]
async fn rename_keeps_permissions_and_no_temp_files_are_left() {
    let h = Harness::new();
    h.write("tool.sh", "echo one\n");
    std::fs::set_permissions(h.path("tool.sh"), std::fs::Permissions::from_mode(0o750)).unwrap();
    let diff = "diff --git a/tool.sh b/bin/tool.sh\nsimilarity index 50%\nrename from tool.sh\nrename to bin/tool.sh\n--- a/tool.sh\n+++ b/bin/tool.sh\n@@ -1 +1 @@\n-echo one\n+echo two\n";
    h.ok("apply_patch", patch(diff)).await;
    assert!(!h.path("tool.sh").exists());
    assert_eq!(h.read("bin/tool.sh"), "echo two\n");
    assert_eq!(std::fs::metadata(h.path("bin/tool.sh")).unwrap().permissions().mode() & 0o777, 0o750);
    assert_eq!(tree(h.dir.path()).len(), 1, "a temp file was left behind");
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn hunks_apply_where_their_context_is_even_when_line_numbers_drifted() {
    let h = Harness::new();
    // Six lines were inserted at the top since the diff was made.
    h.write("f.txt", &format!("new a\nnew b\nnew c\nnew d\nnew e\nnew f\n{}", numbered(40)));
    let diff = "--- a/f.txt\n+++ b/f.txt\n@@ -9,3 +9,3 @@\n line 9\n-line 10\n+LINE TEN\n line 11\n@@ -30,3 +30,4 @@\n line 30\n line 31\n+inserted\n line 32\n";
    let out = h.ok("apply_patch", patch(diff)).await;
    let text = h.read("f.txt");
    assert!(text.contains("line 9\nLINE TEN\nline 11\n"), "{text}");
    assert!(text.contains("line 31\ninserted\nline 32\n"), "{text}");
    assert!(!text.contains("line 10\n"), "{text}");
    assert!(out.contains("f.txt: hunk 1 applied at line 15 (its header said 9)"), "{out}");
    assert!(out.contains("f.txt: hunk 2 applied at line 36 (its header said 30)"), "{out}");
}

#[tokio::test]
async fn trailing_whitespace_differences_are_tolerated_and_file_bytes_kept() {
    let h = Harness::new();
    h.write("w.py", "def f():  \n    x = 1\t\n    return x\n");
    let diff = "--- a/w.py\n+++ b/w.py\n@@ -1,3 +1,3 @@\n def f():\n-    x = 1\n+    x = 2\n     return x\n";
    let out = h.ok("apply_patch", patch(diff)).await;
    // The context line keeps its own trailing spaces; only the changed line is new.
    assert_eq!(h.read("w.py"), "def f():  \n    x = 2\n    return x\n");
    assert!(out.contains("w.py: hunk 1 matched only with trailing whitespace ignored"), "{out}");
    // Leading whitespace is significant: an indentation change does not match.
    let h2 = Harness::new();
    h2.write("w.py", "def f():\n  x = 1\n");
    let err = h2
        .err("apply_patch", patch("--- a/w.py\n+++ b/w.py\n@@ -1,2 +1,2 @@\n def f():\n-    x = 1\n+    x = 2\n"))
        .await;
    assert!(err.contains("does not apply"), "{err}");
}

#[tokio::test]
async fn ambiguous_context_is_refused_with_both_places() {
    let h = Harness::new();
    let before = "a\nsame\nsame\nb\nmid\nc\nd\nsame\nsame\ne\n";
    h.write("amb.txt", before);
    // Stated at line 5 ("mid"); `same/same` sits at lines 2 and 8, both 3 away.
    let diff = "--- a/amb.txt\n+++ b/amb.txt\n@@ -5,2 +5,2 @@\n same\n-same\n+other\n";
    let err = h.err("apply_patch", patch(diff)).await;
    assert!(err.contains("`amb.txt`: hunk 1 of 1 (`@@ -5,2 +5,2 @@`) is ambiguous"), "{err}");
    assert!(err.contains("match at line 2 and at line 8, equally far from line 5"), "{err}");
    assert!(err.ends_with("No file was changed."), "{err}");
    assert_eq!(h.read("amb.txt"), before);
    // The nearer of two matches wins when they are not equally far.
    let diff = "--- a/amb.txt\n+++ b/amb.txt\n@@ -6,2 +6,2 @@\n same\n-same\n+other\n";
    h.ok("apply_patch", patch(diff)).await;
    assert_eq!(h.read("amb.txt"), "a\nsame\nsame\nb\nmid\nc\nd\nsame\nother\ne\n");
}

#[tokio::test]
async fn a_failing_third_file_leaves_the_first_two_byte_identical() {
    let h = Harness::new();
    h.write("one.txt", "alpha\nbeta\n");
    h.write("two.txt", "gamma\r\ndelta\r\n");
    h.write("three.txt", "fn main() {\n    println!(\"hello\");\n    let x = 1;\n}\n");
    let before = tree(h.dir.path());
    let diff = "\
--- a/one.txt
+++ b/one.txt
@@ -1,2 +1,2 @@
-alpha
+ALPHA
 beta
--- /dev/null
+++ b/created.txt
@@ -0,0 +1 @@
+new
--- a/two.txt
+++ b/two.txt
@@ -1,2 +1,2 @@
 gamma
-delta
+DELTA
--- a/three.txt
+++ b/three.txt
@@ -1,4 +1,4 @@
 fn main() {
     println!(\"goodbye\");
-    let x = 1;
+    let x = 2;
 }
";
    let err = h.err("apply_patch", patch(diff)).await;
    assert_eq!(tree(h.dir.path()), before, "a failed patch changed files");
    assert!(err.contains("`three.txt`: hunk 1 of 1 (`@@ -1,4 +1,4 @@`) does not apply"), "{err}");
    // The message shows what was expected and the region that resembles it.
    assert!(err.contains("expected (4 lines, near line 1):\n        fn main() {\n        "), "{err}");
    assert!(err.contains("closest region in the file (lines 1-4, 3 of 4 lines equal"), "{err}");
    assert!(err.contains("      2!     println!(\"hello\");"), "{err}");
    assert!(err.contains("      3      let x = 1;"), "{err}");
    assert!(!err.contains("looks applied already"), "{err}");
}

#[tokio::test]
async fn reapplying_a_patch_says_it_looks_applied() {
    let h = Harness::new();
    h.write("r.txt", "a\nb\nc\n");
    let diff = "--- a/r.txt\n+++ b/r.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
    h.ok("apply_patch", patch(diff)).await;
    let again = h.err("apply_patch", patch(diff)).await;
    assert!(again.contains("is already at line 1: this change looks applied already"), "{again}");
    assert_eq!(h.read("r.txt"), "a\nB\nc\n");
}

#[tokio::test]
async fn crlf_files_stay_crlf_and_final_newlines_follow_the_patch() {
    let h = Harness::new();
    h.write("win.txt", "one\r\ntwo\r\nthree\r\n");
    h.write("tail.txt", "x\ny");
    h.write("keep.txt", "p\nq");
    let diff = "\
--- a/win.txt
+++ b/win.txt
@@ -1,3 +1,4 @@
 one
-two
+TWO
+two and a half
 three
--- a/tail.txt
+++ b/tail.txt
@@ -1,2 +1,2 @@
 x
-y
\\ No newline at end of file
+y
--- a/keep.txt
+++ b/keep.txt
@@ -1,2 +1,2 @@
-p
+P
 q
\\ No newline at end of file
";
    h.ok("apply_patch", patch(diff)).await;
    assert_eq!(h.read("win.txt"), "one\r\nTWO\r\ntwo and a half\r\nthree\r\n");
    // A patch written with CRLF itself: LF files stay LF, created files take CRLF.
    h.write("unix.txt", "a\nb\n");
    let crlf = "--- a/unix.txt\r\n+++ b/unix.txt\r\n@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+B\r\n--- /dev/null\r\n+++ b/dos.txt\r\n@@ -0,0 +1,2 @@\r\n+x\r\n+y\r\n";
    h.ok("apply_patch", patch(crlf)).await;
    assert_eq!(h.read("unix.txt"), "a\nB\n");
    assert_eq!(h.read("dos.txt"), "x\r\ny\r\n");
    assert_eq!(h.read("tail.txt"), "x\ny\n");
    assert_eq!(h.read("keep.txt"), "P\nq");
}

#[tokio::test]
async fn escapes_are_refused_before_anything_is_written() {
    let h = Harness::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim.txt"), "safe\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), h.path("link")).unwrap();
    h.write("a.txt", "a\n");
    let first = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+changed\n";
    let abs = outside.path().join("victim.txt").display().to_string();
    let cases = [
        ("--- /dev/null\n+++ b/../escaped.txt\n@@ -0,0 +1 @@\n+x\n".to_string(), "outside the workspace"),
        (format!("--- a/{abs}\n+++ b/{abs}\n@@ -1 +1 @@\n-safe\n+owned\n"), "outside the workspace"),
        ("--- /dev/null\n+++ b/link/new.txt\n@@ -0,0 +1 @@\n+x\n".to_string(), "symlink"),
        ("--- a/link/victim.txt\n+++ b/link/victim.txt\n@@ -1 +1 @@\n-safe\n+owned\n".to_string(), "symlink"),
        (
            "diff --git a/a.txt b/../moved.txt\nrename from a.txt\nrename to ../moved.txt\n".to_string(),
            "outside the workspace",
        ),
    ];
    for (bad, why) in cases {
        let err = h.err("apply_patch", patch(&format!("{first}{bad}"))).await;
        assert!(err.contains("refused") && err.contains(why), "{err}");
        assert_eq!(h.read("a.txt"), "a\n", "first file changed by a refused patch");
    }
    assert_eq!(tree(outside.path()), BTreeMap::from([("victim.txt".to_string(), b"safe\n".to_vec())]));
    assert!(!h.dir.path().parent().unwrap().join("escaped.txt").exists());
    assert!(!h.dir.path().parent().unwrap().join("moved.txt").exists());
}

#[tokio::test]
async fn existence_rules_are_explained() {
    let h = Harness::new();
    h.write("here.txt", "x\n");
    h.write("other.txt", "y\n");
    let create = h.err("apply_patch", patch("--- /dev/null\n+++ b/here.txt\n@@ -0,0 +1 @@\n+x\n")).await;
    assert!(create.contains("`here.txt` already exists"), "{create}");
    let modify = h.err("apply_patch", patch("--- a/gone.txt\n+++ b/gone.txt\n@@ -1 +1 @@\n-x\n+y\n")).await;
    assert!(modify.contains("`gone.txt` does not exist; to create it"), "{modify}");
    let delete = h.err("apply_patch", patch("--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")).await;
    assert!(delete.contains("`gone.txt` does not exist, so it cannot be deleted"), "{delete}");
    let onto = "diff --git a/here.txt b/other.txt\nrename from here.txt\nrename to other.txt\n";
    let rename = h.err("apply_patch", patch(onto)).await;
    assert!(rename.contains("cannot rename `here.txt` to `other.txt`: `other.txt` already exists"), "{rename}");
    let partial = h.err("apply_patch", patch("--- a/here.txt\n+++ /dev/null\n@@ -1,0 +0,0 @@\n")).await;
    assert!(partial.contains("would keep 1 line(s)"), "{partial}");
    let dir = h.err("apply_patch", patch("--- a/.\n+++ b/.\n@@ -1 +1 @@\n-x\n+y\n")).await;
    assert!(dir.contains("is a directory"), "{dir}");
    h.write("bin.dat", "a\0b\n");
    let binary = h.err("apply_patch", patch("--- a/bin.dat\n+++ b/bin.dat\n@@ -1 +1 @@\n-a\n+b\n")).await;
    assert!(binary.contains("binary"), "{binary}");
    assert_eq!((h.read("here.txt"), h.read("other.txt")), ("x\n".into(), "y\n".into()));
}

#[tokio::test]
async fn malformed_patches_get_precise_messages() {
    let h = Harness::new();
    h.write("m.txt", "one\ntwo\nthree\n");
    let cases: [(&str, &str); 9] = [
        ("", "no file headers found"),
        ("just some text\nwith no diff in it\n", "no file headers found"),
        ("--- a/m.txt\n+++ b/m.txt\n", "`m.txt` (line 1) has no hunks"),
        (
            "--- a/m.txt\nnot a plus line\n@@ -1 +1 @@\n-one\n+1\n",
            "line 1: `--- a/m.txt` must be followed by a `+++ b/path` line, found `not a plus line`",
        ),
        (
            "--- a/m.txt\n+++ b/m.txt\ngarbage here\n@@ -1 +1 @@\n-one\n+1\n",
            "`m.txt`: line 3: expected a hunk header `@@ -start,count +start,count @@`, found `garbage here`",
        ),
        (
            "--- a/m.txt\n+++ b/m.txt\n@@ -one +1 @@\n-one\n+1\n",
            "`m.txt`: line 3: malformed hunk header `@@ -one +1 @@`",
        ),
        ("@@ -1 +1 @@\n-one\n+1\n", "line 1: hunk header `@@ -1 +1 @@` comes before any file header"),
        (
            "--- a/m.txt\n+++ b/m.txt\n@@ -1,3 +1,3 @@\n-one\n+1\n two\n",
            "hunk 1 (`@@ -1,3 +1,3 @@`) ends early: its header promises 3 old and 3 new lines, but only 2 old and 2 new lines come before the end of the patch",
        ),
        (
            "--- a/m.txt\n+++ b/m.txt\n@@ -1,1 +1,2 @@\n-one\n-two\n+1\n+2\n",
            "hunk 1 (`@@ -1,1 +1,2 @@`) does not match its header: line 5 (`-two`) would be old line 2 but the header counts only 1",
        ),
    ];
    for (text, want) in cases {
        let err = h.err("apply_patch", patch(text)).await;
        assert!(err.contains(want), "patch {text:?}\n want: {want}\n got: {err}");
        assert!(err.ends_with("No file was changed."), "{err}");
    }
    // A hunk cut short by the next file's header names that line.
    let cut = "--- a/m.txt\n+++ b/m.txt\n@@ -1,2 +1,2 @@\n-one\n+1\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
    let err = h.err("apply_patch", patch(cut)).await;
    assert!(err.contains("only 1 old and 1 new lines come before line 6 (`--- a/x`)"), "{err}");
    // Too many lines after a complete hunk: the counts are wrong, not the patch's end.
    let extra = "--- a/m.txt\n+++ b/m.txt\n@@ -1,2 +1,2 @@\n-one\n+1\n two\n three\n";
    let err = h.err("apply_patch", patch(extra)).await;
    assert!(err.contains("hunk 1 (`@@ -1,2 +1,2 @@`) has more lines than its header counts"), "{err}");
    assert!(err.contains("line 7 (` three`) continues it"), "{err}");
    let binary = h
        .err(
            "apply_patch",
            patch("diff --git a/p.png b/p.png\nindex 1..2 100644\nBinary files a/p.png and b/p.png differ\n"),
        )
        .await;
    assert!(binary.contains("binary patches are not supported"), "{binary}");
    assert_eq!(h.read("m.txt"), "one\ntwo\nthree\n");
}

#[tokio::test]
async fn plan_mode_refuses_and_writes_nothing() {
    let h = Harness::with_mode(Mode::Plan);
    h.write("p.txt", "a\n");
    let err = h.err("apply_patch", patch("--- a/p.txt\n+++ b/p.txt\n@@ -1 +1 @@\n-a\n+b\n")).await;
    assert!(err.contains("plan mode"), "{err}");
    assert_eq!(h.read("p.txt"), "a\n");
}

#[tokio::test]
async fn bad_arguments_are_rejected_by_the_schema() {
    let h = Harness::new();
    let wrong = h.err("apply_patch", json!({"patch": 3})).await;
    assert!(wrong.contains("`patch`") && wrong.contains("expected string"), "{wrong}");
    let missing = h.err("apply_patch", json!({})).await;
    assert!(missing.contains("missing required field `patch`"), "{missing}");
    let extra = h.err("apply_patch", json!({"patch": "x", "path": "y"})).await;
    assert!(extra.contains("path"), "{extra}");
}

/// A failure during the writes (here: a directory is needed where the patch
/// just wrote a file) rolls back the files already written.
#[tokio::test]
async fn a_write_failure_midway_rolls_back_what_was_written() {
    let h = Harness::new();
    h.write("a.txt", "a\n");
    h.write("b.txt", "b\n");
    h.write("z.txt", "z\n");
    let before = tree(h.dir.path());
    let diff = "\
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-a
+A
--- a/b.txt
+++ b/b.txt
@@ -1 +1 @@
-b
+B
--- /dev/null
+++ b/c
@@ -0,0 +1 @@
+file c
--- /dev/null
+++ b/c/d/inner.txt
@@ -0,0 +1 @@
+inner
--- a/z.txt
+++ /dev/null
@@ -1 +0,0 @@
-z
";
    let err = h.err("apply_patch", patch(diff)).await;
    assert!(err.contains("cannot write `c/d/inner.txt`"), "{err}");
    assert!(err.contains("the 3 file change(s) already made were rolled back"), "{err}");
    assert_eq!(tree(h.dir.path()), before);
    assert!(!h.path("c").exists());
}

/// The same, through a read-only directory: the write of an existing file fails
/// with an OS error (a failure the other test's layout cannot give). Root
/// ignores permission bits, and CI runs as root: there the test runs itself
/// again in a child process as `nobody`, where they bind.
#[tokio::test]
async fn a_read_only_directory_midway_rolls_back() {
    if crate::test_support::permission_bits_are_ignored() {
        return crate::test_support::run_this_test_as_nobody();
    }
    let h = Harness::new();
    h.write("a.txt", "a\n");
    h.write("ro/r.txt", "r\n");
    let ro = h.path("ro");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = tree(h.dir.path());
    let diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/ro/r.txt\n+++ b/ro/r.txt\n@@ -1 +1 @@\n-r\n+R\n";
    let err = h.err("apply_patch", patch(diff)).await;
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(err.contains("cannot write `ro/r.txt`: permission denied"), "{err}");
    assert_eq!(tree(h.dir.path()), before);
}

#[tokio::test]
async fn sections_on_the_same_file_apply_in_order() {
    let h = Harness::new();
    h.write("s.txt", "1\n2\n3\n");
    let diff = "--- a/s.txt\n+++ b/s.txt\n@@ -1 +1 @@\n-1\n+one\n--- a/s.txt\n+++ b/s.txt\n@@ -3 +3 @@\n-3\n+three\ndiff --git a/s.txt b/t.txt\nrename from s.txt\nrename to t.txt\n";
    let out = h.ok("apply_patch", patch(diff)).await;
    assert_eq!(h.read("t.txt"), "one\n2\nthree\n");
    assert!(!h.path("s.txt").exists());
    assert!(out.contains("renamed  s.txt -> t.txt"), "{out}");
    let copy = "diff --git a/t.txt b/u.txt\nsimilarity index 70%\ncopy from t.txt\ncopy to u.txt\n--- a/t.txt\n+++ b/u.txt\n@@ -2 +2 @@\n-2\n+two\n";
    let out = h.ok("apply_patch", patch(copy)).await;
    assert!(out.contains("copied   t.txt -> u.txt (+1 -1)"), "{out}");
    assert_eq!((h.read("t.txt"), h.read("u.txt")), ("one\n2\nthree\n".into(), "one\ntwo\nthree\n".into()));
}

#[tokio::test]
async fn links_are_not_deleted_or_renamed_through() {
    let h = Harness::new();
    h.write("target.txt", "t\n");
    std::os::unix::fs::symlink("target.txt", h.path("alias.txt")).unwrap();
    let err = h.err("apply_patch", patch("--- a/alias.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-t\n")).await;
    assert!(err.contains("`alias.txt` is a symbolic link"), "{err}");
    assert_eq!(h.read("target.txt"), "t\n");
    // Editing through an in-workspace link edits its target and keeps the link.
    h.ok("apply_patch", patch("--- a/alias.txt\n+++ b/alias.txt\n@@ -1 +1 @@\n-t\n+T\n")).await;
    assert_eq!(h.read("target.txt"), "T\n");
    assert!(std::fs::symlink_metadata(h.path("alias.txt")).unwrap().file_type().is_symlink());
}

#[tokio::test]
async fn the_begin_patch_envelope_is_named() {
    let h = Harness::new();
    let err = h.err("apply_patch", patch("*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n")).await;
    assert!(err.contains("`*** Begin Patch` envelope format, not a unified diff"), "{err}");
}

#[tokio::test]
async fn a_multibyte_header_is_an_error_not_a_crash() {
    let h = Harness::new();
    let patch = "diff --git a/xé b/y\n--- a/xé\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n";
    let result = h.call("apply_patch", json!({ "patch": patch })).await;
    assert!(result.is_error, "{}", result.content_text());
}
