//! A stateless client's loaded tools (its tail), carried by the client.
//!
//! Under 2026-07-28 there is no session to keep what a client loaded with
//! `tool_search`, and the revision offers no general state of its own (its
//! `requestState` belongs to one multi-round call). Keeping tails on the
//! server keyed by something the client sends would need an identity the
//! revision does not give (every holder of quiver's bearer token is the same
//! to it), and memory no client ever frees. So the client holds its own: a
//! call that loads tools answers with `_meta["quiver/tail"]`, the tail's
//! names with a MAC; a request that sends it back gets that tail (a list
//! shows it after the head, in load order, as a session's would).
//!
//! The MAC (HMAC-SHA256 under a key drawn when the process starts) makes the
//! tail quiver's own statement: a client cannot write names into it, only
//! send back what quiver gave it, so a tail still changes only by a search or
//! call in that client's own requests. Nothing is stored on the server, so
//! one client can neither see nor change another's tail (short of being
//! handed its token). A token quiver cannot verify (tampered, too big, from
//! before a restart) is ignored: the client is shown the head, and any tool
//! it loaded stays callable by name.

use ring::hmac;
use serde_json::Value;

/// The request and result `_meta` key.
pub const TAIL_KEY: &str = "quiver/tail";

/// The most names a token carries (more is no token quiver made).
const MAX_NAMES: usize = 512;

/// Signs and checks tail tokens with this process's key.
pub struct TailKeys {
    key: hmac::Key,
}

impl Default for TailKeys {
    fn default() -> Self {
        TailKeys { key: process_key() }
    }
}

/// A fresh HMAC-SHA256 key, drawn when the process starts: what quiver signs
/// with it verifies in this process only (also `input_required`'s states).
pub(crate) fn process_key() -> hmac::Key {
    let rng = ring::rand::SystemRandom::new();
    hmac::Key::generate(hmac::HMAC_SHA256, &rng)
        // The system's random source failing is a broken host; a key from
        // the clock still keeps tokens from passing across processes.
        .unwrap_or_else(|_| hmac::Key::new(hmac::HMAC_SHA256, fallback_seed().as_bytes()))
}

fn fallback_seed() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("{}:{}:{:p}", std::process::id(), now.as_nanos(), &now)
}

impl TailKeys {
    /// The token for `loaded` (load order kept).
    pub fn token(&self, loaded: &[String]) -> Value {
        let tag = hmac::sign(&self.key, &message(loaded));
        serde_json::json!({"loaded": loaded, "mac": hex::encode(tag.as_ref())})
    }

    /// The names in `token` when quiver made it, else `None`.
    pub fn verify(&self, token: &Value) -> Option<Vec<String>> {
        let loaded = token.get("loaded")?.as_array()?;
        if loaded.len() > MAX_NAMES {
            return None;
        }
        let loaded: Vec<String> = loaded.iter().map(|n| n.as_str().map(str::to_string)).collect::<Option<_>>()?;
        let mac = hex::decode(token.get("mac")?.as_str()?).ok()?;
        hmac::verify(&self.key, &message(&loaded), &mac).ok()?;
        Some(loaded)
    }
}

/// What is signed: a version tag and the names, each after its length (so
/// no list of names signs as another).
fn message(loaded: &[String]) -> Vec<u8> {
    let mut out = b"quiver-tail-v1".to_vec();
    for name in loaded {
        out.extend_from_slice(&(name.len() as u64).to_be_bytes());
        out.extend_from_slice(name.as_bytes());
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_token_quiver_made_gives_its_names_back() {
        let keys = TailKeys::default();
        let loaded = names(&["weather_lookup", "stock_quote"]);
        assert_eq!(keys.verify(&keys.token(&loaded)), Some(loaded));
        assert_eq!(keys.verify(&keys.token(&[])), Some(vec![]));
    }

    #[test]
    fn a_changed_or_foreign_token_is_no_token() {
        let keys = TailKeys::default();
        let mut token = keys.token(&names(&["weather_lookup"]));
        token["loaded"] = serde_json::json!(["wipe_cache"]);
        assert_eq!(keys.verify(&token), None, "names changed under the MAC");
        let token = keys.token(&names(&["a", "b"]));
        let mut reordered = token.clone();
        reordered["loaded"] = serde_json::json!(["b", "a"]);
        assert_eq!(keys.verify(&reordered), None, "order is part of the tail");
        let other = TailKeys::default();
        assert_eq!(other.verify(&token), None, "another process's key");
        for bad in [
            serde_json::json!(null),
            serde_json::json!({"loaded": ["a"]}),
            serde_json::json!({"loaded": "a", "mac": "00"}),
            serde_json::json!({"loaded": [1], "mac": "00"}),
            serde_json::json!({"loaded": ["a"], "mac": "zz"}),
        ] {
            assert_eq!(keys.verify(&bad), None, "{bad}");
        }
        // Names joined or split differently are another tail.
        let mut joined = keys.token(&names(&["a", "b"]));
        joined["loaded"] = serde_json::json!(["a\nb"]);
        assert_eq!(keys.verify(&joined), None);
    }
}
