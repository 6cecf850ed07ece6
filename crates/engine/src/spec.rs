//! What a model (or a search) may learn about a tool, and what the permission
//! gate knows of it: name, description, schema, domain, risk and capabilities.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::capabilities::Capabilities;
use crate::domain::Domain;

/// What a tool can do to the world; the permission layer decides by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(test, derive(strum::VariantArray))]
pub enum Risk {
    Read,
    Write,
    Destructive,
    External,
}

impl Risk {
    /// The serde name (strum derives it with serde's case rule).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Where a tool came from. Native tools head the catalog; MCP tools follow them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ToolSource {
    Native,
    Mcp {
        server: String,
        /// The server is exposed directly (`expose = "direct"`): its tools keep
        /// their own names and are in the first-turn head in every mode.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        direct: bool,
    },
}

/// Everything a model (or a search) may learn about a tool. Lifecycle state is
/// deliberately absent: it is catalog policy, never part of what is serialized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub domain: Domain,
    pub risk: Risk,
    /// Set in code by the tool; the permission gate decides by these.
    #[serde(default)]
    pub capabilities: Capabilities,
    pub source: ToolSource,
    /// Extra text searched by `tool_search` but never sent in the catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_snippet: Option<String>,
}

impl ToolSpec {
    pub fn is_native(&self) -> bool {
        self.source == ToolSource::Native
    }

    /// A tool of a server exposed directly (always in the head).
    pub fn is_direct(&self) -> bool {
        matches!(self.source, ToolSource::Mcp { direct: true, .. })
    }
}
