#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use quiver_engine::spill::{SpillConfig, SpillStore};
use serde_json::json;

use crate::test_support::{Harness, PATIENCE};
use crate::web::test_server::{Route, TestServer};

const PAGE: &str = r#"<!DOCTYPE html><html><head><title>T</title><style>body{color:red}</style>
<script>var secret = "do not show";</script></head><body>
<h1>Quiver docs</h1><p>Tools for <b>agents</b>, see <a href="/guide">the guide</a>.</p>
<ul><li>first item</li><li>second item</li></ul></body></html>"#;

async fn server() -> TestServer {
    TestServer::start(vec![
        ("/page", Route::ok("text/html; charset=utf-8", PAGE)),
        ("/data", Route::ok("application/json", r#"{"b":[1,2],"a":{"x":true}}"#)),
        ("/plain", Route::ok("text/plain", "line one\nline two\n")),
        ("/endless", Route::ok("text/plain", "start:").endless()),
        // Answers long after any test ends: only a timeout can end a fetch of it.
        ("/slow", Route::ok("text/plain", "late").delayed(Duration::from_secs(600))),
        ("/image", Route::ok("image/png", b"\x89PNG\r\n\x1a\n\0\0\0".to_vec())),
        ("/mystery", Route { status: 200, body: b"MZ\0\0\x01\x02binary".to_vec(), ..Route::default() }),
        ("/gone", Route::ok("text/html", "<html><body><p>Gone for good</p></body></html>").status(410)),
        ("/old", Route::redirect("/page")),
        ("/loop", Route::redirect("/loop")),
        ("/to-file", Route::redirect("file:///etc/passwd")),
        ("/to-metadata", Route::redirect("http://169.254.169.254/latest/meta-data/iam/security-credentials/")),
    ])
    .await
}

#[tokio::test]
async fn html_becomes_readable_text() {
    let s = server().await;
    let h = Harness::new();
    let result = h.call("fetch_url", json!({"url": s.url("/page")})).await;
    let text = result.content_text();
    assert!(!result.is_error, "{text}");
    assert!(text.contains("# Quiver docs"), "{text}");
    assert!(text.contains("**agents**") && text.contains("* first item") && text.contains("* second item"), "{text}");
    assert!(text.contains("[the guide][1]") && text.contains(&format!("[1]: {}", s.url("/guide"))), "{text}");
    assert!(!text.contains("do not show") && !text.contains("color:red") && !text.contains("<p>"), "{text}");
    assert_eq!(result.metadata["status"], 200);
    assert_eq!(result.metadata["content_type"], "text/html; charset=utf-8");
    assert_eq!(result.metadata["final_url"], s.url("/page"));
    assert_eq!(result.metadata["bytes"], PAGE.len());
    assert_eq!(result.metadata["truncated"], false);

    let raw = h.ok("fetch_url", json!({"url": s.url("/page"), "raw": true})).await;
    assert_eq!(raw, PAGE);
}

#[tokio::test]
async fn json_is_pretty_printed_and_text_kept() {
    let s = server().await;
    let h = Harness::new();
    let json_text = h.ok("fetch_url", json!({"url": s.url("/data")})).await;
    assert_eq!(json_text, "{\n  \"a\": {\n    \"x\": true\n  },\n  \"b\": [\n    1,\n    2\n  ]\n}");
    let raw = h.ok("fetch_url", json!({"url": s.url("/data"), "raw": true})).await;
    assert_eq!(raw, r#"{"b":[1,2],"a":{"x":true}}"#);
    assert_eq!(h.ok("fetch_url", json!({"url": s.url("/plain")})).await, "line one\nline two\n");
}

#[tokio::test]
async fn a_body_over_max_bytes_is_cut_while_streaming() {
    let s = server().await;
    let h = Harness::new();
    // The body never ends, so returning at all shows the cut; the ceiling only
    // turns a hang into a failure.
    let call = h.call("fetch_url", json!({"url": s.url("/endless"), "max_bytes": 10_000}));
    let result = tokio::time::timeout(PATIENCE, call).await.expect("the endless body was not cut");
    assert!(!result.is_error, "{}", result.content_text());
    assert_eq!(result.metadata["truncated"], true);
    assert_eq!(result.metadata["bytes"], 10_000);
    let text = result.content_text();
    assert!(text.starts_with("start:zzz") && text.contains("[truncated: stopped reading after 10000 bytes"), "{text}");
}

#[tokio::test]
async fn slow_servers_time_out() {
    let s = server().await;
    let h = Harness::new();
    // `/slow` answers after ten minutes: an error within the ceiling can only
    // come from the 300 ms timeout, however loaded the machine.
    let call = h.err("fetch_url", json!({"url": s.url("/slow"), "timeout_ms": 300}));
    let err = tokio::time::timeout(PATIENCE, call).await.expect("the timeout did not end the fetch");
    assert!(err.contains("timed out after 300 ms") && err.contains("timeout_ms"), "{err}");
}

#[tokio::test]
async fn errors_binary_and_redirects_are_reported() {
    let s = server().await;
    let h = Harness::new();
    let missing = h.err("fetch_url", json!({"url": s.url("/nope")})).await;
    assert!(missing.starts_with("HTTP 404 Not Found from ") && missing.contains("no such page"), "{missing}");
    assert!(!missing.contains("<p>"), "{missing}");
    let gone = h.err("fetch_url", json!({"url": s.url("/gone")})).await;
    assert!(gone.contains("HTTP 410") && gone.contains("Gone for good"), "{gone}");

    let image = h.err("fetch_url", json!({"url": s.url("/image")})).await;
    assert!(image.contains("binary content (image/png)"), "{image}");
    let mystery = h.err("fetch_url", json!({"url": s.url("/mystery")})).await;
    assert!(mystery.contains("binary content (no content type"), "{mystery}");

    let moved = h.call("fetch_url", json!({"url": s.url("/old")})).await;
    assert_eq!(moved.metadata["final_url"], s.url("/page"));
    assert!(moved.content_text().contains("Quiver docs"));
    let looping = h.err("fetch_url", json!({"url": s.url("/loop")})).await;
    assert!(looping.contains("more than 5 redirects"), "{looping}");
    let to_file = h.err("fetch_url", json!({"url": s.url("/to-file")})).await;
    assert!(to_file.contains("HTTP 302") && to_file.contains("`file:///etc/passwd` not followed"), "{to_file}");
    assert!(s.requests().iter().filter(|r| r.as_str() == "/loop").count() <= 6);

    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let refused = h.err("fetch_url", json!({"url": format!("http://127.0.0.1:{port}/")})).await;
    assert!(refused.contains("could not connect"), "{refused}");
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::new();
    let file = h.err("fetch_url", json!({"url": "file:///etc/passwd"})).await;
    assert!(file.contains("only http and https") && file.contains("`file` scheme"), "{file}");
    assert!(h.err("fetch_url", json!({"url": "ftp://example.com/x"})).await.contains("`ftp` scheme"));
    assert!(h.err("fetch_url", json!({"url": "not a url"})).await.contains("not a valid URL"));
    assert!(h.err("fetch_url", json!({"url": "http://127.0.0.1:9/", "max_bytes": 0})).await.contains("max_bytes"));
    assert!(h.err("fetch_url", json!({"url": "http://127.0.0.1:9/", "timeout_ms": 0})).await.contains("timeout_ms"));
    let wrong_type = h.err("fetch_url", json!({"url": 5})).await;
    assert!(wrong_type.contains("`url`") && wrong_type.contains("string"), "{wrong_type}");
    assert!(h.err("fetch_url", json!({"url": "http://x", "method": "POST"})).await.contains("method"));
    assert!(h.err("fetch_url", json!({})).await.contains("url"));
}

#[tokio::test]
async fn a_large_json_answer_is_spilled_and_projected() {
    let items: Vec<_> = (0..3000).map(|i| json!({"id": i, "name": format!("item-{i}"), "even": i % 2 == 0})).collect();
    let body = json!({"items": items}).to_string();
    let s = TestServer::start(vec![("/big", Route::ok("application/json", body))]).await;
    let h = Harness::new();
    let root = h.dir.path().join(".spill");
    h.ctx.session.state::<SpillStore>().configure(SpillConfig { root, threshold_bytes: 32 * 1024 });
    let result = h.call("fetch_url", json!({"url": s.url("/big")})).await;
    let spilled = &result.metadata["spilled"];
    assert_eq!(spilled["handle"], "out_1");
    assert_eq!(spilled["var_handle"], "var_1");
    assert_eq!(result.metadata["status"], 200, "fetch_url's own metadata is kept");

    let name = h.call("handle_read", json!({"handle": "var_1", "op": "jsonpath", "path": "$.items[2999].name"})).await;
    assert_eq!(name.content["matches"][0]["value"], "item-2999");
    let count =
        h.call("handle_read", json!({"handle": "var_1", "op": "jsonpath", "path": "$.items[?@.even == true]"})).await;
    assert_eq!(count.content["count"], 1500);
    let found = h.ok("retrieve_tool_result", json!({"handle": "out_1", "mode": "query", "query": "item-2999\""})).await;
    assert!(found.contains("\"name\": \"item-2999\""), "{found}");
}

/// fetch_url runs outside the sandbox: a cloud machine's metadata service
/// (its credentials, at a link-local address) must stay out of its reach,
/// by address, through a redirect, or by name.
#[tokio::test]
async fn cloud_metadata_addresses_are_never_fetched() {
    let h = Harness::new();
    for url in [
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://169.254.170.2/v2/credentials",
        "http://[fe80::1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://[fd00:ec2::254]/latest/meta-data/",
    ] {
        let refused = h.err("fetch_url", json!({"url": url, "timeout_ms": 2000})).await;
        assert!(refused.contains("link-local"), "{url}: {refused}");
    }
    let s = server().await;
    let redirected = h.err("fetch_url", json!({"url": s.url("/to-metadata"), "timeout_ms": 2000})).await;
    assert!(redirected.contains("link-local"), "{redirected}");
    // Other hosts, the loopback included, are not affected.
    assert!(h.call("fetch_url", json!({"url": s.url("/plain")})).await.content_text().contains("line one"));
}

#[test]
fn link_local_addresses_are_forbidden_and_others_not() {
    use crate::web::metadata_guard::forbidden;
    for ip in ["169.254.169.254", "169.254.0.1", "fe80::1", "febf::1", "::ffff:169.254.169.254", "fd00:ec2::254"] {
        assert!(forbidden(ip.parse().unwrap()), "{ip}");
    }
    for ip in ["127.0.0.1", "10.0.0.1", "192.168.1.1", "8.8.8.8", "::1", "fec0::1", "fd00::1", "2001:db8::1"] {
        assert!(!forbidden(ip.parse().unwrap()), "{ip}");
    }
}
