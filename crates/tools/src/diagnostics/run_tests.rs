//! `run_tests`: runs the project's tests and answers with a structured summary
//! (counts, failing test names, first build error, output tail) parsed from the
//! output of cargo test, nextest, pytest, go test, node's runner or jest.
//!
//! The command runs without a shell, in a process group of its own; a timeout, the
//! call being dropped, or stray processes left after the command exits all end
//! the whole group, so nothing a test suite started outlives the call.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use regex::Regex;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::process::{Grant, Launch, SandboxKind};
use crate::util::which;

const DEFAULT_TIMEOUT_MS: u64 = 600_000;
const MIN_TIMEOUT_MS: u64 = 100;
const MAX_TIMEOUT_MS: u64 = 3_600_000;
const TAIL_LINES: usize = 60;
const TAIL_BYTES: usize = 8 * 1024;
const MAX_LINE_BYTES: usize = 2000;
const MAX_FAILING: usize = 100;
const ERROR_EXCERPT_LINES: usize = 30;
/// After the command exits, output still in the pipes gets this long to arrive.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

pub struct RunTests;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunTestsInput {
    /// Test command, e.g. "npm test" or "pytest -x" (default: cargo nextest run, else cargo test).
    #[serde(default)]
    pub command: Option<String>,
    /// Extra arguments appended to the command, e.g. a test name filter.
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// Time limit in milliseconds (default 600000); the run is killed after it.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl Tool for RunTests {
    type Input = RunTestsInput;
    const NAME: &'static str = "run_tests";
    const DOMAIN: Domain = Domain::Diagnostics;
    const RISK: Risk = Risk::Destructive;
    const CAPABILITIES: Capabilities =
        Capabilities::RUNS_COMMANDS.union(Capabilities::WRITES_FILES).union(Capabilities::GATES_ITSELF);

    fn description(&self) -> String {
        "Run the test suite (cargo nextest/cargo test by default, or a given command) and get pass/fail counts and failing test names.".into()
    }

    async fn run(&self, input: RunTestsInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let timeout_ms = input.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if !(MIN_TIMEOUT_MS..=MAX_TIMEOUT_MS).contains(&timeout_ms) {
            return Err(ToolError::model(format!(
                "`timeout_ms` must be between {MIN_TIMEOUT_MS} and {MAX_TIMEOUT_MS}, got {timeout_ms}"
            )));
        }
        let plan = plan(input.command.as_deref(), input.args.unwrap_or_default(), ctx)?;
        let grant = approve(&plan, ctx).await?;
        let program = locate(&plan.argv[0], ctx)?;
        let launch = launch(&plan, ctx, grant)?;
        let mut report = execute(&plan, &program, launch, Duration::from_millis(timeout_ms)).await?;
        if report.get("outcome").and_then(Value::as_str) != Some("passed")
            && let Some(hint) = grant.failure_hint()
        {
            report["sandbox_hint"] = json!(hint);
        }
        let meta = |k: &str| report.get(k).cloned().unwrap_or(Value::Null);
        let (exit_code, timed_out, duration, passed, failed) =
            (meta("exit_code"), meta("timed_out"), meta("duration_ms"), meta("passed"), meta("failed"));
        Ok(ToolOutput::json(report)
            .with_meta("exit_code", exit_code)
            .with_meta("timed_out", timed_out)
            .with_meta("duration_ms", duration)
            .with_meta("passed", passed)
            .with_meta("failed", failed)
            .with_meta("permission", grant.permit.as_str())
            .with_meta("sandbox", grant.sandbox.as_str()))
    }
}

/// What will run: argv, leading `NAME=value` assignments, and whether it is the
/// default cargo command (which runs without asking).
#[derive(Debug)]
struct Plan {
    argv: Vec<String>,
    cwd: PathBuf,
    env: Vec<(String, String)>,
    default: bool,
}

impl Plan {
    fn shown(&self) -> String {
        let env = self.env.iter().map(|(k, v)| format!("{k}={v} "));
        let words: Vec<String> =
            self.argv.iter().map(|a| shlex::try_quote(a).map_or_else(|_| a.clone(), |q| q.into_owned())).collect();
        format!("{}{}", env.collect::<String>(), words.join(" "))
    }
}

