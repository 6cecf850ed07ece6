//! One RLM session: its source, its scratch dir, its interpreter (restarted
//! when it dies or hangs), its policy and its totals. An eval sends code, then
//! serves the child-model queries the code makes until the result arrives or
//! the wall-time limit passes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_agent::BoxFuture;
use quiver_engine::{ToolContext, ToolError};
use serde_json::{Value, json};

use crate::child::{BATCH_CAP, ChildAnswer, ChildPrompt, ChildUsage};
use crate::config::{RlmConfig, RlmStats};
use crate::repl::{ContextKind, Repl, ReplFailure};

/// Characters of stdout/stderr the REPL keeps per eval (what is not shown
/// inline is kept behind a var handle, up to this).
pub const CAPTURE_CHARS: usize = 1 << 20;
/// After the wall-time limit, how long an interrupted eval may take to unwind
/// before the process is killed.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// How long an interpreter may take to begin an eval it was sent (reading
/// the request, on a loaded machine) before it counts as hung.
const START_GRACE: Duration = Duration::from_secs(10);

/// Answers the queries an eval's code makes (`sub_query*`, `sub_rlm`).
pub trait Queries: Send + Sync {
    fn answer<'a>(
        &'a self,
        ctx: &'a ToolContext,
        kind: &'a str,
        items: Vec<ChildPrompt>,
        config: &'a RlmConfig,
        depth: u32,
    ) -> BoxFuture<'a, Result<Vec<ChildAnswer>, String>>;
}

/// The loaded source, kept so a restarted interpreter gets it back.
pub struct Source {
    pub text: Arc<String>,
    pub kind: ContextKind,
    /// What `rlm_open` reports (type, origin, size, preview).
    pub meta: Value,
}

pub struct RlmSession {
    pub name: String,
    pub source: Source,
    pub config: RlmConfig,
    pub stats: RlmStats,
    pub depth: u32,
    pub opened: Instant,
    scratch: tempfile::TempDir,
    repl: Option<Repl>,
    next_eval: u64,
    secret_env: Vec<String>,
}

/// What one eval produced, before it is shaped for the model.
#[derive(Debug, Default)]
pub struct EvalOutcome {
    pub stdout: String,
    pub stderr: String,
    pub stdout_dropped: u64,
    pub stderr_dropped: u64,
    /// `repr` of a trailing expression.
    pub value: Option<String>,
    pub value_chars: u64,
    /// The Python traceback (or why the eval did not finish).
    pub error: Option<String>,
    /// `finalize(value, confidence)`.
    pub final_value: Option<(Value, Value)>,
    pub timed_out: bool,
    /// Why the interpreter was restarted during this eval (state lost).
    pub restarted: Option<String>,
    pub elapsed: Duration,
    pub child_queries: u64,
    pub usage: ChildUsage,
}

impl RlmSession {
    /// Creates the scratch dir and starts the interpreter over `source`.
    pub async fn open(
        ctx: &ToolContext,
        name: &str,
        source: Source,
        config: RlmConfig,
        depth: u32,
        secret_env: Vec<String>,
    ) -> Result<RlmSession, ToolError> {
        let scratch = tempfile::Builder::new()
            .prefix("quiver-rlm-")
            .tempdir()
            .map_err(|e| ToolError::model(format!("cannot create the RLM scratch dir: {e}")))?;
        let mut session = RlmSession {
            name: name.to_string(),
            source,
            config,
            stats: RlmStats::default(),
            depth,
            opened: Instant::now(),
            scratch,
            repl: None,
            next_eval: 0,
            secret_env,
        };
        session.start(ctx).await?;
        Ok(session)
    }

    /// The REPL's working directory, where it creates files.
    pub fn work_dir(&self) -> PathBuf {
        self.scratch.path().join("work")
    }

    pub fn repl(&self) -> Option<&Repl> {
        self.repl.as_ref()
    }

    async fn start(&mut self, ctx: &ToolContext) -> Result<(), ToolError> {
        // The scratch dir holds the bootstrap, the context (removed once
        // loaded) and `work/`, the REPL's working directory: the only tree
        // the sandbox lets it write.
        let work = self.work_dir();
        tokio::fs::create_dir_all(&work)
            .await
            .map_err(|e| ToolError::model(format!("cannot create the RLM work dir: {e}")))?;
        let file = self.scratch.path().join("context");
        tokio::fs::write(&file, self.source.text.as_bytes())
            .await
            .map_err(|e| ToolError::model(format!("cannot write the context into the scratch dir: {e}")))?;
        let repl = Repl::start(ctx, self.scratch.path(), &work, &file, self.source.kind, &self.secret_env).await;
        // Loaded (or failed): the copy is not needed until a restart writes it again.
        let _ = tokio::fs::remove_file(&file).await;
        self.repl = Some(repl?);
        Ok(())
    }

