//! Requests answered without a session: MCP 2026-07-28 (SEP-2567).
//!
//! From 2026-07-28 a client sends no `initialize` and gets no
//! `Mcp-Session-Id`: each request carries its protocol version, client info
//! and capabilities in `_meta` (and the version in the `MCP-Protocol-Version`
//! header). rmcp's streamable HTTP service tells such a request from a
//! session's (an `initialize`, or a request naming an `Mcp-Session-Id`),
//! checks its headers against its body (`-32020`), its declared version
//! (`-32022`), its required `_meta` (`-32602`), answers `server/discover`, and
//! answers methods the revision removed (`ping`, `resources/subscribe`, ...)
//! with `-32601`; it then hands the request to a fresh [`QuiverServer`], the
//! same handler a session uses, so calls go through the same dispatch. What
//! is quiver's own is here:
//!
//! - **The head, one for the process.** A session pins the head it was first
//!   shown; a stateless request has no session to pin it in, so the first
//!   stateless list pins it for every later one ([`StatelessHead`]). Every
//!   stateless client of this process is therefore shown the same list.
//! - **The tail, carried by the client** (`stateless_tail`): a call that
//!   loads tools answers with a signed token of the client's tail in
//!   `_meta["quiver/tail"]`; a request that sends it back is answered as a
//!   session with that tail would be. Without it the list is the head, and a
//!   loaded tool is still callable by name (dispatch accepts every known name).
//! - **Caching hints** ([`tools_cache_hints`]): the head is the same for every
//!   client (the audience is the process's), so a list without a tail is
//!   `public`; one with a tail is that client's (`private`). A list changes
//!   only by a search in the client's own requests (which answer with its
//!   new token, so it knows) or by the servers behind: with no directly
//!   exposed server nothing else changes it while the process runs, so it is
//!   fresh for [`STABLE_TTL_MS`]; a directly exposed server's tools are in the
//!   head and change when that server says so: a client listening on
//!   `subscriptions/listen` hears of it, one that does not must list again,
//!   so its `ttlMs` is `0`.
//! - **Nothing sent to the client during a request but progress**: what a
//!   server behind asks mid-call, and quiver's own approval questions, are
//!   input requests of an `InputRequiredResult` (2026-07-28 replaced
//!   server-to-client requests with it; `input_required`), and no
//!   `notifications/tools/list_changed` goes on a call's response: list
//!   changes go on `subscriptions/listen` (`announce.rs`).
//! - **No transcript per request**: a session's transcript starts at its
//!   `initialize`, which a stateless request never sends.

use parking_lot::Mutex;

use rmcp::model::{CacheScope, ProtocolVersion, ServerCapabilities};
use rmcp::service::{RequestContext, RoleServer};

/// How long a `tools/list` that nothing can change while quiver runs is
/// fresh: the only change is a restart with another configuration, and five
/// minutes bounds how long a client goes on with the old list after one.
pub const STABLE_TTL_MS: u64 = 5 * 60 * 1000;

/// Whether `context` is a request of the stateless revision: it declares
/// 2026-07-28 or later in its own `_meta` (rmcp refuses one that declares it
/// only in the header, and a session's requests declare nothing).
pub fn is_stateless(context: &RequestContext<RoleServer>) -> bool {
    context.meta.protocol_version().is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Whether `method` is a request 2026-07-28 removed (the handshake, `ping`,
/// the session's log level and resource subscriptions): a stateless request
/// of it is answered "method not found" (HTTP 404), whatever its params.
pub fn removed(method: &str) -> bool {
    matches!(method, "initialize" | "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe")
}

/// The answer to a stateless request of a method 2026-07-28 removed.
pub fn removed_error(method: &str) -> rmcp::ErrorData {
    rmcp::ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: `{method}` is not part of MCP 2026-07-28"),
        None,
    )
}

/// The head every stateless request of this process is shown: the first one
/// built, kept.
#[derive(Default)]
pub struct StatelessHead(Mutex<Option<Vec<String>>>);

impl StatelessHead {
    /// The head pinned so far, if any.
    pub fn get(&self) -> Option<Vec<String>> {
        self.0.lock().clone()
    }

    /// Keeps `names` unless a head is pinned already.
    pub fn pin(&self, names: Vec<String>) {
        self.0.lock().get_or_insert(names);
    }
}

/// `ttlMs` and `cacheScope` of a stateless `tools/list` (see the module
/// documentation): `direct_servers` is whether a directly exposed server is
/// behind quiver (its tools are in the head), `tail` whether the list shows
/// a tail the client carried.
pub fn tools_cache_hints(direct_servers: bool, tail: bool) -> (u64, CacheScope) {
    let ttl = if direct_servers { 0 } else { STABLE_TTL_MS };
    (ttl, if tail { CacheScope::Private } else { CacheScope::Public })
}

/// The capabilities `server/discover` states: what a stateless client can
/// use. List changes come on `subscriptions/listen`; no `resources.subscribe`
/// (removed in 2026-07-28; single-resource updates on `subscriptions/listen`
/// are not done yet), no `logging` (deprecated, and `logging/setLevel` needs
/// a session to keep the level).
pub fn discover_capabilities(passthrough: bool) -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build();
    if passthrough {
        let mut value = serde_json::to_value(&capabilities).unwrap_or_default();
        if let serde_json::Value::Object(map) = &mut value {
            map.insert("resources".into(), serde_json::json!({"listChanged": true}));
            map.insert("prompts".into(), serde_json::json!({"listChanged": true}));
            map.insert("completions".into(), serde_json::json!({}));
        }
        capabilities = serde_json::from_value(value).unwrap_or(capabilities);
    }
    capabilities
}

/// Whether `key` is a member of any object in `value` (a tool's schema that
/// asks for request headers somewhere in it).
pub fn has_key(value: &serde_json::Value, key: &str) -> bool {
    use serde_json::Value;
    match value {
        Value::Object(map) => map.contains_key(key) || map.values().any(|v| has_key(v, key)),
        Value::Array(items) => items.iter().any(|v| has_key(v, key)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_head_is_kept() {
        let head = StatelessHead::default();
        assert_eq!(head.get(), None);
        head.pin(vec!["read".into()]);
        head.pin(vec!["write".into()]);
        assert_eq!(head.get(), Some(vec!["read".to_string()]));
    }

    #[test]
    fn a_list_with_direct_servers_is_never_fresh_one_with_a_tail_is_private() {
        assert_eq!(tools_cache_hints(false, false), (STABLE_TTL_MS, CacheScope::Public));
        assert_eq!(tools_cache_hints(true, false), (0, CacheScope::Public));
        assert_eq!(tools_cache_hints(false, true), (STABLE_TTL_MS, CacheScope::Private));
    }

    #[test]
    fn discover_states_no_session_features() {
        let value = serde_json::to_value(discover_capabilities(true)).unwrap_or_default();
        assert_eq!(value["tools"], serde_json::json!({"listChanged": true}));
        assert_eq!(value["resources"], serde_json::json!({"listChanged": true}));
        assert!(value.get("logging").is_none());
    }
}
