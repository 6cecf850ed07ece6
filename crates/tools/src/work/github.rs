//! The GitHub CLI (`gh`) as the `github_*` tools use it: found on PATH, checked
//! for a login (`gh auth status`), run with a fixed argv and a time limit.
//!
//! Why `gh` runs unconfined: it must reach GitHub over the network with the
//! user's own login (its config and keyring, or `GH_TOKEN` from the user's own
//! environment), which the workspace sandbox refuses. What keeps a cloned
//! repository out of it: `gh` never runs inside the workspace. The repository is
//! always passed as `--repo`, inferred (when the model gives none) by a
//! sandboxed `git remote -v` of our own, and `gh`'s working directory is a fresh
//! temporary directory, so a hostile `.git/config` is never read by an
//! unconfined process. Every invocation still passes the command gate with its
//! whole argv, so a user's deny rule (`gh issue close`) holds.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::spill::SpillStore;
use quiver_engine::{Capabilities, ToolContext, ToolError};
use quiver_sandbox::EnvPolicy;

use super::{WorkStore, blocking};
use crate::process::{Grant, Launch, SandboxKind};

/// What a tool that writes to GitHub through `gh` does: runs it, over the
/// network, keeps an audit record on the task, and asks for approval itself
/// (showing what it will write) rather than through the command gate.
pub const GH_WRITE: Capabilities = Capabilities::RUNS_COMMANDS
    .union(Capabilities::NETWORK)
    .union(Capabilities::PERSISTS)
    .union(Capabilities::GATES_ITSELF);

/// A `gh` call that takes longer is a stuck network, not a slow answer.
const GH_TIMEOUT: Duration = Duration::from_secs(90);
/// Bodies, comment threads and diffs longer than this become artifacts.
pub const INLINE_BYTES: usize = 2000;
/// Variables `gh` reads its login from: the scrub drops them (they look like
/// secrets), and `gh` is exactly the program they are meant for, so they are
/// handed to it by name unless the user's own scrub list names them, and
/// only for the hosts they are meant for ([`token_vars_for`]).
const GH_TOKEN_VARS: &[&str] = &["GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"];

/// Where `gh` is looked for: `$PATH`, or a fixed search path (tests put a
/// recorded stand-in there; embedders may pin one).
#[derive(Debug, Default)]
pub struct GhCli {
    search_path: Option<OsString>,
}

impl GhCli {
    pub fn new(search_path: Option<OsString>) -> Arc<GhCli> {
        Arc::new(GhCli { search_path })
    }

    fn locate(&self) -> Result<PathBuf, ToolError> {
        let path = self.search_path.clone().or_else(|| std::env::var_os("PATH"));
        crate::util::which_in("gh", path).ok_or_else(|| {
            ToolError::model(
                "the GitHub CLI `gh` is not installed (not on PATH), and the github_* tools work through it: \
                 install it (https://cli.github.com), run `gh auth login`, then retry",
            )
        })
    }

    /// A located `gh` with a working login: the one way the tools get a [`Gh`].
    pub async fn ready(&self, ctx: &ToolContext) -> Result<Gh, ToolError> {
        let program = self.locate()?;
        let home =
            tempfile::tempdir().map_err(|e| ToolError::model(format!("cannot create a temporary directory: {e}")))?;
        let gh = Gh { program, home };
        let out = gh.run_raw(ctx, &["auth", "status"], None).await?;
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr);
            let said = if said.trim().is_empty() { String::from_utf8_lossy(&out.stdout) } else { said };
            return Err(ToolError::model(format!(
                "`gh` is not logged in to GitHub (`gh auth status` exited {}: {}); run `gh auth login` \
                 (or set GH_TOKEN in your own environment), then retry",
                out.status.code().map_or_else(|| "by a signal".to_string(), |c| c.to_string()),
                first_lines(&said, 3)
            )));
        }
        Ok(gh)
    }
}

/// A `gh` that passed `gh auth status`.
pub struct Gh {
    program: PathBuf,
    /// The working directory of every call: empty, never the workspace.
    home: tempfile::TempDir,
}

