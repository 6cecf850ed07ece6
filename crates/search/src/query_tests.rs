use super::{identifier_lookup, names_a_file, only_reference_urls, payload_span, value_kinds};
use crate::index::LONGEST_WORD;
use crate::{SearchDoc, SearchIndex};

/// A tool of the test catalogs (also the other rule modules' tests).
pub(crate) fn doc(name: &str, description: &str) -> SearchDoc {
    SearchDoc { name: name.into(), description: description.into(), domain: "x".into(), ..SearchDoc::default() }
}

/// The first hit's name for `q`.
pub(crate) fn top(idx: &SearchIndex, q: &str) -> String {
    let hits = idx.search(q, 5, &|_| true);
    hits.first().map(|h| idx.docs()[h.doc].name.clone()).unwrap_or_default()
}

#[test]
fn a_url_without_its_scheme_is_a_url_and_a_github_page_a_reference() {
    assert_eq!(value_kinds("read the page at docs.python.org/3/library/asyncio.html"), ["url"]);
    assert_eq!(value_kinds("what does docs.rs/serde say"), ["url"]);
    assert_eq!(value_kinds("get the diff of https://github.com/acme/web/pull/9"), ["url", "github"]);
    assert_eq!(value_kinds("who is on github.com/acme/api/issues/15?"), ["url", "github"]);
    // a path, a version directory or a blob page is no such thing
    assert!(value_kinds("show src/lib.rs and v1.x/notes").is_empty());
    assert_eq!(value_kinds("https://github.com/acme/app/blob/main/README.md"), ["url"]);
    assert!(!names_a_file("fetch docs.python.org/3/library/asyncio.html"));
    // a scheme alone is text to edit, not an address
    assert!(value_kinds("replace http:// with https:// in docs/links.md").is_empty());
}

#[test]
fn the_payload_after_a_label_ends_with_its_sentence() {
    // "note to self:" is words 0-2; the payload runs to the end
    assert_eq!(payload_span("note to self: the flaky test is slow"), Some((3, u32::MAX)));
    // a question after the data is the request again
    assert_eq!(payload_span("You have two lists: [1, 2]. Can you sort them?"), Some((4, 6)));
    for q in
        ["at 9:30 run it", "see https://x.dev", "grep for path:12", ": nothing before", "a b c d e f g h i: too long"]
    {
        assert_eq!(payload_span(q), None, "{q}");
    }
    let idx = SearchIndex::build(vec![
        doc("note", "Keep a short session note."),
        doc("run_tests", "Run the test suite and report failing tests."),
    ]);
    assert_eq!(top(&idx, "note: the flaky test is timing related"), "note");
    // the payload's words count less than the label's
    let lead = |idx: &SearchIndex| {
        let hits = idx.search("note: the test suite fails", 5, &|_| true);
        let score = |n: &str| hits.iter().find(|h| idx.docs()[h.doc].name == n).map_or(0.0, |h| h.score);
        score("note") / score("run_tests")
    };
    let off = SearchIndex::build_with(idx.docs().to_vec(), crate::RankParams { w_payload: 1.0, ..Default::default() });
    assert!(lead(&idx) > lead(&off), "{} {}", lead(&idx), lead(&off));
}

#[test]
fn look_at_is_a_read_and_look_for_a_search() {
    let idx = SearchIndex::build(vec![
        doc("read_file", "Read a file with line numbers."),
        doc("file_search", "Find files by fuzzy name match; look up a path."),
    ]);
    assert_eq!(top(&idx, "can you look at src/lib.rs for me"), "read_file");
    assert_eq!(top(&idx, "look for the routes file"), "file_search");
}

#[test]
fn an_opening_phrasal_verb_counts_by_its_meaning() {
    let idx = SearchIndex::build(vec![
        doc("agent_close", "Cancel a sub-agent: shut it down when it is done."),
        doc("rlm_close", "Stop an RLM session's runtime."),
    ]);
    assert_eq!(top(&idx, "shut down rlm"), "rlm_close");
    // the words "shut" and "down" alone favour the tool that uses them
    let lead = |idx: &SearchIndex| {
        let hits = idx.search("shut down rlm", 5, &|_| true);
        let score = |n: &str| hits.iter().find(|h| idx.docs()[h.doc].name == n).map_or(0.0, |h| h.score);
        score("rlm_close") / score("agent_close")
    };
    let off = SearchIndex::build_with(idx.docs().to_vec(), crate::RankParams { w_phrasal: 1.0, ..Default::default() });
    assert!(lead(&idx) > lead(&off), "{} {}", lead(&idx), lead(&off));
}

