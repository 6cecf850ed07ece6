//! The namespace sandbox against a hostile corpus: each case is a finding of
//! a probe that escaped the Landlock-only sandbox.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use quiver_sandbox::{SandboxMechanism, SandboxOptions, SandboxPolicy, probe};

use crate::support::*;

/// The namespace sandbox is there where CI says the sandbox is required.
#[test]
fn namespaces_are_available_where_the_sandbox_is_required() {
    let p = probe();
    eprintln!("sandbox probe: {}", p.describe());
    if std::env::var("QUIVER_REQUIRE_SANDBOX").as_deref() == Ok("1") {
        assert!(p.namespaces.is_ok(), "{}", p.describe());
    }
}

/// Ordinary work runs unasked and lands in the workspace: new top-level
/// entries, redirects, git's own bookkeeping, python.
#[test]
fn ordinary_work_and_git_commits_run_in_the_workspace() {
    let l = layout();
    std::fs::remove_dir_all(l.ws.join(".git")).unwrap();
    let Some(sb) = ns_sandbox("ordinary_work", &l.ws, SandboxOptions::default()) else { return };
    let script = "set -e; mkdir build; echo hi > build/x; touch notes.md; git init -q .; \
                  git -c user.name=q -c user.email=q@q add notes.md && git -c user.name=q -c user.email=q@q commit -qm x; \
                  git log --oneline | wc -l; echo tmp > /tmp/private; cat /tmp/private";
    let out = run(Some(&sb), &l.ws, script);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout(&out), "1\ntmp\n");
    assert!(l.ws.join("build/x").exists() && l.ws.join("notes.md").exists());
}

/// What a hostile repository tried, each refused: planting git config and
/// hooks, moving `.git` aside, metadata outside, host sockets, other
/// processes' environments, terminal injection, denied programs by any name.
#[test]
fn hostile_findings_are_contained() {
    let l = layout();
    let outside = l.out.join("victim");
    std::fs::write(&outside, "x").unwrap();
    // A host Unix socket (a tmux or docker socket) and an abstract one.
    let sock_dir = tempfile::tempdir().unwrap();
    let sock_path = sock_dir.path().join("host.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock_path).unwrap();
    let abstract_name = format!("quiver-test-{}", std::process::id());
    let _abstract = {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        std::os::unix::net::UnixListener::bind_addr(&addr).unwrap()
    };
    let options = SandboxOptions { deny_programs: vec!["ls".into()], ..Default::default() };
    let Some(sb) = ns_sandbox("hostile_findings", &l.ws, options) else { return };
    let Some(py) = python() else { return };
    let py = py.display();
    let me = std::process::id();
    let cases = [
        ("git config", "echo '[core] fsmonitor = evil' >> .git/config".to_string()),
        ("git hook", "echo evil > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout".into()),
        ("git info", "echo '* filter=evil' > .git/info/attributes".into()),
        ("move .git aside", "mv .git .git-old".into()),
        ("chmod outside", format!("chmod 777 {}", outside.display())),
        ("utime outside", format!("touch -d 2001-01-01 {}", outside.display())),
        ("write outside", format!("echo x > {}", outside.display())),
        (
            "pathname socket",
            format!(
                "{py} -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{}\")'",
                sock_path.display()
            ),
        ),
        (
            "abstract socket",
            format!("{py} -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"\\0{abstract_name}\")'"),
        ),
        ("parent environ", format!("cat /proc/{me}/environ")),
        (
            "TIOCSTI",
            format!(
                "{py} -c 'import fcntl, termios, sys, os\ntry:\n fcntl.ioctl(0, termios.TIOCSTI, b\"x\")\nexcept OSError as e:\n sys.exit(0 if e.errno != 1 else 1)'"
            ),
        ),
        ("denied by path", "/usr/bin/ls /".into()),
        ("denied by spelling", "$(echo l)s /".into()),
        ("denied via find -exec", "find . -maxdepth 0 -exec ls {} +".into()),
    ];
    let mut escaped = Vec::new();
    for (what, cmd) in &cases {
        let out = run(Some(&sb), &l.ws, cmd);
        if out.status.success() {
            escaped.push(format!("{what}: `{cmd}` succeeded: {}", stdout(&out)));
        }
    }
    assert!(std::fs::read_to_string(l.ws.join(".git/config")).unwrap() == "[core]\n");
    assert!(!l.ws.join(".git/hooks/post-checkout").exists());
    assert!(l.ws.join(".git").is_dir());
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "x");
    assert!(escaped.is_empty(), "escaped:\n{}", escaped.join("\n"));
    // Its own /proc shows only its own processes.
    let out = run(Some(&sb), &l.ws, "ls /proc | grep -c '^[0-9]'");
    let count: usize = stdout(&out).trim().parse().unwrap();
    assert!(count <= 6, "{count} processes visible");
}