impl Gh {
    /// `gh <args>`; a non-zero exit is an error carrying `gh`'s own message.
    pub async fn run(&self, ctx: &ToolContext, args: &[&str], stdin: Option<&[u8]>) -> Result<Vec<u8>, ToolError> {
        let out = self.run_raw(ctx, args, stdin).await?;
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr);
            return Err(ToolError::model(format!(
                "`gh {}` failed: {}",
                args.iter().take(2).copied().collect::<Vec<_>>().join(" "),
                first_lines(&said, 6)
            )));
        }
        Ok(out.stdout)
    }

    async fn run_raw(
        &self,
        ctx: &ToolContext,
        args: &[&str],
        stdin: Option<&[u8]>,
    ) -> Result<std::process::Output, ToolError> {
        let mut argv = vec!["gh"];
        argv.extend_from_slice(args);
        let permit = ctx.authorize_command(&CommandRequest::tool_argv(&argv)).await?;
        let launch = Launch::new(ctx, Grant { permit, sandbox: SandboxKind::Full })?;
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(args)
            .current_dir(self.home.path())
            .env("GH_PROMPT_DISABLED", "1")
            .env("GH_NO_UPDATE_NOTIFIER", "1")
            .env("GH_SPINNER_DISABLED", "1")
            .env("GH_PAGER", "cat")
            .env("NO_COLOR", "1")
            .env("CLICOLOR", "0")
            // A surrounding shell may name a repository; ours is always `--repo`.
            .env_remove("GH_REPO")
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let user_scrub = EnvPolicy { ignore_default_excludes: true, ..EnvPolicy::user() };
        let gh_host = std::env::var("GH_HOST").ok();
        for name in token_vars_for(target_host(args, gh_host.as_deref()), gh_host.as_deref()) {
            if let Some(value) = quiver_sandbox::secret_env_os(name)
                && user_scrub.keeps(std::ffi::OsStr::new(name))
            {
                cmd.env(name, value);
            }
        }
        let running = launch.prepare(&mut cmd).map_err(|e| ToolError::model(format!("cannot run gh: {e}")))?;
        let mut child = cmd.spawn().map_err(|e| ToolError::model(format!("cannot run gh: {e}")))?;
        running.started(child.id());
        if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
            let bytes = bytes.to_vec();
            // Written from a task: a large body must not block reading gh's output.
            tokio::spawn(async move {
                let _ = pipe.write_all(&bytes).await;
                let _ = pipe.shutdown().await;
            });
        }
        match tokio::time::timeout(GH_TIMEOUT, child.wait_with_output()).await {
            Ok(Ok(out)) => Ok(out),
            Ok(Err(e)) => Err(ToolError::model(format!("gh failed to run: {e}"))),
            Err(_) => Err(ToolError::model(format!(
                "`gh {}` did not answer within {}s (network down or GitHub unreachable?)",
                args.iter().take(2).copied().collect::<Vec<_>>().join(" "),
                GH_TIMEOUT.as_secs()
            ))),
        }
    }
}

/// The host a call's `--repo` names (`HOST/OWNER/REPO`), or for
/// `OWNER/REPO` the one gh defaults to (the user's `GH_HOST`, else
/// github.com); `None` for a call without `--repo` (`gh auth status`).
pub(crate) fn target_host(args: &[&str], gh_host: Option<&str>) -> Option<String> {
    let repo = args.windows(2).find(|w| w[0] == "--repo").map(|w| w[1])?;
    let parts: Vec<&str> = repo.split('/').collect();
    let default = gh_host.map(str::trim).filter(|h| !h.is_empty()).unwrap_or("github.com");
    Some(if parts.len() == 3 { parts[0] } else { default }.to_ascii_lowercase())
}

/// Which of [`GH_TOKEN_VARS`] a call may see. The host comes from the
/// model's `repo` or the workspace's git remote, both of which a cloned
/// repository can choose, and `gh` sends `GH_ENTERPRISE_TOKEN` to *any* host
/// other than github.com (in a Codespace, `GITHUB_TOKEN` too). So github.com
/// and GitHub's own `*.ghe.com` tenancies get the github.com tokens, the host
/// the user's own `GH_HOST` names gets them all, and any other host none
/// (`gh` then uses only the login it stored for that host, if any).
pub(crate) fn token_vars_for(host: Option<String>, gh_host: Option<&str>) -> Vec<&'static str> {
    let user_host = gh_host.map(|h| h.trim().to_ascii_lowercase()).filter(|h| !h.is_empty());
    let Some(host) = host else {
        // `gh auth status`: no repository, the user's own hosts only.
        return GH_TOKEN_VARS.to_vec();
    };
    if user_host.as_deref() == Some(host.as_str()) {
        return GH_TOKEN_VARS.to_vec();
    }
    if host == "github.com" || host.ends_with(".ghe.com") {
        return GH_TOKEN_VARS.iter().copied().filter(|name| !name.contains("ENTERPRISE")).collect();
    }
    Vec::new()
}

