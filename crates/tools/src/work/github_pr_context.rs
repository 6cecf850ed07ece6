//! `github_pr_context`: one pull request's facts through `gh pr view --json`,
//! and with `diff: true` its diff through `gh pr diff`, read-only. Long bodies,
//! threads and diffs become artifacts with summaries and handles.
//!
//! The diff is the combined one (`gh pr diff`), not `--patch`'s commit series:
//! the net change is what a review or a fix works from, and a series repeats a
//! file once per commit that touched it.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::github::{GhCli, check_number, comment_thread, login, names, parse_json, resolve_repo, text_or_artifact};
use super::{WorkStore, active_task};

/// The `gh pr view --json` fields read (gh's own names).
pub const PR_FIELDS: &str = "number,title,state,isDraft,author,baseRefName,headRefName,headRefOid,mergeable,\
reviewDecision,labels,assignees,additions,deletions,changedFiles,files,statusCheckRollup,reviews,\
createdAt,updatedAt,closedAt,mergedAt,url,body,comments";
/// Files listed inline; the rest are counted.
const MAX_FILES: usize = 50;

pub struct GithubPrContext(pub Arc<WorkStore>, pub Arc<GhCli>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GithubPrContextInput {
    /// OWNER/REPO (default: the repository of the workspace's git remote).
    #[serde(default)]
    pub repo: Option<String>,
    /// The pull request number.
    #[schemars(range(min = 1))]
    pub number: u64,
    /// Also fetch the diff (kept as an artifact when long). Default false.
    #[serde(default)]
    pub diff: bool,
}

impl Tool for GithubPrContext {
    type Input = GithubPrContextInput;
    const NAME: &'static str = "github_pr_context";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::External;
    const CAPABILITIES: Capabilities =
        Capabilities::RUNS_COMMANDS.union(Capabilities::NETWORK).union(Capabilities::PERSISTS);

    fn description(&self) -> String {
        "Read a GitHub pull request (read-only, via gh): state, branches, files, checks, reviews, body, comments, optionally the diff; long parts become artifacts with a summary and a handle.".into()
    }

    async fn run(&self, input: GithubPrContextInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let number = check_number(input.number)?;
        let repo = resolve_repo(ctx, input.repo.as_deref()).await?;
        let gh = self.1.ready(ctx).await?;
        let out = gh.run(ctx, &["pr", "view", &number, "--repo", &repo, "--json", PR_FIELDS], None).await?;
        let pr = parse_json(&out, "`pr view`")?;
        let task = active_task();
        let label = format!("{repo}#{number}");
        let body = text_or_artifact(
            &self.0,
            ctx,
            Self::NAME,
            task.clone(),
            "body",
            format!("PR {label} body"),
            pr["body"].as_str().unwrap_or("").to_string(),
        )
        .await?;
        let comments =
            comment_thread(&self.0, ctx, Self::NAME, task.clone(), format!("PR {label} comments"), &pr["comments"])
                .await?;
        let diff = if input.diff {
            let patch = gh.run(ctx, &["pr", "diff", &number, "--repo", &repo, "--color", "never"], None).await?;
            let text = String::from_utf8_lossy(&patch).into_owned();
            text_or_artifact(&self.0, ctx, Self::NAME, task.clone(), "diff", format!("PR {label} diff"), text).await?
        } else {
            json!(null)
        };
        let files = pr["files"].as_array().cloned().unwrap_or_default();
        let shown: Vec<Value> = files
            .iter()
            .take(MAX_FILES)
            .map(|f| json!({"path": f["path"], "additions": f["additions"], "deletions": f["deletions"]}))
            .collect();
        Ok(ToolOutput::json(json!({
            "repo": repo,
            "pr": {
                "number": pr["number"],
                "title": pr["title"],
                "state": pr["state"],
                "draft": pr["isDraft"],
                "author": login(&pr["author"]),
                "base": pr["baseRefName"],
                "head": pr["headRefName"],
                "head_commit": pr["headRefOid"],
                "mergeable": pr["mergeable"],
                "review_decision": pr["reviewDecision"],
                "labels": names(&pr["labels"], "name"),
                "assignees": names(&pr["assignees"], "login"),
                "additions": pr["additions"],
                "deletions": pr["deletions"],
                "changed_files": pr["changedFiles"],
                "created_at": pr["createdAt"],
                "updated_at": pr["updatedAt"],
                "closed_at": pr["closedAt"],
                "merged_at": pr["mergedAt"],
                "url": pr["url"],
            },
            "files": {"shown": shown, "omitted": files.len().saturating_sub(MAX_FILES)},
            "checks": checks(&pr["statusCheckRollup"]),
            "reviews": latest_reviews(&pr["reviews"]),
            "body": body,
            "comments": comments,
            "diff": diff,
            "task_id": task,
        })))
    }
}

/// Checks counted by outcome, with the names of those that did not pass.
/// gh mixes check runs (`status` + `conclusion`) and commit statuses (`state`).
fn checks(rollup: &Value) -> Value {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut not_passing = Vec::new();
    for c in rollup.as_array().into_iter().flatten() {
        let (name, outcome) = if c["__typename"] == "StatusContext" {
            (c["context"].as_str(), c["state"].as_str().unwrap_or("PENDING").to_string())
        } else {
            let outcome = match c["conclusion"].as_str().filter(|s| !s.is_empty()) {
                Some(conclusion) => conclusion.to_string(),
                None => c["status"].as_str().unwrap_or("PENDING").to_string(),
            };
            (c["name"].as_str(), outcome)
        };
        let outcome = outcome.to_ascii_lowercase();
        if !matches!(outcome.as_str(), "success" | "neutral" | "skipped") {
            not_passing.push(json!({"name": name.unwrap_or("?"), "outcome": outcome}));
        }
        *counts.entry(outcome).or_default() += 1;
    }
    json!({"counts": counts, "not_passing": not_passing})
}

/// Each reviewer's latest verdict (gh lists every review, oldest first).
fn latest_reviews(reviews: &Value) -> Value {
    let mut latest: BTreeMap<String, Value> = BTreeMap::new();
    for r in reviews.as_array().into_iter().flatten() {
        latest.insert(login(&r["author"]), json!({"state": r["state"], "submitted_at": r["submittedAt"]}));
    }
    json!(latest)
}
