//! Lifecycle policy: the state of every tool name for a given audience (provider
//! profile, model, mode), and how a called name resolves to the handler that runs.

use serde::{Deserialize, Serialize};

use crate::audience::Audience;
use crate::manifest::{AliasEntry, AliasState, Manifest};
use crate::permissions::Mode;
use crate::registry::Registry;
use crate::spec::ToolSpec;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
#[cfg_attr(test, derive(strum::VariantArray))]
pub enum LifecycleState {
    Active,
    Deferred,
    HiddenCompatibility,
    Deprecated,
    Removed,
}

impl LifecycleState {
    /// The serde name (strum derives it with serde's case rule).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl From<AliasState> for LifecycleState {
    fn from(s: AliasState) -> Self {
        match s {
            AliasState::HiddenCompatibility => LifecycleState::HiddenCompatibility,
            AliasState::Deprecated => LifecycleState::Deprecated,
            AliasState::Removed => LifecycleState::Removed,
        }
    }
}

/// How a called name maps onto the registry.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution<'a> {
    /// A registered canonical tool.
    Canonical(&'a str),
    /// A dispatchable alias (hidden-compatibility or deprecated) of `entry.replacement`.
    Alias {
        name: &'a str,
        entry: &'a AliasEntry,
    },
    /// A name that no longer dispatches.
    Removed {
        name: &'a str,
        entry: &'a AliasEntry,
    },
    Unknown,
}

pub struct Lifecycle {
    manifest: Manifest,
}

impl Lifecycle {
    pub fn new(manifest: Manifest) -> Self {
        Lifecycle { manifest }
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    fn active_list(&self, provider: &str) -> &[String] {
        self.manifest
            .profile(provider)
            .or_else(|| self.manifest.profile("default"))
            .map(|p| p.active.as_slice())
            .unwrap_or(&[])
    }

    /// The state of a canonical tool for an audience (aliases: see [`Self::resolve`]).
    /// MCP tools are active only in `yolo` unless a profile names them, or
    /// their server is exposed directly (`expose = "direct"`: every mode).
    pub fn canonical_state(&self, spec: &ToolSpec, audience: &Audience) -> LifecycleState {
        let listed = self.active_list(&audience.provider).iter().any(|n| n == &spec.name);
        if listed || spec.is_direct() || (!spec.is_native() && audience.mode == Mode::Yolo) {
            LifecycleState::Active
        } else {
            LifecycleState::Deferred
        }
    }

    /// Whether the model may see the tool at all (head or search).
    pub fn visible(&self, name: &str, audience: &Audience) -> bool {
        self.manifest.gate_allows(name, audience.model.as_deref())
    }

    /// In the first-turn head for this audience.
    pub fn in_head(&self, spec: &ToolSpec, audience: &Audience) -> bool {
        self.visible(&spec.name, audience) && self.canonical_state(spec, audience) == LifecycleState::Active
    }

    /// Findable by `tool_search` for this audience.
    pub fn searchable(&self, spec: &ToolSpec, audience: &Audience) -> bool {
        self.visible(&spec.name, audience) && self.canonical_state(spec, audience) == LifecycleState::Deferred
    }

    /// A registered tool's own name always wins over an alias of the same name:
    /// a project manifest must not be able to reroute `git_status` to anything
    /// else (`quiver lint` reports such an alias as `alias-shadows-tool`).
    pub fn resolve<'a>(&'a self, name: &'a str, registry: &Registry) -> Resolution<'a> {
        if registry.get(name).is_some() {
            return Resolution::Canonical(name);
        }
        if let Some(entry) = self.manifest.aliases.get(name) {
            return match entry.state {
                AliasState::Removed => Resolution::Removed { name, entry },
                _ => Resolution::Alias { name, entry },
            };
        }
        Resolution::Unknown
    }

    /// The state of any name for an audience; `None` for names nobody knows.
    pub fn state_of(&self, name: &str, registry: &Registry, audience: &Audience) -> Option<LifecycleState> {
        match self.resolve(name, registry) {
            Resolution::Canonical(n) => registry.get(n).map(|t| self.canonical_state(&t.spec, audience)),
            Resolution::Alias { entry, .. } | Resolution::Removed { entry, .. } => Some(entry.state.into()),
            Resolution::Unknown => None,
        }
    }

    /// Alias names whose replacement is `canonical`, sorted; searchable text only.
    pub fn aliases_of(&self, canonical: &str) -> Vec<String> {
        self.manifest
            .aliases
            .iter()
            .filter(|(_, e)| e.replacement == canonical && e.state != AliasState::Removed)
            .map(|(n, _)| n.clone())
            .collect()
    }
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod tests;
