//! The GitHub tools through the real binary, with a `gh` *stand-in* first on
//! `PATH` (no network here): a shell script the test writes, which records the
//! argv it got and replays `gh`'s recorded JSON. The detailed behaviour (writes,
//! refusals, audit) is covered in `quiver-tools`' `work/github_tests.rs`; this
//! checks that the shipped binary finds `gh` on `PATH` and says so when it cannot.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

const STAND_IN: &str = r#"#!/bin/sh
# gh stand-in for tests (no network): records its argv, replays a recording.
here=$(cd "$(dirname "$0")" && pwd)
printf '%s\n' "$*" >> "$here/argv.log"
case "$1 $2" in
  "auth status") echo "github.com"; echo "  ✓ Logged in to github.com account octocat (keyring)" ;;
  "issue view") cat "$here/issue.json" ;;
  *) echo "gh stand-in: no recording for: gh $1 $2" >&2; exit 64 ;;
esac
"#;

fn quiver_call(path: &str, tool: &str, args: Value, ws: &Path, state: &Path) -> (bool, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(["call", tool, "--mode", "agent", "--workspace"])
        .arg(ws)
        .arg("--args")
        .arg(args.to_string())
        .current_dir(ws)
        .env("PATH", path)
        .env("QUIVER_CONFIG_DIR", state.join("config"))
        .env("QUIVER_STATE_DIR", state)
        .env("QUIVER_CACHE_DIR", state.join("cache"))
        .env("QUIVER_LOG", "warn")
        .env_remove("QUIVER_TASK_ID")
        .env_remove("QUIVER_WORK_DIR")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let result: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text} / {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.success(), result)
}

fn content(result: &Value) -> Value {
    match &result["content"] {
        Value::String(text) => serde_json::from_str(text).unwrap_or(Value::String(text.clone())),
        other => other.clone(),
    }
}

#[test]
fn the_binary_runs_the_gh_it_finds_on_path() {
    let (bin, ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let gh = bin.path().join("gh");
    std::fs::write(&gh, STAND_IN).unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let issue = json!({
        "assignees": [], "author": {"login": "hubot"}, "body": "Parsing an empty string panics.",
        "closedAt": null, "comments": [], "createdAt": "2026-11-19T08:00:00Z",
        "labels": [{"id": "LA_1", "name": "bug", "description": "", "color": "d73a4a"}],
        "milestone": null, "number": 12, "state": "OPEN", "stateReason": "",
        "title": "Crash on empty input", "updatedAt": "2026-11-21T09:30:00Z",
        "url": "https://github.com/octo/widgets/issues/12"
    });
    std::fs::write(bin.path().join("issue.json"), issue.to_string()).unwrap();
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let args = json!({"repo": "octo/widgets", "number": 12});
    let (ok, result) = quiver_call(&path, "github_issue_context", args, ws.path(), state.path());
    assert!(ok, "{result}");
    let view = content(&result);
    assert_eq!(view["issue"]["title"], "Crash on empty input", "{view}");
    assert_eq!(view["issue"]["labels"], json!(["bug"]));
    assert_eq!(view["body"]["text"], "Parsing an empty string panics.");
    let argv = std::fs::read_to_string(bin.path().join("argv.log")).unwrap();
    let lines: Vec<&str> = argv.lines().collect();
    assert_eq!(lines[0], "auth status");
    assert!(lines[1].starts_with("issue view 12 --repo octo/widgets --json number,title,state,"), "{argv}");
}

#[test]
fn without_gh_on_path_the_error_says_what_to_install() {
    let (empty, ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let args = json!({"repo": "octo/widgets", "number": 12});
    let (ok, result) =
        quiver_call(&empty.path().display().to_string(), "github_issue_context", args, ws.path(), state.path());
    assert!(!ok);
    let text = result["content"].to_string();
    assert!(text.contains("`gh` is not installed") && text.contains("gh auth login"), "{text}");
}

/// A `gh` stand-in that answers `auth status` and `issue view`, and records
/// which of the token variables it was given (names only, and whether the
/// secret value reached it).
const ENV_STAND_IN: &str = r#"#!/bin/sh
here=$(cd "$(dirname "$0")" && pwd)
{
  printf 'argv: %s\n' "$*"
  env | grep -E '^(GH_TOKEN|GITHUB_TOKEN|GH_ENTERPRISE_TOKEN|GITHUB_ENTERPRISE_TOKEN)=' | sed 's/=.*//'
} >> "$here/env.log"
case "$1 $2" in
  "auth status") echo "github.com"; echo "  ✓ Logged in to github.com account octocat (keyring)" ;;
  "issue view") cat "$here/issue.json" ;;
  *) exit 64 ;;
