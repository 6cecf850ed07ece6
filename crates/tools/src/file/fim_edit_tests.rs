// Tests may panic on setup failures: that is how a test reports them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use quiver_engine::{FillInMiddle, FimError, FimFuture, Mode};
use serde_json::json;

use crate::test_support::Harness;

/// A FIM model that answers `reply` and remembers what it was asked.
struct FakeFim {
    reply: Result<String, String>,
    asked: Mutex<Vec<(String, String, u32)>>,
}

impl FakeFim {
    fn new(reply: Result<&str, &str>) -> Arc<Self> {
        Arc::new(FakeFim { reply: reply.map(str::to_string).map_err(str::to_string), asked: Mutex::new(Vec::new()) })
    }

    fn asked(&self) -> Vec<(String, String, u32)> {
        self.asked.lock().unwrap().clone()
    }
}

impl FillInMiddle for FakeFim {
    fn provider(&self) -> &str {
        "fake"
    }

    fn fill<'a>(&'a self, prefix: &'a str, suffix: &'a str, max_tokens: u32) -> FimFuture<'a> {
        self.asked.lock().unwrap().push((prefix.to_string(), suffix.to_string(), max_tokens));
        let reply = self.reply.clone().map_err(FimError::new);
        Box::pin(async move { reply })
    }
}

fn harness(mode: Mode, fim: Option<Arc<FakeFim>>) -> Harness {
    let mut h = Harness::with_mode(mode);
    h.ctx.fim = fim.map(|f| f as Arc<dyn FillInMiddle>);
    h
}

const SRC: &str = "def add(a, b):\n    # FILL\n\nprint(add(1, 2))\n";

#[tokio::test]
async fn a_marker_is_replaced_by_the_completion_of_its_surroundings() {
    let fim = FakeFim::new(Ok("    return a + b"));
    let h = harness(Mode::Agent, Some(fim.clone()));
    h.write("add.py", SRC);
    let out = h.ok("fim_edit", json!({"path": "add.py", "marker": "    # FILL"})).await;
    assert_eq!(h.read("add.py"), "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n");
    assert_eq!(fim.asked(), vec![("def add(a, b):\n".to_string(), "\n\nprint(add(1, 2))\n".to_string(), 512)]);
    assert!(out.starts_with("Filled `add.py` at line 2 with 16 bytes from fake\n"), "{out}");
    assert!(out.contains("-    # FILL\n+    return a + b\n"), "{out}");
}

#[tokio::test]
async fn a_line_range_is_replaced_and_keeps_its_line_break() {
    let fim = FakeFim::new(Ok("    s = a + b\n    return s"));
    let h = harness(Mode::Agent, Some(fim.clone()));
    h.write("add.py", "def add(a, b):\n    pass\n    pass\nprint(add(1, 2))\n");
    // In the words before one vocabulary (`start_line..=end_line`), as recorded calls say.
    h.ok("fim_edit", json!({"path": "add.py", "start_line": 2, "end_line": 3, "max_tokens": 64})).await;
    assert_eq!(h.read("add.py"), "def add(a, b):\n    s = a + b\n    return s\nprint(add(1, 2))\n");
    assert_eq!(fim.asked(), vec![("def add(a, b):\n".into(), "print(add(1, 2))\n".into(), 64)]);
}

#[tokio::test]
async fn crlf_files_stay_crlf() {
    let h = harness(Mode::Agent, Some(FakeFim::new(Ok("b\nc"))));
    h.write("w.txt", "a\r\nX\r\nd\r\n");
    h.ok("fim_edit", json!({"path": "w.txt", "offset": 2, "limit": 1})).await;
    assert_eq!(h.read("w.txt"), "a\r\nb\r\nc\r\nd\r\n");
}

#[tokio::test]
async fn without_a_fim_provider_the_error_is_clear_and_the_file_untouched() {
    let h = harness(Mode::Agent, None);
    h.write("add.py", SRC);
    let err = h.err("fim_edit", json!({"path": "add.py", "marker": "    # FILL"})).await;
    assert!(err.contains("fill-in-the-middle endpoint") && err.contains("edit_file"), "{err}");
    assert_eq!(h.read("add.py"), SRC);
}

#[tokio::test]
async fn a_provider_failure_leaves_the_file_untouched() {
    let h = harness(Mode::Agent, Some(FakeFim::new(Err("anthropic: fill-in-the-middle is not supported"))));
    h.write("add.py", SRC);
    let err = h.err("fim_edit", json!({"path": "add.py", "marker": "    # FILL"})).await;
    assert!(err.contains("anthropic: fill-in-the-middle is not supported") && err.contains("unchanged"), "{err}");
    assert_eq!(h.read("add.py"), SRC);
}

#[tokio::test]
async fn hostile_paths_are_refused_before_the_model_is_asked() {
    let fim = FakeFim::new(Ok("pwned"));
    let h = harness(Mode::Agent, Some(fim.clone()));
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("victim.txt");
    std::fs::write(&target, "keep\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), h.path("link")).unwrap();
    for path in ["../victim.txt", target.to_str().unwrap(), "link/victim.txt"] {
        let err = h.err("fim_edit", json!({"path": path, "offset": 1, "limit": 1})).await;
        assert!(!err.is_empty(), "{path}");
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    assert!(fim.asked().is_empty(), "the model was asked for a refused path");
}

#[tokio::test]
async fn bad_regions_are_explained_and_nothing_is_asked() {
    let fim = FakeFim::new(Ok("x"));
    let h = harness(Mode::Agent, Some(fim.clone()));
    h.write("a.txt", "one\nTODO\ntwo\nTODO\n");
    let cases = [
        (json!({"path": "a.txt", "marker": "TODO"}), "appears 2 times"),
        (json!({"path": "a.txt", "marker": "nope"}), "not found"),
        (json!({"path": "a.txt", "offset": 3, "limit": 7}), "lines 1..4"),
        (json!({"path": "a.txt", "offset": 0, "limit": 1}), "`offset`: 0 is less than the minimum of 1"),
        (json!({"path": "a.txt", "offset": 2}), "both"),
        (json!({"path": "a.txt", "start_line": 3, "end_line": 2}), "`end_line` 2 is before `start_line` 3"),
        (
            json!({"path": "a.txt", "start_line": 1, "end_line": 2, "limit": 1}),
            "`end_line` is the former name of `limit`",
        ),
        (json!({"path": "a.txt"}), "say where to fill"),
        (json!({"path": "a.txt", "marker": "one", "offset": 1, "limit": 1}), "not both"),
        (json!({"path": "a.txt", "marker": "one", "max_tokens": 100000}), "max_tokens"),
        (json!({"path": "missing.txt", "marker": "one"}), "does not exist"),
    ];
    for (args, expected) in cases {
        let err = h.err("fim_edit", args.clone()).await;
        assert!(err.contains(expected), "{args}: {err}");
    }
    assert_eq!(h.read("a.txt"), "one\nTODO\ntwo\nTODO\n");
    assert!(fim.asked().is_empty());
}

#[tokio::test]
async fn plan_mode_refuses_it() {
    let fim = FakeFim::new(Ok("x"));
    let h = harness(Mode::Plan, Some(fim.clone()));
    h.write("a.txt", "one\n");
    let err = h.err("fim_edit", json!({"path": "a.txt", "offset": 1, "limit": 1})).await;
    assert!(err.contains("plan mode"), "{err}");
    assert_eq!(h.read("a.txt"), "one\n");
    assert!(fim.asked().is_empty());
}
