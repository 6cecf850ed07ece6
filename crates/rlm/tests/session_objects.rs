//! `rlm_session_objects` and `rlm_open {session_object}` over a real transcript.

use std::sync::Arc;

use quiver_agent::{Message, ToolCall};
use quiver_engine::transcript::{Event, TranscriptWriter};
use serde_json::json;

use crate::support::{plain, python};

fn record(writer: &TranscriptWriter, message: &Message) {
    let role = match message {
        Message::System { .. } => "system",
        Message::User { .. } => "user",
        Message::Assistant { .. } => "assistant",
        Message::Tool { .. } => "tool",
    };
    writer.append(&Event::Message { role: role.into(), content: serde_json::to_value(message).unwrap() }).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_active_transcript_loads_with_thinking_and_large_results_as_metadata() {
    if !python() {
        return;
    }
    let mut h = plain();
    let r = h.err("rlm_session_objects", json!({})).await;
    assert!(r.content_text().contains("records no transcript"), "{}", r.content_text());

    let writer = Arc::new(TranscriptWriter::open(h.dir.path().join("t.jsonl")).unwrap());
    let big = format!("BIGRESULT{}", "x".repeat(50_000));
    record(&writer, &Message::user("find the bug in parser.rs"));
    record(
        &writer,
        &Message::Assistant {
            text: "Reading it.".into(),
            reasoning: Some("SECRET-THOUGHTS ".repeat(100)),
            reasoning_signature: None,
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: "{\"path\":\"parser.rs\"}".into(),
            }],
        },
    );
    record(&writer, &Message::tool_result("c1", big.clone(), false));
    record(&writer, &Message::assistant_text("Line 12 is off by one."));
    record(&writer, &Message::user("fix it please"));
    h.ctx.transcript = Some(writer);

    let cards = h.ok("rlm_session_objects", json!({})).await;
    let refs: Vec<&str> = cards["objects"].as_array().unwrap().iter().map(|c| c["ref"].as_str().unwrap()).collect();
    assert_eq!(
        &refs[..3],
        ["session://active/system_prompt", "session://active/transcript", "session://active/latest_user_message"]
    );
    assert!(refs.contains(&"session://active/messages/4"));
    assert!(cards.to_string().len() < 3000, "cards stay compact: {}", cards.to_string().len());
    assert!(!cards.to_string().contains(&"x".repeat(200)));

    let meta = h.ok("rlm_open", json!({"name": "t", "session_object": "session://active/transcript"})).await;
    assert_eq!(meta["type"], "list");
    assert_eq!(meta["items"], 5);
    let out = h
        .eval_ok(
            "t",
            "import json\nraw = json.dumps(_context)\n(len(_context), 'x' * 500 in raw, 'SECRET-THOUGHTS' in raw, _context[2]['large_result'], _context[2]['chars'], _context[1]['thinking'])",
        )
        .await;
    assert_eq!(out["value"], "(5, False, False, True, 50009, {'chars': 1600})");

    h.ok("rlm_open", json!({"name": "u", "session_object": "session://active/latest_user_message"})).await;
    assert_eq!(h.eval_ok("u", "_context").await["value"], "'fix it please'");
    h.ok("rlm_open", json!({"name": "m", "session_object": "session://active/messages/2"})).await;
    assert_eq!(h.eval_ok("m", "len(_context['text'])").await["value"], "50009");
    h.ok("rlm_open", json!({"name": "p", "session_object": "session://active/system_prompt"})).await;
    assert!(h.eval_ok("p", "_context.startswith('You are quiver')").await["value"] == "True");

    let r = h.err("rlm_open", json!({"name": "x", "session_object": "session://active/messages/9"})).await;
    assert!(r.content_text().contains("has 5 messages"), "{}", r.content_text());
    let r = h.err("rlm_open", json!({"name": "x", "session_object": "file:///etc/passwd"})).await;
    assert!(r.content_text().contains("refs start with session://active/"), "{}", r.content_text());
}
