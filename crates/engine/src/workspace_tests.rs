use super::*;
use std::os::unix::fs::symlink;

fn setup() -> (tempfile::TempDir, Workspace, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.txt"), "a").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s").unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    (dir, ws, outside)
}

fn err(ws: &Workspace, p: &str) -> String {
    ws.resolve(p).unwrap_err().to_string()
}

#[test]
fn relative_and_inner_dotdot_resolve_inside() {
    let (_d, ws, _o) = setup();
    assert_eq!(ws.resolve("src/a.txt").unwrap(), ws.root().join("src/a.txt"));
    assert_eq!(ws.resolve("src/../src/./a.txt").unwrap(), ws.root().join("src/a.txt"));
    assert_eq!(ws.resolve("new/dir/file.txt").unwrap(), ws.root().join("new/dir/file.txt"));
    assert_eq!(ws.resolve(".").unwrap(), ws.root());
}

#[test]
fn dotdot_escape_is_refused() {
    let (_d, ws, _o) = setup();
    assert!(err(&ws, "../etc/passwd").contains("outside the workspace root"));
    assert!(err(&ws, "src/../../x").contains("outside the workspace root"));
    assert!(err(&ws, "../../../../../../../../").contains("outside the workspace root"));
}

#[test]
fn absolute_paths_only_inside() {
    let (_d, ws, _o) = setup();
    assert!(err(&ws, "/etc/passwd").contains("outside the workspace root"));
    let inside = ws.root().join("src/a.txt");
    assert_eq!(ws.resolve(inside.to_str().unwrap()).unwrap(), inside);
}

#[test]
fn symlink_out_is_refused_for_existing_and_new_targets() {
    let (_d, ws, outside) = setup();
    symlink(outside.path(), ws.root().join("out")).unwrap();
    symlink(outside.path().join("secret"), ws.root().join("secret_link")).unwrap();
    symlink(outside.path().join("not_yet"), ws.root().join("dangling")).unwrap();
    assert!(err(&ws, "out/secret").contains("symlink"));
    assert!(err(&ws, "out/new_file").contains("symlink"));
    assert!(err(&ws, "secret_link").contains("symlink"));
    assert!(err(&ws, "dangling").contains("outside the workspace"));
}

#[test]
fn symlink_inside_is_fine() {
    let (_d, ws, _o) = setup();
    symlink(ws.root().join("src"), ws.root().join("src_link")).unwrap();
    assert_eq!(ws.resolve("src_link/a.txt").unwrap(), ws.root().join("src/a.txt"));
}

#[test]
fn symlink_loop_is_reported() {
    let (_d, ws, _o) = setup();
    symlink(ws.root().join("loop_b"), ws.root().join("loop_a")).unwrap();
    symlink(ws.root().join("loop_a"), ws.root().join("loop_b")).unwrap();
    let message = err(&ws, "loop_a/file");
    assert!(message.contains("symlink loop"), "{message}");
}

#[test]
fn empty_and_nul_paths_are_refused() {
    let (_d, ws, _o) = setup();
    assert!(err(&ws, "").contains("empty"));
    assert!(err(&ws, "a\0b").contains("NUL"));
}
