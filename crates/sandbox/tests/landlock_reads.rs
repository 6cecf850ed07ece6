//! Issue 46 in the Landlock fallback: what a command may *read* is an
//! allowlist (the system's trees, the home's toolchains, the workspace, a
//! few devices), so a tool's token in the home, another terminal or a
//! directory nobody listed stays closed where user namespaces are refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use quiver_sandbox::{Sandbox, SandboxMechanism, SandboxOptions, SandboxPolicy};

use crate::allowlist::{host_pty, hostile_home, leaked, options_for};
use crate::support::*;

/// The Landlock fallback writing `ws`, whatever this kernel offers besides.
fn landlock(test: &str, ws: &Path, options: SandboxOptions) -> Option<Sandbox> {
    if !sandbox_available(test) {
        return None;
    }
    let policy = SandboxPolicy::WorkspaceWrite { writable_roots: vec![ws.to_path_buf()] };
    let options = SandboxOptions { mechanism: Some(SandboxMechanism::Landlock), ..options };
    let sb = Sandbox::with_options(policy, false, options).unwrap();
    assert_eq!(sb.mechanism(), SandboxMechanism::Landlock);
    Some(sb)
}

#[test]
fn the_landlock_fallback_reads_no_home_secret_but_its_toolchains() {
    let l = layout();
    std::fs::remove_dir_all(l.ws.join(".git")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let h = home.path().canonicalize().unwrap();
    hostile_home(&h);
    let Some(sb) = landlock("landlock_home_outside", &l.ws, options_for(&h)) else { return };
    let h = h.display();
    let script = format!(
        "cat {h}/.codex/auth.json {h}/.claude/.credentials.json {h}/.pgpass {h}/.config/newtool/token \
         {h}/.cargo/credentials.toml {h}/.bashrc 2>&1; grep -r . {h} 2>/dev/null; \
         HOME={h} git config --global --list; echo ---; sh {h}/.cargo/bin/tool; \
         git init -q . && HOME={h} git commit -q --allow-empty -m x && git log --format=%an; \
         touch {h}/new 2>/dev/null && echo wrote-home"
    );
    let out = run(Some(&sb), &l.ws, &script);
    assert!(leaked(&out).is_empty(), "leaked {:?}:\n{}", leaked(&out), stdout(&out));
    let text = stdout(&out);
    // git sees the user's identity (and commits with it), nothing else.
    assert!(text.contains("user.name=Ada") && text.contains("user.email=ada@example.org"), "{text}");
    assert!(text.contains("toolchain"), "{text}");
    assert!(text.trim_end().ends_with("Ada"), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("wrote-home"), "{text}");
}

#[test]
fn the_landlock_fallback_with_the_workspace_at_the_home_hides_its_configuration() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().canonicalize().unwrap();
    hostile_home(&h);
    std::fs::create_dir_all(h.join("proj")).unwrap();
    std::fs::create_dir_all(h.join(".cache")).unwrap();
    let Some(sb) = landlock("landlock_home_is_workspace", &h, options_for(&h)) else { return };
    let script = "cat .codex/auth.json .claude/.credentials.json .pgpass .config/newtool/token \
                  .cargo/credentials.toml 2>&1; HOME=$PWD git config --global --list; \
                  echo work > proj/new.txt && echo wrote-work; echo c > .cache/c && echo wrote-cache; \
                  echo x >> .bashrc 2>/dev/null && echo wrote-rc; touch .cargo/bin/x 2>/dev/null && echo wrote-cargo; \
                  touch .profile 2>/dev/null && echo wrote-profile; sh .cargo/bin/tool; ls";
    let out = run(Some(&sb), &h, script);
    assert!(leaked(&out).is_empty(), "leaked {:?}:\n{}", leaked(&out), stdout(&out));
    let text = stdout(&out);
    for want in ["user.name=Ada", "wrote-work", "wrote-cache", "toolchain", "proj"] {
        assert!(text.contains(want), "{want}: {text}\n{}", String::from_utf8_lossy(&out.stderr));
    }
    for refused in ["wrote-rc", "wrote-cargo", "wrote-profile"] {
        assert!(!text.contains(refused), "{refused}: {text}");
    }
    drop(sb);
    assert_eq!(std::fs::read_to_string(h.join(".bashrc")).unwrap(), "echo rc");
    assert!(!h.join(".profile").exists());
    assert_eq!(std::fs::read_to_string(h.join("proj/new.txt")).unwrap(), "work\n");
}

/// Another terminal of the host is neither written nor read; the terminal
/// the command was given keeps working; a new pty cannot be opened (its
/// `/dev/pts/N` is a host path like any other: documented).
#[test]
fn the_landlock_fallback_opens_no_host_terminal() {
    use std::io::Read;
    let l = layout();
    let (other_master, other) = host_pty();
    let (own_master, own) = host_pty();
    let Some(sb) = landlock("landlock_host_terminal", &l.ws, SandboxOptions::default()) else { return };
    let n = other.display();
    let script = format!(
        "echo typed > {n} 2>/dev/null && echo reached >&2; timeout 2 cat {n} </dev/null 2>/dev/null; \
         [ $? = 124 ] && echo read >&2; echo own-terminal-ok"
    );
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c").arg(&script).current_dir(&l.ws).stdin(std::process::Stdio::null());
    // Its stdout is a terminal it was handed, as a person's shell would be.
    let slave = std::fs::OpenOptions::new().write(true).open(&own).unwrap();
    cmd.stdout(slave).stderr(std::process::Stdio::piped());
    sb.apply_to(&mut cmd).unwrap();
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("reached") && !stderr.contains("read"), "{stderr}");
    let mut got = [0u8; 64];
    let n = std::fs::File::from(own_master).read(&mut got).unwrap();
    assert!(String::from_utf8_lossy(&got[..n]).contains("own-terminal-ok"));
    drop(other_master);
    let Some(py) = python() else { return };
    let new_pty = format!("{} -c 'import os; m, s = os.openpty(); print(os.ttyname(s))'", py.display());
    let out = run(Some(&sb), &l.ws, &new_pty);
    assert!(!out.status.success(), "a new pty was opened: {}", stdout(&out));
}

