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
fn stemming_and_exceptions() {
    let s = WordStemmer::new();
    assert_eq!(s.stem("databases"), s.stem("database"));
    assert_eq!(s.stem("settings"), "setting");
    assert_ne!(s.stem("settings"), s.stem("set"));
    assert_eq!(s.stem("k8s"), "k8s");
}
