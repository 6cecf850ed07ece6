//! `web_search`: ranked results with citation ids, from a configurable backend
//! (see `web::search` for the backends and how one is chosen).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::web::search::WebSearchSettings;

const DEFAULT_LIMIT: usize = 5;
const MAX_LIMIT: usize = 20;
const MAX_QUERY_CHARS: usize = 500;

pub struct WebSearch;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearchInput {
    /// What to search the web for.
    pub query: String,
    /// Number of results (default 5, max 20).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
}

impl Tool for WebSearch {
    type Input = WebSearchInput;
    const NAME: &'static str = "web_search";
    const DOMAIN: Domain = Domain::Web;
    const RISK: Risk = Risk::External;
    const CAPABILITIES: Capabilities = Capabilities::NETWORK;

    fn description(&self) -> String {
        "Search the web; returns ranked titles, URLs and snippets, each with a ref_id for citation. Read a result with fetch_url.".into()
    }

    async fn run(&self, input: WebSearchInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let query = input.query.split_whitespace().collect::<Vec<_>>().join(" ");
        if query.is_empty() {
            return Err(ToolError::model("`query` is empty; say what to search for"));
        }
        if query.chars().count() > MAX_QUERY_CHARS {
            return Err(ToolError::model(format!("`query` is longer than {MAX_QUERY_CHARS} characters; shorten it")));
        }
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT);
        if limit == 0 || limit > MAX_LIMIT {
            return Err(ToolError::model(format!("`limit` must be between 1 and {MAX_LIMIT}, got {limit}")));
        }
        let settings = ctx.session.state::<WebSearchSettings>();
        let backend = settings.backend()?;
        let hits = backend.search(&query, limit).await?;
        let search = settings.next_search();

        let mut text = format!("{} results for \"{query}\" ({}):\n", hits.len(), backend.name());
        let mut results = Vec::new();
        for (i, hit) in hits.iter().enumerate() {
            let rank = i + 1;
            // Unique within the session, so a citation never points at two results.
            let ref_id = format!("w{search}.{rank}");
            let title = if hit.title.is_empty() { hit.url.as_str() } else { hit.title.as_str() };
            text.push_str(&format!("\n{rank}. [{ref_id}] {title}\n   {}\n", hit.url));
            if !hit.snippet.is_empty() {
                text.push_str(&format!("   {}\n", hit.snippet));
            }
            results.push(json!({
                "ref_id": ref_id, "rank": rank, "title": hit.title, "url": hit.url, "snippet": hit.snippet,
            }));
        }
        if hits.is_empty() {
            text.push_str("\nNo results; try other words.\n");
        }
        Ok(ToolOutput::text(text)
            .with_meta("query", query)
            .with_meta("backend", backend.name())
            .with_meta("results", results))
    }
}

#[cfg(test)]
#[path = "web_search_tests.rs"]
mod tests;
