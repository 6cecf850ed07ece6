//! `apply_patch`: a git-style unified diff over one or more files, applied all or
//! nothing. Hunks are found by their context (line numbers may have drifted); every
//! new file content is computed in memory before the first write.

use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput, Workspace};

use crate::util::looks_binary;

mod parse;
mod stage;
mod text;

use parse::{Action, FilePatch, Hunk, Op};
use stage::{DEFAULT_MODE, Stage};
use text::{HunkNote, apply_hunks, dominant_eol, join_lines, patch_eol, split_lines};

pub struct ApplyPatch;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchInput {
    /// Unified diff (`git diff` format) for one or more files; `/dev/null` creates or deletes.
    pub patch: String,
}

impl Tool for ApplyPatch {
    type Input = ApplyPatchInput;
    const NAME: &'static str = "apply_patch";
    const DOMAIN: Domain = Domain::File;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::WRITES_FILES;

    fn description(&self) -> String {
        "Apply a unified diff to one or more files (modify, create, delete, rename); all or nothing, hunks located by context.".into()
    }

    async fn run(&self, input: ApplyPatchInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // Every path a section writes, renames from or deletes passes the
        // protected-path guard (and its question) before anything is staged.
        // A patch that does not parse or resolve gets `apply`'s own message.
        for path in touched(&ctx.workspace, &input.patch).unwrap_or_default() {
            let shown = ctx.workspace.display(&path);
            crate::file::protected_write::guard(ctx, &path, &shown).await?;
        }
        let workspace = ctx.workspace.clone();
        // Parsing, matching and writing are synchronous file work; keep it off the
        // async workers.
        let applied = tokio::task::spawn_blocking(move || apply(&workspace, &input.patch))
            .await
            .map_err(|e| ToolError::Fatal(anyhow::anyhow!("apply_patch worker failed: {e}")))??;
        Ok(render(&applied))
    }
}

/// One file's outcome, for the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileResult {
    pub path: String,
    pub action: &'static str,
    pub from: Option<String>,
    pub added: usize,
    pub removed: usize,
    pub notes: Vec<HunkNote>,
}

/// Parses, stages every file in memory, then commits. Any error before the commit
/// leaves the disk untouched.
pub(crate) fn apply(ws: &Workspace, patch: &str) -> Result<Vec<FileResult>, ToolError> {
    let unchanged = |e: ToolError| match e {
        ToolError::Model(m) => ToolError::model(format!("{m}\nNo file was changed.")),
        other => other,
    };
    let files = parse::parse(patch).map_err(unchanged)?;
    // Every path is resolved before any file is read, so an escape in the last
    // file stops the patch before the first is even looked at.
    let mut targets = Vec::with_capacity(files.len());
    for file in &files {
        targets.push(resolve_action(ws, &file.action).map_err(unchanged)?);
    }
    let mut stage = Stage::new(ws);
    let mut results = Vec::with_capacity(files.len());
    for (file, target) in files.iter().zip(targets) {
        results.push(stage_file(ws, &mut stage, file, target).map_err(unchanged)?);
    }
    stage.commit(ws)?;
    Ok(results)
}

/// Every path the patch changes (sources of renames and deletes included),
/// resolved; a parse or resolve error is the one `apply` would give.
fn touched(ws: &Workspace, patch: &str) -> Result<Vec<PathBuf>, ToolError> {
    let mut out = Vec::new();
    for file in parse::parse(patch)? {
        let target = resolve_action(ws, &file.action)?;
        if !matches!(file.action, Action::Copy { .. }) && target.from != target.to {
            out.push(target.from);
        }
        out.push(target.to);
    }
    Ok(out)
}

/// The resolved paths of one file section: `(source, destination)`.
struct Target {
    from: PathBuf,
    to: PathBuf,
}

fn resolve_action(ws: &Workspace, action: &Action) -> Result<Target, ToolError> {
    let resolve = |raw: &str| {
        ws.resolve(raw).map_err(|e| match e {
            ToolError::Model(m) => ToolError::model(format!("patch path `{raw}` refused: {m}")),
            other => other,
        })
    };
    // `resolve` follows a symlink to its target; deleting or renaming "through" a
    // link would act on the target and leave the link dangling, so refuse that.
    let not_a_link = |raw: &str| {
        let lexical = ws.root().join(raw);
        match ws.symlink_metadata(&lexical) {
            Ok(meta) if meta.file_type().is_symlink() => Err(ToolError::model(format!(
                "`{raw}` is a symbolic link; apply_patch does not delete or rename links (it would change their target)"
            ))),
            _ => Ok(()),
        }
    };
    let target = match action {
        Action::Modify { path } | Action::Create { path } | Action::Delete { path } => {
            let p = resolve(path)?;
            Target { from: p.clone(), to: p }
        }
        Action::Rename { from, to } | Action::Copy { from, to } => Target { from: resolve(from)?, to: resolve(to)? },
    };
    // Checked after `resolve`, so nothing outside the workspace is ever inspected.
    if let Action::Delete { path } | Action::Rename { from: path, .. } = action {
        not_a_link(path)?;
    }
    Ok(target)
}

fn counts(hunks: &[Hunk]) -> (usize, usize) {
    let lines = hunks.iter().flat_map(|h| h.lines.iter());
    lines.fold((0, 0), |(a, r), l| match l.op {
        Op::Add => (a + 1, r),
        Op::Remove => (a, r + 1),
        Op::Context => (a, r),
    })
}

