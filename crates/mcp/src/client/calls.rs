//! One downstream `tools/call`, with the relay wired: the upstream call this
//! task serves (if any) gets the downstream progress, and a call dropped
//! before its answer (upstream cancel, tool timeout) is cancelled downstream.
//! `prompts/get` and `resources/read` take the same path through rmcp
//! ([`rounds`]): a server may ask its client something before it answers
//! those too.
//!
//! Two ways to make it: through rmcp ([`typed`], for HTTP servers), or on a
//! stdio server's raw lane ([`raw`]), whose answer is the server's own JSON
//! text, passed on without a parse into rmcp's types and a re-serialization.

use std::sync::{Arc, LazyLock};

use memchr::memmem::Finder;

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, DEFAULT_MRTR_MAX_ROUNDS, GetPromptRequest,
    GetPromptRequestParams, GetPromptResult, InputResponses, NumberOrString, ProgressToken, ReadResourceRequest,
    ReadResourceRequestParams, ReadResourceResult, RequestParamsMeta, ServerResult, Tool,
};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::child_lane::{RawAnswer, RawId, RawLane};
use super::connect::Connection;
use crate::relay::{self, CancelOnDrop};

/// Why a call has no result.
pub(crate) enum Failure {
    /// The server's connection closed (it exited, or its pipe broke).
    Closed,
    /// A JSON-RPC error answer: its message.
    Rejected(String),
    /// A task answer (the tasks extension), or a multi-round one on a
    /// session's raw lane, which quiver does not drive.
    NotComplete,
    /// Anything else that is not a `CallToolResult`.
    Unusable(String),
}

/// Through rmcp: the result as rmcp read it, serialized back to JSON text.
pub(crate) async fn typed(conn: &Connection, params: CallToolRequestParams) -> Result<Arc<String>, Failure> {
    match rounds(conn, params).await {
        Ok(Answer::Complete(result)) => {
            serde_json::to_string(&result).map(Arc::new).map_err(|e| Failure::Unusable(e.to_string()))
        }
        Ok(Answer::Task) => Err(Failure::NotComplete),
        Err(e) => Err(failure(e)),
    }
}

/// How a call through rmcp ended.
pub(crate) enum Answer<T = CallToolResult> {
    Complete(T),
    /// A task (the tasks extension), which quiver does not drive.
    Task,
}

/// A request a 2026-07-28 server may answer with an `InputRequiredResult`
/// (SEP-2322 allows it for these three) and that [`rounds`] makes again with
/// the answers.
pub(crate) trait Rounded: Clone {
    /// Its final result.
    type Complete;
    fn request(self) -> ClientRequest;
    /// The next round's request carries the answers and the server's state.
    fn answered(&mut self, answers: InputResponses, state: Option<String>);
    /// The final result out of rmcp's union (`None`: another request's).
    fn complete(result: ServerResult) -> Option<Self::Complete>;
}

/// The three requests share their round fields (`input_responses`,
/// `request_state`) by name only, not by a trait of rmcp's.
macro_rules! rounded {
    ($params:ty, $request:ident, $result:ident) => {
        impl Rounded for $params {
            type Complete = $result;
            fn request(self) -> ClientRequest {
                ClientRequest::$request($request::new(self))
            }
            fn answered(&mut self, answers: InputResponses, state: Option<String>) {
                self.input_responses = Some(answers);
                self.request_state = state;
            }
            fn complete(result: ServerResult) -> Option<$result> {
                match result {
                    ServerResult::$result(result) => Some(result),
                    _ => None,
                }
            }
        }
    };
}

rounded!(CallToolRequestParams, CallToolRequest, CallToolResult);
rounded!(GetPromptRequestParams, GetPromptRequest, GetPromptResult);
rounded!(ReadResourceRequestParams, ReadResourceRequest, ReadResourceResult);

