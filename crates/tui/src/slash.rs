//! Slash commands: what each is called (with aliases), what it takes, and
//! the one-line help the palette and `/help` show.

use quiver_engine::Mode;

#[derive(Debug, Clone, PartialEq)]
pub enum Slash {
    Help,
    Quit,
    Mode(Option<Mode>),
    Model(Option<String>),
    Status,
    Tools(Option<String>),
    Diff,
    Compact,
    Resume,
    Jobs(Vec<String>),
    Mcp(Vec<String>),
    Relay(Option<String>),
    Agent(Option<String>),
    Rlm(Option<String>),
    Work,
    New,
}

/// Every command, for `/help` and the palette: (name, arguments, help).
pub const COMMANDS: &[(&str, &str, &str)] = &[
    ("/help", "", "the keys and commands"),
    ("/mode", "[plan|agent|yolo]", "switch mode (yolo asks once)"),
    ("/model", "[NAME]", "show or switch the model"),
    ("/status", "", "session, model, context and cache"),
    ("/tools", "[QUERY]", "loaded tools, or search the surface"),
    ("/diff", "", "what this session changed in the workspace"),
    ("/compact", "", "summarize the conversation so far"),
    ("/resume", "", "pick a recorded session of this workspace (Ctrl+R)"),
    ("/jobs", "[show|poll|wait|stdin|cancel ID]", "shell jobs"),
    ("/mcp", "[init|add|get|enable|disable|remove|validate|tools|import|reload ...]", "MCP servers"),
    ("/relay", "[FOCUS]", "write the session relay (.quiver/handoff.md)"),
    ("/agent", "[PROMPT]", "sub-agents: list them, or start one"),
    ("/rlm", "[PROMPT]", "run a prompt through the RLM tool"),
    ("/work", "", "show or hide the Work panel"),
    ("/new", "", "start a new session"),
    ("/quit", "", "leave (Ctrl+C twice)"),
];

fn words(rest: &str) -> Vec<String> {
    rest.split_whitespace().map(str::to_string).collect()
}

fn opt(rest: &str) -> Option<String> {
    let rest = rest.trim();
    (!rest.is_empty()).then(|| rest.to_string())
}

/// Parses a composer line that starts with `/`; `Err` says what was wrong.
pub fn parse(line: &str) -> Result<Slash, String> {
    let line = line.trim();
    let (name, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    Ok(match name {
        "/help" | "/?" => Slash::Help,
        "/quit" | "/exit" | "/q" => Slash::Quit,
        "/mode" => Slash::Mode(match rest.trim() {
            "" => None,
            m => Some(m.parse().map_err(|_| format!("`{m}` is not a mode: plan, agent or yolo"))?),
        }),
        "/model" => Slash::Model(opt(rest)),
        "/status" => Slash::Status,
        "/tools" => Slash::Tools(opt(rest)),
        "/diff" => Slash::Diff,
        "/compact" => Slash::Compact,
        "/resume" => Slash::Resume,
        "/jobs" => Slash::Jobs(words(rest)),
        "/mcp" => Slash::Mcp(words(rest)),
        "/relay" | "/batonpass" | "/接力" => Slash::Relay(opt(rest)),
        "/agent" | "/agents" => Slash::Agent(opt(rest)),
        "/rlm" => Slash::Rlm(opt(rest)),
        "/work" => Slash::Work,
        "/new" | "/clear" => Slash::New,
        other => {
            let known: Vec<&str> = COMMANDS.iter().map(|(n, _, _)| *n).collect();
            let close = known.iter().find(|k| k.starts_with(other) || other.starts_with(*k));
            return Err(match close {
                Some(k) => format!("unknown command {other}: did you mean {k}? (/help lists them)"),
                None => format!("unknown command {other} (/help lists them)"),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_aliases_and_arguments() {
        assert_eq!(parse("/relay"), Ok(Slash::Relay(None)));
        assert_eq!(parse("/batonpass tests first"), Ok(Slash::Relay(Some("tests first".into()))));
        assert_eq!(parse("/接力"), Ok(Slash::Relay(None)));
        assert_eq!(parse("/mode yolo"), Ok(Slash::Mode(Some(Mode::Yolo))));
        assert!(parse("/mode fast").unwrap_err().contains("plan, agent or yolo"));
        assert_eq!(parse("/jobs cancel sh_1"), Ok(Slash::Jobs(vec!["cancel".into(), "sh_1".into()])));
        assert!(parse("/stat").unwrap_err().contains("/status"));
    }
}