/// Reads the current (staged) text of `path`, refusing missing and binary files.
fn existing_text(stage: &mut Stage, path: &std::path::Path, shown: &str, hint: &str) -> Result<Vec<u8>, ToolError> {
    let bytes =
        stage.content(path, shown)?.ok_or_else(|| ToolError::model(format!("`{shown}` does not exist{hint}")))?;
    if looks_binary(&bytes) {
        return Err(ToolError::model(format!("`{shown}` is a binary file; apply_patch edits text files only")));
    }
    Ok(bytes)
}

/// Applies the hunks to `bytes` keeping the file's own line endings.
fn patched(shown: &str, bytes: &[u8], hunks: &[Hunk]) -> Result<(Vec<u8>, Vec<HunkNote>), ToolError> {
    let lines = split_lines(bytes);
    let eol = dominant_eol(&lines);
    let (lines, notes) = apply_hunks(shown, lines, hunks, eol)?;
    Ok((join_lines(&lines), notes))
}

fn stage_file(ws: &Workspace, stage: &mut Stage, file: &FilePatch, target: Target) -> Result<FileResult, ToolError> {
    let (added, removed) = counts(&file.hunks);
    let mode = file.new_mode.map(Permissions::from_mode);
    let shown = ws.display(&target.to);
    let result =
        |action, from: Option<String>, notes| FileResult { path: shown.clone(), action, from, added, removed, notes };
    match &file.action {
        Action::Modify { .. } => {
            let hint = format!("; to create it, start its section with `--- /dev/null` and `+++ b/{shown}`");
            let bytes = existing_text(stage, &target.to, &shown, &hint)?;
            let (new, notes) = patched(&shown, &bytes, &file.hunks)?;
            stage.put(&target.to, new, mode);
            Ok(result("modified", None, notes))
        }
        Action::Create { .. } => {
            if stage.content(&target.to, &shown)?.is_some() {
                return Err(ToolError::model(format!(
                    "`{shown}` already exists, so the patch cannot create it (`--- /dev/null`); diff against its current content (`--- a/{shown}`) instead"
                )));
            }
            if let Some((i, h)) = file.hunks.iter().enumerate().find(|(_, h)| h.old_lines().next().is_some()) {
                return Err(ToolError::model(format!(
                    "`{shown}` is created by this patch (`--- /dev/null`), so its hunks may only add lines, but hunk {} ({}) has context or removed lines",
                    i + 1,
                    h.header
                )));
            }
            let (lines, notes) = apply_hunks(&shown, Vec::new(), &file.hunks, patch_eol(&file.hunks))?;
            let perms = mode.unwrap_or_else(|| Permissions::from_mode(DEFAULT_MODE));
            stage.put(&target.to, join_lines(&lines), Some(perms));
            Ok(result("created", None, notes))
        }
        Action::Delete { .. } => {
            let bytes = existing_text(stage, &target.to, &shown, ", so it cannot be deleted")?;
            let (rest, notes) = patched(&shown, &bytes, &file.hunks)?;
            if !rest.is_empty() {
                let left = split_lines(&rest).len();
                return Err(ToolError::model(format!(
                    "`{shown}` would keep {left} line(s) after the deletion's hunks; a deletion (`+++ /dev/null`) must remove every line of the file, as `git diff` writes it"
                )));
            }
            stage.remove(&target.to);
            Ok(result("deleted", None, notes))
        }
        Action::Rename { .. } | Action::Copy { .. } => {
            let is_rename = matches!(file.action, Action::Rename { .. });
            let from_shown = ws.display(&target.from);
            if target.from == target.to {
                return Err(ToolError::model(format!("`{from_shown}` is renamed or copied onto itself")));
            }
            let bytes = existing_text(stage, &target.from, &from_shown, "")?;
            if stage.content(&target.to, &shown)?.is_some() {
                return Err(ToolError::model(format!(
                    "cannot {} `{from_shown}` to `{shown}`: `{shown}` already exists",
                    if is_rename { "rename" } else { "copy" }
                )));
            }
            let (new, notes) = patched(&shown, &bytes, &file.hunks)?;
            let perms = mode.or_else(|| stage.perms(&target.from));
            stage.put(&target.to, new, perms);
            if is_rename {
                stage.remove(&target.from);
            }
            Ok(result(if is_rename { "renamed" } else { "copied" }, Some(from_shown), notes))
        }
    }
}

fn render(files: &[FileResult]) -> ToolOutput {
    let (added, removed) = files.iter().fold((0, 0), |(a, r), f| (a + f.added, r + f.removed));
    let mut out = format!("Applied patch to {} file(s), +{added} -{removed}:\n", files.len());
    let mut notes = Vec::new();
    let mut meta = Vec::new();
    for f in files {
        let name = match &f.from {
            Some(from) => format!("{from} -> {}", f.path),
            None => f.path.clone(),
        };
        out.push_str(&format!("  {:<8} {name} (+{} -{})\n", f.action, f.added, f.removed));
        for n in &f.notes {
            if n.at != n.stated {
                notes.push(format!(
                    "{}: hunk {} applied at line {} (its header said {})",
                    f.path, n.index, n.at, n.stated
                ));
            }
            if n.whitespace_fuzz {
                notes.push(format!("{}: hunk {} matched only with trailing whitespace ignored", f.path, n.index));
            }
        }
        let mut entry = json!({"path": f.path, "action": f.action, "added": f.added, "removed": f.removed});
        if let (Some(from), Value::Object(map)) = (&f.from, &mut entry) {
            map.insert("from".into(), Value::String(from.clone()));
        }
        meta.push(entry);
    }
    if !notes.is_empty() {
        out.push_str("notes:\n");
        for n in &notes {
            out.push_str(&format!("  {n}\n"));
        }
    }
    ToolOutput::text(out).with_meta("files", Value::Array(meta)).with_meta("added", added).with_meta("removed", removed)
}

#[cfg(test)]
#[path = "apply_patch_tests.rs"]
mod tests;
