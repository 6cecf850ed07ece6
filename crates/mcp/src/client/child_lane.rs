//! The transport to a stdio MCP server, with a raw lane beside rmcp's.
//!
//! rmcp's service reads and writes the child's newline-delimited JSON-RPC
//! through [`ChildLine`] as through any transport. Beside it, [`RawLane`]
//! sends requests quiver writes itself and hands back their answers as the
//! bytes the server wrote. Those answers are never parsed into rmcp's types,
//! which re-order keys, write `1` as `1.0` and drop fields they do not know:
//! a gateway exposing the server directly passes them on as they came, and
//! skips a parse and a re-serialization per call.
//!
//! A raw request's id is a string with [`RAW_ID_PREFIX`]; rmcp numbers its
//! own requests, so the answer to each is recognized by its id alone. Every
//! line goes out in one write, so the server reads whole messages.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use memchr::memmem::Finder;

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::oneshot;

use crate::lines::{LineReader, LineWriter, QueuedLines};

/// What every raw request's id starts with.
pub const RAW_ID_PREFIX: &str = "quiver-raw-";

/// A raw request's id: shared, not copied, by the lane's table, the call in
/// flight and its cancellation (one allocation per request).
pub type RawId = Arc<str>;

/// How long a closing server gets to exit after its stdin closes.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// The answer to a raw request.
#[derive(Debug)]
pub enum RawAnswer {
    /// The `result` member, as the server wrote it.
    Result(Box<RawValue>),
    /// The `error` member (a JSON-RPC error object).
    Error(serde_json::Value),
}

/// What becomes of a raw request handed to an [`AnswerSink`].
#[derive(Debug)]
pub enum Delivery<'a> {
    /// The `result` member, as the server wrote it, borrowed from the line
    /// read (a sink that keeps it copies it).
    Result(&'a RawValue),
    /// The `error` member (a JSON-RPC error object).
    Error(serde_json::Value),
    /// The server's output closed first.
    Closed,
    /// No answer by the request's deadline (the request is forgotten; the
    /// sink says so and cancels it downstream).
    TimedOut,
}

/// Takes a raw answer where it is read, in the reader's own task: what a
/// gateway relaying a call needs, with no task waiting per call. Whatever
/// takes longer than queueing a line must be spawned by the sink.
pub trait AnswerSink: Send {
    /// The writer the sink queued a line on, if any: the reader flushes it
    /// once the lines read together are handled.
    fn deliver(self: Box<Self>, delivery: Delivery<'_>) -> Option<Arc<dyn QueuedLines>>;
}

enum Waiter {
    /// A task waiting on its [`RawCall`].
    Task(oneshot::Sender<RawAnswer>),
    /// A sink, and when it stops waiting.
    Sink(Box<dyn AnswerSink>, std::time::Instant),
}

/// Writes to the child and matches raw answers to their requests.
pub struct RawLane {
    stdin: Arc<LineWriter<ChildStdin>>,
    next: AtomicU64,
    waiting: Mutex<HashMap<RawId, Waiter>>,
    closed: AtomicBool,
    /// A thread is watching the sinks' deadlines.
    watching: AtomicBool,
}

/// A raw request in flight; dropping it forgets the request (its answer, if
/// one comes, is dropped).
pub struct RawCall {
    lane: Arc<RawLane>,
    id: RawId,
    answer: oneshot::Receiver<RawAnswer>,
}

impl RawCall {
    /// The request's JSON-RPC id (a string).
    pub fn id(&self) -> &RawId {
        &self.id
    }

    /// Waits for the answer; `None` when the server closed first.
    pub async fn answer(mut self) -> Option<RawAnswer> {
        (&mut self.answer).await.ok()
    }
}

impl Drop for RawCall {
    fn drop(&mut self) {
        self.lane.waiting.lock().remove(&self.id);
    }
}

impl RawLane {
    /// A fresh request id (known before the request goes out, e.g. to use
    /// as its progress token).
    pub fn new_id(&self) -> RawId {
        let mut number = itoa::Buffer::new();
        let number = number.format(self.next.fetch_add(1, Ordering::Relaxed));
        // Built on the stack: the id's one allocation is the shared one.
        let mut id = [0u8; RAW_ID_PREFIX.len() + 20];
        let end = RAW_ID_PREFIX.len() + number.len();
        id[..RAW_ID_PREFIX.len()].copy_from_slice(RAW_ID_PREFIX.as_bytes());
        id[RAW_ID_PREFIX.len()..end].copy_from_slice(number.as_bytes());
        Arc::from(std::str::from_utf8(&id[..end]).unwrap_or(RAW_ID_PREFIX))
    }

