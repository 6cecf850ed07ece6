//! Unit tests of the output window, and helpers the shell tool tests share for
//! looking at real processes in /proc.

use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_engine::permissions::Approver;

use super::window::{SHOW_BYTES, SHOW_LINES, Window};
use crate::test_support::{Harness, PATIENCE};

/// Live (non-zombie) processes whose process group is `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Some((state, pgrp)) = stat(pid) else { continue };
        if pgrp == pgid && state != 'Z' && state != 'X' {
            found.push(pid);
        }
    }
    found
}

/// Whether `pid` is a live (non-zombie) process.
pub fn alive(pid: i32) -> bool {
    stat(pid).is_some_and(|(state, _)| state != 'Z' && state != 'X')
}

/// (state, pgrp) from /proc/PID/stat; the command name may hold spaces, so parse after ')'.
fn stat(pid: i32) -> Option<(char, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let pgrp = fields.nth(1)?.parse().ok()?;
    Some((state, pgrp))
}

/// Polls until `cond` holds or `within` passes; returns whether it held.
pub async fn eventually(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if cond() {
            return true;
        }
        if start.elapsed() > within {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls `exec_shell_wait` on task `id` until its output holds `needle`, and
/// returns all the output read. Waiting on the output itself, with
/// [`PATIENCE`] as the bound against a hang, keeps a loaded machine (where a
/// shell may take seconds to print) from failing the test.
pub async fn output_until(h: &Harness, id: &serde_json::Value, needle: &str) -> String {
    let deadline = Instant::now() + PATIENCE;
    let mut seen = String::new();
    while !seen.contains(needle) {
        assert!(Instant::now() < deadline, "no {needle:?} in the output of {id} within {PATIENCE:?}: {seen}");
        let args = serde_json::json!({"job_id": id, "timeout_ms": 1000});
        seen.push_str(&h.call("exec_shell_wait", args).await.content_text());
    }
    seen
}

/// An approver with a fixed answer that remembers what it was asked.
pub struct FixedApprover {
    pub answer: bool,
    pub asked: std::sync::Mutex<Vec<String>>,
}

impl FixedApprover {
    pub fn new(answer: bool) -> Arc<Self> {
        Arc::new(FixedApprover { answer, asked: std::sync::Mutex::new(Vec::new()) })
    }
}

impl Approver for FixedApprover {
    fn approve<'a>(
        &'a self,
        question: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send + 'a>> {
        self.asked.lock().unwrap().push(question.to_string());
        Box::pin(async move { self.answer })
    }
}

#[test]
fn small_output_is_shown_whole() {
    let mut w = Window::default();
    w.push(b"one\ntwo\n");
    w.push(b"three");
    assert_eq!(w.render(false, "LOG"), ("one\ntwo\nthree".to_string(), false));
    let mut t = Window::default();
    t.push(b"a\r\nb\r\n");
    assert_eq!(t.render(true, "LOG").0, "a\nb\n");
}

#[test]
fn long_output_keeps_head_and_tail_around_a_marker() {
    let mut w = Window::default();
    let text: String = (1..=100_000).map(|n| format!("{n}\n")).collect();
    for chunk in text.as_bytes().chunks(4000) {
        w.push(chunk);
    }
    let (shown, truncated) = w.render(false, "/tmp/x.log");
    assert!(truncated);
    assert!(shown.starts_with("1\n2\n3\n"), "{}", &shown[..40]);
    assert!(shown.ends_with("99999\n100000\n"));
    assert!(shown.contains(&format!("{} lines", 100_000 - 2 * SHOW_LINES)), "{shown}");
    assert!(shown.contains("/tmp/x.log"));
    assert!(shown.len() < 2 * SHOW_BYTES + 200);
    // Exactly SHOW_LINES lines at each end.
    assert_eq!(shown.lines().take_while(|l| !l.starts_with('…')).count(), SHOW_LINES);
}

#[test]
fn huge_lines_are_cut_by_bytes() {
    let mut w = Window::default();
    w.push("é".repeat(100_000).as_bytes());
    let (shown, truncated) = w.render(false, "L");
    assert!(truncated);
    assert!(shown.len() < 2 * SHOW_BYTES + 200, "{}", shown.len());
    assert!(shown.starts_with('é') && shown.ends_with('é'));
}