fn plan(command: Option<&str>, args: Vec<String>, ctx: &ToolContext) -> Result<Plan, ToolError> {
    if args.iter().any(|a| a.contains('\0')) {
        return Err(ToolError::model("`args` contains a NUL byte"));
    }
    let root = ctx.workspace.root();
    let mut plan = match command.map(str::trim) {
        None => {
            if !root.join("Cargo.toml").is_file() {
                return Err(ToolError::model(no_default_message(root)));
            }
            let argv: &[&str] = if which("cargo-nextest").is_some() {
                &["cargo", "nextest", "run", "--no-fail-fast"]
            } else {
                &["cargo", "test", "--no-fail-fast"]
            };
            Plan {
                argv: argv.iter().map(|s| s.to_string()).collect(),
                cwd: root.to_path_buf(),
                env: vec![],
                default: true,
            }
        }
        Some("") => return Err(ToolError::model("`command` is empty; omit it for the default cargo tests")),
        Some(text) => {
            let words = shlex::split(text)
                .ok_or_else(|| ToolError::model(format!("`command` has unbalanced quotes: {text}")))?;
            let split = words.iter().position(|w| !is_assignment(w)).unwrap_or(words.len());
            let env: Vec<(String, String)> = words[..split]
                .iter()
                .filter_map(|w| w.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
                .collect();
            let argv = words[split..].to_vec();
            if argv.is_empty() {
                return Err(ToolError::model("`command` only sets variables; name the program to run"));
            }
            if let Some(op) =
                argv.iter().find(|w| matches!(w.as_str(), "&&" | "||" | "|" | ";" | "&" | ">" | ">>" | "<"))
            {
                return Err(ToolError::model(format!(
                    "`command` is run without a shell, so `{op}` would reach the program as an argument; \
                     give one test command here, or use exec_shell for pipelines"
                )));
            }
            let default = env.is_empty()
                && matches!(
                    argv.iter().map(String::as_str).collect::<Vec<_>>()[..],
                    ["cargo", "test"] | ["cargo", "nextest", "run"]
                );
            Plan { argv, cwd: root.to_path_buf(), env, default }
        }
    };
    plan.argv.extend(args);
    Ok(plan)
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty()
            && !k.starts_with(|c: char| c.is_ascii_digit())
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn no_default_message(root: &std::path::Path) -> String {
    let hints: Vec<&str> = [
        ("package.json", "\"npm test\""),
        ("pyproject.toml", "\"pytest\""),
        ("setup.py", "\"pytest\""),
        ("go.mod", "\"go test ./...\""),
        ("Makefile", "\"make test\""),
    ]
    .iter()
    .filter(|(marker, _)| root.join(marker).is_file())
    .map(|(_, cmd)| *cmd)
    .collect();
    let hint = if hints.is_empty() {
        "e.g. \"npm test\" or \"pytest\"".to_string()
    } else {
        format!("here: {}", hints.join(" or "))
    };
    format!("no Cargo.toml at the workspace root, so there is no default test command; pass `command` ({hint})")
}

/// Through the command gate, like every process quiver starts: deny rules
/// first, in every mode. The default cargo command is the tool's own choice
/// and runs unasked; any other command was written by the model and is judged
/// as such (trusted rules, else asked for in agent mode).
async fn approve(plan: &Plan, ctx: &ToolContext) -> Result<Grant, ToolError> {
    let request = if plan.default { CommandRequest::tool(plan.shown()) } else { CommandRequest::model(plan.shown()) };
    crate::process::authorize(ctx, &request).await
}

/// The sandbox for the run. The default cargo command is the tool's own, but it
/// builds and runs the repository's code (`build.rs`, the tests), so it runs
/// sandboxed like any unasked command. A sandboxed command cannot create a new
/// entry directly in the workspace root (the root holds the read-only
/// `.git/config` path, so `quiver-sandbox` grants its entries one by one), so a
/// missing `target/` and an empty `Cargo.lock` (cargo fills an empty one in
/// place) are created here first, by quiver, before the rules are built: the
/// first `cargo test` of a fresh clone then works sandboxed. Dependencies not
/// yet downloaded need the network, hence an approved run: the failure says so
/// through the sandbox hint.
fn launch(plan: &Plan, ctx: &ToolContext, grant: Grant) -> Result<Launch, ToolError> {
    if grant.sandbox == SandboxKind::WorkspaceWrite && plan.argv.first().is_some_and(|p| p == "cargo") {
        let root = ctx.workspace.root();
        let (target, lock) = (root.join("target"), root.join("Cargo.lock"));
        // symlink_metadata: an existing entry (even a dangling link) is left alone.
        if std::fs::symlink_metadata(&target).is_err()
            && let Err(e) = std::fs::create_dir(&target)
        {
            tracing::debug!(%e, "could not pre-create target/ for a sandboxed cargo run");
        }
        if std::fs::symlink_metadata(&lock).is_err()
            && let Err(e) = std::fs::OpenOptions::new().write(true).create_new(true).open(&lock)
        {
            tracing::debug!(%e, "could not pre-create Cargo.lock for a sandboxed cargo run");
        }
    }
    Launch::new(ctx, grant)
}

/// PATH lookup for a bare name, the workspace for a relative path.
fn locate(program: &str, ctx: &ToolContext) -> Result<PathBuf, ToolError> {
    if program.starts_with('/') {
        return Ok(PathBuf::from(program));
    }
    if program.contains('/') {
        return ctx.workspace.resolve(program);
    }
    which(program).ok_or_else(|| ToolError::model(format!("`{program}` is not installed (not found on PATH)")))
}

async fn execute(plan: &Plan, program: &std::path::Path, launch: Launch, limit: Duration) -> Result<Value, ToolError> {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(&plan.argv[1..])
        .current_dir(&plan.cwd)
        .envs(plan.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        // Plain text for the parser, whatever the runner thinks of the terminal.
        .env("CARGO_TERM_COLOR", "never")
        .env("NO_COLOR", "1")
        .env("PY_COLORS", "0")
        .env("FORCE_COLOR", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // Scrubbed environment, sandbox, and a containment job: killing the job
    // (on timeout, on drop of this future, after exit) reaches everything the
    // suite started, also what left the process group.
    crate::shell::shell_jobs::spawn::arm_parent_death(&mut cmd);
    let group =
        launch.prepare(&mut cmd).map_err(|e| ToolError::model(format!("cannot start `{}`: {e}", plan.shown())))?;
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| ToolError::model(format!("cannot start `{}`: {e}", plan.shown())))?;
    group.started(child.id());

    // Both streams feed one channel, so lines keep the order they arrived in.
    let (tx, mut rx) = mpsc::channel::<String>(1024);
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(tokio::spawn(read_lines(out, tx.clone())));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(tokio::spawn(read_lines(err, tx.clone())));
    }
    drop(tx);

    let mut tally = Tally::default();
    let deadline = tokio::time::Instant::now() + limit;
    let mut timed_out = false;
    let status = loop {
        tokio::select! {
            Some(line) = rx.recv() => tally.push(line),
            status = child.wait() => break status.ok(),
            _ = tokio::time::sleep_until(deadline), if !timed_out => {
                timed_out = true;
                group.kill();
            }
        }
    };
    // The command is gone; anything still in its group is a stray (a server a test
    // started, say) that would also hold the pipes open. (After a timeout the
    // group was killed already and this reports nothing.)
    let strays = group.kill();
    let drain_until = tokio::time::Instant::now() + DRAIN_GRACE;
    while let Ok(Some(line)) = tokio::time::timeout_at(drain_until, rx.recv()).await {
        tally.push(line);
    }
    for reader in readers {
        reader.abort();
    }
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let exit_code = status.and_then(|s| s.code());
    Ok(tally.report(plan, exit_code, timed_out, strays, duration_ms, limit))
}

async fn read_lines<R: tokio::io::AsyncRead + Unpin>(pipe: R, tx: mpsc::Sender<String>) {
    let mut reader = BufReader::new(pipe);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                buf.truncate(MAX_LINE_BYTES);
                let line = String::from_utf8_lossy(&buf).trim_end_matches(['\n', '\r']).to_string();
                if tx.send(line).await.is_err() {
                    return;
                }
            }
        }
    }
}

