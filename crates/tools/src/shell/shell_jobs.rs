//! The session's shell jobs: every command the shell tools start, foreground or
//! background, with its process group, its output and its log file.
//!
//! [`ShellJobs`] lives in session state, so dropping the session (its last `Arc`)
//! drops it, and its `Drop` kills every job's process group: no command outlives
//! the conversation that started it. When a job's shell exits, whatever it left
//! running in its group is stopped too, so a finished job never leaves strays.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::watch;

use quiver_engine::{ToolError, ToolOutput};

pub mod log_dir;
pub mod spawn;
pub mod window;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "shell_jobs_tests.rs"]
pub(crate) mod tests;

use spawn::Input;
use window::Window;

/// Running background jobs allowed per session; a runaway loop of starts stops here.
pub const MAX_RUNNING: usize = 32;
/// After the shell exits, how long to wait for the last output to drain.
const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// A poll returns once output has been quiet this long (rather than at the first byte).
const SETTLE: Duration = Duration::from_millis(150);

/// A named verification result recorded by `task_shell_wait {gate}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gate {
    pub name: String,
    pub job_id: String,
    pub command: String,
    pub cwd: String,
    pub exit_code: i32,
    pub passed: bool,
    pub duration_ms: u64,
    pub log_file: String,
}

#[derive(Default)]
pub struct ShellJobs {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    jobs: BTreeMap<u64, Arc<Job>>,
    gates: Vec<Gate>,
    /// The session's scratch folder for logs; removed with the session.
    dir: Option<tempfile::TempDir>,
}

/// What to start.
pub struct JobSpec<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    /// Shown in messages instead of the absolute cwd.
    pub cwd_shown: String,
    pub background: bool,
    pub tty: bool,
    /// How the gate let it run; the sandbox is built from it at start.
    pub grant: crate::process::Grant,
}

impl ShellJobs {
    /// Starts a job. Foreground jobs get no task id the model can use, but are
    /// tracked like the others until [`ShellJobs::forget`], so they die with the session too.
    pub fn start(&self, spec: &JobSpec<'_>, launch: crate::process::Launch) -> Result<Arc<Job>, ToolError> {
        let mut inner = self.inner.lock();
        let running = inner.jobs.values().filter(|j| j.background && j.exit().is_none()).count();
        if spec.background && running >= MAX_RUNNING {
            return Err(ToolError::model(format!(
                "{running} background jobs are already running; stop some with exec_shell_cancel first"
            )));
        }
        if inner.dir.is_none() {
            let dir = log_dir::create()
                .map_err(|e| ToolError::model(format!("cannot create a folder for shell logs: {e}")))?;
            inner.dir = Some(dir);
        }
        let dir = inner.dir.as_ref().map(|d| d.path().to_path_buf()).unwrap_or_default();
        inner.next_id += 1;
        let number = inner.next_id;
        let id = if spec.background { format!("job-{number}") } else { format!("run-{number}") };
        let log_path = dir.join(format!("{id}.log"));
        let input = match (spec.background, spec.tty) {
            (_, true) => Input::Tty,
            (true, false) => Input::Pipe,
            (false, false) => Input::Null,
        };
        let job = Job::spawn(id, spec, input, log_path, launch)?;
        inner.jobs.insert(number, job.clone());
        Ok(job)
    }

    /// A background job by id; the error names the ids that exist.
    pub fn get(&self, job_id: &str) -> Result<Arc<Job>, ToolError> {
        let inner = self.inner.lock();
        // Jobs were `task-N` before they were `job-N`: a recorded call (a
        // replayed transcript) still names them so.
        let former = job_id.strip_prefix("task-").map(|n| format!("job-{n}"));
        let wanted = former.as_deref().unwrap_or(job_id);
        if let Some(job) = inner.jobs.values().find(|j| j.background && j.id == wanted) {
            return Ok(job.clone());
        }
        let known: Vec<String> = inner.jobs.values().filter(|j| j.background).map(|j| format!("`{}`", j.id)).collect();
        // `task-N` names a durable task (and named a shell job before they were `job-N`).
        let hint =
            if job_id.starts_with("task-") { " (`task-N` is a durable task; shell jobs are `job-N`)" } else { "" };
        Err(ToolError::model(if known.is_empty() {
            format!(
                "unknown job_id `{job_id}`{hint}: this session has no background jobs; start one with exec_shell {{\"background\": true}}"
            )
        } else {
            format!("unknown job_id `{job_id}`{hint}; this session's background jobs are {}", known.join(", "))
        }))
    }

