//! The GitHub tools against a `gh` *stand-in*: there is no network here, so a
//! small shell script named `gh` (written by each test into its own bin
//! directory, which the tools search instead of `$PATH`) replays recorded `gh`
//! output (the JSON of `gh issue view --json` / `gh pr view --json` with gh's own
//! field names, `gh pr diff`, `gh auth status`) and records every argv it got,
//! its stdin and its working directory. The tests then check what quiver sent.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use quiver_engine::permissions::Approver;
use quiver_engine::{Audience, Engine, Manifest, Mode, Registry, ToolContext, ToolResult, Workspace};
use serde_json::{Value, json};

use super::github::{GhCli, check_repo, repo_of_url, target_host, token_vars_for};
use super::*;
use crate::git::repo::test_git;

/// The stand-in. Calls are numbered; call N leaves `calls/N.argv` (arguments,
/// NUL-separated), `calls/N.cwd` and, for `--body-file -`, `calls/N.stdin`.
/// The answer to `gh A B ...` is `fixtures/A-B.out` (stdout), `.err` (stderr)
/// and `.code` (exit status, default 0); a call with no recording fails loudly.
const STAND_IN: &str = r#"#!/bin/sh
# gh stand-in for tests (no network): records the call, replays a recording.
here=$(cd "$(dirname "$0")" && pwd)
n=$(cat "$here/calls/count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$here/calls/count"
printf '%s\0' "$@" > "$here/calls/$n.argv"
pwd > "$here/calls/$n.cwd"
case " $* " in *" --body-file - "*) cat > "$here/calls/$n.stdin" ;; esac
key="$1-$2"
if [ ! -f "$here/fixtures/$key.out" ] && [ ! -f "$here/fixtures/$key.code" ]; then
  echo "gh stand-in: no recording for: gh $1 $2" >&2
  exit 64
fi
[ -f "$here/fixtures/$key.out" ] && cat "$here/fixtures/$key.out"
[ -f "$here/fixtures/$key.err" ] && cat "$here/fixtures/$key.err" >&2
exit "$(cat "$here/fixtures/$key.code" 2>/dev/null || echo 0)"
"#;

/// What real `gh auth status` prints for a logged-in user (v2.40+).
const AUTH_OK: &str = "github.com\n  ✓ Logged in to github.com account octocat (keyring)\n  - Active account: true\n  - Git operations protocol: https\n  - Token: gho_************************************\n  - Token scopes: 'gist', 'read:org', 'repo', 'workflow'\n";

pub(super) struct Setup {
    pub(super) ws: tempfile::TempDir,
    pub(super) state: tempfile::TempDir,
    pub(super) bin: tempfile::TempDir,
}

impl Setup {
    pub(super) fn new() -> Setup {
        let s = Setup {
            ws: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
            bin: tempfile::tempdir().unwrap(),
        };
        let gh = s.bin.path().join("gh");
        std::fs::write(&gh, STAND_IN).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir(s.bin.path().join("calls")).unwrap();
        std::fs::create_dir(s.bin.path().join("fixtures")).unwrap();
        s.record("auth-status", AUTH_OK, 0);
        s
    }

    /// Records what the stand-in answers to `gh <key with - for space>`.
    pub(super) fn record(&self, key: &str, stdout: &str, code: i32) {
        let dir = self.bin.path().join("fixtures");
        std::fs::write(dir.join(format!("{key}.out")), stdout).unwrap();
        std::fs::write(dir.join(format!("{key}.code")), code.to_string()).unwrap();
    }

    pub(super) fn record_err(&self, key: &str, stderr: &str, code: i32) {
        let dir = self.bin.path().join("fixtures");
        let _ = std::fs::remove_file(dir.join(format!("{key}.out")));
        std::fs::write(dir.join(format!("{key}.err")), stderr).unwrap();
        std::fs::write(dir.join(format!("{key}.code")), code.to_string()).unwrap();
    }

