//! Shared helpers: running a script under a sandbox, skipping politely.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use quiver_sandbox::{Sandbox, SandboxError, SandboxPolicy, probe};

/// Whether the kernel can enforce the sandbox; otherwise prints why and
/// returns false, or panics when CI requires the sandbox.
pub fn sandbox_available(test: &str) -> bool {
    let p = probe();
    if p.is_complete() {
        return true;
    }
    let why = p.describe();
    assert!(std::env::var("QUIVER_REQUIRE_SANDBOX").as_deref() != Ok("1"), "{test}: sandbox required but {why}");
    eprintln!("skipping {test}: {why}");
    false
}

/// Builds a sandbox, treating "unavailable" like `sandbox_available`.
pub fn sandbox(test: &str, policy: SandboxPolicy, network: bool, extra: &[PathBuf]) -> Option<Sandbox> {
    match Sandbox::with_read_only(policy, network, extra) {
        Ok(s) => Some(s),
        Err(SandboxError::Unavailable(why)) => {
            assert!(std::env::var("QUIVER_REQUIRE_SANDBOX").as_deref() != Ok("1"), "{test}: {why}");
            eprintln!("skipping {test}: {why}");
            None
        }
        Err(e) => panic!("{test}: {e}"),
    }
}

/// Runs `bash -c script` in `cwd` under `sandbox` (none: unconfined).
pub fn run(sandbox: Option<&Sandbox>, cwd: &Path, script: &str) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(script).current_dir(cwd).stdin(Stdio::null());
    if let Some(s) = sandbox {
        s.apply_to(&mut cmd).unwrap();
    }
    cmd.output().expect("spawning bash")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A python interpreter that is a real binary (pyenv shims are scripts that
/// may want to write their own state).
pub fn python() -> Option<PathBuf> {
    ["/usr/bin/python3", "/usr/local/bin/python3"].iter().map(PathBuf::from).find(|p| p.exists())
}

/// A workspace with a git-like layout, and an outside directory with a file.
pub struct Layout {
    pub _ws: tempfile::TempDir,
    pub _out: tempfile::TempDir,
    pub ws: PathBuf,
    pub out: PathBuf,
}

pub fn layout() -> Layout {
    let ws_dir = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let out = out_dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(ws.join(".git/objects")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/a.txt"), "a\n").unwrap();
    std::fs::write(ws.join("README"), "readme\n").unwrap();
    std::fs::create_dir_all(ws.join("protected")).unwrap();
    std::fs::write(ws.join("protected/settings"), "x\n").unwrap();
    std::fs::write(out.join("victim"), "original\n").unwrap();
    // A hostile repository's link to the outside.
    std::os::unix::fs::symlink(&out, ws.join("escape")).unwrap();
    Layout { _ws: ws_dir, _out: out_dir, ws, out }
}

/// A listing of every path under `dir` with its contents, to prove nothing changed.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p.clone());
                out.push((p, None));
            } else if meta.is_symlink() {
                out.push((p.clone(), Some(std::fs::read_link(&p).unwrap().into_os_string().into_encoded_bytes())));
            } else {
                out.push((p.clone(), Some(std::fs::read(&p).unwrap_or_default())));
            }
        }
    }
    out.sort();
    out
}

/// Host pids whose command line contains `needle` (a `sleep 30x` marker).
pub fn host_pids_with(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
        let line = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if line.contains(needle) && !line.contains("bash -c") {
            out.push(pid);
        }
    }
    out
}

/// A namespace sandbox writing `ws`, or `None` (with a note) where the
/// kernel has no namespaces and CI does not require them.
pub fn ns_sandbox(test: &str, ws: &Path, options: quiver_sandbox::SandboxOptions) -> Option<Sandbox> {
    if !sandbox_available(test) || probe().namespaces.is_err() {
        assert!(std::env::var("QUIVER_REQUIRE_SANDBOX").as_deref() != Ok("1"), "{test}: no namespaces");
        return None;
    }
    let policy = SandboxPolicy::WorkspaceWrite { writable_roots: vec![ws.to_path_buf()] };
    let sb = quiver_sandbox::Sandbox::with_options(policy, false, options).unwrap();
    assert_eq!(sb.mechanism(), quiver_sandbox::SandboxMechanism::Namespaces);
    Some(sb)
}
