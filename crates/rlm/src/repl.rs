//! One Python REPL process: started through the same gate, sandbox, scrubbed
//! environment and containment as every command quiver runs, then spoken to
//! over JSON lines (see `bootstrap.py`). This module knows the process and the
//! wire, not sessions: [`crate::session`] decides what an eval means.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::{ToolContext, ToolError};
use quiver_tools::process::{Launch, Limits, Running, authorize};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// The bootstrap shipped inside quiver (written into the session's scratch dir).
pub const BOOTSTRAP: &str = include_str!("bootstrap.py");
const BOOTSTRAP_FILE: &str = "quiver_rlm_bootstrap.py";
/// An interpreter's limits: enough for pandas and a few worker processes,
/// not for a fork bomb or an allocation that takes the machine (a probe
/// allocated 4 GiB and forked 300 processes from one eval).
pub const RLM_LIMITS: Limits = Limits { processes: Some(64), memory_bytes: Some(2 << 30) };
/// How long a fresh interpreter may take to say it is ready.
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// Bytes of the child's stderr kept for error reports.
const STDERR_TAIL: usize = 4096;

/// How the loaded source reaches `_context`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextKind {
    /// A `str`.
    Text,
    /// Parsed JSON (a session object's structure).
    Json,
}

/// A live interpreter.
pub struct Repl {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    stderr: Option<tokio::task::JoinHandle<Vec<u8>>>,
    /// Kept alive with the process: dropping it kills the job.
    running: Running,
    pub python_version: String,
    pub sandbox: &'static str,
    pub startup: Duration,
}

/// What can end a read from the child.
#[derive(Debug)]
pub enum ReplFailure {
    /// The process exited (or closed its protocol stream); stderr's tail.
    Exited { status: String, stderr: String },
    /// A line that is not the protocol.
    Protocol(String),
}

impl std::fmt::Display for ReplFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplFailure::Exited { status, stderr } if stderr.trim().is_empty() => {
                write!(f, "the Python process exited ({status})")
            }
            ReplFailure::Exited { status, stderr } => {
                write!(f, "the Python process exited ({status}); its stderr ends with:\n{}", stderr.trim_end())
            }
            ReplFailure::Protocol(detail) => write!(f, "the Python process broke the RLM protocol: {detail}"),
        }
    }
}

/// `python3` on the PATH quiver itself runs with.
pub fn find_python() -> Result<PathBuf, ToolError> {
    // Executable files only (a non-executable `python3` earlier on PATH is
    // skipped, as a shell would), relative entries never against the cwd.
    if let Ok(found) = which::which_in("python3", std::env::var_os("PATH"), "/") {
        return Ok(found);
    }
    Err(ToolError::model(
        "RLM sessions need Python 3, and no `python3` is on PATH: install it (apt-get install python3, brew install python) and retry",
    ))
}

