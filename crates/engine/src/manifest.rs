//! The lifecycle manifest: one TOML data file that says which names are active per
//! provider profile, which are aliases (and in what state), and which are gated to
//! certain models. The built-in file is compiled in; user and project files, and
//! extension metadata JSON, overlay it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::Domain;
use crate::permissions::trust::Source;

/// The built-in manifest, compiled into the binary.
pub const BUILTIN_MANIFEST: &str = include_str!("../manifest/lifecycle.toml");
/// Search-only example requests per built-in tool (`[tools.NAME] examples`).
pub const BUILTIN_EXAMPLES: &str = include_str!("../manifest/examples.toml");

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
#[cfg_attr(test, derive(strum::VariantArray))]
pub enum AliasState {
    HiddenCompatibility,
    Deprecated,
    Removed,
}

impl AliasState {
    /// The serde name (strum derives it with serde's case rule).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AliasEntry {
    pub replacement: String,
    pub state: AliasState,
    #[serde(default)]
    pub first_deprecated_version: Option<String>,
    /// The version that removes (or removed) the name; `None` while not
    /// planned (`"TBD"` in a manifest file reads as `None`).
    #[serde(default, deserialize_with = "version_or_tbd")]
    pub planned_removal_version: Option<String>,
    #[serde(default = "yes")]
    pub replay_supported: bool,
    /// Arguments forced on the canonical call (e.g. `mode = "regex"` for a
    /// search alias that meant the regex flavour).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set_args: BTreeMap<String, Value>,
}

fn yes() -> bool {
    true
}

/// `"TBD"` (and an empty string) mean no version is planned yet.
fn version_or_tbd<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value: Option<String> = Option::deserialize(d)?;
    Ok(value.filter(|v| !v.trim().is_empty() && !v.trim().eq_ignore_ascii_case("TBD")))
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The first-turn head, as canonical names. Order is irrelevant: the catalog sorts.
    #[serde(default)]
    pub active: Vec<String>,
    /// Lint fails when this profile's OpenAI-format head is larger.
    #[serde(default)]
    pub head_budget_bytes: Option<usize>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    /// Glob patterns over model ids (`deepseek-v4*`).
    pub models: Vec<String>,
}

/// Per-tool metadata that is policy rather than code: searchable text and domain.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolOverlay {
    /// A search facet only; permissions never depend on it.
    #[serde(default)]
    pub domain: Option<Domain>,
    #[serde(default)]
    pub prompt_snippet: Option<String>,
    /// The everyday ways people ask for the tool ("what did I change"),
    /// searched by `tool_search` (lexically, and each embedded alone when a
    /// model is on) but never sent in the catalog.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phrasings: Vec<String>,
    /// Synthetic example requests (about ten per tool, written from its
    /// documentation alone; built in from `manifest/examples.toml`): searched
    /// like `phrasings` with their own weight, never sent in the catalog.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Words naming the tool's own action ("close", "shut") for a tool that
    /// asks for approval: a search loads it only when the request uses one
    /// (`load_guard.rs`); otherwise it is listed, loadable with `select:`.
    /// Loading is not a permission: the call still asks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub action: Vec<String>,
}

impl ToolOverlay {
    /// The one merge of per-tool metadata: a later layer's values win, a
    /// value it leaves out keeps the earlier one.
    fn merge(&mut self, later: ToolOverlay) {
        if later.domain.is_some() {
            self.domain = later.domain;
        }
        if later.prompt_snippet.is_some() {
            self.prompt_snippet = later.prompt_snippet;
        }
        if !later.phrasings.is_empty() {
            self.phrasings = later.phrasings;
        }
        if !later.examples.is_empty() {
            self.examples = later.examples;
        }
        if !later.action.is_empty() {
            self.action = later.action;
        }
    }
}

/// Shell command rules added to the built-in exec policy (`[exec_policy]`).
/// Deny rules may come from any manifest; trusted rules only from the user's
/// own file, never from a project's, so a cloned repository cannot make its
/// own commands run unasked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecRules {
    #[serde(default)]
    pub deny_prefixes: Vec<String>,
    #[serde(default)]
    pub trusted_prefixes: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
    #[serde(default)]
    pub aliases: BTreeMap<String, AliasEntry>,
    #[serde(default)]
    pub gates: BTreeMap<String, Gate>,
    #[serde(default)]
    pub tools: BTreeMap<String, ToolOverlay>,
    #[serde(default)]
    pub exec_policy: ExecRules,
}

/// An overlay file may also add to or take from a profile without restating it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileOverlay {
    active: Option<Vec<String>>,
    #[serde(default)]
    add: Vec<String>,
    #[serde(default)]
    remove: Vec<String>,
    head_budget_bytes: Option<usize>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestOverlay {
    #[serde(default)]
    profiles: BTreeMap<String, ProfileOverlay>,
    #[serde(default)]
    aliases: BTreeMap<String, AliasEntry>,
    #[serde(default)]
    gates: BTreeMap<String, Gate>,
    #[serde(default)]
    tools: BTreeMap<String, ToolOverlay>,
    #[serde(default)]
    exec_policy: ExecRules,
}