/// One request through rmcp, every round of it. A 2026-07-28 server that asks
/// the client something mid-call answers with an `InputRequiredResult`: its
/// requests are answered through the relay (the client in front, as in a
/// session; quiver itself when nobody is, see `connect::LocalAnswers`) and
/// the call is made again, under a new id, with the answers and the
/// server's `requestState` as it sent it, for at most
/// [`DEFAULT_MRTR_MAX_ROUNDS`] rounds.
pub(crate) async fn rounds<R: Rounded>(conn: &Connection, mut params: R) -> Result<Answer<R::Complete>, ServiceError> {
    let peer = conn.service.peer().clone();
    // In flight before the request goes out: the server may ask the client
    // something (elicitation, sampling) or report progress before this task
    // runs again, and must find the call it belongs to.
    let mut in_flight = relay::current().map(|up| conn.relay.enter(up, None));
    for _ in 0..DEFAULT_MRTR_MAX_ROUNDS {
        let request = params.clone().request();
        let handle = peer.send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options()).await?;
        if let Some(guard) = in_flight.as_mut() {
            guard.track_progress(handle.progress_token.clone());
        }
        let mut cancel = CancelOnDrop { peer: peer.clone(), id: handle.id.clone(), done: false };
        let response = handle.await_response().await;
        cancel.done = true;
        // Progress and log messages the server sent before its answer go up first.
        conn.relay.forwards_settled().await;
        match response? {
            ServerResult::InputRequiredResult(asked) => {
                let requests = asked.input_requests.unwrap_or_default();
                let answers = conn.service.service().answer_inputs(requests).await.map_err(ServiceError::McpError)?;
                params.answered(answers, asked.request_state);
            }
            ServerResult::CreateTaskResult(_) => return Ok(Answer::Task),
            other => return R::complete(other).map(Answer::Complete).ok_or(ServiceError::UnexpectedResponse),
        }
    }
    Err(ServiceError::McpError(rmcp::ErrorData::internal_error(
        format!(
            "the server asked for input more than {DEFAULT_MRTR_MAX_ROUNDS} times in one call; quiver gave up on it"
        ),
        None,
    )))
}

fn failure(e: ServiceError) -> Failure {
    match e {
        ServiceError::TransportClosed => Failure::Closed,
        ServiceError::McpError(e) => Failure::Rejected(e.message.to_string()),
        other => Failure::Unusable(other.to_string()),
    }
}

/// On the raw lane: the request is written as rmcp would write it, with the
/// raw id as its progress token; the answer is the server's `result` text.
pub(crate) async fn raw(
    conn: &Connection,
    lane: &Arc<RawLane>,
    mut params: CallToolRequestParams,
) -> Result<Arc<String>, Failure> {
    let id = lane.new_id();
    let token = progress_token(&id);
    params.set_progress_token(token.clone());
    let line = RawLane::request_line(&id, "tools/call", &params).map_err(|e| Failure::Unusable(e.to_string()))?;
    exchange(conn, lane, id, line, Some(token)).await
}

/// The `tools/call` line for raw request `id` with the client's arguments
/// as it wrote them (`arguments`, a JSON object's text): what a gateway
/// relays unchanged. With `progress` the raw id goes down as the progress
/// token (as [`raw`] sends it), else no `_meta` at all (the client asked
/// for no progress).
pub(crate) fn write_call_line(line: &mut Vec<u8>, id: &str, tool: &str, arguments: &str, progress: bool) {
    // A raw id is the prefix and a number: nothing to escape.
    line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":\"");
    line.extend_from_slice(id.as_bytes());
    line.extend_from_slice(b"\",\"method\":\"tools/call\",\"params\":{");
    if progress {
        line.extend_from_slice(b"\"_meta\":{\"progressToken\":\"");
        line.extend_from_slice(id.as_bytes());
        line.extend_from_slice(b"\"},");
    }
    line.extend_from_slice(b"\"name\":");
    crate::lines::write_json_string(line, tool);
    line.extend_from_slice(b",\"arguments\":");
    line.extend_from_slice(arguments.as_bytes());
    line.extend_from_slice(b"}}\n");
}

/// The progress token a raw request `id` goes down with.
pub(crate) fn progress_token(id: &RawId) -> ProgressToken {
    ProgressToken(NumberOrString::String(Arc::clone(id)))
}

