//! What a mode allows at dispatch time. Modes never change the catalog's native
//! head; they only change what is allowed to run.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::tool::{Risk, ToolSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Plan => "plan",
            Mode::Agent => "agent",
            Mode::Yolo => "yolo",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "plan" => Ok(Mode::Plan),
            "agent" => Ok(Mode::Agent),
            "yolo" => Ok(Mode::Yolo),
            other => Err(format!("unknown mode `{other}` (expected plan, agent or yolo)")),
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

/// The mode's verdict on running a tool at all. Tools with finer-grained rules
/// (the shell's command policy) apply them on top, from inside the handler.
pub fn check(mode: Mode, spec: &ToolSpec) -> Decision {
    let shell = spec.domain == "shell";
    // Tools that run commands (the shell family, `run_tests`) apply the command
    // policy themselves and ask with the actual command line; asking here too
    // would ask twice, and without saying what runs.
    let asks_itself = shell || spec.domain == "diagnostics";
    match mode {
        Mode::Plan if shell => Decision::Deny(format!(
            "`{}` is refused in plan mode: plan mode runs no shell commands; switch to agent mode to run it",
            spec.name
        )),
        Mode::Plan if matches!(spec.risk, Risk::Write | Risk::Destructive) => Decision::Deny(format!(
            "`{}` is refused in plan mode: it is a {} tool and plan mode is read-only; switch to agent mode to change files",
            spec.name,
            spec.risk.as_str()
        )),
        // A downstream tool that does not declare itself read-only may change
        // anything behind its server; plan mode cannot vouch for it.
        Mode::Plan if !spec.is_native() && spec.risk == Risk::External => Decision::Deny(format!(
            "`{}` is refused in plan mode: it is an MCP tool that does not declare itself read-only; switch to agent mode to run it",
            spec.name
        )),
        Mode::Agent if spec.risk == Risk::Destructive && !asks_itself => {
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