impl Repl {
    /// Starts the interpreter with `context_file` loaded as `_context`. The
    /// bootstrap is written into `scratch`, the only tree it may write; `work`
    /// (inside it) is its working directory. The variables named in `remove_env`
    /// (provider keys) never reach it.
    pub async fn start(
        ctx: &ToolContext,
        scratch: &Path,
        work: &Path,
        context_file: &Path,
        kind: ContextKind,
        remove_env: &[String],
    ) -> Result<Repl, ToolError> {
        let python = find_python()?;
        let script = scratch.join(BOOTSTRAP_FILE);
        tokio::fs::write(&script, BOOTSTRAP)
            .await
            .map_err(|e| ToolError::model(format!("cannot write the RLM bootstrap into {}: {e}", scratch.display())))?;
        let python_str = python.to_string_lossy().into_owned();
        // A fixed, built-in command: the gate trusts it (deny rules still
        // apply) and the verdict picks the sandbox, as for any tool's command.
        let grant = authorize(ctx, &CommandRequest::tool_argv(&[python_str.as_str(), "-I", BOOTSTRAP_FILE])).await?;
        // The sandbox grants a writable root entry by entry (nothing new may
        // appear directly in it), so the root is the scratch dir and `work`,
        // already there, is where the REPL creates what it likes.
        let launch = Launch::with_limits(ctx, grant, vec![scratch.to_path_buf()], RLM_LIMITS)?;
        let mut cmd = tokio::process::Command::new(&python);
        cmd.arg("-I")
            .arg("-u")
            .arg("-X")
            .arg("utf8")
            .arg(&script)
            .arg(context_file)
            .arg(match kind {
                ContextKind::Text => "text",
                ContextKind::Json => "json",
            })
            .current_dir(work)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Explicit removals survive the scrub (it keeps what the caller set),
        // so a key under any name the config chose is gone, not just `*_API_KEY`.
        for name in remove_env {
            cmd.env_remove(name);
        }
        let running = launch
            .prepare(&mut cmd)
            .map_err(|e| ToolError::model(format!("cannot prepare the Python process: {e}")))?;
        let started = Instant::now();
        let mut child = cmd.spawn().map_err(|e| ToolError::model(format!("cannot start {}: {e}", python.display())))?;
        running.started(child.id());
        let (Some(stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ToolError::model("the Python process has no stdio pipes"));
        };
        let stderr = tokio::spawn(async move {
            // Keep only the tail: a chatty child must not grow quiver's memory.
            let mut tail = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > STDERR_TAIL * 2 {
                    tail.drain(..tail.len() - STDERR_TAIL);
                }
            }
            tail
        });
        let sandbox = running.grant.sandbox.as_str();
        let mut repl = Repl {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            stderr: Some(stderr),
            running,
            python_version: String::new(),
            sandbox,
            startup: Duration::ZERO,
        };
        let ready = match tokio::time::timeout(START_TIMEOUT, repl.recv()).await {
            Ok(Ok(message)) => message,
            Ok(Err(failure)) => return Err(ToolError::model(format!("the RLM REPL did not start: {failure}"))),
            Err(_) => {
                return Err(ToolError::model(format!(
                    "the RLM REPL did not start within {}s",
                    START_TIMEOUT.as_secs()
                )));
            }
        };
        if ready.get("type").and_then(Value::as_str) != Some("ready") {
            return Err(ToolError::model(format!("the RLM REPL sent {ready} instead of its ready line")));
        }
        repl.python_version = ready.get("python").and_then(Value::as_str).unwrap_or("3").to_string();
        repl.startup = started.elapsed();
        Ok(repl)
    }

    /// Sends one protocol line.
    pub async fn send(&mut self, message: &Value) -> Result<(), ReplFailure> {
        let mut line = message.to_string();
        line.push('\n');
        if self.stdin.write_all(line.as_bytes()).await.is_err() || self.stdin.flush().await.is_err() {
            return Err(self.exited().await);
        }
        Ok(())
    }

    /// The next protocol message.
    pub async fn recv(&mut self) -> Result<Value, ReplFailure> {
        match self.lines.next_line().await {
            Ok(Some(line)) => serde_json::from_str(&line)
                .map_err(|e| ReplFailure::Protocol(format!("{e} in line {:?}", truncate(&line, 200)))),
            Ok(None) | Err(_) => Err(self.exited().await),
        }
    }

    /// Asks the running eval to stop (Python raises `KeyboardInterrupt`).
    pub fn interrupt(&self) {
        if let Some(pid) = self.child.id().and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGINT);
        }
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Kills the process and everything it started; its exit as text.
    pub async fn kill(mut self) -> String {
        self.running.kill();
        let _ = self.child.start_kill();
        match tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await {
            Ok(Ok(status)) => status.to_string(),
            _ => "did not exit after being killed".into(),
        }
    }

    async fn exited(&mut self) -> ReplFailure {
        let status = match tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await {
            Ok(Ok(status)) => status.to_string(),
            Ok(Err(e)) => format!("wait failed: {e}"),
            Err(_) => {
                // Closed its stdout but still running: it is of no use any more.
                self.running.kill();
                "closed its protocol stream and was killed".into()
            }
        };
        let stderr = match self.stderr.take() {
            Some(task) => match tokio::time::timeout(Duration::from_secs(1), task).await {
                Ok(Ok(tail)) => String::from_utf8_lossy(&tail[tail.len().saturating_sub(STDERR_TAIL)..]).into_owned(),
                _ => String::new(),
            },
            None => String::new(),
        };
        ReplFailure::Exited { status, stderr }
    }
}

pub fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
