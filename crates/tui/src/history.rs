//! A resumed session's conversation as transcript cells: what the person
//! said, each answer, each tool call with its recorded result.

use std::collections::HashMap;

use quiver_agent::message::Message;

use crate::app::App;
use crate::cells::{CellKind, ToolCell, ToolStatus};

pub fn show(app: &mut App, history: &[Message]) {
    let results: HashMap<&str, (&str, bool)> = history
        .iter()
        .filter_map(|m| match m {
            Message::Tool { call_id, content, is_error, .. } => Some((call_id.as_str(), (content.as_str(), *is_error))),
            _ => None,
        })
        .collect();
    for message in history {
        match message {
            Message::User { text } => {
                app.transcript.push(CellKind::User { text: text.clone(), steered: false });
            }
            Message::Assistant { text, tool_calls, .. } => {
                if !text.is_empty() {
                    app.transcript.push(CellKind::Assistant { text: text.clone(), streaming: false });
                }
                for call in tool_calls {
                    let (output, failed) = results.get(call.id.as_str()).copied().unwrap_or(("", false));
                    app.transcript.push(CellKind::Tool(ToolCell {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                        status: if failed { ToolStatus::Failed } else { ToolStatus::Done },
                        duration: None,
                        output: output.to_string(),
                    }));
                }
            }
            Message::System { .. } | Message::Tool { .. } => {}
        }
    }
}
