#![allow(clippy::unwrap_used, clippy::expect_used)]

use quiver_engine::spill::{SpillConfig, SpillStore};
use serde_json::json;

use crate::test_support::Harness;

/// A harness whose spill files go to a folder of its own temp dir.
fn harness(threshold: usize) -> Harness {
    let h = Harness::new();
    let root = h.dir.path().join(".spill");
    h.ctx.session.state::<SpillStore>().configure(SpillConfig { root, threshold_bytes: threshold });
    h
}

/// 3000 lines of about 40 bytes: read_file's answer (~100 KB) is over the real bound.
async fn spilled_read(h: &Harness) -> quiver_engine::ToolResult {
    let text: String = (1..=3000).map(|i| format!("row {i} value={} {}\n", i * 7, "pad".repeat(5))).collect();
    h.write("big.txt", &text);
    h.call("read_file", json!({"path": "big.txt", "limit": 3000})).await
}

#[tokio::test]
async fn a_large_output_is_spilled_and_read_back() {
    let h = harness(quiver_engine::spill::DEFAULT_SPILL_THRESHOLD);
    let result = spilled_read(&h).await;
    assert!(!result.is_error);
    let summary = result.content_text();
    assert!(summary.contains("handle `out_1`") && summary.contains("3000 lines"), "{summary}");
    assert!(summary.contains("row 60 ") && !summary.contains("row 61 ") && summary.contains("row 3000 "));
    assert_eq!(result.metadata["spilled"]["handle"], "out_1");
    assert_eq!(result.metadata["total_lines"], 3000, "read_file's metadata is kept");

    let head = h.ok("retrieve_tool_result", json!({"handle": "out_1", "mode": "head", "limit": 3})).await;
    assert_eq!(head.lines().count(), 3);
    assert!(head.starts_with("     1\t     1\trow 1 value=7 "), "{head}");

    let tail = h.call("retrieve_tool_result", json!({"handle": "out_1", "mode": "tail", "limit": 2})).await;
    let tail_text = tail.content_text();
    assert!(tail_text.starts_with("  2999\t  2999\trow 2999 ") && tail_text.contains("  3000\t  3000\trow 3000 "));
    assert_eq!(tail.metadata["first_line"], 2999);
    assert_eq!(tail.metadata["total_lines"], 3000);

    let lines =
        h.ok("retrieve_tool_result", json!({"handle": "out_1", "mode": "lines", "offset": 100, "limit": 3})).await;
    assert_eq!(lines.lines().count(), 3);
    assert!(lines.starts_with("   100\t   100\trow 100 value=700 "), "{lines}");
    // The words before one vocabulary (1-based, inclusive end), as recorded calls say.
    let old = h.ok("retrieve_tool_result", json!({"handle": "out_1", "mode": "lines", "start": 100, "end": 102})).await;
    assert_eq!(old, lines);
    let old_head = h.ok("retrieve_tool_result", json!({"handle": "out_1", "mode": "head", "n": 3})).await;
    assert_eq!(old_head, head);
    let clamped =
        h.ok("retrieve_tool_result", json!({"handle": "out_1", "mode": "lines", "offset": 2999, "limit": 2002})).await;
    assert_eq!(clamped.lines().count(), 2);
    let old_clamped =
        h.ok("retrieve_tool_result", json!({"handle": "out_1", "mode": "lines", "start": 2999, "end": 5000})).await;
    assert_eq!(old_clamped, clamped);

    let found =
        h.call("retrieve_tool_result", json!({"handle": "out_1", "mode": "query", "query": "value=(700|7000) "})).await;
    let text = found.content_text();
    assert_eq!(found.metadata["matches"], 2);
    assert!(text.contains("   100:   100\trow 100 value=700 "), "{text}");
    assert!(text.contains("    98-") && text.contains("   102-") && text.contains("--\n"), "{text}");
    assert!(text.contains("  1000:  1000\trow 1000 value=7000 "), "{text}");

    let none = h.ok("retrieve_tool_result", json!({"handle": "out_1", "mode": "query", "query": "nothing here"})).await;
    assert!(none.contains("no line matches"), "{none}");
    let summary_again = h.ok("retrieve_tool_result", json!({"handle": "out_1", "mode": "summary"})).await;
    assert_eq!(summary_again, summary);
}