impl Manifest {
    /// The built-in lifecycle manifest with the built-in example requests
    /// laid over it (kept in their own file: they are data, not policy).
    pub fn builtin() -> anyhow::Result<Manifest> {
        let mut manifest = Manifest::parse(BUILTIN_MANIFEST).context("built-in lifecycle manifest")?;
        manifest.overlay_toml(BUILTIN_EXAMPLES).context("built-in example requests")?;
        Ok(manifest)
    }

    pub fn parse(text: &str) -> anyhow::Result<Manifest> {
        let mut manifest = Manifest::default();
        manifest.overlay_toml(text)?;
        Ok(manifest)
    }

    /// The built-in manifest with the user file (`~/.config/quiver/manifest.toml`)
    /// and the project file (`<workspace>/.quiver/manifest.toml`) laid over it, in
    /// that order, when they exist.
    pub fn load_layered(workspace: Option<&Path>) -> anyhow::Result<Manifest> {
        let (manifest, skipped) = Manifest::load_layered_reporting(workspace)?;
        for problem in &skipped {
            tracing::warn!("ignoring the project's manifest: {problem:#}");
        }
        Ok(manifest)
    }

    /// [`Manifest::load_layered`], also returning the project overlays it
    /// skipped. A project file that does not parse or does not fit is left out
    /// whole (never half-applied) instead of failing: a cloned repository must
    /// not be able to stop quiver from starting. The user's own file still
    /// fails loudly, since only the user can fix it and a silent skip would
    /// drop their restrictions.
    pub fn load_layered_reporting(workspace: Option<&Path>) -> anyhow::Result<(Manifest, Vec<anyhow::Error>)> {
        let mut manifest = Manifest::builtin()?;
        let mut skipped = Vec::new();
        for (path, source) in overlay_paths(workspace) {
            if !path.is_file() {
                continue;
            }
            if source.may_widen() {
                manifest.overlay_file_from(&path, source)?;
                continue;
            }
            let mut candidate = manifest.clone();
            match candidate.overlay_file_from(&path, source) {
                Ok(()) => manifest = candidate,
                Err(e) => skipped.push(e),
            }
        }
        Ok((manifest, skipped))
    }

    /// Lays a TOML manifest or a JSON extension-metadata file over this one,
    /// as the user's own (an explicit `--manifest`).
    pub fn overlay_file(&mut self, path: &Path) -> anyhow::Result<()> {
        self.overlay_file_from(path, Source::User)
    }

    /// Lays a file over this one with the trust of its `source`: a project's
    /// file may only restrict, so trusted command rules in it are dropped
    /// (with a warning) — a cloned repository must not make its own commands
    /// run unasked.
    pub fn overlay_file_from(&mut self, path: &Path, source: Source) -> anyhow::Result<()> {
        let trusted_before = self.exec_policy.trusted_prefixes.len();
        let aliases_before = (!source.may_widen()).then(|| self.aliases.clone());
        self.overlay_file_text(path)?;
        if !source.may_widen() && self.exec_policy.trusted_prefixes.len() > trusted_before {
            tracing::warn!(file = %path.display(), "ignoring [exec_policy] trusted_prefixes from a {} manifest", source.as_str());
            self.exec_policy.trusted_prefixes.truncate(trusted_before);
        }
        if let Some(before) = aliases_before {
            self.keep_project_aliases_harmless(path, source, before);
        }
        Ok(())
    }

    /// A project's alias may add a name for a tool, nothing more: one with
    /// `set_args` would put the repository's own arguments into a call the
    /// model made (`set_args = { command = "..." }` on an alias of
    /// `exec_shell` runs the project's line whenever a model uses that name),
    /// and redefining a name the built-in or the user's file gave would
    /// re-point calls that already mean something else. Both are dropped,
    /// with a warning, and the earlier entry kept.
    fn keep_project_aliases_harmless(&mut self, path: &Path, source: Source, before: BTreeMap<String, AliasEntry>) {
        let names: Vec<String> = self.aliases.keys().cloned().collect();
        for name in names {
            let Some(entry) = self.aliases.get(&name) else { continue };
            let earlier = before.get(&name);
            if earlier == Some(entry) || (earlier.is_none() && entry.set_args.is_empty()) {
                continue;
            }
            let why = if earlier.is_some() { "redefines an existing alias" } else { "forces arguments (set_args)" };
            tracing::warn!(file = %path.display(), alias = %name, "ignoring an alias from a {} manifest: it {why}", source.as_str());
            match earlier {
                Some(old) => self.aliases.insert(name, old.clone()),
                None => self.aliases.remove(&name),
            };
        }
    }