    pub(super) fn ctx_with(&self, mode: Mode, gh_dir: &Path, approver: Option<Arc<dyn Approver>>) -> ToolContext {
        let work = WorkStore::new(Some(self.state.path().to_path_buf()));
        let gh = GhCli::new(Some(gh_dir.as_os_str().to_os_string()));
        let mut registry = Registry::new();
        registry.register(task_create::TaskCreate(work.clone())).unwrap();
        registry.register(task_read::TaskRead(work.clone())).unwrap();
        registry.register(task_gate_run::TaskGateRun(work.clone())).unwrap();
        registry.register(github_issue_context::GithubIssueContext(work.clone(), gh.clone())).unwrap();
        registry.register(github_pr_context::GithubPrContext(work.clone(), gh.clone())).unwrap();
        registry.register(github_comment::GithubComment(work.clone(), gh.clone())).unwrap();
        registry.register(github_close_issue::GithubCloseIssue(work.clone(), gh.clone())).unwrap();
        registry.register(github_issue_list::GithubIssueList(gh.clone())).unwrap();
        registry.register(github_pr_list::GithubPrList(gh.clone())).unwrap();
        registry.register(github_create_issue::GithubCreateIssue(work.clone(), gh.clone())).unwrap();
        registry.register(github_create_pr::GithubCreatePr(work.clone(), gh.clone())).unwrap();
        registry.register(github_close_pr::GithubClosePr(work, gh)).unwrap();
        registry.register(crate::evidence::retrieve_tool_result::RetrieveToolResult).unwrap();
        let engine = Arc::new(Engine::new(registry, Manifest::builtin().unwrap()));
        let mut ctx = engine.context(Workspace::new(self.ws.path()).unwrap(), Audience { mode, ..Audience::default() });
        ctx.approver = approver;
        ctx
    }

    pub(super) fn ctx(&self, mode: Mode) -> ToolContext {
        self.ctx_with(mode, self.bin.path(), None)
    }

    pub(super) fn store(&self) -> quiver_durable::Store {
        quiver_durable::Store::open(self.state.path()).unwrap()
    }

    /// Every call the stand-in got, in order, as argv.
    pub(super) fn calls(&self) -> Vec<Vec<String>> {
        let dir = self.bin.path().join("calls");
        let n: usize = std::fs::read_to_string(dir.join("count")).map(|s| s.trim().parse().unwrap()).unwrap_or(0);
        (1..=n)
            .map(|i| {
                let raw = std::fs::read(dir.join(format!("{i}.argv"))).unwrap();
                let text = String::from_utf8(raw).unwrap();
                text.split('\0').filter(|a| !a.is_empty()).map(str::to_string).collect()
            })
            .collect()
    }

    pub(super) fn call_file(&self, n: usize, ext: &str) -> String {
        std::fs::read_to_string(self.bin.path().join("calls").join(format!("{n}.{ext}"))).unwrap()
    }

    /// A committed repository in the workspace (a clean tree).
    pub(super) fn git_repo(&self) {
        let ws = self.ws.path();
        test_git(ws, &["init", "-q"]);
        std::fs::write(ws.join("lib.rs"), "fn fixed() {}\n").unwrap();
        test_git(ws, &["add", "."]);
        test_git(ws, &["commit", "-qm", "fix"]);
    }
}

/// Says a fixed yes or no and remembers the questions.
pub(super) struct Answer {
    yes: bool,
    pub(super) asked: Mutex<Vec<String>>,
}

impl Answer {
    pub(super) fn new(yes: bool) -> Arc<Answer> {
        Arc::new(Answer { yes, asked: Mutex::new(Vec::new()) })
    }
}

impl Approver for Answer {
    fn approve<'a>(&'a self, question: &'a str) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>> {
        self.asked.lock().unwrap().push(question.to_string());
        let yes = self.yes;
        Box::pin(async move { yes })
    }
}

pub(super) async fn call(ctx: &ToolContext, name: &str, args: Value) -> ToolResult {
    ctx.call(name, args).await.unwrap()
}

pub(super) fn json_of(r: &ToolResult) -> Value {
    assert!(!r.is_error, "{}", r.content_text());
    serde_json::from_str(&r.content_text()).unwrap()
}

pub(super) fn refused(r: &ToolResult, needle: &str) {
    assert!(r.is_error, "expected a refusal containing {needle:?}, got {}", r.content_text());
    assert!(r.content_text().contains(needle), "expected {needle:?} in: {}", r.content_text());
}

