use std::collections::BTreeMap;

use super::version_findings;
use crate::manifest::{AliasEntry, AliasState};

fn alias(state: AliasState, deprecated: Option<&str>, removal: Option<&str>) -> AliasEntry {
    AliasEntry {
        replacement: "new".into(),
        state,
        first_deprecated_version: deprecated.map(str::to_string),
        planned_removal_version: removal.map(str::to_string),
        replay_supported: true,
        set_args: BTreeMap::new(),
    }
}

fn rules(entry: &AliasEntry, current: &str) -> Vec<&'static str> {
    version_findings("old", entry, current).into_iter().map(|(rule, _)| rule).collect()
}

#[test]
fn versions_are_checked_against_each_other_and_the_build() {
    use AliasState::*;
    assert!(rules(&alias(Deprecated, Some("0.1.0"), Some("0.3.0")), "0.2.0").is_empty());
    assert!(rules(&alias(HiddenCompatibility, Some("0.1.0"), None), "0.1.0").is_empty());
    assert_eq!(rules(&alias(Deprecated, Some("0.8.53"), None), "0.1.0"), ["deprecated-in-future"]);
    assert_eq!(rules(&alias(Deprecated, Some("0.2.0"), Some("0.2.0")), "0.2.0"), ["removal-before-deprecation"]);
    assert_eq!(rules(&alias(Deprecated, Some("soon"), None), "0.1.0"), ["bad-version"]);
    assert_eq!(rules(&alias(Removed, Some("0.1.0"), None), "0.2.0"), ["removed-without-version"]);
    assert_eq!(rules(&alias(Removed, Some("0.1.0"), Some("0.10.0")), "0.9.9"), ["removed-too-early"]);
    assert!(rules(&alias(Removed, Some("0.1.0"), Some("0.2.0")), "0.10.0").is_empty());
}
