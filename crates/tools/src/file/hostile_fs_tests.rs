//! Hostile file-system tricks against the file tools:
//! a directory swapped for a symlink to an outside directory while calls run
//! (`renameat2(RENAME_EXCHANGE)` in a loop), a self-referencing dangling
//! symlink, and FIFOs. Nothing outside may be read, listed or written, and
//! every trick ends in a precise error within a second, never a hang.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::test_support::Harness;

/// Calls per tool while the racer runs.
const CALLS: usize = 250;

#[derive(Default, Debug)]
struct Tally {
    calls: usize,
    ok: usize,
    escapes: usize,
}

fn exchange(a: &Path, b: &Path) {
    rustix::fs::renameat_with(rustix::fs::CWD, a, rustix::fs::CWD, b, rustix::fs::RenameFlags::EXCHANGE)
        .expect("renameat2(RENAME_EXCHANGE)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn directory_symlink_swap_never_escapes_any_file_tool() {
    let h = Harness::new();
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().canonicalize().unwrap();
    std::fs::write(out.join("a.txt"), "CANARY needle\n").unwrap();
    std::fs::create_dir(out.join("outside_only_dir")).unwrap();
    std::fs::write(out.join("outside_only_dir/secret_name.txt"), "CANARY needle\n").unwrap();
    h.write("d/a.txt", "inside needle\n");
    h.write("d/sub/b.txt", "inside\n");
    let (d, link) = (h.path("d"), h.path("d_link"));
    std::os::unix::fs::symlink(&out, &link).unwrap();
    let outside_names = |dir: &Path| {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };
    let before = outside_names(&out);

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let racer = {
        let (stop, swaps, d, link) = (stop.clone(), swaps.clone(), d.clone(), link.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                exchange(&d, &link);
                exchange(&d, &link);
                // Rest in the real-directory state now and then, so calls also succeed.
                if swaps.fetch_add(2, Ordering::Relaxed) % 64 == 0 {
                    std::thread::sleep(Duration::from_micros(300));
                }
            }
        })
    };

    let mut tally: BTreeMap<&str, Tally> = BTreeMap::new();
    let leaked =
        |text: &str| text.contains("CANARY") || text.contains("secret_name") || text.contains("outside_only_dir");
    for i in 0..CALLS {
        let calls: Vec<(&str, serde_json::Value)> = vec![
            ("read_file", json!({"path": "d/a.txt"})),
            ("grep_files", json!({"pattern": "needle", "path": "d"})),
            ("grep_files", json!({"pattern": "needle"})),
            ("list_dir", json!({"path": "d", "depth": 3})),
            ("list_dir", json!({"depth": 3, "include_hidden": true})),
            ("file_search", json!({"query": "secret"})),
            ("project_map", json!({"depth": 3})),
            ("write_file", json!({"path": format!("d/w{}.txt", i % 5), "content": "written"})),
            ("edit_file", json!({"path": "d/a.txt", "old_string": "needle", "new_string": "needle "})),
            ("apply_patch", json!({"patch": format!("--- /dev/null\n+++ b/d/p{i}.txt\n@@ -0,0 +1 @@\n+patched\n")})),
        ];
        for (name, args) in calls {
            let result = h.call(name, args).await;
            let text = result.content_text();
            let t = tally.entry(name).or_default();
            t.calls += 1;
            t.ok += usize::from(!result.is_error);
            t.escapes += usize::from(!result.is_error && leaked(&text));
        }
    }
    stop.store(true, Ordering::Relaxed);
    racer.join().unwrap();

    let after = outside_names(&out);
    let canary = std::fs::read_to_string(out.join("a.txt")).unwrap();
    let total: usize = tally.values().map(|t| t.calls).sum();
    eprintln!(
        "swap race: {total} calls, {} swaps, outside entries before {before:?} after {after:?}",
        swaps.load(Ordering::Relaxed)
    );
    for (name, t) in &tally {
        eprintln!("  {name:<12} calls {:>4}  ok {:>4}  escapes {}", t.calls, t.ok, t.escapes);
    }
    assert_eq!(after, before, "a write landed outside the workspace");
    assert_eq!(canary, "CANARY needle\n", "the outside file was changed");
    for (name, t) in &tally {
        assert_eq!(t.escapes, 0, "{name} reported outside content or names");
    }
    assert!(tally.values().all(|t| t.ok > 0), "some tool never succeeded, the race proves nothing: {tally:?}");
}

