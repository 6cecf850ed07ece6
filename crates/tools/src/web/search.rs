//! Web search backends behind one trait.
//!
//! - [`DuckDuckGoHtml`] (default): DuckDuckGo's JavaScript-free HTML page, parsed
//!   with CSS selectors. No key needed; it may answer automated queries with a bot
//!   check, which is reported as such.
//! - [`JsonSearch`]: any endpoint answering JSON in the SearXNG shape
//!   `{"results": [{"title", "url", "content"}]}`, from a URL template.
//!
//! Selection (see [`backend_from_env`]): `QUIVER_WEB_SEARCH_BACKEND` = `duckduckgo`
//! or `json` (alias `searxng`); `QUIVER_WEB_SEARCH_URL` = the DuckDuckGo endpoint
//! (default `https://html.duckduckgo.com/html/`) or the JSON URL template, where
//! `{query}` is replaced by the encoded query and `{limit}` by the result count
//! (without `{query}`, `q=<query>` is appended). A URL without a backend means
//! `json`. Hosts and tests can set a backend per session with [`WebSearchSettings`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use quiver_engine::ToolError;
use reqwest::Url;
use scraper::{ElementRef, Html, Selector};
use serde_json::Value;

use super::{BodyKind, classify, excerpt, get, parse_http_url};

pub const DUCKDUCKGO_HTML: &str = "https://html.duckduckgo.com/html/";
const SEARCH_TIMEOUT: Duration = Duration::from_secs(20);
const SEARCH_MAX_BYTES: usize = 4 * 1024 * 1024;

/// One result, in the backend's rank order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

pub type SearchFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<SearchHit>, ToolError>> + Send + 'a>>;

pub trait SearchBackend: Send + Sync {
    /// Short name shown in results (`duckduckgo`, `json`).
    fn name(&self) -> &'static str;
    /// Up to `limit` hits, best first.
    fn search<'a>(&'a self, query: &'a str, limit: usize) -> SearchFuture<'a>;
}

/// Per-session override of the environment's backend choice.
#[derive(Default)]
pub struct WebSearchSettings {
    backend: Mutex<Option<Arc<dyn SearchBackend>>>,
    searches: Mutex<u64>,
}

impl WebSearchSettings {
    pub fn set_backend(&self, backend: Arc<dyn SearchBackend>) {
        *self.backend.lock() = Some(backend);
    }

    pub fn backend(&self) -> Result<Arc<dyn SearchBackend>, ToolError> {
        if let Some(backend) = self.backend.lock().clone() {
            return Ok(backend);
        }
        backend_from_env()
    }

    /// Numbers this session's searches, so `ref_id`s never repeat within it.
    pub fn next_search(&self) -> u64 {
        let mut n = self.searches.lock();
        *n += 1;
        *n
    }
}

pub fn backend_from_env() -> Result<Arc<dyn SearchBackend>, ToolError> {
    let backend = std::env::var("QUIVER_WEB_SEARCH_BACKEND").ok();
    let url = std::env::var("QUIVER_WEB_SEARCH_URL").ok();
    backend_from(backend.as_deref(), url.as_deref())
}

/// The selection rule, apart from the environment so it can be tested.
pub fn backend_from(backend: Option<&str>, url: Option<&str>) -> Result<Arc<dyn SearchBackend>, ToolError> {
    let url = url.map(str::trim).filter(|u| !u.is_empty());
    let backend = backend.map(|b| b.trim().to_ascii_lowercase()).filter(|b| !b.is_empty());
    match (backend.as_deref(), url) {
        (None | Some("duckduckgo" | "ddg"), None) => Ok(Arc::new(DuckDuckGoHtml::new(DUCKDUCKGO_HTML)?)),
        (Some("duckduckgo" | "ddg"), Some(url)) => Ok(Arc::new(DuckDuckGoHtml::new(url)?)),
        (None | Some("json" | "searxng"), Some(url)) => Ok(Arc::new(JsonSearch::new(url)?)),
        (Some("json" | "searxng"), None) => Err(ToolError::model(
            "web_search is configured for a JSON backend but QUIVER_WEB_SEARCH_URL is not set \
             (e.g. http://localhost:8888/search?q={query}&format=json)",
        )),
        (Some(other), _) => {
            Err(ToolError::model(format!("unknown QUIVER_WEB_SEARCH_BACKEND `{other}`; use `duckduckgo` or `json`")))
        }
    }
}