#[tokio::test]
async fn queries_and_windows_are_bounded() {
    let h = harness(quiver_engine::spill::DEFAULT_SPILL_THRESHOLD);
    spilled_read(&h).await;
    let many =
        h.call("retrieve_tool_result", json!({"handle": "out_1", "mode": "query", "query": "row", "limit": 5})).await;
    assert_eq!(many.metadata["matches"], 3000);
    assert_eq!(many.metadata["shown_matches"], 5);
    assert!(many.content_text().contains("2995 more matching lines (next at line 6)"), "{}", many.content_text());

    let long: String = (1..=1000).map(|i| format!("{i} {}\n", "w".repeat(300))).collect();
    h.write("long.txt", &long);
    h.call("read_file", json!({"path": "long.txt"})).await;
    let window =
        h.call("retrieve_tool_result", json!({"handle": "out_2", "mode": "lines", "offset": 1, "limit": 1000})).await;
    let text = window.content_text();
    assert!(text.len() < 26 * 1024, "{} bytes", text.len());
    assert!(text.contains("output bounded at 24 KiB; continue with offset="), "{}", &text[text.len() - 200..]);
}

#[tokio::test]
async fn evidence_answers_are_never_spilled_again() {
    let h = harness(2000);
    spilled_read(&h).await;
    let result = h.call("retrieve_tool_result", json!({"handle": "out_1", "mode": "head", "limit": 200})).await;
    assert!(result.content_text().len() > 2000);
    assert!(!result.metadata.contains_key("spilled"));
    assert_eq!(h.ctx.session.state::<SpillStore>().handles(), vec!["out_1"]);
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = harness(quiver_engine::spill::DEFAULT_SPILL_THRESHOLD);
    let empty = h.err("retrieve_tool_result", json!({"handle": "out_1", "mode": "head"})).await;
    assert!(empty.contains("no spilled outputs"), "{empty}");
    spilled_read(&h).await;
    let call = |args| async { h.err("retrieve_tool_result", args).await };
    let unknown = call(json!({"handle": "out_7", "mode": "head"})).await;
    assert!(unknown.contains("unknown handle `out_7`") && unknown.contains("out_1"), "{unknown}");
    assert!(call(json!({"handle": "var_1", "mode": "head"})).await.contains("handle_read"));
    assert!(call(json!({"handle": "out_1", "mode": "lines"})).await.contains("needs `offset`"));
    assert!(call(json!({"handle": "out_1", "mode": "lines", "offset": 0})).await.contains("minimum of 1"));
    assert!(
        call(json!({"handle": "out_1", "mode": "lines", "offset": 3001})).await.contains("past the end (3000 lines)")
    );
    assert!(call(json!({"handle": "out_1", "mode": "lines", "start": 9, "end": 3})).await.contains("before `start`"));
    assert!(
        call(json!({"handle": "out_1", "mode": "lines", "offset": 1, "limit": 1001})).await.contains("at most 1000")
    );
    assert!(call(json!({"handle": "out_1", "mode": "head", "limit": 0})).await.contains("minimum of 1"));
    assert!(call(json!({"handle": "out_1", "mode": "tail", "limit": 1001})).await.contains("between 1 and 1000"));
    // An old window and a new count that disagree.
    let clash = call(json!({"handle": "out_1", "mode": "lines", "start": 1, "end": 10, "limit": 5})).await;
    assert!(clash.contains("`end` is the former name of `limit`") && clash.contains("read as `limit`: 10"), "{clash}");
    let bad_regex = call(json!({"handle": "out_1", "mode": "query", "query": "(unclosed"})).await;
    assert!(bad_regex.contains("invalid regex"), "{bad_regex}");
    assert!(call(json!({"handle": "out_1", "mode": "query"})).await.contains("needs `query`"));
    assert!(call(json!({"handle": "out_1", "mode": "head", "offset": 3})).await.contains("applies to mode lines"));
    assert!(call(json!({"handle": "out_1", "mode": "summary", "query": "x"})).await.contains("applies to mode query"));
    assert!(call(json!({"handle": "out_1", "mode": "summary", "limit": 3})).await.contains("`limit` applies"));
    let bad_mode = call(json!({"handle": "out_1", "mode": "middle"})).await;
    assert!(bad_mode.contains("mode"), "{bad_mode}");
    let missing = call(json!({"handle": "out_1"})).await;
    assert!(missing.contains("mode"), "{missing}");
    let wrong_type = call(json!({"handle": 1, "mode": "head"})).await;
    assert!(wrong_type.contains("handle"), "{wrong_type}");

    let path = h.ctx.session.state::<SpillStore>().get("out_1").unwrap().path;
    std::fs::remove_file(path).unwrap();
    assert!(call(json!({"handle": "out_1", "mode": "head"})).await.contains("cannot be read"));
}
