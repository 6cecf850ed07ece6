//! quiver names for downstream tools: `mcp__<server>__<tool>`, only
//! `[A-Za-z0-9_-]`, at most 64 characters (the strictest limit among the model
//! APIs quiver serves), and unique within a server.
//!
//! A name that is too long, or that sanitizes onto another tool's name, is cut
//! and given a short hash of the *original* server and tool names. The result
//! depends only on the server's tool set, so the same tools always get the same
//! names (transcripts replay, prompt caches survive a restart).

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

pub const MAX_NAME_LEN: usize = 64;
pub const PREFIX: &str = "mcp__";

/// Every character outside `[A-Za-z0-9_-]` becomes `_`.
pub fn sanitize(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// The server part: sanitized, with no `__` inside and no `_` at either end,
/// so `mcp__<server>__<tool>` always splits back at the first `__`.
pub fn sanitize_server(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in sanitize(name).chars() {
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    let trimmed = out.trim_matches('_');
    if trimmed.is_empty() { "server".to_string() } else { trimmed.to_string() }
}

/// Splits a quiver MCP tool name into (server prefix, tool part).
pub fn split(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix(PREFIX)?.split_once("__")
}

/// Quiver names for a server's tools, keyed by the server-side name.
pub fn qualify(server: &str, tools: &[String]) -> BTreeMap<String, String> {
    let prefix = sanitize_server(server);
    let unique: BTreeSet<&String> = tools.iter().collect();
    let base: BTreeMap<&String, String> =
        unique.iter().map(|t| (*t, format!("{PREFIX}{prefix}__{}", sanitize(t)))).collect();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for name in base.values() {
        *counts.entry(name.as_str()).or_default() += 1;
    }
    let mut out: BTreeMap<String, String> = base
        .iter()
        .map(|(tool, name)| {
            let clash = counts.get(name.as_str()).copied().unwrap_or(0) > 1;
            let qualified =
                if clash || name.len() > MAX_NAME_LEN { hashed(name, server, tool, 8) } else { name.clone() };
            ((*tool).clone(), qualified)
        })
        .collect();
    // A hashed name could in theory equal another tool's plain name; a longer
    // hash settles it without touching the plain one.
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (tool, name) in out.clone() {
        if seen.contains_key(&name) {
            let longer = hashed(&base.get(&tool).cloned().unwrap_or_default(), server, &tool, 16);
            out.insert(tool.clone(), longer.clone());
            seen.insert(longer, tool);
        } else {
            seen.insert(name, tool);
        }
    }
    out
}

fn hashed(base: &str, server: &str, tool: &str, hex_len: usize) -> String {
    let digest = Sha256::digest(format!("{server}\0{tool}").as_bytes());
    let hash = &hex::encode(digest)[..hex_len];
    let keep = MAX_NAME_LEN - hex_len - 1;
    // Sanitized names are ASCII, so byte truncation is a char boundary.
    let stem = if base.len() > keep { &base[..keep] } else { base };
    format!("{stem}_{hash}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(server: &str, tools: &[&str]) -> BTreeMap<String, String> {
        qualify(server, &tools.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn plain_names_are_prefixed() {
        let n = names("everything", &["echo", "get-sum"]);
        assert_eq!(n["echo"], "mcp__everything__echo");
        assert_eq!(n["get-sum"], "mcp__everything__get-sum");
    }

    #[test]
    fn odd_characters_are_replaced() {
        let n = names("my server.v2", &["do.thing/now", "ünï"]);
        assert_eq!(n["do.thing/now"], "mcp__my_server_v2__do_thing_now");
        assert_eq!(n["ünï"], "mcp__my_server_v2___n_");
        assert_eq!(split(&n["ünï"]), Some(("my_server_v2", "_n_")));
        for name in n.values() {
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'), "{name}");
        }
    }

    #[test]
    fn server_part_never_contains_double_underscore() {
        assert_eq!(sanitize_server("a__b"), "a_b");
        assert_eq!(sanitize_server("_a_"), "a");
        assert_eq!(sanitize_server("***"), "server");
        let n = names("x__y_", &["t__u"]);
        assert_eq!(split(&n["t__u"]), Some(("x_y", "t__u")));
    }

    #[test]
    fn long_names_are_cut_with_a_hash() {
        let long = "a".repeat(100);
        let n = names("server", &[&long]);
        let name = &n[&long];
        assert_eq!(name.len(), MAX_NAME_LEN);
        assert!(name.starts_with("mcp__server__aaaa"));
        // Deterministic.
        assert_eq!(names("server", &[&long])[&long], *name);
        // Two long names sharing a prefix still differ.
        let long2 = format!("{}b", "a".repeat(99));
        let n = names("server", &[&long, &long2]);
        assert_ne!(n[&long], n[&long2]);
    }

    #[test]
    fn sanitizing_collisions_get_hashes_deterministically() {
        let n = names("s", &["a.b", "a_b", "c"]);
        assert_ne!(n["a.b"], n["a_b"]);
        assert!(n["a.b"].starts_with("mcp__s__a_b_"));
        assert!(n["a_b"].starts_with("mcp__s__a_b_"));
        assert_eq!(n["c"], "mcp__s__c");
        // Input order does not matter.
        assert_eq!(names("s", &["c", "a_b", "a.b"]), n);
    }

    #[test]
    fn every_name_fits() {
        let server = "s".repeat(80);
        let n = names(&server, &["x"]);
        assert!(n["x"].len() <= MAX_NAME_LEN);
    }
}
