//! `task_gate_run`: run a verification command through the command gate and the
//! sandbox, and attach structured evidence to the active task: command, cwd,
//! exit code, duration, classification (passed / failed / flaky / infra), a
//! summary, and the whole log as an artifact.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;

use quiver_durable::NewGate;
use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::spill::SpillStore;
use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, active_task, blocking};
use crate::process::Launch;

const DEFAULT_TIMEOUT_MS: u64 = 10 * 60 * 1000;
const MAX_TIMEOUT_MS: u64 = 60 * 60 * 1000;
/// A log longer than this keeps its first and last halves.
const MAX_LOG_BYTES: usize = 16 * 1024 * 1024;

pub struct TaskGateRun(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskGateRunInput {
    /// The verification command, a shell line (e.g. "cargo test -p core").
    pub command: String,
    /// Working directory, relative to the workspace (default: the workspace root).
    #[serde(default)]
    pub cwd: Option<String>,
    /// A short name for the gate, e.g. "unit tests" (default: the command).
    #[serde(default)]
    pub name: Option<String>,
    /// Time limit in milliseconds (default 600000, max 3600000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// The task to attach evidence to (default: the task this session runs for).
    #[serde(default)]
    pub task_id: Option<String>,
}

impl Tool for TaskGateRun {
    type Input = TaskGateRunInput;
    const NAME: &'static str = "task_gate_run";
    const DOMAIN: Domain = Domain::Diagnostics;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::RUNS_COMMANDS
        .union(Capabilities::WRITES_FILES)
        .union(Capabilities::PERSISTS)
        .union(Capabilities::GATES_ITSELF);

    // Before one vocabulary the durable task was `task` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("task", "task_id")];
    fn description(&self) -> String {
        "Run a verification command (tests, lint, build) and record its evidence on the durable task: exit code, duration, passed/failed/flaky/infra, summary, log artifact.".into()
    }

    async fn run(&self, input: TaskGateRunInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let command = input.command.trim().to_string();
        if command.is_empty() {
            return Err(ToolError::model("`command` is empty; give the verification command to run"));
        }
        let cwd = match input.cwd.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
            Some(dir) => ctx.workspace.resolve(dir)?,
            None => ctx.workspace.root().to_path_buf(),
        };
        if !cwd.is_dir() {
            return Err(ToolError::model(format!("`cwd` {} is not a directory", cwd.display())));
        }
        let limit = Duration::from_millis(input.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS).clamp(1, MAX_TIMEOUT_MS));
        let task = input.task_id.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).or_else(active_task);
        let store = self.0.get()?;
        if let Some(t) = task.clone() {
            // A wrong task id is the model's error before anything runs.
            blocking(store.clone(), move |s| s.task(&t)).await?;
        }

        let grant = crate::process::authorize(ctx, &CommandRequest::model(command.clone())).await?;
        let launch = Launch::new(ctx, grant)?;
        let run = execute(&command, &cwd, &launch, limit).await?;
        let tree = tree_fingerprint(ctx, &cwd).await;
        // The handle's size, from the bytes in hand (not by reading the artifact back).
        let (log_bytes, log_lines) = (run.log.len(), String::from_utf8_lossy(&run.log).lines().count());

        let gate = NewGate {
            task: task.clone(),
            name: input.name.map(|n| n.trim().to_string()).unwrap_or_default(),
            command: command.clone(),
            cwd: cwd.display().to_string(),
            exit_code: run.exit_code,
            timed_out: run.timed_out,
            duration_ms: run.duration_ms,
            log: run.log,
            tree,
        };
        let record = blocking(store.clone(), move |s| s.record_gate(&gate)).await?;
        let log = log_handle(store, ctx, Self::NAME, record.log_artifact.clone(), log_bytes, log_lines).await?;
        let mut out = ToolOutput::json(json!({
            "gate": record.id,
            "task_id": record.task_id,
            "name": record.name,
            "command": record.command,
            "cwd": record.cwd,
            "exit_code": record.exit_code,
            "timed_out": run.timed_out,
            "duration_ms": record.duration_ms,
            "classification": record.classification,
            "summary": record.summary,
            "log": log,
            "note": if task.is_none() { "no active task: the evidence is kept but attached to no task (pass `task_id`)" } else { "" },
        }));
        out = launch.grant.describe(out);
        if let (Some(hint), true) = (launch.grant.failure_hint(), record.exit_code != Some(0)) {
            out = out.with_meta("sandbox_hint", hint);
        }
        Ok(out)
    }
}

struct GateRun {
    exit_code: Option<i32>,
    timed_out: bool,
    duration_ms: u64,
    log: Vec<u8>,
}

