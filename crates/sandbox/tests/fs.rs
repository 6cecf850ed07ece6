//! Filesystem confinement: hostile writes outside the workspace, to
//! `.git/config`, `.git/hooks` and other read-only paths are refused; work
//! inside the workspace and the private temp dir is not.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use quiver_sandbox::SandboxPolicy;

use crate::support::*;

/// Commands that must change nothing outside the writable places. `$OUT` is
/// outside, `$WS` the workspace (also the working directory).
const HOSTILE: &[&str] = &[
    "touch $OUT/new",
    "echo x > $OUT/new",
    "echo x >> $OUT/victim",
    ": > $OUT/victim",
    "truncate -s 0 $OUT/victim",
    "cp src/a.txt $OUT/copied",
    "mv src/a.txt $OUT/moved",
    "ln -s /etc/passwd $OUT/link",
    "ln src/a.txt $OUT/hard",
    "mkdir $OUT/dir",
    "rm -f $OUT/victim",
    "mv $OUT/victim $OUT/renamed",
    "touch escape/through-link",
    "echo x > escape/victim",
    "echo '[core] fsmonitor = touch /tmp/pwned' >> .git/config",
    "echo x > .git/config",
    "rm -f .git/config",
    "mv .git/config .git/config.old",
    "touch .git/hooks/pre-commit",
    "echo 'touch /tmp/pwned' > .git/hooks/x",
    "cp /bin/true .git/hooks/post-checkout",
    "ln -s ../../src/a.txt .git/hooks/pre-push",
    "mv .git/hooks .git/hooks.old",
    "rm -rf .git/hooks",
    "mv .git .git-moved",
    "echo x > protected/settings",
    "touch protected/new",
    "echo x > /tmp/quiver-sandbox-test-$$",
    "echo x > $HOME/.quiver-sandbox-test",
    "python3 -c \"open('$OUT/py', 'w').write('x')\"",
];

#[test]
fn workspace_write_refuses_every_hostile_write() {
    let Some(_) = sandbox_available("workspace_write_refuses_every_hostile_write").then_some(()) else { return };
    let l = layout();
    let policy = SandboxPolicy::WorkspaceWrite { writable_roots: vec![l.ws.clone()] };
    let Some(sb) = sandbox("fs", policy, false, &[l.ws.join("protected")]) else { return };
    let mut held = 0;
    let mut broke = Vec::new();
    // Under Landlock alone a new top-level entry cannot be made (the root is
    // split around the protected paths); the namespace sandbox allows it.
    let landlock_only: &[&str] = &["touch new-top-level-file", "mkdir new-top-level-dir"];
    let namespaced = sb.mechanism() == quiver_sandbox::SandboxMechanism::Namespaces;
    let cases: Vec<&str> =
        HOSTILE.iter().copied().chain(if namespaced { &[][..] } else { landlock_only }.iter().copied()).collect();
    for cmd in cases.iter() {
        let before_ws = snapshot(&l.ws);
        let before_out = snapshot(&l.out);
        let script = format!("OUT={}; WS={}; {cmd}", l.out.display(), l.ws.display());
        let out = run(Some(&sb), &l.ws, &script);
        let changed = snapshot(&l.ws) != before_ws || snapshot(&l.out) != before_out;
        let strays = std::fs::read_dir("/tmp")
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("quiver-sandbox-test-"));
        let home_stray =
            std::env::var_os("HOME").is_some_and(|h| std::path::Path::new(&h).join(".quiver-sandbox-test").exists());
        if changed || strays || home_stray {
            broke.push(format!("{cmd}: exit {:?} stderr {}", out.status.code(), String::from_utf8_lossy(&out.stderr)));
        } else {
            held += 1;
        }
    }
    eprintln!("workspace-write hostile writes ({:?}): tried {}, held {held}", sb.mechanism(), cases.len());
    assert!(broke.is_empty(), "escaped:\n{}", broke.join("\n"));
}

#[test]
fn workspace_write_allows_work_inside() {
    if !sandbox_available("workspace_write_allows_work_inside") {
        return;
    }
    let l = layout();
    let policy = SandboxPolicy::WorkspaceWrite { writable_roots: vec![l.ws.clone()] };
    let Some(sb) = sandbox("fs-inside", policy, false, &[]) else { return };
    let script = "set -e
        echo changed > src/a.txt
        echo more >> README
        touch src/new && mkdir -p src/d/e && echo f > src/d/e/f
        mv src/new src/d/ && cp src/a.txt src/b.txt && ln -s a.txt src/l && rm src/l
        echo obj > .git/objects/probe && echo ref > .git/HEAD
        echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"
        echo quiet > /dev/null
        ls / > /dev/null && cat /etc/hostname > /dev/null";
    let out = run(Some(&sb), &l.ws, script);
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(l.ws.join("src/a.txt")).unwrap(), "changed\n");
    assert!(l.ws.join("src/d/new").exists());
    assert!(l.ws.join("src/d/e/f").exists());
    assert_eq!(std::fs::read_to_string(l.ws.join(".git/objects/probe")).unwrap(), "obj\n");
    let tmp = sb.tmp_dir().unwrap();
    assert!(tmp.join("t").exists(), "TMPDIR is the private temp dir");
}