static LIBTEST_LINE: LazyLock<Regex> = LazyLock::new(|| re(r"^test (.+?) \.\.\. (ok|FAILED|ignored)"));
static LIBTEST_SUMMARY: LazyLock<Regex> =
    LazyLock::new(|| re(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored"));
static NEXTEST_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\s+(TRY \d+ )?(PASS|FAIL|SIGSEGV|SIGABRT|SIGBUS|SIGILL|SIGKILL|TIMEOUT|ABORT|LEAK-FAIL|SKIP) \[[^\]]*\]\s+(?:\(\s*\d+/\d+\)\s+)?(.+)$",
    )
});
static NEXTEST_SUMMARY: LazyLock<Regex> = LazyLock::new(|| re(r"^\s+Summary \[[^\]]*\]\s+\d+ tests? run: (.*)$"));
static PYTEST_SUMMARY: LazyLock<Regex> =
    LazyLock::new(|| re(r"^=+ (.*\d+ (?:passed|failed|errors?|skipped).*) in [\d.]+s.* =+$"));
static PYTEST_FAILED: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:FAILED|ERROR) (\S+)"));
static GO_LINE: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*--- (PASS|FAIL|SKIP): (\S+)"));
static TAP_NOT_OK: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*not ok \d+ - (.+?)(?: #.*)?$"));
static NODE_COUNT: LazyLock<Regex> = LazyLock::new(|| re(r"^[#ℹ] (pass|fail|cancelled|skipped|todo) (\d+)$"));
static PLAIN_SUMMARY: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:[A-Za-z]+:\s*)?\d+ (?:passed|failed)\b"));
static COUNT: LazyLock<Regex> =
    LazyLock::new(|| re(r"(\d+) (passed|failed|skipped|ignored|timed out|errors?|pending|todo)\b"));

