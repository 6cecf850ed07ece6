//! The one path of every guarded GitHub write (`github_comment`,
//! `github_close_issue`, `github_close_pr`):
//!
//! 1. non-empty acceptance criteria and evidence, or nothing happens;
//! 2. evidence that names a stored record (`gate-3`, `art-7`, `pr-2`) must
//!    exist, belong to the task in play, and, to close something, a named gate
//!    must have passed: an id the model made up or a red gate is refused;
//! 3. a work tree with uncommitted changes is refused unless `allow_dirty`
//!    (closing on work that is not committed claims more than is true);
//! 4. `gh` found and logged in; the target read back (it exists, is open, is
//!    the kind the tool is for), so the question can name it;
//! 5. the user approves the exact text (yolo counts as approval);
//! 6. an audit record of what was approved lands on the task *before* `gh`
//!    writes, and a second one with `gh`'s answer after, so even a crash in
//!    between leaves a trace of a write that may have happened.

use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::{Mode, ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};

use super::github::{Gh, GhCli, check_number, excerpt, parse_json, resolve_repo};
use super::{WorkStore, active_task, approve, blocking};
use crate::process::Launch;

/// GitHub refuses comments longer than this (characters).
const MAX_MESSAGE_CHARS: usize = 65_536;
/// How much of the text the approval question shows.
const QUESTION_CHARS: usize = 1500;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Issue,
    Pr,
}

impl Target {
    pub fn gh(self) -> &'static str {
        match self {
            Target::Issue => "issue",
            Target::Pr => "pr",
        }
    }
    fn word(self) -> &'static str {
        match self {
            Target::Issue => "issue",
            Target::Pr => "pull request",
        }
    }
}

/// The write itself: `gh <args>`, described as `what` ("comment on"), posting
/// `text` (on stdin when `text_on_stdin`, else inside `args`).
pub struct GhWrite {
    pub what: String,
    pub text: String,
    pub args: Vec<String>,
    pub text_on_stdin: bool,
}

/// What every guarded write takes besides its own text.
pub struct Guard {
    pub repo: Option<String>,
    pub number: u64,
    pub acceptance_criteria: Vec<String>,
    pub evidence: Vec<String>,
    pub task: Option<String>,
    pub allow_dirty: bool,
}

/// A write that passed steps 1–4, ready to be asked about.
pub struct Checked {
    pub repo: String,
    pub number: String,
    pub target: Target,
    pub title: String,
    pub url: String,
    task: Option<String>,
    criteria: Vec<String>,
    evidence: Vec<Value>,
    evidence_lines: Vec<String>,
    dirty: Vec<String>,
    gh: Gh,
}

/// Steps 1–4. `closing` asks for passed gates and an open target of exactly
/// `target`'s kind.
pub async fn check(
    work: &WorkStore,
    cli: &GhCli,
    ctx: &ToolContext,
    guard: Guard,
    target: Target,
    closing: bool,
) -> Result<Checked, ToolError> {
    let number = check_number(guard.number)?;
    let criteria = non_empty(guard.acceptance_criteria);
    if criteria.is_empty() {
        return Err(ToolError::model(
            "refused: `acceptance_criteria` is empty; list what had to be true for this (e.g. \"the crash on empty input is fixed\")",
        ));
    }
    let evidence = non_empty(guard.evidence);
    if evidence.is_empty() {
        return Err(ToolError::model(
            "refused: `evidence` is empty; name what shows the criteria hold: gate ids from task_gate_run (\"gate-3\"), \
             PR attempts (\"pr-2\"), artifacts (\"art-7\"), or a sentence",
        ));
    }
    let task = guard.task.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).or_else(active_task);
    let store = work.get()?;
    let (resolved, lines) = {
        let task = task.clone();
        blocking(store, move |s| resolve_evidence(s, task.as_deref(), &evidence, closing)).await??
    };
    let dirty = dirty_paths(ctx).await?;
    if !dirty.is_empty() && !guard.allow_dirty {
        return Err(ToolError::model(format!(
            "refused: the work tree has uncommitted changes ({}); commit them first so the evidence matches what is \
             shipped, or pass `allow_dirty: true` to write anyway",
            shown_paths(&dirty)
        )));
    }
    let gh = cli.ready(ctx).await?;
    let repo = resolve_repo(ctx, guard.repo.as_deref()).await?;
    let out =
        gh.run(ctx, &[target.gh(), "view", &number, "--repo", &repo, "--json", "number,title,state,url"], None).await?;
    let current = parse_json(&out, "`view`")?;
    let url = current["url"].as_str().unwrap_or("").to_string();
    let state = current["state"].as_str().unwrap_or("").to_string();
    if target == Target::Issue && url.contains("/pull/") {
        return Err(ToolError::model(format!(
            "refused: {repo}#{number} is a pull request, not an issue; use {} for it",
            if closing { "github_close_pr" } else { "github_comment with `kind: \"pr\"`" }
        )));
    }
    if closing && state != "OPEN" {
        return Err(ToolError::model(format!(
            "refused: {} {repo}#{number} is already {} ({url})",
            target.word(),
            state.to_ascii_lowercase()
        )));
    }
    Ok(Checked {
        repo,
        number,
        target,
        title: current["title"].as_str().unwrap_or("").to_string(),
        url,
        task,
        criteria,
        evidence: resolved,
        evidence_lines: lines,
        dirty,
        gh,
    })
}