/// With user namespaces turned off, the fallback still contains what it can
/// and says what it cannot.
#[test]
fn the_landlock_fallback_contains_sockets_and_names_its_gaps() {
    if !sandbox_available("landlock_fallback") {
        return;
    }
    let l = layout();
    let policy = SandboxPolicy::WorkspaceWrite { writable_roots: vec![l.ws.clone()] };
    let options = SandboxOptions { mechanism: Some(SandboxMechanism::Landlock), ..Default::default() };
    let sb = quiver_sandbox::Sandbox::with_options(policy, false, options).unwrap();
    assert_eq!(sb.mechanism(), SandboxMechanism::Landlock);
    assert!(SandboxMechanism::Landlock.gaps().iter().any(|g| g.contains("/proc")));
    let sock_dir = tempfile::tempdir().unwrap();
    let sock_path = sock_dir.path().join("host.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock_path).unwrap();
    let Some(py) = python() else { return };
    let cmd = format!(
        "{} -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{}\")'",
        py.display(),
        sock_path.display()
    );
    assert!(!run(Some(&sb), &l.ws, &cmd).status.success(), "a host Unix socket was reachable");
    // Landlock cannot refuse a protected path inside a workspace it lets the
    // command create entries in: the guard undoes the write and names it.
    run(
        Some(&sb),
        &l.ws,
        "echo x > .git/hooks/pre-commit; echo '[core] fsmonitor = evil' >> .git/config; echo '{}' > .mcp.json",
    );
    let undone = sb.restore_protected();
    assert_eq!(undone.len(), 3, "{undone:#?}");
    assert!(!l.ws.join(".git/hooks/pre-commit").exists() && !l.ws.join(".mcp.json").exists());
    assert_eq!(std::fs::read_to_string(l.ws.join(".git/config")).unwrap(), "[core]\n");
    assert!(run(Some(&sb), &l.ws, "echo x > src/ok").status.success());
}

/// Ordinary work in the Landlock fallback: new entries in the workspace
/// root and in `.git/` (git's lock files), so `mkdir`, redirects and `git
/// commit` run; outside stays closed.
#[test]
fn the_landlock_fallback_does_ordinary_work() {
    if !sandbox_available("landlock_fallback_work") {
        return;
    }
    let l = layout();
    std::fs::remove_dir_all(l.ws.join(".git")).unwrap();
    let policy = SandboxPolicy::WorkspaceWrite { writable_roots: vec![l.ws.clone()] };
    let options = SandboxOptions { mechanism: Some(SandboxMechanism::Landlock), ..Default::default() };
    let sb = quiver_sandbox::Sandbox::with_options(policy, false, options).unwrap();
    let script = "set -e; mkdir build; echo hi > build/x; touch notes.md; git init -q .; \
                  git -c user.name=q -c user.email=q@q add notes.md && git -c user.name=q -c user.email=q@q commit -qm x; \
                  git log --oneline | wc -l";
    let out = run(Some(&sb), &l.ws, script);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout(&out), "1\n");
    assert!(!run(Some(&sb), &l.ws, &format!("echo x > {}/victim", l.out.display())).status.success());
    assert_eq!(std::fs::read_to_string(l.out.join("victim")).unwrap(), "original\n");
}

/// An interrupt sent to the process quiver spawned reaches the command
/// (an RLM eval is interrupted this way), instead of tearing the sandbox down.
#[test]
fn an_interrupt_reaches_the_command() {
    use std::io::BufRead;
    let l = layout();
    let Some(sb) = ns_sandbox("an_interrupt_reaches_the_command", &l.ws, SandboxOptions::default()) else { return };
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c")
        .arg("trap 'echo got; exit 3' INT; echo ready; sleep 20 & wait")
        .current_dir(&l.ws)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped());
    sb.apply_to(&mut cmd).unwrap();
    let mut child = cmd.spawn().unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "got\n");
    assert_eq!(child.wait().unwrap().code(), Some(3));
}

