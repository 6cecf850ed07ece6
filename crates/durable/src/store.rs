//! Opening the store: the database file, its pragmas and migrations, and the
//! artifact folder beside it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::clock::{Clock, SystemClock, Timestamp};
use crate::error::StoreError;
use crate::migrations::MIGRATIONS;

const DB_FILE: &str = "quiver.db";
pub(crate) const ARTIFACT_DIR: &str = "artifacts";

/// A handle on the durable store. Cheap to clone; clones share one connection.
/// Several processes (a `quiver tasks run` pool and a `quiver mcp serve`) may open
/// the same directory: SQLite's locking serializes their writes.
#[derive(Clone)]
pub struct Store {
    pub(crate) conn: Arc<Mutex<Connection>>,
    pub(crate) dir: PathBuf,
    pub(crate) clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (creating if needed) the store in `dir`, using the system clock.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        Store::open_with_clock(dir, Arc::new(SystemClock))
    }

    /// Opens the store with a caller-chosen clock (tests drive schedules and
    /// leases with a [`crate::ManualClock`]).
    pub fn open_with_clock(dir: &Path, clock: Arc<dyn Clock>) -> Result<Store, StoreError> {
        std::fs::create_dir_all(dir.join(ARTIFACT_DIR))
            .map_err(|e| StoreError::io(format!("creating {}", dir.display()), e))?;
        restrict_permissions(dir);
        let path = dir.join(DB_FILE);
        let mut conn = Connection::open(&path)?;
        // WAL: readers never block the writer, and a commit is one append.
        // synchronous=FULL: a commit is on disk before the call returns, so an
        // acknowledged write survives power loss as well as kill -9.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        migrate(&mut conn, &path)?;
        Ok(Store { conn: Arc::new(Mutex::new(conn)), dir: dir.to_path_buf(), clock })
    }

    /// The store's directory (the database file and `artifacts/`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The default location: `$QUIVER_STATE_DIR/work`, else the platform's state
    /// directory (`~/.local/state/quiver/work`).
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("QUIVER_STATE_DIR") {
            return Some(PathBuf::from(dir).join("work"));
        }
        dirs::state_dir().or_else(dirs::data_local_dir).map(|d| d.join("quiver").join("work"))
    }

    /// `PRAGMA integrity_check`: "ok" for a sound database.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        let conn = self.lock();
        Ok(conn.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))?)
    }

    pub fn schema_version(&self) -> Result<i64, StoreError> {
        let conn = self.lock();
        Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves SQLite consistent (the open
        // transaction rolls back on drop), so a poisoned lock is still usable.
        self.conn.lock()
    }

    /// Runs `f` in one IMMEDIATE transaction (the write lock is taken up front, so
    /// two processes never deadlock upgrading a read to a write) and commits.
    pub(crate) fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    pub(crate) fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let conn = self.lock();
        f(&conn)
    }
}

fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let known = MIGRATIONS.len() as i64;
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > known {
        return Err(StoreError::TooNew { path: path.display().to_string(), found, known });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have migrated while we waited for the lock.
        let now: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if now > i as i64 {
            continue;
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}

/// The store holds prompts, logs and diffs: readable by the user only.
fn restrict_permissions(dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