    /// Sends `{"jsonrpc":"2.0","id":<id>,"method":<method>,"params":<params>}`
    /// (`id` from [`Self::new_id`]); `params` is written as it serializes.
    pub async fn request(
        self: &Arc<Self>,
        id: RawId,
        method: &str,
        params: &impl serde::Serialize,
    ) -> Result<RawCall, std::io::Error> {
        let line = Self::request_line(&id, method, params)?;
        self.send(id, &line).await
    }

    /// The line of a request (newline included).
    pub fn request_line(id: &str, method: &str, params: &impl serde::Serialize) -> Result<Vec<u8>, serde_json::Error> {
        #[derive(serde::Serialize)]
        struct Request<'a, P> {
            jsonrpc: &'static str,
            id: &'a str,
            method: &'a str,
            params: &'a P,
        }
        let mut line = serde_json::to_vec(&Request { jsonrpc: "2.0", id, method, params })?;
        line.push(b'\n');
        Ok(line)
    }

    /// Sends `line`, a whole request line whose id is `id` (from
    /// [`Self::new_id`]), and waits for nothing: the answer comes through
    /// the returned call.
    pub async fn send(self: &Arc<Self>, id: RawId, line: &[u8]) -> Result<RawCall, std::io::Error> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the server's output closed"));
        }
        let (tx, rx) = oneshot::channel();
        // Registered before the write: the answer may be read before this
        // task runs again.
        self.waiting.lock().insert(Arc::clone(&id), Waiter::Task(tx));
        let call = RawCall { lane: Arc::clone(self), id, answer: rx };
        self.write_line(line).await?;
        Ok(call)
    }

    async fn write_line(&self, line: &[u8]) -> Result<(), std::io::Error> {
        self.stdin.write_line(line).await
    }

    /// Queues the whole request line `write` appends (its id is `id`, from
    /// [`Self::new_id`]; written straight into the pipe's queue, with no
    /// buffer of its own), with `sink` to take its answer (or `Closed`, or
    /// `TimedOut` at `deadline`; every sink on a lane has the same tool
    /// timeout, so deadlines come in the order sinks are queued). Nothing is
    /// written until the returned writer is flushed, so requests made
    /// together go out together. A lane whose server's output has closed
    /// tells the sink at once.
    pub fn queue(
        self: &Arc<Self>,
        id: RawId,
        write: &mut dyn FnMut(&mut Vec<u8>),
        sink: Box<dyn AnswerSink>,
        deadline: tokio::time::Instant,
    ) -> Option<Arc<dyn QueuedLines>> {
        if self.closed.load(Ordering::SeqCst) {
            return sink.deliver(Delivery::Closed);
        }
        let deadline = deadline.into_std();
        self.waiting.lock().insert(id, Waiter::Sink(sink, deadline));
        self.stdin.queue_with(write);
        if !self.watching.swap(true, Ordering::SeqCst) {
            self.start_watching(deadline.saturating_duration_since(Instant::now()));
        }
        // A close between the check and the insert left this sink behind.
        if self.closed.load(Ordering::SeqCst) {
            self.close();
        }
        Some(Arc::clone(&self.stdin) as Arc<dyn QueuedLines>)
    }

    /// Forgets request `id` (its answer, if one comes, is dropped); whether
    /// it was still waiting.
    pub fn forget(&self, id: &str) -> bool {
        self.waiting.lock().remove(id).is_some()
    }

    /// Starts the lane's deadline watcher: a thread, not a task with a tokio
    /// timer, because a registered timer makes every park of the runtime
    /// arm and cancel a kernel timer and read the clock twice — on each
    /// wake-up of a relaying gateway, for a deadline that almost never comes.
    /// `timeout` is how long a sink waits on this lane (see [`watch_deadlines`]).
    fn start_watching(self: &Arc<Self>, timeout: Duration) {
        let lane = Arc::downgrade(self);
        // Sinks spawn their slow ends and flush replies on the runtime.
        let runtime = tokio::runtime::Handle::try_current().ok();
        let started = std::thread::Builder::new().name("quiver-deadlines".into()).spawn(move || {
            let _runtime = runtime.as_ref().map(tokio::runtime::Handle::enter);
            watch_deadlines(lane, timeout);
        });
        if let Err(e) = started {
            tracing::warn!(error = %e, "could not start the deadline watcher: relayed calls have no timeout");
            self.watching.store(false, Ordering::SeqCst);
        }
    }

    /// A line read from the server that answers a raw request is delivered
    /// (to its task, or to its sink right here); any other line comes back
    /// for rmcp.
    fn take_answer<'l>(&self, line: &'l [u8]) -> Taken<'l> {
        #[derive(Deserialize)]
        struct Peek<'a> {
            #[serde(borrow, default)]
            id: Option<&'a RawValue>,
            #[serde(borrow, default)]
            method: Option<&'a RawValue>,
            #[serde(borrow, default)]
            result: Option<&'a RawValue>,
            #[serde(default)]
            error: Option<serde_json::Value>,
        }
        // Cheap test first: most lines are rmcp's, and those never carry the prefix.
        static PREFIX: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(RAW_ID_PREFIX));
        if PREFIX.find(line).is_none() {
            return Taken::No(line);
        }
        let Ok(peek) = serde_json::from_slice::<Peek<'_>>(line) else { return Taken::No(line) };
        let id = match peek.id.and_then(|raw| crate::lines::json_string(raw.get())) {
            Some(id) if peek.method.is_none() && id.starts_with(RAW_ID_PREFIX) => id,
            _ => return Taken::No(line),
        };
        let error = || {
            peek.error.clone().unwrap_or_else(
                || serde_json::json!({"code": -32603, "message": "an answer with neither result nor error"}),
            )
        };
        let waiter = self.waiting.lock().remove(id.as_ref());
        match waiter {
            Some(Waiter::Task(task)) => {
                let answer = match peek.result {
                    Some(result) => RawAnswer::Result(result.to_owned()),
                    None => RawAnswer::Error(error()),
                };
                let _ = task.send(answer);
                Taken::Yes(None)
            }
            Some(Waiter::Sink(sink, _)) => {
                let delivery = match peek.result {
                    Some(result) => Delivery::Result(result),
                    None => Delivery::Error(error()),
                };
                Taken::Yes(sink.deliver(delivery))
            }
            None => Taken::Yes(None),
        }
    }

    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        // Dropping the senders wakes every waiting task with "closed"; each
        // sink is told.
        let waiting: Vec<Waiter> = self.waiting.lock().drain().map(|(_, w)| w).collect();
        tell_sinks(waiting, || Delivery::Closed);
    }
}

