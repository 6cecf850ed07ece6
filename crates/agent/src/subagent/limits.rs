//! `[subagents]` settings: how many children may run at once and how deep
//! they may nest. The user's config sets them; a project's `quiver.toml`
//! may only lower them (project settings only restrict).

use serde::Deserialize;

use crate::config::Trust;

pub const DEFAULT_MAX_CONCURRENT: usize = 10;
/// Whatever a config says, never more than this many running at once.
pub const HARD_MAX_CONCURRENT: usize = 20;
pub const DEFAULT_MAX_DEPTH: u32 = 3;
pub const DEFAULT_MAX_TURNS: u32 = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubagentLimits {
    /// Children running (with a live task) at once, across all depths.
    pub max_concurrent: usize,
    /// 1 = children may not open children of their own.
    pub max_depth: u32,
    /// Model requests per child run.
    pub max_turns: u32,
}

impl Default for SubagentLimits {
    fn default() -> Self {
        SubagentLimits {
            max_concurrent: DEFAULT_MAX_CONCURRENT,
            max_depth: DEFAULT_MAX_DEPTH,
            max_turns: DEFAULT_MAX_TURNS,
        }
    }
}

/// A config layer whose `[subagents]` table cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct LimitsError {
    /// The layer's file.
    pub path: String,
    /// What TOML said is wrong.
    pub message: String,
}

#[derive(Debug, Default, Deserialize)]
struct File {
    #[serde(default)]
    subagents: Option<Table>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    max_concurrent: Option<usize>,
    max_depth: Option<u32>,
    max_turns: Option<u32>,
}

impl SubagentLimits {
    /// From config layers `(trust, path, text)`, user before project.
    pub fn from_layers(layers: &[(Trust, String, String)]) -> Result<Self, LimitsError> {
        let mut limits = SubagentLimits::default();
        for (trust, path, text) in layers {
            let file: File = toml::from_str(text)
                .map_err(|e| LimitsError { path: path.clone(), message: e.message().to_string() })?;
            let Some(table) = file.subagents else { continue };
            let pick = |current: u64, wanted: Option<u64>| match (trust, wanted) {
                (_, None) => current,
                (Trust::User, Some(v)) => v,
                (Trust::Project, Some(v)) => v.min(current),
            };
            limits.max_concurrent = pick(limits.max_concurrent as u64, table.max_concurrent.map(|v| v as u64)) as usize;
            limits.max_depth = pick(u64::from(limits.max_depth), table.max_depth.map(u64::from)) as u32;
            limits.max_turns = pick(u64::from(limits.max_turns), table.max_turns.map(u64::from)) as u32;
        }
        limits.max_concurrent = limits.max_concurrent.clamp(1, HARD_MAX_CONCURRENT);
        Ok(limits)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn layer(trust: Trust, text: &str) -> (Trust, String, String) {
        (trust, "test.toml".into(), text.into())
    }

    #[test]
    fn user_sets_project_only_lowers_and_the_ceiling_holds() {
        let l = SubagentLimits::from_layers(&[layer(Trust::User, "[subagents]\nmax_concurrent = 25\nmax_depth = 1")])
            .unwrap();
        assert_eq!(l.max_concurrent, HARD_MAX_CONCURRENT);
        assert_eq!(l.max_depth, 1);
        let l = SubagentLimits::from_layers(&[
            layer(Trust::User, "[subagents]\nmax_concurrent = 4"),
            layer(Trust::Project, "[subagents]\nmax_concurrent = 12\nmax_depth = 9"),
        ])
        .unwrap();
        assert_eq!((l.max_concurrent, l.max_depth), (4, DEFAULT_MAX_DEPTH));
        let l = SubagentLimits::from_layers(&[layer(Trust::Project, "[subagents]\nmax_concurrent = 2")]).unwrap();
        assert_eq!(l.max_concurrent, 2);
    }

    #[test]
    fn a_typo_is_an_error_naming_the_file() {
        let e = SubagentLimits::from_layers(&[layer(Trust::User, "[subagents]\nmax_concurent = 4")]).unwrap_err();
        assert_eq!(e.path, "test.toml");
        assert!(e.to_string().starts_with("test.toml: unknown field `max_concurent`"), "{e}");
    }
}
