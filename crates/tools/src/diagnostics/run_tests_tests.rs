use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use quiver_engine::Mode;
use quiver_engine::permissions::Approver;
use serde_json::{Value, json};

use super::{Plan, Tally};
use crate::test_support::{Harness, PATIENCE};

/// Says yes (or no) and remembers every question.
#[derive(Default)]
struct Recorder {
    deny: bool,
    asked: Mutex<Vec<String>>,
}

impl Approver for Recorder {
    fn approve<'a>(&'a self, question: &'a str) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>> {
        self.asked.lock().unwrap().push(question.to_string());
        Box::pin(async move { !self.deny })
    }
}

fn with_approver(mode: Mode, deny: bool) -> (Harness, Arc<Recorder>) {
    let mut h = Harness::with_mode(mode);
    let recorder = Arc::new(Recorder { deny, ..Recorder::default() });
    h.ctx.approver = Some(recorder.clone());
    (h, recorder)
}

/// A crate with one passing, one failing and one ignored test; no dependencies,
/// so building it needs no network.
fn tiny_crate(h: &Harness) {
    h.write("Cargo.toml", "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n");
    h.write(
        "src/lib.rs",
        "#[cfg(test)]\nmod tests {\n    #[test]\n    fn passes() {}\n    #[test]\n    fn fails() { assert_eq!(1 + 1, 3, \"math is broken\"); }\n    #[test]\n    #[ignore]\n    fn skipped() {}\n}\n",
    );
}

async fn run(h: &Harness, args: Value) -> Value {
    let result = h.call("run_tests", args).await;
    assert!(!result.is_error, "{}", result.content_text());
    result.content
}

#[tokio::test]
async fn default_cargo_run_reports_counts_and_failing_names() {
    let (h, recorder) = with_approver(Mode::Agent, false);
    tiny_crate(&h);
    let started = std::time::Instant::now();
    let r = run(&h, json!({})).await;
    eprintln!("default run took {:?}: {}", started.elapsed(), r["command"]);
    let nextest = crate::util::which("cargo-nextest").is_some();
    assert_eq!(r["command"], if nextest { "cargo nextest run --no-fail-fast" } else { "cargo test --no-fail-fast" });
    assert_eq!(r["runner"], if nextest { "nextest" } else { "cargo test" });
    assert_eq!(r["outcome"], "failed", "{r}");
    assert_eq!((r["passed"].as_u64(), r["failed"].as_u64(), r["ignored"].as_u64()), (Some(1), Some(1), Some(1)), "{r}");
    let failing = r["failing"].as_array().unwrap();
    assert_eq!(failing.len(), 1, "{r}");
    assert!(failing[0].as_str().unwrap().ends_with("tests::fails"), "{r}");
    assert!(r["tail"].as_str().unwrap().contains("math is broken") || nextest, "{r}");
    assert_ne!(r["exit_code"], 0);
    // The default cargo command runs without asking anyone.
    assert_eq!(recorder.asked.lock().unwrap().len(), 0);

    // An explicit command with a filter, in yolo mode: nobody is asked.
    let yolo = Harness::with_mode(Mode::Yolo);
    tiny_crate(&yolo);
    let r = run(&yolo, json!({"command": "cargo test", "args": ["passes"]})).await;
    assert_eq!(r["outcome"], "passed", "{r}");
    assert_eq!(r["runner"], "cargo test");
    assert_eq!((r["passed"].as_u64(), r["failed"].as_u64()), (Some(1), Some(0)), "{r}");
    assert_eq!(r["failing"], json!([]));
}

#[tokio::test]
async fn build_errors_are_reported_first() {
    let h = Harness::with_mode(Mode::Yolo);
    h.write("Cargo.toml", "[package]\nname = \"broken\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n");
    h.write("src/lib.rs", "pub fn f() -> u32 { \"not a number\" }\n");
    let r = run(&h, json!({"command": "cargo test"})).await;
    assert_eq!(r["outcome"], "build_failed", "{r}");
    let first = r["first_error"].as_str().unwrap();
    assert!(first.starts_with("error[E0308]"), "{first}");
}

