use std::path::Path;

use super::*;

#[test]
fn protected_paths_match_by_component() {
    let root = Path::new("/w");
    assert!(protected_reason(root, Path::new("/w/.git/hooks/post-checkout")).is_some());
    assert!(protected_reason(root, Path::new("/w/.git/config")).is_some());
    assert!(protected_reason(root, Path::new("/w/./.git/info/attributes")).is_some());
    assert!(protected_reason(root, Path::new("/w/sub/../.mcp.json")).is_some());
    assert!(protected_reason(root, Path::new("/w/.quiver/manifest.toml")).is_some());
    assert!(protected_reason(root, Path::new("/w/.git/hooksx")).is_none());
    assert!(protected_reason(root, Path::new("/w/.git/objects/ab/cd")).is_none());
    assert!(protected_reason(root, Path::new("/w/src/.git/config.rs")).is_none());
    assert!(protected_reason(root, Path::new("/w/src/main.rs")).is_none());
}

#[test]
fn a_git_file_is_protected() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".git"), "gitdir: /elsewhere\n").unwrap();
    assert!(protected_reason(dir.path(), &dir.path().join(".git")).is_some());
    assert_eq!(existing_protected(dir.path()), vec![dir.path().join(".git")]);
}

#[test]
fn existing_protected_lists_only_what_exists() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
    std::fs::write(dir.path().join(".git/config"), "").unwrap();
    std::fs::write(dir.path().join("quiver.toml"), "").unwrap();
    let found = existing_protected(dir.path());
    assert_eq!(
        found,
        vec![dir.path().join(".git/config"), dir.path().join(".git/hooks"), dir.path().join("quiver.toml")]
    );
}

/// A nested repository's git paths run code on the user's next `git status`
/// at the root (git recurses into a tracked submodule), and a `.git` file
/// anywhere redirects git to a directory of the writer's choosing.
#[test]
fn nested_repositories_and_git_files_are_protected() {
    let root = Path::new("/w");
    for path in ["/w/sub/.git/config", "/w/a/b/.git/hooks/pre-commit", "/w/sub/.git/info/attributes", "/w/sub/.git"] {
        assert!(protected_reason(root, Path::new(path)).is_some(), "{path}");
    }
    // A `.git` file at the root where none exists yet is a redirect too.
    let dir = tempfile::tempdir().unwrap();
    assert!(protected_reason(dir.path(), &dir.path().join(".git")).is_some());
    // The rest of a nested repository is its own work, as at the root.
    for path in ["/w/sub/.git/objects/ab/cd", "/w/sub/.git/HEAD", "/w/sub/.gitignore", "/w/src/.github/ci.yml"] {
        assert!(protected_reason(root, Path::new(path)).is_none(), "{path}");
    }
}

/// On a case-insensitive file system `.GIT/hooks/x` is the real hook.
#[test]
fn protected_paths_match_whatever_the_case() {
    let root = Path::new("/w");
    for path in [
        "/w/.GIT/hooks/post-checkout",
        "/w/.Git/config",
        "/w/.VSCode/tasks.json",
        "/w/Quiver.toml",
        "/w/sub/.GIT/config",
    ] {
        assert!(protected_reason(root, Path::new(path)).is_some(), "{path}");
    }
}

#[test]
fn what_a_repository_config_names_is_protected_for_the_file_tools_too() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n\thooksPath = .husky\n").unwrap();
    let why = protected_reason(&root, &root.join(".husky/pre-commit")).unwrap();
    assert!(why.contains(".husky") && why.contains("config"), "{why}");
    assert!(protected_reason(&root, &root.join(".git/commondir")).is_some());
    assert!(protected_reason(&root, &root.join("src/.git/commondir")).is_some());
    assert!(protected_reason(&root, &root.join("husky.md")).is_none());
}

#[test]
fn absent_protected_paths_get_inert_stand_ins() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let outside_repo: Vec<PathBuf> = absent_protected(&root, None).into_iter().map(|(p, _)| p).collect();
    assert!(outside_repo.contains(&root.join(".mcp.json")));
    assert!(!outside_repo.iter().any(|p| p.starts_with(root.join(".git"))), "{outside_repo:?}");
    std::fs::create_dir_all(root.join(".git/objects/info")).unwrap();
    let absent = absent_protected(&root, Some(&root));
    assert!(absent.contains(&(root.join(".git/commondir"), StandIn::CommonDirSelf)));
    assert!(absent.contains(&(root.join(".git/hooks"), StandIn::Dir)));
    assert!(absent.contains(&(root.join(".profile"), StandIn::Empty)));
    std::fs::write(root.join(".envrc"), "x").unwrap();
    assert!(!absent_protected(&root, None).iter().any(|(p, _)| p.ends_with(".envrc")));
}