pub(super) fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// `gh issue view --json <ISSUE_FIELDS>` as gh prints it (field names and shapes from gh 2.x).
fn issue_json(body: &str) -> Value {
    json!({
        "assignees": [{"id": "MDQ6VXNlcjE=", "login": "octocat", "name": "The Octocat"}],
        "author": {"id": "MDQ6VXNlcjI=", "is_bot": false, "login": "hubot", "name": "Hubot"},
        "body": body,
        "closedAt": null,
        "comments": [
            {"id": "IC_kwDOAAAB", "author": {"login": "octocat"}, "authorAssociation": "MEMBER",
             "body": "Reproduced on main.", "createdAt": "2026-11-20T10:00:00Z", "includesCreatedEdit": false,
             "isMinimized": false, "minimizedReason": "", "reactionGroups": [],
             "url": "https://github.com/octo/widgets/issues/12#issuecomment-1", "viewerDidAuthor": false},
            {"id": "IC_kwDOAAAC", "author": {"login": "hubot"}, "authorAssociation": "CONTRIBUTOR",
             "body": format!("Stack trace:\n{}", "  at widgets::parse (src/parse.rs:42)\n".repeat(80)),
             "createdAt": "2026-11-21T09:30:00Z", "includesCreatedEdit": false, "isMinimized": false,
             "minimizedReason": "", "reactionGroups": [],
             "url": "https://github.com/octo/widgets/issues/12#issuecomment-2", "viewerDidAuthor": false}
        ],
        "createdAt": "2026-11-19T08:00:00Z",
        "labels": [{"id": "LA_1", "name": "bug", "description": "Something is broken", "color": "d73a4a"},
                   {"id": "LA_2", "name": "parser", "description": "", "color": "ededed"}],
        "milestone": {"number": 3, "title": "v1.2", "description": "", "dueOn": null},
        "number": 12,
        "state": "OPEN",
        "stateReason": "",
        "title": "Crash on empty input",
        "updatedAt": "2026-11-21T09:30:00Z",
        "url": "https://github.com/octo/widgets/issues/12"
    })
}

/// `gh` sends `GH_ENTERPRISE_TOKEN` to any host but github.com, and the host
/// comes from a remote or `repo` a cloned repository chooses: the enterprise
/// token goes only to the user's own `GH_HOST`, other hosts get no token.
#[test]
fn tokens_go_only_to_their_own_hosts() {
    let argv = |repo: &str| vec!["issue".to_string(), "view".into(), "1".into(), "--repo".into(), repo.to_string()];
    let host = |repo: &str, gh_host: Option<&str>| {
        let a = argv(repo);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        target_host(&refs, gh_host)
    };
    assert_eq!(host("o/r", None).as_deref(), Some("github.com"));
    assert_eq!(host("o/r", Some("GHE.corp.example")).as_deref(), Some("ghe.corp.example"), "gh's default host");
    assert_eq!(host("Evil.Example/o/r", None).as_deref(), Some("evil.example"));
    assert_eq!(target_host(&["auth", "status"], None), None);

    let github = ["GH_TOKEN", "GITHUB_TOKEN"];
    let all = ["GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"];
    assert_eq!(token_vars_for(Some("github.com".into()), None), github);
    assert_eq!(token_vars_for(Some("octo.ghe.com".into()), None), github);
    assert!(token_vars_for(Some("evil.example".into()), None).is_empty());
    assert!(token_vars_for(Some("evil.example".into()), Some("ghe.corp.example")).is_empty());
    assert!(token_vars_for(Some("github.localhost".into()), None).is_empty());
    assert_eq!(token_vars_for(Some("ghe.corp.example".into()), Some("GHE.corp.example ")), all);
    assert_eq!(token_vars_for(None, None), all, "`gh auth status` names no repository");
}

#[test]
fn repos_from_remote_urls_and_checked_names() {
    assert_eq!(repo_of_url("git@github.com:octo/widgets.git").as_deref(), Some("octo/widgets"));
    assert_eq!(repo_of_url("https://github.com/octo/widgets").as_deref(), Some("octo/widgets"));
    assert_eq!(repo_of_url("ssh://git@github.com/octo/widgets.git").as_deref(), Some("octo/widgets"));
    assert_eq!(repo_of_url("https://ghe.corp.example/team/tool.git").as_deref(), Some("ghe.corp.example/team/tool"));
    assert_eq!(repo_of_url("/srv/git/widgets.git"), None);
    assert_eq!(check_repo("octo/widgets").unwrap(), "octo/widgets");
    for bad in ["octo", "-R/x", "octo/wid gets", "a/b/c/d", "octo/../x", "octo/;rm"] {
        assert!(check_repo(bad).is_err(), "{bad}");
    }
}