/// How long a deadline watcher with nothing to watch waits before it ends.
const WATCH_IDLE: Duration = Duration::from_secs(30);

/// Tells each sink of `lane` whose deadline passed, sleeping until the
/// earliest deadline, until the lane is gone or nothing waited for a while.
///
/// It is never woken early: every sink on a lane has the server's tool
/// timeout, so a sink queued while it sleeps has a later deadline than any
/// waiting, and with none waiting it sleeps at most the timeout (the first
/// sink's, or the longest wait it has seen since).
fn watch_deadlines(lane: std::sync::Weak<RawLane>, mut timeout: Duration) {
    let mut idle_since: Option<Instant> = None;
    loop {
        let Some(lane) = lane.upgrade() else { return };
        let now = Instant::now();
        let (due, next) = {
            let mut waiting = lane.waiting.lock();
            let mut due_ids = Vec::new();
            let mut next: Option<Instant> = None;
            for (id, waiter) in waiting.iter() {
                let Waiter::Sink(_, at) = waiter else { continue };
                if *at <= now {
                    due_ids.push(id.clone());
                } else {
                    next = Some(next.map_or(*at, |n| n.min(*at)));
                    timeout = timeout.max(*at - now);
                }
            }
            let due: Vec<Waiter> = due_ids.iter().filter_map(|id| waiting.remove(id)).collect();
            if next.is_none() && idle_since.is_some_and(|since| now - since >= WATCH_IDLE) {
                // Handed back under the lock: a sink queued after this finds
                // nobody watching and starts a watcher.
                lane.watching.store(false, Ordering::SeqCst);
                drop(waiting);
                tell_sinks(due, || Delivery::TimedOut);
                return;
            }
            (due, next)
        };
        tell_sinks(due, || Delivery::TimedOut);
        drop(lane);
        let nap = match next {
            Some(at) => {
                idle_since = None;
                at - now
            }
            None => {
                idle_since.get_or_insert(now);
                // (A zero timeout must not make this spin.)
                timeout.max(Duration::from_millis(1))
            }
        };
        std::thread::sleep(nap);
    }
}

/// Tells each sink among `waiters` what became of its request (a waiting
/// task is woken by its sender's drop), then flushes what they queued.
fn tell_sinks(waiters: Vec<Waiter>, delivery: impl Fn() -> Delivery<'static>) {
    let mut writers: Vec<Arc<dyn QueuedLines>> = waiters
        .into_iter()
        .filter_map(|waiter| match waiter {
            Waiter::Sink(sink, _) => sink.deliver(delivery()),
            Waiter::Task(_) => None,
        })
        .collect();
    crate::lines::flush_all(&mut writers);
}

/// What [`RawLane::take_answer`] made of a line.
enum Taken<'l> {
    /// Not a raw answer: the line, for rmcp.
    No(&'l [u8]),
    /// Delivered; the writer a sink queued a reply on, if any.
    Yes(Option<Arc<dyn QueuedLines>>),
}