#[test]
fn a_question_whether_a_job_finished_asks_to_wait_for_it() {
    let words = |q: &str| {
        let mut w = Vec::new();
        crate::tokenize::split_words(q, &mut w);
        w
    };
    // "npm install" is words 2-3, between "is" and "finished"
    assert_eq!(super::completion_question(&words("is the npm install finished")), Some((1, 4)));
    assert!(super::completion_question(&words("has the build completed?")).is_some());
    for q in ["finish the report", "is it raining", "what is done in this file", "is finished"] {
        assert_eq!(super::completion_question(&words(q)), None, "{q}");
    }
    let idx = SearchIndex::build(vec![
        doc("shell_run", "Run a shell command: npm install, make, cargo build."),
        doc("shell_wait", "Wait for a background command: its new output and whether it finished."),
    ]);
    assert_eq!(top(&idx, "is the npm install finished"), "shell_wait");
    let off =
        SearchIndex::build_with(idx.docs().to_vec(), crate::RankParams { w_completion: 0.0, ..Default::default() });
    assert_eq!(top(&off, "is the npm install finished"), "shell_run");
}

#[test]
fn a_file_looked_up_by_its_name_asks_for_a_name_search() {
    let words = |q: &str| {
        let mut w = Vec::new();
        crate::tokenize::split_words(q, &mut w);
        w
    };
    assert!(super::file_name_lookup(&words("find the file called routes something")).is_some());
    assert_eq!(super::file_name_lookup(&words("where is package.json")), Some(u32::MAX));
    // making a folder with a name, or asking where a name is used, is not
    for q in ["set up a new directory named Projects", "where is parse_args called in main.rs", "where do we log"] {
        assert_eq!(super::file_name_lookup(&words(q)), None, "{q}");
    }
    let idx = SearchIndex::build(vec![
        doc("file_search", "Find files by fuzzy name match."),
        doc("grep_files", "Search file contents for a pattern: where is this function called."),
    ]);
    assert_eq!(top(&idx, "find the file called routes"), "file_search");
    let off =
        SearchIndex::build_with(idx.docs().to_vec(), crate::RankParams { w_file_name: 0.0, ..Default::default() });
    assert_eq!(top(&off, "find the file called routes"), "grep_files");
}

#[test]
fn abbreviations_and_host_names_are_not_files() {
    for q in ["the distance to Washington, D.C. in miles", "from 100 A.D to 1500", "the recipe from Foodnetwork.com"] {
        assert!(!names_a_file(q), "{q}");
    }
    assert!(names_a_file("open a.out"));
    assert!(names_a_file("edit src/main.c"));
}

/// How far `a` leads `b` for request `q` (score ratio; 0 when `a` is not listed).
fn lead(idx: &SearchIndex, q: &str, a: &str, b: &str) -> f32 {
    let hits = idx.search(q, 5, &|_| true);
    let score = |n: &str| hits.iter().find(|h| idx.docs()[h.doc].name == n).map_or(1e-6, |h| h.score);
    score(a) / score(b)
}

#[test]
fn a_change_inside_a_named_file_edits_it_and_content_into_one_writes_it() {
    use super::file_place_verb;
    assert_eq!(file_place_verb("set timeout = 30 in config.toml"), Some("edit"));
    assert_eq!(file_place_verb("remove the debug print on line 12 of utils.py"), Some("edit"));
    assert_eq!(file_place_verb("dump this json into fixtures/users.json"), Some("write"));
    // the file is the object, the place is no file, or nothing changes
    for q in
        ["create .gitignore with target/", "what's in Cargo.toml", "set the timeout in the config", "edit src/main.c"]
    {
        assert_eq!(file_place_verb(q), None, "{q}");
    }
    let idx = SearchIndex::build(vec![
        doc("edit_file", "Edit a file: replace exact text."),
        doc("configure", "Set the session's timeout and limits."),
        doc("write_file", "Write a whole file."),
        doc("read_json", "Read part of a JSON payload."),
    ]);
    let off =
        SearchIndex::build_with(idx.docs().to_vec(), crate::RankParams { w_file_edit: 0.0, ..Default::default() });
    let q = "set timeout = 30 in config.toml";
    assert!(lead(&idx, q, "edit_file", "configure") > lead(&off, q, "edit_file", "configure"));
    let q = "dump this json into fixtures/users.json";
    assert!(lead(&idx, q, "write_file", "read_json") > lead(&off, q, "write_file", "read_json"));
}

#[test]
fn taking_a_look_at_a_thing_is_viewing_it() {
    let words = |q: &str| {
        let mut w = Vec::new();
        crate::tokenize::split_words(q, &mut w);
        w
    };
    assert!(super::looks_at(&words("take a look at the logs")).is_some_and(|(_, light)| light != u32::MAX));
    assert!(super::looks_at(&words("could you look at the logs")).is_some_and(|(_, light)| light == u32::MAX));
    assert_eq!(super::looks_at(&words("look up the docs")), None);
    let idx = SearchIndex::build(vec![
        doc("read_logs", "Read the service logs."),
        doc("note", "Take a short note; take notes as you go."),
        doc("web_search", "Search the web: look up anything."),
    ]);
    let off = SearchIndex::build_with(idx.docs().to_vec(), crate::RankParams { w_look_at: 0.0, ..Default::default() });
    let q = "take a look at the logs";
    assert_eq!(top(&idx, q), "read_logs");
    assert!(lead(&idx, q, "read_logs", "note") > lead(&off, q, "read_logs", "note"));
    assert!(lead(&idx, q, "read_logs", "web_search") > lead(&off, q, "read_logs", "web_search"));
}