#[tokio::test]
async fn issue_context_summarizes_and_keeps_long_parts_as_artifacts() {
    let s = Setup::new();
    let body = format!("Parsing \"\" panics.\n\n{}\nEND-OF-BODY\n", "Steps: run `widgets parse ''`.\n".repeat(120));
    s.record("issue-view", &issue_json(&body).to_string(), 0);
    let ctx = s.ctx(Mode::Agent);
    let r = json_of(&call(&ctx, "github_issue_context", json!({"repo": "octo/widgets", "number": 12})).await);
    assert_eq!(r["issue"]["title"], "Crash on empty input");
    assert_eq!(r["issue"]["labels"], json!(["bug", "parser"]));
    assert_eq!(r["issue"]["assignees"], json!(["octocat"]));
    assert_eq!(r["issue"]["milestone"], "v1.2");
    assert_eq!(r["issue"]["author"], "hubot");
    // The long body is an artifact: a summary and a handle, not the whole text.
    let card = &r["body"];
    assert!(card.get("text").is_none(), "{card}");
    assert!(r.to_string().len() < body.len(), "the result is smaller than the body it summarizes");
    let art = card["artifact"].as_str().unwrap();
    assert_eq!(String::from_utf8(s.store().artifact_bytes(art).unwrap()).unwrap(), body);
    let handle = card["handle"].as_str().unwrap();
    let tail = call(&ctx, "retrieve_tool_result", json!({"handle": handle, "mode": "tail", "n": 2})).await;
    assert!(tail.content_text().contains("END-OF-BODY"), "{}", tail.content_text());
    // The thread is long too: counted, the newest shown as excerpts, the whole kept.
    assert_eq!(r["comments"]["count"], 2);
    assert_eq!(r["comments"]["recent"][0]["author"], "octocat");
    assert!(r["comments"]["all"]["artifact"].is_string(), "{}", r["comments"]);
    assert_eq!(
        s.calls(),
        vec![
            args(&["auth", "status"]),
            args(&["issue", "view", "12", "--repo", "octo/widgets", "--json", github_issue_context::ISSUE_FIELDS]),
        ]
    );
    // gh never runs inside the workspace (a cloned repository's config is not its to read).
    assert_ne!(Path::new(s.call_file(2, "cwd").trim()), s.ws.path().canonicalize().unwrap());

    // A short body stays inline, and nothing more is stored.
    s.record("issue-view", &issue_json("Short.").to_string(), 0);
    let short = json_of(&call(&ctx, "github_issue_context", json!({"repo": "octo/widgets", "number": 12})).await);
    assert_eq!(short["body"], json!({"text": "Short."}));
    let bad = call(&ctx, "github_issue_context", json!({"repo": "--hostname=evil", "number": 12})).await;
    refused(&bad, "is not OWNER/REPO");
    refused(&call(&ctx, "github_issue_context", json!({"repo": "octo/widgets", "number": 0})).await, "minimum of 1");
}

