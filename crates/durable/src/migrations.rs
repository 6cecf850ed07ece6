//! The schema, as an ordered list of migrations. `PRAGMA user_version` records how
//! many have run; each runs in its own transaction, so a crash mid-upgrade leaves
//! the previous version intact. Never edit a shipped migration: append a new one.

pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: tasks and their timelines, artifacts, evidence, automations.
    r#"
    CREATE TABLE tasks (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        prompt        TEXT    NOT NULL,
        cwd           TEXT,
        mode          TEXT,
        model         TEXT,
        state         TEXT    NOT NULL CHECK (state IN ('queued','running','succeeded','failed','cancelled','interrupted')),
        created_at    INTEGER NOT NULL,
        started_at    INTEGER,
        finished_at   INTEGER,
        owner         TEXT,
        lease_until   INTEGER,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        result        TEXT,
        error         TEXT,
        session_id    TEXT,
        transcript    TEXT,
        automation_id INTEGER
    );
    CREATE INDEX tasks_by_state ON tasks(state, id);

    CREATE TABLE task_events (
        task_id INTEGER NOT NULL REFERENCES tasks(id),
        seq     INTEGER NOT NULL,
        at      INTEGER NOT NULL,
        kind    TEXT    NOT NULL,
        data    TEXT    NOT NULL,
        PRIMARY KEY (task_id, seq)
    ) WITHOUT ROWID;

    CREATE TABLE checklist_items (
        task_id INTEGER NOT NULL REFERENCES tasks(id),
        idx     INTEGER NOT NULL,
        text    TEXT    NOT NULL,
        status  TEXT    NOT NULL,
        PRIMARY KEY (task_id, idx)
    ) WITHOUT ROWID;

    CREATE TABLE artifacts (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id    INTEGER REFERENCES tasks(id),
        kind       TEXT    NOT NULL,
        name       TEXT    NOT NULL,
        file       TEXT    NOT NULL,
        bytes      INTEGER NOT NULL,
        sha256     TEXT    NOT NULL,
        summary    TEXT    NOT NULL,
        created_at INTEGER NOT NULL
    );

    CREATE TABLE gates (
        id             INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id        INTEGER REFERENCES tasks(id),
        name           TEXT    NOT NULL,
        command        TEXT    NOT NULL,
        cwd            TEXT    NOT NULL,
        exit_code      INTEGER,
        duration_ms    INTEGER NOT NULL,
        class          TEXT    NOT NULL,
        summary        TEXT    NOT NULL,
        log_artifact   INTEGER REFERENCES artifacts(id),
        tree           TEXT,
        at             INTEGER NOT NULL
    );

    CREATE TABLE pr_attempts (
        id             INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id        INTEGER REFERENCES tasks(id),
        base_commit    TEXT    NOT NULL,
        files          TEXT    NOT NULL,
        additions      INTEGER NOT NULL,
        deletions      INTEGER NOT NULL,
        patch_artifact INTEGER NOT NULL REFERENCES artifacts(id),
        note           TEXT,
        at             INTEGER NOT NULL
    );

    CREATE TABLE audit (
        id      INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id INTEGER REFERENCES tasks(id),
        action  TEXT    NOT NULL,
        detail  TEXT    NOT NULL,
        at      INTEGER NOT NULL
    );

    CREATE TABLE automations (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        name       TEXT    NOT NULL UNIQUE,
        prompt     TEXT    NOT NULL,
        schedule   TEXT    NOT NULL,
        tz         TEXT    NOT NULL,
        cwd        TEXT,
        mode       TEXT,
        model      TEXT,
        state      TEXT    NOT NULL CHECK (state IN ('active','paused')),
        next_due   INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );

    CREATE TABLE automation_runs (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        automation_id INTEGER NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
        due_at        INTEGER NOT NULL,
        outcome       TEXT    NOT NULL CHECK (outcome IN ('enqueued','missed','manual')),
        missed_count  INTEGER NOT NULL DEFAULT 1,
        task_id       INTEGER REFERENCES tasks(id),
        at            INTEGER NOT NULL
    );
    CREATE INDEX automation_runs_by_automation ON automation_runs(automation_id, id);
    "#,
];