#[test]
fn read_only_writes_nothing_but_its_temp_dir() {
    if !sandbox_available("read_only_writes_nothing_but_its_temp_dir") {
        return;
    }
    let l = layout();
    let Some(sb) = sandbox("ro", SandboxPolicy::ReadOnly, false, &[]) else { return };
    let before = snapshot(&l.ws);
    let mut tried = 0;
    for cmd in ["touch src/new", "echo x > src/a.txt", "rm README", "mkdir d", "echo x > $OUT/victim"] {
        tried += 1;
        let out = run(Some(&sb), &l.ws, &format!("OUT={}; {cmd}", l.out.display()));
        assert!(!out.status.success(), "{cmd} succeeded read-only");
    }
    assert_eq!(snapshot(&l.ws), before);
    let out = run(Some(&sb), &l.ws, "echo t > \"$TMPDIR/t\" && cat src/a.txt");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout(&out), "a\n");
    eprintln!("read-only hostile writes: tried {tried}, held {tried}");
}

#[test]
fn full_policy_is_unconfined() {
    let l = layout();
    let sb = quiver_sandbox::Sandbox::new(SandboxPolicy::Full, true).unwrap();
    assert!(sb.tmp_dir().is_none());
    let out = run(Some(&sb), &l.ws, &format!("echo x > {}/victim", l.out.display()));
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(l.out.join("victim")).unwrap(), "x\n");
}

#[test]
fn a_sandboxed_command_cannot_signal_outside_its_sandbox() {
    if !sandbox_available("a_sandboxed_command_cannot_signal_outside_its_sandbox") {
        return;
    }
    let l = layout();
    let Some(sb) = sandbox("signal", SandboxPolicy::ReadOnly, false, &[]) else { return };
    let mut victim = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let out = run(Some(&sb), &l.ws, &format!("kill -9 {}", victim.id()));
    assert!(!out.status.success(), "kill of an outside process succeeded");
    assert!(victim.try_wait().unwrap().is_none(), "the outside process died");
    victim.kill().unwrap();
    victim.wait().unwrap();
}

/// A descriptor quiver inherited from whoever started it (an editor, a
/// script's `exec 3>>file`) is a right no path check sees again: without the
/// sandbox closing it, `echo x >&N` wrote outside the workspace. Both
/// mechanisms.
#[test]
#[allow(unsafe_code)]
fn an_inherited_descriptor_does_not_reach_the_command() {
    if !sandbox_available("an_inherited_descriptor_does_not_reach_the_command") {
        return;
    }
    let l = layout();
    let victim = std::fs::OpenOptions::new().append(true).open(l.out.join("victim")).unwrap();
    // A copy without close-on-exec, as a careless parent would leave it.
    // SAFETY: F_DUPFD on a descriptor this test owns; the copy is closed below.
    let fd = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&victim), libc::F_DUPFD, 200) };
    assert!(fd >= 200, "dup failed");
    let mechanisms = [None, Some(quiver_sandbox::SandboxMechanism::Landlock)];
    let mut results = Vec::new();
    for mechanism in mechanisms {
        let policy = SandboxPolicy::WorkspaceWrite { writable_roots: vec![l.ws.clone()] };
        let options = quiver_sandbox::SandboxOptions { mechanism, ..Default::default() };
        let sb = match quiver_sandbox::Sandbox::with_options(policy, false, options) {
            Ok(sb) => sb,
            Err(e) => panic!("{mechanism:?}: {e}"),
        };
        let out = run(Some(&sb), &l.ws, &format!("echo escaped >&{fd}; ls /proc/self/fd"));
        results.push((sb.mechanism(), out.status.code(), stdout(&out)));
    }
    // SAFETY: closing the copy made above.
    unsafe { libc::close(fd) };
    let victim = std::fs::read_to_string(l.out.join("victim")).unwrap();
    assert_eq!(victim, "original\n", "an inherited descriptor wrote outside: {results:?}");
    for (mechanism, _, fds) in &results {
        assert!(!fds.lines().any(|l| l == fd.to_string()), "{mechanism:?}: fd {fd} reached the command: {fds}");
    }
}
