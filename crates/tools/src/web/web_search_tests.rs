#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;

use crate::test_support::Harness;
use crate::web::search::{DuckDuckGoHtml, JsonSearch, WebSearchSettings, backend_from, parse_duckduckgo};
use crate::web::test_server::{Route, TestServer};

/// Shaped like DuckDuckGo's HTML endpoint: an ad first, redirect-wrapped links,
/// entities and markup inside titles and snippets.
const DDG_PAGE: &str = r##"<!DOCTYPE html><html><body><div class="serp__results"><div id="links" class="results">
<div class="result results_links results_links_deep result--ad ">
  <div class="links_main links_deep result__body"><h2 class="result__title">
  <a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=ads.example&amp;u3=x">Buy things</a></h2>
  <a class="result__snippet" href="https://duckduckgo.com/y.js?u3=x">An advert</a></div></div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body"><h2 class="result__title">
  <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Ftokio.rs%2Ftokio%2Ftutorial&amp;rut=abc">Tokio &amp; <b>async</b> Rust</a></h2>
  <div class="result__extras"><a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Ftokio.rs%2F">tokio.rs</a></div>
  <a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">Tokio is an <b>asynchronous</b>
     runtime for Rust.</a><div class="clear"></div></div></div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body"><h2 class="result__title">
  <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Frust-lang.github.io%2Fasync-book%2F&amp;rut=def">Asynchronous Programming in Rust</a></h2>
  <a class="result__snippet" href="#">The async book.</a></div></div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body"><h2 class="result__title">
  <a rel="nofollow" class="result__a" href="https://docs.rs/futures">futures - Rust</a></h2></div></div>
</div></div></body></html>"##;

const BOT_PAGE: &str =
    r#"<html><body><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div></body></html>"#;

const SEARX: &str = r#"{"query": "q", "results": [
  {"title": "First", "url": "https://one.example/", "content": "first snippet", "engine": "x"},
  {"title": "No url"},
  {"title": "Second", "url": "https://two.example/", "content": "second snippet"},
  {"title": "Dup", "url": "https://one.example/", "content": "again"},
  {"title": "Third", "url": "https://three.example/", "content": ""}
]}"#;

async fn server() -> TestServer {
    TestServer::start(vec![
        ("/html/", Route::ok("text/html; charset=utf-8", DDG_PAGE)),
        ("/bot/", Route::ok("text/html", BOT_PAGE)),
        ("/search", Route::ok("application/json", SEARX)),
        ("/broken", Route::ok("application/json", "not json at all")),
        ("/fail", Route::ok("text/plain", "backend exploded").status(500)),
    ])
    .await
}

fn harness_with(backend: Arc<dyn crate::web::search::SearchBackend>) -> Harness {
    let h = Harness::new();
    h.ctx.session.state::<WebSearchSettings>().set_backend(backend);
    h
}