#[tokio::test]
async fn custom_commands_ask_once_and_pass_env_assignments() {
    let (h, recorder) = with_approver(Mode::Agent, false);
    // A script of the workspace runs the project's code: not trusted, so it
    // runs inside the sandbox, unasked.
    h.write("report.sh", "echo \"$FOO\"; echo \"2 passed, 1 failed\"; exit 1\n");
    let r = run(&h, json!({"command": "FOO=from-env sh ./report.sh"})).await;
    assert_eq!(r["outcome"], "failed");
    assert_eq!((r["passed"].as_u64(), r["failed"].as_u64()), (Some(2), Some(1)), "{r}");
    assert_eq!(r["exit_code"], 1);
    assert!(r["tail"].as_str().unwrap().starts_with("from-env\n"), "{r}");
    let sandboxed = crate::process::sandbox_available();
    assert_eq!(recorder.asked.lock().unwrap().len(), usize::from(!sandboxed));
    if !sandboxed {
        return;
    }
    let nobody = Harness::new();
    let r = run(&nobody, json!({"command": "sh -c 'touch ran'"})).await;
    assert_eq!(r["exit_code"], 0, "{r}");
    assert!(nobody.path("ran").exists());

    let plan = Harness::with_mode(Mode::Plan);
    let err = plan.err("run_tests", json!({"command": "sh -c 'touch ran'"})).await;
    assert!(err.contains("plan mode"), "{err}");
    assert!(!plan.path("ran").exists());
}

fn alive(pid: i32) -> bool {
    // A zombie has already exited; it only waits for its parent (init) to reap it.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
}

