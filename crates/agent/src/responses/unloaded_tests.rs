use serde_json::{Value, json};

use super::*;

fn search(extra: Value) -> String {
    let mut content = json!({
        "matches": [
            {"name": "git_log", "status": "loaded", "description": "Git log."},
            {"name": "git_blame", "status": "available_lazy",
             "description": "Line-by-line authorship of a file: commit, author, date per line. Slow on big files."},
            {"name": "project_map", "status": "loaded", "description": "Loaded before this search."},
        ],
        "nextInstruction": "Loaded `git_log`. Also matching, not loaded: `git_blame`; load one with `select:git_blame`."});
    if let (Value::Object(content), Value::Object(extra)) = (&mut content, extra) {
        content.extend(extra);
    }
    quiver_engine::canonical::to_string(&json!({"content": content, "is_error": false,
        "metadata": {"loaded": ["git_log"]}}))
}

fn loaded() -> Vec<String> {
    vec!["git_log".to_string()]
}

#[test]
fn each_mode_says_what_matched_but_was_not_loaded_once() {
    let content = search(json!({}));
    assert_eq!(
        note(&content, &loaded(), UnloadedMatches::Name).as_deref(),
        Some("Also matched (select: to load): git_blame")
    );
    assert_eq!(
        note(&content, &loaded(), UnloadedMatches::Describe).as_deref(),
        Some("tool_search also matched, not loaded:\n- git_blame: Line-by-line authorship of a file")
    );
    assert_eq!(note(&content, &loaded(), UnloadedMatches::Omit), None);
}

#[test]
fn names_not_found_and_discovery_notes_go_in_every_mode() {
    let content = search(json!({"notFound": ["git_bisect"], "notes": ["MCP servers still starting: `jira`."]}));
    assert_eq!(
        note(&content, &loaded(), UnloadedMatches::Omit).as_deref(),
        Some("Not found: git_bisect.\nMCP servers still starting: `jira`.")
    );
    let named = note(&content, &loaded(), UnloadedMatches::Name).unwrap_or_default();
    assert!(named.ends_with("git_blame\nNot found: git_bisect.\nMCP servers still starting: `jira`."), "{named}");
}

#[test]
fn nothing_to_say_is_no_note() {
    let all = ["git_log".to_string(), "git_blame".to_string()];
    assert_eq!(note(&search(json!({})), &all, UnloadedMatches::Describe), None);
    assert_eq!(note("plain text", &[], UnloadedMatches::Name), None);
}

#[test]
fn one_line_is_the_first_clause_bounded_at_a_word() {
    assert_eq!(
        one_line("Git diff of unstaged (or staged) changes as JSON: files, hunks."),
        "Git diff of unstaged (or staged) changes as JSON"
    );
    // A short label before a colon is not the clause.
    assert_eq!(one_line("Git: show the log. More here."), "Git: show the log");
    // `e.g. x` does not end the sentence; a capital after ". " does.
    assert_eq!(one_line("Run a command, e.g. make. Slow."), "Run a command, e.g. make");
    let long = "word ".repeat(40);
    let line = one_line(&long);
    assert!(line.ends_with("word…") && line.chars().count() <= LINE_CHARS + 1, "{line}");
    assert_eq!(one_line("Ünïcödé ".repeat(20).trim()).chars().last(), Some('…'));
    assert_eq!(one_line(""), "");
}

#[test]
fn settings_parse_and_print_back() {
    for mode in [UnloadedMatches::Describe, UnloadedMatches::Name, UnloadedMatches::Omit] {
        assert_eq!(UnloadedMatches::parse(mode.as_str()), Some(mode));
    }
    assert_eq!(UnloadedMatches::parse("full"), None);
    assert_eq!(UnloadedMatches::default(), UnloadedMatches::Name);
}