    /// Background jobs whose shell is still running.
    pub fn running(&self) -> Vec<Arc<Job>> {
        self.inner.lock().jobs.values().filter(|j| j.background && j.exit().is_none()).cloned().collect()
    }

    /// Every background job of the session, running or finished, oldest
    /// first (the job center lists them).
    pub fn background(&self) -> Vec<Arc<Job>> {
        self.inner.lock().jobs.values().filter(|j| j.background).cloned().collect()
    }

    /// Drops a finished foreground job from the table.
    pub fn forget(&self, job: &Job) {
        self.inner.lock().jobs.retain(|_, j| j.id != job.id);
    }

    pub fn record_gate(&self, gate: Gate) {
        self.inner.lock().gates.push(gate);
    }

    /// Gates recorded in this session, oldest first.
    pub fn gates(&self) -> Vec<Gate> {
        self.inner.lock().gates.clone()
    }
}

impl Drop for ShellJobs {
    fn drop(&mut self) {
        let inner = self.inner.lock();
        for job in inner.jobs.values() {
            job.kill_group(Signal::SIGKILL);
        }
    }
}

/// Every job of every session in this process, for [`stop_all_jobs`].
static LIVE: Mutex<Vec<std::sync::Weak<Job>>> = Mutex::new(Vec::new());

/// Kills every job of every session at once. For a host that is about to exit
/// without dropping its sessions (a signal handler, `std::process::exit`): the
/// parent-death signal only reaches each job's shell, not what the shell started.
pub fn stop_all_jobs() {
    let live = std::mem::take(&mut *LIVE.lock());
    for job in live.iter().filter_map(std::sync::Weak::upgrade) {
        job.kill_group(Signal::SIGKILL);
    }
}

/// How a job's shell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    /// The exit code, or 128 + the signal number when a signal killed it (as shells report it).
    pub code: i32,
    pub signal: Option<i32>,
    pub duration: Duration,
}

pub struct Job {
    pub id: String,
    pub command: String,
    pub cwd_shown: String,
    pub background: bool,
    pub tty: bool,
    pub log_path: PathBuf,
    pub pid: i32,
    pub grant: crate::process::Grant,
    /// Containment: reaches what left the job's session (`setsid`, double fork).
    running: crate::process::Running,
    started: Instant,
    state: Mutex<JobState>,
    changed: watch::Sender<u64>,
    stdin: Mutex<Option<std::sync::mpsc::Sender<Vec<u8>>>>,
}

#[derive(Default)]
struct JobState {
    exit: Option<Exit>,
    /// The output reached end-of-file: nobody holds the write end any more.
    eof: bool,
    /// The group is known empty; it must never be signalled again, since its
    /// number may be reused by an unrelated process.
    group_done: bool,
    /// The shell exited but left processes in its group, which were stopped.
    strays_stopped: bool,
    /// Set when the job was stopped on purpose ("cancelled", "timed out").
    stopped_because: Option<&'static str>,
    whole: Window,
    unread: Window,
    last_output: Option<Instant>,
    log: Option<std::fs::File>,
    log_error: Option<String>,
}

