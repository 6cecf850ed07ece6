use std::os::unix::fs::PermissionsExt;

use super::*;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn folder_and_logs_are_private_and_go_with_the_session() {
    let dir = create().unwrap();
    let name = dir.path().file_name().unwrap().to_string_lossy().to_string();
    assert_eq!(owner_pid(&name), Some(std::process::id()), "{name}");
    assert_eq!(mode(dir.path()), 0o700);
    let log = dir.path().join("run-1.log");
    drop(create_log(&log).unwrap());
    assert_eq!(mode(&log), 0o600);
    // A second create never reuses or follows what is already there.
    assert!(create_log(&log).is_err());
    let path = dir.path().to_path_buf();
    drop(dir);
    assert!(!path.exists(), "the folder is removed with the session");
}

#[test]
fn a_planted_link_is_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("elsewhere");
    std::fs::write(&target, "keep").unwrap();
    let link = tmp.path().join("run-1.log");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(create_log(&link).is_err());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}

#[test]
fn sweep_removes_only_folders_of_dead_quivers() {
    let tmp = tempfile::tempdir().unwrap();
    // No process has a pid this large (pid_max is at most 2^22).
    let dead = tmp.path().join("quiver-shell-4000000000-abc");
    let live = tmp.path().join(format!("quiver-shell-{}-abc", std::process::id()));
    let init = tmp.path().join("quiver-shell-1-abc");
    let old_style = tmp.path().join("quiver-shell-Xy12ab");
    let other = tmp.path().join("unrelated-4000000000-abc");
    for d in [&dead, &live, &init, &old_style, &other] {
        std::fs::create_dir(d).unwrap();
        std::fs::write(d.join("run-1.log"), "x").unwrap();
    }
    sweep_stale(tmp.path());
    assert!(!dead.exists(), "a dead quiver's logs are swept");
    for kept in [&live, &init, &old_style, &other] {
        assert!(kept.exists(), "{} kept", kept.display());
    }
}

#[test]
fn owner_pid_wants_the_whole_shape() {
    assert_eq!(owner_pid("quiver-shell-12-ab"), Some(12));
    assert_eq!(owner_pid("quiver-shell-12-"), None);
    assert_eq!(owner_pid("quiver-shell-ab"), None);
    assert_eq!(owner_pid("quiver-shell-x1-ab"), None);
}
