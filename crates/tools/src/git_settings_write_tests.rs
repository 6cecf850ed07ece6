use super::protected_git_write;

fn writes(line: &str) -> Option<&'static str> {
    protected_git_write(line).map(|(_, what)| what)
}

#[test]
fn lines_that_write_git_config_are_named() {
    for line in [
        "git remote add origin https://example.com/r.git",
        "git config user.email me@example.com",
        "git config --local user.name 'A B'",
        "git config set user.name Me",
        "git config --unset core.pager",
        "git -C sub config core.autocrlf false",
        "GIT_TRACE=1 git remote set-url origin x",
        "cd app && /usr/bin/git remote rename origin upstream",
        "git branch --set-upstream-to=origin/main",
        "git branch -m old new",
        "git push -u origin feature",
        "git switch --track origin/dev",
        "echo ok; env A=b git config --add remote.o.fetch +refs/*:refs/*",
    ] {
        assert_eq!(writes(line), Some(".git/config"), "{line}");
    }
    assert_eq!(writes("git submodule add https://x/y vendor/y"), Some(".git/config and .git/modules"));
    assert_eq!(writes("git worktree add ../wt main"), Some(".git/worktrees"));
    assert_eq!(writes("git sparse-checkout set src"), Some(".git/config and .git/info"));
    assert_eq!(protected_git_write("git remote add o u").unwrap().0, "git remote add");
}

#[test]
fn reads_and_other_files_are_not_asked_about() {
    for line in [
        "git config user.email",
        "git config --get user.email",
        "git config -l",
        "git config get user.name",
        "git config --global user.email me@example.com",
        "git config --file team.gitconfig a.b c",
        "git remote -v",
        "git remote show origin",
        "git branch -a",
        "git branch feature",
        "git push origin main",
        "git status && git diff",
        "echo git config user.email x",
        "gitk",
        "git worktree list",
        "git submodule status",
        "unterminated 'quote",
    ] {
        assert_eq!(writes(line), None, "{line}");
    }
}
