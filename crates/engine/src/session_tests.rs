use super::*;

#[test]
fn loads_append_in_order_without_duplicates() {
    let s = Session::new("t");
    s.advance_turn();
    assert_eq!(s.load(&["b".into(), "a".into()]), vec!["b", "a"]);
    s.advance_turn();
    assert_eq!(s.load(&["a".into(), "c".into()]), vec!["c"]);
    assert_eq!(s.loaded(), vec!["b", "a", "c"]);
    let state = s.lazy_state();
    assert_eq!(state.loaded_at_turn["b"], 1);
    assert_eq!(state.loaded_at_turn["c"], 2);
}

#[test]
fn unload_and_reset() {
    let s = Session::new("t");
    s.load(&["a".into(), "b".into()]);
    assert!(s.unload("a"));
    assert!(!s.unload("a"));
    assert_eq!(s.loaded(), vec!["b"]);
    s.record_search("q", vec!["b".into()]);
    s.reset_loads();
    assert!(s.loaded().is_empty());
    assert_eq!(s.lazy_state().search_history.len(), 1, "history survives compaction");
}

#[test]
fn typed_state_is_shared() {
    #[derive(Default)]
    struct Counter(std::sync::Mutex<u32>);
    let s = Session::new("t");
    *s.state::<Counter>().0.lock().unwrap() += 2;
    assert_eq!(*s.state::<Counter>().0.lock().unwrap(), 2);
}