#[tokio::test]
async fn pr_context_takes_the_repo_from_the_git_remote_and_keeps_the_diff() {
    if quiver_testkit::program_or_skip("git", "apt-get install git").is_none() {
        return;
    }
    let s = Setup::new();
    s.git_repo();
    test_git(s.ws.path(), &["remote", "add", "origin", "git@github.com:octo/widgets.git"]);
    let pr = json!({
        "additions": 120, "deletions": 4, "changedFiles": 2,
        "assignees": [], "author": {"login": "octocat"},
        "baseRefName": "main", "headRefName": "fix-empty-input", "headRefOid": "9fceb02d0ae598e95dc970b74767f19372d61af8",
        "body": "Fixes #12.", "comments": [],
        "createdAt": "2026-11-21T12:00:00Z", "updatedAt": "2026-11-22T08:00:00Z", "closedAt": null, "mergedAt": null,
        "files": [{"path": "src/parse.rs", "additions": 20, "deletions": 4},
                  {"path": "tests/empty.rs", "additions": 100, "deletions": 0}],
        "isDraft": false, "labels": [{"id": "LA_1", "name": "bug", "description": "", "color": "d73a4a"}],
        "mergeable": "MERGEABLE", "number": 7,
        "reviewDecision": "CHANGES_REQUESTED",
        "reviews": [
            {"id": "PRR_1", "author": {"login": "reviewer"}, "authorAssociation": "MEMBER", "body": "",
             "submittedAt": "2026-11-21T13:00:00Z", "includesCreatedEdit": false, "reactionGroups": [],
             "state": "COMMENTED", "commit": {"oid": "9fceb02"}},
            {"id": "PRR_2", "author": {"login": "reviewer"}, "authorAssociation": "MEMBER", "body": "needs a test",
             "submittedAt": "2026-11-21T14:00:00Z", "includesCreatedEdit": false, "reactionGroups": [],
             "state": "CHANGES_REQUESTED", "commit": {"oid": "9fceb02"}}
        ],
        "state": "OPEN",
        "statusCheckRollup": [
            {"__typename": "CheckRun", "completedAt": "2026-11-21T12:10:00Z", "conclusion": "SUCCESS",
             "detailsUrl": "https://github.com/octo/widgets/actions/runs/1", "name": "build",
             "startedAt": "2026-11-21T12:01:00Z", "status": "COMPLETED", "workflowName": "CI"},
            {"__typename": "CheckRun", "completedAt": "2026-11-21T12:12:00Z", "conclusion": "FAILURE",
             "detailsUrl": "https://github.com/octo/widgets/actions/runs/2", "name": "test",
             "startedAt": "2026-11-21T12:01:00Z", "status": "COMPLETED", "workflowName": "CI"},
            {"__typename": "StatusContext", "context": "ci/legacy", "startedAt": "2026-11-21T12:01:00Z",
             "state": "PENDING", "targetUrl": "https://ci.example/1"}
        ],
        "title": "Handle empty input in the parser",
        "url": "https://github.com/octo/widgets/pull/7"
    });
    s.record("pr-view", &pr.to_string(), 0);
    let diff = format!(
        "diff --git a/tests/empty.rs b/tests/empty.rs\nnew file mode 100644\n--- /dev/null\n+++ b/tests/empty.rs\n@@ -0,0 +1,100 @@\n{}",
        "+#[test] fn empty() { assert!(widgets::parse(\"\").is_ok()); }\n".repeat(100)
    );
    s.record("pr-diff", &diff, 0);
    let ctx = s.ctx(Mode::Agent);
    let r = json_of(&call(&ctx, "github_pr_context", json!({"number": 7, "diff": true})).await);
    assert_eq!(r["repo"], "octo/widgets", "taken from `origin`");
    assert_eq!(r["pr"]["head"], "fix-empty-input");
    assert_eq!(r["files"]["shown"][1]["path"], "tests/empty.rs");
    assert_eq!(r["checks"]["counts"], json!({"failure": 1, "pending": 1, "success": 1}));
    assert_eq!(r["checks"]["not_passing"][0], json!({"name": "test", "outcome": "failure"}));
    assert_eq!(r["reviews"]["reviewer"]["state"], "CHANGES_REQUESTED", "the latest review per reviewer");
    assert_eq!(r["body"], json!({"text": "Fixes #12."}));
    let art = r["diff"]["artifact"].as_str().unwrap();
    let stored = s.store().artifact(art).unwrap();
    assert_eq!((stored.kind.as_str(), stored.bytes as usize), ("diff", diff.len()));
    assert_eq!(
        s.calls(),
        vec![
            args(&["auth", "status"]),
            args(&["pr", "view", "7", "--repo", "octo/widgets", "--json", github_pr_context::PR_FIELDS]),
            args(&["pr", "diff", "7", "--repo", "octo/widgets", "--color", "never"]),
        ]
    );
    // No diff asked, none fetched.
    let plain = json_of(&call(&ctx, "github_pr_context", json!({"repo": "octo/widgets", "number": 7})).await);
    assert!(plain["diff"].is_null());
    assert_eq!(s.calls().len(), 5);
}

#[tokio::test]
async fn missing_or_logged_out_gh_is_a_clear_error() {
    let s = Setup::new();
    let empty = tempfile::tempdir().unwrap();
    let ctx = s.ctx_with(Mode::Agent, empty.path(), None);
    let r = call(&ctx, "github_issue_context", json!({"repo": "octo/widgets", "number": 12})).await;
    refused(&r, "`gh` is not installed");
    refused(&r, "gh auth login");

    s.record_err("auth-status", "You are not logged into any GitHub hosts. To log in, run: gh auth login\n", 1);
    s.record("issue-view", &issue_json("x").to_string(), 0);
    let ctx = s.ctx(Mode::Yolo);
    let r = call(&ctx, "github_issue_context", json!({"repo": "octo/widgets", "number": 12})).await;
    refused(&r, "`gh` is not logged in to GitHub");
    refused(&r, "You are not logged into any GitHub hosts");
    s.git_repo();
    let w = call(
        &ctx,
        "github_comment",
        json!({"repo": "octo/widgets", "number": 12, "body": "hi", "acceptance_criteria": ["a"], "evidence": ["b"]}),
    )
    .await;
    refused(&w, "not logged in");
    assert_eq!(s.calls(), vec![args(&["auth", "status"]), args(&["auth", "status"])], "nothing past the login check");
}

const CLOSE_ARGS: &str = r#"{"repo": "octo/widgets", "number": 12}"#;

/// `gh issue view --json number,title,state,url`, as the writes ask before asking you.
fn target_json(state: &str, kind: &str) -> String {
    json!({"number": 12, "state": state, "title": "Crash on empty input",
           "url": format!("https://github.com/octo/widgets/{kind}/12")})
    .to_string()
}