#[tokio::test]
async fn duckduckgo_html_results_are_ranked_with_ref_ids() {
    let s = server().await;
    let h = harness_with(Arc::new(DuckDuckGoHtml::new(&s.url("/html/")).unwrap()));
    let result = h.call("web_search", json!({"query": "  rust   async &runtime ", "limit": 5})).await;
    let text = result.content_text();
    assert!(!result.is_error, "{text}");
    assert_eq!(s.requests(), vec!["/html/?q=rust+async+%26runtime"]);
    assert_eq!(result.metadata["backend"], "duckduckgo");
    let results = result.metadata["results"].as_array().unwrap();
    assert_eq!(results.len(), 3, "the ad is skipped: {text}");
    assert_eq!(
        results[0],
        json!({"ref_id": "w1.1", "rank": 1, "title": "Tokio & async Rust", "url": "https://tokio.rs/tokio/tutorial",
               "snippet": "Tokio is an asynchronous runtime for Rust."})
    );
    assert_eq!(results[1]["url"], "https://rust-lang.github.io/async-book/");
    assert_eq!(results[2]["url"], "https://docs.rs/futures");
    assert_eq!(results[2]["snippet"], "");
    assert!(text.starts_with("3 results for \"rust async &runtime\" (duckduckgo):\n"), "{text}");
    assert!(
        text.contains("\n1. [w1.1] Tokio & async Rust\n   https://tokio.rs/tokio/tutorial\n   Tokio is an"),
        "{text}"
    );
    assert!(!text.contains("Buy things"));

    let second = h.call("web_search", json!({"query": "tokio", "limit": 1})).await;
    let results = second.metadata["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["ref_id"], "w2.1", "ref_ids never repeat within a session");
}

#[tokio::test]
async fn json_backend_reads_searxng_shaped_results() {
    let s = server().await;
    let template = format!("{}?q={{query}}&format=json&n={{limit}}", s.url("/search"));
    let h = harness_with(Arc::new(JsonSearch::new(&template).unwrap()));
    let result = h.call("web_search", json!({"query": "a b/c", "limit": 2})).await;
    assert!(!result.is_error, "{}", result.content_text());
    assert_eq!(s.requests(), vec!["/search?q=a+b%2Fc&format=json&n=2"]);
    assert_eq!(result.metadata["backend"], "json");
    let results = result.metadata["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["title"], "First");
    assert_eq!(results[1]["url"], "https://two.example/");

    // Without a {query} placeholder the query is appended as q=.
    let appended = harness_with(Arc::new(JsonSearch::new(&format!("{}?format=json", s.url("/search"))).unwrap()));
    let all = appended.call("web_search", json!({"query": "x y", "limit": 10})).await;
    assert_eq!(all.metadata["results"].as_array().unwrap().len(), 3, "entries without url and duplicates dropped");
    assert_eq!(s.requests().last().unwrap(), "/search?format=json&q=x+y");
}

#[tokio::test]
async fn backend_failures_are_reported() {
    let s = server().await;
    let bot = harness_with(Arc::new(DuckDuckGoHtml::new(&s.url("/bot/")).unwrap()));
    let err = bot.err("web_search", json!({"query": "x"})).await;
    assert!(err.contains("bot check") && err.contains("QUIVER_WEB_SEARCH_URL"), "{err}");
    let broken = harness_with(Arc::new(JsonSearch::new(&s.url("/broken")).unwrap()));
    let err = broken.err("web_search", json!({"query": "x"})).await;
    assert!(err.contains("did not return JSON") && err.contains("not json at all"), "{err}");
    let failing = harness_with(Arc::new(JsonSearch::new(&s.url("/fail")).unwrap()));
    let err = failing.err("web_search", json!({"query": "x"})).await;
    assert!(err.contains("HTTP 500") && err.contains("backend exploded"), "{err}");
    let empty = harness_with(Arc::new(DuckDuckGoHtml::new(&s.url("/nothing-here/")).unwrap()));
    assert!(empty.err("web_search", json!({"query": "x"})).await.contains("HTTP 404"));
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = harness_with(Arc::new(JsonSearch::new("http://127.0.0.1:9/search").unwrap()));
    assert!(h.err("web_search", json!({"query": "   "})).await.contains("`query` is empty"));
    assert!(h.err("web_search", json!({"query": "x", "limit": 0})).await.contains("minimum of 1"));
    assert!(h.err("web_search", json!({"query": "x", "limit": 21})).await.contains("between 1 and 20"));
    assert!(h.err("web_search", json!({"query": "x".repeat(501)})).await.contains("longer than 500"));
    let wrong = h.err("web_search", json!({"query": ["x"]})).await;
    assert!(wrong.contains("`query`") && wrong.contains("string"), "{wrong}");
    assert!(h.err("web_search", json!({"q": "x"})).await.contains("query"));
}

#[test]
fn backend_selection_follows_the_documented_rules() {
    let name = |b: Option<&str>, u: Option<&str>| backend_from(b, u).map(|b| b.name());
    assert_eq!(name(None, None).unwrap(), "duckduckgo");
    assert_eq!(name(Some("DuckDuckGo"), Some("http://127.0.0.1:1/html/")).unwrap(), "duckduckgo");
    assert_eq!(name(None, Some("http://127.0.0.1:1/search?q={query}")).unwrap(), "json");
    assert_eq!(name(Some("searxng"), Some("http://127.0.0.1:1/search")).unwrap(), "json");
    assert!(name(Some("json"), None).unwrap_err().to_string().contains("QUIVER_WEB_SEARCH_URL is not set"));
    assert!(name(Some("bing"), None).unwrap_err().to_string().contains("unknown QUIVER_WEB_SEARCH_BACKEND `bing`"));
    assert!(name(None, Some("file:///tmp/x")).unwrap_err().to_string().contains("`file` scheme"));
}

#[test]
fn duckduckgo_pages_without_results_parse_to_nothing() {
    assert!(
        parse_duckduckgo("<html><body><div class=\"no-results\">No results.</div></body></html>").unwrap().is_empty()
    );
    assert!(parse_duckduckgo(BOT_PAGE).unwrap().is_empty());
}