impl Checked {
    /// The text GitHub gets: the model's own words, then the criteria and the
    /// evidence as structured lists, then who posted it.
    pub fn render(&self, tool: &str, words: &str) -> Result<String, ToolError> {
        let mut text = String::new();
        if !words.trim().is_empty() {
            text.push_str(words.trim());
            text.push_str("\n\n");
        }
        text.push_str("**Acceptance criteria**\n");
        for c in &self.criteria {
            text.push_str(&format!("- {c}\n"));
        }
        text.push_str("\n**Evidence**\n");
        for e in &self.evidence_lines {
            text.push_str(&format!("- {e}\n"));
        }
        let task = self.task.as_deref().map(|t| format!(" for {t}")).unwrap_or_default();
        text.push_str(&format!("\n<sub>Posted by quiver ({tool}){task} after approval.</sub>\n"));
        if text.chars().count() > MAX_MESSAGE_CHARS {
            return Err(ToolError::model(format!(
                "refused: the text is {} characters, over GitHub's {MAX_MESSAGE_CHARS}; shorten it or point at an artifact",
                text.chars().count()
            )));
        }
        Ok(text)
    }

    /// Steps 5–6: ask about the write, audit, run `gh`, audit again.
    pub async fn send(
        self,
        work: &WorkStore,
        ctx: &ToolContext,
        tool: &str,
        write: GhWrite,
    ) -> Result<ToolOutput, ToolError> {
        let GhWrite { what, text, args, text_on_stdin } = write;
        let (what, text) = (what.as_str(), text.as_str());
        let stdin = text_on_stdin.then(|| text.as_bytes().to_vec());
        let label = format!("{} {}#{}", self.target.word(), self.repo, self.number);
        let shown: String = text.chars().take(QUESTION_CHARS).collect();
        let cut = if text.chars().count() > QUESTION_CHARS { "\n[…]" } else { "" };
        let dirty = if self.dirty.is_empty() {
            String::new()
        } else {
            format!(" (allow_dirty: {} uncommitted)", shown_paths(&self.dirty))
        };
        approve(ctx, &format!("{what} {label} (\"{}\") on GitHub{dirty}?\n---\n{shown}{cut}\n---", self.title)).await?;
        let store = work.get()?;
        let approved = json!({
            "phase": "approved",
            "approved_by": if ctx.mode() == Mode::Yolo { "yolo mode" } else { "user" },
            "repo": self.repo,
            "number": self.number,
            "target": self.target.gh(),
            "title": self.title,
            "url": self.url,
            "gh_args": args,
            "text": text,
            "acceptance_criteria": self.criteria,
            "evidence": self.evidence,
            "allow_dirty_used": !self.dirty.is_empty(),
            "dirty": self.dirty,
        });
        let first = {
            let (task, tool) = (self.task.clone(), tool.to_string());
            blocking(store.clone(), move |s| s.record_audit(task.as_deref(), &tool, &approved)).await?
        };
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let outcome = self.gh.run(ctx, &argv, stdin.as_deref()).await;
        let (phase, answer) = match &outcome {
            Ok(out) => ("sent", json!({"output": String::from_utf8_lossy(out).trim()})),
            Err(e) => ("failed", json!({"error": e.to_string()})),
        };
        let mut after = json!({"phase": phase, "repo": self.repo, "number": self.number, "approved_audit": first.id});
        if let (Some(a), Some(b)) = (after.as_object_mut(), answer.as_object()) {
            a.extend(b.clone());
        }
        let second = {
            let (task, tool, after) = (self.task.clone(), tool.to_string(), after.clone());
            blocking(store, move |s| s.record_audit(task.as_deref(), &tool, &after)).await?
        };
        let out = outcome?;
        let answer = String::from_utf8_lossy(&out).trim().to_string();
        Ok(ToolOutput::json(json!({
            "done": format!("{what} {label}"),
            "url": self.url,
            "gh_output": excerpt(&answer, 300),
            "acceptance_criteria": self.criteria.len(),
            "evidence": self.evidence,
            "audit": [first.id, second.id],
            "task_id": self.task,
            "note": if self.task.is_none() { "no active task: the audit record is kept but attached to no task (pass `task_id`)" } else { "" },
        })))
    }
}

