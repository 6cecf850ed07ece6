use super::*;
use crate::tokenize::split_words;

fn words(s: &str) -> Vec<Word> {
    let mut out = Vec::new();
    split_words(s, &mut out);
    out
}

fn known(w: &str) -> bool {
    ["key", "database", "policy", "box", "bus", "status", "analysi", "class"].contains(&w)
}

#[test]
fn looks_plural_needs_a_known_singular() {
    assert!(looks_plural("keys", &known));
    assert!(looks_plural("databases", &known));
    assert!(looks_plural("policies", &known));
    assert!(looks_plural("boxes", &known));
    // -ss, -us, -is endings and short words are not plurals
    assert!(!looks_plural("class", &known));
    assert!(!looks_plural("status", &known));
    assert!(!looks_plural("analysis", &known));
    assert!(!looks_plural("bus", &known));
    assert!(!looks_plural("its", &known));
    // an unknown stem is not evidence of a plural
    assert!(!looks_plural("towers", &known));
    assert!(!looks_plural("clés", &known));
}

fn shape_of(q: &str) -> (Intent, Option<String>) {
    let w = words(q);
    let s = shape(&w, &known);
    (s.intent, s.opener.map(str::to_string))
}

#[test]
fn phrasal_verbs_open_a_request_with_the_verb_they_mean() {
    assert_eq!(shape_of("please set up a database").1.as_deref(), Some("create"));
    assert_eq!(shape_of("spin up a box").1.as_deref(), Some("create"));
    assert_eq!(shape_of("tear down the database").1.as_deref(), Some("delete"));
    assert_eq!(shape_of("get rid of old keys").1.as_deref(), Some("delete"));
    assert_eq!(shape_of("shut down the box").1.as_deref(), Some("stop"));
    assert_eq!(shape_of("look up a key").1.as_deref(), Some("lookup"));
    assert_eq!(shape_of("turn on the box").1.as_deref(), Some("start"));
    // only as the opener: `set` alone stays `set`
    assert_eq!(shape_of("set the key").1.as_deref(), Some("set"));
}

#[test]
fn intent_is_list_for_collections_and_get_for_one_named_item() {
    assert_eq!(shape_of("show me the keys").0, Intent::List);
    assert_eq!(shape_of("list every database").0, Intent::List);
    assert_eq!(shape_of("show key <mykey>").0, Intent::Get);
    assert_eq!(shape_of("get details of the database").0, Intent::Get);
    // not a read request: no list/get intent
    assert_eq!(shape_of("delete the keys").0, Intent::None);
    // a plural in the scope part does not make a list request
    assert_eq!(shape_of("show key <mykey> in databases").0, Intent::Get);
}

#[test]
fn scope_and_means_positions() {
    let w = words("list keys in vault prod using the cli");
    let s = shape(&w, &known);
    let pos = |t: &str| w.iter().find(|x| x.text == t).map(|x| x.pos);
    assert_eq!(s.scope_pos, pos("in"));
    assert_eq!(s.instrument_pos, pos("using"));
    assert_eq!(s.purpose_pos, None);
    // a leading scope word before any content is not a scope
    let w = words("in short, list keys");
    assert_eq!(shape(&w, &known).scope_pos, None);
}
