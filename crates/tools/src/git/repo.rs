//! Shared git plumbing for `git_status`, `git_diff` and `diagnostics`.
//!
//! Everything goes through the git CLI: it is what the user's own hooks, config and
//! index format agree with, so its answer is the faithful one. Every call asks for
//! machine output and turns off what could make it wait or vary: the pager, colour,
//! path quoting, optional index locks (a status must not block a concurrent commit)
//! and credential prompts.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use quiver_engine::ToolError;

use crate::process::Launch;
use crate::util::which;

/// Long enough for a cold status on a large repository, short enough that a wedged
/// git (a stuck network filesystem) does not hang the session.
const GIT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where the workspace sits in its repository.
#[derive(Debug, Clone)]
pub struct Repo {
    pub toplevel: PathBuf,
    /// The workspace root relative to the top level, `""` or ending in `/`.
    pub prefix: String,
}

impl Repo {
    /// A repository-relative path as the model should see it: relative to the
    /// workspace root, or `:/path` (git's top-level notation) when outside it.
    pub fn show(&self, repo_path: &str) -> String {
        match repo_path.strip_prefix(&self.prefix) {
            // The workspace root itself (an untracked workspace shows as one entry).
            Some("") => ".".to_string(),
            Some(rest) => rest.to_string(),
            None => format!(":/{repo_path}"),
        }
    }
}

/// Runs `git -C <root> <args>` and returns stdout; a non-zero exit becomes an
/// error carrying git's own message.
pub async fn run(launch: &Launch, root: &Path, args: &[&str]) -> Result<Vec<u8>, ToolError> {
    let output = spawn(launch, root, args).await?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(ToolError::model(format!("git {} failed: {}", args.first().unwrap_or(&""), stderr.trim())));
    }
    Ok(output.stdout)
}

/// The repository holding `root`, or `None` when it is not inside one.
pub async fn repo(launch: &Launch, root: &Path) -> Result<Option<Repo>, ToolError> {
    let output = spawn(launch, root, &["rev-parse", "--show-toplevel", "--show-prefix"]).await?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("not a git repository") {
            return Ok(None);
        }
        return Err(ToolError::model(format!("git cannot read the repository here: {}", stderr.trim())));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines();
    let toplevel = PathBuf::from(lines.next().unwrap_or_default());
    let prefix = lines.next().unwrap_or_default().to_string();
    Ok(Some(Repo { toplevel, prefix }))
}

/// Like [`repo`], but not being in a repository is the model's error to act on.
pub async fn require_repo(launch: &Launch, root: &Path, tool: &str) -> Result<Repo, ToolError> {
    repo(launch, root).await?.ok_or_else(|| {
        ToolError::model(format!(
            "the workspace {} is not inside a git repository, so {tool} has nothing to show; \
             run `git init` there first if it should be one",
            root.display()
        ))
    })
}

async fn spawn(launch: &Launch, root: &Path, args: &[&str]) -> Result<std::process::Output, ToolError> {
    let Some(program) = which("git") else {
        return Err(ToolError::model("`git` is not installed (not on PATH); install git to use the git tools"));
    };
    let mut cmd = tokio::process::Command::new(program);
    // `core.fsmonitor=false`: with a configured monitor, a status would start its
    // daemon, a process that outlives the call.
    cmd.arg("-C")
        .arg(root)
        .args(["--no-pager", "-c", "core.quotepath=off", "-c", "color.ui=false", "-c", "core.fsmonitor=false"])
        .args(args)
        // A surrounding hook or script may point git elsewhere; `-C` must win.
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        // Stable English messages, which `repo` recognizes.
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Scrubbed, sandboxed as the call's grant says, contained: a hostile
    // `.git/config` (fsmonitor, aliases, diff drivers) runs inside the sandbox.
    let running = launch.prepare(&mut cmd).map_err(|e| ToolError::model(format!("cannot run git: {e}")))?;
    let child = cmd.spawn().map_err(|e| ToolError::model(format!("cannot run git: {e}")))?;
    running.started(child.id());
    match tokio::time::timeout(GIT_TIMEOUT, child.wait_with_output()).await {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(e)) => Err(ToolError::model(format!("git failed to run: {e}"))),
        Err(_) => Err(ToolError::model(format!(
            "git {} did not finish within {}s; the repository may be on a slow or stuck filesystem",
            args.first().unwrap_or(&""),
            GIT_TIMEOUT.as_secs()
        ))),
    }
}

/// One `git status --porcelain=v2 --branch --show-stash -z` report.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Status {
    /// `None` before the first commit.
    pub oid: Option<String>,
    /// `None` when HEAD is detached.
    pub branch: Option<String>,
    pub upstream: Option<String>,
    pub ahead: Option<u64>,
    pub behind: Option<u64>,
    pub stash: u64,
    pub entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Repository-relative.
    pub path: String,
    /// The source of a rename or copy.
    pub orig_path: Option<String>,
    pub kind: EntryKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EntryKind {
    /// `index` and `worktree` are git's XY letters; `.` means unchanged.
    Changed {
        index: char,
        worktree: char,
        score: Option<u32>,
    },
    Unmerged {
        xy: String,
    },
    Untracked,
    Ignored,
}

