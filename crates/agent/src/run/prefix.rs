//! What a provider's prefix cache sees of a request, so every request can be
//! recorded with its size and the bytes it shares with the previous one.
//!
//! The linearization follows the order the wire's provider documents for its
//! prefix cache (see [`cache_order`]), each part as canonical JSON so the same
//! content always gives the same bytes; the scripted server keys its
//! cache-hit accounting the same way. Deferred tools (Anthropic's
//! `defer_loading`) are not part of the prompt and are left out.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::message::{ModelRequest, Usage};
use crate::provider::Wire;

/// One model request as the transcript records it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    pub turn: u32,
    pub request_hash: String,
    pub bytes: u64,
    /// `None` for the first request of a run (nothing to compare with).
    pub shared_prefix_bytes: Option<u64>,
    /// Whether tools and messages only append to the previous request's.
    pub extends_previous: Option<bool>,
    pub head_hash: String,
    pub tools: u64,
    pub tail: Vec<String>,
    /// `None` when the provider failed before answering.
    pub usage: Option<Usage>,
    /// What `bytes` and `shared_prefix_bytes` follow ([`cache_order`]).
    pub cache_order: &'static str,
}

/// The order a wire's prefix cache reads a request in, as recorded in the
/// transcript. A new wire must say its own (this match has no fallback).
pub fn cache_order(wire: Wire) -> &'static str {
    match wire {
        // "Tool use with prompt caching": tools, then system, then messages;
        // deferred tools are not in the prompt, a `tool_reference` brings its
        // definition in where it sits. Served up to the conversation's end
        // because the wire puts a breakpoint there (`anthropic::body`).
        Wire::Anthropic => "tools(not deferred)>system>messages",
        // Chat templates render the tool list into the prompt ahead of the
        // conversation (DeepSeek, llama.cpp, vLLM), so a changed list changes
        // everything after it; the system prompt is the first message.
        Wire::OpenAi => "tools>system>messages",
        // The Responses API: tools, instructions, then input; a client tool
        // search's loaded definitions ride in input (`tool_search_output`),
        // where the API injects them, so `tools` stays as it was.
        Wire::Responses => "tools>instructions>input",
    }
}

/// The request's bytes in its wire's cache order, one element a line (so a
/// request that only appends shares every byte of the previous one).
pub fn linearize(wire: Wire, request: &ModelRequest) -> String {
    match wire {
        Wire::OpenAi => tools_system_messages(request),
        Wire::Anthropic => messages_body_blocks(request),
        Wire::Responses => responses_body_lines(request),
    }
}

/// The Messages body as the wire builds it (a loaded tool's definition
/// comes in by reference, the search's text shortened beside it), as its
/// cache keys it ([`super::cache_key`]).
fn messages_body_blocks(request: &ModelRequest) -> String {
    super::cache_key::Keyed::of_messages(&crate::anthropic::request_body(request, None)).text
}

/// The Responses body as the wire builds it (where a loaded tool goes
/// depends on the model), its tools, instructions and input items a line each.
fn responses_body_lines(request: &ModelRequest) -> String {
    let body = crate::responses::request_body(request, &crate::responses::ResponsesDialect::default(), false);
    let mut out = String::new();
    for key in ["tools", "instructions", "input"] {
        let parts = match &body[key] {
            Value::Array(items) => items.clone(),
            Value::Null => Vec::new(),
            other => vec![other.clone()],
        };
        for part in &parts {
            out.push_str(&quiver_engine::canonical::to_string(part));
            out.push('\n');
        }
    }
    out
}

fn tools_system_messages(request: &ModelRequest) -> String {
    let mut out = String::new();
    for tool in &crate::deferred::prompt_tools(request) {
        out.push_str(&quiver_engine::canonical::to_string(tool));
        out.push('\n');
    }
    out.push_str(&quiver_engine::canonical::to_string(&Value::String(request.system.clone())));
    out.push('\n');
    for message in &request.messages {
        out.push_str(&quiver_engine::canonical::to_string(&serde_json::to_value(message).unwrap_or(Value::Null)));
        out.push('\n');
    }
    out
}

/// Whether `now` only appends to `before`: the same tools first (head, then
/// the earlier tail) and the same messages first. Every request but the one
/// after a compaction must, so the provider's prefix cache can serve all the
/// previous request sent (`quiver audit` counts each one that does not).
pub fn extends(before: &ModelRequest, now: &ModelRequest) -> bool {
    let starts = |a: &[Value], b: &[Value]| b.len() >= a.len() && b[..a.len()] == *a;
    starts(&crate::deferred::prompt_tools(before), &crate::deferred::prompt_tools(now))
        && before.system == now.system
        && now.messages.len() >= before.messages.len()
        && now.messages[..before.messages.len()] == before.messages[..]
}

pub fn sha256(bytes: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes.as_bytes())))
}

pub fn shared_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

/// Tokens for `bytes` at about four bytes a token (English text and JSON in
/// common tokenizers); used only to decide when to compact, never billed.
pub fn estimate_tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}
