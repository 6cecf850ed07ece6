use super::*;

#[test]
fn config_entries_are_read_as_git_writes_them() {
    let text = "[core]\n\thooksPath = .husky\n\tfsmonitor = \"./tools/watch --fast\"\n\
                [include]\n\tpath = ../team.gitconfig\n[includeIf \"gitdir:~/w/\"]\n\tpath = x.inc\n\
                [remote \"origin\"]\n\turl = ./mirror\n[alias]\n\tst = !./bin/st\n";
    let got = entries(text);
    assert!(got.contains(&("core".into(), "hookspath".into(), ".husky".into())));
    assert!(got.contains(&("includeif gitdir:~/w/".into(), "path".into(), "x.inc".into())));
    assert!(got.contains(&("remote origin".into(), "url".into(), "./mirror".into())));
}

#[test]
fn what_a_config_names_in_the_workspace_is_found() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("tools")).unwrap();
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::create_dir_all(root.join("mirror")).unwrap();
    std::fs::write(root.join("tools/watch"), "#!/bin/sh").unwrap();
    std::fs::write(root.join("bin/st"), "#!/bin/sh").unwrap();
    std::fs::write(
        root.join(".git/config"),
        "[core]\n\thooksPath = .husky\n\tfsmonitor = \"./tools/watch --fast\"\n[include]\n\tpath = ../team.gitconfig\n\
         [remote \"origin\"]\n\turl = ./mirror\n[alias]\n\tst = !./bin/st\n[core]\n\tbare = false\n",
    )
    .unwrap();
    let mut got = config_named(&root.join(".git"), &root, &root);
    got.sort();
    assert_eq!(
        got,
        vec![
            (root.join(".husky"), true),
            (root.join("bin/st"), false),
            (root.join("team.gitconfig"), false),
            (root.join("tools/watch"), false),
        ]
    );
}

#[test]
fn nested_repositories_and_gitfiles_are_found() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git/modules/sub")).unwrap();
    std::fs::create_dir_all(root.join("vendor/lib/.git")).unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
    std::fs::create_dir_all(root.join("node_modules/pkg/.git")).unwrap();
    let found = nested(&root);
    assert_eq!(found.gitfiles, vec![root.join("sub/.git")]);
    assert_eq!(found.git_dirs, vec![root.join(".git/modules/sub"), root.join("vendor/lib/.git")]);
}