/// `ln -s 'b/../dloop' dloop`: dangling, and resolving it lexically leads back
/// to itself. It used to spin at 100% CPU forever.
#[tokio::test]
async fn self_referencing_dangling_symlink_is_an_error_within_a_second() {
    let h = Harness::new();
    std::os::unix::fs::symlink("b/../dloop", h.path("dloop")).unwrap();
    std::fs::create_dir(h.path("dir")).unwrap();
    std::os::unix::fs::symlink("b/../dloop2", h.path("dir/dloop2")).unwrap();
    for (name, args) in [
        ("read_file", json!({"path": "dloop"})),
        ("write_file", json!({"path": "dloop", "content": "x"})),
        ("edit_file", json!({"path": "dloop", "old_string": "a", "new_string": "b"})),
        ("list_dir", json!({"path": "dloop"})),
        ("read_file", json!({"path": "dloop/x"})),
        ("write_file", json!({"path": "dir/dloop2", "content": "x"})),
    ] {
        let start = Instant::now();
        let message = tokio::time::timeout(Duration::from_secs(5), h.err(name, args.clone())).await.expect("hung");
        assert!(start.elapsed() < Duration::from_secs(1), "{name} {args}: took {:?}", start.elapsed());
        assert!(message.contains("symlink loop"), "{name} {args}: {message}");
    }
    // The directory holding it still lists, showing the link for what it is.
    let listing = h.ok("list_dir", json!({})).await;
    assert!(listing.contains("dloop -> b/../dloop"), "{listing}");
}

#[tokio::test]
async fn fifo_is_refused_at_once_by_every_file_tool() {
    let h = Harness::new();
    h.write("src/a.txt", "needle\n");
    for fifo in ["pipe", "src/pipe.txt"] {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            h.path(fifo),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_bits_truncate(0o644),
            0,
        )
        .unwrap();
    }
    for (name, args, expected) in [
        ("read_file", json!({"path": "pipe"}), "not a regular file"),
        ("edit_file", json!({"path": "pipe", "old_string": "a", "new_string": "b"}), "not a regular file"),
        ("write_file", json!({"path": "pipe", "content": "x"}), "not a regular file"),
        ("apply_patch", json!({"patch": "--- a/pipe\n+++ b/pipe\n@@ -1 +1 @@\n-a\n+b\n"}), "not a regular file"),
    ] {
        let start = Instant::now();
        let message = tokio::time::timeout(Duration::from_secs(5), h.err(name, args)).await.expect("hung on a FIFO");
        assert!(start.elapsed() < Duration::from_secs(1), "{name}: took {:?}", start.elapsed());
        assert!(message.contains(expected), "{name}: {message}");
    }
    // Walks pass FIFOs by (never open them): grep finds the real file and returns.
    let start = Instant::now();
    let found = tokio::time::timeout(Duration::from_secs(5), h.ok("grep_files", json!({"pattern": "needle"})))
        .await
        .expect("hung");
    assert!(found.contains("src/a.txt:1:needle"), "{found}");
    assert!(start.elapsed() < Duration::from_secs(1));
    assert!(Path::new(&h.path("pipe")).exists(), "the FIFO itself is left alone");
}

/// A cancelled call (its future dropped, as an MCP `notifications/cancelled`
/// does) returns at once, and hostile paths never tie up the runtime: on a
/// single-threaded runtime, calls made right after still answer promptly.
#[tokio::test(flavor = "current_thread")]
async fn cancelled_and_hostile_calls_leave_the_runtime_answering() {
    let h = Harness::new();
    for i in 0..2000 {
        h.write(&format!("tree/d{}/f{i}.txt", i % 40), "needle\n");
    }
    std::os::unix::fs::symlink("b/../dloop", h.path("dloop")).unwrap();
    let start = Instant::now();
    let cancelled =
        tokio::time::timeout(Duration::from_millis(1), h.call("grep_files", json!({"pattern": "needle"}))).await;
    assert!(cancelled.is_err(), "the call finished before it could be cancelled");
    assert!(start.elapsed() < Duration::from_secs(1), "cancelling took {:?}", start.elapsed());
    let start = Instant::now();
    let (a, b) =
        tokio::join!(h.call("read_file", json!({"path": "dloop"})), h.call("list_dir", json!({"path": "dloop"})));
    assert!(a.is_error && b.is_error);
    let text = h.ok("read_file", json!({"path": "tree/d0/f0.txt"})).await;
    assert!(text.contains("needle"));
    assert!(start.elapsed() < Duration::from_secs(1), "took {:?}", start.elapsed());
}
