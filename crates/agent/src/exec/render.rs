//! How a run's events are shown: `--json` prints one canonical JSON object a
//! line on stdout (a script's contract); human mode prints one line per tool
//! call (and retries, compactions) on stderr, keeping stdout for the answer.

use serde_json::{Value, json};

use crate::message::{StreamEvent, Usage};
use crate::run::{RunEvent, RunStatus};

pub fn usage_json(u: &Usage) -> Value {
    json!({
        "input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
        "cache_hit_tokens": u.cache_hit_tokens, "cache_miss_tokens": u.cache_miss_tokens,
        "cache_write_tokens": u.cache_write_tokens,
    })
}

/// A sum over requests: `null` when requests went unreported and none counted anything.
fn total_json(total: &Usage, unreported: u32) -> Value {
    if unreported > 0 && *total == Usage::default() { Value::Null } else { usage_json(total) }
}

pub fn status_str(status: &RunStatus) -> String {
    match status {
        RunStatus::Done => "done".into(),
        RunStatus::MaxTurns => "max_turns".into(),
        RunStatus::TokenBudget => "token_budget".into(),
        RunStatus::Stopped(reason) => format!(
            "stopped:{}",
            serde_json::to_value(reason).map_or_else(|_| "other".into(), |v| v.as_str().unwrap_or("other").to_string())
        ),
        RunStatus::Failed(_) => "failed".into(),
    }
}

/// The `--json` line for an event; `None` for events scripts do not get
/// (streamed deltas: the whole message follows as `model_message`).
pub fn json_event(event: &RunEvent) -> Option<Value> {
    Some(match event {
        RunEvent::SessionStarted { session_id, head_hash, head_tools } => {
            json!({"type": "session_started", "session_id": session_id, "head_hash": head_hash, "head_tools": head_tools})
        }
        RunEvent::TurnStarted { turn } => json!({"type": "turn_started", "turn": turn}),
        RunEvent::Delta(StreamEvent::Retrying { attempt, wait, reason }) => {
            json!({"type": "retrying", "attempt": attempt, "wait_ms": wait.as_millis() as u64, "reason": reason})
        }
        RunEvent::Delta(_) => return None,
        RunEvent::ModelMessage { text } => json!({"type": "model_message", "text": text}),
        RunEvent::ReasoningSummary { summary, chars } => {
            json!({"type": "reasoning_summary", "summary": summary, "chars": chars})
        }
        RunEvent::ToolCallBegun { id, name, .. } => json!({"type": "tool_call_begun", "id": id, "name": name}),
        RunEvent::ToolCallEnded { id, name, duration, error, child_usage, .. } => {
            let mut event = json!({
                "type": "tool_call_ended", "id": id, "name": name,
                "duration_ms": duration.as_secs_f64() * 1000.0, "error": error,
            });
            // Only tools that called a child model say so: other events keep their shape.
            if let (Some(usage), Value::Object(map)) = (child_usage, &mut event) {
                map.insert("child_usage".into(), usage.clone());
            }
            event
        }
        RunEvent::Usage { turn, usage, total, unreported, .. } => {
            // Unknown is `null`, never 0: some servers report no usage at all.
            let usage = usage.as_ref().map_or(Value::Null, usage_json);
            let mut v = json!({"type": "usage", "turn": turn, "usage": usage, "total": total_json(total, *unreported)});
            if *unreported > 0 {
                v["unreported_requests"] = json!(unreported);
            }
            v
        }
        RunEvent::Steered { text } => json!({"type": "steered", "text": text}),
        RunEvent::Compacted { turn, before_tokens, after_tokens } => json!({
            "type": "compaction", "turn": turn, "before_tokens": before_tokens, "after_tokens": after_tokens,
        }),
        RunEvent::TurnEnded { turn, finish_reason } => {
            json!({"type": "turn_ended", "turn": turn, "finish_reason": finish_reason})
        }
        RunEvent::SessionEnded { status, turns, usage, unreported } => {
            let usage = total_json(usage, *unreported);
            let mut v = json!({"type": "session_ended", "status": status_str(status), "turns": turns, "usage": usage});
            if *unreported > 0 {
                v["unreported_requests"] = json!(unreported);
            }
            if let RunStatus::Failed(message) = status {
                v["error"] = json!(message);
            }
            v
        }
    })
}

/// The human-mode stderr line for an event, if it gets one.
pub fn human_line(event: &RunEvent) -> Option<String> {
    match event {
        RunEvent::ToolCallEnded { name, duration, error, .. } => {
            let ms = duration.as_secs_f64() * 1000.0;
            Some(match error {
                None => format!("· {name} {ms:.0}ms"),
                Some(e) => format!("· {name} {ms:.0}ms error: {}", first_line(e)),
            })
        }
        RunEvent::Delta(StreamEvent::Retrying { attempt, wait, reason }) => {
            Some(format!("· retrying (attempt {attempt}) in {:.1}s: {}", wait.as_secs_f64(), first_line(reason)))
        }
        RunEvent::Compacted { before_tokens, after_tokens, .. } => {
            Some(format!("· compacted the conversation (~{before_tokens} → ~{after_tokens} tokens)"))
        }
        _ => None,
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}
