use quiver_engine::Mode;
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
    assert!(
        h.err("read_file", json!({"path": "a.txt", "offset": 0}))
            .await
            .contains("`offset`: 0 is less than the minimum of 1")
    );
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

/// pdftotext passes the command gate like every tool's process: a deny rule
/// on it refuses the PDF read in every mode (it ran ungated before).
#[tokio::test]
async fn pdftotext_goes_through_the_command_gate() {
    if !quiver_testkit::pdftotext_or_skip() {
        return;
    }
    for mode in [Mode::Plan, Mode::Agent, Mode::Yolo] {
        let h = Harness::with_manifest(mode, "[exec_policy]\ndeny_prefixes = [\"pdftotext\"]\n");
        std::fs::write(h.path("doc.pdf"), crate::test_support::two_page_pdf()).unwrap();
        let err = h.err("read_file", json!({"path": "doc.pdf"})).await;
        assert!(err.contains("deny rule"), "{mode}: {err}");
    }
}

/// A PNG's signature and IHDR chunk (2 x 3 pixels), enough for type and size.
fn png_header() -> Vec<u8> {
    let mut bytes = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
    bytes.extend_from_slice(b"IHDR");
    bytes.extend_from_slice(&2u32.to_be_bytes());
    bytes.extend_from_slice(&3u32.to_be_bytes());
    bytes.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    bytes
}

#[tokio::test]
async fn images_come_back_as_image_blocks() {
    use base64::Engine as _;
    let h = Harness::new();
    let png = png_header();
    std::fs::write(h.path("shot.png"), &png).unwrap();
    let r = h.call("read_file", json!({"path": "shot.png"})).await;
    assert!(!r.is_error, "{}", r.content_text());
    assert_eq!(r.blocks.len(), 2, "{:?}", r.blocks);
    assert_eq!(r.blocks[1]["type"], "image");
    assert_eq!(r.blocks[1]["mimeType"], "image/png");
    let data = base64::engine::general_purpose::STANDARD.decode(r.blocks[1]["data"].as_str().unwrap()).unwrap();
    assert_eq!(data, png);
    // A text reader gets the description and a stand-in, never the bytes.
    let text = r.content_text();
    assert!(text.starts_with("`shot.png`: image/png, 33 bytes, 2x3\n\n[image image/png"), "{text}");
    assert_eq!(r.images().len(), 1);

    // The type comes from the bytes: a `.png` holding text is text; a GIF named .bin is an image.
    h.write("fake.png", "not an image\n");
    assert_eq!(h.ok("read_file", json!({"path": "fake.png"})).await, "     1\tnot an image\n");
    let mut gif = b"GIF89a".to_vec();
    gif.extend_from_slice(&[4, 0, 5, 0, 0, 0, 0]);
    std::fs::write(h.path("anim.bin"), &gif).unwrap();
    let r = h.call("read_file", json!({"path": "anim.bin"})).await;
    assert_eq!(r.blocks[1]["mimeType"], "image/gif");
    assert!(r.content_text().contains("4x5"), "{}", r.content_text());

    // A window of an image is a mistake worth naming.
    assert!(h.err("read_file", json!({"path": "shot.png", "offset": 2})).await.contains("is an image"));
}
