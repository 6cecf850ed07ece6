#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, Value, json};

use super::{InputAlias, Unit, apply};

fn run(aliases: &[InputAlias], args: Value) -> Result<Value, String> {
    let Value::Object(mut map) = args else { panic!("not an object") };
    apply("t", aliases, &mut map)?;
    Ok(Value::Object(map))
}

#[test]
fn a_rename_moves_the_value_and_leaves_other_arguments() {
    let aliases = [InputAlias::rename("task", "task_id")];
    assert_eq!(run(&aliases, json!({"task": "task-3", "x": 1})).unwrap(), json!({"task_id": "task-3", "x": 1}));
    assert_eq!(run(&aliases, json!({"task_id": "task-3"})).unwrap(), json!({"task_id": "task-3"}));
}

#[test]
fn both_words_agreeing_is_fine_and_disagreeing_is_refused_naming_both() {
    let aliases = [InputAlias::rename("type", "agent_type")];
    assert_eq!(
        run(&aliases, json!({"type": "explore", "agent_type": "explore"})).unwrap(),
        json!({"agent_type": "explore"})
    );
    let err = run(&aliases, json!({"type": "explore", "agent_type": "plan"})).unwrap_err();
    assert!(err.contains("`type`") && err.contains("`agent_type`"), "{err}");
    assert!(err.contains("\"explore\"") && err.contains("\"plan\""), "{err}");
    assert!(err.contains("give only `agent_type`"), "{err}");
}

#[test]
fn seconds_become_milliseconds_and_a_disagreement_shows_the_conversion() {
    let aliases = [InputAlias::converted("eval_timeout_secs", "eval_timeout_ms", Unit::SecondsToMs)];
    assert_eq!(run(&aliases, json!({"eval_timeout_secs": 30})).unwrap(), json!({"eval_timeout_ms": 30000}));
    assert_eq!(run(&aliases, json!({"eval_timeout_secs": 1.5})).unwrap(), json!({"eval_timeout_ms": 1500}));
    assert_eq!(
        run(&aliases, json!({"eval_timeout_secs": 2, "eval_timeout_ms": 2000})).unwrap(),
        json!({"eval_timeout_ms": 2000})
    );
    let err = run(&aliases, json!({"eval_timeout_secs": 2, "eval_timeout_ms": 2})).unwrap_err();
    assert!(err.contains("read as `eval_timeout_ms`: 2000"), "{err}");
}

#[test]
fn a_value_of_the_wrong_type_is_left_for_the_schema_to_name() {
    let aliases = [InputAlias::converted("eval_timeout_secs", "eval_timeout_ms", Unit::SecondsToMs)];
    assert_eq!(run(&aliases, json!({"eval_timeout_secs": "30"})).unwrap(), json!({"eval_timeout_ms": "30"}));
}

/// retrieve_tool_result's and fim_edit's windows: 1-based, inclusive end.
#[test]
fn an_inclusive_line_range_becomes_offset_and_limit() {
    let aliases = [
        InputAlias::rename("start", "offset"),
        InputAlias::converted("end", "limit", Unit::InclusiveEnd { start: "start" }),
    ];
    assert_eq!(run(&aliases, json!({"start": 10, "end": 19})).unwrap(), json!({"offset": 10, "limit": 10}));
    assert_eq!(run(&aliases, json!({"start": 7, "end": 7})).unwrap(), json!({"offset": 7, "limit": 1}));
    assert_eq!(run(&aliases, json!({"start": 5})).unwrap(), json!({"offset": 5}));
    // The order of the table does not matter: each conversion reads the call as sent.
    let reversed = [aliases[1], aliases[0]];
    assert_eq!(run(&reversed, json!({"start": 10, "end": 19})).unwrap(), json!({"offset": 10, "limit": 10}));
    // An old end with the new first line.
    assert_eq!(run(&aliases, json!({"offset": 3, "end": 4})).unwrap(), json!({"offset": 3, "limit": 2}));
    assert!(run(&aliases, json!({"start": 9, "end": 3})).unwrap_err().contains("before"));
    assert!(run(&aliases, json!({"end": 3})).unwrap_err().contains("needs `start`"));
    let err = run(&aliases, json!({"start": 1, "end": 10, "limit": 5})).unwrap_err();
    assert!(err.contains("read as `limit`: 10") && err.contains("`limit`: 5"), "{err}");
}

#[test]
fn a_condition_limits_an_alias_to_calls_of_one_kind() {
    // handle_read: `start` of a `range` is a first line now; of a `slice` it is still `start`.
    let aliases = [InputAlias::rename("start", "offset").when("op", "range")];
    assert_eq!(run(&aliases, json!({"op": "range", "start": 4})).unwrap(), json!({"op": "range", "offset": 4}));
    assert_eq!(run(&aliases, json!({"op": "slice", "start": 4})).unwrap(), json!({"op": "slice", "start": 4}));
}

/// task_shell_wait: the old `task_id` (the shell job) is `job_id` now, and
/// the old `task` (the durable task) is `task_id`.
#[test]
fn a_word_that_changed_meaning_is_read_by_the_call_it_is_in() {
    let aliases =
        [InputAlias::rename("task_id", "job_id").unless_given("job_id"), InputAlias::rename("task", "task_id")];
    assert_eq!(
        run(&aliases, json!({"task_id": "task-1", "task": "task-3"})).unwrap(),
        json!({"job_id": "task-1", "task_id": "task-3"})
    );
    assert_eq!(run(&aliases, json!({"task_id": "task-1"})).unwrap(), json!({"job_id": "task-1"}));
    assert_eq!(
        run(&aliases, json!({"job_id": "task-1", "task_id": "task-3"})).unwrap(),
        json!({"job_id": "task-1", "task_id": "task-3"})
    );
    let err = run(&aliases, json!({"job_id": "task-1", "task_id": "task-3", "task": "task-4"})).unwrap_err();
    assert!(err.contains("`task`") && err.contains("`task_id`"), "{err}");
}

/// retrieve_tool_result: `n` (a count) and `end` (a last line) both became `limit`.
#[test]
fn two_old_words_for_one_new_one_must_agree() {
    let aliases = [
        InputAlias::rename("n", "limit"),
        InputAlias::rename("start", "offset"),
        InputAlias::converted("end", "limit", Unit::InclusiveEnd { start: "start" }),
    ];
    assert_eq!(run(&aliases, json!({"n": 3, "start": 1, "end": 3})).unwrap(), json!({"limit": 3, "offset": 1}));
    let err = run(&aliases, json!({"n": 5, "start": 1, "end": 3})).unwrap_err();
    assert!(err.contains("`n` and `end` are both former names of `limit`") && err.contains("(5 and 3)"), "{err}");
}

#[test]
fn no_table_changes_nothing() {
    let mut map: Map<String, Value> = json!({"a": 1}).as_object().unwrap().clone();
    apply("t", &[], &mut map).unwrap();
    assert_eq!(Value::Object(map), json!({"a": 1}));
}