    /// Kills the interpreter and starts a fresh one over the same source.
    async fn restart(&mut self, ctx: &ToolContext) -> Result<(), ToolError> {
        if let Some(old) = self.repl.take() {
            old.kill().await;
        }
        self.stats.restarts += 1;
        self.start(ctx).await
    }

    /// Stops the interpreter; its exit as text.
    pub async fn close(&mut self) -> String {
        match self.repl.take() {
            Some(repl) => repl.kill().await,
            None => "not running".into(),
        }
    }

    /// Runs `code`; never fails for what the code did (that is in the
    /// outcome), only when no interpreter can be had.
    pub async fn eval(
        &mut self,
        ctx: &ToolContext,
        code: &str,
        queries: &dyn Queries,
    ) -> Result<EvalOutcome, ToolError> {
        let started = Instant::now();
        let mut outcome = EvalOutcome::default();
        let alive = match self.repl.as_mut() {
            Some(repl) => repl.alive(),
            None => false,
        };
        if !alive {
            self.restart(ctx).await?;
            outcome.restarted = Some("the interpreter was not running; a fresh one was started".into());
        }
        self.next_eval += 1;
        let id = self.next_eval;
        let request = json!({"op": "eval", "id": id, "code": code, "capture_chars": CAPTURE_CHARS});
        let result = self.drive(ctx, &request, id, queries, &mut outcome).await;
        match result {
            Ok(Some(reply)) => read_reply(&reply, &mut outcome),
            Ok(None) => {
                // Hung past the limit and the interrupt: kill, start afresh.
                outcome.timed_out = true;
                outcome.error = Some(format!(
                    "killed at the wall-time limit of {}s (it did not stop on interrupt)",
                    self.config.eval_timeout.as_secs()
                ));
                self.restart(ctx).await.map_err(|e| dead(&outcome, e))?;
                outcome.restarted = Some(
                    "the interpreter was killed and restarted: `_context` is loaded again, variables from earlier evals are gone".into(),
                );
            }
            Err(failure) => {
                outcome.error = Some(format!("{failure} during this eval"));
                self.repl = None;
                self.restart(ctx).await.map_err(|e| dead(&outcome, e))?;
                outcome.restarted = Some(
                    "the interpreter died and was restarted: `_context` is loaded again, variables from earlier evals are gone".into(),
                );
            }
        }
        if outcome.timed_out {
            self.stats.timeouts += 1;
        }
        if outcome.error.is_some() {
            self.stats.eval_errors += 1;
        }
        if outcome.final_value.is_some() {
            self.stats.finalized += 1;
        }
        outcome.elapsed = started.elapsed();
        self.stats.evals += 1;
        self.stats.eval_time += outcome.elapsed;
        self.stats.child_queries += outcome.child_queries;
        self.stats.usage.add(&outcome.usage);
        Ok(outcome)
    }

