//! A Messages request as Anthropic's prompt cache keys it ("Prompt
//! caching"): block by block in the order tools → system → messages, the
//! deferred tools left out (not in the prompt), `cache_control` markers left
//! out (not part of the key), and each `tool_reference` followed by the
//! definition it brings in where it sits. The audit linearizes the Messages
//! body this way (`super::prefix`), and the scripted server keys its cache on
//! it, so both count the same bytes.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// A Messages request as its cache sees it: the key bytes, where each block
/// ends in them, and which blocks carry a breakpoint.
pub struct Keyed {
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
    pub fn of_messages(request: &Value) -> Self {
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

    /// Indices of the blocks with a breakpoint.
    pub fn breakpoints(&self) -> &[usize] {
        &self.breakpoints
    }

    /// The byte offset in `text` just past `block`.
    pub fn end(&self, block: usize) -> usize {
        self.ends[block]
    }

    fn push(&mut self, block: &str, marked: bool) {
        self.text.push_str(block);
        self.text.push('\n');
        if marked {
            self.breakpoints.push(self.ends.len());
        }
        self.ends.push(self.text.len());
    }

    pub fn prefix_hash(&self, block: usize) -> [u8; 32] {
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
