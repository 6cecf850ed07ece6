#![allow(clippy::unwrap_used)]

use std::os::fd::AsRawFd;

use super::*;

/// The paths `split` grants, read back from the descriptors it opened.
fn granted(root: &Path, read_only: &[PathBuf]) -> Vec<String> {
    let mut grants = Vec::new();
    split(open_dir_at(None, root).unwrap(), root, read_only, handled(), &mut grants);
    // The split directories' listing-only rights are not grants of their contents.
    let mut names: Vec<String> = grants
        .iter()
        .filter(|(_, rights)| *rights != BitFlags::from(AccessFs::ReadDir))
        .map(|(fd, _)| {
            let target = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap();
            target.strip_prefix(root).unwrap().display().to_string()
        })
        .collect();
    names.sort();
    names
}

#[test]
fn a_root_is_split_around_read_only_paths_and_links_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for d in [".git/hooks", ".git/objects", "src/deep"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for f in [".git/config", ".git/HEAD", "README", "src/deep/x"] {
        std::fs::write(root.join(f), "x").unwrap();
    }
    std::os::unix::fs::symlink("/etc", root.join("escape")).unwrap();
    let read_only = vec![root.join(".git/config"), root.join(".git/hooks")];
    assert_eq!(granted(&root, &read_only), [".git/HEAD", ".git/objects", "README", "src"]);
}

#[test]
fn a_git_file_on_the_way_to_a_read_only_path_stays_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join(".git"), "gitdir: /elsewhere\n").unwrap();
    std::fs::write(root.join("a"), "x").unwrap();
    let read_only = vec![root.join(".git/config"), root.join(".git/hooks")];
    assert_eq!(granted(&root, &read_only), ["a"]);
}

#[test]
fn a_root_without_read_only_paths_is_granted_whole() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    assert_eq!(granted(&root, &[PathBuf::from("/nowhere/else")]), [""]);
    // A read-only root (or one beneath a read-only path) is not granted at all.
    assert!(granted(&root, std::slice::from_ref(&root)).is_empty());
}

#[test]
fn normalize_resolves_the_existing_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().canonicalize().unwrap();
    std::os::unix::fs::symlink(&real, real.join("link")).unwrap();
    assert_eq!(normalize(&real.join("link/not/yet")), real.join("not/yet"));
}
