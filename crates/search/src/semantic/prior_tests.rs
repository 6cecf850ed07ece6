use super::*;

fn doc(name: &str, server: Option<&str>) -> SearchDoc {
    SearchDoc { name: name.into(), server: server.map(str::to_string), ..SearchDoc::default() }
}

fn tiny() -> IntentPrior {
    let text = serde_json::json!({
        "model_probes": [{"text": "probe", "vector": [1.0, 0.0]}],
        "classes": ["read_file", "git_status", "(other)"],
        "other": "(other)",
        "dim": 2,
        "weights": [[4.0, 0.0], [0.0, 4.0], [-4.0, -4.0]],
        "bias": [0.0, 0.0, 0.0],
    });
    IntentPrior::parse(&text.to_string()).expect("a consistent prior parses")
}

#[test]
fn the_committed_prior_parses_and_knows_the_other_class() {
    let p = IntentPrior::embedded().expect("native_prior.json parses");
    assert!(p.classes().len() > 50, "{} classes", p.classes().len());
    assert!(p.classes().iter().any(|c| c == "read_file"));
    assert!(p.classes().iter().any(|c| c == "(other)"));
}

#[test]
fn probabilities_sum_to_one_and_follow_the_weights() {
    let p = tiny();
    let probs = p.probabilities(&[1.0, 0.0]);
    assert!((probs.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    assert!(probs[0] > 0.9, "{probs:?}");
    // a vector of another dimension gets nothing rather than a guess
    assert_eq!(p.probabilities(&[1.0, 0.0, 0.0]), vec![0.0; 3]);
}

#[test]
fn only_built_in_tools_of_the_same_name_get_a_prior() {
    let p = tiny();
    // an MCP server's `read_file` is not quiver's, and `(other)` is no doc
    let docs = [doc("mcp__fs__read_file", Some("fs")), doc("git_status", None), doc("read_file", Some("fs"))];
    let of = p.docs_of_classes(&docs).expect("git_status is known");
    assert_eq!(of, vec![None, Some(1), None]);
    let probs = p.doc_probabilities(&[0.0, 1.0], &of, docs.len());
    assert_eq!(probs[0], 0.0);
    assert_eq!(probs[2], 0.0);
    assert!(probs[1] > 0.9, "{probs:?}");
    assert!(p.docs_of_classes(&[doc("mcp__fs__read_file", Some("fs"))]).is_none());
}

#[test]
fn an_inconsistent_file_is_an_error_not_a_prior() {
    let bad = serde_json::json!({
        "model_probes": [{"text": "probe", "vector": [1.0, 0.0]}],
        "classes": ["a", "b"], "other": null, "dim": 2,
        "weights": [[1.0, 0.0]], "bias": [0.0, 0.0],
    });
    let err = IntentPrior::parse(&bad.to_string()).expect_err("one weight row for two classes");
    assert!(err.contains("2 classes"), "{err}");
    assert!(IntentPrior::parse("{").is_err());
}