fn re(pattern: &str) -> Regex {
    // Only ever called with the constant patterns above, each exercised by the tests.
    Regex::new(pattern).unwrap_or_else(|e| panic!("built-in pattern {pattern:?} is invalid: {e}"))
}

/// Counts accumulated from whichever runner's lines appear. Summary lines win over
/// per-test lines, which only fill in when no summary was printed (go test).
#[derive(Default)]
struct Tally {
    runner: Option<&'static str>,
    summary: Option<[u64; 3]>,
    per_test: [u64; 3],
    failing: Vec<String>,
    build_failed: bool,
    errors: Vec<String>,
    errors_open: bool,
    tail: VecDeque<String>,
    tail_bytes: usize,
}

impl Tally {
    fn push(&mut self, line: String) {
        self.scan(&line);
        self.tail_bytes += line.len() + 1;
        self.tail.push_back(line);
        while self.tail.len() > TAIL_LINES || (self.tail_bytes > TAIL_BYTES && self.tail.len() > 1) {
            if let Some(old) = self.tail.pop_front() {
                self.tail_bytes -= old.len() + 1;
            }
        }
    }

    fn add_summary(&mut self, runner: &'static str, passed: u64, failed: u64, ignored: u64) {
        self.runner.get_or_insert(runner);
        let s = self.summary.get_or_insert([0; 3]);
        s[0] += passed;
        s[1] += failed;
        s[2] += ignored;
    }

    fn fail(&mut self, name: &str) {
        if self.failing.len() < MAX_FAILING && !self.failing.iter().any(|n| n == name) {
            self.failing.push(name.to_string());
        }
    }

    fn scan(&mut self, line: &str) {
        let num = |c: Option<regex::Match<'_>>| c.and_then(|m| m.as_str().parse::<u64>().ok()).unwrap_or(0);
        self.scan_errors(line);
        if let Some(c) = LIBTEST_SUMMARY.captures(line) {
            self.add_summary("cargo test", num(c.get(1)), num(c.get(2)), num(c.get(3)));
        } else if let Some(c) = LIBTEST_LINE.captures(line) {
            self.runner.get_or_insert("cargo test");
            match &c[2] {
                "ok" => self.per_test[0] += 1,
                "FAILED" => {
                    self.per_test[1] += 1;
                    self.fail(&c[1]);
                }
                _ => self.per_test[2] += 1,
            }
        } else if let Some(c) = NEXTEST_SUMMARY.captures(line) {
            // nextest's own totals replace the per-binary ones it echoes.
            self.runner = Some("nextest");
            self.summary = None;
            let counts = word_counts(&c[1]);
            self.add_summary("nextest", counts.passed, counts.failed, counts.skipped);
        } else if let Some(c) = NEXTEST_LINE.captures(line) {
            self.runner = Some("nextest");
            match &c[2] {
                "PASS" => self.per_test[0] += 1,
                "SKIP" => self.per_test[2] += 1,
                _ if c.get(1).is_some() => {} // a retry that may still pass
                _ => self.fail(&c[3]),
            }
        } else if let Some(c) = PYTEST_SUMMARY.captures(line) {
            let counts = word_counts(&c[1]);
            self.add_summary("pytest", counts.passed, counts.failed, counts.skipped);
        } else if let Some(c) = PYTEST_FAILED.captures(line) {
            self.fail(&c[1]);
        } else if let Some(c) = GO_LINE.captures(line) {
            self.runner.get_or_insert("go test");
            match &c[1] {
                "PASS" => self.per_test[0] += 1,
                "SKIP" => self.per_test[2] += 1,
                _ => {
                    self.per_test[1] += 1;
                    self.fail(&c[2]);
                }
            }
        } else if let Some(c) = TAP_NOT_OK.captures(line) {
            self.fail(&c[1]);
        } else if let Some(c) = NODE_COUNT.captures(line) {
            let n = num(c.get(2));
            match &c[1] {
                "pass" => self.add_summary("node --test", n, 0, 0),
                "fail" | "cancelled" => self.add_summary("node --test", 0, n, 0),
                _ => self.add_summary("node --test", 0, 0, n),
            }
        } else if PLAIN_SUMMARY.is_match(line) {
            let counts = word_counts(line);
            self.add_summary("summary line", counts.passed, counts.failed, counts.skipped);
        }
    }

