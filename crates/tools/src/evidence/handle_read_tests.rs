#![allow(clippy::unwrap_used, clippy::expect_used)]

use quiver_engine::spill::{SpillConfig, SpillStore, VarHandles};
use serde_json::{Value, json};

use crate::test_support::Harness;

fn register(h: &Harness, payload: Value) -> String {
    h.ctx.session.state::<VarHandles>().register(payload)
}

async fn read_json(h: &Harness, args: Value) -> Value {
    let result = h.call("handle_read", args).await;
    assert!(!result.is_error, "{}", result.content_text());
    result.content
}

fn sample() -> Value {
    json!({"items": [
        {"name": "alpha", "n": 1, "tags": ["x"]},
        {"name": "beta", "n": 2, "tags": []},
        {"name": "gamma", "n": 3, "tags": ["x", "y"]},
        {"name": "delta", "n": 4, "tags": ["y"]},
    ], "total": 4, "next": null})
}

#[tokio::test]
async fn slices_arrays_strings_and_objects() {
    let h = Harness::new();
    let list = register(&h, json!((0..10).collect::<Vec<_>>()));
    let out = read_json(&h, json!({"handle": list, "op": "slice", "start": 2, "end": 5})).await;
    assert_eq!(out, json!({"type": "array", "total": 10, "start": 2, "end": 5, "items": [2, 3, 4]}));
    let last = read_json(&h, json!({"handle": list, "op": "slice", "start": -3})).await;
    assert_eq!(last["items"], json!([7, 8, 9]));
    let neg_end = read_json(&h, json!({"handle": list, "op": "slice", "end": -8})).await;
    assert_eq!(neg_end["items"], json!([0, 1]));

    let text = register(&h, json!("héllo wörld"));
    let cut = h.ok("handle_read", json!({"handle": text, "op": "slice", "start": 1, "end": 5})).await;
    assert_eq!(cut, "éllo");

    let obj = register(&h, sample());
    let entries = read_json(&h, json!({"handle": obj, "op": "slice", "start": 1})).await;
    assert_eq!(entries["entries"], json!({"next": null, "total": 4}));
}

#[tokio::test]
async fn large_slices_are_bounded_with_a_continuation() {
    let h = Harness::new();
    let big = register(&h, json!((0..2000).map(|i| format!("{i:04} {}", "z".repeat(100))).collect::<Vec<_>>()));
    let result = h.call("handle_read", json!({"handle": big, "op": "slice", "start": 0, "end": 2000})).await;
    assert_eq!(result.metadata["truncated"], true);
    let next = result.content["next_start"].as_u64().unwrap();
    assert!(next > 100 && next < 300, "{next}");
    assert_eq!(result.content["items"].as_array().unwrap().len() as u64, next);
    assert!(result.content.to_string().len() < 25 * 1024);

    let huge = register(&h, json!({"blob": "q".repeat(100_000)}));
    let out = read_json(&h, json!({"handle": huge, "op": "jsonpath", "path": "$.blob"})).await;
    assert_eq!(out["matches"][0]["value"]["too_large"]["type"], "string");
    assert_eq!(out["matches"][0]["value"]["too_large"]["chars"], 100_000);
}

#[tokio::test]
async fn ranges_count_lines_of_the_payload_as_text() {
    let h = Harness::new();
    let text = register(&h, json!("one\ntwo\nthree\nfour\n"));
    let lines = h.ok("handle_read", json!({"handle": text, "op": "range", "offset": 2, "limit": 2})).await;
    assert_eq!(lines, "     2\ttwo\n     3\tthree\n");
    // The words before one vocabulary (1-based, inclusive end), as recorded calls say.
    let old = h.ok("handle_read", json!({"handle": text, "op": "range", "start": 2, "end": 3})).await;
    assert_eq!(old, lines);
    let obj = register(&h, sample());
    let pretty = h.call("handle_read", json!({"handle": obj, "op": "range", "offset": 1, "limit": 3})).await;
    assert_eq!(pretty.content_text(), "     1\t{\n     2\t  \"items\": [\n     3\t    {\n");
    assert!(pretty.metadata["total_lines"].as_u64().unwrap() > 20);
}

#[tokio::test]
async fn counts_by_type() {
    let h = Harness::new();
    let obj = register(&h, sample());
    assert_eq!(
        read_json(&h, json!({"handle": obj, "op": "count"})).await,
        json!({"type": "object", "count": 3, "keys": ["items", "next", "total"], "keys_truncated": false})
    );
    let list = register(&h, json!([1, 2, 3]));
    assert_eq!(read_json(&h, json!({"handle": list, "op": "count"})).await, json!({"type": "array", "count": 3}));
    let text = register(&h, json!("a\nbé\n"));
    assert_eq!(
        read_json(&h, json!({"handle": text, "op": "count"})).await,
        json!({"type": "string", "chars": 5, "lines": 2, "bytes": 6})
    );
    let num = register(&h, json!(42));
    assert_eq!(read_json(&h, json!({"handle": num, "op": "count"})).await, json!({"type": "number", "count": 1}));
}

