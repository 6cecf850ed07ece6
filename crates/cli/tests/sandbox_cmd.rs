//! `quiver sandbox -- CMD` runs a command the way agent mode runs a
//! model-written line, and `quiver sandbox --check` says what this machine offers.

use std::path::Path;
use std::process::{Command, Output};

use crate::mcp_support::quiver_bin;

fn quiver(workspace: &Path, args: &[&str]) -> Output {
    Command::new(quiver_bin())
        .arg("sandbox")
        .args(args)
        .current_dir(workspace)
        .env("QUIVER_CONFIG_DIR", workspace.join(".test-user-config"))
        .env("QUIVER_STATE_DIR", workspace.join(".test-state"))
        .env("QUIVER_CACHE_DIR", workspace.join(".test-cache"))
        .env("QUIVER_LOG", "warn")
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A git workspace, or `None` (after a skip) where this kernel has no namespace sandbox.
fn workspace() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().unwrap();
    let check = quiver(dir.path(), &["--check"]);
    if !text(&check).contains("in use: namespaces") {
        quiver_testkit::require_or_skip("the namespace sandbox", &text(&check));
        return None;
    }
    assert!(Command::new("git").args(["init", "-q"]).current_dir(dir.path()).status().unwrap().success());
    Some(dir)
}

#[test]
fn check_names_every_mechanism_and_what_it_protects() {
    let dir = tempfile::tempdir().unwrap();
    let out = quiver(dir.path(), &["--check"]);
    let report = text(&out);
    for line in ["namespaces: ", "landlock: ", "seccomp: ", "in use: "] {
        assert!(report.contains(line), "{report}");
    }
    if report.contains("in use: namespaces") {
        assert!(out.status.success(), "{report}");
        assert!(report.contains("protects:") && report.contains(".git/hooks"), "{report}");
    }
}

#[test]
fn ordinary_work_runs_and_what_escapes_is_refused() {
    let Some(dir) = workspace() else { return };
    let line = "mkdir build && echo hi > build/x && touch notes.md && git add notes.md \
                && git -c user.name=t -c user.email=t@t commit -qm x && echo WORKED; \
                touch /etc/quiver-sandbox-probe 2>&1; echo planted > .git/hooks/post-checkout 2>&1; \
                cat /proc/1/environ >/dev/null 2>&1 || echo NO-ENVIRON; exit 7";
    let out = quiver(dir.path(), &["--", "sh", "-c", line]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(7), "the command's own exit code: {report}");
    assert!(report.contains("WORKED"), "{report}");
    assert!(report.contains("NO-ENVIRON"), "{report}");
    assert_eq!(report.matches("Read-only file system").count(), 2, "{report}");
    assert_eq!(std::fs::read_to_string(dir.path().join("build/x")).unwrap(), "hi\n");
    assert!(!Path::new("/etc/quiver-sandbox-probe").exists());
    assert!(!dir.path().join(".git/hooks/post-checkout").exists());
}

