use serde_json::json;

use crate::shell::shell_jobs::tests::{alive, eventually, group_members, output_until};
use crate::test_support::{Harness, PATIENCE};

/// Starts `sleep 300 & echo $!; sleep 300` in the background; returns (task id, leader pid, child pid).
async fn start_sleeper(h: &Harness) -> (String, i32, i32) {
    let r = h.call("exec_shell", json!({"command": "sleep 300 & echo $!; sleep 300", "background": true})).await;
    assert!(!r.is_error, "{}", r.content_text());
    let id = r.metadata["job_id"].as_str().unwrap().to_string();
    let pid = r.metadata["pid"].as_i64().unwrap() as i32;
    let out = output_until(h, &json!(id), "\n").await;
    let mut child: i32 = out.lines().next().unwrap().trim().parse().unwrap();
    if crate::process::mechanism() == quiver_sandbox::SandboxMechanism::Namespaces {
        // `$!` is the namespace's pid; find the host's among the leader's descendants.
        child = host_descendant_named(pid, "sleep").expect("the background sleep");
    }
    (id, pid, child)
}

/// A descendant of `root` whose command is `name`, by walking `/proc`.
fn host_descendant_named(root: i32, name: &str) -> Option<i32> {
    let table: Vec<(i32, i32, String)> = std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (head, rest) = stat.rsplit_once(')')?;
            let comm = head.split_once('(')?.1.to_string();
            let ppid = rest.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid, comm))
        })
        .collect();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (pid, ppid, comm) in &table {
            if *ppid == p {
                if comm == name {
                    return Some(*pid);
                }
                frontier.push(*pid);
            }
        }
    }
    None
}

#[tokio::test]
async fn cancel_leaves_no_process_of_the_job() {
    let h = Harness::new();
    let (id, pid, child) = start_sleeper(&h).await;
    assert!(alive(pid) && alive(child));
    assert!(group_members(pid).len() >= 2, "the shell and its sleeps share the group");
    let r = h.call("exec_shell_cancel", json!({"job_id": id})).await;
    assert!(!r.is_error, "{}", r.content_text());
    assert_eq!(r.metadata["cancelled"], json!([id]));
    assert_eq!(r.metadata["status"], "exited");
    assert!(eventually(PATIENCE, || group_members(pid).is_empty()).await, "{:?}", group_members(pid));
    assert!(!alive(child));
    let wait = h.call("exec_shell_wait", json!({"job_id": id})).await;
    assert!(wait.content_text().contains("was stopped (cancelled)"), "{}", wait.content_text());
    // Cancelling again is harmless.
    let again = h.ok("exec_shell_cancel", json!({"job_id": id})).await;
    assert!(again.contains("already exited"), "{again}");
}

#[tokio::test]
async fn cancel_all_stops_every_job() {
    let h = Harness::new();
    let (_, a, _) = start_sleeper(&h).await;
    let (_, b, _) = start_sleeper(&h).await;
    let r = h.call("exec_shell_cancel", json!({"all": true})).await;
    assert_eq!(r.metadata["cancelled"].as_array().unwrap().len(), 2, "{}", r.content_text());
    assert!(eventually(PATIENCE, || group_members(a).is_empty() && group_members(b).is_empty()).await);
    let none = h.ok("exec_shell_cancel", json!({"all": true})).await;
    assert!(none.contains("No background job is running"), "{none}");
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::new();
    assert!(h.err("exec_shell_cancel", json!({})).await.contains("`all: true`"));
    assert!(h.err("exec_shell_cancel", json!({"all": false})).await.contains("job_id"));
    assert!(h.err("exec_shell_cancel", json!({"job_id": "task-1", "all": true})).await.contains("not both"));
    assert!(h.err("exec_shell_cancel", json!({"job_id": "task-1"})).await.contains("unknown job_id"));
    assert!(h.err("exec_shell_cancel", json!({"all": "yes"})).await.contains("`all`"));
}