impl Job {
    fn spawn(
        id: String,
        spec: &JobSpec<'_>,
        input: Input,
        log_path: PathBuf,
        launch: crate::process::Launch,
    ) -> Result<Arc<Job>, ToolError> {
        let log = log_dir::create_log(&log_path)
            .map_err(|e| ToolError::model(format!("cannot create the log file {}: {e}", log_path.display())))?;
        let spawned = spawn::spawn(spec.command, spec.cwd, input, launch)
            .map_err(|e| ToolError::model(format!("cannot start the shell for `{}`: {e}", spec.command)))?;
        let (changed, _) = watch::channel(0u64);
        let job = Arc::new(Job {
            id,
            command: spec.command.to_string(),
            cwd_shown: spec.cwd_shown.clone(),
            background: spec.background,
            tty: spec.tty,
            log_path,
            pid: spawned.pid,
            grant: spec.grant,
            running: spawned.running,
            started: Instant::now(),
            state: Mutex::new(JobState { log: Some(log), ..JobState::default() }),
            changed,
            stdin: Mutex::new(None),
        });
        if let Some(writer) = spawned.stdin {
            *job.stdin.lock() = Some(start_writer(&job.id, writer));
        }
        {
            let mut live = LIVE.lock();
            live.retain(|j| j.strong_count() > 0);
            live.push(Arc::downgrade(&job));
        }
        start_reader(&job, spawned.output);
        start_supervisor(&job, spawned.child);
        Ok(job)
    }

    pub fn exit(&self) -> Option<Exit> {
        self.state.lock().exit
    }

