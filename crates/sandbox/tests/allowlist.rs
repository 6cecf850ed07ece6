//! Routes out of the namespace sandbox, each through a place no
//! list named: a tool's token in the home, the host's terminals, the kernel
//! keyring, a working directory that is the workspace's parent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use quiver_sandbox::SandboxOptions;

use crate::support::*;

/// A home with other tools' credentials under names no list carries, a
/// toolchain, and a `.gitconfig` holding a credential helper and a token.
pub(crate) fn hostile_home(home: &Path) {
    for (path, text) in [
        (".codex/auth.json", "{\"token\":\"codex-secret\"}"),
        (".claude/.credentials.json", "claude-secret"),
        (".pgpass", "db:5432:*:u:pg-secret"),
        (".config/newtool/token", "newtool-secret"),
        (".cargo/bin/tool", "#!/bin/sh\necho toolchain\n"),
        (".cargo/credentials.toml", "token = \"cargo-secret\""),
        (".bashrc", "echo rc"),
        (
            ".gitconfig",
            "[user]\n\tname = Ada\n\temail = ada@example.org\n[credential]\n\thelper = store\n\
             [url \"https://gh-secret@github.com/\"]\n\tinsteadOf = https://github.com/\n",
        ),
    ] {
        let p = home.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
}

pub(crate) fn options_for(home: &Path) -> SandboxOptions {
    SandboxOptions { home: Some(home.to_path_buf()), ..Default::default() }
}

/// Every secret of the hostile home, by any command that prints files.
pub(crate) fn leaked(out: &std::process::Output) -> Vec<&'static str> {
    let text = format!("{}{}", stdout(out), String::from_utf8_lossy(&out.stderr));
    ["codex-secret", "claude-secret", "pg-secret", "newtool-secret", "cargo-secret", "gh-secret", "helper"]
        .into_iter()
        .filter(|s| text.contains(s))
        .collect()
}

#[test]
fn a_home_outside_the_workspace_shows_only_toolchains_and_identity() {
    let l = layout();
    let home = tempfile::tempdir().unwrap();
    let h = home.path().canonicalize().unwrap();
    hostile_home(&h);
    let Some(sb) = ns_sandbox("home_outside", &l.ws, options_for(&h)) else { return };
    let h = h.display();
    let script = format!(
        "cat {h}/.codex/auth.json {h}/.claude/.credentials.json {h}/.pgpass {h}/.config/newtool/token \
         {h}/.cargo/credentials.toml {h}/.bashrc 2>&1; grep -r . {h} 2>/dev/null; \
         HOME={h} git config --global --list; echo ---; ls -A {h}; echo ---; sh {h}/.cargo/bin/tool; \
         touch {h}/new 2>/dev/null && echo wrote-home"
    );
    let out = run(Some(&sb), &l.ws, &script);
    assert!(leaked(&out).is_empty(), "leaked {:?}:\n{}", leaked(&out), stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("user.name=Ada") && text.contains("user.email=ada@example.org"), "{text}");
    // The home holds the toolchain and the identity file, nothing else.
    let listing: Vec<&str> = text.split("---\n").nth(1).unwrap().lines().collect();
    assert_eq!(listing, vec![".cargo", ".gitconfig"], "{text}");
    assert!(text.contains("toolchain"), "{text}");
    assert!(!text.contains("wrote-home"), "{text}");
    // Nothing of it changed on the host.
    assert!(std::fs::read_to_string(home.path().join(".gitconfig")).unwrap().contains("helper = store"));
}

#[test]
fn a_workspace_at_the_home_hides_the_homes_configuration_but_not_the_work() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().canonicalize().unwrap();
    hostile_home(&h);
    std::fs::create_dir_all(h.join("proj")).unwrap();
    std::fs::create_dir_all(h.join(".cache")).unwrap();
    let Some(sb) = ns_sandbox("home_is_workspace", &h, options_for(&h)) else { return };
    let script = "cat .codex/auth.json .claude/.credentials.json .pgpass .config/newtool/token \
                  .cargo/credentials.toml 2>&1; HOME=$PWD git config --global --list; \
                  echo work > proj/new.txt && echo wrote-work; echo c > .cache/c && echo wrote-cache; \
                  echo x >> .bashrc 2>/dev/null && echo wrote-rc; touch .cargo/bin/x 2>/dev/null && echo wrote-cargo; \
                  sh .cargo/bin/tool";
    let out = run(Some(&sb), &h, script);
    assert!(leaked(&out).is_empty(), "leaked {:?}:\n{}", leaked(&out), stdout(&out));
    let text = stdout(&out);
    for want in ["user.name=Ada", "wrote-work", "wrote-cache", "toolchain"] {
        assert!(text.contains(want), "{want}: {text}");
    }
    for refused in ["wrote-rc", "wrote-cargo"] {
        assert!(!text.contains(refused), "{refused}: {text}");
    }
    assert_eq!(std::fs::read_to_string(h.join(".bashrc")).unwrap(), "echo rc");
    assert_eq!(std::fs::read_to_string(h.join("proj/new.txt")).unwrap(), "work\n");
}

