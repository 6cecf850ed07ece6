//! A 2026-07-28 (stateless) call whose downstream server asks its client
//! something mid-call: `InputRequiredResult` rounds (SEP-2322). "Call" here
//! is any request the revision lets a server answer that way and that quiver
//! relays to a server behind it: `tools/call`, `prompts/get` and
//! `resources/read`; the machinery does not know which (its outcome is
//! rmcp's `ServerResult`, read back by `server::handler_call`).
//!
//! A session's client (2025-11-25 and before) gets the server's
//! `elicitation/create`, `sampling/createMessage` or `roots/list` on the
//! call's own stream (the relay). A stateless client has no stream a server
//! can send a request on: its call is answered with an `InputRequiredResult`
//! naming what the server asked (`inputRequests`) and a `requestState`, and
//! the client retries the call with its answers (`inputResponses`) and that
//! state. The downstream server did not give up its call meanwhile, and
//! nothing in MCP lets quiver replay it to the point where it asked, so the
//! call is *parked*: it keeps running in a task of its own, its request
//! waiting on an answer, between the client's HTTP requests.
//!
//! - **Bounded.** A parked call waits [`InputLimits::wait`] for the retry;
//!   then it is dropped, which cancels the downstream call
//!   (`notifications/cancelled`) and answers the server's request with an
//!   error. At most [`InputLimits::max_parked`] calls are parked at once; a
//!   call that would be one more is answered with an error result and its
//!   downstream call cancelled.
//! - **Unforgeable, bound to the call.** The state is a random 128-bit id
//!   (the parked call's handle: knowing it is what lets a retry resume that
//!   call) and an HMAC-SHA256, under a key drawn when the process starts,
//!   over the id, the request's method, the tool's or prompt's name or the
//!   resource's URI, its arguments and the client's name. A
//!   state that does not verify for the retry (changed, issued for another
//!   call or client, or by an earlier process) is refused with `-32602`
//!   before any lookup; one that verifies but names no parked call (its wait
//!   ran out, or it was answered already: each state resumes once) is
//!   refused saying so.
//! - **Answers in the retry.** Each answer is read as the result its request
//!   asked for (`ElicitResult`, `CreateMessageResult`, `ListRootsResult`); a
//!   malformed one is refused (`-32602`) and the call stays parked under the
//!   same state; keys quiver did not ask are ignored; a key it asked that
//!   the retry lacks is asked again in the next `InputRequiredResult`.
//!   A declined or cancelled elicitation is an answer like any other and
//!   reaches the server as such.
// Sampling and roots are deprecated by SEP-2577, but a server behind quiver
// may still ask them, and an input request may carry them.
#![allow(deprecated)]

use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Weak};
use std::time::Duration;

use ring::hmac;
use rmcp::model::{
    ClientCapabilities, ClientResult, CreateMessageResult, ElicitResult, ErrorCode, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, ListRootsResult, LoggingLevel, ProgressToken, RequestId, ServerRequest,
    ServerResult,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::{ErrorData, ServiceError};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// How long after a server's request the next one still goes out in the
/// same round: a server's requests sent at once arrive within a millisecond
/// or two; each round a client is asked costs this much more.
const GATHER: Duration = Duration::from_millis(25);

/// How long a parked call waits for its retry, and how many may wait at once.
#[derive(Debug, Clone, Copy)]
pub struct InputLimits {
    pub wait: Duration,
    pub max_parked: usize,
}

impl Default for InputLimits {
    /// Five minutes: a person answers an elicitation form in that, as for a
    /// session's approval question (`approver::ANSWER_TIMEOUT`). 64 parked
    /// calls: each holds a downstream call open, and a client that never
    /// retries must not be able to hold more.
    fn default() -> Self {
        InputLimits { wait: Duration::from_secs(300), max_parked: 64 }
    }
}

/// One request of the downstream server, waiting for the client's answer.
pub(crate) struct Ask {
    request: InputRequest,
    answer: oneshot::Sender<ClientResult>,
}

/// The relay's way to ask a stateless client: the parked call's driver
/// (here) turns each ask into an input request.
#[derive(Clone)]
pub struct Asker {
    asks: mpsc::UnboundedSender<Ask>,
    /// What the client declared in the request's `_meta`: the relay refuses a
    /// request the client cannot answer, as for a session's client.
    pub capabilities: ClientCapabilities,
    route: Arc<Mutex<Route>>,
}

/// The HTTP request a stateless call is answering now (its first, then each
/// retry): progress and log messages go on that request's stream.
#[derive(Clone)]
pub struct Route {
    pub peer: Peer<RoleServer>,
    pub request_id: RequestId,
    pub progress_token: Option<ProgressToken>,
    /// The level the request's `_meta` asked log messages at; none without it
    /// (2026-07-28 has no session to keep a `logging/setLevel` in).
    pub log_level: Option<LoggingLevel>,
}

impl Route {
    pub fn of(context: &RequestContext<RoleServer>) -> Self {
        Route {
            peer: context.peer.clone(),
            request_id: context.id.clone(),
            progress_token: context.meta.get_progress_token(),
            log_level: context.meta.log_level(),
        }
    }
}

impl Asker {
    /// Asks the client `request` and waits for its answer (or for the call to
    /// be dropped: its wait ran out, or too many calls were parked).
    pub(crate) async fn ask(&self, request: ServerRequest) -> Result<ClientResult, ServiceError> {
        let request = match request {
            ServerRequest::ElicitRequest(r) => InputRequest::Elicitation(r),
            ServerRequest::CreateMessageRequest(r) => InputRequest::CreateMessage(r),
            ServerRequest::ListRootsRequest(r) => InputRequest::ListRoots(r),
            other => {
                let method = serde_json::to_value(&other).ok().and_then(|v| v["method"].as_str().map(str::to_string));
                return Err(ServiceError::McpError(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!(
                        "quiver cannot relay {} to a 2026-07-28 client: an input request is elicitation, sampling or \
                         roots only",
                        method.as_deref().unwrap_or("this request")
                    ),
                    None,
                )));
            }
        };
        let (answer, answered) = oneshot::channel();
        let gone = || {
            ServiceError::McpError(ErrorData::internal_error(
                "the 2026-07-28 client in front of quiver did not retry the call with an answer in time (or too \
                 many calls were waiting for input); the call was abandoned",
                None,
            ))
        };
        self.asks.send(Ask { request, answer }).map_err(|_| gone())?;
        answered.await.map_err(|_| gone())
    }

    /// The request the call is answering now.
    pub(crate) fn route(&self) -> Route {
        self.route.lock().clone()
    }
}