fn close_args(extra: Value) -> Value {
    let mut base: Value = serde_json::from_str(CLOSE_ARGS).unwrap();
    base.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    base
}

#[tokio::test]
async fn writes_without_criteria_or_real_evidence_are_refused_before_gh_runs() {
    let s = Setup::new();
    s.git_repo();
    s.record("issue-view", &target_json("OPEN", "issues"), 0);
    let ctx = s.ctx(Mode::Yolo);
    let ok_evidence = json!(["reproduced by hand before the fix, not after"]);
    let r =
        call(&ctx, "github_close_issue", close_args(json!({"acceptance_criteria": [], "evidence": ok_evidence}))).await;
    refused(&r, "`acceptance_criteria` is empty");
    let r =
        call(&ctx, "github_close_issue", close_args(json!({"acceptance_criteria": ["  "], "evidence": ok_evidence})))
            .await;
    refused(&r, "`acceptance_criteria` is empty");
    let r =
        call(&ctx, "github_close_issue", close_args(json!({"acceptance_criteria": ["fixed"], "evidence": [""]}))).await;
    refused(&r, "`evidence` is empty");
    let r =
        call(&ctx, "github_close_issue", close_args(json!({"acceptance_criteria": ["fixed"], "evidence": ["gate-9"]})))
            .await;
    refused(&r, "no such gate");
    let r = call(
        &ctx,
        "github_comment",
        close_args(json!({"body": "  ", "acceptance_criteria": ["fixed"], "evidence": ok_evidence})),
    )
    .await;
    refused(&r, "`body` is empty");
    let r = call(&ctx, "github_close_issue", json!({"repo": "octo/widgets", "number": 12})).await;
    assert!(r.is_error, "criteria and evidence are required fields: {}", r.content_text());
    assert!(s.calls().is_empty(), "gh was never run: {:?}", s.calls());
}

#[tokio::test]
async fn a_dirty_tree_is_refused_unless_allowed() {
    let s = Setup::new();
    s.git_repo();
    std::fs::write(s.ws.path().join("lib.rs"), "fn fixed() { todo!() }\n").unwrap();
    std::fs::write(s.ws.path().join("scratch.txt"), "notes\n").unwrap();
    s.record("issue-view", &target_json("OPEN", "issues"), 0);
    s.record("issue-comment", "https://github.com/octo/widgets/issues/12#issuecomment-99\n", 0);
    let ctx = s.ctx(Mode::Yolo);
    let comment = json!({"repo": "octo/widgets", "number": 12, "body": "Status update.",
        "acceptance_criteria": ["parser accepts empty input"], "evidence": ["checked by hand"]});
    let r = call(&ctx, "github_comment", comment.clone()).await;
    refused(&r, "uncommitted changes (lib.rs, scratch.txt)");
    assert!(s.calls().is_empty());

    let mut allowed = comment;
    allowed["allow_dirty"] = json!(true);
    let done = json_of(&call(&ctx, "github_comment", allowed).await);
    assert_eq!(done["audit"].as_array().unwrap().len(), 2, "{done}");
    // No task here: the audit records are kept, attached to none.
    assert!(done["note"].as_str().unwrap().contains("no active task"));

    // Outside git nothing shows the work is committed: refused the same way.
    let loose = Setup::new();
    loose.record("issue-view", &target_json("OPEN", "issues"), 0);
    let r = call(
        &loose.ctx(Mode::Yolo),
        "github_close_issue",
        close_args(json!({
        "acceptance_criteria": ["fixed"], "evidence": ["checked"]})),
    )
    .await;
    refused(&r, "not in a git repository");
    assert!(loose.calls().is_empty());
}

#[tokio::test]
async fn writes_need_approval_and_a_no_sends_nothing() {
    let s = Setup::new();
    s.git_repo();
    s.record("issue-view", &target_json("OPEN", "issues"), 0);
    s.record("issue-close", "", 0);
    let close = close_args(json!({"acceptance_criteria": ["fixed"], "evidence": ["checked by hand"]}));

    // Agent mode with nobody to ask: refused.
    let r = call(&s.ctx(Mode::Agent), "github_close_issue", close.clone()).await;
    refused(&r, "needs approval");
    // A user who says no.
    let no = Answer::new(false);
    let r = call(&s.ctx_with(Mode::Agent, s.bin.path(), Some(no.clone())), "github_close_issue", close.clone()).await;
    refused(&r, "not approved");
    let asked = no.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].contains("issue octo/widgets#12 (\"Crash on empty input\")"), "{}", asked[0]);
    assert!(asked[0].contains("**Acceptance criteria**\n- fixed"), "the question shows the text: {}", asked[0]);
    // Plan mode never gets that far.
    let r = call(&s.ctx(Mode::Plan), "github_close_issue", close).await;
    refused(&r, "plan mode");
    let writes: Vec<_> = s.calls().into_iter().filter(|c| c[1] != "view" && c[1] != "status").collect();
    assert!(writes.is_empty(), "no write reached gh: {writes:?}");
}

