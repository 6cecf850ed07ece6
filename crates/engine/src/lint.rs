//! `quiver lint`: the manifest rules that keep the surface honest. Each finding
//! names its rule so a failing CI line says what to fix.

use std::fmt;
use std::sync::Arc;

use crate::audience::Audience;
use crate::catalog::CatalogFormat;
use crate::engine::Engine;
use crate::manifest::AliasState;
use crate::permissions::Mode;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub message: String,
    /// Worth saying, not worth failing for (a gate for a tool this build lacks:
    /// an MCP tool not connected yet, a tool from an optional crate).
    pub warning: bool,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = if self.warning { "warning" } else { "error" };
        write!(f, "{level} [{}] {}", self.rule, self.message)
    }
}

/// Sub-agent tool names retired for `agent_open` / `agent_eval` /
/// `agent_close`: never registered, never an alias, so the model meets one
/// name per sub-agent step (two names for one thing confuse smaller models).
pub const LEGACY_AGENT_NAMES: &[&str] = &[
    "spawn_agent",
    "agent_spawn",
    "agent_result",
    "agent_wait",
    "send_input",
    "agent_send_input",
    "agent_assign",
    "agent_list",
    "agent_cancel",
    "resume_agent",
    "agent_resume",
    "close_agent",
    "delegate_to_agent",
];

/// Checks the engine's manifest against its registry; no error findings means clean.
pub fn lint(engine: &Engine, current_version: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let manifest = engine.manifest();
    let registry = engine.registry();
    let mut push = |rule: &'static str, message: String| {
        let warning = rule == "unregistered-gate";
        out.push(Finding { rule, message, warning })
    };

    for (profile_name, profile) in &manifest.profiles {
        for name in &profile.active {
            if manifest.aliases.contains_key(name) {
                push(
                    "alias-in-active",
                    format!("profile `{profile_name}` lists alias `{name}` as active; list its replacement instead"),
                );
            } else if registry.get(name).is_none() {
                push(
                    "unregistered-active",
                    format!("profile `{profile_name}` lists `{name}`, which is not a registered tool"),
                );
            }
        }
    }

    for (alias, entry) in &manifest.aliases {
        if registry.get(alias).is_some() {
            push("alias-shadows-tool", format!("alias `{alias}` is also a registered canonical tool"));
        }
        if manifest.aliases.contains_key(&entry.replacement) {
            push("alias-chain", format!("alias `{alias}` points at `{}`, which is itself an alias", entry.replacement));
        } else if registry.get(&entry.replacement).is_none() {
            push(
                "unregistered-replacement",
                format!("alias `{alias}` points at `{}`, which is not a registered tool", entry.replacement),
            );
        }
        if entry.state == AliasState::Removed {
            match entry.planned_removal_version.as_deref() {
                None | Some("TBD") | Some("") => {
                    push("removed-without-version", format!("`{alias}` is removed but has no planned_removal_version"))
                }
                Some(v) if version_gt(v, current_version) => push(
                    "removed-too-early",
                    format!(
                        "`{alias}` is removed but its planned_removal_version {v} is after the current version {current_version}"
                    ),
                ),
                Some(_) => {}
            }
        }
    }

    // Two visible names must not share one handler: that is a duplicate in disguise.
    let tools: Vec<_> = registry.iter().collect();
    for (i, a) in tools.iter().enumerate() {
        for b in &tools[i + 1..] {
            if Arc::ptr_eq(&a.handler, &b.handler) {
                push(
                    "shared-handler",
                    format!("`{}` and `{}` share one handler; make one an alias", a.spec.name, b.spec.name),
                );
            }
        }
    }

    for (tool, gate) in &manifest.gates {
        if registry.get(tool).is_none() {
            push("unregistered-gate", format!("gate for `{tool}`, which is not registered in this build"));
        }
        if gate.models.is_empty() {
            push("empty-gate", format!("gate for `{tool}` lists no models; it would hide the tool from everyone"));
        }
    }

    for name in LEGACY_AGENT_NAMES {
        if registry.get(name).is_some() || manifest.aliases.contains_key(*name) {
            push(
                "legacy-agent-name",
                format!("`{name}` is a retired sub-agent tool name; use agent_open, agent_eval or agent_close"),
            );
        }
    }

    for (profile_name, profile) in &manifest.profiles {
        let Some(budget) = profile.head_budget_bytes else { continue };
        let audience = Audience { provider: profile_name.clone(), model: None, mode: Mode::Agent };
        let bytes = engine.catalog(&audience, &[]).fingerprint(CatalogFormat::OpenAi).bytes;
        if bytes > budget {
            push(
                "head-over-budget",
                format!("profile `{profile_name}` head is {bytes} bytes in OpenAI format, over its budget of {budget}"),
            );
        }
    }
    out
}

/// Numeric dotted-version comparison; non-numeric parts compare as 0.
fn version_gt(a: &str, b: &str) -> bool {
    let parse = |v: &str| -> Vec<u64> { v.split('.').map(|p| p.trim().parse().unwrap_or(0)).collect() };
    let (mut a, mut b) = (parse(a), parse(b));
    let len = a.len().max(b.len());
    a.resize(len, 0);
    b.resize(len, 0);
    a > b
}

#[cfg(test)]
mod tests {
    use super::version_gt;

    #[test]
    fn versions_compare_numerically() {
        assert!(version_gt("0.10.0", "0.9.9"));
        assert!(!version_gt("0.1", "0.1.0"));
        assert!(!version_gt("0.0.9", "0.1.0"));
    }
}