/// A command root starts runs as an unprivileged user: root-only files
/// outside the workspace (`/etc/shadow`, a service's state under
/// `/var/lib`) are refused, while the workspace is its own (idmapped): it
/// writes, commits with git, and what it makes is root's on disk, as the
/// rest of the workspace is. Not root: nothing to map.
#[test]
fn a_command_root_starts_runs_unprivileged_and_still_owns_its_workspace() {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        eprintln!("SKIPPED: a_command_root_starts_runs_unprivileged_and_still_owns_its_workspace needs root");
        return;
    }
    let l = layout();
    std::fs::remove_dir_all(l.ws.join(".git")).unwrap();
    let secret = PathBuf::from(format!("/var/lib/quiver-test-root-secret-{}", std::process::id()));
    std::fs::write(&secret, "root-only").unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    struct Cleanup(PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _cleanup = Cleanup(secret.clone());
    let Some(sb) = ns_sandbox("root_unprivileged", &l.ws, SandboxOptions::default()) else { return };
    let mut refused = vec![secret.clone()];
    if std::path::Path::new("/etc/shadow").exists() {
        refused.push(PathBuf::from("/etc/shadow"));
    }
    for path in &refused {
        let out = run(Some(&sb), &l.ws, &format!("cat {}", path.display()));
        assert!(!out.status.success(), "{} was read: {}", path.display(), stdout(&out));
    }
    let out = run(Some(&sb), &l.ws, "id -u");
    assert_ne!(stdout(&out).trim(), "0", "the command ran as root");
    // The workspace is the command's own; git trusts it; a repository
    // above a subdirectory too.
    let script = "set -e; test -O README; mkdir build; echo hi > build/x; echo more >> README; git init -q .; \
                  git -c user.name=q -c user.email=q@q add -A && git -c user.name=q -c user.email=q@q commit -qm x; \
                  cd build && git log --oneline | wc -l";
    let out = run(Some(&sb), &l.ws, script);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout(&out), "1\n");
    for made in ["build", "build/x", ".git/HEAD", "README"] {
        let meta = std::fs::metadata(l.ws.join(made)).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (0, 0), "{made} is not root's on disk");
    }
    // A workspace below a repository's root: the repository is not the
    // command's (not idmapped), and git still reads it.
    let Some(sub) = ns_sandbox("root_unprivileged_sub", &l.ws.join("build"), SandboxOptions::default()) else { return };
    let out = run(Some(&sub), &l.ws.join("build"), "git log --oneline | wc -l && git status --short");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout(&out).starts_with("1\n"), "{}", stdout(&out));
}

/// A root command whose workspace lies in a directory only root may cross
/// (outside `/tmp` and the home, which the sandbox rebuilds) keeps root's
/// uid rather than losing its own workspace: `nobody` would reach it by a
/// relative path only, and git (which resolves absolute paths) would fail.
#[test]
fn a_root_workspace_behind_a_closed_directory_still_works() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        eprintln!("SKIPPED: a_root_workspace_behind_a_closed_directory_still_works needs root");
        return;
    }
    let outer = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::set_permissions(outer.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let ws = outer.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    assert!(std::process::Command::new("git").args(["init", "-q"]).current_dir(&ws).status().unwrap().success());
    let Some(sb) = ns_sandbox("root_closed_ancestor", &ws, SandboxOptions::default()) else { return };
    let script = format!("echo x > {}/made && git status --short", ws.display());
    let out = run(Some(&sb), &ws, &script);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout(&out).contains("made"), "{}", stdout(&out));
}

/// The `safe.directory` a root command gets goes after the git settings
/// the command already carries in `GIT_CONFIG_*`, never over them.
#[test]
fn a_root_commands_own_git_settings_survive_the_safe_directory() {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        eprintln!("SKIPPED: a_root_commands_own_git_settings_survive_the_safe_directory needs root");
        return;
    }
    let l = layout();
    let Some(sb) = ns_sandbox("root_git_settings", &l.ws, SandboxOptions::default()) else { return };
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", "git config --get user.name && git config --get safe.directory"]).current_dir(&l.ws);
    cmd.env("GIT_CONFIG_COUNT", "1").env("GIT_CONFIG_KEY_0", "user.name").env("GIT_CONFIG_VALUE_0", "Root Test");
    sb.apply_to(&mut cmd).unwrap();
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Root Test\n*\n");
}
