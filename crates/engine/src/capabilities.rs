//! Capabilities: what a tool can do, declared in code next to its handler. The
//! permission gate decides by them (and by risk), never by domain or any other
//! text a manifest overlay could change: a project that renames a destructive
//! tool's domain changes where search files it, nothing else.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Capabilities(u8);

const NAMES: [(Capabilities, &str); 6] = [
    (Capabilities::RUNS_COMMANDS, "runs_commands"),
    (Capabilities::WRITES_FILES, "writes_files"),
    (Capabilities::NETWORK, "network"),
    (Capabilities::PERSISTS, "persists"),
    (Capabilities::GATES_ITSELF, "gates_itself"),
    (Capabilities::NEVER_SPILL, "never_spill"),
];

impl Capabilities {
    pub const NONE: Capabilities = Capabilities(0);
    /// Starts processes the model chose (a shell line, a test command).
    pub const RUNS_COMMANDS: Capabilities = Capabilities(1);
    /// Creates or changes files in the workspace.
    pub const WRITES_FILES: Capabilities = Capabilities(1 << 1);
    /// Reaches the network.
    pub const NETWORK: Capabilities = Capabilities(1 << 2);
    /// Keeps state outside the workspace that outlives the session (memory).
    pub const PERSISTS: Capabilities = Capabilities(1 << 3);
    /// Asks through the command gate itself, showing the exact command or
    /// launch: dispatch must not ask a second, vaguer question first.
    pub const GATES_ITSELF: Capabilities = Capabilities(1 << 4);
    /// Its results are already bounded views of spilled output; spilling them
    /// again would hide the very slice that was asked for.
    pub const NEVER_SPILL: Capabilities = Capabilities(1 << 5);

    pub const fn union(self, other: Capabilities) -> Capabilities {
        Capabilities(self.0 | other.0)
    }

    pub const fn contains(self, other: Capabilities) -> bool {
        self.0 & other.0 == other.0
    }

    pub const fn intersects(self, other: Capabilities) -> bool {
        self.0 & other.0 != 0
    }

    pub fn names(self) -> Vec<&'static str> {
        NAMES.iter().filter(|(c, _)| self.contains(*c)).map(|(_, n)| *n).collect()
    }
}

impl std::ops::BitOr for Capabilities {
    type Output = Capabilities;
    fn bitor(self, rhs: Capabilities) -> Capabilities {
        self.union(rhs)
    }
}

impl fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Serialize for Capabilities {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Capabilities {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let names = Vec::<String>::deserialize(deserializer)?;
        let mut caps = Capabilities::NONE;
        for name in names {
            let Some((c, _)) = NAMES.iter().find(|(_, n)| *n == name) else {
                return Err(serde::de::Error::custom(format!("unknown capability `{name}`")));
            };
            caps = caps | *c;
        }
        Ok(caps)
    }
}
