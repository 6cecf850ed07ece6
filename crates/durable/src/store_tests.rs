use super::*;
use crate::NewTask;

#[test]
fn opens_migrates_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as i64);
    let mode: String = store.lock().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    store.create_task(&NewTask { prompt: "x".into(), ..Default::default() }).unwrap();
    drop(store);
    let again = Store::open(dir.path()).unwrap();
    assert_eq!(again.list_tasks(&Default::default()).unwrap().len(), 1);
    assert_eq!(again.integrity_check().unwrap(), "ok");
}

#[test]
fn a_newer_schema_is_refused_not_guessed() {
    let dir = tempfile::tempdir().unwrap();
    drop(Store::open(dir.path()).unwrap());
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let err = Store::open(dir.path()).unwrap_err().to_string();
    assert!(err.contains("schema version 99") && err.contains("upgrade quiver"), "{err}");
}

#[test]
fn a_failed_write_rolls_back_everything_it_did() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let r: Result<(), StoreError> = store.write(|tx| {
        tx.execute("INSERT INTO tasks (prompt, state, created_at) VALUES ('a', 'queued', 0)", [])?;
        Err(StoreError::Invalid("stop".into()))
    });
    assert!(r.is_err());
    assert!(store.list_tasks(&Default::default()).unwrap().is_empty());
}

#[cfg(unix)]
#[test]
fn the_store_directory_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("work");
    Store::open(&path).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o700);
}
