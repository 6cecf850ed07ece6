//! Sub-agent roles: how the model may spell them, the system prompt each
//! child starts with, and the limits each one has. The limits are enforced
//! at dispatch (see `guard.rs`), not merely described in the prompt.

use std::fmt;

use quiver_engine::{Capabilities, Risk, ToolSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    General,
    Explore,
    Plan,
    Review,
    Implementer,
    Verifier,
    Custom,
}

/// Canonical names then aliases, matched case-insensitively.
const SPELLINGS: &[(Role, &[&str])] = &[
    (Role::General, &["general", "worker", "default", "general-purpose"]),
    (Role::Explore, &["explore", "explorer", "exploration"]),
    (Role::Plan, &["plan", "planning", "awaiter"]),
    (Role::Review, &["review", "reviewer", "code-review"]),
    (Role::Implementer, &["implementer", "implement", "implementation", "builder"]),
    (Role::Verifier, &["verifier", "verify", "verification", "validator", "tester"]),
    (Role::Custom, &["custom"]),
];

/// The one tool a verifier may run besides read-only ones.
const VERIFIER_RUNNER: &str = "run_tests";

impl Role {
    pub fn parse(s: &str) -> Result<Role, String> {
        let wanted = s.trim().to_ascii_lowercase();
        SPELLINGS.iter().find(|(_, names)| names.contains(&wanted.as_str())).map(|(role, _)| *role).ok_or_else(|| {
            let accepted: Vec<String> = SPELLINGS.iter().map(|(_, names)| names.join("|")).collect();
            format!("unknown sub-agent type `{s}`; accepted: {}", accepted.join(", "))
        })
    }

    pub fn as_str(self) -> &'static str {
        SPELLINGS.iter().find(|(r, _)| *r == self).map_or("general", |(_, names)| names[0])
    }

    /// Why this role may not call `spec`, or `None` when it may. `allowed` is
    /// a custom agent's allowlist (canonical names).
    pub fn refusal(self, spec: &ToolSpec, allowed: &[String]) -> Option<String> {
        let caps = spec.capabilities;
        let changes_things =
            spec.risk != Risk::Read || caps.intersects(Capabilities::WRITES_FILES.union(Capabilities::PERSISTS));
        let refused = match self {
            Role::General | Role::Implementer => None,
            Role::Custom => (!allowed.iter().any(|n| n == &spec.name))
                .then(|| format!("it is not in this custom agent's allowed_tools ({})", allowed.join(", "))),
            // A plan's artifacts (checklist, update_plan, note) are read-risk
            // session state, so "writes nothing but its plan" is this same rule.
            Role::Explore | Role::Plan if changes_things => Some("this role is read-only".to_string()),
            Role::Review if changes_things => Some("a reviewer is read-only".to_string()),
            Role::Review if caps.contains(Capabilities::RUNS_COMMANDS) => {
                Some("a reviewer runs no commands".to_string())
            }
            Role::Verifier if spec.name == VERIFIER_RUNNER => None,
            Role::Verifier if changes_things => {
                Some(format!("a verifier writes nothing and runs only `{VERIFIER_RUNNER}`"))
            }
            Role::Explore | Role::Plan | Role::Review | Role::Verifier => None,
        };
        refused.map(|why| format!("`{}` is refused for this {} sub-agent: {why}", spec.name, self.as_str()))
    }

    /// The child's system prompt: its stance, then the output contract.
    pub fn system_prompt(self) -> String {
        let stance = match self {
            Role::General => "You are a general sub-agent: do the whole task you are given, end to end.",
            Role::Explore => {
                "You are an explore sub-agent: read-only. Orient first (project root, README/AGENTS.md), \
search only the likely scope, and map the relevant code fast. Cite path:line-range evidence."
            }
            Role::Plan => {
                "You are a plan sub-agent: analyse and produce a strategy (checklist, update_plan). \
Change no files and run nothing; the parent executes."
            }
            Role::Review => {
                "You are a review sub-agent: read and grade the change with severity per finding. \
Do not patch and run no commands; describe each fix so the parent can dispatch it."
            }
            Role::Implementer => {
                "You are an implementer sub-agent: land the specified change with the minimum edit, \
no drive-by refactoring, and run a quick verification before handing back."
            }
            Role::Verifier => {
                "You are a verifier sub-agent: run the tests or validation (run_tests) and report the outcome. \
Do not fix failures: capture the failing assertion and put fix candidates under RISKS."
            }
            Role::Custom => "You are a sub-agent with a narrow tool allowlist: use only the tools you are allowed.",
        };
        format!("{stance}\n\n{}", crate::subagent::contract::FORMAT)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
