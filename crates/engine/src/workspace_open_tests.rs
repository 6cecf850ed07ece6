use super::*;
use std::os::unix::fs::symlink;

fn setup() -> (tempfile::TempDir, Workspace, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.txt"), "inside").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("a.txt"), "CANARY").unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    (dir, ws, outside)
}

fn both(ws: &Workspace, rel: &str, read: bool) -> [io::Result<File>; 2] {
    let kernel = if read {
        ws.open_read(Path::new(rel))
    } else {
        ws.symlink_metadata(Path::new(rel)).map(|_| ws.open_read(Path::new(".")).unwrap())
    };
    [kernel, walk_open_for_test(ws, Path::new(rel), read)]
}

fn read_all(f: File) -> String {
    let mut s = String::new();
    io::Read::read_to_string(&mut &f, &mut s).unwrap();
    s
}

#[test]
fn reads_beneath_and_follows_inside_links() {
    let (_d, ws, _o) = setup();
    symlink("src", ws.root().join("rel_link")).unwrap();
    for rel in ["src/a.txt", "rel_link/a.txt", "src/../src/a.txt"] {
        for f in both(&ws, rel, true) {
            assert_eq!(read_all(f.unwrap()), "inside", "{rel}");
        }
    }
}

#[test]
fn links_out_are_refused_by_both_resolvers() {
    let (_d, ws, outside) = setup();
    symlink(outside.path(), ws.root().join("abs_out")).unwrap();
    symlink("../../../../../../..", ws.root().join("src/rel_out")).unwrap();
    for rel in ["abs_out/a.txt", "src/rel_out/etc/passwd", "../x", "src/../../x"] {
        for r in both(&ws, rel, true) {
            let e = r.unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{rel}: {e}");
            assert!(e.to_string().contains("leaves the workspace"), "{rel}: {e}");
        }
    }
}

#[test]
fn self_referencing_dangling_link_fails_fast() {
    let (_d, ws, _o) = setup();
    symlink("b/../dloop", ws.root().join("dloop")).unwrap();
    symlink("loop2", ws.root().join("loop1")).unwrap();
    symlink("loop1", ws.root().join("loop2")).unwrap();
    let start = std::time::Instant::now();
    for rel in ["dloop", "loop1", "loop1/x"] {
        for r in both(&ws, rel, true) {
            assert!(r.is_err(), "{rel}");
        }
        assert!(ws.resolve(rel).is_err(), "{rel}");
    }
    assert!(start.elapsed() < std::time::Duration::from_secs(1), "{:?}", start.elapsed());
}

#[test]
fn fifo_is_refused_without_blocking() {
    let (_d, ws, _o) = setup();
    let fifo = ws.root().join("pipe");
    rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, Mode::from_bits_truncate(0o644), 0)
        .unwrap();
    assert!(matches!(ws.read_regular(&fifo, u64::MAX), Err(ReadError::NotRegular)));
    assert!(matches!(ws.read_regular(&ws.root().join("src"), u64::MAX), Err(ReadError::Directory)));
    assert!(matches!(ws.read_regular(&ws.root().join("src/a.txt"), 2), Err(ReadError::TooLarge(6))));
    let walked = ws.open_walked(&fifo, true).unwrap();
    assert!(walked.metadata().unwrap().file_type().is_fifo_like());
}

trait FifoLike {
    fn is_fifo_like(&self) -> bool;
}

impl FifoLike for std::fs::FileType {
    fn is_fifo_like(&self) -> bool {
        std::os::unix::fs::FileTypeExt::is_fifo(self)
    }
}

#[test]
fn write_atomic_creates_parents_keeps_mode_and_refuses_read_only() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, ws, _o) = setup();
    ws.write_atomic(Path::new("new/deep/file.txt"), b"hello", None).unwrap();
    assert_eq!(std::fs::read_to_string(ws.root().join("new/deep/file.txt")).unwrap(), "hello");
    let script = ws.root().join("run.sh");
    std::fs::write(&script, "old").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    ws.write_atomic(&script, b"new", None).unwrap();
    assert_eq!(std::fs::metadata(&script).unwrap().permissions().mode() & 0o777, 0o755);
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o444)).unwrap();
    assert_eq!(ws.write_atomic(&script, b"x", None).unwrap_err().kind(), io::ErrorKind::PermissionDenied);
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "new");
    ws.write_atomic(&script, b"forced", Some(0o600)).unwrap();
    assert_eq!(std::fs::metadata(&script).unwrap().permissions().mode() & 0o777, 0o600);
    let leftovers: Vec<_> = std::fs::read_dir(ws.root())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".quiver-write-"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn write_through_a_link_out_is_refused() {
    let (_d, ws, outside) = setup();
    symlink(outside.path(), ws.root().join("out")).unwrap();
    let err = ws.write_atomic(Path::new("out/a.txt"), b"pwned", None).unwrap_err();
    assert!(err.to_string().contains("leaves the workspace"), "{err}");
    assert!(ws.write_atomic(Path::new("out/new/f"), b"pwned", None).is_err());
    assert!(ws.create_dir_all(Path::new("out/dir")).is_err());
    assert!(ws.remove_file(Path::new("out/a.txt")).is_err());
    assert_eq!(std::fs::read_to_string(outside.path().join("a.txt")).unwrap(), "CANARY");
    assert!(!outside.path().join("new").exists() && !outside.path().join("dir").exists());
}