esac
"#;

/// A cloned repository picks the host `gh` talks to (its `origin` remote, or
/// a `repo` the model copied from its README). `gh` sends `GH_ENTERPRISE_TOKEN`
/// to any host but github.com, so handing it over would send the user's
/// enterprise login to whoever the repository names.
#[test]
fn a_remote_on_a_foreign_host_never_gets_the_users_tokens() {
    if quiver_testkit::program_or_skip("git", "apt-get install git").is_none() {
        return;
    }
    let (bin, ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let gh = bin.path().join("gh");
    std::fs::write(&gh, ENV_STAND_IN).unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let issue = json!({
        "assignees": [], "author": {"login": "x"}, "body": "", "closedAt": null, "comments": [],
        "createdAt": "2026-11-19T08:00:00Z", "labels": [], "milestone": null, "number": 1, "state": "OPEN",
        "stateReason": "", "title": "t", "updatedAt": "2026-11-19T08:00:00Z", "url": "https://evil.example/o/r/issues/1"
    });
    std::fs::write(bin.path().join("issue.json"), issue.to_string()).unwrap();
    for args in [&["init", "-q"][..], &["remote", "add", "origin", "https://evil.example/o/r.git"]] {
        let out = Command::new("git").arg("-C").arg(ws.path()).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let call = |args: Value, gh_host: Option<&str>| {
        let _ = std::fs::remove_file(bin.path().join("env.log"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_quiver"));
        cmd.args(["call", "github_issue_context", "--mode", "agent", "--workspace"])
            .arg(ws.path())
            .arg("--args")
            .arg(args.to_string())
            .current_dir(ws.path())
            .env("PATH", &path)
            .env("QUIVER_CONFIG_DIR", state.path().join("config"))
            .env("QUIVER_STATE_DIR", state.path())
            .env("QUIVER_CACHE_DIR", state.path().join("cache"))
            .env("QUIVER_LOG", "warn")
            .env("GH_TOKEN", "gh-secret")
            .env("GH_ENTERPRISE_TOKEN", "enterprise-secret")
            .env_remove("GITHUB_TOKEN")
            .env_remove("GITHUB_ENTERPRISE_TOKEN")
            .env_remove("QUIVER_TASK_ID")
            .env_remove("QUIVER_WORK_DIR");
        match gh_host {
            Some(h) => cmd.env("GH_HOST", h),
            None => cmd.env_remove("GH_HOST"),
        };
        let out = cmd.output().unwrap();
        let log = std::fs::read_to_string(bin.path().join("env.log")).unwrap_or_default();
        (String::from_utf8_lossy(&out.stdout).into_owned(), log)
    };
    // The host from the remote, and the same host named by the model.
    for args in [json!({"number": 1}), json!({"repo": "evil.example/o/r", "number": 1})] {
        let (out, log) = call(args.clone(), None);
        assert!(log.contains("argv: issue view 1 --repo evil.example/o/r"), "{args}: {out}\n{log}");
        let view = log.split("argv: issue view").nth(1).unwrap();
        assert!(!view.contains("TOKEN"), "{args}: a token went to evil.example:\n{log}");
    }
    // github.com gets the github.com token, never the enterprise one.
    let (out, log) = call(json!({"repo": "octo/widgets", "number": 1}), None);
    let view = log.split("argv: issue view").nth(1).unwrap_or_else(|| panic!("{out}\n{log}"));
    assert!(view.contains("GH_TOKEN") && !view.contains("GH_ENTERPRISE_TOKEN"), "{log}");
    // The host the user's own GH_HOST names is theirs: every token goes there.
    let (out, log) = call(json!({"repo": "ghe.corp.example/o/r", "number": 1}), Some("ghe.corp.example"));
    let view = log.split("argv: issue view").nth(1).unwrap_or_else(|| panic!("{out}\n{log}"));
    assert!(view.contains("GH_ENTERPRISE_TOKEN"), "{log}");
}
