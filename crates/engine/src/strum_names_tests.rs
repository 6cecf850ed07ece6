//! The enums whose names strum derives with serde's case rule.

use strum::VariantArray;

use crate::permissions::trust::Source;
use crate::{AliasState, Domain, LifecycleState, Mode, Risk};

#[test]
fn strum_names_are_the_serde_names() {
    quiver_testkit::assert_strum_matches_serde::<Mode>();
    quiver_testkit::assert_strum_matches_serde::<Risk>();
    quiver_testkit::assert_strum_matches_serde::<LifecycleState>();
    quiver_testkit::assert_strum_matches_serde::<AliasState>();
    quiver_testkit::assert_strum_matches_serde::<Domain>();
    quiver_testkit::assert_strum_matches_serde::<Source>();
    // What JSON said before the names agreed is still read.
    assert_eq!(serde_json::from_str::<Source>(r#""builtin""#).unwrap(), Source::BuiltIn);
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
