//! Continuing a recorded session: the history is rebuilt from the transcript's
//! `message` events (recorded in full by the loop), restarting at each
//! compaction, and the loaded tools come from its load/unload/compaction
//! events, so the next request's prefix is byte-identical to where it stopped.

use std::path::Path;

use quiver_engine::LazyToolState;
use quiver_engine::transcript::{Event, Transcript};

use crate::message::Message;

pub struct Resumed {
    pub session_id: String,
    pub messages: Vec<Message>,
    pub lazy: LazyToolState,
    pub mode: Option<String>,
    pub workspace: Option<String>,
}

pub fn read(path: &Path) -> anyhow::Result<Resumed> {
    let transcript = Transcript::read(path)?;
    let (session_id, mode, workspace) = match transcript.start() {
        Some(Event::SessionStart { session, mode, workspace, .. }) => {
            (session.clone(), Some(mode.clone()), Some(workspace.clone()))
        }
        _ => anyhow::bail!("{} has no session start: not a quiver session transcript", path.display()),
    };
    Ok(Resumed { session_id, messages: history(&transcript), lazy: transcript.lazy_state(), mode, workspace })
}

/// The conversation as the model last saw it. A trailing assistant turn whose
/// tool calls have no results (the run was cut off mid-call) is dropped, so
/// the resumed request is one a provider accepts.
pub fn history(transcript: &Transcript) -> Vec<Message> {
    let mut messages = Vec::new();
    for event in &transcript.events {
        match event {
            Event::Compaction => messages.clear(),
            Event::Message { content, .. } => {
                if let Ok(message) = serde_json::from_value::<Message>(content.clone()) {
                    messages.push(message);
                }
            }
            _ => {}
        }
    }
    while let Some(Message::Assistant { tool_calls, .. }) = messages.last() {
        if tool_calls.is_empty() {
            break;
        }
        messages.pop();
    }
    // Results of a partly answered turn: drop the dangling ones with their turn.
    if let Some(pos) =
        messages.iter().rposition(|m| matches!(m, Message::Assistant { tool_calls, .. } if !tool_calls.is_empty()))
    {
        let answered = messages[pos + 1..].iter().filter(|m| matches!(m, Message::Tool { .. })).count();
        if let Message::Assistant { tool_calls, .. } = &messages[pos]
            && answered < tool_calls.len()
        {
            messages.truncate(pos);
        }
    }
    messages
}