    pub fn stopped_because(&self) -> Option<&'static str> {
        self.state.lock().stopped_because
    }

    pub fn strays_stopped(&self) -> bool {
        self.state.lock().strays_stopped
    }

    pub fn log_shown(&self) -> String {
        self.log_path.display().to_string()
    }

    /// Waits until the shell exited and its output drained, or `timeout` passed.
    pub async fn wait_exit(&self, timeout: Duration) {
        self.wait(timeout, None).await;
    }

    /// Waits until the shell exits, or unread output is there and has paused, or
    /// `timeout` passed.
    pub async fn wait_output(&self, timeout: Duration) {
        self.wait(timeout, Some(self.started)).await;
    }

    /// Like [`Job::wait_output`], but only output that arrived after `since` counts
    /// (an answer to input sent at `since`, not the prompt that was already there).
    pub async fn wait_output_since(&self, since: Instant, timeout: Duration) {
        self.wait(timeout, Some(since)).await;
    }

    /// `output_since`: None waits for the exit only; Some(t) also returns once output
    /// newer than `t` is unread and has been quiet for [`SETTLE`].
    async fn wait(&self, timeout: Duration, output_since: Option<Instant>) {
        let mut rx = self.changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let wake = {
                let st = self.state.lock();
                let now = Instant::now();
                match (st.exit, st.last_output) {
                    (Some(exit), _) if st.eof || self.started + exit.duration + DRAIN_GRACE <= now => return,
                    (Some(exit), _) => self.started + exit.duration + DRAIN_GRACE,
                    (None, Some(last)) if output_since.is_some_and(|t| last >= t) && !st.unread.is_empty() => {
                        if last + SETTLE <= now {
                            return;
                        }
                        last + SETTLE
                    }
                    _ => now + timeout,
                }
            };
            let wake = tokio::time::Instant::from_std(wake).min(deadline);
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return },
                () = tokio::time::sleep_until(wake) => {},
            }
            if tokio::time::Instant::now() >= deadline {
                return;
            }
        }
    }

    /// Output since the last call, windowed; and how many bytes that was.
    pub fn take_unread(&self) -> (String, bool, u64) {
        let unread = std::mem::take(&mut self.state.lock().unread);
        let (text, truncated) = unread.render(self.tty, &self.log_shown());
        (text, truncated, unread.bytes())
    }

    /// All output so far, windowed; and its size in bytes.
    pub fn whole_output(&self) -> (String, bool, u64) {
        let st = self.state.lock();
        let (text, truncated) = st.whole.render(self.tty, &self.log_shown());
        (text, truncated, st.whole.bytes())
    }

    /// Queues `data` for the task's stdin.
    pub fn send_input(&self, data: &[u8]) -> Result<(), ToolError> {
        let stdin = self.stdin.lock();
        let sender = stdin.as_ref().ok_or_else(|| ToolError::model(format!("the stdin of {} is closed", self.id)))?;
        sender.send(data.to_vec()).map_err(|_| {
            ToolError::model(format!("the stdin of {} is closed: the command stopped reading it", self.id))
        })
    }

    /// Ends the task's input: end-of-file on a pipe, Ctrl-D on a terminal.
    pub fn close_stdin(&self) -> Result<(), ToolError> {
        if self.tty {
            return self.send_input(&[0x04]);
        }
        self.stdin.lock().take();
        Ok(())
    }

    /// Sends `signal` to the job's processes unless they are known to be gone.
    fn kill_group(&self, signal: Signal) {
        let st = self.state.lock();
        if !st.group_done {
            signal_session(self.pid, signal);
        }
        drop(st);
        if signal == Signal::SIGKILL {
            self.running.kill();
        }
    }

    /// Stops the whole group: SIGTERM, then SIGKILL after `grace`; returns once the
    /// shell is reaped (bounded, in case something ignores even SIGKILL for a while).
    pub async fn stop(&self, reason: &'static str, grace: Duration) {
        if self.exit().is_some() {
            return;
        }
        self.state.lock().stopped_because.get_or_insert(reason);
        self.kill_group(Signal::SIGTERM);
        self.wait_exit(grace).await;
        if self.exit().is_none() {
            self.kill_group(Signal::SIGKILL);
            self.wait_exit(Duration::from_secs(5)).await;
        }
    }

    fn notify(&self) {
        self.changed.send_modify(|v| *v += 1);
    }

    fn push_output(&self, data: &[u8]) {
        let mut st = self.state.lock();
        if let Some(log) = st.log.as_mut() {
            use std::io::Write;
            if let Err(e) = log.write_all(data) {
                st.log_error = Some(e.to_string());
                st.log = None;
            }
        }
        st.whole.push(data);
        st.unread.push(data);
        st.last_output = Some(Instant::now());
        drop(st);
        self.notify();
    }

    /// Facts for result metadata.
    pub fn metadata(&self, out: ToolOutput) -> ToolOutput {
        let exit = self.exit();
        let mut out = out;
        if self.background {
            out = out.with_meta("job_id", self.id.clone());
        }
        out = out
            .with_meta("status", if exit.is_some() { "exited" } else { "running" })
            .with_meta("exit_code", exit.map(|e| Value::from(e.code)).unwrap_or(Value::Null))
            .with_meta("log_file", self.log_shown())
            .with_meta("pid", self.pid)
            .with_meta("sandbox", self.grant.sandbox.as_str());
        if let Some(exit) = exit {
            out = out.with_meta("duration_ms", exit.duration.as_millis() as u64);
            if let Some(signal) = exit.signal {
                out = out.with_meta("signal", signal);
            }
        }
        if let Some(reason) = self.stopped_because() {
            out = out.with_meta("stopped", reason);
        }
        if let Some(err) = self.state.lock().log_error.clone() {
            out = out.with_meta("log_error", err);
        }
        out
    }

    /// How long the job has run (until its exit, once it exited).
    pub fn elapsed(&self) -> Duration {
        self.exit().map_or_else(|| self.started.elapsed(), |exit| exit.duration)
    }

    /// One line saying where the job stands, for the end of a result.
    pub fn status_line(&self) -> String {
        match self.exit() {
            Some(exit) => {
                let how = match (self.stopped_because(), exit.signal) {
                    (Some(reason), _) => format!("was stopped ({reason})"),
                    (None, Some(signal)) => format!("was killed by signal {signal}"),
                    (None, None) => format!("exited with code {}", exit.code),
                };
                let strays = if self.strays_stopped() {
                    "; processes it left running in the background were stopped (use background: true for servers)"
                } else {
                    ""
                };
                format!("[{} {how} after {:.2} s{strays}]", self.id, exit.duration.as_secs_f64())
            }
            None => format!("[{} is still running]", self.id),
        }
    }
}

/// Signals everything the job started: its process group and, because job control
/// (an interactive shell on a terminal, `set -m`) moves pipelines into groups of
/// their own, every other process of its session. Returns whether any live
/// process was signalled.
fn signal_session(leader: i32, signal: Signal) -> bool {
    let members = session_members(leader);
    let _ = killpg(Pid::from_raw(leader), signal);
    for pid in &members {
        let _ = kill(Pid::from_raw(*pid), signal);
    }
    !members.is_empty()
}

