//! `quiver lint`: the manifest rules that keep the surface honest. Each finding
//! names its rule so a failing CI line says what to fix.

use std::fmt;
use std::sync::Arc;

use crate::audience::Audience;
use crate::catalog::CatalogFormat;
use crate::engine::Engine;
use crate::manifest::{AliasEntry, AliasState};
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
        for (rule, message) in version_findings(alias, entry, current_version) {
            push(rule, message);
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

/// An alias's versions against each other and against the version being
/// built: each is a semantic version; nothing was deprecated in a version
/// later than this one; a planned removal comes after the deprecation; a
/// removed alias names the version that removed it, not a later one.
fn version_findings(alias: &str, entry: &AliasEntry, current: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut parse = |field: &str, value: Option<&str>| {
        let value = value?;
        match semver::Version::parse(value) {
            Ok(v) => Some(v),
            Err(e) => {
                out.push(("bad-version", format!("`{alias}`'s {field} `{value}` is not a version (x.y.z): {e}")));
                None
            }
        }
    };
    let deprecated = parse("first_deprecated_version", entry.first_deprecated_version.as_deref());
    let removal = parse("planned_removal_version", entry.planned_removal_version.as_deref());
    let Ok(current_v) = semver::Version::parse(current) else {
        out.push(("bad-version", format!("the current version `{current}` is not a version (x.y.z)")));
        return out;
    };
    if let Some(d) = &deprecated
        && *d > current_v
    {
        out.push((
            "deprecated-in-future",
            format!("`{alias}` says it was first deprecated in {d}, after the current version {current_v}"),
        ));
    }
    if let (Some(d), Some(r)) = (&deprecated, &removal)
        && r <= d
    {
        out.push((
            "removal-before-deprecation",
            format!("`{alias}` is to be removed in {r}, not after its deprecation in {d}"),
        ));
    }
    if entry.state == AliasState::Removed {
        match &removal {
            None if entry.planned_removal_version.is_none() => out
                .push(("removed-without-version", format!("`{alias}` is removed but has no planned_removal_version"))),
            Some(r) if *r > current_v => out.push((
                "removed-too-early",
                format!(
                    "`{alias}` is removed but its planned_removal_version {r} is after the current version {current_v}"
                ),
            )),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
#[path = "lint_tests.rs"]
mod tests;
