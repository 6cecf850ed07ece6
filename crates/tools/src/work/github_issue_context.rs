//! `github_issue_context`: one issue's facts through `gh issue view --json`,
//! read-only. A long body or comment thread becomes an artifact (on the active
//! task when there is one) and the result carries a compact summary and a
//! `retrieve_tool_result` handle instead.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::github::{GhCli, check_number, comment_thread, login, names, parse_json, resolve_repo, text_or_artifact};
use super::{WorkStore, active_task};

/// The `gh issue view --json` fields read (gh's own names).
pub const ISSUE_FIELDS: &str =
    "number,title,state,stateReason,author,labels,assignees,milestone,createdAt,updatedAt,closedAt,url,body,comments";

pub struct GithubIssueContext(pub Arc<WorkStore>, pub Arc<GhCli>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GithubIssueContextInput {
    /// OWNER/REPO (default: the repository of the workspace's git remote).
    #[serde(default)]
    pub repo: Option<String>,
    /// The issue number.
    #[schemars(range(min = 1))]
    pub number: u64,
}

impl Tool for GithubIssueContext {
    type Input = GithubIssueContextInput;
    const NAME: &'static str = "github_issue_context";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::External;
    const CAPABILITIES: Capabilities =
        Capabilities::RUNS_COMMANDS.union(Capabilities::NETWORK).union(Capabilities::PERSISTS);

    fn description(&self) -> String {
        "Read a GitHub issue (read-only, via gh): title, state, labels, assignees, body and comments; long bodies become artifacts with a summary and a handle.".into()
    }

    async fn run(&self, input: GithubIssueContextInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let number = check_number(input.number)?;
        let repo = resolve_repo(ctx, input.repo.as_deref()).await?;
        let gh = self.1.ready(ctx).await?;
        let out = gh.run(ctx, &["issue", "view", &number, "--repo", &repo, "--json", ISSUE_FIELDS], None).await?;
        let issue = parse_json(&out, "`issue view`")?;
        let task = active_task();
        let label = format!("{repo}#{number}");
        let body = text_or_artifact(
            &self.0,
            ctx,
            Self::NAME,
            task.clone(),
            "body",
            format!("issue {label} body"),
            issue["body"].as_str().unwrap_or("").to_string(),
        )
        .await?;
        let comments = comment_thread(
            &self.0,
            ctx,
            Self::NAME,
            task.clone(),
            format!("issue {label} comments"),
            &issue["comments"],
        )
        .await?;
        Ok(ToolOutput::json(json!({
            "repo": repo,
            "issue": {
                "number": issue["number"],
                "title": issue["title"],
                "state": issue["state"],
                "state_reason": issue["stateReason"],
                "author": login(&issue["author"]),
                "labels": names(&issue["labels"], "name"),
                "assignees": names(&issue["assignees"], "login"),
                "milestone": issue["milestone"].get("title"),
                "created_at": issue["createdAt"],
                "updated_at": issue["updatedAt"],
                "closed_at": issue["closedAt"],
                "url": issue["url"],
            },
            "body": body,
            "comments": comments,
            "task_id": task,
        })))
    }
}
