//! HTTP plumbing shared by the web tools: one guarded GET (schemes, redirects,
//! size and time limits), body classification and HTML-to-text.

mod metadata_guard;
pub mod search;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub mod test_server;

use std::sync::Once;
use std::time::Duration;

use quiver_engine::ToolError;
use reqwest::{Client, Response, Url, redirect};
use tokio::time::{Instant, timeout_at};

/// At most this many redirects are followed; more is a loop or a trap.
const MAX_REDIRECTS: usize = 5;
const USER_AGENT: &str = concat!("Mozilla/5.0 (compatible; quiver/", env!("CARGO_PKG_VERSION"), "; +fetch_url)");
/// html2text wraps at this width; wide enough that prose is rarely broken.
const TEXT_WIDTH: usize = 120;

/// A response whose body was read up to a limit.
#[derive(Debug)]
pub struct Fetched {
    pub status: u16,
    pub reason: String,
    pub content_type: Option<String>,
    pub final_url: String,
    /// The `Location` of a redirect that was not followed.
    pub location: Option<String>,
    pub body: Vec<u8>,
    pub truncated: bool,
}

/// What a body is, for deciding how to show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    Html,
    Json,
    Text,
    Binary,
}

/// Parses a model-given URL, refusing anything but http and https (no `file:`,
/// `ftp:`, `data:`: the tool reaches the web, never the local disk).
pub fn parse_http_url(raw: &str) -> Result<Url, ToolError> {
    let url = Url::parse(raw.trim()).map_err(|e| {
        ToolError::model(format!("`{raw}` is not a valid URL ({e}); give an absolute http:// or https:// URL"))
    })?;
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(ToolError::model(format!(
                "only http and https URLs can be fetched; `{raw}` uses the `{other}` scheme"
            )));
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ToolError::model(format!("`{raw}` has no host")));
    }
    metadata_guard::check_literal(&url).map_err(ToolError::model)?;
    Ok(url)
}

/// A client for one request. Built per call on purpose: a pooled client outlives
/// the tokio runtime it first ran on, and hosts (tests, sub-agents) run several.
pub fn client_for(url: &Url) -> Result<Client, ToolError> {
    static PROVIDER: Once = Once::new();
    // reqwest is built without a bundled crypto provider so that `ring` (fast to
    // build) is used instead of aws-lc; installing fails only if one is already set.
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let policy = redirect::Policy::custom(|attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else if !matches!(attempt.url().scheme(), "http" | "https") {
            let msg = format!("redirect to a non-http URL refused: {}", attempt.url());
            attempt.error(msg)
        } else if let Err(msg) = metadata_guard::check_literal(attempt.url()) {
            attempt.error(msg)
        } else {
            attempt.follow()
        }
    });
    // TCP_NODELAY as on every client quiver builds (reqwest's default, stated).
    let mut builder = Client::builder()
        .user_agent(USER_AGENT)
        .redirect(policy)
        .tcp_nodelay(true)
        .dns_resolver(metadata_guard::NoLinkLocal);
    // An HTTP(S)_PROXY from the environment cannot reach this machine's loopback.
    if is_loopback(url) {
        builder = builder.no_proxy();
    }
    builder.build().map_err(|e| ToolError::Fatal(anyhow::anyhow!("cannot build an HTTP client: {}", error_chain(&e))))
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// GETs `url` and reads at most `max_bytes` of the body, all within `timeout`.
/// `wants_body` sees the status and content type first, so a binary body is never
/// downloaded just to be refused.
pub async fn get(
    url: &Url,
    accept: &str,
    max_bytes: usize,
    timeout: Duration,
    wants_body: impl FnOnce(u16, Option<&str>) -> bool,
) -> Result<Fetched, ToolError> {
    let deadline = Instant::now() + timeout;
    let timed_out = || {
        ToolError::model(format!(
            "timed out after {} ms fetching {url}; retry with a larger timeout_ms",
            timeout.as_millis()
        ))
    };
    let client = client_for(url)?;
    let request = client.get(url.clone()).header(reqwest::header::ACCEPT, accept).timeout(timeout);
    let mut response = timeout_at(deadline, request.send())
        .await
        .map_err(|_| timed_out())?
        .map_err(|e| request_error(url, &e, timeout))?;
    let status = response.status();
    let content_type = header_content_type(&response);
    let final_url = response.url().to_string();
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .filter(|_| status.is_redirection());
    let mut fetched = Fetched {
        status: status.as_u16(),
        reason: status.canonical_reason().unwrap_or("").to_string(),
        content_type,
        final_url,
        location,
        body: Vec::new(),
        truncated: false,
    };
    if !wants_body(fetched.status, fetched.content_type.as_deref()) {
        return Ok(fetched);
    }
    // Streamed so that a huge (or endless) body costs max_bytes, not its size.
    loop {
        let chunk = timeout_at(deadline, response.chunk())
            .await
            .map_err(|_| timed_out())?
            .map_err(|e| request_error(url, &e, timeout))?;
        let Some(chunk) = chunk else { break };
        let room = max_bytes - fetched.body.len();
        if chunk.len() > room {
            fetched.body.extend_from_slice(&chunk[..room]);
            fetched.truncated = true;
            break;
        }
        fetched.body.extend_from_slice(&chunk);
    }
    Ok(fetched)
}