fn non_empty(items: Vec<String>) -> Vec<String> {
    items.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

fn shown_paths(paths: &[String]) -> String {
    let mut shown = paths.iter().take(8).cloned().collect::<Vec<_>>().join(", ");
    if paths.len() > 8 {
        shown.push_str(&format!(" and {} more", paths.len() - 8));
    }
    shown
}

/// The id an evidence item starts with, if it names a stored record:
/// "gate-3", "gate-3: unit tests", "pr-2 rebased".
fn reference(item: &str) -> Option<(&'static str, &str)> {
    let token = item.split(|c: char| c.is_whitespace() || c == ':' || c == ',').next()?;
    let (prefix, digits) = token.split_once('-')?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let kind = match prefix {
        "gate" => "gate",
        "art" => "artifact",
        "pr" => "attempt",
        _ => return None,
    };
    Some((kind, token))
}

/// The evidence as records and as lines of the posted text, or the model's error.
type Resolved = Result<(Vec<Value>, Vec<String>), ToolError>;

/// Each evidence item as a record (resolved in the store) and as a line of the
/// posted text. A wrong reference is the model's error (the outer `Ok` keeps a
/// store failure apart from it).
fn resolve_evidence(
    s: &quiver_durable::Store,
    task: Option<&str>,
    items: &[String],
    closing: bool,
) -> Result<Resolved, quiver_durable::StoreError> {
    if let Some(t) = task {
        s.task(t)?;
    }
    let mut records = Vec::new();
    let mut lines = Vec::new();
    let refuse = |msg: String| Ok(Err(ToolError::model(format!("refused: {msg}"))));
    for item in items {
        let Some((kind, id)) = reference(item) else {
            records.push(json!({"statement": item}));
            lines.push(item.clone());
            continue;
        };
        let note = item[id.len()..].trim_start_matches([':', ',', ' ', '-']).trim();
        let note = if note.is_empty() { String::new() } else { format!(" — {note}") };
        let owner = match kind {
            "gate" => match s.gate(id) {
                Ok(g) => {
                    if closing && g.classification != quiver_durable::GateClass::Passed {
                        return refuse(format!(
                            "{id} ({}) is {}, and closing needs passing gates; rerun it until it passes or leave it out",
                            g.name,
                            g.classification.as_str()
                        ));
                    }
                    lines.push(format!("{id} `{}`: {}{note}", g.command, g.summary.replace('\n', " ")));
                    records.push(json!({"gate": g.id, "name": g.name, "command": g.command,
                        "classification": g.classification, "exit_code": g.exit_code, "log": g.log_artifact}));
                    g.task_id
                }
                Err(quiver_durable::StoreError::NotFound { .. }) => {
                    return refuse(format!(
                        "evidence names {id}, and no such gate exists (task_read lists a task's gates)"
                    ));
                }
                Err(e) => return Err(e),
            },
            "artifact" => match s.artifact(id) {
                Ok(a) => {
                    lines.push(format!("{id} ({}, {} bytes): {}{note}", a.kind, a.bytes, a.name));
                    records.push(json!({"artifact": a.id, "kind": a.kind, "name": a.name, "sha256": a.sha256}));
                    a.task_id
                }
                Err(quiver_durable::StoreError::NotFound { .. }) => {
                    return refuse(format!("evidence names {id}, and no such artifact exists"));
                }
                Err(e) => return Err(e),
            },
            _ => match s.attempt(id) {
                Ok(a) => {
                    let base: String = a.base_commit.chars().take(12).collect();
                    lines.push(format!(
                        "{id}: patch on {base}, {} file(s), +{} −{}{note}",
                        a.files.len(),
                        a.additions,
                        a.deletions
                    ));
                    records.push(json!({"attempt_id": a.id, "base_commit": a.base_commit, "files": a.files,
                        "patch": a.patch_artifact}));
                    a.task_id
                }
                Err(quiver_durable::StoreError::NotFound { .. }) => {
                    return refuse(format!("evidence names {id}, and no such PR attempt exists"));
                }
                Err(e) => return Err(e),
            },
        };
        if let Some(t) = task
            && owner.as_deref() != Some(t)
        {
            return refuse(format!(
                "evidence {id} belongs to {}, not to {t}; cite evidence recorded on this task",
                owner.as_deref().unwrap_or("no task")
            ));
        }
    }
    Ok(Ok((records, lines)))
}

/// Paths `git status` reports as changed or untracked in the workspace; a
/// workspace outside git cannot show its work is committed, so it counts as
/// dirty (with a path saying why).
async fn dirty_paths(ctx: &ToolContext) -> Result<Vec<String>, ToolError> {
    let root = ctx.workspace.root().to_path_buf();
    let grant = crate::process::authorize(ctx, &CommandRequest::tool("git status")).await?;
    let launch = Launch::new(ctx, grant)?;
    if crate::git::repo::repo(&launch, &root).await?.is_none() {
        return Ok(vec!["(the workspace is not in a git repository, so nothing shows the work is committed)".into()]);
    }
    let status = crate::git::repo::status(&launch, &root).await?;
    Ok(status
        .entries
        .into_iter()
        .filter(|e| !matches!(e.kind, crate::git::repo::EntryKind::Ignored))
        .map(|e| e.path)
        .collect())
}
