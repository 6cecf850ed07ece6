use super::*;

fn t() -> (Thesaurus, WordStemmer) {
    let s = WordStemmer::new();
    (Thesaurus::new(&s), s)
}

#[test]
fn abbreviations_expand_one_way() {
    let (th, s) = t();
    let exp = |w: &str| th.expansion(&s.stem(w)).to_vec();
    assert_eq!(exp("vm"), vec![s.stem("virtual"), s.stem("machine")]);
    assert_eq!(exp("pr"), vec![s.stem("pull"), s.stem("request")]);
    assert_eq!(exp("tts"), vec![s.stem("text"), s.stem("speech")]);
    // one way: the words do not expand back through this table
    assert!(exp("virtual").is_empty());
    // a verb is not an abbreviation (azure's "transcribe -> speech text" was one)
    assert!(exp("transcribe").is_empty());
}

#[test]
fn phrases_abbreviate_to_one_word() {
    let (th, s) = t();
    let words: Vec<String> = ["open", "a", "pull", "request"].iter().map(|w| s.stem(w)).collect();
    let at: Vec<(String, usize)> = th.phrases_at(&words[2..]).map(|(a, n)| (a.to_string(), n)).collect();
    assert_eq!(at, vec![(s.stem("pr"), 2)]);
    assert_eq!(th.phrases_at(&words[..2]).count(), 0);
    let words: Vec<String> = ["text", "speech"].iter().map(|w| s.stem(w)).collect();
    assert_eq!(th.phrases_at(&words).next().map(|(a, _)| a.to_string()), Some(s.stem("tts")));
}

#[test]
fn synonyms_are_symmetric_and_actions_classify_verbs() {
    let (th, s) = t();
    let syn = |w: &str| th.synonyms(&s.stem(w)).to_vec();
    assert!(syn("delete").contains(&s.stem("remove")));
    assert!(syn("remove").contains(&s.stem("delete")));
    assert!(syn("repo").contains(&s.stem("repository")));
    assert!(syn("nonsenseword").is_empty());
    let act = |w: &str| th.action(&s.stem(w));
    assert_ne!(act("list") & act("show"), 0);
    assert_eq!(act("delete") & act("create"), 0);
    assert_eq!(act("repository"), 0);
}