    /// Keeps the first compiler error block: it is at the head of the output,
    /// where the tail never reaches, and it is what the model must fix first.
    fn scan_errors(&mut self, line: &str) {
        if line.starts_with("error: could not compile") {
            self.build_failed = true;
        }
        let starts_error = line.starts_with("error[") || line.starts_with("error: ");
        let about_tests = ["test failed", "test run failed", "target failed", "targets failed", "could not compile"]
            .iter()
            .any(|s| line.contains(s));
        if self.errors.is_empty() && starts_error && !about_tests {
            self.errors_open = true;
        }
        if self.errors_open {
            if self.errors.len() < ERROR_EXCERPT_LINES {
                self.errors.push(line.to_string());
            } else {
                self.errors_open = false;
            }
        }
    }

    fn report(
        self,
        plan: &Plan,
        exit: Option<i32>,
        timed_out: bool,
        strays: bool,
        duration_ms: u64,
        limit: Duration,
    ) -> Value {
        let counts = self.summary.or((self.per_test != [0; 3]).then_some(self.per_test));
        let failed_count = counts.map_or(0, |c| c[1]);
        let outcome = if timed_out {
            "timed_out"
        } else if self.build_failed {
            "build_failed"
        } else if exit == Some(0) && failed_count == 0 {
            "passed"
        } else {
            "failed"
        };
        let mut report = json!({
            "command": plan.shown(),
            "outcome": outcome,
            "runner": self.runner,
            "exit_code": exit,
            "timed_out": timed_out,
            "duration_ms": duration_ms,
            "passed": counts.map(|c| c[0]),
            "failed": counts.map(|c| c[1]),
            "ignored": counts.map(|c| c[2]),
            "failing": self.failing,
        });
        if counts.is_none() {
            report["note"] = json!("no test summary recognized in the output; see `tail`");
        }
        if !self.errors.is_empty() {
            report["first_error"] = json!(self.errors.join("\n"));
        }
        if timed_out {
            report["hint"] = json!(format!(
                "killed with its process group after {} ms; pass a larger `timeout_ms` or narrow the run with `args`",
                limit.as_millis()
            ));
        }
        if strays {
            report["stray_processes_killed"] = json!(true);
        }
        report["tail"] = json!(self.tail.into_iter().collect::<Vec<_>>().join("\n"));
        report
    }
}

#[derive(Default)]
struct Counts {
    passed: u64,
    failed: u64,
    skipped: u64,
}

/// "1 passed, 2 failed, 3 skipped, 1 error" and the like.
fn word_counts(text: &str) -> Counts {
    let mut counts = Counts::default();
    for c in COUNT.captures_iter(text) {
        let n: u64 = c[1].parse().unwrap_or(0);
        match &c[2] {
            "passed" => counts.passed += n,
            "skipped" | "ignored" | "pending" | "todo" => counts.skipped += n,
            _ => counts.failed += n,
        }
    }
    counts
}

#[cfg(test)]
#[path = "run_tests_tests.rs"]
mod tests;