/// DuckDuckGo's HTML results page.
pub struct DuckDuckGoHtml {
    endpoint: Url,
}

impl DuckDuckGoHtml {
    pub fn new(endpoint: &str) -> Result<Self, ToolError> {
        Ok(DuckDuckGoHtml { endpoint: parse_http_url(endpoint)? })
    }
}

impl SearchBackend for DuckDuckGoHtml {
    fn name(&self) -> &'static str {
        "duckduckgo"
    }

    fn search<'a>(&'a self, query: &'a str, limit: usize) -> SearchFuture<'a> {
        Box::pin(async move {
            let mut url = self.endpoint.clone();
            url.query_pairs_mut().append_pair("q", query);
            let page = fetch_text(&url, "text/html").await?;
            let hits = parse_duckduckgo(&page)?;
            if hits.is_empty() && is_bot_check(&page) {
                return Err(ToolError::model(
                    "DuckDuckGo answered with a bot check instead of results; retry later, or set \
                     QUIVER_WEB_SEARCH_URL to a SearXNG-style JSON endpoint",
                ));
            }
            Ok(hits.into_iter().take(limit).collect())
        })
    }
}

/// Any JSON search endpoint in the SearXNG shape.
pub struct JsonSearch {
    template: String,
}

impl JsonSearch {
    pub fn new(template: &str) -> Result<Self, ToolError> {
        parse_http_url(&template.replace("{query}", "q").replace("{limit}", "10"))?;
        Ok(JsonSearch { template: template.to_string() })
    }

    fn url(&self, query: &str, limit: usize) -> Result<Url, ToolError> {
        let encoded: String = url::form_urlencoded::byte_serialize(query.as_bytes()).collect();
        if self.template.contains("{query}") {
            parse_http_url(&self.template.replace("{query}", &encoded).replace("{limit}", &limit.to_string()))
        } else {
            let mut url = parse_http_url(&self.template.replace("{limit}", &limit.to_string()))?;
            url.query_pairs_mut().append_pair("q", query);
            Ok(url)
        }
    }
}

impl SearchBackend for JsonSearch {
    fn name(&self) -> &'static str {
        "json"
    }

    fn search<'a>(&'a self, query: &'a str, limit: usize) -> SearchFuture<'a> {
        Box::pin(async move {
            let url = self.url(query, limit)?;
            let text = fetch_text(&url, "application/json").await?;
            let value: Value = serde_json::from_str(&text).map_err(|e| {
                ToolError::model(format!(
                    "the search endpoint {url} did not return JSON ({e}): {}",
                    excerpt(&text, 200)
                ))
            })?;
            Ok(parse_json_results(&value).into_iter().take(limit).collect())
        })
    }
}

/// GETs a search page; a non-2xx status or a binary body is an error.
async fn fetch_text(url: &Url, accept: &str) -> Result<String, ToolError> {
    let fetched =
        get(url, accept, SEARCH_MAX_BYTES, SEARCH_TIMEOUT, |_, ct| classify(ct, b"") != BodyKind::Binary).await?;
    let text = String::from_utf8_lossy(&fetched.body).into_owned();
    if !(200..300).contains(&fetched.status) {
        return Err(ToolError::model(format!(
            "the search backend answered HTTP {} {} for {url}: {}",
            fetched.status,
            fetched.reason,
            excerpt(&text, 200)
        )));
    }
    if fetched.body.is_empty() && classify(fetched.content_type.as_deref(), b"") == BodyKind::Binary {
        return Err(ToolError::model(format!(
            "the search backend answered with non-text content ({})",
            fetched.content_type.unwrap_or_default()
        )));
    }
    Ok(text)
}

