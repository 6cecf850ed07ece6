//! The list and create GitHub tools against the same recorded `gh` stand-in
//! as `github_tests` (no network): what argv quiver sends, what it makes of
//! gh's JSON, and that a creation asks first and sends nothing on a no.

use quiver_engine::Mode;
use serde_json::json;

use super::github_issue_list::ISSUE_LIST_FIELDS;
use super::github_pr_list::PR_LIST_FIELDS;
use super::github_tests::{Answer, Setup, args, call, json_of, refused};
use crate::git::repo::test_git;

#[tokio::test]
async fn issues_are_listed_with_state_label_and_author_filters() {
    let s = Setup::new();
    // `gh issue list --json ISSUE_LIST_FIELDS` as gh 2.x prints it.
    let listed = json!([
        {"number": 14, "title": "Login page 500s", "state": "OPEN",
         "author": {"id": "U_1", "is_bot": false, "login": "hubot", "name": "Hubot"},
         "labels": [{"id": "LA_1", "name": "bug", "description": "", "color": "d73a4a"}],
         "assignees": [], "updatedAt": "2026-11-30T10:00:00Z", "url": "https://github.com/octo/widgets/issues/14"},
        {"number": 12, "title": "Crash on empty input", "state": "OPEN", "author": {"login": "octocat"},
         "labels": [], "assignees": [{"login": "octocat"}], "updatedAt": "2026-11-21T09:30:00Z",
         "url": "https://github.com/octo/widgets/issues/12"}
    ]);
    s.record("issue-list", &listed.to_string(), 0);
    let ctx = s.ctx(Mode::Agent);
    let r = json_of(&call(&ctx, "github_issue_list", json!({"repo": "octo/widgets"})).await);
    assert_eq!(r["count"], 2);
    assert_eq!(r["state"], "open");
    assert_eq!(
        r["issues"][0],
        json!({"number": 14, "title": "Login page 500s", "state": "OPEN", "author": "hubot",
        "labels": ["bug"], "assignees": [], "updated_at": "2026-11-30T10:00:00Z",
        "url": "https://github.com/octo/widgets/issues/14"})
    );
    let filtered =
        json!({"repo": "octo/widgets", "state": "all", "labels": ["bug", "-x"], "author": "@me", "limit": 5});
    json_of(&call(&ctx, "github_issue_list", filtered).await);
    let calls = s.calls();
    assert_eq!(
        calls[1],
        args(&["issue", "list", "--repo", "octo/widgets", "--state=open", "--limit=30", "--json", ISSUE_LIST_FIELDS])
    );
    assert_eq!(
        calls[3],
        args(&[
            "issue",
            "list",
            "--repo",
            "octo/widgets",
            "--state=all",
            "--label=bug",
            "--label=-x",
            "--author=@me",
            "--limit=5",
            "--json",
            ISSUE_LIST_FIELDS
        ])
    );
    // Bad filters are refused before gh runs.
    let before = s.calls().len();
    refused(
        &call(&ctx, "github_issue_list", json!({"repo": "octo/widgets", "author": "a b"})).await,
        "not a GitHub login",
    );
    refused(&call(&ctx, "github_issue_list", json!({"repo": "octo/widgets", "limit": 500})).await, "between 1 and 100");
    refused(&call(&ctx, "github_issue_list", json!({"repo": "octo/widgets", "state": "merged"})).await, "state");
    assert_eq!(s.calls().len(), before);
}

#[tokio::test]
async fn open_prs_are_listed_with_their_branches() {
    let s = Setup::new();
    let listed = json!([
        {"number": 7, "title": "Handle empty input", "state": "OPEN", "isDraft": true, "author": {"login": "octocat"},
         "headRefName": "fix/null-deref", "baseRefName": "main", "labels": [{"name": "parser"}],
         "updatedAt": "2026-11-22T08:00:00Z", "url": "https://github.com/octo/widgets/pull/7"}
    ]);
    s.record("pr-list", &listed.to_string(), 0);
    let r = json_of(
        &call(
            &s.ctx(Mode::Agent),
            "github_pr_list",
            json!({"repo": "octo/widgets", "state": "merged", "author": "octocat"}),
        )
        .await,
    );
    assert_eq!(r["prs"][0]["head"], "fix/null-deref");
    assert_eq!(r["prs"][0]["draft"], true);
    assert_eq!(r["prs"][0]["labels"], json!(["parser"]));
    assert_eq!(
        s.calls()[1],
        args(&[
            "pr",
            "list",
            "--repo",
            "octo/widgets",
            "--state=merged",
            "--author=octocat",
            "--limit=30",
            "--json",
            PR_LIST_FIELDS
        ])
    );
}

