//! The command gate: the one place that decides whether a process may start.
//! Every tool that starts one (`exec_shell`, `task_shell_start`, `run_tests`,
//! `diagnostics`, git, speech) and the MCP client launching a stdio server ask
//! it, through [`crate::context::ToolContext::authorize_command`].
//!
//! Order, the same in every mode: deny rules first (they hold even in yolo),
//! then who asked for the command — the tool's own fixed command and the
//! user's config are trusted, a project's config needs the user's approval
//! (remembered), a model-written line runs unasked only when every command in
//! it matches a trusted rule — then the mode (plan runs nothing the model
//! wrote, yolo asks nothing). Parsing a shell line is a convenience that saves
//! prompts, not a security boundary: deny rules guard against accidents.

use super::Mode;
use super::exec_policy::{ExecPolicy, Permit, Verdict};
use super::trust::{Source, TrustKey, TrustStore};
use crate::manifest::ExecRules;

/// Who wants the process started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandOrigin {
    /// A line the model wrote (a shell command, a custom test command).
    Model,
    /// The tool's own fixed command (`git status`, `cargo --version`, the
    /// default test runner, `espeak-ng`): trusted once deny rules pass.
    Tool,
    /// A process a config file defines (an MCP server).
    Config { source: Source, key: TrustKey },
}

/// One process to judge. `line` is what deny rules are matched against and
/// what an approval question shows.
#[derive(Debug, Clone)]
pub struct CommandRequest {
    pub line: String,
    pub origin: CommandOrigin,
}

impl CommandRequest {
    pub fn model(line: impl Into<String>) -> Self {
        CommandRequest { line: line.into(), origin: CommandOrigin::Model }
    }

    pub fn tool(line: impl Into<String>) -> Self {
        CommandRequest { line: line.into(), origin: CommandOrigin::Tool }
    }

    /// Shows argv as a shell line (quoted where needed) for rules and questions.
    pub fn tool_argv<S: AsRef<str>>(argv: &[S]) -> Self {
        CommandRequest::tool(shown_argv(argv))
    }
}

/// Quotes each word that needs it, so the line reads back as the same argv.
pub fn shown_argv<S: AsRef<str>>(argv: &[S]) -> String {
    argv.iter()
        .map(|w| shlex::try_quote(w.as_ref()).map(|q| q.into_owned()).unwrap_or_else(|_| w.as_ref().to_string()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The gate's answer before anybody is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateVerdict {
    Allow(Permit),
    /// Refused, worded for the model.
    Deny(String),
    /// Needs a yes from whoever hosts the session; on yes, `remember` (if
    /// any) is recorded in the trust store.
    Ask {
        question: String,
        remember: Option<TrustKey>,
    },
}

/// The exec policy (built-in rules plus the manifests' `[exec_policy]`, with
/// trusted rules from the user's file only) and the remembered approvals.
#[derive(Debug)]
pub struct CommandGate {
    policy: ExecPolicy,
    trust: TrustStore,
}

impl CommandGate {
    pub fn new(rules: &ExecRules, trust: TrustStore) -> Self {
        CommandGate { policy: ExecPolicy::default().with_rules(rules), trust }
    }

    pub fn policy(&self) -> &ExecPolicy {
        &self.policy
    }

    pub fn trust_store(&self) -> &TrustStore {
        &self.trust
    }

    pub fn judge(&self, mode: Mode, request: &CommandRequest) -> GateVerdict {
        let verdict = self.policy.evaluate(&request.line);
        if let Verdict::Denied { rule, command } = &verdict {
            return GateVerdict::Deny(format!(
                "refused by the exec policy: `{command}` matches the deny rule `{rule}`. Deny rules hold in every mode; do not retry it in another form."
            ));
        }
        match &request.origin {
            CommandOrigin::Tool => GateVerdict::Allow(Permit::Trusted),
            CommandOrigin::Config { source, .. } if source.may_widen() => GateVerdict::Allow(Permit::Trusted),
            CommandOrigin::Config { key, .. } if self.trust.is_trusted(key) => GateVerdict::Allow(Permit::Remembered),
            CommandOrigin::Config { .. } if mode == Mode::Yolo => GateVerdict::Allow(Permit::Yolo),
            CommandOrigin::Config { key, .. } => GateVerdict::Ask {
                question: format!(
                    "start `{}` (MCP server `{}`, defined by the project in {}, not by you)? It runs as you.",
                    request.line,
                    key.subject,
                    key.workspace.display()
                ),
                remember: Some(key.clone()),
            },
            CommandOrigin::Model if mode == Mode::Plan => {
                GateVerdict::Deny("plan mode runs no commands; switch to agent mode to run it".into())
            }
            CommandOrigin::Model => match verdict {
                Verdict::Trusted => GateVerdict::Allow(Permit::Trusted),
                _ if mode == Mode::Yolo => GateVerdict::Allow(Permit::Yolo),
                Verdict::Untrusted { command, reason } => {
                    let line = request.line.trim();
                    let question = if command == line {
                        format!("run the command `{command}` ({reason})?")
                    } else {
                        format!("run the command `{line}`? (`{command}`: {reason})")
                    };
                    GateVerdict::Ask { question, remember: None }
                }
                Verdict::Denied { .. } => GateVerdict::Deny("refused by the exec policy".into()),
            },
        }
    }
}

impl Default for CommandGate {
    fn default() -> Self {
        CommandGate::new(&ExecRules::default(), TrustStore::ephemeral())
    }
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
