use super::*;

fn repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.join(".git/objects/info")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(root.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
    (dir, root)
}

#[test]
fn whatever_a_command_did_to_protected_paths_is_undone_and_named() {
    let (_dir, root) = repo();
    let guard = Guard::new(std::slice::from_ref(&root), None);
    std::fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
    std::fs::write(root.join(".git/hooks/post-checkout"), "evil").unwrap();
    std::fs::remove_file(root.join(".git/hooks/pre-commit.sample")).unwrap();
    std::fs::write(root.join(".mcp.json"), "{}").unwrap();
    std::fs::write(root.join(".git/commondir"), "/tmp/evil").unwrap();
    std::fs::write(root.join("work.txt"), "kept").unwrap();
    let undone = guard.restore();
    assert_eq!(undone.len(), 5, "{undone:#?}");
    assert_eq!(std::fs::read_to_string(root.join(".git/config")).unwrap(), "[core]\n");
    assert!(!root.join(".git/hooks/post-checkout").exists());
    assert!(root.join(".git/hooks/pre-commit.sample").exists());
    assert!(!root.join(".mcp.json").exists() && !root.join(".git/commondir").exists());
    assert_eq!(std::fs::read_to_string(root.join("work.txt")).unwrap(), "kept");
    assert!(guard.restore().is_empty());
}

#[test]
fn a_swapped_directory_is_put_back_and_a_link_never_followed() {
    let (_dir, root) = repo();
    let outside = tempfile::tempdir().unwrap();
    let guard = Guard::new(std::slice::from_ref(&root), None);
    std::fs::remove_dir_all(root.join(".git/hooks")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join(".git/hooks")).unwrap();
    let undone = guard.restore();
    assert!(!undone.is_empty());
    assert!(root.join(".git/hooks").symlink_metadata().unwrap().is_dir());
    assert!(root.join(".git/hooks/pre-commit.sample").exists());
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn an_approved_change_is_kept_after_a_refresh() {
    let (_dir, root) = repo();
    let guard = Guard::new(std::slice::from_ref(&root), None);
    std::fs::write(root.join(".git/config"), "[remote \"origin\"]\n").unwrap();
    // What `refresh_all` does for every live guard (called directly: tests
    // of other guards run in parallel in this process).
    guard.refresh();
    assert!(guard.restore().is_empty());
    assert_eq!(std::fs::read_to_string(root.join(".git/config")).unwrap(), "[remote \"origin\"]\n");
}
