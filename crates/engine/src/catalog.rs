//! The tool list sent to a model for one request: a head (the audience's active
//! tools, native by name then MCP by name) that never changes within a session,
//! and a tail (tools this session loaded, in load order) that only grows. That
//! split is what keeps a provider's prompt-prefix cache alive across loads.

use std::fmt;
use std::str::FromStr;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::audience::Audience;
use crate::canonical;
use crate::lifecycle::Lifecycle;
use crate::registry::Registry;
use crate::session::Session;
use crate::spec::ToolSpec;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CatalogFormat {
    #[default]
    OpenAi,
    Anthropic,
    Mcp,
}

impl FromStr for CatalogFormat {
    type Err = crate::domain::NameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "openai" => Ok(CatalogFormat::OpenAi),
            "anthropic" => Ok(CatalogFormat::Anthropic),
            "mcp" => Ok(CatalogFormat::Mcp),
            other => Err(crate::domain::NameError::unknown("catalog format", other, &["openai", "anthropic", "mcp"])),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Catalog {
    pub head: Vec<ToolSpec>,
    pub tail: Vec<ToolSpec>,
}

/// `sha256:<hex> <bytes> bytes <n> tools`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    pub sha256: String,
    pub bytes: usize,
    pub tools: usize,
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{} {} bytes {} tools", self.sha256, self.bytes, self.tools)
    }
}

impl Catalog {
    /// Builds the catalog for `audience` with `loaded` (canonical names in load
    /// order) as the tail. Aliases and gated-out tools never enter either part.
    pub fn build(registry: &Registry, lifecycle: &Lifecycle, audience: &Audience, loaded: &[String]) -> Catalog {
        let head = head_specs(registry, lifecycle, audience);
        let pinned: Vec<String> = head.iter().map(|t| t.name.clone()).collect();
        let tail = tail_specs(registry, lifecycle, audience, &pinned, loaded);
        Catalog { head, tail }
    }

    /// The catalog for the next request of a live session: the one place a
    /// session's tail is built. The head is pinned to what the session was
    /// first sent, even when the registry changed since (a downstream MCP
    /// server connected and, in yolo mode, brought new active tools): such
    /// newcomers are loaded into the session's tail instead, so the
    /// provider's prompt prefix survives. That load is the one side effect,
    /// and the reason this takes the session rather than its loaded names.
    pub fn for_session(registry: &Registry, lifecycle: &Lifecycle, audience: &Audience, session: &Session) -> Catalog {
        let fresh: Vec<String> = head_specs(registry, lifecycle, audience).into_iter().map(|t| t.name).collect();
        let pinned = session.pin_head(fresh.clone());
        let newcomers: Vec<String> = fresh.into_iter().filter(|n| !pinned.contains(n)).collect();
        session.load(&newcomers);
        let head = pinned.iter().filter_map(|n| registry.get(n)).map(|t| t.spec.clone()).collect();
        let tail = tail_specs(registry, lifecycle, audience, &pinned, &session.loaded());
        Catalog { head, tail }
    }

    /// Every tool this session may load (what `tool_search` can find for the
    /// audience, minus the pinned head): native by name, then MCP by name.
    /// A wire that sends deferred tools up front (Anthropic's
    /// `defer_loading`) sends these; the order depends only on the registry,
    /// so it is stable for the session whatever gets loaded.
    pub fn deferrable(
        registry: &Registry,
        lifecycle: &Lifecycle,
        audience: &Audience,
        session: &Session,
    ) -> Vec<ToolSpec> {
        let head = session.pinned_head().unwrap_or_default();
        native_then_mcp(registry, |spec| lifecycle.searchable(spec, audience) && !head.contains(&spec.name))
    }

    pub fn tools(&self) -> impl Iterator<Item = &ToolSpec> {
        self.head.iter().chain(self.tail.iter())
    }

    pub fn names(&self) -> Vec<String> {
        self.tools().map(|t| t.name.clone()).collect()
    }

    pub fn render(&self, format: CatalogFormat) -> Value {
        Value::Array(self.tools().map(|t| render_tool(t, format)).collect())
    }

    /// The canonical bytes of the rendered list.
    pub fn to_canonical_string(&self, format: CatalogFormat) -> String {
        canonical::to_string(&self.render(format))
    }

    pub fn fingerprint(&self, format: CatalogFormat) -> Fingerprint {
        let text = self.to_canonical_string(format);
        Fingerprint {
            sha256: hex::encode(Sha256::digest(text.as_bytes())),
            bytes: text.len(),
            tools: self.head.len() + self.tail.len(),
        }
    }
}

/// Active tools for the audience: native by name, then MCP by name.
fn head_specs(registry: &Registry, lifecycle: &Lifecycle, audience: &Audience) -> Vec<ToolSpec> {
    native_then_mcp(registry, |spec| lifecycle.in_head(spec, audience))
}

/// The registry's tools that `keep` accepts, native by name then MCP by name:
/// the one order every byte-stable tool list uses.
fn native_then_mcp(registry: &Registry, keep: impl Fn(&ToolSpec) -> bool) -> Vec<ToolSpec> {
    let (mut native, mut mcp): (Vec<ToolSpec>, Vec<ToolSpec>) =
        registry.iter().filter(|t| keep(&t.spec)).map(|t| t.spec.clone()).partition(ToolSpec::is_native);
    native.sort_by(|a, b| a.name.cmp(&b.name));
    mcp.sort_by(|a, b| a.name.cmp(&b.name));
    native.extend(mcp);
    native
}

/// Loaded tools in load order, minus the head, duplicates, names that are
/// gone and names the audience may not see.
fn tail_specs(
    registry: &Registry,
    lifecycle: &Lifecycle,
    audience: &Audience,
    head: &[String],
    loaded: &[String],
) -> Vec<ToolSpec> {
    let mut tail: Vec<ToolSpec> = Vec::new();
    for name in loaded {
        let Some(tool) = registry.get(name) else { continue };
        let seen = head.contains(name) || tail.iter().any(|t| &t.name == name);
        if !seen && lifecycle.visible(name, audience) {
            tail.push(tool.spec.clone());
        }
    }
    tail
}

pub fn render_tool(spec: &ToolSpec, format: CatalogFormat) -> Value {
    match format {
        CatalogFormat::OpenAi => json!({
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.input_schema,
            }
        }),
        CatalogFormat::Anthropic => json!({
            "name": spec.name,
            "description": spec.description,
            "input_schema": spec.input_schema,
        }),
        CatalogFormat::Mcp => json!({
            "name": spec.name,
            "description": spec.description,
            "inputSchema": spec.input_schema,
        }),
    }
}