/// Live (non-zombie) processes of session `sid`, from /proc.
pub fn session_members(sid: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
            // The command name may contain spaces and parentheses; fields resume after the last ')'.
            let Some(rest) = stat.rfind(')').map(|k| &stat[k + 1..]) else { return false };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            // state, ppid, pgrp, session
            fields.len() > 3 && !matches!(fields[0], "Z" | "X") && fields[3].parse() == Ok(sid)
        })
        .collect()
}

/// Pumps the command's output into the job, until end-of-file (or, for a
/// terminal, EIO once the last process holding it has gone).
fn start_reader(job: &Arc<Job>, mut output: Box<dyn std::io::Read + Send>) {
    let reader_job = job.clone();
    let spawned = std::thread::Builder::new().name(format!("shell-{}-out", job.id)).spawn(move || {
        let job = reader_job;
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match output.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => job.push_output(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        job.state.lock().eof = true;
        job.notify();
    });
    if spawned.is_err() {
        // Without a reader the output cannot be shown; say so instead of hanging.
        let mut st = job.state.lock();
        st.eof = true;
        st.log_error = Some("could not start a thread to read the output".into());
    }
}

/// Feeds queued input to the command; the thread ends when the job drops its sender
/// or the command stops reading.
fn start_writer(id: &str, mut writer: Box<dyn std::io::Write + Send>) -> std::sync::mpsc::Sender<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let _ = std::thread::Builder::new().name(format!("shell-{id}-in")).spawn(move || {
        for data in rx {
            if writer.write_all(&data).and_then(|()| writer.flush()).is_err() {
                break;
            }
        }
    });
    tx
}

/// Reaps the shell, records how it ended, and stops whatever it left in its group.
fn start_supervisor(job: &Arc<Job>, mut child: Box<dyn process_wrap::tokio::ChildWrapper>) {
    let job = job.clone();
    tokio::spawn(async move {
        let status = child.wait().await;
        let duration = job.started.elapsed();
        let (code, signal) = match status {
            Ok(status) => {
                use std::os::unix::process::ExitStatusExt;
                match (status.code(), status.signal()) {
                    (Some(code), _) => (code, None),
                    (None, Some(sig)) => (128 + sig, Some(sig)),
                    (None, None) => (-1, None),
                }
            }
            Err(_) => (-1, None),
        };
        {
            let mut st = job.state.lock();
            // Right after reaping the leader its group id cannot have been reused
            // yet (the group's members, if any, still hold it), so this is safe.
            st.strays_stopped = signal_session(job.pid, Signal::SIGKILL) | job.running.kill();
            st.group_done = true;
            st.exit = Some(Exit { code, signal, duration });
        }
        job.notify();
    });
}

/// The shared result of a poll (`exec_shell_wait`, `exec_shell_interact`,
/// `task_shell_wait`): output since the last poll, then the status line.
pub fn poll_output(job: &Job) -> ToolOutput {
    let (text, truncated, bytes) = job.take_unread();
    let mut content = if bytes == 0 { "(no new output)\n".to_string() } else { text };
    if !content.ends_with('\n') {
        content.push('\n');
    }
    content.push_str(&job.status_line());
    job.metadata(ToolOutput::text(content)).with_meta("new_bytes", bytes).with_meta("truncated", truncated)
}

/// Validates an optional `timeout_ms` and turns it into a duration.
pub fn timeout_arg(value: Option<u64>, default_ms: u64, max_ms: u64) -> Result<Duration, ToolError> {
    let ms = value.unwrap_or(default_ms);
    if ms == 0 || ms > max_ms {
        return Err(ToolError::model(format!("`timeout_ms` must be between 1 and {max_ms}, got {ms}")));
    }
    Ok(Duration::from_millis(ms))
}

/// The gate record for a finished job, as JSON for results.
pub fn gate_json(gate: &Gate) -> Value {
    serde_json::to_value(gate).unwrap_or(Value::Null)
}
