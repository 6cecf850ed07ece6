//! `github_issue_list`: a repository's issues through `gh issue list --json`,
//! read-only, filtered by state, label and author. One line of facts per
//! issue; `github_issue_context` reads one whole.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::github::{GhCli, login, names, parse_json, resolve_repo};
use super::github_create::check_word;

/// The `gh issue list --json` fields read (gh's own names).
pub const ISSUE_LIST_FIELDS: &str = "number,title,state,author,labels,assignees,updatedAt,url";
const DEFAULT_LIMIT: u32 = 30;
const MAX_LIMIT: u32 = 100;

pub struct GithubIssueList(pub Arc<GhCli>);

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IssueState {
    #[default]
    Open,
    Closed,
    All,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GithubIssueListInput {
    /// OWNER/REPO (default: the repository of the workspace's git remote).
    #[serde(default)]
    pub repo: Option<String>,
    /// "open" (default), "closed" or "all".
    #[serde(default)]
    pub state: IssueState,
    /// Only issues with every one of these labels.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Only issues opened by this login ("@me" for yourself).
    #[serde(default)]
    pub author: Option<String>,
    /// At most this many, newest first (default 30, max 100).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
}

impl Tool for GithubIssueList {
    type Input = GithubIssueListInput;
    const NAME: &'static str = "github_issue_list";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::External;
    const CAPABILITIES: Capabilities = Capabilities::RUNS_COMMANDS.union(Capabilities::NETWORK);

    fn description(&self) -> String {
        "List GitHub issues (read-only, via gh), filtered by state, labels and author: number, title, labels, assignees, url.".into()
    }

    async fn run(&self, input: GithubIssueListInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let state = match input.state {
            IssueState::Open => "open",
            IssueState::Closed => "closed",
            IssueState::All => "all",
        };
        let filters = ListFilters { labels: &input.labels, author: input.author.as_deref(), limit: input.limit };
        let (repo, listed) =
            gh_list(&self.0, ctx, "issue", input.repo.as_deref(), state, &filters, ISSUE_LIST_FIELDS).await?;
        let issues: Vec<Value> = listed
            .iter()
            .map(|i| {
                json!({
                    "number": i["number"],
                    "title": i["title"],
                    "state": i["state"],
                    "author": login(&i["author"]),
                    "labels": names(&i["labels"], "name"),
                    "assignees": names(&i["assignees"], "login"),
                    "updated_at": i["updatedAt"],
                    "url": i["url"],
                })
            })
            .collect();
        Ok(ToolOutput::json(json!({"repo": repo, "state": state, "count": issues.len(), "issues": issues}))
            .with_meta("count", issues.len()))
    }
}

/// What both list tools filter by.
pub struct ListFilters<'a> {
    pub labels: &'a [String],
    pub author: Option<&'a str>,
    pub limit: Option<u32>,
}

/// `gh NOUN list` (`issue` or `pr`) in `repo` (default: the workspace's)
/// with `state` and `filters`, reading `fields`: the repository and the
/// listed items. Filters are checked before anything runs.
pub async fn gh_list(
    gh: &GhCli,
    ctx: &ToolContext,
    noun: &str,
    repo: Option<&str>,
    state: &str,
    filters: &ListFilters<'_>,
    fields: &str,
) -> Result<(String, Vec<Value>), ToolError> {
    let mut filters = list_filters(filters.labels, filters.author, filters.limit)?;
    let repo = resolve_repo(ctx, repo).await?;
    let gh = gh.ready(ctx).await?;
    let mut args = vec![noun.to_string(), "list".into(), "--repo".into(), repo.clone()];
    args.push(format!("--state={state}"));
    args.append(&mut filters);
    args.extend(["--json".into(), fields.into()]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = gh.run(ctx, &argv, None).await?;
    let listed = parse_json(&out, &format!("`{noun} list`"))?;
    Ok((repo, listed.as_array().cloned().unwrap_or_default()))
}

/// `--label=L`, `--author=A` and `--limit=N` for gh's list commands: the
/// `=` form keeps a value that starts with `-` a value.
fn list_filters(labels: &[String], author: Option<&str>, limit: Option<u32>) -> Result<Vec<String>, ToolError> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ToolError::model(format!("`limit` must be between 1 and {MAX_LIMIT}, got {limit}")));
    }
    let mut out = Vec::new();
    for label in labels {
        out.push(format!("--label={}", check_word("labels", label)?));
    }
    if let Some(author) = author.map(str::trim).filter(|a| !a.is_empty()) {
        // A GitHub login: letters, digits and single hyphens; or gh's "@me".
        let ok = author == "@me"
            || (author.len() <= 39
                && !author.starts_with('-')
                && author.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '[' || c == ']'));
        if !ok {
            return Err(ToolError::model(format!("`author` {author:?} is not a GitHub login (or \"@me\")")));
        }
        out.push(format!("--author={author}"));
    }
    out.push(format!("--limit={limit}"));
    Ok(out)
}
