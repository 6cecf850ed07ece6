//! kill -9 at an arbitrary point loses nothing the store acknowledged.
//!
//! The test re-runs its own binary as a writer child (selected by an environment
//! variable) that claims a task and appends events as fast as it can, printing
//! each sequence number only after the store returned Ok. The parent kills it
//! with SIGKILL mid-stream, reopens the store, and checks every acknowledged
//! event is there, the database passes `PRAGMA integrity_check`, and the task the
//! dead worker held becomes `interrupted`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use quiver_durable::{NewTask, Store, TaskFilter, TaskState};

const CHILD_ENV: &str = "QUIVER_DURABLE_CRASH_CHILD";

#[test]
fn writer_child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else { return };
    let store = Store::open(std::path::Path::new(&dir)).unwrap();
    let task = store.claim_next("crash-child", 300).unwrap().unwrap();
    println!("claimed {}", task.id);
    for i in 0.. {
        let data = serde_json::json!({"i": i, "pad": "x".repeat(200)});
        let seq = store.append_task_event(&task.id, "tool_call", &data).unwrap();
        if i % 7 == 0 {
            store.put_artifact(Some(&task.id), "log", "chunk", format!("artifact {i}").as_bytes()).unwrap();
        }
        println!("ack {seq} {i}");
    }
}

#[test]
fn kill_9_mid_write_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let task = store.create_task(&NewTask { prompt: "write forever".into(), ..Default::default() }).unwrap();
    drop(store);

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash::writer_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut acked: Vec<(i64, i64)> = Vec::new();
    while let Some(Ok(line)) = lines.next() {
        let mut parts = line.split_whitespace();
        if parts.next() != Some("ack") {
            continue;
        }
        let seq: i64 = parts.next().unwrap().parse().unwrap();
        let i: i64 = parts.next().unwrap().parse().unwrap();
        acked.push((seq, i));
        if acked.len() >= 150 {
            break;
        }
    }
    // SIGKILL: no destructors, no flush, no chance to finish the transaction in flight.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(acked.len() >= 150, "the child acknowledged only {} events", acked.len());

    std::thread::sleep(std::time::Duration::from_millis(400)); // the 300 ms lease lapses
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let view = store.read_task(&task.id).unwrap();
    for (seq, i) in &acked {
        let event =
            view.timeline.iter().find(|e| e.seq == *seq).unwrap_or_else(|| panic!("acknowledged event {seq} lost"));
        assert_eq!(event.data["i"], *i);
    }
    // Every artifact the timeline names has its file, with the bytes recorded.
    for e in view.timeline.iter().filter(|e| e.kind == "artifact") {
        let id = e.data["artifact"].as_str().unwrap();
        store.artifact_bytes(id).unwrap();
    }
    assert_eq!(store.recover_interrupted().unwrap(), vec![task.id.clone()]);
    let after = store.list_tasks(&TaskFilter::default()).unwrap();
    assert_eq!(after[0].state, TaskState::Interrupted);
}
