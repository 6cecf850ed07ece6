//! The response to a call answered on the HTTP lane (`http_calls`,
//! `http_stateless_calls`): the answer line the relay writes (the
//! [`OneAnswer`] one-shot), what was relayed to the client before it (the
//! call's side channel), and the call cancelled downstream if the client goes
//! away first. One JSON object when the answer comes first, as `http_plain`
//! answers; an SSE stream, in order, when something else does.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::response::Response;
use http::header::{self, HeaderValue};
use parking_lot::Mutex;
use rmcp::model::{RequestId, ServerJsonRpcMessage};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::stdio_calls::{DirectCalls, Reply, Respond};
use super::verbatim::VerbatimResults;
use crate::lines::QueuedLines;

pub(super) fn empty_stream() -> Response {
    let mut response = Response::new(Body::empty());
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    response
}

pub(super) fn status(code: http::StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = code;
    response
}

/// A call relayed from the lane, not answered yet.
pub(crate) struct Pending {
    pub(super) side: mpsc::Receiver<ServerJsonRpcMessage>,
    pub(super) answer: oneshot::Receiver<Vec<u8>>,
    /// Keeps the call's side channel open while it is held.
    pub(super) registration: Box<dyn Send + Sync>,
    pub(super) cancel: CancelOnDrop,
    /// What the client gets for the answer line (a stateless call's is rewritten).
    pub(super) finish: Finish,
    /// Cancelled as the listener shuts down: the call is given up (and
    /// cancelled downstream), as rmcp ends its sessions' streams.
    pub(super) shutdown: CancellationToken,
}

/// Turns the answer line (its final newline gone) into the body the client gets.
pub(super) type Finish = Box<dyn FnOnce(Vec<u8>) -> Vec<u8> + Send + Sync>;

impl Pending {
    pub(super) async fn response(mut self) -> Response {
        tokio::select! {
            // What the relay queued first goes out first.
            biased;
            () = self.shutdown.cancelled() => empty_stream(),
            Some(first) = self.side.recv() => self.streamed(first),
            answer = &mut self.answer => {
                // No answer: the call was cancelled, and its stream ends with none (as rmcp's does).
                let Ok(mut line) = answer else { return empty_stream() };
                self.cancel.id = None;
                // Sent on the side channel before the answer came? Then a stream after all.
                line.pop_if(|b| *b == b'\n');
                let line = (self.finish)(line);
                if let Ok(first) = self.side.try_recv() {
                    let answer = Answer::Ready(Some(line));
                    let parts = (self.cancel, self.registration, self.shutdown);
                    return Self::stream(first, self.side, answer, parts, Box::new(|l| l));
                }
                let mut response = Response::new(Body::from(line));
                response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                response
            }
        }
    }

    /// The same over stdio: what the relay sent the client first, each as a
    /// line, then the answer's line; nothing once the session is closing
    /// (the call is cancelled downstream as this is dropped).
    pub(super) async fn deliver_lines(self, write: Respond) {
        let Pending { mut side, mut answer, mut cancel, registration, finish, shutdown } = self;
        // What came first is written by the transport's own encoder.
        let message = |message: ServerJsonRpcMessage| Reply::Message(Box::new(message));
        loop {
            tokio::select! {
                biased;
                () = shutdown.cancelled() => return,
                Some(first) = side.recv() => write(message(first)).await,
                line = &mut answer => {
                    // None: cancelled meanwhile, and the client stopped waiting.
                    let Ok(mut line) = line else { return };
                    cancel.id = None;
                    while let Ok(before) = side.try_recv() {
                        write(message(before)).await;
                    }
                    line.pop_if(|b| *b == b'\n');
                    let mut line = finish(line);
                    line.push(b'\n');
                    write(Reply::Line(line)).await;
                    drop(registration);
                    return;
                }
            }
        }
    }

    fn streamed(self, first: ServerJsonRpcMessage) -> Response {
        let parts = (self.cancel, self.registration, self.shutdown);
        Self::stream(first, self.side, Answer::Waiting(self.answer), parts, self.finish)
    }