/// Whether `pid` is gone within [`PATIENCE`] (a bound against hangs only).
async fn gone_soon(pid: i32) -> bool {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while alive(pid) {
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// The pid a command wrote to `name`, once the whole line is there.
fn written_pid(h: &Harness, name: &str) -> Option<i32> {
    let text = std::fs::read_to_string(h.path(name)).ok()?;
    text.strip_suffix('\n')?.trim().parse().ok()
}

/// Waits until the command has written its pid to `name` (an event, not a
/// guess at how long a shell takes to start on a loaded machine).
async fn wait_pid(h: &Harness, name: &str) -> i32 {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Some(pid) = written_pid(h, name) {
            return pid;
        }
        assert!(tokio::time::Instant::now() < deadline, "no pid in {name} within {PATIENCE:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let h = Harness::with_mode(Mode::Yolo);
    // The timeout is what is tested, so a short one; but on a loaded machine it
    // can expire before the shell even wrote bg.pid, and such a run shows
    // nothing: it is repeated with a longer timeout until the shell got that far.
    let mut timeout_ms = 500;
    let (result, bg) = loop {
        let command = "sh -c 'sleep 300 & echo $! > bg.pid; sleep 300'";
        let result = h.call("run_tests", json!({"command": command, "timeout_ms": timeout_ms})).await;
        if let Some(bg) = written_pid(&h, "bg.pid") {
            break (result, bg);
        }
        assert!(timeout_ms < 60_000, "the shell never wrote bg.pid");
        timeout_ms *= 4;
    };
    // `sleep 300` ends the command only after 5 minutes: returning before that
    // with `timed_out` shows the timeout ended it.
    assert_eq!(result.metadata["timed_out"], true);
    let r = result.content;
    assert_eq!(r["outcome"], "timed_out");
    assert!(r["hint"].as_str().unwrap().contains("timeout_ms"), "{r}");
    assert!(gone_soon(bg).await, "background child survived the timeout");
}

#[tokio::test]
async fn strays_left_after_exit_are_killed() {
    let h = Harness::with_mode(Mode::Yolo);
    // The stray holds the output pipe for 5 minutes; the ceiling only guards
    // against the tool waiting for it.
    let call = run(&h, json!({"command": "sh -c 'sleep 300 & echo $! > bg.pid; echo 1 passed'"}));
    let r = tokio::time::timeout(PATIENCE, call).await.expect("run_tests waited for the stray");
    assert_eq!(r["outcome"], "passed", "{r}");
    assert_eq!(r["stray_processes_killed"], true, "{r}");
    assert!(gone_soon(written_pid(&h, "bg.pid").unwrap()).await, "stray survived");
}

#[tokio::test]
async fn dropping_the_call_kills_the_group() {
    let h = Harness::with_mode(Mode::Yolo);
    let call = h.call("run_tests", json!({"command": "sh -c 'echo $$ > sh.pid; sleep 300 & echo $! > bg.pid; wait'"}));
    // Drive the call until the command has started both processes, then drop it
    // (what a host does with a cancelled request).
    let (sh, bg) = tokio::select! {
        r = call => panic!("the run ended by itself: {}", r.content_text()),
        pids = async { (wait_pid(&h, "sh.pid").await, wait_pid(&h, "bg.pid").await) } => pids,
    };
    assert!(gone_soon(sh).await, "leader survived the dropped call");
    assert!(gone_soon(bg).await, "child survived the dropped call");
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::with_mode(Mode::Yolo);
    assert!(h.err("run_tests", json!({})).await.contains("no Cargo.toml"));
    h.write("package.json", "{}");
    assert!(h.err("run_tests", json!({})).await.contains("\"npm test\""));
    assert!(h.err("run_tests", json!({"command": "  "})).await.contains("empty"));
    assert!(h.err("run_tests", json!({"command": "pytest 'x"})).await.contains("unbalanced quotes"));
    assert!(h.err("run_tests", json!({"command": "npm test && rm -rf x"})).await.contains("without a shell"));
    assert!(h.err("run_tests", json!({"command": "A=1 B=2"})).await.contains("only sets variables"));
    assert!(h.err("run_tests", json!({"command": "quiver-no-such-runner"})).await.contains("not installed"));
    assert!(h.err("run_tests", json!({"command": "../escape.sh"})).await.contains("outside the workspace"));
    assert!(h.err("run_tests", json!({"command": "true", "timeout_ms": 5})).await.contains("between 100 and"));
    assert!(
        h.err("run_tests", json!({"command": "true", "timeout_ms": 99_999_999u64})).await.contains("between 100 and")
    );
    assert!(h.err("run_tests", json!({"command": "true", "args": "--all"})).await.contains("args"));
    assert!(h.err("run_tests", json!({"command": "true", "args": ["a\u{0}b"]})).await.contains("NUL"));
    let r = run(&h, json!({"command": "true"})).await;
    assert_eq!(r["outcome"], "passed");
    assert!(r["note"].as_str().unwrap().contains("no test summary"), "{r}");
}

fn tally(text: &str) -> Value {
    let mut t = Tally::default();
    for line in text.lines() {
        t.push(line.to_string());
    }
    let plan = Plan { argv: vec!["x".into()], cwd: ".".into(), env: vec![], default: false };
    t.report(&plan, Some(1), false, false, 0, Duration::from_secs(1))
}

fn counts(r: &Value) -> (Option<u64>, Option<u64>, Option<u64>) {
    (r["passed"].as_u64(), r["failed"].as_u64(), r["ignored"].as_u64())
}

#[test]
fn parses_cargo_test_across_binaries() {
    let r = tally(
        "running 3 tests\ntest a::ok_one ... ok\ntest a::bad ... FAILED\ntest a::later ... ignored, slow\n\n\
         test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s\n\
         running 1 test\ntest src/lib.rs - f (line 3) ... FAILED\n\
         test result: FAILED. 4 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n",
    );
    assert_eq!(r["runner"], "cargo test");
    assert_eq!(counts(&r), (Some(5), Some(2), Some(1)));
    assert_eq!(r["failing"], json!(["a::bad", "src/lib.rs - f (line 3)"]));
}

#[test]
fn parses_nextest_without_double_counting_echoed_libtest_output() {
    let r = tally(
        "    Starting 3 tests across 1 binary (1 test skipped)\n        PASS [   0.007s] (1/3) tiny tests::passes\n\
         \x20       FAIL [   0.136s] (2/3) tiny tests::fails\n  stdout ───\n    test tests::fails ... FAILED\n\
         \x20   test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 2 filtered out; finished in 0.13s\n\
         \x20 TRY 1 FAIL [   0.010s] (3/3) tiny tests::flaky\n  TRY 2 PASS [   0.010s] (3/3) tiny tests::flaky\n\
         ────────────\n     Summary [   0.137s] 3 tests run: 2 passed (1 flaky), 1 failed, 1 skipped\n\
         \x20       FAIL [   0.136s] (2/3) tiny tests::fails\nerror: test run failed\n",
    );
    assert_eq!(r["runner"], "nextest");
    assert_eq!(counts(&r), (Some(2), Some(1), Some(1)));
    assert_eq!(r["failing"], json!(["tiny tests::fails"]));
    assert!(r.get("first_error").is_none(), "{r}");
}

#[test]
fn parses_pytest_go_node_and_plain_summaries() {
    let py = tally(
        "tests/test_x.py .F.s\n=========================== short test summary info ============================\n\
         FAILED tests/test_x.py::test_b - assert 1 == 2\nERROR tests/test_y.py::test_setup\n\
         ============ 1 failed, 2 passed, 1 skipped, 1 error, 2 warnings in 0.12s ============\n",
    );
    assert_eq!(py["runner"], "pytest");
    assert_eq!(counts(&py), (Some(2), Some(2), Some(1)));
    assert_eq!(py["failing"], json!(["tests/test_x.py::test_b", "tests/test_y.py::test_setup"]));

    let go = tally(
        "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n    --- FAIL: TestB/sub (0.00s)\n--- FAIL: TestB (0.00s)\nFAIL\tpkg\t0.01s\n",
    );
    assert_eq!(go["runner"], "go test");
    assert_eq!(counts(&go), (Some(1), Some(2), Some(0)));
    assert_eq!(go["failing"], json!(["TestB/sub", "TestB"]));

    let node = tally(
        "# Subtest: bad one\nnot ok 2 - bad one\n  ---\n1..3\n# tests 3\n# pass 1\n# fail 1\n# cancelled 0\n# skipped 1\n# todo 0\n",
    );
    assert_eq!(node["runner"], "node --test");
    assert_eq!(counts(&node), (Some(1), Some(1), Some(1)));
    assert_eq!(node["failing"], json!(["bad one"]));

    let jest = tally("Tests:       1 failed, 3 passed, 4 total\n");
    assert_eq!(counts(&jest), (Some(3), Some(1), Some(0)));
    let plain = tally("total: 7 passed, 0 failed, 2 skipped\n");
    assert_eq!(counts(&plain), (Some(7), Some(0), Some(2)));
    let nothing = tally("all good\n");
    assert_eq!(counts(&nothing), (None, None, None));
}

#[test]
fn tail_and_error_excerpt_are_bounded() {
    let mut text = String::from("   Compiling x v0.1.0\nerror[E0425]: cannot find value `y`\n --> src/lib.rs:1:1\n");
    for i in 0..5000 {
        text.push_str(&format!("noise line {i} {}\n", "z".repeat(50)));
    }
    let r = tally(&text);
    let tail = r["tail"].as_str().unwrap();
    assert!(tail.len() <= super::TAIL_BYTES, "{}", tail.len());
    assert!(tail.ends_with(&format!("noise line 4999 {}", "z".repeat(50))));
    let first = r["first_error"].as_str().unwrap();
    assert!(first.starts_with("error[E0425]") && first.lines().count() == super::ERROR_EXCERPT_LINES, "{first}");
}

/// run_tests once skipped the exec policy. Every command it
/// would start passes the one command gate, deny rules first, in every mode;
/// the default cargo command included.
#[tokio::test]
async fn deny_rules_refuse_run_tests_in_every_mode() {
    for mode in [Mode::Plan, Mode::Agent, Mode::Yolo] {
        let h = Harness::with_manifest(
            mode,
            "[exec_policy]\ndeny_prefixes = [\"echo\", \"cargo test\", \"cargo nextest\"]\n",
        );
        let err = h.err("run_tests", json!({"command": "echo 1 passed"})).await;
        assert!(err.contains("deny rule") || (mode == Mode::Plan && err.contains("plan mode")), "{mode}: {err}");
        h.write("Cargo.toml", "[package]\nname = \"p\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
        let err = h.err("run_tests", json!({})).await;
        assert!(err.contains("deny rule") || (mode == Mode::Plan && err.contains("plan mode")), "{mode}: {err}");
    }
    let yolo = Harness::with_manifest(Mode::Yolo, "[exec_policy]\ndeny_prefixes = [\"echo\"]\n");
    let err = yolo.err("run_tests", json!({"command": "echo 1 passed"})).await;
    assert!(err.contains("matches the deny rule `echo`"), "{err}");
}
