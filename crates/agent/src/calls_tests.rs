use super::{complete_json, continues, make_ids_unique};
use crate::message::ToolCall;

fn call(id: &str) -> ToolCall {
    ToolCall { id: id.into(), name: "read_file".into(), arguments: "{}".into() }
}

#[test]
fn repeated_and_missing_ids_become_unique_and_deterministic() {
    let mut calls = vec![call("a"), call("a"), call(""), call("b"), call("a"), call("")];
    assert_eq!(make_ids_unique(&mut calls), 4);
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["a", "a_1", "call_2", "b", "a_4", "call_5"]);
    // Already unique: nothing changes.
    assert_eq!(make_ids_unique(&mut calls), 0);
}

#[test]
fn an_assigned_id_never_collides_with_a_later_given_one() {
    let mut calls = vec![call("x"), call("x"), call("x_1")];
    make_ids_unique(&mut calls);
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["x", "x_1_", "x_1"]);
}

#[test]
fn a_fragment_continues_a_call_until_its_json_is_whole() {
    assert!(continues("", "{\"pa"));
    assert!(continues("{\"pa", "th\":1}"));
    assert!(!continues("{\"path\":1}", "{\"path\":2}"));
    // An empty repeat (a header repeated with no arguments) never opens a call.
    assert!(continues("{\"path\":1}", ""));
    assert!(complete_json(" {} ") && !complete_json("") && !complete_json("{\"a\":"));
}