#[tokio::test]
async fn an_approved_close_sends_exactly_these_gh_arguments_and_audits_on_the_task() {
    let s = Setup::new();
    s.git_repo();
    s.record("issue-view", &target_json("OPEN", "issues"), 0);
    s.record("issue-close", "", 0);
    let yolo = s.ctx(Mode::Yolo);
    call(&yolo, "task_create", json!({"prompt": "fix #12"})).await;
    let gate = json_of(
        &call(&yolo, "task_gate_run", json!({"command": "echo 'test result: ok. 3 passed'", "task_id": "task-1"}))
            .await,
    );
    assert_eq!(gate["classification"], "passed");
    let gate = s.store().gate("gate-1").unwrap();

    let yes = Answer::new(true);
    let ctx = s.ctx_with(Mode::Agent, s.bin.path(), Some(yes.clone()));
    let done = json_of(
        &call(
            &ctx,
            "github_close_issue",
            close_args(json!({
                "comment": "Fixed on main.",
                "acceptance_criteria": ["the parser accepts empty input"],
                "evidence": ["gate-1", "reproduced by hand before the fix, not after"],
                "task_id": "task-1",
            })),
        )
        .await,
    );
    assert_eq!(yes.asked.lock().unwrap().len(), 1, "asked once");
    let text = format!(
        "Fixed on main.\n\n**Acceptance criteria**\n- the parser accepts empty input\n\n**Evidence**\n- gate-1 `{}`: {}\n- reproduced by hand before the fix, not after\n\n<sub>Posted by quiver (github_close_issue) for task-1 after approval.</sub>\n",
        gate.command, gate.summary
    );
    let expected_close =
        args(&["issue", "close", "12", "--repo", "octo/widgets", "--reason", "completed", "--comment", &text]);
    assert_eq!(
        s.calls(),
        vec![
            args(&["auth", "status"]),
            args(&["issue", "view", "12", "--repo", "octo/widgets", "--json", "number,title,state,url"]),
            expected_close.clone(),
        ]
    );
    assert_eq!(done["task_id"], "task-1");

    let audit = s.store().audit_of("task-1").unwrap();
    assert_eq!(audit.len(), 2, "{audit:?}");
    assert_eq!(audit[0].action, "github_close_issue");
    assert_eq!(audit[0].detail["phase"], "approved");
    assert_eq!(audit[0].detail["approved_by"], "user");
    assert_eq!(audit[0].detail["gh_args"], json!(expected_close));
    assert_eq!(audit[0].detail["evidence"][0]["gate"], "gate-1");
    assert_eq!(audit[0].detail["evidence"][0]["classification"], "passed");
    assert_eq!(audit[1].detail["phase"], "sent");
    let read = json_of(&call(&ctx, "task_read", json!({"task_id": "task-1"})).await);
    let kinds: Vec<&str> = read["timeline"].as_array().unwrap().iter().filter_map(|e| e["kind"].as_str()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "audit").count(), 2, "{kinds:?}");

    // Closing it again: gh says it is closed now, so nothing is sent.
    s.record("issue-view", &target_json("CLOSED", "issues"), 0);
    let again = call(
        &yolo,
        "github_close_issue",
        close_args(json!({"acceptance_criteria": ["x"], "evidence": ["gate-1"], "task_id": "task-1"})),
    )
    .await;
    refused(&again, "already closed");
}

