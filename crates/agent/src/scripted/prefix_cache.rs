//! What each provider's prefix cache serves of a request, as documented, so
//! the scripted server's cache hits (and the benchmarks built on them) never
//! count bytes the real cache would not serve.
//!
//! - **Anthropic Messages** ("Prompt caching"): caching is explicit. Each
//!   `cache_control` breakpoint (on a tool, a system block or a message
//!   content block; a top-level `cache_control` puts one on the last block)
//!   writes the prefix up to and including its block, in the order tools →
//!   system → messages, if that prefix reaches the model's minimum (1024
//!   tokens on Sonnet, 4096 on Opus 4.5 and Haiku 4.5, 2048 on older Haiku).
//!   A request reads the longest written prefix that ends at one of its
//!   breakpoints or at one of the 20 blocks before each (the lookback).
//!   Entries live 5 minutes, far longer than any test. The `cache_control`
//!   markers themselves are not part of the key (moving the last-message
//!   breakpoint forward each turn is the documented multi-turn pattern); a
//!   `tool_reference` brings its tool's definition in where it sits, so the
//!   definition's bytes are part of the prompt there.
//! - **OpenAI** (Responses; "Prompt caching"): automatic, for prompts of
//!   1024 tokens or more, matched "until the first mismatched token in 128
//!   token blocks": the shared prefix rounded down to 1024 + 128·k tokens.
//!
//! Tokens are counted at four bytes each, as everywhere in the server.

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// How many blocks before a breakpoint the Messages API looks for a hit.
pub(super) const LOOKBACK_BLOCKS: usize = 20;

/// A Messages request as its cache sees it: the key bytes, where each block
/// ends in them, and which blocks carry a breakpoint.
pub(super) struct Keyed {
    pub text: String,
    /// Byte offset in `text` just past each block.
    ends: Vec<usize>,
    /// Indices of the blocks with a `cache_control` breakpoint.
    breakpoints: Vec<usize>,
}

fn deferred(tool: &Value) -> bool {
    tool.get("defer_loading") == Some(&Value::Bool(true))
}

/// `value` without its `cache_control` (not part of the cache key).
fn unmarked(value: &Value) -> (Value, bool) {
    match value {
        Value::Object(map) => {
            let marked = map.contains_key("cache_control");
            let rest: Map<String, Value> =
                map.iter().filter(|(k, _)| *k != "cache_control").map(|(k, v)| (k.clone(), v.clone())).collect();
            (Value::Object(rest), marked)
        }
        other => (other.clone(), false),
    }
}

impl Keyed {
    pub(super) fn of_messages(request: &Value) -> Self {
        let mut keyed = Keyed { text: String::new(), ends: Vec::new(), breakpoints: Vec::new() };
        let tools = request.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let definitions: Vec<&Value> = tools.iter().filter(|t| deferred(t)).collect();
        for tool in tools.iter().filter(|t| !deferred(t)) {
            let (tool, marked) = unmarked(tool);
            keyed.push(&quiver_engine::canonical::to_string(&tool), marked);
        }
        match request.get("system") {
            Some(Value::Array(blocks)) => {
                for block in blocks {
                    let (block, marked) = unmarked(block);
                    keyed.push(&format!("system:{}", quiver_engine::canonical::to_string(&block)), marked);
                }
            }
            Some(text @ Value::String(_)) => {
                keyed.push(&format!("system:{}", quiver_engine::canonical::to_string(text)), false)
            }
            _ => {}
        }
        let messages = request.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for message in messages {
            let role = message.get("role").and_then(Value::as_str).unwrap_or_default();
            let blocks = match message.get("content") {
                Some(Value::Array(blocks)) => blocks.clone(),
                Some(text) => vec![serde_json::json!({"type": "text", "text": text})],
                None => Vec::new(),
            };
            for (i, block) in blocks.iter().enumerate() {
                let (block, marked) = unmarked(block);
                let mut text = if i == 0 { format!("{role}:") } else { String::new() };
                text.push_str(&quiver_engine::canonical::to_string(&block));
                for name in references(&block) {
                    let found = definitions.iter().find(|t| t.get("name").and_then(Value::as_str) == Some(name));
                    if let Some(tool) = found {
                        text.push_str(&quiver_engine::canonical::to_string(tool));
                    }
                }
                keyed.push(&text, marked);
            }
        }
        if request.get("cache_control").is_some() && !keyed.ends.is_empty() {
            keyed.breakpoints.push(keyed.ends.len() - 1);
        }
        keyed
    }

    fn push(&mut self, block: &str, marked: bool) {
        self.text.push_str(block);
        self.text.push('\n');
        if marked {
            self.breakpoints.push(self.ends.len());
        }
        self.ends.push(self.text.len());
    }