/// A channel for one call's asks: the asker goes into the call's upstream.
pub(crate) fn asker(capabilities: ClientCapabilities, route: Route) -> (Asker, Channel) {
    let (asks, receiver) = mpsc::unbounded_channel();
    let route = Arc::new(Mutex::new(route));
    (Asker { asks, capabilities, route: Arc::clone(&route) }, Channel { asks: receiver, route })
}

/// The driver's side of [`asker`]'s channel.
pub(crate) struct Channel {
    asks: mpsc::UnboundedReceiver<Ask>,
    route: Arc<Mutex<Route>>,
}

/// A stateless call in its own task, and the requests it is waiting on.
pub(crate) struct Parked {
    outcome: AbortOnDrop,
    asks: mpsc::UnboundedReceiver<Ask>,
    route: Arc<Mutex<Route>>,
    /// Asked and not answered yet, by the key the client was given.
    open: BTreeMap<String, Ask>,
    next_key: u64,
}

/// What a parked call's task ends with: the result of its request (a
/// `CallToolResult`, `GetPromptResult` or `ReadResourceResult`), or the
/// error the server behind (or quiver) answered it with.
pub(crate) type Outcome = Result<ServerResult, ErrorData>;

/// The call's task, aborted when dropped: an abandoned call's downstream call
/// is cancelled (its guard sends `notifications/cancelled`).
struct AbortOnDrop(tokio::task::JoinHandle<Outcome>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Parked {
    /// `call` (the dispatch or the relayed request, whose upstream holds the
    /// asker of `asks`) started in its own task.
    pub(crate) fn start<F>(call: F, channel: Channel) -> Self
    where
        F: std::future::Future<Output = Outcome> + Send + 'static,
    {
        let Channel { asks, route } = channel;
        Parked { outcome: AbortOnDrop(tokio::spawn(call)), asks, route, open: BTreeMap::new(), next_key: 1 }
    }

    /// The call now answers `route` (a retry).
    pub(crate) fn reroute(&self, route: Route) {
        *self.route.lock() = route;
    }

    fn add(&mut self, ask: Ask) {
        let kind = match &ask.request {
            InputRequest::Elicitation(_) => "elicitation",
            InputRequest::CreateMessage(_) => "sampling",
            InputRequest::ListRoots(_) => "roots",
            // Never built by `Asker::ask`; a name all the same.
            _ => "input",
        };
        self.open.insert(format!("{kind}-{}", self.next_key), ask);
        self.next_key += 1;
    }

    /// Every answer in `responses` read as its request's result, or the first
    /// that is not one; nothing is sent unless all are.
    fn read_answers(&self, responses: &InputResponses) -> Result<Vec<(String, ClientResult)>, ErrorData> {
        let mut answers = Vec::new();
        for (key, ask) in &self.open {
            let Some(value) = responses.get(key) else { continue };
            let read = |e: serde_json::Error, what: &str| {
                ErrorData::invalid_params(format!("inputResponses[\"{key}\"] is not {what}: {e}"), None)
            };
            let result = match &ask.request {
                InputRequest::Elicitation(_) => ClientResult::ElicitResult(
                    serde_json::from_value::<ElicitResult>(value.clone()).map_err(|e| read(e, "an ElicitResult"))?,
                ),
                InputRequest::CreateMessage(_) => ClientResult::CreateMessageResult(Box::new(
                    serde_json::from_value::<CreateMessageResult>(value.clone())
                        .map_err(|e| read(e, "a CreateMessageResult"))?,
                )),
                InputRequest::ListRoots(_) => ClientResult::ListRootsResult(
                    serde_json::from_value::<ListRootsResult>(value.clone())
                        .map_err(|e| read(e, "a ListRootsResult"))?,
                ),
                _ => continue,
            };
            answers.push((key.clone(), result));
        }
        Ok(answers)
    }

    fn send_answers(&mut self, answers: Vec<(String, ClientResult)>) {
        for (key, result) in answers {
            if let Some(ask) = self.open.remove(&key) {
                // The call may have ended meanwhile (its tool timed out): nobody to tell.
                let _ = ask.answer.send(result);
            }
        }
    }

    /// The requests still open, as the client is shown them.
    fn input_requests(&self) -> InputRequests {
        self.open.iter().map(|(key, ask)| (key.clone(), ask.request.clone())).collect()
    }
}

/// What a state is bound to: the call (its method, the tool, prompt or
/// resource it names, and its arguments) and the client. The method is part
/// of it so that a state cannot resume a call of another kind whose name and
/// arguments happen to match (its outcome would be another result).
pub(crate) struct Binding(Vec<u8>);

impl Binding {
    pub(crate) fn new(
        method: &str,
        name: &str,
        arguments: Option<&serde_json::Map<String, Value>>,
        client: &str,
    ) -> Self {
        let mut out = Vec::new();
        let arguments = canonical(&Value::Object(arguments.cloned().unwrap_or_default()));
        for part in [method.to_string(), name.to_string(), arguments, client.into()] {
            out.extend_from_slice(&(part.len() as u64).to_be_bytes());
            out.extend_from_slice(part.as_bytes());
        }
        Binding(out)
    }
}

/// `value` as JSON text with every object's keys sorted: a retry that sends
/// the same arguments in another key order is the same call.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let members: Vec<String> =
                keys.iter().map(|k| format!("{}:{}", Value::String((*k).clone()), canonical(&map[*k]))).collect();
            format!("{{{}}}", members.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// The calls parked for their client's retry (one per process, shared by
/// every stateless request).
pub struct InputRounds {
    key: hmac::Key,
    limits: InputLimits,
    parked: Mutex<HashMap<String, Parked>>,
    /// For the timers that drop a parked call whose wait ran out.
    me: Weak<InputRounds>,
}

impl InputRounds {
    pub fn new(limits: InputLimits) -> Arc<Self> {
        Arc::new_cyclic(|me| InputRounds {
            key: super::stateless_tail::process_key(),
            limits,
            parked: Mutex::default(),
            me: me.clone(),
        })
    }

    /// How many calls are parked now.
    pub fn parked(&self) -> usize {
        self.parked.lock().len()
    }

    fn mac(&self, id: &str, binding: &Binding) -> hmac::Tag {
        hmac::sign(&self.key, &signed(id, binding))
    }

    /// The parked call a retry's `state` names, taken out (each state resumes
    /// once), or why not.
    pub(crate) fn resume(&self, state: &str, binding: &Binding) -> Result<(String, Parked), ErrorData> {
        let forged = || {
            ErrorData::invalid_params(
                "requestState does not verify: this quiver did not issue it for this call (it was changed, or issued \
                 for another tool, other arguments or another client, or by a quiver since restarted)",
                None,
            )
        };
        let (id, mac) = state.split_once('.').ok_or_else(forged)?;
        let mac = hex::decode(mac).map_err(|_| forged())?;
        // `ring` compares in constant time.
        hmac::verify(&self.key, &signed(id, binding), &mac).map_err(|_| forged())?;
        let parked = self.parked.lock().remove(id).ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "requestState names no call waiting for input: it waited longer than {} for this retry, or \
                     was answered already (each requestState resumes its call once); call the tool again",
                    shown(self.limits.wait)
                ),
                None,
            )
        })?;
        Ok((id.to_string(), parked))
    }

    /// Parks `parked` under `id` until its wait runs out; `false` (and the
    /// call dropped, so cancelled) when the cap is reached.
    fn park(&self, id: &str, parked: Parked) -> bool {
        {
            let mut table = self.parked.lock();
            if table.len() >= self.limits.max_parked {
                return false;
            }
            table.insert(id.to_string(), parked);
        }
        let (me, id, wait) = (self.me.clone(), id.to_string(), self.limits.wait);
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            // A retry took it out already when it is not there.
            let expired = me.upgrade().and_then(|rounds| rounds.parked.lock().remove(&id));
            if expired.is_some() {
                tracing::info!("a call waiting for its client's input was abandoned after {}", shown(wait));
            }
        });
        true
    }

    /// Feeds a retry's answers to its parked call: `Err` (the call parked
    /// again under the same id) when an answer is malformed.
    pub(crate) fn answer(&self, id: &str, mut parked: Parked, responses: &InputResponses) -> Result<Parked, ErrorData> {
        match parked.read_answers(responses) {
            Ok(answers) => {
                parked.send_answers(answers);
                Ok(parked)
            }
            Err(e) => {
                if !self.park(id, parked) {
                    tracing::warn!("a parked call was dropped: too many calls are waiting for input");
                }
                Err(e)
            }
        }
    }

    /// Runs `parked` until it ends (its outcome) or waits on its client (an
    /// `InputRequiredResult`, the call parked under a new state); `ct` is the
    /// HTTP request's: a client gone mid-request abandons the call.
    pub(crate) async fn drive(&self, mut parked: Parked, binding: &Binding, ct: &CancellationToken) -> Round {
        if parked.open.is_empty() {
            tokio::select! {
                // An answer first: a call that asked and ended is over.
                biased;
                outcome = &mut parked.outcome.0 => {
                    return match outcome {
                        Ok(outcome) => Round::Ended(Box::new(outcome)),
                        Err(e) => Round::Stopped(format!("the call failed: {e}")),
                    };
                }
                Some(ask) = parked.asks.recv() => parked.add(ask),
                () = ct.cancelled() => return Round::Stopped("the call was cancelled by the client".into()),
            }
        }
        // Requests the server sent together go out together. They reach here
        // one by one, each from the task that handles it (and over a pipe
        // from the server), so what follows within `GATHER` of the last one
        // counts as sent with it: a client asked them in one round answers
        // them in one retry, where split rounds would make it retry for each.
        while let Ok(Some(ask)) = tokio::time::timeout(GATHER, parked.asks.recv()).await {
            parked.add(ask);
        }
        let requests = parked.input_requests();
        let id = new_id();
        let state = format!("{id}.{}", hex::encode(self.mac(&id, binding).as_ref()));
        if !self.park(&id, parked) {
            return Round::Stopped(format!(
                "the server behind quiver asked for input, but {} calls are already waiting for their clients' \
                 input; the call was cancelled (retry later)",
                self.limits.max_parked
            ));
        }
        Round::Asked(InputRequiredResult::new(Some(requests), Some(state)))
    }
}

