//! Scenarios of the agent's own surface on a real server: a deprecated alias
//! called by its old name, and a sub-agent opened and evaluated.

use serde_json::{Value, json};

use super::proxy::{Force, is_subagent_request};
use super::{Outcome, Rig, Via, events, fail};

/// The model calls `todo_list`, the deprecated alias of `checklist_list`
/// (never in `tools`: the test-side pass-through adds its definition to
/// that one request, as an old transcript's model would have had it).
/// quiver dispatches it to the replacement and tells the model so.
pub(crate) async fn deprecated_alias(rig: &Rig, via: Via) -> Outcome {
    let from = rig.proxy.seen().len();
    let no_arguments = json!({"type": "object", "properties": {}});
    rig.proxy.plan([Force::Shaped("todo_list".into(), no_arguments), Force::Text]);
    let out = rig.exec(via, &["Show my todo list."]).await;
    let events = events(&out);
    if out.status.code() != Some(0) {
        return fail("the run did not finish", Some(&out));
    }
    let ended: Vec<(&str, bool)> = events
        .iter()
        .filter(|e| e["type"] == "tool_call_ended")
        .map(|e| (e["name"].as_str().unwrap_or_default(), e["error"].is_null()))
        .collect();
    if ended != [("todo_list", true)] {
        return fail(format!("expected one todo_list call without error, got {ended:?}"), Some(&out));
    }
    let chats = rig.proxy.chats_since(from);
    let Some(second) = chats.get(1) else { return fail(format!("{} chat requests", chats.len()), Some(&out)) };
    let messages = second.body["messages"].as_array().cloned().unwrap_or_default();
    let result = messages.iter().find(|m| m["role"] == "tool").map(|m| m["content"].to_string()).unwrap_or_default();
    if !result.contains("_deprecation") || !result.contains("checklist_list") {
        return fail(format!("the result carries no deprecation notice naming checklist_list: {result}"), Some(&out));
    }
    // The alias never entered the tools; the head stayed, and the replacement
    // (loaded by the call, so the model learns the new name) rides in the tail.
    let quiver_tools = |body: &Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.pointer("/function/name")?.as_str().map(str::to_string))
            .filter(|n| n != "todo_list")
            .collect()
    };
    let (before, after) = (quiver_tools(&chats[0].body), quiver_tools(&second.body));
    if !after.starts_with(&before) || after.iter().any(|n| n == "todo_list") {
        return fail(format!("the head changed between the two requests: {before:?} then {after:?}"), Some(&out));
    }
    if chats.iter().any(|c| c.status != 200) {
        return fail(format!("a request was refused: {:?}", chats.iter().map(|c| c.status).collect::<Vec<_>>()), None);
    }
    super::scenarios::audited(rig).map(|_| ())
}

/// The parent opens an explore sub-agent, then waits for it with
/// `agent_eval`; the child's own requests reach the same server (answered in
/// text: the pass-through routes them by their system prompt) and its
/// answer, contract or not, comes back to the parent as a finished agent.
pub(crate) async fn subagent(rig: &Rig, via: Via) -> Outcome {
    let from = rig.proxy.seen().len();
    let open = json!({
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "enum": ["Say what notes.txt is for, in one sentence."]},
            "type": {"type": "string", "enum": ["explore"]},
            "name": {"type": "string", "enum": ["scout"]}
        },
        "required": ["prompt", "type", "name"]
    });
    let eval = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "enum": ["scout"]},
            "block": {"type": "boolean", "enum": [true]},
            "timeout_ms": {"type": "integer", "enum": [300000]}
        },
        "required": ["name", "block", "timeout_ms"]
    });
    rig.proxy.plan([Force::Shaped("agent_open".into(), open), Force::Shaped("agent_eval".into(), eval), Force::Text]);
    let before = rig.sessions().len();
    let out = rig.exec(via, &["Ask a sub-agent what notes.txt is for."]).await;
    let events = events(&out);
    if out.status.code() != Some(0) {
        return fail("the run did not finish", Some(&out));
    }
    let parent: Vec<&Value> = events.iter().filter(|e| e["agent_id"].is_null()).collect();
    let ended: Vec<(&str, bool)> = parent
        .iter()
        .filter(|e| e["type"] == "tool_call_ended")
        .map(|e| (e["name"].as_str().unwrap_or_default(), e["error"].is_null()))
        .collect();
    if ended != [("agent_open", true), ("agent_eval", true)] {
        return fail(format!("expected agent_open then agent_eval, got {ended:?}"), Some(&out));
    }
    let child_events = events.iter().filter(|e| e["agent_id"] == "agent-1").count();
    let chats = rig.proxy.chats_since(from);
    let (child_chats, parent_chats): (Vec<_>, Vec<_>) = chats.iter().partition(|c| is_subagent_request(&c.body));
    if child_events == 0 || child_chats.is_empty() {
        return fail(format!("the child made {} requests and {child_events} events", child_chats.len()), Some(&out));
    }
    // The parent's last request holds agent_eval's answer: the child finished.

    let evaluated = parent_chats
        .last()
        .and_then(|c| c.body["messages"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .nth(1)
        .unwrap_or_default();
    if !evaluated.contains("\"completed\"") {
        return fail(format!("agent_eval did not see the child finish: {evaluated}"), Some(&out));
    }
    if rig.sessions().len() < before + 2 {
        return fail("expected a transcript for the parent and one for the child", Some(&out));
    }
    if chats.iter().any(|c| c.status != 200) {
        return fail(format!("a request was refused: {:?}", chats.iter().map(|c| c.status).collect::<Vec<_>>()), None);
    }
    // The parent's transcript (the newest session that is not the child's).
    let parent_session = rig
        .sessions()
        .into_iter()
        .rev()
        .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("Ask a sub-agent what notes.txt is for.")))
        .ok_or_else(|| "no parent transcript".to_string())?;
    super::scenarios::audit(&parent_session).map(|_| ())
}
