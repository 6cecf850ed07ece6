//! `github_comment`: post a comment on an issue or pull request, with its
//! acceptance criteria and evidence, after approval (see `github_write` for the
//! guarded path every GitHub write takes).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::WorkStore;
use super::github::GhCli;
use super::github_write::{GhWrite, Guard, Target, check};

pub struct GithubComment(pub Arc<WorkStore>, pub Arc<GhCli>);

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CommentOn {
    #[default]
    Issue,
    Pr,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GithubCommentInput {
    /// OWNER/REPO (default: the repository of the workspace's git remote).
    #[serde(default)]
    pub repo: Option<String>,
    /// The issue or pull request number.
    #[schemars(range(min = 1))]
    pub number: u64,
    /// "issue" (default) or "pr".
    #[serde(default)]
    pub kind: CommentOn,
    /// The comment, in markdown; the criteria and evidence are appended to it.
    pub body: String,
    /// What had to be true, one item each (at least one).
    pub acceptance_criteria: Vec<String>,
    /// What shows it: gate ids ("gate-3"), PR attempts ("pr-2"), artifacts ("art-7") or sentences (at least one).
    pub evidence: Vec<String>,
    /// The task to keep the audit record on (default: the task this session runs for).
    #[serde(default)]
    pub task_id: Option<String>,
    /// Post even though the work tree has uncommitted changes. Default false.
    #[serde(default)]
    pub allow_dirty: bool,
}

impl Tool for GithubComment {
    type Input = GithubCommentInput;
    const NAME: &'static str = "github_comment";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::Destructive;
    const CAPABILITIES: Capabilities = super::github::GH_WRITE;

    // Before one vocabulary the durable task was `task` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("task", "task_id")];
    fn description(&self) -> String {
        "Comment on a GitHub issue or PR (asks for approval): needs acceptance criteria and evidence (gate ids, PR attempts, artifacts), refuses a dirty work tree; audited on the task.".into()
    }

    async fn run(&self, input: GithubCommentInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if input.body.trim().is_empty() {
            return Err(ToolError::model("`body` is empty; write the comment to post"));
        }
        let target = match input.kind {
            CommentOn::Issue => Target::Issue,
            CommentOn::Pr => Target::Pr,
        };
        let guard = Guard {
            repo: input.repo,
            number: input.number,
            acceptance_criteria: input.acceptance_criteria,
            evidence: input.evidence,
            task: input.task_id,
            allow_dirty: input.allow_dirty,
        };
        let checked = check(&self.0, &self.1, ctx, guard, target, false).await?;
        let text = checked.render(Self::NAME, &input.body)?;
        let args = vec![
            target.gh().to_string(),
            "comment".into(),
            checked.number.clone(),
            "--repo".into(),
            checked.repo.clone(),
            "--body-file".into(),
            "-".into(),
        ];
        let write = GhWrite { what: "comment on".into(), text, args, text_on_stdin: true };
        checked.send(&self.0, ctx, Self::NAME, write).await
    }
}
