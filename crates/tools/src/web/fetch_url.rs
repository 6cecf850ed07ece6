//! `fetch_url`: one HTTP(S) GET, shown as readable text.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::web::{self, BodyKind};

const DEFAULT_MAX_BYTES: usize = 2 * 1024 * 1024;
const MAX_MAX_BYTES: usize = 20 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS: u64 = 30_000;
const MAX_TIMEOUT_MS: u64 = 300_000;
const ACCEPT: &str = "text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.9,*/*;q=0.5";

pub struct FetchUrl;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchUrlInput {
    /// Absolute http:// or https:// URL.
    pub url: String,
    /// Stop reading the body after this many bytes (default 2 MiB).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_bytes: Option<usize>,
    /// Give up after this many milliseconds (default 30000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// Return the body as received: no HTML-to-text, no JSON pretty-printing.
    #[serde(default)]
    pub raw: Option<bool>,
}

impl Tool for FetchUrl {
    type Input = FetchUrlInput;
    const NAME: &'static str = "fetch_url";
    const DOMAIN: Domain = Domain::Web;
    const RISK: Risk = Risk::External;
    const CAPABILITIES: Capabilities = Capabilities::NETWORK;

    fn description(&self) -> String {
        "Fetch (download) a web page or API response by URL (HTTP/HTTPS GET) as text: HTML converted to readable text, JSON pretty-printed; binary refused.".into()
    }

    async fn run(&self, input: FetchUrlInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let url = web::parse_http_url(&input.url)?;
        let max_bytes = input.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
        if max_bytes == 0 || max_bytes > MAX_MAX_BYTES {
            return Err(ToolError::model(format!(
                "`max_bytes` must be between 1 and {MAX_MAX_BYTES}, got {max_bytes}"
            )));
        }
        let timeout_ms = input.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if timeout_ms == 0 || timeout_ms > MAX_TIMEOUT_MS {
            return Err(ToolError::model(format!(
                "`timeout_ms` must be between 1 and {MAX_TIMEOUT_MS}, got {timeout_ms}"
            )));
        }
        let raw = input.raw.unwrap_or(false);

        // Binary bodies are refused from the header alone, never downloaded.
        let fetched = web::get(&url, ACCEPT, max_bytes, Duration::from_millis(timeout_ms), |_, ct| {
            web::classify(ct, b"") != BodyKind::Binary
        })
        .await?;
        let content_type = fetched.content_type.clone().unwrap_or_default();
        let kind = web::classify(fetched.content_type.as_deref(), &fetched.body);
        let binary = kind == BodyKind::Binary || web::looks_binary(&fetched.body);
        let text = match (kind, raw) {
            _ if binary => String::new(),
            (BodyKind::Html, false) => {
                let text = web::html_to_text(fetched.body.clone()).await?;
                web::absolutize_footnotes(&text, &fetched.final_url)
            }
            (BodyKind::Json, false) => pretty_json(&fetched.body),
            _ => String::from_utf8_lossy(&fetched.body).into_owned(),
        };
        if !(200..300).contains(&fetched.status) {
            let detail = match &fetched.location {
                Some(to) => format!("redirect to `{to}` not followed; only http and https redirects are"),
                None if binary => format!("[{content_type} body not shown]"),
                None => web::excerpt(&text, 500),
            };
            return Err(ToolError::model(format!(
                "HTTP {} {} from {}: {detail}",
                fetched.status, fetched.reason, fetched.final_url
            )));
        }
        if binary {
            let shown = if content_type.is_empty() { "no content type, binary bytes" } else { content_type.as_str() };
            return Err(ToolError::model(format!(
                "{} is binary content ({shown}); fetch_url returns text only",
                fetched.final_url
            )));
        }
        let mut content = text;
        if fetched.truncated {
            content.push_str(&format!(
                "\n[truncated: stopped reading after {max_bytes} bytes; pass a larger max_bytes to read more]\n"
            ));
        }
        Ok(ToolOutput::text(content)
            .with_meta("status", fetched.status)
            .with_meta("content_type", fetched.content_type.unwrap_or_default())
            .with_meta("final_url", fetched.final_url)
            .with_meta("bytes", fetched.body.len())
            .with_meta("truncated", fetched.truncated))
    }
}

/// Pretty JSON when it parses; a body cut by `max_bytes` will not, and is shown as is.
fn pretty_json(body: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned())
}

#[cfg(test)]
#[path = "fetch_url_tests.rs"]
mod tests;
