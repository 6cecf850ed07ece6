//! Two-step routes through git's indirections and through
//! protected paths that did not exist yet: each write is refused, ordinary
//! git work still runs, and nothing of the sandbox's stand-ins is left.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use quiver_sandbox::SandboxOptions;

use crate::support::*;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=q", "-c", "user.email=q@q", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A repository with a nested one, a submodule's gitfile, husky's hooks
/// directory and an included workspace file.
fn repository() -> Option<tempfile::TempDir> {
    if Command::new("git").arg("--version").output().is_err() {
        assert!(std::env::var("QUIVER_REQUIRE_ALL").as_deref() != Ok("1"), "git_routes needs git");
        eprintln!("SKIPPED: git_routes needs git (apt-get install git)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    git(ws, &["init", "-q"]);
    std::fs::create_dir_all(ws.join(".husky")).unwrap();
    std::fs::write(ws.join(".husky/pre-commit"), "#!/bin/sh\n").unwrap();
    std::fs::write(ws.join("team.gitconfig"), "[user]\n").unwrap();
    git(ws, &["config", "core.hooksPath", ".husky"]);
    git(ws, &["config", "include.path", "../team.gitconfig"]);
    std::fs::create_dir_all(ws.join("vendor/lib")).unwrap();
    git(&ws.join("vendor/lib"), &["init", "-q"]);
    std::fs::create_dir_all(ws.join(".git/modules/sub")).unwrap();
    std::fs::write(ws.join(".git/modules/sub/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join("sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
    std::fs::write(ws.join("README"), "r\n").unwrap();
    git(ws, &["add", "README", "team.gitconfig", ".husky"]);
    git(ws, &["commit", "-qm", "first", "--no-verify"]);
    Some(dir)
}

#[test]
fn git_indirections_and_absent_protected_paths_are_refused() {
    let Some(dir) = repository() else { return };
    let ws = dir.path().canonicalize().unwrap();
    let before = snapshot(&ws);
    let Some(sb) = ns_sandbox("git_routes", &ws, SandboxOptions::default()) else { return };
    let routes = [
        ("commondir", "echo /tmp/evil > .git/commondir"),
        ("worktrees", "mkdir -p .git/worktrees/x && echo /tmp/evil > .git/worktrees/x/commondir"),
        ("alternates", "echo /tmp/evil > .git/objects/info/alternates"),
        ("config.worktree", "printf '[core]\\n\\tfsmonitor = evil\\n' > .git/config.worktree"),
        ("nested config", "echo evil >> vendor/lib/.git/config"),
        ("nested hook", "echo evil > vendor/lib/.git/hooks/post-checkout"),
        ("submodule gitfile", "echo 'gitdir: /tmp/evil' > sub/.git"),
        ("submodule config", "echo evil >> .git/modules/sub/config"),
        ("husky hook", "echo evil > .husky/pre-commit"),
        ("husky new hook", "echo evil > .husky/post-checkout"),
        ("included config", "printf '[core]\\n\\tfsmonitor = evil\\n' >> team.gitconfig"),
        ("new .mcp.json", "echo '{}' > .mcp.json"),
        ("new quiver.toml", "echo x > quiver.toml"),
        ("new .quiver", "mkdir -p .quiver/x"),
        ("new .envrc", "echo evil > .envrc"),
        ("new .vscode", "mkdir -p .vscode && echo '{}' > .vscode/tasks.json"),
        ("replace .mcp.json", "rm -f .mcp.json && echo '{}' > .mcp.json"),
        ("rename onto .envrc", "echo evil > /tmp/x && mv -f /tmp/x .envrc"),
    ];
    let mut escaped = Vec::new();
    for (what, line) in routes {
        let out = run(Some(&sb), &ws, line);
        if out.status.success() {
            escaped.push(format!("{what}: `{line}`"));
        }
    }
    assert!(escaped.is_empty(), "escaped:\n{}", escaped.join("\n"));
    // Ordinary git work runs, and git does not see the stand-ins.
    let work = "set -e; echo new > new.txt; git status --porcelain | grep -v -e vendor/ -e sub/; git add new.txt; \
                git -c user.name=q -c user.email=q@q commit -qm two --no-verify; git log --oneline | wc -l";
    let out = run(Some(&sb), &ws, work);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout(&out), "?? new.txt\n2\n");
    // While the sandbox holds its stand-ins, the user's own git sees none.
    let host = Command::new("git").args(["status", "--porcelain", "--untracked-files=all"]).current_dir(&ws).output();
    let host = String::from_utf8_lossy(&host.unwrap().stdout).into_owned();
    for name in [".mcp.json", "quiver.toml", ".envrc", ".quiver", ".vscode"] {
        assert!(!host.contains(name), "the host's git status lists {name}:\n{host}");
    }
    drop(sb);
    // Nothing is left of the stand-ins; only the commit and the new file changed.
    for gone in [".mcp.json", "quiver.toml", ".quiver", ".envrc", ".vscode", ".git/commondir", ".git/worktrees"] {
        assert!(ws.join(gone).symlink_metadata().is_err(), "{gone} left behind");
    }
    let after = snapshot(&ws);
    let untouched = |p: &Path| {
        let rel = p.strip_prefix(&ws).unwrap();
        !(rel.starts_with(".git") && !rel.starts_with(".git/config") && !rel.starts_with(".git/modules"))
            && rel != Path::new("new.txt")
    };
    let keep = |v: &Vec<(std::path::PathBuf, Option<Vec<u8>>)>| {
        v.iter().filter(|(p, _)| untouched(p)).cloned().collect::<Vec<_>>()
    };
    assert_eq!(keep(&before), keep(&after));
}

#[test]
fn a_workspace_at_the_home_cannot_plant_start_up_files() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().canonicalize().unwrap();
    std::fs::write(h.join("notes.txt"), "n\n").unwrap();
    let options = SandboxOptions { home: Some(h.clone()), ..Default::default() };
    let Some(sb) = ns_sandbox("home_startup", &h, options) else { return };
    for line in [
        "echo evil > .profile",
        "echo evil > .bash_profile",
        "printf '[core]\\n\\tpager = evil\\n' > .gitconfig",
        "mkdir -p .config/autostart",
        "mkdir -p .cargo && echo '[build]' > .cargo/config.toml",
    ] {
        let out = run(Some(&sb), &h, line);
        assert!(!out.status.success(), "`{line}` succeeded");
    }
    let out = run(Some(&sb), &h, "echo more >> notes.txt && mkdir -p proj && echo x > proj/y");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    drop(sb);
    for gone in [".profile", ".bash_profile", ".gitconfig", ".config", ".cargo"] {
        assert!(h.join(gone).symlink_metadata().is_err(), "{gone} left behind");
    }
    assert_eq!(std::fs::read_to_string(h.join("notes.txt")).unwrap(), "n\nmore\n");
}