#[test]
fn read_only_policy_writes_nothing_and_network_stays_off_unless_asked() {
    let Some(dir) = workspace() else { return };
    let out = quiver(dir.path(), &["--policy", "read-only", "--", "touch", "new.txt"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("Read-only file system"), "{}", text(&out));
    assert!(!dir.path().join("new.txt").exists());

    // Only loopback in the sandbox's network namespace: no other interface.
    let ifaces = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ' '";
    let out = quiver(dir.path(), &["--", "sh", "-c", ifaces]);
    assert_eq!(text(&out).trim(), "lo", "{}", text(&out));
    let out = quiver(dir.path(), &["--network", "--", "sh", "-c", ifaces]);
    assert_ne!(text(&out).trim(), "lo", "--network keeps the host's interfaces: {}", text(&out));
}

#[test]
fn the_landlock_fallback_can_be_chosen_and_a_bad_call_is_explained() {
    let Some(dir) = workspace() else { return };
    let out = quiver(dir.path(), &["--mechanism", "landlock", "--", "sh", "-c", "echo ok > /etc/x 2>&1; echo fine"]);
    let report = text(&out);
    assert!(out.status.success(), "{report}");
    assert!(report.contains("fine") && !Path::new("/etc/x").exists(), "{report}");

    let out = quiver(dir.path(), &["--", "no-such-program-quiver"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("no-such-program-quiver"), "{}", text(&out));
}

/// Who runs quiver in [`hostile_corpus_as`]: the test's own user, or (when the
/// tests run as root) the unprivileged `nobody`, through setpriv.
#[derive(Clone, Copy, Debug)]
enum As {
    Me,
    Nobody,
}

const NOBODY: u32 = 65534;

fn quiver_as(who: As, workspace: &Path, home: &Path, args: &[&str]) -> Output {
    let mut cmd = match who {
        As::Me => Command::new(quiver_bin()),
        As::Nobody => {
            let mut cmd = Command::new("setpriv");
            cmd.args(["--reuid", "65534", "--regid", "65534", "--clear-groups"]).arg(quiver_bin());
            cmd
        }
    };
    cmd.arg("sandbox")
        .args(args)
        .current_dir(workspace)
        .env("HOME", home)
        .env("QUIVER_CONFIG_DIR", home.join(".config/quiver"))
        .env("QUIVER_STATE_DIR", home.join(".local/state/quiver"))
        .env("QUIVER_CACHE_DIR", home.join(".cache/quiver"))
        .env("QUIVER_LOG", "warn");
    cmd.output().unwrap()
}

fn chown_tree(path: &Path, uid: u32) {
    for entry in walk(path) {
        std::os::unix::fs::lchown(&entry, Some(uid), Some(uid)).unwrap();
    }
}

fn walk(path: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![path.to_path_buf()];
    if path.is_dir() && !path.is_symlink() {
        for e in std::fs::read_dir(path).unwrap() {
            out.extend(walk(&e.unwrap().path()));
        }
    }
    out
}

/// The findings of the hostile-workspace probe, through `quiver sandbox` (the
/// agent's sandbox) with the workspace as `$HOME`, as root and unprivileged.
fn hostile_corpus_as(who: As) {
    let Some(probe_ws) = workspace() else { return };
    drop(probe_ws);
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY\n").unwrap();
    std::fs::write(home.join(".bashrc"), "# mine\n").unwrap();
    std::fs::create_dir_all(home.join(".config/quiver")).unwrap();
    assert!(Command::new("git").args(["init", "-q"]).current_dir(&home).status().unwrap().success());
    // A file outside the workspace but visible to it (not under /tmp).
    let outside_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let outside = outside_dir.path().join("victim");
    std::fs::write(&outside, "x").unwrap();
    // Host Unix sockets anyone may connect to: only the sandbox stands in the way.
    let sock = outside_dir.path().join("host.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    std::fs::set_permissions(&sock, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let abstract_name = format!("quiver-cli-test-{}-{who:?}", std::process::id());
    let _abstract = {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        std::os::unix::net::UnixListener::bind_addr(&addr).unwrap()
    };
    if let As::Nobody = who {
        chown_tree(root.path(), NOBODY);
        chown_tree(outside_dir.path(), NOBODY);
    }
    // The interpreter every user can run (a pyenv shim under /root is not).
    let py = ["/usr/bin/python3", "/usr/local/bin/python3"].into_iter().find(|p| Path::new(p).exists());
    let marker = format!("{}.{}", 400 + std::process::id() % 100, std::process::id() % 1000);
    let mut cases: Vec<(&str, String)> = vec![
        ("git config", "echo '[core] fsmonitor = evil' >> .git/config".into()),
        ("git hook", "echo evil > .git/hooks/post-checkout".into()),
        ("move .git aside", "mv .git .git-old".into()),
        ("bashrc in a $HOME workspace", "echo evil >> .bashrc".into()),
        ("ssh key read", "cat .ssh/id_ed25519".into()),
        ("authorized_keys", "echo evil >> .ssh/authorized_keys".into()),
        ("quiver's own config", "touch .config/quiver/config.toml".into()),
        ("chmod outside", format!("chmod 777 {}", outside.display())),
        ("utime outside", format!("touch -d 2001-01-01 {}", outside.display())),
        ("write outside", format!("echo x > {}", outside.display())),
        ("parent environ", "cat /proc/1/environ".into()),
    ];
    if let Some(py) = py {
        let connect =
            |addr: String| format!("{py} -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"{addr}\")'");
        cases.push(("pathname socket", connect(sock.display().to_string())));
        cases.push(("abstract socket", connect(format!("\\0{abstract_name}"))));
    }
    let mut escaped = Vec::new();
    for (what, line) in &cases {
        let out = quiver_as(who, &home, &home, &["--", "sh", "-c", line]);
        if out.status.success() {
            escaped.push(format!("{what}: `{line}` succeeded: {}", text(&out)));
        }
    }
    assert!(escaped.is_empty(), "{who:?} escaped:\n{}", escaped.join("\n"));
    assert_eq!(std::fs::read_to_string(home.join(".bashrc")).unwrap(), "# mine\n");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "x");
    assert!(!home.join(".git/hooks/post-checkout").exists() && home.join(".git").is_dir());

    // Ordinary work in the same workspace still runs.
    let work = "mkdir build && echo hi > build/x && touch notes.md && git add notes.md \
                && git -c user.name=t -c user.email=t@t commit -qm x";
    let out = quiver_as(who, &home, &home, &["--", "sh", "-c", work]);
    assert!(out.status.success(), "{who:?}: {}", text(&out));

    // A leftover in a session of its own neither holds the call nor survives it.
    let started = std::time::Instant::now();
    let line = format!("setsid sleep {marker} > /dev/null 2>&1 < /dev/null & echo started");
    let out = quiver_as(who, &home, &home, &["--", "sh", "-c", &line]);
    assert!(text(&out).contains("started"), "{}", text(&out));
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "the call waited for the leftover");
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.starts_with("sleep ") && c.contains(&marker))
        .collect();
    assert!(survivors.is_empty(), "{who:?}: {survivors:?}");
}

