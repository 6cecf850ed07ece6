use super::*;

#[test]
fn a_stand_in_is_shared_and_removed_by_the_last_holder() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".mcp.json");
    let mut a = Placeholders::default();
    let mut b = Placeholders::default();
    assert!(a.hold(&path, StandIn::Empty));
    assert!(b.hold(&path, StandIn::Empty));
    assert_eq!(std::fs::read(&path).unwrap(), b"");
    drop(a);
    assert!(path.exists(), "removed while another sandbox still binds it");
    drop(b);
    assert!(!path.exists());
}

#[test]
fn something_real_is_never_replaced_or_removed() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join(".envrc");
    std::fs::write(&real, "use nix").unwrap();
    let mut p = Placeholders::default();
    assert!(!p.hold(&real, StandIn::Empty));
    assert!(!p.hold(&dir.path().join("absent-parent/.envrc"), StandIn::Empty));
    // A stand-in the user replaced meanwhile stays.
    let hooks = dir.path().join("hooks");
    assert!(p.hold(&hooks, StandIn::Dir));
    std::fs::remove_dir(&hooks).unwrap();
    std::fs::create_dir(&hooks).unwrap();
    std::fs::write(hooks.join("pre-commit"), "#!/bin/sh").unwrap();
    drop(p);
    assert!(hooks.join("pre-commit").exists());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "use nix");
}

#[test]
fn a_link_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("elsewhere");
    std::os::unix::fs::symlink(&target, dir.path().join("quiver.toml")).unwrap();
    let mut p = Placeholders::default();
    assert!(!p.hold(&dir.path().join("quiver.toml"), StandIn::Empty));
    assert!(!target.exists());
}