    fn prefix_hash(&self, block: usize) -> [u8; 32] {
        Sha256::digest(&self.text.as_bytes()[..self.ends[block]]).into()
    }
}

/// The tools a tool result's `tool_reference` blocks name.
fn references(block: &Value) -> Vec<&str> {
    let nested = block.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    nested
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_reference"))
        .filter_map(|b| b.get("tool_name").and_then(Value::as_str))
        .collect()
}

/// The smallest prefix the model caches, in tokens.
fn minimum_tokens(model: &str) -> usize {
    if model.contains("opus-4-5") || model.contains("haiku-4-5") {
        4096
    } else if model.contains("haiku") {
        2048
    } else {
        1024
    }
}

/// The prefixes Messages breakpoints wrote (by hash), for the server's life.
#[derive(Default)]
pub(super) struct BreakpointCache {
    written: BTreeSet<[u8; 32]>,
}

/// What the cache did with one request, in bytes of the key.
pub(super) struct Served {
    pub read: usize,
    /// The longest prefix this request wrote (0 when it wrote none).
    pub written: usize,
}

impl BreakpointCache {
    /// Reads the longest hit for `keyed`, then writes its breakpoints.
    pub(super) fn serve(&mut self, keyed: &Keyed, model: &str) -> Served {
        let mut read = 0;
        for &breakpoint in &keyed.breakpoints {
            let earliest = breakpoint.saturating_sub(LOOKBACK_BLOCKS);
            let hit = (earliest..=breakpoint).rev().find(|&b| self.written.contains(&keyed.prefix_hash(b)));
            if let Some(block) = hit {
                read = read.max(keyed.ends[block]);
            }
        }
        let mut written = 0;
        for &breakpoint in &keyed.breakpoints {
            let end = keyed.ends[breakpoint];
            if end / 4 >= minimum_tokens(model) {
                self.written.insert(keyed.prefix_hash(breakpoint));
                written = written.max(end);
            }
        }
        Served { read, written }
    }
}

/// OpenAI's automatic cache: of `shared` bytes, what it serves (nothing
/// under 1024 tokens, then whole 128-token blocks).
pub(super) fn openai_served(shared: usize) -> usize {
    let tokens = shared / 4;
    if tokens < 1024 { 0 } else { (1024 + (tokens - 1024) / 128 * 128) * 4 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(turns: usize, marked_last: bool) -> Value {
        let mut messages = vec![json!({"role": "user", "content": [{"type": "text", "text": "x".repeat(5000)}]})];
        for i in 0..turns {
            messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("a{i}")}]}));
            messages.push(json!({"role": "user", "content": [{"type": "text", "text": format!("u{i}")}]}));
        }
        if marked_last && let Some(block) = messages.last_mut().and_then(|m| m["content"].get_mut(0)) {
            block["cache_control"] = json!({"type": "ephemeral"});
        }
        json!({"model": "claude-sonnet-4-5", "messages": messages})
    }

    #[test]
    fn a_moving_breakpoint_serves_the_previous_prompt_and_none_serves_nothing() {
        let mut cache = BreakpointCache::default();
        let first = Keyed::of_messages(&request(0, true));
        assert_eq!(cache.serve(&first, "claude-sonnet-4-5").written, first.text.len());
        let second = Keyed::of_messages(&request(1, true));
        assert_eq!(cache.serve(&second, "claude-sonnet-4-5").read, first.text.len());
        let unmarked = Keyed::of_messages(&request(2, false));
        assert_eq!(cache.serve(&unmarked, "claude-sonnet-4-5").read, 0, "no breakpoint, no read");
    }

    #[test]
    fn the_lookback_stops_twenty_blocks_before_the_breakpoint() {
        let mut cache = BreakpointCache::default();
        cache.serve(&Keyed::of_messages(&request(0, true)), "claude-sonnet-4-5");
        // 10 turns add 20 blocks: the written prefix is exactly 20 back.
        assert!(cache.serve(&Keyed::of_messages(&request(10, true)), "claude-sonnet-4-5").read > 0);
        let mut fresh = BreakpointCache::default();
        fresh.serve(&Keyed::of_messages(&request(0, true)), "claude-sonnet-4-5");
        assert_eq!(fresh.serve(&Keyed::of_messages(&request(11, true)), "claude-sonnet-4-5").read, 0);
    }

    #[test]
    fn short_prefixes_are_not_written_and_openai_rounds_to_its_blocks() {
        let mut cache = BreakpointCache::default();
        let short = json!({"model": "claude-sonnet-4-5",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}]});
        assert_eq!(cache.serve(&Keyed::of_messages(&short), "claude-sonnet-4-5").written, 0);
        assert_eq!(openai_served(4095), 0);
        assert_eq!(openai_served(4096 + 511), 4096);
        assert_eq!(openai_served(4096 + 512), 4096 + 512);
    }
}