/// rmcp's side of the child's pipes. Owns the child: dropping it kills the
/// server's whole process group.
pub struct ChildLine {
    read: LineReader<ChildStdout>,
    lane: Arc<RawLane>,
    child: Option<Box<dyn ChildWrapper>>,
    /// Writers that sinks queued replies on, flushed once the lines read
    /// together are handled.
    to_flush: Vec<Arc<dyn QueuedLines>>,
    /// Set when the server says its tools changed, as the line is read (see
    /// [`ChildLine::marking_tools_changed`]).
    tools_changed: Option<Arc<AtomicBool>>,
}

impl ChildLine {
    /// Sets `flag` the moment a `notifications/tools/list_changed` line is
    /// read, before any line after it. A server that changes its tools in a
    /// call says so before it answers; the answer is taken off the line here
    /// and reaches the caller at once, while rmcp handles the notification
    /// on its own time. The caller re-lists after the call when the flag is
    /// up, so it must be up by the time the answer is.
    pub fn marking_tools_changed(mut self, flag: Arc<AtomicBool>) -> Self {
        self.tools_changed = Some(flag);
        self
    }
}

/// The method name a tool-list change is announced with, as it appears in the line.
static TOOLS_CHANGED: LazyLock<Finder<'static>> =
    LazyLock::new(|| Finder::new(b"\"notifications/tools/list_changed\""));

/// The spawned server: its transport for rmcp, its raw lane, its pid and its
/// stderr (when piped).
pub struct Spawned {
    pub transport: ChildLine,
    pub lane: Arc<RawLane>,
    pub pid: Option<u32>,
    pub stderr: Option<ChildStderr>,
}

/// Starts `command` with piped stdin/stdout and stderr as given.
pub fn spawn(mut command: CommandWrap, stderr: std::process::Stdio) -> std::io::Result<Spawned> {
    command.command_mut().stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(stderr);
    let mut child = command.spawn()?;
    let stdin =
        child.inner_mut().stdin().take().ok_or_else(|| std::io::Error::other("the server's stdin was not piped"))?;
    let stdout =
        child.inner_mut().stdout().take().ok_or_else(|| std::io::Error::other("the server's stdout was not piped"))?;
    let stderr = child.inner_mut().stderr().take();
    let pid = child.id();
    let lane = Arc::new(RawLane {
        stdin: Arc::new(LineWriter::new(stdin)),
        next: AtomicU64::new(0),
        waiting: Mutex::new(HashMap::new()),
        closed: AtomicBool::new(false),
        watching: AtomicBool::new(false),
    });
    let transport = ChildLine {
        read: LineReader::new(stdout),
        lane: Arc::clone(&lane),
        child: Some(child),
        to_flush: Vec::new(),
        tools_changed: None,
    };
    Ok(Spawned { transport, lane, pid, stderr })
}

impl Transport<RoleClient> for ChildLine {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let lane = Arc::clone(&self.lane);
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        async move { lane.write_line(&line?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            // Replies to the lines read together go out together, before
            // anything waits for more input.
            if !self.to_flush.is_empty() && !self.read.has_line() {
                crate::lines::flush_all(&mut self.to_flush);
            }
            let Some(line) = self.read.next_line().await else {
                crate::lines::flush_all(&mut self.to_flush);
                self.lane.close();
                return None;
            };
            match self.lane.take_answer(line) {
                Taken::Yes(writer) => self.to_flush.extend(writer),
                Taken::No(line) => {
                    if let Some(flag) = &self.tools_changed
                        && TOOLS_CHANGED.find(line).is_some()
                    {
                        flag.store(true, Ordering::SeqCst);
                    }
                    if let Some(message) = crate::lines::parse(line) {
                        // rmcp may take a while with it: nothing waits meanwhile.
                        crate::lines::flush_all(&mut self.to_flush);
                        return Some(message);
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The MCP stdio shutdown: close the server's input, give it a moment
        // to exit, then kill its process group.
        // (Dropping the pipe closes it; a shutdown error changes nothing.)
        let _ = self.lane.stdin.shutdown().await;
        self.lane.close();
        if let Some(mut child) = self.child.take()
            && tokio::time::timeout(EXIT_GRACE, child.wait()).await.is_err()
        {
            Box::into_pin(child.kill()).await?;
        }
        Ok(())
    }
}

impl Drop for ChildLine {
    fn drop(&mut self) {
        self.lane.close();
        if let Some(mut child) = self.child.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            // Killed and reaped (no zombie), the whole group.
            runtime.spawn(async move {
                if let Err(e) = Box::into_pin(child.kill()).await {
                    tracing::debug!(error = %e, "could not kill an MCP server");
                }
            });
        }
    }
}

#[cfg(test)]
#[path = "child_lane_tests.rs"]
mod tests;