/// Sends `line` (request `id`) and waits for its answer, with the relay
/// wired for the upstream call this task serves.
async fn exchange(
    conn: &Connection,
    lane: &Arc<RawLane>,
    id: RawId,
    line: Vec<u8>,
    progress: Option<ProgressToken>,
) -> Result<Arc<String>, Failure> {
    // In flight before the request goes out (see `typed`).
    let _in_flight = relay::current().map(|up| conn.relay.enter(up, progress));
    let call = lane.send(id, &line).await.map_err(|_| Failure::Closed)?;
    let mut cancel = CancelOnDrop {
        peer: conn.service.peer().clone(),
        id: NumberOrString::String(Arc::clone(call.id())),
        done: false,
    };
    let answer = call.answer().await;
    cancel.done = true;
    conn.relay.forwards_settled().await;
    outcome_of(answer)
}

/// A raw answer as a call's outcome (`None`: the server closed first).
pub(crate) fn outcome_of(answer: Option<RawAnswer>) -> Result<Arc<String>, Failure> {
    match answer {
        None => Err(Failure::Closed),
        Some(RawAnswer::Error(error)) => Err(Failure::Rejected(
            error.get("message").and_then(serde_json::Value::as_str).unwrap_or("(no message)").to_string(),
        )),
        Some(RawAnswer::Result(result)) => {
            check_complete(result.get())?;
            Ok(Arc::new(result.get().to_string()))
        }
    }
}

/// A raw result must be a complete `CallToolResult`: an object, not a
/// multi-round or task answer.
pub(crate) fn check_complete(result: &str) -> Result<(), Failure> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Shape {
        #[serde(default)]
        result_type: Option<String>,
        #[serde(default)]
        task: Option<serde::de::IgnoredAny>,
    }
    if !result.trim_start().starts_with('{') {
        return Err(Failure::Unusable("the result is not an object".into()));
    }
    // Most answers name neither: no second parse of the whole text for them.
    // (The finders are built once: building one costs as much as a search.)
    static RESULT_TYPE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("\"resultType\""));
    static TASK: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("\"task\""));
    if RESULT_TYPE.find(result.as_bytes()).is_none() && TASK.find(result.as_bytes()).is_none() {
        return Ok(());
    }
    let shape: Shape =
        serde_json::from_str(result).map_err(|e| Failure::Unusable(format!("the result is not an object: {e}")))?;
    if shape.task.is_some() || shape.result_type.as_deref().is_some_and(|t| t != "complete") {
        return Err(Failure::NotComplete);
    }
    Ok(())
}

/// `tools/list`, every page, on the raw lane: each tool as rmcp reads it and
/// as the server wrote it. An entry rmcp cannot read is left out (as rmcp
/// would fail the whole list); at most `max` tools, at most 100 pages (a
/// server that keeps answering with a cursor must not hold this forever).
pub(crate) async fn list_tools_raw(lane: &Arc<RawLane>, max: usize) -> Result<Vec<(Tool, Option<Arc<str>>)>, String> {
    #[derive(serde::Serialize)]
    struct Params<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        cursor: Option<&'a str>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Page {
        tools: Vec<Box<RawValue>>,
        #[serde(default)]
        next_cursor: Option<String>,
    }
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let call = lane
            .request(lane.new_id(), "tools/list", &Params { cursor: cursor.as_deref() })
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        let page = match call.answer().await {
            Some(RawAnswer::Result(page)) => page,
            Some(RawAnswer::Error(error)) => return Err(format!("tools/list failed: {error}")),
            None => return Err("tools/list failed: the server closed its output".into()),
        };
        let page: Page = serde_json::from_str(page.get()).map_err(|e| format!("tools/list failed: {e}"))?;
        for raw in page.tools {
            match serde_json::from_str::<Tool>(raw.get()) {
                Ok(tool) => out.push((tool, Some(Arc::from(raw.get())))),
                Err(e) => tracing::warn!(error = %e, "a tool entry quiver cannot read was left out"),
            }
        }
        cursor = page.next_cursor;
        if cursor.is_none() || out.len() >= max {
            break;
        }
    }
    Ok(out)
}