fn first_lines(text: &str, n: usize) -> String {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).take(n).collect::<Vec<_>>().join(" / ")
}

/// `OWNER/REPO` or `HOST/OWNER/REPO`, in the characters GitHub allows, never
/// starting with `-` (an argv position gh would read as a flag).
pub fn check_repo(repo: &str) -> Result<String, ToolError> {
    let repo = repo.trim().trim_end_matches(".git").to_string();
    let parts: Vec<&str> = repo.split('/').collect();
    let ok_part = |p: &str| {
        !p.is_empty()
            && !p.starts_with('-')
            && p != "."
            && p != ".."
            && p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    if !(2..=3).contains(&parts.len()) || !parts.iter().all(|p| ok_part(p)) {
        return Err(ToolError::model(format!("`repo` {repo:?} is not OWNER/REPO (or HOST/OWNER/REPO)")));
    }
    Ok(repo)
}

pub fn check_number(number: u64) -> Result<String, ToolError> {
    if number == 0 {
        return Err(ToolError::model("`number` must be a positive issue or pull request number"));
    }
    Ok(number.to_string())
}

/// The repository the model named, or the one the workspace's git remote points
/// at (upstream, then github, then origin, then the first), read by a sandboxed
/// git of our own.
pub async fn resolve_repo(ctx: &ToolContext, given: Option<&str>) -> Result<String, ToolError> {
    if let Some(repo) = given.map(str::trim).filter(|r| !r.is_empty()) {
        return check_repo(repo);
    }
    let root = ctx.workspace.root().to_path_buf();
    let grant = crate::process::authorize(ctx, &CommandRequest::tool("git remote -v")).await?;
    let launch = Launch::new(ctx, grant)?;
    let none = || {
        ToolError::model(
            "give `repo` (OWNER/REPO): the workspace has no GitHub remote to infer it from (`git remote -v` names none)",
        )
    };
    if crate::git::repo::repo(&launch, &root).await?.is_none() {
        return Err(none());
    }
    let out = crate::git::repo::run(&launch, &root, &["remote", "-v"]).await?;
    let text = String::from_utf8_lossy(&out);
    let remotes: Vec<(&str, &str)> = text
        .lines()
        .filter(|l| l.ends_with("(fetch)"))
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            Some((parts.next()?, parts.next()?))
        })
        .collect();
    let preferred = ["upstream", "github", "origin"]
        .iter()
        .find_map(|name| remotes.iter().find(|(n, _)| n == name))
        .or_else(|| remotes.first())
        .ok_or_else(none)?;
    let repo = repo_of_url(preferred.1).ok_or_else(|| {
        ToolError::model(format!(
            "give `repo` (OWNER/REPO): the remote `{}` ({}) is not a repository URL quiver understands",
            preferred.0, preferred.1
        ))
    })?;
    check_repo(&repo)
}

/// `OWNER/REPO` (github.com) or `HOST/OWNER/REPO` from a git remote URL:
/// `https://host/o/r(.git)`, `ssh://git@host/o/r.git`, `git@host:o/r.git`.
pub fn repo_of_url(url: &str) -> Option<String> {
    let rest = if let Some((_, rest)) = url.split_once("://") {
        rest.to_string()
    } else {
        // scp-like: [user@]host:path
        let (host, path) = url.split_once(':')?;
        format!("{host}/{path}")
    };
    let rest = rest.rsplit_once('@').map_or(rest.as_str(), |(_, r)| r);
    let mut parts = rest.trim_end_matches('/').split('/');
    let host = parts.next()?.split(':').next()?.to_ascii_lowercase();
    let path: Vec<&str> = parts.collect();
    let [owner, name] = path[..] else { return None };
    let name = name.trim_end_matches(".git");
    if host == "github.com" || host == "www.github.com" {
        Some(format!("{owner}/{name}"))
    } else {
        Some(format!("{host}/{owner}/{name}"))
    }
}