    /// Sends the eval, serves its queries; `Ok(None)` when it had to be given up.
    async fn drive(
        &mut self,
        ctx: &ToolContext,
        request: &Value,
        id: u64,
        queries: &dyn Queries,
        outcome: &mut EvalOutcome,
    ) -> Result<Option<Value>, ReplFailure> {
        let Some(repl) = self.repl.as_mut() else {
            return Err(ReplFailure::Protocol("no interpreter".into()));
        };
        repl.send(request).await?;
        // The limit counts from the interpreter's `started`: an interrupt sent
        // before it began the eval (a loaded machine, a slow read) would be
        // lost and the eval would run unchecked. An interpreter that does not
        // start within the limit plus START_GRACE is hung and is killed.
        let mut deadline = tokio::time::Instant::now() + self.config.eval_timeout + START_GRACE;
        let mut started = false;
        let mut interrupted = false;
        loop {
            let limit = if interrupted { deadline + INTERRUPT_GRACE } else { deadline };
            let message = tokio::select! {
                m = repl.recv() => m?,
                _ = tokio::time::sleep_until(limit) => {
                    if interrupted || !started {
                        outcome.timed_out = true;
                        return Ok(None);
                    }
                    interrupted = true;
                    outcome.timed_out = true;
                    repl.interrupt();
                    continue;
                }
            };
            let for_this_eval = message.get("id").and_then(Value::as_u64) == Some(id);
            match message.get("type").and_then(Value::as_str) {
                Some("started") if for_this_eval && !started => {
                    started = true;
                    deadline = tokio::time::Instant::now() + self.config.eval_timeout;
                }
                Some("result") if for_this_eval => return Ok(Some(message)),
                Some("query") => {
                    let reply = if interrupted {
                        json!({"op": "reply", "id": message.get("id"), "error": "the eval was interrupted"})
                    } else {
                        let served = serve_query(ctx, &message, queries, &self.config, self.depth, outcome);
                        tokio::select! {
                            reply = served => reply,
                            _ = tokio::time::sleep_until(deadline) => {
                                interrupted = true;
                                outcome.timed_out = true;
                                repl.interrupt();
                                json!({"op": "reply", "id": message.get("id"), "error": "the eval reached its wall-time limit"})
                            }
                        }
                    };
                    repl.send(&reply).await?;
                }
                _ => {
                    return Err(ReplFailure::Protocol(format!(
                        "unexpected message {}",
                        crate::repl::truncate(&message.to_string(), 200)
                    )));
                }
            }
        }
    }
}

/// The eval's failure and the failed restart, together: the session has no
/// interpreter now (the next eval tries to start one again).
fn dead(outcome: &EvalOutcome, restart: ToolError) -> ToolError {
    ToolError::model(format!(
        "{}; restarting the interpreter failed too ({restart}): rlm_eval will try again, or rlm_close the session",
        outcome.error.as_deref().unwrap_or("the eval failed")
    ))
}

async fn serve_query(
    ctx: &ToolContext,
    message: &Value,
    queries: &dyn Queries,
    config: &RlmConfig,
    depth: u32,
    outcome: &mut EvalOutcome,
) -> Value {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let kind = message.get("kind").and_then(Value::as_str).unwrap_or("query");
    let items: Vec<ChildPrompt> = message
        .get("items")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|i| ChildPrompt {
                    prompt: i.get("prompt").and_then(Value::as_str).unwrap_or_default().to_string(),
                    context: i.get("context").and_then(Value::as_str).map(str::to_string),
                })
                .collect()
        })
        .unwrap_or_default();
    // The bootstrap enforces the cap too; a REPL whose helpers were replaced
    // by the model's own code must not get past it.
    if items.len() > BATCH_CAP {
        return json!({"op": "reply", "id": id, "error": format!(
            "at most {BATCH_CAP} child queries per call (got {}): split the batch", items.len()
        )});
    }
    if items.is_empty() {
        return json!({"op": "reply", "id": id, "results": []});
    }
    match queries.answer(ctx, kind, items, config, depth).await {
        Ok(answers) => {
            outcome.child_queries += answers.len() as u64;
            let results: Vec<Value> = answers
                .iter()
                .map(|a| {
                    outcome.usage.add(&a.usage);
                    match &a.result {
                        Ok(text) => json!({"ok": true, "text": text}),
                        Err(e) => json!({"ok": false, "error": e}),
                    }
                })
                .collect();
            json!({"op": "reply", "id": id, "results": results})
        }
        Err(e) => json!({"op": "reply", "id": id, "error": e}),
    }
}

fn read_reply(reply: &Value, outcome: &mut EvalOutcome) {
    let text = |k: &str| reply.get(k).and_then(Value::as_str).map(str::to_string);
    let number = |k: &str| reply.get(k).and_then(Value::as_u64).unwrap_or(0);
    outcome.stdout = text("stdout").unwrap_or_default();
    outcome.stderr = text("stderr").unwrap_or_default();
    outcome.stdout_dropped = number("stdout_dropped");
    outcome.stderr_dropped = number("stderr_dropped");
    outcome.value = text("value");
    outcome.value_chars = number("value_chars");
    if reply.get("interrupted").and_then(Value::as_bool) == Some(true) {
        outcome.timed_out = true;
    }
    if let Some(error) = text("error") {
        outcome.error = Some(error);
    }
    if let Some(Value::Object(f)) = reply.get("final") {
        let value = f.get("value").cloned().unwrap_or(Value::Null);
        let confidence = f.get("confidence").cloned().unwrap_or(Value::Null);
        outcome.final_value = Some((value, confidence));
    }
}
