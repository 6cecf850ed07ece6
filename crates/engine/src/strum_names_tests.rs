//! The enums whose names strum derives with serde's case rule.

use strum::VariantArray;

use crate::{AliasState, Domain, LifecycleState, Mode, Risk};

/// Every variant's strum name is its serde name, both ways, so a rename on
/// one side only fails here.
fn assert_strum_matches_serde<T>()
where
    T: strum::VariantArray + serde::Serialize + serde::de::DeserializeOwned + Copy + PartialEq + std::fmt::Debug,
    &'static str: From<T>,
{
    for &variant in T::VARIANTS {
        let name = <&'static str>::from(variant);
        assert_eq!(serde_json::to_value(variant).unwrap(), serde_json::Value::from(name), "{variant:?}");
        assert_eq!(serde_json::from_value::<T>(name.into()).unwrap(), variant, "{name}");
    }
}

#[test]
fn strum_names_are_the_serde_names() {
    assert_strum_matches_serde::<Mode>();
    assert_strum_matches_serde::<Risk>();
    assert_strum_matches_serde::<LifecycleState>();
    assert_strum_matches_serde::<AliasState>();
    assert_strum_matches_serde::<Domain>();
    // Display and FromStr are read by people and config files: same names.
    for mode in Mode::VARIANTS {
        assert_eq!(mode.to_string(), mode.as_str());
        assert_eq!(mode.as_str().parse::<Mode>().unwrap(), *mode);
    }
    assert_eq!(Domain::ALL.as_slice(), Domain::VARIANTS, "ALL lists every domain");
    for domain in Domain::ALL {
        assert_eq!(domain.to_string(), domain.as_str());
        assert_eq!(domain.as_str().parse::<Domain>().unwrap(), domain);
    }
}
