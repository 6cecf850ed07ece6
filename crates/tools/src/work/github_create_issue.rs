//! `github_create_issue`: open a new issue through `gh issue create`, after
//! approval (see `github_create` for the path both creations take).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::WorkStore;
use super::github::GhCli;
use super::github_create::{Creation, check_text, check_word, create};

pub struct GithubCreateIssue(pub Arc<WorkStore>, pub Arc<GhCli>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GithubCreateIssueInput {
    /// OWNER/REPO (default: the repository of the workspace's git remote).
    #[serde(default)]
    pub repo: Option<String>,
    /// One line.
    pub title: String,
    /// The description, in markdown.
    #[serde(default)]
    pub body: String,
    /// Labels to add (they must exist in the repository).
    #[serde(default)]
    pub labels: Vec<String>,
    /// Logins to assign ("@me" for yourself).
    #[serde(default)]
    pub assignees: Vec<String>,
    /// The task to keep the audit record on (default: the task this session runs for).
    #[serde(default)]
    pub task_id: Option<String>,
}

impl Tool for GithubCreateIssue {
    type Input = GithubCreateIssueInput;
    const NAME: &'static str = "github_create_issue";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::Destructive;
    const CAPABILITIES: Capabilities = super::github::GH_WRITE;

    // Before one vocabulary the durable task was `task` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("task", "task_id")];
    fn description(&self) -> String {
        "Open a new GitHub issue (asks for approval, via gh): title, body, labels, assignees; audited on the task."
            .into()
    }

    async fn run(&self, input: GithubCreateIssueInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        check_text(&input.title, &input.body)?;
        let mut extra = Vec::new();
        for label in &input.labels {
            extra.push(format!("--label={}", check_word("labels", label)?));
        }
        for who in &input.assignees {
            extra.push(format!("--assignee={}", check_word("assignees", who)?));
        }
        let creation = Creation {
            kind: "issue",
            repo: input.repo,
            title: input.title,
            body: input.body,
            extra,
            about: String::new(),
            task: input.task_id,
        };
        create(&self.0, &self.1, ctx, Self::NAME, creation).await
    }
}
