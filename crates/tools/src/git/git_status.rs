//! `git_status`: the repository's branch, upstream and changed files as structured
//! JSON, so a model never re-parses `git status` text.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::git::repo::{self, EntryKind, Repo, Status};

/// Files listed in full; past it only the counts grow, so a repository with a
/// vendored tree of untracked files cannot flood the context.
const MAX_FILES: usize = 500;

pub struct GitStatus;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitStatusInput {}

impl Tool for GitStatus {
    type Input = GitStatusInput;
    const NAME: &'static str = "git_status";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Git status of the workspace as JSON: branch, upstream, ahead/behind, staged, unstaged, untracked and conflicted files.".into()
    }

    async fn run(&self, _input: GitStatusInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let root = ctx.workspace.root();
        // Every process quiver starts passes the command gate (deny rules).
        let grant = crate::process::authorize(ctx, &CommandRequest::tool("git status")).await?;
        let launch = crate::process::Launch::new(ctx, grant)?;
        let repo = repo::require_repo(&launch, root, Self::NAME).await?;
        let status = repo::status(&launch, root).await?;
        let report = report(&repo, &status);
        let clean = report["clean"].as_bool().unwrap_or(false);
        let branch = report["branch"].clone();
        Ok(grant.describe(ToolOutput::json(report).with_meta("clean", clean).with_meta("branch", branch)))
    }
}

/// The JSON a model sees. Staged and unstaged sides of one file are listed
/// separately, as `git status` does, because they call for different commands.
fn report(repo: &Repo, status: &Status) -> Value {
    let mut staged = Vec::new();
    let mut unstaged = Vec::new();
    let mut untracked = Vec::new();
    let mut conflicted = Vec::new();
    let mut listed = 0usize;
    let mut push = |list: &mut Vec<Value>, item: Value| {
        if listed < MAX_FILES {
            list.push(item);
        }
        listed += 1;
    };
    let (mut n_staged, mut n_unstaged, mut n_untracked, mut n_conflicted) = (0, 0, 0, 0);
    for entry in &status.entries {
        let path = repo.show(&entry.path);
        match &entry.kind {
            EntryKind::Changed { index, worktree, score } => {
                if *index != '.' {
                    n_staged += 1;
                    let mut item = Map::new();
                    item.insert("path".into(), json!(path));
                    item.insert("status".into(), json!(repo::letter_word(*index)));
                    if let Some(orig) = &entry.orig_path {
                        item.insert("old_path".into(), json!(repo.show(orig)));
                    }
                    if let Some(score) = score {
                        item.insert("similarity".into(), json!(score));
                    }
                    push(&mut staged, Value::Object(item));
                }
                if *worktree != '.' {
                    n_unstaged += 1;
                    push(&mut unstaged, json!({"path": path, "status": repo::letter_word(*worktree)}));
                }
            }
            EntryKind::Unmerged { xy } => {
                n_conflicted += 1;
                push(&mut conflicted, json!({"path": path, "status": repo::conflict_word(xy)}));
            }
            EntryKind::Untracked => {
                n_untracked += 1;
                push(&mut untracked, json!(path));
            }
            EntryKind::Ignored => {}
        }
    }
    let mut out = Map::new();
    out.insert("branch".into(), json!(status.branch));
    out.insert("detached".into(), json!(status.branch.is_none()));
    // A short id is what people paste; 12 hex digits stay unambiguous in practice.
    out.insert("head".into(), json!(status.oid.as_deref().map(|o| &o[..o.len().min(12)])));
    if status.oid.is_none() {
        out.insert("no_commits_yet".into(), json!(true));
    }
    out.insert("upstream".into(), json!(status.upstream));
    if status.upstream.is_some() {
        out.insert("ahead".into(), json!(status.ahead.unwrap_or(0)));
        out.insert("behind".into(), json!(status.behind.unwrap_or(0)));
    }
    let clean = n_staged + n_unstaged + n_untracked + n_conflicted == 0;
    out.insert("clean".into(), json!(clean));
    out.insert("staged".into(), json!(staged));
    out.insert("unstaged".into(), json!(unstaged));
    out.insert("untracked".into(), json!(untracked));
    out.insert("conflicted".into(), json!(conflicted));
    out.insert(
        "counts".into(),
        json!({"staged": n_staged, "unstaged": n_unstaged, "untracked": n_untracked, "conflicted": n_conflicted}),
    );
    if status.stash > 0 {
        out.insert("stash_entries".into(), json!(status.stash));
    }
    if !repo.prefix.is_empty() {
        // The workspace is a subdirectory: say so, since changes elsewhere are not listed.
        out.insert(
            "scope".into(),
            json!(format!(
                "only {} (the workspace root) of the repository at {}",
                repo.prefix,
                repo.toplevel.display()
            )),
        );
    }
    if listed > MAX_FILES {
        out.insert(
            "truncated".into(),
            json!(format!("{listed} entries; the first {MAX_FILES} are listed, counts are complete")),
        );
    }
    Value::Object(out)
}

#[cfg(test)]
#[path = "git_status_tests.rs"]
mod tests;
