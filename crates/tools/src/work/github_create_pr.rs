//! `github_create_pr`: open a pull request through `gh pr create`, after
//! approval (see `github_create`). `gh` never runs in the workspace, so it
//! cannot see the checked-out branch: the head branch is the model's `head`
//! or the workspace's current branch, read by a sandboxed git of our own, and
//! always passed as `--head`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::WorkStore;
use super::github::GhCli;
use super::github_create::{Creation, check_text, check_word, create};
use crate::process::Launch;

pub struct GithubCreatePr(pub Arc<WorkStore>, pub Arc<GhCli>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GithubCreatePrInput {
    /// OWNER/REPO (default: the repository of the workspace's git remote).
    #[serde(default)]
    pub repo: Option<String>,
    /// One line.
    pub title: String,
    /// The description, in markdown.
    #[serde(default)]
    pub body: String,
    /// The branch with the changes, already pushed (default: the workspace's current branch).
    #[serde(default)]
    pub head: Option<String>,
    /// The branch to merge into (default: the repository's default branch).
    #[serde(default)]
    pub base: Option<String>,
    /// Open it as a draft. Default false.
    #[serde(default)]
    pub draft: bool,
    /// The task to keep the audit record on (default: the task this session runs for).
    #[serde(default)]
    pub task_id: Option<String>,
}

impl Tool for GithubCreatePr {
    type Input = GithubCreatePrInput;
    const NAME: &'static str = "github_create_pr";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::Destructive;
    const CAPABILITIES: Capabilities = super::github::GH_WRITE;

    // Before one vocabulary the durable task was `task` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("task", "task_id")];
    fn description(&self) -> String {
        "Open a GitHub pull request from a pushed branch (asks for approval, via gh): title, body, base, draft; audited on the task.".into()
    }

    async fn run(&self, input: GithubCreatePrInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        check_text(&input.title, &input.body)?;
        let head = match input.head.as_deref().map(str::trim).filter(|h| !h.is_empty()) {
            Some(h) => check_branch("head", h)?,
            None => current_branch(ctx).await?,
        };
        let mut extra = vec![format!("--head={head}")];
        let mut about = format!(" from {head}");
        if let Some(base) = input.base.as_deref().map(str::trim).filter(|b| !b.is_empty()) {
            let base = check_branch("base", base)?;
            about.push_str(&format!(" into {base}"));
            extra.push(format!("--base={base}"));
        }
        if input.draft {
            extra.push("--draft".into());
            about.push_str(" as a draft");
        }
        let creation = Creation {
            kind: "pr",
            repo: input.repo,
            title: input.title,
            body: input.body,
            extra,
            about,
            task: input.task_id,
        };
        create(&self.0, &self.1, ctx, Self::NAME, creation).await
    }
}

/// A branch name as git allows it (`git check-ref-format`'s main rules),
/// never starting with `-`.
fn check_branch(field: &str, name: &str) -> Result<String, ToolError> {
    let name = check_word(field, name)?;
    let bad = name.starts_with(['-', '/', '.'])
        || name.ends_with(['/', '.'])
        || name.ends_with(".lock")
        || name.contains("..")
        || name.contains("//")
        || name.contains("@{")
        || name.chars().any(|c| c.is_whitespace() || "~^:?*[\\".contains(c));
    if bad {
        return Err(ToolError::model(format!("`{field}` {name:?} is not a branch name")));
    }
    Ok(name)
}

/// The workspace's checked-out branch, or why there is none.
async fn current_branch(ctx: &ToolContext) -> Result<String, ToolError> {
    let root = ctx.workspace.root().to_path_buf();
    let grant = crate::process::authorize(ctx, &CommandRequest::tool("git status")).await?;
    let launch = Launch::new(ctx, grant)?;
    if crate::git::repo::repo(&launch, &root).await?.is_none() {
        return Err(ToolError::model("give `head`: the workspace is not in a git repository"));
    }
    let status = crate::git::repo::status(&launch, &root).await?;
    let branch = status.branch.ok_or_else(|| {
        ToolError::model("give `head`: the workspace is on a detached HEAD, so there is no branch to open a PR from")
    })?;
    check_branch("head", &branch)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::check_branch;

    #[test]
    fn branch_names_are_checked() {
        for ok in ["fix/null-deref", "main", "release-1.2", "user/topic_x"] {
            assert_eq!(check_branch("head", ok).unwrap(), ok);
        }
        for bad in ["-x", "--force", "a..b", "a b", "a~1", "x.lock", "/x", "x/", "a@{u}", "a:b"] {
            assert!(check_branch("head", bad).is_err(), "{bad}");
        }
    }
}