/// How far [`InputRounds::drive`] took a call in one HTTP request.
#[derive(Debug)]
pub(crate) enum Round {
    /// It ended with its outcome (boxed: a result is large, and most rounds
    /// are not the last).
    Ended(Box<Outcome>),
    /// It waits for its client's answers, parked under the result's state.
    Asked(InputRequiredResult),
    /// It ended without an outcome, for this reason: its task failed, its
    /// client went away, or too many calls were waiting to park one more. A
    /// tool call says so in an error result, a prompt or a read as an error.
    Stopped(String),
}

/// `wait` for a message: whole seconds, or milliseconds below a second.
fn shown(wait: Duration) -> String {
    if wait >= Duration::from_secs(1) { format!("{} s", wait.as_secs()) } else { format!("{} ms", wait.as_millis()) }
}

/// What a state's MAC covers: a version tag, the id and the binding, each
/// part after its length (so no two splits sign alike).
fn signed(id: &str, binding: &Binding) -> Vec<u8> {
    let mut message = b"quiver-input-state-v1".to_vec();
    message.extend_from_slice(&(id.len() as u64).to_be_bytes());
    message.extend_from_slice(id.as_bytes());
    message.extend_from_slice(&binding.0);
    message
}

/// 128 random bits, hex: a parked call's handle.
fn new_id() -> String {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 16];
    if ring::rand::SystemRandom::new().fill(&mut bytes).is_err() {
        // A broken random source: still unique, and the MAC still binds it.
        static FALLBACK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = FALLBACK.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        bytes[..8].copy_from_slice(&n.to_be_bytes());
    }
    hex::encode(bytes)
}

#[cfg(test)]
#[path = "input_required_tests.rs"]
mod tests;
