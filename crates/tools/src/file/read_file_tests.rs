use serde_json::json;

use crate::test_support::Harness;

#[tokio::test]
async fn reads_with_line_numbers_and_window() {
    let h = Harness::new();
    h.write("a.txt", "one\ntwo\nthree\nfour\n");
    let all = h.ok("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(all, "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n");
    let window = h.ok("read_file", json!({"path": "a.txt", "offset": 2, "limit": 2})).await;
    assert_eq!(window, "     2\ttwo\n     3\tthree\n… 1 more lines; continue with offset=4\n");
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::new();
    h.write("a.txt", "x\n");
    h.write("bin", "a\0b");
    assert!(h.err("read_file", json!({"path": "missing.txt"})).await.contains("no such file"));
    assert!(h.err("read_file", json!({"path": "a.txt", "offset": 0})).await.contains("1-based"));
    assert!(h.err("read_file", json!({"path": "a.txt", "offset": 9})).await.contains("past the end"));
    assert!(h.err("read_file", json!({"path": "bin"})).await.contains("binary"));
    assert!(h.err("read_file", json!({"path": "."})).await.contains("directory"));
    assert!(h.err("read_file", json!({"path": "../x"})).await.contains("outside the workspace"));
    assert!(h.err("read_file", json!({"path": "a.txt", "pages": "1"})).await.contains("PDF"));
    let fifo = std::process::Command::new("mkfifo").arg(h.path("pipe")).status().unwrap();
    assert!(fifo.success());
    assert!(h.err("read_file", json!({"path": "pipe"})).await.contains("not a regular file"));
    let wrong_type = h.err("read_file", json!({"path": 7})).await;
    assert!(wrong_type.contains("`path`") && wrong_type.contains("expected string"), "{wrong_type}");
    let missing = h.err("read_file", json!({})).await;
    assert!(missing.contains("missing required field `path`"), "{missing}");
}

#[tokio::test]
async fn reads_pdf_pages_when_pdftotext_exists() {
    if !quiver_testkit::pdftotext_or_skip() {
        return;
    }
    let h = Harness::new();
    std::fs::write(h.path("doc.pdf"), crate::test_support::two_page_pdf()).unwrap();
    let page2 = h.ok("read_file", json!({"path": "doc.pdf", "pages": "2"})).await;
    assert!(page2.contains("Second page"), "{page2}");
    assert!(!page2.contains("First page"), "{page2}");
    let bad = h.err("read_file", json!({"path": "doc.pdf", "pages": "3-1"})).await;
    assert!(bad.contains("pages"), "{bad}");
}