fn header_content_type(response: &Response) -> Option<String> {
    let value = response.headers().get(reqwest::header::CONTENT_TYPE)?.to_str().ok()?;
    Some(value.trim().to_string()).filter(|v| !v.is_empty())
}

/// reqwest's top-level message ("error sending request") hides the cause.
fn request_error(url: &Url, err: &reqwest::Error, timeout: Duration) -> ToolError {
    if err.is_timeout() {
        return ToolError::model(format!(
            "timed out after {} ms fetching {url}; retry with a larger timeout_ms",
            timeout.as_millis()
        ));
    }
    let what = if err.is_connect() {
        "could not connect"
    } else if err.is_redirect() {
        "redirect refused"
    } else {
        "request failed"
    };
    ToolError::model(format!("{what} fetching {url}: {}", error_chain(err)))
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut parts = vec![err.to_string()];
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

/// Decides by the declared type first, then by sniffing when there is none.
pub fn classify(content_type: Option<&str>, body: &[u8]) -> BodyKind {
    if let Some(ct) = content_type {
        let essence = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        return classify_mime(&essence);
    }
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).trim_start().to_ascii_lowercase();
    if body.iter().take(8192).any(|b| *b == 0) {
        BodyKind::Binary
    } else if head.starts_with("<!doctype html") || head.starts_with("<html") {
        BodyKind::Html
    } else if head.starts_with('{') || head.starts_with('[') {
        BodyKind::Json
    } else {
        BodyKind::Text
    }
}

fn classify_mime(essence: &str) -> BodyKind {
    let (top, sub) = essence.split_once('/').unwrap_or((essence, ""));
    match (top, sub) {
        (_, "html" | "xhtml+xml") => BodyKind::Html,
        (_, "json") => BodyKind::Json,
        (_, s) if s.ends_with("+json") => BodyKind::Json,
        ("text", _) => BodyKind::Text,
        (_, s) if s.ends_with("+xml") => BodyKind::Text,
        (
            "application",
            "xml"
            | "javascript"
            | "ecmascript"
            | "x-javascript"
            | "x-yaml"
            | "yaml"
            | "toml"
            | "x-sh"
            | "x-www-form-urlencoded"
            | "csv"
            | "sql"
            | "graphql"
            | "x-ndjson"
            | "ndjson",
        ) => BodyKind::Text,
        _ => BodyKind::Binary,
    }
}

/// Whether a body that claims to be text really is (a NUL byte says otherwise).
pub fn looks_binary(body: &[u8]) -> bool {
    body.iter().take(8192).any(|b| *b == 0)
}

/// Readable text from HTML: headings, paragraphs, lists and tables laid out, script
/// and style dropped, links numbered with their targets listed at the end. CPU
/// bound on large pages, so it runs on the blocking pool.
pub async fn html_to_text(body: Vec<u8>) -> Result<String, ToolError> {
    tokio::task::spawn_blocking(move || {
        html2text::config::plain()
            .allow_width_overflow()
            .no_link_wrapping()
            .string_from_read(body.as_slice(), TEXT_WIDTH)
    })
    .await
    .map_err(|e| ToolError::Fatal(anyhow::anyhow!("HTML conversion task failed: {e}")))?
    .map_err(|e| ToolError::model(format!("could not convert the HTML page to text: {e}; retry with raw: true")))
}

/// html2text lists link targets as written (`[1]: /guide`); a model can only
/// follow them when they are absolute, so the trailing footnotes are resolved
/// against the page's final URL.
pub fn absolutize_footnotes(text: &str, base: &str) -> String {
    let Ok(base) = Url::parse(base) else { return text.to_string() };
    let lines: Vec<&str> = text.lines().collect();
    let is_footnote = |line: &str| footnote(line).is_some();
    let mut first = lines.len();
    while first > 0 && (is_footnote(lines[first - 1]) || lines[first - 1].trim().is_empty()) {
        first -= 1;
    }
    let mut out: Vec<String> = lines[..first].iter().map(|l| l.to_string()).collect();
    for line in &lines[first..] {
        match footnote(line) {
            Some((label, target)) => match base.join(target) {
                Ok(abs) => out.push(format!("{label} {abs}")),
                Err(_) => out.push(line.to_string()),
            },
            None => out.push(line.to_string()),
        }
    }
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    joined
}

/// `[12]: target` → (`[12]:`, `target`).
fn footnote(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix('[')?;
    let close = rest.find("]: ")?;
    if close == 0 || !rest[..close].bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((&line[..close + 3], rest[close + 3..].trim()))
}

/// The first `max_chars` of a text, for error excerpts.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    let trimmed = text.trim();
    if trimmed.chars().count() <= max_chars {
        return trimmed.to_string();
    }
    let cut: String = trimmed.chars().take(max_chars).collect();
    format!("{cut}…")
}

pub mod fetch_url;
pub mod web_search;
