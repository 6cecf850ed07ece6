//! The task pool behind `quiver tasks run`: claims queued durable tasks and runs
//! each as a `quiver exec --json` child process, so a task is exactly an exec
//! session (same loop, transcript, approvals and sandbox) that outlives the
//! request that queued it.
//!
//! Why a child process per task: a crashing or wedged run takes down only its
//! task; cancel is a SIGINT the run already handles (exit 130, transcript kept);
//! and the pool's own death kills its children (parent-death signal), whose
//! leases then lapse and the next pool marks them `interrupted`.
//!
//! Each loop iteration: renew leases, forward cancel requests, tick automations,
//! claim while below the worker limit. Events from a child's stdout become its
//! task's timeline (turns, tool calls, usage, compaction), and the session id
//! links the task to its transcript.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use quiver_durable::{Store, TaskState};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

const TICK: Duration = Duration::from_millis(250);
/// A due automation seen this late still runs; later is reported as missed.
const AUTOMATION_GRACE_MS: i64 = 120_000;

#[derive(Debug, Clone)]
pub struct PoolOptions {
    pub workers: usize,
    /// A lease outlives a few missed heartbeats, not a dead pool for long.
    pub lease_ms: i64,
    /// Return when nothing is queued or running (scripts, tests, cron).
    pub once: bool,
    /// Extra flags passed to every `quiver exec` (`--provider`, `--base-url`, `--max-turns`).
    pub exec_args: Vec<String>,
    pub owner: String,
}

/// How a run ended, from the pool's side.
enum Exit {
    Code(i32),
    Signal,
}

struct Running {
    task: String,
    pid: Option<u32>,
    cancel_sent: bool,
}

enum Note {
    Event { task: String, event: Value },
    Done { task: String, exit: Exit, answer: Option<String>, stderr_tail: String },
}

/// Runs the pool until `stop` completes (Ctrl-C for `quiver tasks run`, the
/// server's shutdown inside `quiver mcp serve`) or, with `once`, until idle.
/// After `stop`, running tasks are interrupted (SIGINT: their transcripts are
/// kept) and waited for; queued tasks stay queued. Returns the number of tasks
/// it finished.
pub async fn run(
    store: Store,
    options: PoolOptions,
    stop: impl std::future::Future<Output = ()>,
) -> anyhow::Result<usize> {
    let recovered = store.recover_interrupted()?;
    if !recovered.is_empty() {
        eprintln!(
            "quiver: marked {} task(s) interrupted (their worker stopped): {}",
            recovered.len(),
            recovered.join(", ")
        );
    }
    let (tx, mut rx) = mpsc::channel::<Note>(1024);
    let mut running: HashMap<String, Running> = HashMap::new();
    let mut finished = 0usize;
    let mut stopping = false;
    let mut last_renew = tokio::time::Instant::now();
    tokio::pin!(stop);
    loop {
        if !stopping {
            match store.tick_automations(AUTOMATION_GRACE_MS) {
                Ok(report) => {
                    for (auto, task, due) in &report.enqueued {
                        eprintln!("quiver: {auto} due {due} → {task}");
                    }
                    for (auto, count, first, last) in &report.missed {
                        eprintln!(
                            "quiver: {auto} missed {count} due time(s) between {first} and {last} (quiver was not running); not run late"
                        );
                    }
                }
                Err(e) => eprintln!("quiver: automations: {e}"),
            }
            while running.len() < options.workers.max(1) {
                let Some(task) = store.claim_next(&options.owner, options.lease_ms)? else { break };
                let pid = spawn_run(&store, &task, &options, tx.clone())?;
                running.insert(task.id.clone(), Running { task: task.id.clone(), pid, cancel_sent: false });
            }
        }
        if options.once && running.is_empty() {
            return Ok(finished);
        }
        if stopping && running.is_empty() {
            return Ok(finished);
        }
        if last_renew.elapsed() > Duration::from_millis((options.lease_ms / 3) as u64) {
            store.renew_lease(&options.owner, options.lease_ms)?;
            last_renew = tokio::time::Instant::now();
        }
        for run in running.values_mut() {
            if !run.cancel_sent && store.task(&run.task).map(|t| t.cancel_requested).unwrap_or(false) {
                interrupt(run.pid);
                run.cancel_sent = true;
            }
        }
        tokio::select! {
            note = rx.recv() => match note {
                Some(Note::Event { task, event }) => record_event(&store, &task, &event),
                Some(Note::Done { task, exit, answer, stderr_tail }) => {
                    running.remove(&task);
                    finished += 1;
                    finish(&store, &options.owner, &task, exit, answer, &stderr_tail, stopping);
                }
                None => {}
            },
            () = &mut stop, if !stopping => {
                if !running.is_empty() {
                    eprintln!("quiver: stopping: interrupting {} running task(s); queued tasks stay queued", running.len());
                }
                stopping = true;
                for run in running.values() {
                    interrupt(run.pid);
                }
            }
            _ = tokio::time::sleep(TICK) => {}
        }
    }
}

fn interrupt(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGINT);
    }
}

