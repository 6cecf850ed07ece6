//! The one path of the two GitHub creations (`github_create_issue`,
//! `github_create_pr`). Unlike the guarded writes of `github_write` there is
//! nothing yet to cite evidence for, so the guard is the approval itself:
//!
//! 1. the text checked (a title, GitHub's length limits) before anything runs;
//! 2. `gh` found and logged in, the repository resolved;
//! 3. the user approves the exact title and body (yolo counts as approval);
//! 4. an audit record of what was approved before `gh` writes and one with
//!    `gh`'s answer after (on the task in play, or on none), as the other
//!    writes keep them.

use quiver_engine::{Mode, ToolContext, ToolError, ToolOutput};
use serde_json::json;

use super::github::{GhCli, excerpt, resolve_repo};
use super::{WorkStore, active_task, approve, blocking};

/// GitHub's limits: a title of 256 characters, a body of 65,536.
const MAX_TITLE_CHARS: usize = 256;
const MAX_BODY_CHARS: usize = 65_536;
/// How much of the body the approval question shows.
const QUESTION_CHARS: usize = 1500;

/// What one creation sends: `gh <kind> create --repo R <extra...> --title=T --body-file -`.
pub struct Creation {
    /// "issue" or "pr" (gh's own command word).
    pub kind: &'static str,
    pub repo: Option<String>,
    pub title: String,
    pub body: String,
    /// Arguments after `--repo R` (labels, branches, draft), each one argv element.
    pub extra: Vec<String>,
    /// Lines the question shows above the text ("from fix/x into main").
    pub about: String,
    pub task: Option<String>,
}

/// A title and body GitHub accepts, or the model's error.
pub fn check_text(title: &str, body: &str) -> Result<(), ToolError> {
    if title.trim().is_empty() {
        return Err(ToolError::model("`title` is empty; give a one-line summary"));
    }
    if title.contains(['\n', '\r']) {
        return Err(ToolError::model("`title` is one line; put the details in `body`"));
    }
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(ToolError::model(format!("`title` is over GitHub's {MAX_TITLE_CHARS} characters; shorten it")));
    }
    if body.chars().count() > MAX_BODY_CHARS {
        return Err(ToolError::model(format!(
            "`body` is over GitHub's {MAX_BODY_CHARS} characters; shorten it or point at an artifact"
        )));
    }
    Ok(())
}

/// A label, login or branch as one `--flag=value` argv element: never empty,
/// no control characters (nothing a person means by one).
pub fn check_word(field: &str, value: &str) -> Result<String, ToolError> {
    let value = value.trim();
    if value.is_empty() || value.chars().any(char::is_control) {
        return Err(ToolError::model(format!("`{field}` {value:?} is empty or holds control characters")));
    }
    Ok(value.to_string())
}

/// Steps 2–4 for an already checked text.
pub async fn create(
    work: &WorkStore,
    cli: &GhCli,
    ctx: &ToolContext,
    tool: &str,
    c: Creation,
) -> Result<ToolOutput, ToolError> {
    let gh = cli.ready(ctx).await?;
    let repo = resolve_repo(ctx, c.repo.as_deref()).await?;
    let word = if c.kind == "pr" { "pull request" } else { "issue" };
    let mut args = vec![c.kind.to_string(), "create".into(), "--repo".into(), repo.clone()];
    args.extend(c.extra.iter().cloned());
    // `--title=` keeps a title that starts with `-` a value; the body goes on
    // stdin, so no length or quoting reaches the argv.
    args.extend([format!("--title={}", c.title.trim()), "--body-file".into(), "-".into()]);
    let shown: String = c.body.chars().take(QUESTION_CHARS).collect();
    let cut = if c.body.chars().count() > QUESTION_CHARS { "\n[…]" } else { "" };
    approve(
        ctx,
        &format!("create {word} on GitHub in {repo}{}: \"{}\"?\n---\n{shown}{cut}\n---", c.about, c.title.trim()),
    )
    .await?;
    let task = c.task.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).or_else(active_task);
    let store = work.get()?;
    let approved = json!({
        "phase": "approved",
        "approved_by": if ctx.mode() == Mode::Yolo { "yolo mode" } else { "user" },
        "repo": repo,
        "target": c.kind,
        "title": c.title.trim(),
        "gh_args": args,
        "text": c.body,
    });
    let first = {
        let (task, tool) = (task.clone(), tool.to_string());
        blocking(store.clone(), move |s| s.record_audit(task.as_deref(), &tool, &approved)).await?
    };
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let outcome = gh.run(ctx, &argv, Some(c.body.as_bytes())).await;
    let after = match &outcome {
        Ok(out) => json!({"phase": "sent", "repo": repo, "approved_audit": first.id,
            "output": String::from_utf8_lossy(out).trim()}),
        Err(e) => json!({"phase": "failed", "repo": repo, "approved_audit": first.id, "error": e.to_string()}),
    };
    let second = {
        let (task, tool) = (task.clone(), tool.to_string());
        blocking(store, move |s| s.record_audit(task.as_deref(), &tool, &after)).await?
    };
    let out = outcome?;
    let answer = String::from_utf8_lossy(&out).trim().to_string();
    // gh prints the new issue's or pull request's URL as its last line.
    let url = answer.lines().rev().find(|l| l.starts_with("http")).unwrap_or("").to_string();
    Ok(ToolOutput::json(json!({
        "done": format!("created {word} in {repo}"),
        "url": url,
        "gh_output": excerpt(&answer, 300),
        "audit": [first.id, second.id],
        "task_id": task,
    }))
    .with_meta("url", url))
}