#[test]
fn a_code_identifier_looked_for_is_a_search_pattern() {
    assert!(identifier_lookup("where do we use tenant_id in the code"));
    assert!(identifier_lookup("find all uses of getUserById"));
    assert!(identifier_lookup("which files mention MAX_RETRIES?"));
    // an identifier without a lookup, or a lookup without an identifier
    assert!(!identifier_lookup("rename parse_args to parse_argv"));
    assert!(!identifier_lookup("use the jira MCP's search_issues to look up PROJ-123"));
    assert!(!identifier_lookup("where do we call the parser"));
    // a product name is no identifier
    assert!(!identifier_lookup("where is the GitHub token"));

    let idx = SearchIndex::build(vec![
        doc("grep_files", "Find a pattern in file contents or code."),
        doc("run_python", "Run Python code in a session."),
        doc("read_file", "Read a file."),
        doc("web_search", "Search the web."),
    ]);
    let q = "where do we use tenant_id in the code";
    assert_eq!(top(&idx, q), "grep_files");
    // the rule is what lifts the search tool over the one that runs code
    let off = SearchIndex::build_with(idx.docs().to_vec(), crate::RankParams { w_pattern: 0.0, ..Default::default() });
    let margin = |i: &SearchIndex| {
        let hits = i.search(q, 5, &|_| true);
        let score = |n: &str| hits.iter().find(|h| i.docs()[h.doc].name == n).map_or(0.0, |h| h.score);
        score("grep_files") - score("run_python")
    };
    assert!(margin(&idx) > margin(&off) + 0.1, "{} {}", margin(&idx), margin(&off));
}

#[test]
fn an_issue_url_names_the_issue_more_than_a_page() {
    assert!(only_reference_urls("read https://github.com/acme/api/issues/51"));
    assert!(only_reference_urls("get the diff of github.com/acme/web/pull/9."));
    assert!(!only_reference_urls("compare https://github.com/acme/web/pull/9 with https://example.com/spec"));
    assert!(!only_reference_urls("https://github.com/acme/app/blob/main/README.md"));
    assert!(!only_reference_urls("read the issue"));

    let idx = SearchIndex::build(vec![
        doc("fetch_url", "Fetch a web page by URL and return its text."),
        doc("issue_context", "Read a GitHub issue with its comments."),
    ]);
    let q = "read https://github.com/acme/api/issues/51";
    assert_eq!(top(&idx, q), "issue_context");
    let off =
        SearchIndex::build_with(idx.docs().to_vec(), crate::RankParams { w_reference_url: 1.0, ..Default::default() });
    assert_eq!(top(&off, q), "fetch_url");
}

#[test]
fn pasted_output_weighs_less_than_the_ask() {
    let idx = SearchIndex::build(vec![
        doc("web_search", "Search the web for pages about a question."),
        doc("exec_shell", "Run a shell command such as npm, cargo or make; dependency install."),
    ]);
    let q = "npm ERR! code ERESOLVE unable to resolve dependency tree\nanyone else had this? search the web";
    assert_eq!(top(&idx, q), "web_search");
}

#[test]
fn a_pasted_run_longer_than_any_word_matches_only_exactly() {
    // a catalog word of 40 letters, and requests that run it on
    let word = "abcdefghij".repeat(4);
    let idx = SearchIndex::build(vec![
        doc("decode_token", &format!("Decode a {word} token.")),
        doc("read_file", "Read a file."),
    ]);
    // run on to 60 letters it is still a word, reached through its prefix
    let near = format!("{word}{}", "k".repeat(20));
    assert!(!idx.analyze(&near).terms.is_empty());
    // run on past any word's length it is pasted data: no prefix,
    // shared-prefix or compound expansion is tried (each costs the word's
    // length squared; one 200 kB token took seconds)
    let run = format!("{word}{}", "k".repeat(LONGEST_WORD + 6 - word.len()));
    assert!(run.len() > LONGEST_WORD && run.len() <= 2 * word.len());
    assert!(idx.analyze(&run).terms.is_empty());
    // a request made of one enormous token is still answered
    let huge = "x".repeat(200_000);
    let hits = idx.search(&format!("read the file {huge}"), 5, &|_| true);
    assert!(hits.iter().any(|h| idx.docs()[h.doc].name == "read_file"));
}