/// A large text kept as an artifact on the task (or on none), readable through
/// `retrieve_tool_result` by the handle in the returned card.
pub async fn artifact_card(
    work: &WorkStore,
    ctx: &ToolContext,
    tool: &str,
    task: Option<String>,
    kind: &'static str,
    name: String,
    text: String,
) -> Result<Value, ToolError> {
    let store = work.get()?;
    let (bytes, lines) = (text.len(), text.lines().count());
    let artifact = blocking(store, move |s| s.put_artifact(task.as_deref(), kind, &name, text.as_bytes())).await?;
    let spilled = ctx.session.state::<SpillStore>().adopt(tool, artifact.path.clone().into(), bytes, lines);
    Ok(json!({
        "artifact": artifact.id,
        "handle": spilled.handle,
        "bytes": artifact.bytes,
        "lines": lines,
        "summary": artifact.summary,
        "read_more": format!("retrieve_tool_result {{\"handle\": \"{}\", \"mode\": \"lines\", \"offset\": 1}}", spilled.handle),
    }))
}

/// Inline when short, else an artifact card.
pub async fn text_or_artifact(
    work: &WorkStore,
    ctx: &ToolContext,
    tool: &str,
    task: Option<String>,
    kind: &'static str,
    name: String,
    text: String,
) -> Result<Value, ToolError> {
    if text.len() <= INLINE_BYTES {
        return Ok(json!({"text": text}));
    }
    artifact_card(work, ctx, tool, task, kind, name, text).await
}

/// The first `max` characters of one line of text, for excerpts.
pub fn excerpt(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    format!("{cut}…")
}

/// `author.login` (gh gives `{login, ...}` objects), or "ghost" for a deleted user.
pub fn login(v: &Value) -> String {
    v.get("login").and_then(Value::as_str).unwrap_or("ghost").to_string()
}

pub fn names(v: &Value, key: &str) -> Vec<String> {
    v.as_array()
        .map(|items| items.iter().filter_map(|i| i.get(key).and_then(Value::as_str)).map(str::to_string).collect())
        .unwrap_or_default()
}

/// A comment thread: the count, the newest few as excerpts, and the whole thread
/// (as markdown) inline when short or as an artifact when not.
pub async fn comment_thread(
    work: &WorkStore,
    ctx: &ToolContext,
    tool: &str,
    task: Option<String>,
    name: String,
    comments: &Value,
) -> Result<Value, ToolError> {
    let items = comments.as_array().cloned().unwrap_or_default();
    let rendered: String = items
        .iter()
        .map(|c| {
            format!(
                "### {} at {}\n\n{}\n",
                login(&c["author"]),
                c["createdAt"].as_str().unwrap_or(""),
                c["body"].as_str().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    if rendered.len() <= INLINE_BYTES {
        let all: Vec<Value> = items
            .iter()
            .map(|c| json!({"author": login(&c["author"]), "created_at": c["createdAt"], "body": c["body"]}))
            .collect();
        return Ok(json!({"count": items.len(), "comments": all}));
    }
    let recent: Vec<Value> = items
        .iter()
        .skip(items.len().saturating_sub(3))
        .map(|c| {
            json!({
                "author": login(&c["author"]),
                "created_at": c["createdAt"],
                "excerpt": excerpt(c["body"].as_str().unwrap_or(""), 300),
            })
        })
        .collect();
    let card = artifact_card(work, ctx, tool, task, "body", name, rendered).await?;
    Ok(json!({"count": items.len(), "recent": recent, "all": card}))
}

/// Parses `gh --json` output; anything else is gh misbehaving, said plainly.
pub fn parse_json(out: &[u8], what: &str) -> Result<Value, ToolError> {
    serde_json::from_slice(out).map_err(|e| {
        ToolError::model(format!(
            "`gh` answered {what} with something that is not JSON ({e}): {}",
            excerpt(&String::from_utf8_lossy(out), 200)
        ))
    })
}
