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
