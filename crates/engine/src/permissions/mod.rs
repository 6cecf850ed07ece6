//! The one permission gate. Every call passes [`check`] in dispatch (the mode's
//! verdict on the tool, from its risk and code-declared capabilities); every
//! process a tool or the MCP client starts passes the command gate
//! ([`command::CommandGate`]): deny rules first in every mode, then trust by
//! source (built-in, user, project), then the mode. Modes never change the
//! catalog's native head; they only change what is allowed to run.

use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::spec::{Capabilities, Risk, ToolSpec};

pub mod command;
pub mod exec_policy;
pub mod trust;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, strum::IntoStaticStr, strum::Display,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
#[cfg_attr(test, derive(strum::VariantArray))]
pub enum Mode {
    /// Read-only: no writes, no shell.
    Plan,
    /// Writes inside the workspace; anything riskier is asked for.
    #[default]
    Agent,
    /// No approvals asked; deny rules still hold.
    Yolo,
}

impl Mode {
    /// The serde name (strum derives it with serde's case rule).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl FromStr for Mode {
    type Err = crate::domain::NameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "plan" => Ok(Mode::Plan),
            "agent" => Ok(Mode::Agent),
            "yolo" => Ok(Mode::Yolo),
            other => Err(crate::domain::NameError::unknown("mode", other, &["plan", "agent", "yolo"])),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny(String),
    /// Needs a yes from whoever hosts the session (a user, an MCP client).
    Ask(String),
}

/// The mode's verdict on running a tool at all, from its risk and the
/// capabilities it declares in code. Commands are judged again, line by line,
/// by the command gate ([`command`]) when the tool starts them.
pub fn check(mode: Mode, spec: &ToolSpec) -> Decision {
    let caps = spec.capabilities;
    let changes_things = caps.intersects(Capabilities::WRITES_FILES.union(Capabilities::PERSISTS))
        || matches!(spec.risk, Risk::Write | Risk::Destructive);
    match mode {
        Mode::Plan if caps.contains(Capabilities::RUNS_COMMANDS) => Decision::Deny(format!(
            "`{}` is refused in plan mode: plan mode runs no commands; switch to agent mode to run it",
            spec.name
        )),
        Mode::Plan if changes_things => Decision::Deny(format!(
            "`{}` is refused in plan mode: it {} and plan mode is read-only; switch to agent mode to change files",
            spec.name,
            if caps.contains(Capabilities::PERSISTS) && !matches!(spec.risk, Risk::Write | Risk::Destructive) {
                "keeps state outside the workspace".to_string()
            } else {
                format!("is a {} tool", spec.risk.as_str())
            }
        )),
        // A downstream tool that does not declare itself read-only may change
        // anything behind its server; plan mode cannot vouch for it.
        Mode::Plan if !spec.is_native() && spec.risk == Risk::External => Decision::Deny(format!(
            "`{}` is refused in plan mode: it is an MCP tool that does not declare itself read-only; switch to agent mode to run it",
            spec.name
        )),
        // Tools that gate themselves ask through the command gate with the
        // actual command line; asking here too would ask twice, and vaguely.
        Mode::Agent if spec.risk == Risk::Destructive && !caps.contains(Capabilities::GATES_ITSELF) => {
            Decision::Ask(format!("allow `{}` ({} tool)?", spec.name, spec.risk.as_str()))
        }
        _ => Decision::Allow,
    }
}

/// Who can say yes to an [`Decision::Ask`]: a terminal user, an MCP client
/// through elicitation. Without one, asking means refusing.
pub trait Approver: Send + Sync {
    fn approve<'a>(&'a self, question: &'a str) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>>;
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