#[tokio::test]
async fn creating_an_issue_asks_first_and_a_no_sends_nothing() {
    let s = Setup::new();
    s.record("issue-create", "Creating issue in octo/widgets\n\nhttps://github.com/octo/widgets/issues/15\n", 0);
    call(&s.ctx(Mode::Yolo), "task_create", json!({"prompt": "report the 500"})).await;
    let issue = json!({"repo": "octo/widgets", "title": "Login page 500s", "body": "Steps: open /login.",
        "labels": ["bug"], "task_id": "task-1"});
    // Plan mode refuses a write; agent mode with nobody to ask refuses too.
    refused(&call(&s.ctx(Mode::Plan), "github_create_issue", issue.clone()).await, "plan mode");
    refused(&call(&s.ctx(Mode::Agent), "github_create_issue", issue.clone()).await, "needs approval");
    let no = Answer::new(false);
    let r = call(&s.ctx_with(Mode::Agent, s.bin.path(), Some(no.clone())), "github_create_issue", issue.clone()).await;
    refused(&r, "not approved");
    let asked = no.asked.lock().unwrap().clone();
    assert!(asked[0].contains("create issue on GitHub in octo/widgets: \"Login page 500s\""), "{}", asked[0]);
    assert!(asked[0].contains("Steps: open /login."), "{}", asked[0]);
    assert!(s.calls().iter().all(|c| c[1] != "create"), "{:?}", s.calls());

    let yes = Answer::new(true);
    let done = json_of(&call(&s.ctx_with(Mode::Agent, s.bin.path(), Some(yes)), "github_create_issue", issue).await);
    assert_eq!(done["url"], "https://github.com/octo/widgets/issues/15");
    let calls = s.calls();
    let n = calls.len();
    assert_eq!(
        calls[n - 1],
        args(&[
            "issue",
            "create",
            "--repo",
            "octo/widgets",
            "--label=bug",
            "--title=Login page 500s",
            "--body-file",
            "-"
        ])
    );
    assert_eq!(s.call_file(n, "stdin"), "Steps: open /login.");
    let audit = s.store().audit_of("task-1").unwrap();
    let phases: Vec<&str> = audit.iter().filter_map(|a| a.detail["phase"].as_str()).collect();
    assert_eq!(phases, ["approved", "sent"]);
    refused(
        &call(&s.ctx(Mode::Yolo), "github_create_issue", json!({"repo": "octo/widgets", "title": " "})).await,
        "`title` is empty",
    );
}

#[tokio::test]
async fn a_pr_is_opened_from_the_workspace_branch() {
    if quiver_testkit::program_or_skip("git", "apt-get install git").is_none() {
        return;
    }
    let s = Setup::new();
    s.git_repo();
    test_git(s.ws.path(), &["checkout", "-qb", "fix/null-deref"]);
    test_git(s.ws.path(), &["remote", "add", "origin", "https://github.com/octo/widgets.git"]);
    s.record("pr-create", "https://github.com/octo/widgets/pull/16\n", 0);
    let yolo = s.ctx(Mode::Yolo);
    let done = json_of(
        &call(
            &yolo,
            "github_create_pr",
            json!({"title": "Fix the null deref", "body": "Fixes #12.", "base": "main",
            "draft": true}),
        )
        .await,
    );
    assert_eq!(done["url"], "https://github.com/octo/widgets/pull/16");
    let last = s.calls().pop().unwrap();
    assert_eq!(
        last,
        args(&[
            "pr",
            "create",
            "--repo",
            "octo/widgets",
            "--head=fix/null-deref",
            "--base=main",
            "--draft",
            "--title=Fix the null deref",
            "--body-file",
            "-"
        ])
    );
    let before = s.calls().len();
    refused(&call(&yolo, "github_create_pr", json!({"title": "x", "head": "--force"})).await, "is not a branch name");
    assert_eq!(s.calls().len(), before);
}