fn spawn_run(
    store: &Store,
    task: &quiver_durable::Task,
    options: &PoolOptions,
    tx: mpsc::Sender<Note>,
) -> anyhow::Result<Option<u32>> {
    let exe = std::env::current_exe()?;
    let answer_file = store.dir().join(format!("{}.answer.txt", task.id));
    let mut cmd = tokio::process::Command::new(exe);
    cmd.arg("exec").arg("--json").arg("--output-last-message").arg(&answer_file);
    if let Some(cwd) = &task.cwd {
        cmd.arg("--workspace").arg(cwd);
    }
    if let Some(mode) = &task.mode {
        cmd.arg("--mode").arg(mode);
    }
    if let Some(model) = &task.model {
        cmd.arg("--model").arg(model);
    }
    cmd.args(&options.exec_args)
        .arg("--")
        .arg(&task.prompt)
        // The keys left quiver's environment at start (`own_secrets`): the
        // worker is quiver too, needs them, and withholds them again itself.
        .envs(quiver_sandbox::withheld_env())
        .env(quiver_tools::work::ACTIVE_TASK_ENV, &task.id)
        .env(quiver_tools::work::WORK_DIR_ENV, store.dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    arm_parent_death(&mut cmd);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let _ = store.finish_task(
                &task.id,
                &options.owner,
                TaskState::Failed,
                None,
                Some(&format!("cannot start quiver exec: {e}")),
            );
            return Ok(None);
        }
    };
    let pid = child.id();
    let id = task.id.clone();
    tokio::spawn(async move {
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let events = async {
            if let Some(out) = stdout {
                let mut lines = BufReader::new(out).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Ok(event) = serde_json::from_str::<Value>(&line) {
                        let _ = tx.send(Note::Event { task: id.clone(), event }).await;
                    }
                }
            }
        };
        let errors = async {
            let mut tail = std::collections::VecDeque::new();
            if let Some(err) = stderr {
                let mut lines = BufReader::new(err).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tail.push_back(line);
                    if tail.len() > 20 {
                        tail.pop_front();
                    }
                }
            }
            tail.into_iter().collect::<Vec<_>>().join("\n")
        };
        let ((), stderr_tail) = tokio::join!(events, errors);
        let exit = match child.wait().await {
            Ok(status) => status.code().map(Exit::Code).unwrap_or(Exit::Signal),
            Err(_) => Exit::Signal,
        };
        let answer = tokio::fs::read_to_string(&answer_file).await.ok();
        let _ = tokio::fs::remove_file(&answer_file).await;
        let _ = tx.send(Note::Done { task: id, exit, answer, stderr_tail }).await;
    });
    Ok(pid)
}

/// The child dies with the pool: its task's lease then lapses and the next pool
/// reports it interrupted instead of a run nobody watches.
fn arm_parent_death(cmd: &mut tokio::process::Command) {
    quiver_tools::shell::shell_jobs::spawn::arm_parent_death(cmd);
}

/// Keeps the timeline readable: the run's milestones, not every token.
fn record_event(store: &Store, task: &str, event: &Value) {
    let kind = event["type"].as_str().unwrap_or_default();
    let keep = match kind {
        "session_started" => {
            if let Some(session) = event["session_id"].as_str() {
                let transcript = transcript_path(session);
                let _ = store.set_task_session(task, session, &transcript.display().to_string());
            }
            true
        }
        "turn_started" | "tool_call_ended" | "usage" | "compaction" | "session_ended" | "retrying" => true,
        _ => false,
    };
    if keep {
        let mut data = event.clone();
        if let Value::Object(map) = &mut data {
            map.remove("type");
        }
        if let Err(e) = store.append_task_event(task, kind, &data) {
            eprintln!("quiver: recording {kind} on {task}: {e}");
        }
    }
}

fn transcript_path(session: &str) -> PathBuf {
    quiver_agent::exec::paths::session_path(session).unwrap_or_else(|_| PathBuf::from(format!("{session}.jsonl")))
}

fn finish(
    store: &Store,
    owner: &str,
    task: &str,
    exit: Exit,
    answer: Option<String>,
    stderr_tail: &str,
    stopping: bool,
) {
    let cancel_requested = store.task(task).map(|t| t.cancel_requested).unwrap_or(false);
    let answer = answer.filter(|a| !a.trim().is_empty());
    let (state, error) = match exit {
        Exit::Code(0) => (TaskState::Succeeded, None),
        Exit::Code(130) if cancel_requested => (TaskState::Cancelled, Some("cancelled by request".to_string())),
        Exit::Code(130) if stopping => (TaskState::Interrupted, Some("the task pool was stopped".to_string())),
        Exit::Code(code) => (TaskState::Failed, Some(format!("quiver exec exited {code}: {}", last_line(stderr_tail)))),
        Exit::Signal => {
            (TaskState::Failed, Some(format!("quiver exec was killed by a signal: {}", last_line(stderr_tail))))
        }
    };
    match store.finish_task(task, owner, state, answer.as_deref(), error.as_deref()) {
        Ok(t) => eprintln!("quiver: {} {}", t.id, t.state.as_str()),
        Err(e) => eprintln!("quiver: finishing {task}: {e}"),
    }
}

fn last_line(text: &str) -> String {
    text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("(no error output)").to_string()
}
