//! `github_pr_list`: a repository's pull requests through `gh pr list --json`,
//! read-only, filtered by state, label and author. One line of facts per pull
//! request; `github_pr_context` reads one whole.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::github::{GhCli, login, names};
use super::github_issue_list::{ListFilters, gh_list};

/// The `gh pr list --json` fields read (gh's own names).
pub const PR_LIST_FIELDS: &str = "number,title,state,isDraft,author,headRefName,baseRefName,labels,updatedAt,url";

pub struct GithubPrList(pub Arc<GhCli>);

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PrState {
    #[default]
    Open,
    Closed,
    Merged,
    All,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GithubPrListInput {
    /// OWNER/REPO (default: the repository of the workspace's git remote).
    #[serde(default)]
    pub repo: Option<String>,
    /// "open" (default), "closed", "merged" or "all".
    #[serde(default)]
    pub state: PrState,
    /// Only pull requests with every one of these labels.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Only pull requests opened by this login ("@me" for yourself).
    #[serde(default)]
    pub author: Option<String>,
    /// At most this many, newest first (default 30, max 100).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
}

impl Tool for GithubPrList {
    type Input = GithubPrListInput;
    const NAME: &'static str = "github_pr_list";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::External;
    const CAPABILITIES: Capabilities = Capabilities::RUNS_COMMANDS.union(Capabilities::NETWORK);

    fn description(&self) -> String {
        "List GitHub pull requests (read-only, via gh), filtered by state, labels and author: number, title, branches, draft, url.".into()
    }

    async fn run(&self, input: GithubPrListInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let state = match input.state {
            PrState::Open => "open",
            PrState::Closed => "closed",
            PrState::Merged => "merged",
            PrState::All => "all",
        };
        let filters = ListFilters { labels: &input.labels, author: input.author.as_deref(), limit: input.limit };
        let (repo, listed) =
            gh_list(&self.0, ctx, "pr", input.repo.as_deref(), state, &filters, PR_LIST_FIELDS).await?;
        let prs: Vec<Value> = listed
            .iter()
            .map(|p| {
                json!({
                    "number": p["number"],
                    "title": p["title"],
                    "state": p["state"],
                    "draft": p["isDraft"],
                    "author": login(&p["author"]),
                    "head": p["headRefName"],
                    "base": p["baseRefName"],
                    "labels": names(&p["labels"], "name"),
                    "updated_at": p["updatedAt"],
                    "url": p["url"],
                })
            })
            .collect();
        Ok(ToolOutput::json(json!({"repo": repo, "state": state, "count": prs.len(), "prs": prs}))
            .with_meta("count", prs.len()))
    }
}
