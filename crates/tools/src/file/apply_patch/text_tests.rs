#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::super::parse::parse;
use super::*;

fn apply(content: &str, patch: &str) -> Result<(String, Vec<HunkNote>), String> {
    let files = parse(patch).map_err(|e| e.to_string())?;
    let lines = split_lines(content.as_bytes());
    let eol = dominant_eol(&lines);
    apply_hunks("f", lines, &files[0].hunks, eol)
        .map(|(lines, notes)| (String::from_utf8(join_lines(&lines)).unwrap(), notes))
        .map_err(|e| e.to_string())
}

#[test]
fn lines_round_trip_byte_for_byte() {
    for text in ["", "a", "a\n", "a\r\nb\n", "a\rb\r\n\r\n", "\n\n", "x\r\ny"] {
        assert_eq!(join_lines(&split_lines(text.as_bytes())), text.as_bytes());
    }
    assert_eq!(dominant_eol(&split_lines(b"a\r\nb\r\nc\n")), Eol::CrLf);
    assert_eq!(dominant_eol(&split_lines(b"a\r\nb\nc\n")), Eol::Lf);
    assert_eq!(dominant_eol(&split_lines(b"")), Eol::Lf);
}

#[test]
fn the_nearest_match_wins_and_later_hunks_follow_the_drift() {
    let content = "x\nx\nk\nx\nx\nx\nk\nx\n";
    // Stated at line 6: `k` occurs at lines 3 and 7; line 7 is nearer.
    let (out, notes) = apply(content, "--- a/f\n+++ b/f\n@@ -6 +6 @@\n-k\n+K\n").unwrap();
    assert_eq!(out, "x\nx\nk\nx\nx\nx\nK\nx\n");
    assert_eq!((notes[0].at, notes[0].stated), (7, 6));
}

#[test]
fn pure_insertions_go_where_the_header_says() {
    let (out, _) = apply("a\nb\n", "--- a/f\n+++ b/f\n@@ -1,0 +2 @@\n+between\n").unwrap();
    assert_eq!(out, "a\nbetween\nb\n");
    let (out, _) = apply("a\nb\n", "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+top\n").unwrap();
    assert_eq!(out, "top\na\nb\n");
    let err = apply("a\n", "--- a/f\n+++ b/f\n@@ -5,0 +6 @@\n+far\n").unwrap_err();
    assert!(err.contains("inserts after line 5 but the file has only 1 lines"), "{err}");
}

#[test]
fn final_newline_changes_follow_the_markers() {
    // Appending after a last line that had no newline gives it one.
    let (out, _) =
        apply("a\nb", "--- a/f\n+++ b/f\n@@ -2 +2,2 @@\n-b\n\\ No newline at end of file\n+b\n+c\n").unwrap();
    assert_eq!(out, "a\nb\nc\n");
    let (out, _) = apply("a\nb\n", "--- a/f\n+++ b/f\n@@ -2 +2 @@\n-b\n+b\n\\ No newline at end of file\n").unwrap();
    assert_eq!(out, "a\nb");
}

#[test]
fn an_absent_hunk_reports_when_nothing_resembles_it() {
    let err = apply("a\nb\n", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-zzz\n-yyy\n+q\n+r\n").unwrap_err();
    assert!(err.contains("`f`: hunk 1 of 1 (`@@ -1,2 +1,2 @@`) does not apply"), "{err}");
    assert!(err.contains("no line of the hunk occurs in the file (2 lines)"), "{err}");
}

#[test]
fn zero_context_hunks_follow_the_drift_of_the_previous_hunk() {
    // `diff -U0` style: hunk 1 is found 2 lines lower, so the bare insertion is too.
    let patch = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-b\n+B\n@@ -3,0 +4 @@\n+after d\n";
    let (out, notes) = apply("x\ny\nb\nc\nd\ne\n", patch).unwrap();
    assert_eq!(out, "x\ny\nB\nc\nd\nafter d\ne\n");
    assert_eq!((notes[1].at, notes[1].stated), (6, 4));
}