    /// An SSE stream: `first`, what else comes on the side channel, then the
    /// answer (and what was queued before it), then the end.
    fn stream(
        first: ServerJsonRpcMessage,
        side: mpsc::Receiver<ServerJsonRpcMessage>,
        answer: Answer,
        (cancel, registration, shutdown): (CancelOnDrop, Box<dyn Send + Sync>, CancellationToken),
        finish: Finish,
    ) -> Response {
        let finish = Some(finish);
        let state = Streaming { side, answer, cancel, _registration: registration, finish, shutdown, done: false };
        let head = futures::stream::once(async move { Ok::<_, std::convert::Infallible>(event(&first)) });
        let rest = futures::stream::unfold(state, |mut state| async move {
            let bytes = state.next().await?;
            Some((Ok(bytes), state))
        });
        let mut response = Response::new(Body::from_stream(futures::StreamExt::chain(head, rest)));
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        response
    }
}

enum Answer {
    Waiting(oneshot::Receiver<Vec<u8>>),
    Ready(Option<Vec<u8>>),
}

struct Streaming {
    side: mpsc::Receiver<ServerJsonRpcMessage>,
    answer: Answer,
    cancel: CancelOnDrop,
    /// Held for its drop: the call's side channel stays open until then.
    _registration: Box<dyn Send + Sync>,
    finish: Option<Finish>,
    shutdown: CancellationToken,
    done: bool,
}

impl Streaming {
    /// The next event's bytes; `None` once the answer went out.
    async fn next(&mut self) -> Option<Bytes> {
        if self.done {
            return None;
        }
        if let Answer::Waiting(answer) = &mut self.answer {
            tokio::select! {
                biased;
                // The stream ends unanswered; dropped, the call is cancelled downstream.
                () = self.shutdown.cancelled() => return None,
                Some(message) = self.side.recv() => return Some(event(&message)),
                line = answer => {
                    self.cancel.id = None;
                    self.answer = Answer::Ready(line.ok());
                }
            }
        }
        // Answered: what was queued before the answer, then the answer.
        if let Ok(message) = self.side.try_recv() {
            return Some(event(&message));
        }
        self.done = true;
        let Answer::Ready(line) = &mut self.answer else { return None };
        let mut line = line.take()?;
        line.pop_if(|b| *b == b'\n');
        let line = match self.finish.take() {
            Some(finish) => finish(line),
            None => line,
        };
        Some(data_event(&line))
    }
}

fn event(message: &ServerJsonRpcMessage) -> Bytes {
    data_event(&serde_json::to_vec(message).unwrap_or_default())
}

fn data_event(json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// Cancels the call downstream unless it was answered (`id` taken) first:
/// the client hung up, or the server is shutting down.
pub(super) struct CancelOnDrop {
    pub(super) calls: Arc<DirectCalls>,
    pub(super) id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.calls.cancel(&id);
        }
    }
}

/// The one answer line a call on the lane gets, however it is made: queued
/// where the server's output is read ([`QueuedLines`]), or written by the
/// slow end ([`Respond`]).
pub(super) struct OneAnswer {
    line: Mutex<Vec<u8>>,
    tx: Mutex<Option<oneshot::Sender<Vec<u8>>>>,
}

impl OneAnswer {
    pub(super) fn new() -> (Arc<Self>, oneshot::Receiver<Vec<u8>>) {
        let (tx, rx) = oneshot::channel();
        (Arc::new(OneAnswer { line: Mutex::default(), tx: Mutex::new(Some(tx)) }), rx)
    }

    fn send(&self, line: Vec<u8>) {
        if let Some(tx) = self.tx.lock().take() {
            let _ = tx.send(line);
        }
    }
}

impl QueuedLines for OneAnswer {
    fn queue_with(&self, write: &mut dyn FnMut(&mut Vec<u8>)) {
        write(&mut self.line.lock());
    }

    fn flush(self: Arc<Self>) {
        let line = std::mem::take(&mut *self.line.lock());
        if !line.is_empty() {
            self.send(line);
        }
    }
}

/// The call's [`Respond`]: its reply encoded as the stdio transport encodes
/// one (a placeholder result as its verbatim text), into `answer`.
pub(super) fn answer_with(answer: Arc<OneAnswer>, verbatim: Arc<VerbatimResults>) -> Respond {
    Arc::new(move |reply| {
        let line = match reply {
            Reply::Message(message) => super::verbatim::encode(&message, &verbatim),
            Reply::Result { id, text } => Ok(super::verbatim::result_line(&id, text.as_bytes())),
            Reply::Line(line) => Ok(line),
        };
        match line {
            Ok(line) => answer.send(line),
            Err(e) => tracing::warn!(error = %e, "could not encode a tool call's answer"),
        }
        Box::pin(async {})
    })
}