#[test]
fn walked_entries_refuse_any_link_on_the_path() {
    let (_d, ws, _o) = setup();
    symlink("src", ws.root().join("alias")).unwrap();
    assert!(ws.open_walked(Path::new("src/a.txt"), true).is_ok());
    assert!(ws.open_walked(Path::new("alias/a.txt"), true).is_err());
    // The link itself is an entry: it opens (not followed) for metadata.
    assert!(ws.open_walked(Path::new("alias"), false).unwrap().metadata().unwrap().file_type().is_symlink());
    assert_eq!(ws.read_link(Path::new("alias")).unwrap(), PathBuf::from("src"));
}

/// A racer exchanges a real directory with a symlink to an outside directory
/// holding a file of the same name, as fast as it can, while reads and writes
/// go through the workspace. None may read the canary or write outside.
#[test]
fn directory_symlink_swap_race_never_escapes() {
    let (_d, ws, outside) = setup();
    let root = ws.root().to_path_buf();
    std::fs::create_dir(root.join("swap")).unwrap();
    std::fs::write(root.join("swap/a.txt"), "inside").unwrap();
    symlink(outside.path(), root.join("swap_link")).unwrap();
    assert_eq!(ws.read_regular(&root.join("swap/a.txt"), 100).unwrap(), b"inside");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let racer = {
        let (stop, root) = (stop.clone(), root.clone());
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    root.join("swap"),
                    rustix::fs::CWD,
                    root.join("swap_link"),
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps += 1;
                // Rest now and then in the real-directory state, so calls also
                // land between swaps (the test must see inside reads too).
                if swaps.is_multiple_of(64) {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
            }
            swaps
        })
    };
    let (mut calls, mut escapes, mut inside_reads, mut control_escapes) = (0, 0, 0, 0);
    let mut errors: std::collections::BTreeMap<String, usize> = Default::default();
    for i in 0..3000 {
        calls += 1;
        let read = if i % 2 == 0 {
            ws.read_regular(&root.join("swap/a.txt"), u64::MAX).map_err(|e| format!("{e:?}"))
        } else {
            walk_open_for_test(&ws, Path::new("swap/a.txt"), true)
                .map(|f| read_all(f).into_bytes())
                .map_err(|e| format!("{e:?}"))
        };
        let read = read.map_err(|e| *errors.entry(e).or_default() += 1).ok();
        // The control: the same read by path string, as the file tools did before.
        if std::fs::read(root.join("swap/a.txt")).is_ok_and(|b| b == b"CANARY") {
            control_escapes += 1;
        }
        match read.as_deref() {
            Some(b"CANARY") => escapes += 1,
            Some(_) => inside_reads += 1,
            None => {}
        }
        let _ = ws.write_atomic(Path::new(&format!("swap/w{}.txt", i % 7)), b"written", None);
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = racer.join().unwrap();
    if std::fs::symlink_metadata(root.join("swap")).unwrap().is_symlink() {
        std::fs::rename(root.join("swap"), root.join("tmp_link")).unwrap();
        std::fs::rename(root.join("swap_link"), root.join("swap")).unwrap();
    }
    assert_eq!(ws.read_regular(&root.join("swap/a.txt"), 100).unwrap(), b"inside");
    let written_outside = std::fs::read_dir(outside.path()).unwrap().count() - 1;
    eprintln!(
        "race: {calls} reads + {calls} writes, {swaps} swaps, {inside_reads} inside reads, {escapes} escapes, {written_outside} outside writes (control by path string: {control_escapes} escapes); refusals {errors:?}"
    );
    assert_eq!(escapes, 0);
    assert_eq!(written_outside, 0);
    assert_eq!(std::fs::read_to_string(outside.path().join("a.txt")).unwrap(), "CANARY");
    assert!(swaps > 100, "the racer barely ran ({swaps} swaps)");
    assert!(inside_reads > 0, "no call ever succeeded; the race proves nothing");
}
