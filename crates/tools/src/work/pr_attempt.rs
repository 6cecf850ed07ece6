//! Git plumbing shared by the `pr_attempt_*` tools. Every step works on a
//! private index file (`GIT_INDEX_FILE` in a temporary directory), so capturing
//! an attempt or checking that it applies never touches the user's index or
//! work tree.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::{ToolContext, ToolError};

use crate::git::repo;
use crate::process::Launch;

/// A private index and the launch whose sandbox may write it.
pub struct PrivateIndex {
    pub launch: Launch,
    pub root: PathBuf,
    dir: tempfile::TempDir,
}

impl PrivateIndex {
    pub async fn new(ctx: &ToolContext, what: &str) -> Result<PrivateIndex, ToolError> {
        let dir =
            tempfile::tempdir().map_err(|e| ToolError::model(format!("cannot create a temporary directory: {e}")))?;
        // The index lives one level down: the sandbox grants a writable root's
        // existing entries one by one (to keep `.git/config` beneath any root
        // read-only), so git could not create `index.lock` at the root itself.
        std::fs::create_dir(dir.path().join("ix"))
            .map_err(|e| ToolError::model(format!("cannot create a temporary directory: {e}")))?;
        let grant =
            crate::process::authorize(ctx, &CommandRequest::tool(format!("git ({what}, on a private index)"))).await?;
        let root = ctx.workspace.root().to_path_buf();
        let launch = Launch::with_roots(ctx, grant, vec![root.clone(), dir.path().to_path_buf()])?;
        Ok(PrivateIndex { launch, root, dir })
    }

    fn index(&self) -> PathBuf {
        self.dir.path().join("ix").join("index")
    }

    pub fn scratch(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `git <args>` with the private index; non-zero exit is an error with git's message.
    pub async fn git(&self, args: &[&str]) -> Result<Vec<u8>, ToolError> {
        let out = self.git_raw(args).await?;
        if !out.status.success() {
            return Err(ToolError::model(format!(
                "git {} failed: {}",
                args.first().unwrap_or(&""),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(out.stdout)
    }

    pub async fn git_raw(&self, args: &[&str]) -> Result<std::process::Output, ToolError> {
        let index = self.index();
        repo::spawn_with(&self.launch, &self.root, args, &[("GIT_INDEX_FILE", index.as_os_str() as &OsStr)]).await
    }
}

/// The work tree's changes against HEAD, untracked files included, as a binary
/// patch; plus HEAD, the files touched and line counts.
pub struct Captured {
    pub base: String,
    pub patch: Vec<u8>,
    pub files: Vec<String>,
    pub additions: u64,
    pub deletions: u64,
}

pub async fn capture(ix: &PrivateIndex) -> Result<Captured, ToolError> {
    repo::require_repo(&ix.launch, &ix.root, "pr_attempt_record").await?;
    let base = String::from_utf8_lossy(&ix.git(&["rev-parse", "--verify", "HEAD"]).await.map_err(|_| {
        ToolError::model("the repository has no commit yet: commit a base first, then record the attempt against it")
    })?)
    .trim()
    .to_string();
    ix.git(&["read-tree", "HEAD"]).await?;
    ix.git(&["add", "-A", "--", "."]).await?;
    let patch = ix.git(&["diff", "--cached", "--binary", "--no-ext-diff", "--no-color", "HEAD"]).await?;
    let numstat = ix.git(&["diff", "--cached", "--numstat", "--no-ext-diff", "HEAD"]).await?;
    let (mut additions, mut deletions, mut files) = (0u64, 0u64, Vec::new());
    for line in String::from_utf8_lossy(&numstat).lines() {
        let mut parts = line.splitn(3, '\t');
        let (a, d, f) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        additions += a.parse::<u64>().unwrap_or(0);
        deletions += d.parse::<u64>().unwrap_or(0);
        if !f.is_empty() {
            files.push(f.to_string());
        }
    }
    Ok(Captured { base, patch, files, additions, deletions })
}

/// What `git apply --check` says about a patch on `onto` (a commit-ish).
pub struct Check {
    pub onto: String,
    pub commit: String,
    pub applies: bool,
    /// git's own messages, e.g. "error: patch failed: src/lib.rs:3".
    pub errors: Vec<String>,
    /// The hunks git named, as they appear in the patch.
    pub conflicts: Vec<String>,
}

pub async fn check(ix: &PrivateIndex, patch_file: &Path, patch: &str, onto: &str) -> Result<Check, ToolError> {
    let commit = String::from_utf8_lossy(
        &ix.git(&["rev-parse", "--verify", &format!("{onto}^{{commit}}")])
            .await
            .map_err(|_| ToolError::model(format!("`{onto}` is not a commit in this repository")))?,
    )
    .trim()
    .to_string();
    ix.git(&["read-tree", &commit]).await?;
    let file = patch_file.to_string_lossy();
    let out = ix.git_raw(&["apply", "--check", "--cached", "--binary", "-v", &file]).await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<String> = stderr.lines().filter(|l| l.starts_with("error:")).map(str::to_string).collect();
    let mut conflicts = Vec::new();
    for e in &errors {
        // "error: patch failed: path:LINE"
        if let Some(rest) = e.strip_prefix("error: patch failed: ")
            && let Some((path, line)) = rest.rsplit_once(':')
            && let Some(hunk) = hunk_at(patch, path, line.trim())
        {
            conflicts.push(hunk);
        }
    }
    Ok(Check { onto: onto.to_string(), commit, applies: out.status.success(), errors, conflicts })
}

/// The hunk of `path` in `patch` whose old range starts at `line`, header and body.
fn hunk_at(patch: &str, path: &str, line: &str) -> Option<String> {
    let mut in_file = false;
    let mut lines = patch.lines().peekable();
    while let Some(l) = lines.next() {
        if l.starts_with("diff --git ") {
            in_file = l.ends_with(&format!(" b/{path}"));
            continue;
        }
        if in_file && l.starts_with("@@ -") && l[4..].split([',', ' ']).next() == Some(line) {
            let mut hunk = vec![l.to_string()];
            while let Some(next) = lines.peek() {
                if next.starts_with("@@") || next.starts_with("diff --git ") {
                    break;
                }
                hunk.push(lines.next().unwrap_or_default().to_string());
            }
            return Some(hunk.join("\n"));
        }
    }
    None
}
