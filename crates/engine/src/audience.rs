//! Who a surface is built for: a provider profile, a model id and a mode.

use crate::permissions::Mode;

/// The provider names a manifest profile; a provider without a profile of its
/// own gets `default`. The model id decides model-gated tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audience {
    pub provider: String,
    pub model: Option<String>,
    pub mode: Mode,
}

impl Default for Audience {
    fn default() -> Self {
        Audience { provider: "default".into(), model: None, mode: Mode::Agent }
    }
}
