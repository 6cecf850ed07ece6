use super::*;

fn home_with(entries: &[&str]) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    for e in entries {
        let p = home.path().join(e);
        if let Some(dir) = e.strip_suffix('/') {
            std::fs::create_dir_all(home.path().join(dir)).unwrap();
        } else {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x").unwrap();
        }
    }
    home
}

#[test]
fn a_home_outside_the_workspace_is_replaced_and_keeps_only_the_allowlist() {
    let home = home_with(&[".cargo/bin/cargo", ".codex/auth.json", ".pgpass", ".m2/repository/x", "notes.txt"]);
    let ws = tempfile::tempdir().unwrap();
    let v = view(Some(home.path()), &[normalize(ws.path())], &[]).unwrap();
    let h = normalize(home.path());
    assert!(v.replaced);
    assert_eq!(v.allowed, vec![h.join(".cargo")]);
    assert!(v.hidden.is_empty());
    let v = view(Some(home.path()), &[normalize(ws.path())], &[".m2/repository".into()]).unwrap();
    assert_eq!(v.allowed, vec![h.join(".cargo"), h.join(".m2/repository")]);
}

#[test]
fn a_workspace_at_the_home_hides_its_dot_entries_but_the_allowed_and_the_work() {
    let home = home_with(&[
        ".cargo/bin/cargo",
        ".codex/auth.json",
        ".pgpass",
        ".cache/x",
        ".local/bin/tool",
        ".local/share/secret",
        "proj/main.rs",
    ]);
    std::fs::create_dir_all(home.path().join(".git")).unwrap();
    let h = normalize(home.path());
    let v = view(Some(home.path()), std::slice::from_ref(&h), &[]).unwrap();
    assert!(!v.replaced);
    assert_eq!(v.allowed, vec![h.join(".cargo"), h.join(".local/bin")]);
    // `.local` leads to an allowed entry: only its other entries are hidden.
    assert_eq!(v.hidden, vec![h.join(".codex"), h.join(".local/share"), h.join(".pgpass")]);
}

#[test]
fn the_gitconfig_shown_carries_identity_only() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".gitconfig"),
        "[user]\n\tname = \"Ada \\\"L\\\"\" # me\n\temail = ada@example.org\n[credential]\n\thelper = store\n\
         [url \"https://tok@github.com/\"]\n\tinsteadOf = https://github.com/\n[init]\n\tdefaultBranch = trunk\n",
    )
    .unwrap();
    let text = identity_gitconfig(home.path()).unwrap();
    assert!(!text.contains("helper") && !text.contains("tok@"), "{text}");
    assert!(text.contains("[user]\n\temail = \"ada@example.org\"\n\tname = \"Ada \\\"L\\\"\"\n"), "{text}");
    assert!(text.contains("[init]\n\tdefaultBranch = \"trunk\"\n"), "{text}");
    assert_eq!(identity_gitconfig(tempfile::tempdir().unwrap().path()), None);
}
