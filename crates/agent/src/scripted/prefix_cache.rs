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

pub(super) use crate::run::cache_key::Keyed;

/// How many blocks before a breakpoint the Messages API looks for a hit.
pub(super) const LOOKBACK_BLOCKS: usize = 20;

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
        for &breakpoint in keyed.breakpoints() {
            let earliest = breakpoint.saturating_sub(LOOKBACK_BLOCKS);
            let hit = (earliest..=breakpoint).rev().find(|&b| self.written.contains(&keyed.prefix_hash(b)));
            if let Some(block) = hit {
                read = read.max(keyed.end(block));
            }
        }
        let mut written = 0;
        for &breakpoint in keyed.breakpoints() {
            let end = keyed.end(breakpoint);
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
    use serde_json::{Value, json};

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