async fn execute(command: &str, cwd: &Path, launch: &Launch, limit: Duration) -> Result<GateRun, ToolError> {
    let shell = crate::util::which("bash").unwrap_or_else(|| "/bin/sh".into());
    let mut cmd = tokio::process::Command::new(shell);
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env("CARGO_TERM_COLOR", "never")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    crate::shell::shell_jobs::spawn::arm_parent_death(&mut cmd);
    let job = launch.prepare(&mut cmd).map_err(|e| ToolError::model(format!("cannot start `{command}`: {e}")))?;
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| ToolError::model(format!("cannot start `{command}`: {e}")))?;
    job.started(child.id());
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<u8>>(256);
    if let Some(out) = child.stdout.take() {
        tokio::spawn(pump(out, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        tokio::spawn(pump(err, tx.clone()));
    }
    drop(tx);
    let mut log = Bounded::default();
    let deadline = tokio::time::Instant::now() + limit;
    let mut timed_out = false;
    let status = loop {
        tokio::select! {
            Some(chunk) = rx.recv() => log.push(&chunk),
            status = child.wait() => break status.ok(),
            _ = tokio::time::sleep_until(deadline), if !timed_out => {
                timed_out = true;
                job.kill();
            }
        }
    };
    job.kill();
    let grace = tokio::time::Instant::now() + Duration::from_millis(500);
    while let Ok(Some(chunk)) = tokio::time::timeout_at(grace, rx.recv()).await {
        log.push(&chunk);
    }
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    if timed_out {
        log.push(format!("\n[quiver: killed after the {} ms time limit]\n", limit.as_millis()).as_bytes());
    }
    Ok(GateRun { exit_code: status.and_then(|s| s.code()), timed_out, duration_ms, log: log.finish() })
}

/// Forwards one pipe's bytes; stdout and stderr share the channel, so the log
/// keeps roughly the order they were written in.
async fn pump<R: tokio::io::AsyncRead + Unpin>(mut pipe: R, tx: tokio::sync::mpsc::Sender<Vec<u8>>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if tx.send(buf[..n].to_vec()).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Keeps the first and last halves of an oversized log.
#[derive(Default)]
pub(crate) struct Bounded {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    dropped: usize,
}

impl Bounded {
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        let half = MAX_LOG_BYTES / 2;
        let room = half.saturating_sub(self.head.len());
        let (to_head, rest) = chunk.split_at(room.min(chunk.len()));
        self.head.extend_from_slice(to_head);
        self.tail.extend(rest);
        while self.tail.len() > half {
            self.tail.pop_front();
            self.dropped += 1;
        }
    }

    pub(crate) fn finish(self) -> Vec<u8> {
        let mut out = self.head;
        if self.dropped > 0 {
            out.extend_from_slice(
                format!("\n[quiver: {} bytes omitted from the middle of the log]\n", self.dropped).as_bytes(),
            );
        }
        out.extend(self.tail);
        out
    }
}

/// A gate's log artifact as the model reads it: id, path, size and a
/// `retrieve_tool_result` handle (adopted in place, sized from the bytes in
/// hand rather than by reading the artifact back); `{}` when there is none.
pub(crate) async fn log_handle(
    store: quiver_durable::Store,
    ctx: &ToolContext,
    tool: &str,
    artifact: Option<String>,
    bytes: usize,
    lines: usize,
) -> Result<serde_json::Value, ToolError> {
    let Some(art) = artifact else { return Ok(json!({})) };
    let artifact = blocking(store, move |s| s.artifact(&art)).await?;
    let spilled = ctx.session.state::<SpillStore>().adopt(tool, artifact.path.clone().into(), bytes, lines);
    Ok(json!({"artifact": artifact.id, "handle": spilled.handle, "path": artifact.path, "bytes": artifact.bytes}))
}

/// HEAD plus a digest of the uncommitted changes (and untracked names), so a
/// rerun on an unchanged tree can be told from a rerun after a fix. None outside
/// a git repository or when git is missing.
pub(crate) async fn tree_fingerprint(ctx: &ToolContext, cwd: &Path) -> Option<String> {
    let grant = crate::process::authorize(ctx, &CommandRequest::tool("git rev-parse HEAD; git diff HEAD; git status"))
        .await
        .ok()?;
    let launch = Launch::new(ctx, grant).ok()?;
    let head = crate::git::repo::run(&launch, cwd, &["rev-parse", "HEAD"]).await.ok()?;
    let diff = crate::git::repo::run(&launch, cwd, &["diff", "HEAD", "--no-ext-diff", "--binary"]).await.ok()?;
    let untracked = crate::git::repo::run(&launch, cwd, &["ls-files", "--others", "--exclude-standard"]).await.ok()?;
    let mut h = Sha256::new();
    h.update(&head);
    h.update(&diff);
    h.update(&untracked);
    Some(format!("{}:{}", String::from_utf8_lossy(&head).trim(), &hex::encode(h.finalize())[..16]))
}
