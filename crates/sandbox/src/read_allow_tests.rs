use super::*;

fn home_with(entries: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let h = normalize(home.path());
    for (path, text) in [(".gitconfig", "[user]\n\tname = Ada\n[credential]\n\thelper = store\n")]
        .into_iter()
        .chain(entries.iter().map(|e| (*e, "x")))
    {
        let p = h.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    (home, h)
}

#[test]
fn the_home_is_read_by_allowlist_with_its_credentials_closed() {
    let (_home, h) =
        home_with(&[".cargo/bin/cargo", ".cargo/credentials.toml", ".codex/auth.json", ".m2/repository/x"]);
    let ws = tempfile::tempdir().unwrap();
    let plan = plan(Some(&h), &[".m2/repository".into()], &[normalize(ws.path())]);
    assert!(plan.roots.contains(&h.join(".cargo")) && plan.roots.contains(&h.join(".m2/repository")));
    assert!(!plan.roots.iter().any(|r| r == &h || r.starts_with(h.join(".codex"))), "{:?}", plan.roots);
    assert!(plan.closed.contains(&h.join(".cargo/credentials.toml")));
    // Closed whole beneath every grant (a home in `/var/lib` is not read
    // through `/var/lib`'s), its toolchain granted on its own.
    assert!(plan.closed.contains(&h));
    // An allowlist of the system's trees: nothing unknown at `/`, no `/run`,
    // no `/tmp`, `/var` only in part.
    for shut in ["/", "/run", "/tmp", "/var", "/var/log", "/var/tmp", "/home", "/dev", "/dev/pts"] {
        assert!(!plan.roots.contains(&PathBuf::from(shut)), "{shut}");
    }
    assert!(plan.roots.contains(&normalize(Path::new("/usr"))) && plan.roots.contains(&PathBuf::from("/etc")));
    // git gets the identity, not the credential helper.
    let git = plan.gitconfig.unwrap();
    assert!(git.contains("Ada") && !git.contains("helper"), "{git}");
    assert!(plan.not_writable.is_empty(), "{:?}", plan.not_writable);
}

#[test]
fn a_home_that_is_the_work_keeps_its_configuration_out_of_reach() {
    let (_home, h) = home_with(&[".cargo/bin/cargo", ".bashrc", ".codex/auth.json", "proj/src", ".cache/x"]);
    let plan = plan(Some(&h), &[], std::slice::from_ref(&h));
    for shut in [".bashrc", ".codex", ".gitconfig"] {
        assert!(plan.closed.contains(&h.join(shut)), "{shut}: {:?}", plan.closed);
    }
    assert!(plan.not_writable.contains(&h.join(".cargo")));
    assert!(!plan.closed.contains(&h), "the home is the work");
    for work in ["proj", ".cache"] {
        assert!(!plan.closed.iter().chain(&plan.not_writable).any(|p| p.starts_with(h.join(work))), "{work}");
    }
    assert!(plan.roots.contains(&h.join(".cargo")));
    assert!(plan.gitconfig.is_some());
    // The user's own `.gitconfig` allowed: git reads it as it is.
    let plan = super::plan(Some(&h), &[".gitconfig".into()], std::slice::from_ref(&h));
    assert!(plan.gitconfig.is_none());
}

#[test]
fn a_working_directory_is_granted_unless_covered_or_holding_the_home() {
    let (_home, h) = home_with(&[".cargo/bin/cargo", "elsewhere/x"]);
    let ws = normalize(tempfile::tempdir().unwrap().path());
    let plan = plan(Some(&h), &[], std::slice::from_ref(&ws));
    assert!(cwd_needs_grant(&plan, std::slice::from_ref(&ws), &h.join("elsewhere")));
    assert!(!cwd_needs_grant(&plan, std::slice::from_ref(&ws), &h));
    assert!(!cwd_needs_grant(&plan, std::slice::from_ref(&ws), Path::new("/")));
    assert!(!cwd_needs_grant(&plan, std::slice::from_ref(&ws), &h.join(".cargo/bin")));
    assert!(!cwd_needs_grant(&plan, std::slice::from_ref(&ws), Path::new("/usr")));
}