/// A top-level directory nobody listed (a data disk, `/srv`) and `/run`
/// (sockets, container secrets) are not readable. Creating one at `/`
/// needs root.
#[test]
fn the_landlock_fallback_reads_no_unknown_top_level_directory() {
    let l = layout();
    struct Cleanup(Vec<PathBuf>);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            for p in &self.0 {
                let _ = std::fs::remove_dir_all(p);
            }
        }
    }
    let pid = std::process::id();
    let top = PathBuf::from(format!("/quiver-test-reads-{pid}"));
    let run_dir = PathBuf::from(format!("/run/quiver-test-reads-{pid}"));
    if let Err(e) = std::fs::create_dir(&top) {
        eprintln!("SKIPPED: the_landlock_fallback_reads_no_unknown_top_level_directory needs root ({e})");
        return;
    }
    let mut cleanup = Cleanup(vec![top.clone()]);
    std::fs::write(top.join("secret"), "top-secret").unwrap();
    let mut targets = vec![top.join("secret")];
    if std::fs::create_dir(&run_dir).is_ok() {
        cleanup.0.push(run_dir.clone());
        std::fs::write(run_dir.join("secret"), "run-secret").unwrap();
        targets.push(run_dir.join("secret"));
    }
    let Some(sb) = landlock("landlock_unknown_top", &l.ws, SandboxOptions::default()) else { return };
    for target in &targets {
        let out = run(Some(&sb), &l.ws, &format!("cat {}; ls {}", target.display(), top.display()));
        assert!(!stdout(&out).contains("secret"), "{}: {}", target.display(), stdout(&out));
        assert!(run(None, &l.ws, &format!("cat {}", target.display())).status.success());
    }
}

/// A service account's home beneath a system tree (`/var/lib/jenkins`) is
/// not read through that tree's grant: only its toolchains are. Creating
/// one there needs root.
#[test]
fn the_landlock_fallback_hides_a_home_inside_a_system_tree() {
    let l = layout();
    let home = PathBuf::from(format!("/var/lib/quiver-test-home-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir(&home) {
        eprintln!("SKIPPED: the_landlock_fallback_hides_a_home_inside_a_system_tree needs root ({e})");
        return;
    }
    struct Cleanup(PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _cleanup = Cleanup(home.clone());
    hostile_home(&home);
    let Some(sb) = landlock("landlock_home_in_var_lib", &l.ws, options_for(&home)) else { return };
    let h = home.display();
    let script = format!(
        "cat {h}/.codex/auth.json {h}/.pgpass {h}/.cargo/credentials.toml {h}/.gitconfig 2>&1;          grep -r . {h} 2>/dev/null; sh {h}/.cargo/bin/tool"
    );
    let out = run(Some(&sb), &l.ws, &script);
    assert!(leaked(&out).is_empty(), "leaked {:?}:\n{}", leaked(&out), stdout(&out));
    assert!(stdout(&out).contains("toolchain"), "{}", stdout(&out));
}

/// Ordinary tools still run with the real home's toolchains: the shell,
/// coreutils over `/usr`, git, python, `cargo new` and a build through
/// rustup, the devices, `/dev/stdin` through `/proc`.
#[test]
fn the_landlock_fallback_runs_ordinary_tools() {
    let l = layout();
    let Some(sb) = landlock("landlock_ordinary_tools", &l.ws, SandboxOptions::default()) else { return };
    let mut script = String::from(
        "set -e; ls /usr/bin >/dev/null; git --version >/dev/null; echo x > /dev/null; \
         head -c 4 /dev/urandom | wc -c; echo hi | cat /dev/stdin; ls /dev/fd/ >/dev/null; \
         cat /etc/passwd >/dev/null; ls /proc/self/ >/dev/null; echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"",
    );
    if let Some(py) = python() {
        script.push_str(&format!("; {} -c 'import ssl, json; print(6 * 7)'", py.display()));
    }
    let cargo = run(None, &l.ws, "cargo --version").status.success();
    if cargo {
        // The test's own target dir lies outside the workspace (quiver's
        // tools unset it the same way).
        script.push_str(
            "; cargo --version >/dev/null && unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR && \
             cargo new --vcs none --offline hello -q && cd hello && cargo build --offline -q && ./target/debug/hello",
        );
    }
    let out = run(Some(&sb), &l.ws, &script);
    assert!(out.status.success(), "{}\n{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    let text = stdout(&out);
    assert!(text.starts_with("4\nhi\nt\n"), "{text}");
    assert!(python().is_none() || text.contains("42"), "{text}");
    assert!(!cargo || text.contains("Hello, world!"), "{text}");
}