/// Runs and parses `git status` for the workspace (confined to it when the
/// workspace is a subdirectory of the repository).
pub async fn status(launch: &Launch, root: &Path) -> Result<Status, ToolError> {
    let out = run(
        launch,
        root,
        &["status", "--porcelain=v2", "--branch", "--show-stash", "-z", "--untracked-files=normal", "--", "."],
    )
    .await?;
    parse_status(&out).map_err(|e| ToolError::model(format!("unexpected git status output: {e}")))
}

/// Parses porcelain v2 with `-z`: NUL-terminated records, so paths need no unquoting.
pub fn parse_status(raw: &[u8]) -> Result<Status, String> {
    let text = String::from_utf8_lossy(raw);
    let mut records = text.split('\0').filter(|r| !r.is_empty());
    let mut status = Status::default();
    while let Some(record) = records.next() {
        let (tag, rest) = record.split_once(' ').ok_or_else(|| format!("record without fields: {record:?}"))?;
        match tag {
            "#" => parse_header(rest, &mut status),
            "1" => {
                let f: Vec<&str> = rest.splitn(8, ' ').collect();
                let [xy, _sub, _mh, _mi, _mw, _hh, _hi, path] = f[..] else {
                    return Err(format!("short changed record: {record:?}"));
                };
                status.entries.push(changed(xy, path, None, None));
            }
            "2" => {
                let f: Vec<&str> = rest.splitn(9, ' ').collect();
                let [xy, _sub, _mh, _mi, _mw, _hh, _hi, score, path] = f[..] else {
                    return Err(format!("short rename record: {record:?}"));
                };
                // The source path is the next NUL-separated record.
                let orig = records.next().ok_or("rename record without its source path")?;
                let score = score.get(1..).and_then(|s| s.parse().ok());
                status.entries.push(changed(xy, path, Some(orig.to_string()), score));
            }
            "u" => {
                let f: Vec<&str> = rest.splitn(10, ' ').collect();
                let [xy, _sub, _m1, _m2, _m3, _mw, _h1, _h2, _h3, path] = f[..] else {
                    return Err(format!("short unmerged record: {record:?}"));
                };
                status.entries.push(Entry {
                    path: path.to_string(),
                    orig_path: None,
                    kind: EntryKind::Unmerged { xy: xy.to_string() },
                });
            }
            "?" => status.entries.push(Entry { path: rest.to_string(), orig_path: None, kind: EntryKind::Untracked }),
            "!" => status.entries.push(Entry { path: rest.to_string(), orig_path: None, kind: EntryKind::Ignored }),
            other => return Err(format!("unknown record type {other:?}")),
        }
    }
    Ok(status)
}

fn changed(xy: &str, path: &str, orig_path: Option<String>, score: Option<u32>) -> Entry {
    let mut chars = xy.chars();
    let index = chars.next().unwrap_or('.');
    let worktree = chars.next().unwrap_or('.');
    Entry { path: path.to_string(), orig_path, kind: EntryKind::Changed { index, worktree, score } }
}

fn parse_header(rest: &str, status: &mut Status) {
    let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
    match key {
        "branch.oid" if value != "(initial)" => status.oid = Some(value.to_string()),
        "branch.head" if value != "(detached)" => status.branch = Some(value.to_string()),
        "branch.upstream" => status.upstream = Some(value.to_string()),
        "branch.ab" => {
            for part in value.split(' ') {
                if let Some(n) = part.strip_prefix('+') {
                    status.ahead = n.parse().ok();
                } else if let Some(n) = part.strip_prefix('-') {
                    status.behind = n.parse().ok();
                }
            }
        }
        "stash" => status.stash = value.parse().unwrap_or(0),
        _ => {}
    }
}

/// A status letter as a word a model reads without a legend.
pub fn letter_word(c: char) -> &'static str {
    match c {
        'M' => "modified",
        'T' => "type_changed",
        'A' => "added",
        'D' => "deleted",
        'R' => "renamed",
        'C' => "copied",
        'U' => "unmerged",
        _ => "unmodified",
    }
}

/// An unmerged pair as git's `git status` names it.
pub fn conflict_word(xy: &str) -> &'static str {
    match xy {
        "DD" => "both_deleted",
        "AU" => "added_by_us",
        "UD" => "deleted_by_them",
        "UA" => "added_by_them",
        "DU" => "deleted_by_us",
        "AA" => "both_added",
        _ => "both_modified",
    }
}

/// Test helper: runs git in `dir` as a fixed identity, isolated from the machine's
/// global and system config (a global `commit.gpgsign` must not break tests).
#[cfg(test)]
#[allow(clippy::expect_used)]
pub(crate) fn test_git_output(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=Quiver Test", "-c", "user.email=test@quiver.invalid", "-c", "init.defaultBranch=main"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run git")
}

/// [`test_git_output`] that must succeed; returns stdout.
#[cfg(test)]
pub(crate) fn test_git(dir: &Path, args: &[&str]) -> String {
    let out = test_git_output(dir, args);
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}
