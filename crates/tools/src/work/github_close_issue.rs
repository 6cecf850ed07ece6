//! `github_close_issue`: close an issue (never a pull request) with a closing
//! comment that carries its acceptance criteria and evidence, after approval.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::WorkStore;
use super::github::GhCli;
use super::github_write::{GhWrite, Guard, Target, check};

pub struct GithubCloseIssue(pub Arc<WorkStore>, pub Arc<GhCli>);

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloseReason {
    #[default]
    Completed,
    NotPlanned,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GithubCloseIssueInput {
    /// OWNER/REPO (default: the repository of the workspace's git remote).
    #[serde(default)]
    pub repo: Option<String>,
    /// The issue number.
    #[schemars(range(min = 1))]
    pub number: u64,
    /// What had to be true to close it, one item each (at least one).
    pub acceptance_criteria: Vec<String>,
    /// What shows it: passed gate ids ("gate-3"), PR attempts ("pr-2"), artifacts ("art-7") or sentences (at least one).
    pub evidence: Vec<String>,
    /// A closing note, in markdown, put before the criteria and evidence.
    #[serde(default)]
    pub comment: Option<String>,
    /// "completed" (default) or "not_planned".
    #[serde(default)]
    pub reason: CloseReason,
    /// The task to keep the audit record on (default: the task this session runs for).
    #[serde(default)]
    pub task_id: Option<String>,
    /// Close even though the work tree has uncommitted changes. Default false.
    #[serde(default)]
    pub allow_dirty: bool,
}

impl Tool for GithubCloseIssue {
    type Input = GithubCloseIssueInput;
    const NAME: &'static str = "github_close_issue";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::Destructive;
    const CAPABILITIES: Capabilities = super::github::GH_WRITE;

    // Before one vocabulary the durable task was `task` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("task", "task_id")];
    fn description(&self) -> String {
        "Close a GitHub issue, never a PR (asks for approval): needs acceptance criteria and evidence (passed gates, attempts), refuses a dirty work tree; audited on the task.".into()
    }

    async fn run(&self, input: GithubCloseIssueInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let guard = Guard {
            repo: input.repo,
            number: input.number,
            acceptance_criteria: input.acceptance_criteria,
            evidence: input.evidence,
            task: input.task_id,
            allow_dirty: input.allow_dirty,
        };
        let checked = check(&self.0, &self.1, ctx, guard, Target::Issue, true).await?;
        let text = checked.render(Self::NAME, input.comment.as_deref().unwrap_or(""))?;
        let reason = match input.reason {
            CloseReason::Completed => "completed",
            CloseReason::NotPlanned => "not planned",
        };
        let args = vec![
            "issue".to_string(),
            "close".into(),
            checked.number.clone(),
            "--repo".into(),
            checked.repo.clone(),
            "--reason".into(),
            reason.into(),
            "--comment".into(),
            text.clone(),
        ];
        let write = GhWrite { what: format!("close ({reason})"), text, args, text_on_stdin: false };
        checked.send(&self.0, ctx, Self::NAME, write).await
    }
}
