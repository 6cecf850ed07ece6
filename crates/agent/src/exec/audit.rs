//! `quiver audit TRANSCRIPT`: request by request, how much of each request the
//! previous one already sent (what a provider's prefix cache can serve, with
//! the request read in the order that provider documents for its cache:
//! Anthropic's tools, system, messages with deferred tools left out; Chat
//! Completions' tools, then messages; see `run::prefix::cache_order`), whether
//! the head changed (it must not), the cache hits the provider reported, and the
//! tools loaded. A compaction is the one allowed break in prefix growth and is
//! shown as such. A request whose usage the provider did not report (or that
//! failed) says the figures are missing: unknown is not 0.

use quiver_engine::transcript::{Event, Transcript};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct RequestAudit {
    pub index: usize,
    pub turn: u64,
    pub bytes: u64,
    /// `None`: the first request of a process (new or resumed session).
    pub shared_prefix_bytes: Option<u64>,
    /// The previous request's bytes: a request that extends it shares all of them.
    pub previous_bytes: u64,
    pub head_changed: bool,
    pub after_compaction: bool,
    /// `None`: no usage recorded (the provider reported none, or failed).
    pub input_tokens: Option<u64>,
    pub cache_hit_tokens: Option<u64>,
    pub tail: Vec<String>,
    /// This request loaded tools the previous one did not have.
    pub loading: bool,
    /// The cache order `bytes` follow; `None` in transcripts that predate it.
    pub cache_order: Option<String>,
}

impl RequestAudit {
    /// Whether the cache could serve less than all of the previous request
    /// (it did not only append to it), a compaction aside.
    pub fn cache_broke(&self) -> bool {
        !self.after_compaction && self.shared_prefix_bytes.is_some_and(|shared| shared < self.previous_bytes)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Audit {
    pub requests: Vec<RequestAudit>,
    pub head_changes: usize,
    pub compactions: usize,
    /// Requests (not after a compaction) whose tools or messages do not
    /// extend the previous request's.
    pub prefix_breaks: usize,
}

fn tokens(usage: Option<&Value>, key: &str) -> Option<u64> {
    let usage = usage.filter(|u| u.is_object())?;
    Some(usage.get(key).and_then(Value::as_u64).unwrap_or(0))
}

pub fn audit(transcript: &Transcript) -> Audit {
    let mut audit = Audit::default();
    let mut head: Option<&str> = None;
    let mut previous_bytes = 0;
    let mut compacted = false;
    let mut previous_tail: &[String] = &[];
    for event in &transcript.events {
        match event {
            Event::Compaction { .. } => {
                compacted = true;
                audit.compactions += 1;
            }
            Event::ModelRequest {
                turn,
                bytes,
                shared_prefix_bytes,
                extends_previous,
                head_hash,
                tail,
                usage,
                cache_order,
                ..
            } => {
                let loading = tail.iter().any(|t| !previous_tail.contains(t));
                previous_tail = tail.as_slice();
                let head_changed = head.is_some_and(|h| h != head_hash.as_str());
                head = Some(head_hash.as_str());
                let index = audit.requests.len() + 1;
                if head_changed {
                    audit.head_changes += 1;
                }
                if !compacted && *extends_previous == Some(false) {
                    audit.prefix_breaks += 1;
                }
                audit.requests.push(RequestAudit {
                    index,
                    turn: *turn,
                    bytes: *bytes,
                    shared_prefix_bytes: *shared_prefix_bytes,
                    previous_bytes,
                    head_changed,
                    after_compaction: compacted,
                    input_tokens: tokens(usage.as_ref(), "input_tokens"),
                    cache_hit_tokens: tokens(usage.as_ref(), "cache_hit_tokens"),
                    tail: tail.clone(),
                    loading,
                    cache_order: cache_order.clone(),
                });
                previous_bytes = *bytes;
                compacted = false;
            }
            _ => {}
        }
    }
    audit
}

impl Audit {
    /// The report lines (one per request, then the summary).
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for r in &self.requests {
            let shared = r.shared_prefix_bytes.unwrap_or(0);
            let share = if r.bytes == 0 { 0.0 } else { shared as f64 / r.bytes as f64 * 100.0 };
            let hits = match (r.cache_hit_tokens, r.input_tokens) {
                (Some(hits), Some(input)) => format!("cache hits {hits}/{input} tokens"),
                _ => "cache hits unknown (no usage reported)".to_string(),
            };
            let mut line = format!(
                "request {} turn {}: {} bytes, shared prefix {} bytes ({share:.1}%), head {}, {hits}, tools loaded: {}",
                r.index,
                r.turn,
                r.bytes,
                shared,
                if r.head_changed { "CHANGED" } else { "unchanged" },
                if r.tail.is_empty() { "-".to_string() } else { r.tail.join(",") },
            );
            if r.shared_prefix_bytes.is_none() && r.index > 1 {
                line.push_str(" (new process: resumed)");
            }
            if r.after_compaction {
                line.push_str(" (after compaction)");
            }
            if r.cache_broke() {
                line.push_str(" (cached prefix BROKE)");
            }
            lines.push(line);
        }
        if let Some(order) = self.requests.iter().rev().find_map(|r| r.cache_order.as_deref()) {
            lines.push(format!("bytes read in the provider's cache order: {order}"));
        }
        let bytes: u64 = self.requests.iter().map(|r| r.bytes).sum();
        let shared: u64 = self.requests.iter().filter_map(|r| r.shared_prefix_bytes).sum();
        let input: u64 = self.requests.iter().filter_map(|r| r.input_tokens).sum();
        let hits: u64 = self.requests.iter().filter_map(|r| r.cache_hit_tokens).sum();
        let missing = self.requests.iter().filter(|r| r.input_tokens.is_none()).count();
        let cache = match missing {
            0 => format!("cache_hit_tokens={hits}/{input}"),
            n if n == self.requests.len() => format!("cache_hit_tokens=unknown usage_missing={n}"),
            n => format!("cache_hit_tokens={hits}/{input} usage_missing={n}"),
        };
        // The summary stays the last line (scripts read it there).
        if missing > 0 {
            lines.push(format!(
                "note: {missing} of {} requests have no usage figures (the provider reported none, or the request failed): their tokens and cache hits are unknown, not 0",
                self.requests.len()
            ));
        }
        let loading: Vec<&RequestAudit> = self.requests.iter().filter(|r| r.loading && r.index > 1).collect();
        let loading_shared: u64 = loading.iter().filter_map(|r| r.shared_prefix_bytes).sum();
        let loading_bytes: u64 = loading.iter().map(|r| r.bytes).sum();
        lines.push(format!(
            "requests={} head_changes={} prefix_breaks={} compactions={} cache_breaks={} shared_prefix_bytes={shared}/{bytes} loading_requests={} loading_shared_prefix_bytes={loading_shared}/{loading_bytes} {cache}",
            self.requests.len(),
            self.head_changes,
            self.prefix_breaks,
            self.compactions,
            self.requests.iter().filter(|r| r.cache_broke()).count(),
            loading.len(),
        ));

        lines
    }
}
