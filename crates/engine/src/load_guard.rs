//! Which of a search's confident matches are listed but not loaded: a tool
//! that asks for approval (closing an issue, cancelling a task, deleting) is
//! loaded only when the request names that tool's own action.
//!
//! Why: a search loads what it is confident of, and confidence is relative
//! (every match within a margin of the best). "open an issue: login page
//! 500s" ranks `github_close_issue` high on "issue" alone; loading it puts a
//! tool that acts on GitHub in every later request for a model that asked to
//! do something else. Listing it costs nothing and `select:` loads it.
//!
//! "Names its action" is kept simple on purpose: one of the tool's action
//! words (the manifest's `[tools.NAME] action`, e.g. close / shut / resolve)
//! is a word of the request, or a word starting with its stem ("closing",
//! "cancelled"). An MCP tool its server marks destructive has no manifest
//! entry; its action word is its name's first word (`delete_file` →
//! "delete"), the verb by the usual verb_object naming. The ranking still
//! decides what is confident; this only holds back, never adds. It is not a
//! permission either: a held tool called anyway still asks for approval.

use crate::manifest::ToolOverlay;
use crate::names;
use crate::spec::{Risk, ToolSpec};

/// The words naming `spec`'s own action when loading it needs them; `None`
/// for a tool a search may load on any confident match.
pub fn action_words(spec: &ToolSpec, overlay: Option<&ToolOverlay>) -> Option<Vec<String>> {
    if let Some(words) = overlay.map(|o| &o.action).filter(|w| !w.is_empty()) {
        return Some(words.iter().map(|w| w.to_lowercase()).collect());
    }
    if !spec.is_native() && spec.risk == Risk::Destructive {
        let tool = names::split(&spec.name).map_or(spec.name.as_str(), |(_, tool)| tool);
        let verb = tool.split(['_', '-', '.']).find(|w| !w.is_empty())?;
        return Some(vec![verb.to_lowercase()]);
    }
    None
}

/// Whether a word of `query` is one of `words` or starts with one's stem
/// (a final `e` dropped when four letters stay: close → clos, so "closing"
/// and "closed" count; file stays file, so "filter" does not).
pub fn names_action(query: &str, words: &[String]) -> bool {
    let stems: Vec<&str> =
        words.iter().map(|w| w.strip_suffix('e').filter(|s| s.chars().count() >= 4).unwrap_or(w)).collect();
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .any(|w| words.contains(&w) || stems.iter().any(|s| w.starts_with(s)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_request_names_an_action_by_its_word_or_stem() {
        let close = words(&["close", "shut", "resolve"]);
        assert!(names_action("close issue 12", &close));
        assert!(names_action("Closing #12 now that it's fixed", &close));
        assert!(names_action("issue 7 is resolved", &close));
        assert!(!names_action("open an issue: login page 500s", &close));
        assert!(!names_action("show me issue 12", &close));
        let file = words(&["file"]);
        assert!(names_action("file a bug", &file));
        assert!(!names_action("filter the issues", &file));
    }

    #[test]
    fn destructive_mcp_tools_are_guarded_by_their_verb() {
        let spec = |name: &str, risk: Risk, native: bool| ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: serde_json::json!({}),
            domain: crate::domain::Domain::Mcp,
            risk,
            capabilities: Default::default(),
            source: if native {
                crate::spec::ToolSource::Native
            } else {
                crate::spec::ToolSource::Mcp { server: "fs".into(), direct: false }
            },
            prompt_snippet: None,
        };
        assert_eq!(
            action_words(&spec("mcp__fs__delete_file", Risk::Destructive, false), None),
            Some(words(&["delete"]))
        );
        assert_eq!(action_words(&spec("mcp__fs__read_file", Risk::Read, false), None), None);
        // A native tool is guarded by its manifest entry, not by its risk.
        assert_eq!(action_words(&spec("run_tests", Risk::Destructive, true), None), None);
        let overlay = ToolOverlay { action: words(&["Cancel"]), ..Default::default() };
        assert_eq!(action_words(&spec("task_cancel", Risk::Write, true), Some(&overlay)), Some(words(&["cancel"])));
    }
}
