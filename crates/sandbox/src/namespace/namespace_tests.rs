use super::*;

/// The plan for a fresh workspace under /tmp, with no network; the private
/// dir is returned to keep it alive.
fn plan_for_a_new_workspace() -> (tempfile::TempDir, Private, NsPlan) {
    let ws = tempfile::tempdir().unwrap();
    let private = Private::new().unwrap();
    let writable = vec![ws.path().to_path_buf()];
    let plan = plan(&private, &inputs(&writable, None), ws.path()).unwrap();
    (ws, private, plan)
}

/// What a plan is built from: `writable`, no network, `home` as given, nothing else.
fn inputs<'a>(writable: &'a [PathBuf], home: Option<&'a std::path::Path>) -> Inputs<'a> {
    Inputs {
        writable,
        network: false,
        extra_read_only: &[],
        deny_programs: &[],
        rlimits: vec![],
        home,
        home_allow: &[],
        stand_ins: &[],
        root_map: None,
    }
}

#[test]
fn a_workspace_under_tmp_is_staged_into_the_private_tmp_before_it_replaces_tmp() {
    let (ws, _private, plan) = plan_for_a_new_workspace();
    let ws_c = c(&normalize(ws.path())).unwrap();
    let tmp_c = c(&host_tmp().unwrap()).unwrap();
    let staged = plan.ops.iter().position(|op| matches!(op, MountOp::Bind { src, .. } if *src == ws_c)).unwrap();
    let replaced = plan.ops.iter().position(|op| matches!(op, MountOp::Bind { dst, .. } if *dst == tmp_c)).unwrap();
    assert!(staged < replaced);
    assert!(plan.flags & libc::CLONE_NEWNET != 0);
    assert!(plan.loopback_up);
}

#[test]
fn denied_programs_are_found_by_name_and_prefix() {
    let found = denied_paths(&["ls".to_string()]);
    assert!(found.iter().any(|p| p.file_name().is_some_and(|n| n == "ls")), "{found:?}");
    assert!(denied_paths(&["l*".to_string()]).len() >= found.len());
    // `sh` is a link to `dash` or `bash` on most systems: binding over it
    // would deny the shell under every name, so it is left alone.
    if std::fs::read_link("/bin/sh").is_ok() || std::fs::read_link("/usr/bin/sh").is_ok() {
        assert!(denied_paths(&["sh".to_string()]).is_empty());
    }
    assert!(denied_paths(&[]).is_empty());
}

#[test]
fn socket_paths_are_read_from_proc_net_unix_lines() {
    let header_free = [
        ("0000000000000000: 00000002 00000000 00010000 0001 01 12345 /run/x.sock", Some("/run/x.sock")),
        (
            "0000000000000000: 00000002 00000000 00010000 0001 01     7 /home/u/with space.sock",
            Some("/home/u/with space.sock"),
        ),
        ("0000000000000000: 00000002 00000000 00010000 0001 01 12345 @abstract", None),
        ("0000000000000000: 00000003 00000000 00000000 0001 03 12346", None),
        ("garbage", None),
    ];
    for (line, want) in header_free {
        assert_eq!(socket_path(line), want.map(PathBuf::from), "{line}");
    }
}

#[test]
fn a_host_socket_outside_tmp_is_covered() {
    // Not under /tmp, which the private /tmp replaces whole.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let sock = dir.path().join("host.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let sock = std::fs::canonicalize(&sock).unwrap();
    assert!(host_sockets().contains(&sock), "{:?}", host_sockets());
    let (_ws, _private, plan) = plan_for_a_new_workspace();
    let sock_c = c(&sock).unwrap();
    assert!(plan.ops.iter().any(|op| matches!(op, MountOp::Bind { dst, optional: true, .. } if *dst == sock_c)));
}

#[test]
fn a_denied_program_is_denied_by_what_runs_not_by_its_name() {
    // `mkfs.ext4 -> mke2fs` on Debian: the rule reaches `mke2fs` itself.
    let mkfs = std::path::Path::new("/sbin/mkfs.ext4");
    if let Ok(real) = std::fs::canonicalize(mkfs) {
        assert!(denied_paths(&["mkfs*".to_string()]).contains(&real), "{}", real.display());
    }
    // git's copy of itself in git-core is the same program.
    let core = std::path::Path::new("/usr/lib/git-core/git");
    if core.is_file() && std::path::Path::new("/usr/bin/git").is_file() {
        let found = denied_paths(&["git".to_string()]);
        assert!(found.contains(&std::fs::canonicalize(core).unwrap()), "{found:?}");
    }
}

#[test]
fn a_home_toolchain_is_kept_for_sight_only_and_the_workspace_is_not() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".cargo/bin")).unwrap();
    let ws = home.path().join("proj");
    std::fs::create_dir_all(&ws).unwrap();
    let private = Private::new().unwrap();
    let writable = vec![ws.clone()];
    let plan = plan(&private, &inputs(&writable, Some(home.path())), &ws).unwrap();
    let best_effort = |src: &std::path::Path| {
        let src = c(&normalize(src)).unwrap();
        plan.ops.iter().find_map(|op| match op {
            MountOp::Bind { src: s, best_effort, .. } if *s == src => Some(*best_effort),
            _ => None,
        })
    };
    assert_eq!(best_effort(&home.path().join(".cargo")), Some(true));
    assert_eq!(best_effort(&ws), Some(false));
}

#[test]
fn a_plan_for_root_makes_no_user_namespace_and_idmaps_only_the_writable_roots() {
    let ws = tempfile::tempdir().unwrap();
    let private = Private::new().unwrap();
    let writable = vec![ws.path().to_path_buf()];
    let mut with_map = inputs(&writable, None);
    with_map.root_map = Some(idmap::RootMap { uid: 65534, gid: 65534, userns: 7 });
    let plan = plan(&private, &with_map, ws.path()).unwrap();
    assert_eq!(plan.flags & libc::CLONE_NEWUSER, 0);
    assert!(plan.flags & libc::CLONE_NEWNS != 0 && plan.flags & libc::CLONE_NEWPID != 0);
    let ws_c = c(&normalize(ws.path())).unwrap();
    let idmapped: Vec<_> = plan.ops.iter().filter(|op| matches!(op, MountOp::Idmapped { .. })).collect();
    assert_eq!(idmapped.len(), 1, "{idmapped:?}");
    assert!(matches!(idmapped[0], MountOp::Idmapped { src, userns: 7, .. } if *src == ws_c));
    assert!(!plan.ops.iter().any(|op| matches!(op, MountOp::Bind { src, .. } if *src == ws_c)));
    // The command is not the owner of the private /tmp and /dev/shm.
    for shared in [private.tmp(), private.shm()] {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&shared).unwrap().permissions().mode() & 0o7777, 0o1777, "{}", shared.display());
    }
}
