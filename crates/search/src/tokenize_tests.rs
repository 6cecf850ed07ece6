use super::*;

fn texts(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    split_words(s, &mut out);
    out.into_iter().map(|w| w.text).collect()
}

#[test]
fn splits_separators_and_camel_case() {
    assert_eq!(texts("list_items-now.ok"), ["list", "items", "now", "ok"]);
    assert_eq!(texts("getUserInfo"), ["getuserinfo", "get", "user", "info"]);
    assert_eq!(texts("HTTPServer"), ["httpserver", "http", "server"]);
}

#[test]
fn digit_runs_keep_joined_form() {
    assert_eq!(texts("k8s"), ["k8s", "8"]);
    assert_eq!(texts("gen2 v10"), ["gen2", "gen", "2", "v10", "10"]);
}

#[test]
fn placeholders_are_flagged() {
    let mut out = Vec::new();
    split_words("show <service-name> now", &mut out);
    let flags: Vec<(String, bool)> = out.into_iter().map(|w| (w.text, w.placeholder)).collect();
    assert_eq!(flags, [("show".into(), false), ("service".into(), true), ("name".into(), true), ("now".into(), false)]);
}

#[test]
fn joined_and_parts_have_kinds() {
    let mut out = Vec::new();
    split_words("MySQL", &mut out);
    let kinds: Vec<WordKind> = out.iter().map(|w| w.kind).collect();
    assert_eq!(kinds, [WordKind::Joined, WordKind::Part, WordKind::Part]);
}

#[test]
fn cjk_characters_are_tokens() {
    assert_eq!(texts("搜索web"), ["搜", "索", "web"]);
}

#[test]
fn stopwords() {
    assert!(is_stopword("the"));
    assert!(is_stopword("please"));
    assert!(!is_stopword("list"));
}

#[test]
fn yet_says_when_not_what() {
    assert!(is_stopword("yet"));
    // a tool whose text says "not yet" is not what "is the build done yet" asks for
    let idx = crate::SearchIndex::build(vec![
        crate::SearchDoc {
            name: "shell_wait".into(),
            description: "Wait for a background build; says whether it is done.".into(),
            ..Default::default()
        },
        crate::SearchDoc {
            name: "plan_list".into(),
            description: "Show the steps not done yet, yet to start.".into(),
            ..Default::default()
        },
    ]);
    let hits = idx.search("is the build done yet", 2, &|_| true);
    assert_eq!(idx.docs()[hits[0].doc].name, "shell_wait");
}

#[test]
fn stemming_and_exceptions() {
    let s = WordStemmer::new();
    assert_eq!(s.stem("databases"), s.stem("database"));
    assert_eq!(s.stem("settings"), "setting");
    assert_ne!(s.stem("settings"), s.stem("set"));
    assert_eq!(s.stem("k8s"), "k8s");
}

fn literals(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    split_words(s, &mut out);
    out.into_iter().filter(|w| w.literal).map(|w| w.text).collect()
}

#[test]
fn quoted_text_paths_file_names_and_urls_are_literal_values() {
    assert_eq!(literals("replace 'timeout = 30' with \"timeout = 60\" now"), ["timeout", "30", "timeout", "60"]);
    assert_eq!(literals("type `yes` into it"), ["yes"]);
    assert_eq!(literals("say \u{201c}hello\u{201d} and \u{2018}bye\u{2019}"), ["hello", "bye"]);
    assert_eq!(literals("show me src/main.rs, please"), ["src", "main", "rs"]);
    assert_eq!(literals("edit server.toml."), ["server", "toml"]);
    assert_eq!(literals("fetch https://example.com/a and ./run.sh"), ["https", "example", "com", "run", "sh"]);
    assert_eq!(
        literals("list a/b/c"),
        ["a", "b", "c"].iter().filter(|w| w.len() > 1).map(|w| w.to_string()).collect::<Vec<_>>()
    );
}

#[test]
fn apostrophes_prose_slashes_and_versions_are_not_literal() {
    // contractions and possessives open no quote
    assert!(literals("don't show the user's keys, it's fine").is_empty());
    assert!(literals("the users' files").is_empty());
    // an unclosed quote marks nothing
    assert!(literals("a \"dangling quote").is_empty());
    // one slash between words is prose; versions and abbreviations are not file names
    assert!(literals("set up CI/CD and OGG/Opus audio, e.g. v1.2 or 3.14").is_empty());
}

#[test]
fn snake_case_identifiers_are_literal_values() {
    assert_eq!(literals("where do we call parse_args?"), ["parse", "args"]);
    assert_eq!(literals("which files mention DATABASE_URL"), ["database", "url"]);
    // an underscore at an edge alone is no identifier join
    assert!(literals("a _private or trailing_ name").is_empty());
}

#[test]
fn so_far_is_filler_but_far_alone_is_not() {
    assert!(closes_filler(Some("so"), "far"));
    assert!(!closes_filler(None, "far"));
    assert!(!closes_filler(Some("how"), "far"));
}

#[test]
fn camel_case_identifiers_are_literal_values() {
    assert_eq!(literals("rename fetchData"), ["fetchdata", "fetch", "data"]);
    assert_eq!(literals("who wrote handleRetry?"), ["handleretry", "handle", "retry"]);
    // a word opening in capitals is a product name, not an identifier
    assert!(literals("connect MySQL to GitHub from PowerShell on macOS").is_empty());
}