fn selector(css: &str) -> Result<Selector, ToolError> {
    Selector::parse(css).map_err(|e| ToolError::Fatal(anyhow::anyhow!("bad built-in selector `{css}`: {e}")))
}

/// Organic results from a DuckDuckGo HTML page, ads skipped, redirect links unwrapped.
pub fn parse_duckduckgo(page: &str) -> Result<Vec<SearchHit>, ToolError> {
    let doc = Html::parse_document(page);
    let result = selector("div.result, div.web-result")?;
    let title = selector("a.result__a")?;
    let snippet = selector(".result__snippet")?;
    let mut hits: Vec<SearchHit> = Vec::new();
    for node in doc.select(&result) {
        let classes: Vec<&str> = node.value().classes().collect();
        if classes.iter().any(|c| c.starts_with("result--ad")) {
            continue;
        }
        let Some(link) = node.select(&title).next() else { continue };
        let Some(url) = link.value().attr("href").and_then(unwrap_duckduckgo_link) else { continue };
        if hits.iter().any(|h| h.url == url) {
            continue; // `div.result` and `div.web-result` are often the same element's pair
        }
        hits.push(SearchHit {
            title: element_text(link),
            url,
            snippet: node.select(&snippet).next().map(element_text).unwrap_or_default(),
        });
    }
    Ok(hits)
}

fn element_text(el: ElementRef<'_>) -> String {
    el.text().collect::<Vec<_>>().join("").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `//duckduckgo.com/l/?uddg=<target>&rut=…` → the target; direct links pass; ad
/// beacons (`/y.js`) and non-http targets are dropped.
fn unwrap_duckduckgo_link(href: &str) -> Option<String> {
    let base = Url::parse("https://duckduckgo.com/").ok()?;
    let url = base.join(href.trim()).ok()?;
    let is_ddg = url.host_str().is_some_and(|h| h == "duckduckgo.com" || h.ends_with(".duckduckgo.com"));
    let target = if is_ddg {
        if url.path() != "/l/" {
            return None;
        }
        let (_, target) = url.query_pairs().find(|(k, _)| k == "uddg")?;
        Url::parse(&target).ok()?
    } else {
        url
    };
    matches!(target.scheme(), "http" | "https").then(|| target.to_string())
}

fn is_bot_check(page: &str) -> bool {
    let lower = page.to_ascii_lowercase();
    lower.contains("anomaly-modal") || lower.contains("bots use duckduckgo") || lower.contains("challenge-form")
}

/// `results` (or a top-level array) of objects with a title, a URL and a snippet,
/// accepting the field names common search APIs use.
pub fn parse_json_results(value: &Value) -> Vec<SearchHit> {
    let items = match value {
        Value::Array(items) => items,
        Value::Object(map) => match ["results", "items", "web", "data"].iter().find_map(|k| map.get(*k)) {
            Some(Value::Array(items)) => items,
            Some(Value::Object(inner)) => match inner.get("results") {
                Some(Value::Array(items)) => items,
                _ => return Vec::new(),
            },
            _ => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    let field = |item: &Value, names: &[&str]| -> String {
        names.iter().find_map(|n| item.get(*n).and_then(Value::as_str)).unwrap_or("").trim().to_string()
    };
    let mut hits: Vec<SearchHit> = Vec::new();
    for item in items {
        let url = field(item, &["url", "link", "href"]);
        if url.is_empty() || hits.iter().any(|h| h.url == url) {
            continue;
        }
        hits.push(SearchHit {
            title: field(item, &["title", "name"]),
            url,
            snippet: field(item, &["content", "snippet", "description", "body"]),
        });
    }
    hits
}