#[test]
fn no_host_terminal_is_reachable_but_a_private_one_works() {
    let l = layout();
    let Some(py) = python() else { return };
    // A terminal of the host, as a person's shell would hold it.
    let (_master, name) = host_pty();
    assert!(name.starts_with("/dev/pts"), "{}", name.display());
    let Some(sb) = ns_sandbox("host_terminal", &l.ws, SandboxOptions::default()) else { return };
    let n = name.display();
    let out = run(
        Some(&sb),
        &l.ws,
        &format!("echo typed > {n} && echo reached; timeout 2 cat {n} </dev/null; [ $? = 124 ] && echo read"),
    );
    assert!(!stdout(&out).contains("reached") && !stdout(&out).contains("read"), "{}", stdout(&out));
    let own = format!(
        "{} -c 'import os, pty; m, s = pty.openpty(); os.write(s, b\"ok\\n\"); print(os.read(m, 16))'",
        py.display()
    );
    let out = run(Some(&sb), &l.ws, &own);
    assert!(out.status.success() && stdout(&out).contains("ok"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_kernel_keyring_is_refused() {
    let l = layout();
    let Some(py) = python() else { return };
    let nr = match std::env::consts::ARCH {
        "x86_64" => 250,
        "aarch64" => 219,
        _ => return,
    };
    // keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, create=1).
    let probe = format!(
        "{} -c 'import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); \
         r = libc.syscall({nr}, 0, -3, 1); print(r, ctypes.get_errno()); sys.exit(0 if r >= 0 else 1)'",
        py.display()
    );
    let outside = run(None, &l.ws, &probe);
    let Some(sb) = ns_sandbox("keyring", &l.ws, SandboxOptions::default()) else { return };
    let inside = run(Some(&sb), &l.ws, &probe);
    assert!(!inside.status.success(), "keyctl answered inside: {}", stdout(&inside));
    assert!(stdout(&inside).trim().ends_with(&libc::EPERM.to_string()), "{}", stdout(&inside));
    eprintln!("keyctl outside the sandbox: {}", stdout(&outside).trim());
}

/// `quiver call git_status` with the working directory at the workspace's
/// parent failed with EINVAL: the parent's mount hid the workspace's own.
#[test]
fn a_working_directory_above_the_workspace_keeps_it_writable() {
    let parent = tempfile::tempdir().unwrap();
    let parent_path = parent.path().canonicalize().unwrap();
    let ws = parent_path.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let Some(sb) = ns_sandbox("cwd_above_workspace", &ws, SandboxOptions::default()) else { return };
    let out = run(Some(&sb), &parent_path, "echo ok > ws/file && cat ws/file && touch beside 2>/dev/null || echo no");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout(&out), "ok\nno\n");
    assert!(!parent_path.join("beside").exists());
}

/// A pseudo-terminal of the test process: its master (kept open) and the
/// path of its slave.
#[allow(unsafe_code)]
pub(crate) fn host_pty() -> (std::os::fd::OwnedFd, std::path::PathBuf) {
    use std::os::fd::FromRawFd;
    // SAFETY: posix_openpt/grantpt/unlockpt/ptsname_r on a descriptor this
    // function owns and a stack buffer.
    unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(fd >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        assert_eq!(libc::grantpt(fd), 0);
        assert_eq!(libc::unlockpt(fd), 0);
        let mut buf = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(fd, buf.as_mut_ptr(), buf.len()), 0);
        let name = std::ffi::CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
        (std::os::fd::OwnedFd::from_raw_fd(fd), std::path::PathBuf::from(name))
    }
}

/// A socket bound after the command started, in a directory nobody listed,
/// and one reached through a symlinked directory: neither is reachable.
#[test]
fn late_sockets_and_linked_socket_directories_are_out_of_reach() {
    let l = layout();
    let Some(py) = python() else { return };
    // Not under /tmp, /run or the home, which are replaced whole: a
    // top-level directory of its own, as a data disk or /srv would be.
    let top = std::path::PathBuf::from(format!("/quiver-test-sockets-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir(&top) {
        let why = format!("late_sockets needs to create {} ({e}; CI runs as root)", top.display());
        assert!(std::env::var("QUIVER_REQUIRE_SANDBOX").as_deref() != Ok("1"), "{why}");
        eprintln!("SKIPPED: {why}");
        return;
    }
    struct Cleanup(std::path::PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _cleanup = Cleanup(top.clone());
    let real = top.join("real");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, l.ws.join("linked")).unwrap();
    // Bound through the link: /proc/net/unix lists that spelling.
    let early = std::os::unix::net::UnixListener::bind(l.ws.join("linked/early.sock")).unwrap();
    let Some(sb) = ns_sandbox("late_sockets", &l.ws, SandboxOptions::default()) else { return };
    let connect = |sock: &str| {
        format!(
            "{} -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{sock}\")' && echo reached-{sock}",
            py.display()
        )
    };
    let early_real = real.join("early.sock").display().to_string();
    let late_real = real.join("late.sock").display().to_string();
    // The command waits until the late socket exists on the host, as a
    // tmux started later would be, then tries every spelling.
    let script = format!(
        "{}; {}; sleep 1.5; {}; {}",
        connect("linked/early.sock"),
        connect(&early_real),
        connect("linked/late.sock"),
        connect(&late_real)
    );
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c").arg(&script).current_dir(&l.ws).stdin(std::process::Stdio::null());
    cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    sb.apply_to(&mut cmd).unwrap();
    let child = cmd.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let late = std::os::unix::net::UnixListener::bind(&late_real).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(!stdout(&out).contains("reached"), "{}", stdout(&out));
    drop((early, late));
}

/// What a sandboxed command connects to, decided by who listens: a socket a
/// host process binds in the workspace after the command started is
/// refused by every spelling; the command's own sockets (a path in the
/// workspace and in its temp dir, an abstract name, TCP on loopback) still
/// work, and a datagram Unix socket is not made.
#[test]
fn a_socket_the_host_binds_in_the_workspace_later_is_refused_and_the_commands_own_are_not() {
    let l = layout();
    let Some(sb) = ns_sandbox("late_workspace_socket", &l.ws, SandboxOptions::default()) else { return };
    connects_only_to_its_own(&l, &sb);
}

/// The same in the Landlock fallback with network granted (without it no
/// socket is made at all): there the listener must descend from the command.
#[test]
fn the_landlock_fallback_with_network_connects_only_to_its_own_sockets() {
    let l = layout();
    if !sandbox_available("fallback_connects") {
        return;
    }
    let policy = quiver_sandbox::SandboxPolicy::WorkspaceWrite { writable_roots: vec![l.ws.clone()] };
    let options = SandboxOptions { mechanism: Some(quiver_sandbox::SandboxMechanism::Landlock), ..Default::default() };
    let sb = quiver_sandbox::Sandbox::with_options(policy, true, options).unwrap();
    connects_only_to_its_own(&l, &sb);
}

/// A link out of the sandbox's view is followed inside it: a relative path
/// through a link to a host socket the sandbox cannot see finds nothing, and
/// the host's listener never sees a connection (opening one and refusing it
/// could start a socket-activated host service).
#[test]
fn a_link_to_a_socket_outside_the_sandbox_is_followed_inside_it() {
    let l = layout();
    let Some(py) = python() else { return };
    let Some(sb) = ns_sandbox("link_out_of_view", &l.ws, SandboxOptions::default()) else { return };
    // The host's /tmp, which the sandbox replaces with its own.
    let host = tempfile::tempdir().unwrap();
    let socket = host.path().canonicalize().unwrap().join("host.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    std::os::unix::fs::symlink(&socket, l.ws.join("hostlink")).unwrap();
    let script = "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect('hostlink')\n    \
                  print('reached')\nexcept OSError as e:\n    print(type(e).__name__)";
    let mut cmd = std::process::Command::new(&py);
    cmd.arg("-c").arg(script).current_dir(&l.ws).stdin(std::process::Stdio::null());
    sb.apply_to(&mut cmd).unwrap();
    let out = cmd.output().unwrap();
    assert_eq!(stdout(&out).trim(), "FileNotFoundError", "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the host's listener saw a connection"
    );
}

fn connects_only_to_its_own(l: &Layout, sb: &quiver_sandbox::Sandbox) {
    let Some(py) = python() else {
        assert!(std::env::var("QUIVER_REQUIRE_SANDBOX").as_deref() != Ok("1"), "this test needs /usr/bin/python3");
        eprintln!("SKIPPED: needs /usr/bin/python3");
        return;
    };
    std::fs::create_dir(l.ws.join("sub")).unwrap();
    std::os::unix::fs::symlink(l.ws.join("sub"), l.ws.join("linked")).unwrap();
    let script = r#"
import os, socket, tempfile, time
out = []
def attempt(family, addr, label):
    s = socket.socket(family)
    try:
        s.connect(addr)
        out.append(label + "-reached")
        return s
    except PermissionError:
        out.append(label + "-refused")
    except OSError as e:
        out.append(label + "-" + type(e).__name__)
def own(addr, label):
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(addr)
    srv.listen()
    c = attempt(socket.AF_UNIX, addr, label)
    if c:
        peer, _ = srv.accept()
        c.sendall(b"x")
        out.append(label + ("-talks" if peer.recv(1) == b"x" else "-mute"))
own("own.sock", "own")
# From a thread other than the process's first.
import threading
worker = threading.Thread(target=own, args=("thread.sock", "thread"))
worker.start()
worker.join()
own(os.path.join(tempfile.gettempdir(), "own.sock"), "tmp")
own("\0quiver-test-abstract-%d" % os.getpid(), "abstract")
tcp = socket.socket()
tcp.bind(("127.0.0.1", 0))
tcp.listen()
attempt(socket.AF_INET, tcp.getsockname(), "tcp")
try:
    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    out.append("dgram-made")
except PermissionError:
    out.append("dgram-refused")
deadline = time.time() + 10
while not os.path.exists("sub/late.sock") and time.time() < deadline:
    time.sleep(0.02)
attempt(socket.AF_UNIX, "sub/late.sock", "late")
attempt(socket.AF_UNIX, "linked/late.sock", "linked")
attempt(socket.AF_UNIX, os.path.abspath("sub/late.sock"), "absolute")
attempt(socket.AF_UNIX, "sub/../sub/late.sock", "dotdot")
print(" ".join(out))
"#;
    let mut cmd = std::process::Command::new(&py);
    cmd.arg("-c").arg(script).current_dir(&l.ws).stdin(std::process::Stdio::null());
    cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    sb.apply_to(&mut cmd).unwrap();
    let child = cmd.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let late = std::os::unix::net::UnixListener::bind(l.ws.join("sub/late.sock")).unwrap();
    let out = child.wait_with_output().unwrap();
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    let expected = "own-reached own-talks thread-reached thread-talks tmp-reached tmp-talks abstract-reached abstract-talks tcp-reached \
                    dgram-refused late-refused linked-refused absolute-refused dotdot-refused";
    assert_eq!(said.trim(), expected);
    drop(late);
}

/// A deny rule holds for what runs, not what it is called: git's copy of
/// itself in git-core, its `git-status` link, and `mke2fs` for `mkfs*`.
#[test]
fn denied_programs_are_refused_under_their_other_names() {
    let l = layout();
    let options = SandboxOptions { deny_programs: vec!["git".into(), "mkfs*".into()], ..Default::default() };
    let Some(sb) = ns_sandbox("deny_by_content", &l.ws, options) else { return };
    let mut ran = Vec::new();
    for line in [
        "$(echo /usr/lib/git-core/git) --version",
        "$(echo /usr/lib/git-core)/git-status --version",
        "cp /usr/bin/git /tmp/g 2>/dev/null; /usr/bin/git --version",
        "mke2fs -V",
        "$(echo /sbin/mkfs).ext4 -V",
    ] {
        // Only a line that runs unconfined here says anything about the
        // sandbox (a machine without git-core or e2fsprogs has nothing to deny).
        if !run(None, &l.ws, line).status.success() {
            continue;
        }
        if run(Some(&sb), &l.ws, line).status.success() {
            ran.push(line);
        }
    }
    assert!(ran.is_empty(), "denied programs ran: {ran:?}");
}
