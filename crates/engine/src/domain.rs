//! Domains: the one list of tool families. A domain is a search facet (what
//! `tool_search`'s `domain` filter and the ranker's domain field use) and a
//! grouping for humans. It never decides a permission: that is what a tool's
//! [`crate::spec::Capabilities`] are for, and those are set in code, where no
//! manifest overlay can reach them.

use std::borrow::Cow;
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize};

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::Display,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
#[cfg_attr(test, derive(strum::VariantArray))]
pub enum Domain {
    File,
    Search,
    Shell,
    Git,
    Diagnostics,
    Planning,
    Evidence,
    Subagent,
    Memory,
    Web,
    Media,
    Mcp,
    /// `tool_search` itself: never a search target, so not a filter choice.
    Meta,
}

impl Domain {
    /// Every domain, in the order the `tool_search` filter lists them.
    pub const ALL: [Domain; 13] = [
        Domain::File,
        Domain::Search,
        Domain::Shell,
        Domain::Git,
        Domain::Diagnostics,
        Domain::Planning,
        Domain::Evidence,
        Domain::Subagent,
        Domain::Memory,
        Domain::Web,
        Domain::Media,
        Domain::Mcp,
        Domain::Meta,
    ];

    /// The serde name (strum derives it with serde's case rule).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether `tool_search` can filter on it.
    pub fn searchable(self) -> bool {
        self != Domain::Meta
    }
}

/// A name that is not one of an enum's (a mode, a domain, a catalog
/// format), read from a flag, a config file or a tool's argument.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("unknown {kind} `{given}` (expected {expected})")]
    Unknown { kind: &'static str, given: String, expected: String },
    #[error("`{0}` is not a searchable domain")]
    NotSearchable(Domain),
}

impl NameError {
    /// `given` is not a `kind`; `names` are the ones there are.
    pub fn unknown(kind: &'static str, given: &str, names: &[&str]) -> Self {
        let expected = match names {
            [] => String::new(),
            [one] => (*one).to_string(),
            [rest @ .., last] if rest.len() < 3 => format!("{} or {last}", rest.join(", ")),
            all => format!("one of {}", all.join(", ")),
        };
        NameError::Unknown { kind, given: given.to_string(), expected }
    }
}

impl FromStr for Domain {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Domain::ALL.iter().copied().find(|d| d.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = Domain::ALL.iter().map(|d| d.as_str()).collect();
            NameError::unknown("domain", s, &names)
        })
    }
}

/// The `domain` argument of a search: one searchable domain, or `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DomainFilter {
    #[default]
    All,
    Only(Domain),
}

impl DomainFilter {
    pub fn admits(self, domain: Domain) -> bool {
        match self {
            DomainFilter::All => true,
            DomainFilter::Only(d) => d == domain,
        }
    }
}

impl FromStr for DomainFilter {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "all" {
            return Ok(DomainFilter::All);
        }
        match s.parse::<Domain>()? {
            d if d.searchable() => Ok(DomainFilter::Only(d)),
            d => Err(NameError::NotSearchable(d)),
        }
    }
}

impl<'de> Deserialize<'de> for DomainFilter {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The schema lists the searchable domains, then `all`: generated from
/// [`Domain::ALL`], so a new domain reaches the filter without a second list.
impl JsonSchema for DomainFilter {
    fn schema_name() -> Cow<'static, str> {
        "DomainFilter".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut names: Vec<&str> = Domain::ALL.iter().filter(|d| d.searchable()).map(|d| d.as_str()).collect();
        names.push("all");
        json_schema!({ "type": "string", "enum": names })
    }
}