#[tokio::test]
async fn jsonpath_queries_with_locations() {
    let h = Harness::new();
    let obj = register(&h, sample());
    let names = read_json(&h, json!({"handle": obj, "op": "jsonpath", "path": "$.items[?@.n > 2].name"})).await;
    assert_eq!(names["count"], 2);
    assert_eq!(names["matches"][0], json!({"location": "$['items'][2]['name']", "value": "gamma"}));
    assert_eq!(names["matches"][1]["value"], "delta");
    let tagged = read_json(&h, json!({"handle": obj, "op": "jsonpath", "path": "$..tags[?@ == 'y']"})).await;
    assert_eq!(tagged["count"], 2);
    let nothing = read_json(&h, json!({"handle": obj, "op": "jsonpath", "path": "$.missing"})).await;
    assert_eq!(nothing["count"], 0);
    // A string payload holding JSON text is queried as JSON.
    let text = register(&h, json!(sample().to_string()));
    let first = read_json(&h, json!({"handle": text, "op": "jsonpath", "path": "$.items[0].name"})).await;
    assert_eq!(first["matches"][0]["value"], "alpha");
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::new();
    let none = h.err("handle_read", json!({"handle": "var_1", "op": "count"})).await;
    assert!(none.contains("no var handles"), "{none}");
    let obj = register(&h, sample());
    let plain = register(&h, json!("just words"));
    let num = register(&h, json!(1.5));
    let call = |args| async { h.err("handle_read", args).await };
    let unknown = call(json!({"handle": "var_9", "op": "count"})).await;
    assert!(unknown.contains("unknown var_handle `var_9`") && unknown.contains("var_1, var_2, var_3"), "{unknown}");
    let bad_path = call(json!({"handle": obj, "op": "jsonpath", "path": "$.items[?"})).await;
    assert!(bad_path.contains("invalid JSONPath `$.items[?`") && bad_path.contains("starts at `$`"), "{bad_path}");
    let no_dollar = call(json!({"handle": obj, "op": "jsonpath", "path": "items[0]"})).await;
    assert!(no_dollar.contains("invalid JSONPath"), "{no_dollar}");
    assert!(call(json!({"handle": obj, "op": "jsonpath"})).await.contains("needs `path`"));
    assert!(call(json!({"handle": plain, "op": "jsonpath", "path": "$.a"})).await.contains("not JSON"));
    assert!(call(json!({"handle": obj, "op": "count", "path": "$"})).await.contains("jsonpath only"));
    assert!(call(json!({"handle": obj, "op": "count", "start": 1})).await.contains("slice only"));
    assert!(call(json!({"handle": obj, "op": "slice", "limit": 1})).await.contains("range only"));
    assert!(call(json!({"handle": num, "op": "slice"})).await.contains("needs an array, object or string"));
    let list = register(&h, json!([1, 2, 3]));
    assert!(call(json!({"handle": list, "op": "slice", "start": 3})).await.contains("past the end (length 3)"));
    assert!(call(json!({"handle": list, "op": "slice", "start": 2, "end": 1})).await.contains("before `start`"));
    assert!(call(json!({"handle": plain, "op": "range", "offset": 0})).await.contains("minimum of 1"));
    assert!(call(json!({"handle": plain, "op": "range", "offset": 5})).await.contains("past the end"));
    let bad_op = call(json!({"handle": obj, "op": "peek"})).await;
    assert!(bad_op.contains("op"), "{bad_op}");
    let wrong_type = call(json!({"handle": obj, "op": "slice", "start": "2"})).await;
    assert!(wrong_type.contains("start"), "{wrong_type}");
}

#[tokio::test]
async fn spilled_json_is_reachable_from_its_out_handle() {
    let h = Harness::new();
    let root = h.dir.path().join(".spill");
    h.ctx.session.state::<SpillStore>().configure(SpillConfig { root, threshold_bytes: 100 });
    h.write("data.json", &sample().to_string());
    // read_file answers with numbered lines (text, not JSON): no var handle.
    let read = h.call("read_file", json!({"path": "data.json"})).await;
    assert!(read.content_text().contains("handle `out_1`"));
    assert!(read.metadata["spilled"].get("var_handle").is_none());
    let hint = h.err("handle_read", json!({"handle": "out_1", "op": "count"})).await;
    assert!(hint.contains("retrieve_tool_result"), "{hint}");
}
