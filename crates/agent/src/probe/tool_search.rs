//! The Responses wire's way of loading a tool without touching `tools`:
//! whether the server takes the client-executed `tool_search` tool
//! (`{"type": "tool_search", "execution": "client"}`) and a
//! `tool_search_output` item carrying a deferred definition, as OpenAI's
//! "Tool search" guide documents and `quiver exec` sends on gpt-5.4 and
//! later. One request, rendered by the wire's own body builder: a user's
//! ask, the model's search call, and the search's output delivering one
//! tool that `tools` does not declare; the model is asked to call it.
//!
//! Accepting the shapes is not support (a proxy may drop items it does not
//! know): only a call of the delivered tool shows its definition reached the
//! model. A refusal (4xx) is learned, and the wire then sends `tool_search`
//! as an ordinary function and appends loaded tools, as for older models.

use serde_json::{Value, json};

use super::client::one_line;
use super::deferred::deferred_tool;
use super::{Check, Probe, Status};
use crate::message::{Effort, Message, ModelRequest, ToolCall};
use crate::responses::{ResponsesDialect, TOOL_SEARCH, client_tool_search, parse_response, reasons, request_body};

/// The path of the Responses API, beside the base URL's `/chat/completions`.
const PATH: &str = "/responses";

/// The answer's `max_output_tokens`.
const REASONING_TOKENS: u32 = 512;

/// The search call's id in the probe's conversation.
const SEARCH_CALL: &str = "probe_search_1";

/// The probe's request: the conversation after a search that loaded the
/// deferred tool, as the Responses wire renders it with the client search.
pub(super) fn request(model: &str) -> Value {
    let deferred = deferred_tool();
    let name = deferred["name"].as_str().unwrap_or_default().to_string();
    let chat = |name: &str, description: &str, parameters: Value| json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}});
    let search_parameters = json!({"type": "object", "properties": {"query": {"type": "string",
        "description": "What you need to do, in words."}}, "required": ["query"]});
    let mut req = ModelRequest::new(model);
    req.tools = json!([
        chat(TOOL_SEARCH, "Find and load more tools. Matches become callable on your next request.", search_parameters),
        chat(&name, deferred["description"].as_str().unwrap_or_default(), deferred["input_schema"].clone()),
    ]);
    req.head_len = 1;
    let ask = format!(
        "Find a tool that reports a repository's commit activity, then call it for the repository quiver/quiver \
         (it is called {name})."
    );
    let search = ToolCall {
        id: SEARCH_CALL.into(),
        name: TOOL_SEARCH.into(),
        arguments: quiver_engine::canonical::to_string(&json!({"query": "commit activity report"})),
    };
    // The engine's search result shape: what it loaded is in `metadata.loaded`.
    let result = json!({"content": {"matches": [{"name": name, "status": "loaded"}],
        "nextInstruction": format!("Loaded `{name}`. Call it by name.")},
        "is_error": false, "metadata": {"loaded": [name]}});
    req.messages = vec![
        Message::user(ask),
        Message::Assistant {
            text: String::new(),
            reasoning: None,
            reasoning_signature: None,
            tool_calls: vec![search],
        },
        Message::tool_result(SEARCH_CALL, quiver_engine::canonical::to_string(&result), false),
    ];
    // A reasoning model spends output tokens before it calls: room for a
    // short reasoning at low effort, so an unfinished answer is not read as
    // a model that would not call.
    req.max_output_tokens = Some(REASONING_TOKENS);
    if reasons(model) {
        req.effort = Some(Effort::Low);
    }
    let dialect = ResponsesDialect { client_tool_search: Some(true), ..ResponsesDialect::default() };
    request_body(&req, &dialect, false)
}

pub(super) async fn tool_search(p: &mut Probe<'_>) {
    let row = Check::DeferredTools;
    if p.blocked(row) {
        return;
    }
    let body = request(&p.target.model);
    let name = deferred_tool()["name"].as_str().unwrap_or_default().to_string();
    let reply = match p.client.post(PATH, &body).await {
        Ok(reply) => reply,
        Err(e) => return p.set(row, Status::No, format!("POST {PATH}: {}", one_line(&e, 200)), None),
    };
    let took = Some(reply.elapsed);
    // The wire uses the client search on tool-search models only.
    let by_model = if client_tool_search(&p.target.model) {
        ""
    } else {
        " (quiver uses it from gpt-5.4 on; this model gets `tool_search` as a function)"
    };
    if !reply.ok() {
        if (400..500).contains(&reply.status) || reply.said().invalid_body {
            p.learned.tool_search = Some(false);
        }
        let detail = format!("the client-executed `tool_search` is refused: {}{by_model}", reply.refusal());
        return p.set(row, Status::No, detail, took);
    }
    let answer = reply.json().ok_or_else(|| "the answer is not JSON".to_string()).and_then(|v| parse_response(&v));
    match answer {
        Ok(response) if response.tool_calls.iter().any(|c| c.name == name) => {
            p.learned.tool_search = Some(true);
            let detail = format!(
                "client-executed `tool_search`: the model called `{name}`, which only a `tool_search_output` delivered{by_model}"
            );
            p.set(row, Status::Ok, detail, took);
        }
        Ok(response) => {
            let did = match response.tool_calls.first() {
                Some(call) => format!("called `{}` instead", call.name),
                None => format!("answered \"{}\"", one_line(&response.text, 60)),
            };
            let detail = format!(
                "cannot tell: the client-executed `tool_search` and its output were accepted, but the model {did}, \
                 not the tool the output delivered{by_model}"
            );
            p.set(row, Status::NotApplicable, detail, took);
        }
        Err(e) => {
            let detail = format!("cannot tell: accepted, but the answer is not a response: {}", one_line(&e, 160));
            p.set(row, Status::NotApplicable, detail, took);
        }
    }
}