#[tokio::test]
async fn an_approved_pr_comment_goes_through_stdin_and_a_failed_gh_is_audited() {
    let s = Setup::new();
    s.git_repo();
    s.record(
        "pr-view",
        &json!({"number": 7, "state": "OPEN", "title": "Handle empty input",
        "url": "https://github.com/octo/widgets/pull/7"})
        .to_string(),
        0,
    );
    s.record("pr-comment", "https://github.com/octo/widgets/pull/7#issuecomment-5\n", 0);
    let yolo = s.ctx(Mode::Yolo);
    call(&yolo, "task_create", json!({"prompt": "review #7"})).await;
    let done = json_of(
        &call(
            &yolo,
            "github_comment",
            json!({"repo": "octo/widgets", "number": 7, "kind": "pr", "body": "Looks good once CI is green.",
                "acceptance_criteria": ["tests cover empty input"], "evidence": ["read the diff: tests/empty.rs"],
                "task_id": "task-1"}),
        )
        .await,
    );
    assert!(done["gh_output"].as_str().unwrap().contains("issuecomment-5"), "{done}");
    let calls = s.calls();
    assert_eq!(calls[2], args(&["pr", "comment", "7", "--repo", "octo/widgets", "--body-file", "-"]));
    let posted = s.call_file(3, "stdin");
    assert!(posted.starts_with("Looks good once CI is green.\n\n**Acceptance criteria**\n- tests cover empty input\n"));
    assert!(posted.contains("- read the diff: tests/empty.rs\n"), "{posted}");
    let audit = s.store().audit_of("task-1").unwrap();
    assert_eq!(audit[0].detail["approved_by"], "yolo mode");
    assert_eq!(audit[0].detail["text"], posted);

    // gh fails the write: the error reaches the model and the audit says so.
    s.record_err("pr-comment", "GraphQL: Could not add comment (addComment)\n", 1);
    let r = call(
        &yolo,
        "github_comment",
        json!({"repo": "octo/widgets", "number": 7, "kind": "pr", "body": "again",
            "acceptance_criteria": ["a"], "evidence": ["b"], "task_id": "task-1"}),
    )
    .await;
    refused(&r, "Could not add comment");
    let audit = s.store().audit_of("task-1").unwrap();
    assert_eq!(audit.len(), 4);
    assert_eq!(audit[3].detail["phase"], "failed");
    assert!(audit[3].detail["error"].as_str().unwrap().contains("Could not add comment"));
}

#[tokio::test]
async fn closing_refuses_red_gates_foreign_evidence_and_the_wrong_kind() {
    let s = Setup::new();
    s.git_repo();
    let yolo = s.ctx(Mode::Yolo);
    call(&yolo, "task_create", json!({"prompt": "fix #12"})).await;
    call(&yolo, "task_create", json!({"prompt": "other work"})).await;
    json_of(&call(&yolo, "task_gate_run", json!({"command": "echo broken; exit 1", "task_id": "task-1"})).await);
    json_of(&call(&yolo, "task_gate_run", json!({"command": "echo fine", "task_id": "task-2"})).await);
    s.record("issue-view", &target_json("OPEN", "issues"), 0);
    let close = |evidence: Value| {
        close_args(json!({"acceptance_criteria": ["fixed"], "evidence": evidence, "task_id": "task-1"}))
    };
    refused(
        &call(&yolo, "github_close_issue", close(json!(["gate-1"]))).await,
        "gate-1 (echo broken; exit 1) is failed",
    );
    refused(
        &call(&yolo, "github_close_issue", close(json!(["gate-2: green"]))).await,
        "gate-2 belongs to task-2, not to task-1",
    );
    refused(&call(&yolo, "github_close_issue", close(json!(["art-99"]))).await, "no such artifact");
    refused(&call(&yolo, "github_close_issue", close(json!(["pr-4"]))).await, "no such PR attempt");
    assert!(s.calls().is_empty(), "refused before gh: {:?}", s.calls());
    // A failed gate is fine to *report* in a comment.
    s.record("issue-comment", "https://github.com/octo/widgets/issues/12#issuecomment-7\n", 0);
    let r = call(
        &yolo,
        "github_comment",
        json!({"repo": "octo/widgets", "number": 12, "body": "Still failing.",
        "acceptance_criteria": ["fixed"], "evidence": ["gate-1"], "task_id": "task-1"}),
    )
    .await;
    json_of(&r);
    // A pull request's number given to the issue tool.
    s.record("issue-view", &target_json("OPEN", "pull"), 0);
    let r = call(&yolo, "github_close_issue", close(json!(["checked by hand"]))).await;
    refused(&r, "is a pull request, not an issue; use github_close_pr");
    // And a merged PR is not closed again.
    s.record(
        "pr-view",
        &json!({"number": 12, "state": "MERGED", "title": "t",
        "url": "https://github.com/octo/widgets/pull/12"})
        .to_string(),
        0,
    );
    refused(&call(&yolo, "github_close_pr", close(json!(["checked by hand"]))).await, "already merged");
    let closes: Vec<_> = s.calls().into_iter().filter(|c| c[1] == "close").collect();
    assert!(closes.is_empty(), "{closes:?}");
}
