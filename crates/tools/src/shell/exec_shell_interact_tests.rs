use quiver_engine::Mode;
use serde_json::json;

use crate::shell::shell_jobs::tests::output_until;
use crate::test_support::Harness;

/// Sends `input`, then keeps polling until the output holds `needle` (a loaded machine
/// may answer late and in pieces); returns everything read.
async fn answer(h: &Harness, id: &str, input: &str, needle: &str) -> String {
    let seen =
        h.call("exec_shell_interact", json!({"job_id": id, "input": input, "timeout_ms": 3000})).await.content_text();
    if seen.contains(needle) {
        return seen;
    }
    seen + &output_until(h, &json!(id), needle).await
}

async fn start(h: &Harness, args: serde_json::Value) -> String {
    let r = h.call("exec_shell", args).await;
    assert!(!r.is_error, "{}", r.content_text());
    r.metadata["job_id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn input_comes_back_through_a_pipe() {
    let h = Harness::new();
    let id = start(&h, json!({"command": "cat", "background": true})).await;
    let r = h.call("exec_shell_interact", json!({"job_id": id, "input": "hello\n"})).await;
    assert!(!r.is_error, "{}", r.content_text());
    assert!(r.content_text().starts_with("hello\n"), "{}", r.content_text());
    assert_eq!(r.metadata["status"], "running");
    // The hidden alias answers byte for byte the same, with no notice.
    let canonical = h.call("exec_shell_interact", json!({"job_id": id, "input": "again\n"})).await;
    let alias = h.call("exec_interact", json!({"job_id": id, "input": "again\n"})).await;
    assert_eq!(serde_json::to_string(&alias).unwrap(), serde_json::to_string(&canonical).unwrap());
    assert!(alias.metadata.get("_deprecation").is_none());
    // Closing stdin ends `cat`.
    let r = h.call("exec_shell_interact", json!({"job_id": id, "input": "", "close_stdin": true})).await;
    assert_eq!(r.metadata["status"], "exited", "{}", r.content_text());
    let err = h.err("exec_shell_interact", json!({"job_id": id, "input": "late\n"})).await;
    assert!(err.contains("already exited"), "{err}");
}

#[tokio::test]
async fn a_read_loop_answers_each_line() {
    let h = Harness::with_mode(Mode::Yolo);
    let id = start(&h, json!({"command": "while read -r line; do echo \"got:$line\"; done", "background": true})).await;
    for word in ["alpha", "beta"] {
        let seen = answer(&h, &id, &format!("{word}\n"), &format!("got:{word}")).await;
        assert_eq!(seen.lines().next().unwrap(), format!("got:{word}"));
    }
}

#[tokio::test]
async fn a_terminal_runs_interactive_programs() {
    let h = Harness::with_mode(Mode::Yolo);
    let id = start(
        &h,
        json!({"command": "if [ -t 0 ]; then echo tty-yes; fi; exec bash --norc -i", "background": true, "tty": true}),
    )
    .await;
    output_until(&h, &json!(id), "tty-yes").await;
    let seen = answer(&h, &id, "echo $((6 * 7))\n", "\n42").await;
    assert!(seen.contains("\n42"), "{seen}");
    // Ctrl-C reaches the foreground program through the terminal.
    h.call("exec_shell_interact", json!({"job_id": id, "input": "sleep 100\n", "timeout_ms": 300})).await;
    h.call("exec_shell_interact", json!({"job_id": id, "input": "\u{3}", "timeout_ms": 500})).await;
    let seen = answer(&h, &id, "echo after-$((1 + 1))\n", "after-2").await;
    assert!(seen.contains("after-2"), "the shell answers again after Ctrl-C: {seen}");
    answer(&h, &id, "exit 5\n", "exited").await;
    let r = h.call("exec_shell_wait", json!({"job_id": id})).await;
    assert_eq!(r.metadata["exit_code"], 5, "{}", r.content_text());
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::new();
    let id = start(&h, json!({"command": "cat", "background": true})).await;
    assert!(h.err("exec_shell_interact", json!({"job_id": id})).await.contains("input"));
    assert!(h.err("exec_shell_interact", json!({"job_id": id, "input": ""})).await.contains("empty"));
    assert!(h.err("exec_shell_interact", json!({"job_id": "task-7", "input": "x"})).await.contains("unknown job_id"));
    assert!(h.err("exec_shell_interact", json!({"job_id": id, "input": 3})).await.contains("`input`"));
}