#[test]
fn hostile_corpus_as_the_current_user() {
    hostile_corpus_as(As::Me);
}

#[test]
fn hostile_corpus_as_an_unprivileged_user() {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").unwrap().uid() == 0 {
        hostile_corpus_as(As::Nobody);
    } else {
        // Not root: the test above already ran unprivileged.
        hostile_corpus_as(As::Me);
    }
}

/// `pid`'s children, grandchildren, ... with their command names.
fn descendants(pid: u32) -> Vec<(u32, String)> {
    let procs: Vec<(u32, u32, String)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let (name, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
            Some((pid, rest.split_whitespace().nth(1)?.parse().ok()?, name.to_string()))
        })
        .collect();
    let mut tree: Vec<(u32, String)> = Vec::new();
    let mut parents = vec![pid];
    while let Some(parent) = parents.pop() {
        for (child, _, name) in procs.iter().filter(|(_, ppid, _)| *ppid == parent) {
            tree.push((*child, name.clone()));
            parents.push(*child);
        }
    }
    tree
}

/// quiver's own `/proc/<pid>/environ` (every provider key, `GH_TOKEN`,
/// `QUIVER_MCP_TOKEN`) is not readable by another process of the same user:
/// run as an unprivileged user, quiver's proc files belong to root, and so do
/// those of the namespace sandbox's P0 and P1, forks of quiver that never
/// exec (a copy of its memory while the command runs). And root, who reads
/// quiver's environ anyway, finds no key there: they left it at start.
#[test]
fn quivers_own_environment_is_out_of_reach_of_the_users_other_processes() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::os::unix::process::CommandExt;
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        // As the user themselves there is no other uid to run quiver as.
        quiver_testkit::require_or_skip("root (to run quiver as an unprivileged user)", "not root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    // The build's own binary may lie in a directory only root can enter (a
    // clone under `mktemp -d`): the unprivileged user runs a copy.
    let bin = dir.path().join("quiver");
    std::fs::copy(quiver_bin(), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = Command::new(&bin)
        .args(["sandbox", "--", "sleep", "5"])
        .current_dir(dir.path())
        .env("QUIVER_CONFIG_DIR", dir.path().join("config"))
        .env("QUIVER_STATE_DIR", dir.path().join("state"))
        .env("QUIVER_CACHE_DIR", dir.path().join("cache"))
        .env("OPENAI_API_KEY", "sk-must-stay-inside")
        .uid(65534)
        .gid(65534)
        .spawn()
        .unwrap();
    // The process is quiver until it execs nothing: it waits for its child.
    let started = std::time::Instant::now();
    let mut tree = descendants(child.id());
    while !tree.iter().any(|(_, name)| name == "sleep") && started.elapsed() < std::time::Duration::from_secs(4) {
        std::thread::sleep(std::time::Duration::from_millis(20));
        tree = descendants(child.id());
    }
    let fork_owners: Vec<(u32, u32)> = tree
        .iter()
        .filter(|(_, name)| name == "quiver")
        .filter_map(|(pid, _)| Some((*pid, std::fs::metadata(format!("/proc/{pid}/environ")).ok()?.uid())))
        .collect();
    let environ = std::path::PathBuf::from(format!("/proc/{}/environ", child.id()));
    let owner = std::fs::metadata(&environ).unwrap().uid();
    let seen_by_root = String::from_utf8_lossy(&std::fs::read(&environ).unwrap()).into_owned();
    let still_running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(still_running, "quiver (as uid 65534) exited before its environ could be looked at");
    assert_eq!(owner, 0, "quiver's environ belongs to uid {owner}: readable by the user's other processes");
    assert!(seen_by_root.contains("QUIVER_STATE_DIR="), "not quiver's environment: {seen_by_root:?}");
    assert!(!seen_by_root.contains("sk-must-stay-inside"), "root reads the key: {seen_by_root:?}");
    if fork_owners.is_empty() {
        // No namespace sandbox for uid 65534 here (the Landlock fallback forks nothing).
        quiver_testkit::require_or_skip("the namespace sandbox for uid 65534", &format!("{tree:?}"));
    }
    assert!(fork_owners.iter().all(|(_, uid)| *uid == 0), "quiver's forks readable by their user: {fork_owners:?}");
}