    fn overlay_file_text(&mut self, path: &Path) -> anyhow::Result<()> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let result = if path.extension().is_some_and(|e| e == "json") {
            self.overlay_extension_json(&text)
        } else {
            self.overlay_toml(&text)
        };
        result.with_context(|| format!("in manifest {}", path.display()))
    }

    pub fn overlay_toml(&mut self, text: &str) -> anyhow::Result<()> {
        let overlay: ManifestOverlay = toml::from_str(text)?;
        for (name, p) in overlay.profiles {
            let profile = self.profiles.entry(name).or_default();
            if let Some(active) = p.active {
                profile.active = active;
            }
            profile.active.retain(|n| !p.remove.contains(n));
            for n in p.add {
                if !profile.active.contains(&n) {
                    profile.active.push(n);
                }
            }
            if p.head_budget_bytes.is_some() {
                profile.head_budget_bytes = p.head_budget_bytes;
            }
        }
        for rule in overlay.exec_policy.deny_prefixes {
            if !self.exec_policy.deny_prefixes.contains(&rule) {
                self.exec_policy.deny_prefixes.push(rule);
            }
        }
        for rule in overlay.exec_policy.trusted_prefixes {
            if !self.exec_policy.trusted_prefixes.contains(&rule) {
                self.exec_policy.trusted_prefixes.push(rule);
            }
        }
        self.aliases.extend(overlay.aliases);
        self.gates.extend(overlay.gates);
        for (name, t) in overlay.tools {
            self.tools.entry(name).or_default().merge(t);
        }
        Ok(())
    }

    /// Extension metadata in the `provides.tools` shape: a bare string is an eager
    /// (active in the default profile) tool; an object may say `lazy`, `domain`,
    /// `aliases` (kept as hidden-compatibility names of `canonicalName`) and
    /// `promptSnippet`.
    pub fn overlay_extension_json(&mut self, text: &str) -> anyhow::Result<()> {
        let doc: Value = serde_json::from_str(text)?;
        let Some(tools) = doc.pointer("/provides/tools") else {
            bail!("extension metadata has no `provides.tools` list");
        };
        let Some(tools) = tools.as_array() else { bail!("`provides.tools` must be a list") };
        for (i, entry) in tools.iter().enumerate() {
            let tool: ExtensionTool = match entry {
                Value::String(name) => ExtensionTool { name: name.clone(), ..Default::default() },
                Value::Object(_) => {
                    serde_json::from_value(entry.clone()).with_context(|| format!("`provides.tools[{i}]`"))?
                }
                other => bail!("`provides.tools[{i}]` must be a string or an object, not {other}"),
            };
            self.apply_extension_tool(tool);
        }
        Ok(())
    }

    fn apply_extension_tool(&mut self, tool: ExtensionTool) {
        let canonical = tool.canonical_name.clone().unwrap_or_else(|| tool.name.clone());
        let default = self.profiles.entry("default".to_string()).or_default();
        if tool.lazy {
            default.active.retain(|n| n != &canonical);
        } else if !default.active.contains(&canonical) {
            default.active.push(canonical.clone());
        }
        if tool.domain.is_some() || tool.prompt_snippet.is_some() {
            let overlay =
                ToolOverlay { domain: tool.domain, prompt_snippet: tool.prompt_snippet, ..Default::default() };
            self.tools.entry(canonical.clone()).or_default().merge(overlay);
        }
        let mut alias_names = tool.aliases;
        if tool.name != canonical {
            alias_names.push(tool.name);
        }
        for alias in alias_names {
            self.aliases.entry(alias).or_insert_with(|| AliasEntry {
                replacement: canonical.clone(),
                state: AliasState::HiddenCompatibility,
                first_deprecated_version: None,
                planned_removal_version: None,
                replay_supported: true,
                set_args: BTreeMap::new(),
            });
        }
    }

    pub fn profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name)
    }

    /// Whether `tool` is visible to `model`: ungated tools always are; a gated tool
    /// only when a model id is known and matches one of the gate's globs.
    pub fn gate_allows(&self, tool: &str, model: Option<&str>) -> bool {
        let Some(gate) = self.gates.get(tool) else { return true };
        let Some(model) = model else { return false };
        gate.models.iter().any(|pattern| glob_match(pattern, model))
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExtensionTool {
    name: String,
    #[serde(default)]
    lazy: bool,
    #[serde(default)]
    domain: Option<Domain>,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    canonical_name: Option<String>,
    #[serde(default)]
    prompt_snippet: Option<String>,
}

fn glob_match(pattern: &str, text: &str) -> bool {
    match globset::Glob::new(pattern) {
        Ok(glob) => glob.compile_matcher().is_match(text),
        Err(_) => pattern == text,
    }
}

/// The user's file, then the project's, each with its source.
fn overlay_paths(workspace: Option<&Path>) -> Vec<(PathBuf, Source)> {
    let mut paths = Vec::new();
    if let Some(config) = dirs::config_dir() {
        paths.push((config.join("quiver").join("manifest.toml"), Source::User));
    }
    if let Some(ws) = workspace {
        paths.push((ws.join(".quiver").join("manifest.toml"), Source::Project));
    }
    paths
}

#[cfg(test)]
#[path = "manifest_tests.rs"]
mod tests;
