use super::*;

/// A built-in tool (no server, with example requests) or an MCP server's.
fn doc(name: &str, server: Option<&str>) -> SearchDoc {
    SearchDoc {
        name: name.into(),
        server: server.map(str::to_string),
        examples: vec![format!("an example request for {name}")],
        ..SearchDoc::default()
    }
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
    let p = IntentPrior::embedded().expect("static_prior.json parses");
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
    assert_eq!(probs.per_doc[0], None);
    assert_eq!(probs.per_doc[2], None);
    assert!(probs.per_doc[1].is_some_and(|p| p > 0.9), "{probs:?}");
    assert!(!probs.covers_catalog(), "an MCP server's tools are in the catalog");
    assert!(p.docs_of_classes(&[doc("mcp__fs__read_file", Some("fs"))]).is_none());
    // a catalog file's third-party `read_file` (no server, no examples) is not quiver's
    let third_party = SearchDoc { name: "read_file".into(), ..SearchDoc::default() };
    assert!(p.docs_of_classes(&[third_party]).is_none());
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

/// With the model it was trained on (the embedded one), the committed prior
/// applies, reads a request its siblings' words pull apart, and leaves an
/// MCP server's tools out; with the probes' vectors changed (another model),
/// it does not fit.
#[test]
fn the_committed_prior_fits_the_model_it_was_trained_on() {
    let enc = Encoder::embedded().expect("the embedded model loads");
    let prior = IntentPrior::embedded().expect("parses");
    assert!(prior.fits(&enc), "the committed prior was trained on another model than the embedded one");
    let docs = [doc("github_comment", None), doc("github_issue_context", None), doc("mcp__gh__get_issue", Some("gh"))];
    let of = prior.docs_of_classes(&docs).expect("built-in tools");
    let q = enc.encode_query("read github issue 77 with its comments").expect("encodes");
    let p = prior.doc_probabilities(&q, &of, docs.len()).per_doc;
    assert!(p[1] > p[0], "issue context {:?} vs comment {:?}", p[1], p[0]);
    assert_eq!(p[2], None);
    // the same weights with the probes' vectors reversed: another model's
    let mut f: serde_json::Value = serde_json::from_str(EMBEDDED).expect("JSON");
    for p in f["model_probes"].as_array_mut().into_iter().flatten() {
        if let Some(v) = p["vector"].as_array_mut() {
            v.reverse();
        }
    }
    let shifted = IntentPrior::parse(&f.to_string()).expect("still consistent");
    assert!(!shifted.fits(&enc), "a prior whose probes are another model's vectors must not fit");
}

fn with_hidden(hidden: serde_json::Value) -> Result<IntentPrior, String> {
    let text = serde_json::json!({
        "model_probes": [{"text": "probe", "vector": [1.0, 0.0]}],
        "classes": ["read_file", "git_status"], "other": null, "dim": 2,
        "weights": [[0.0, 0.0], [0.0, 0.0]], "bias": [0.0, 0.0],
        "hidden": hidden,
    });
    IntentPrior::parse(&text.to_string())
}

/// A prior with a hidden layer averages its probabilities with the
/// regression's: here the regression is indifferent (0.5 each) and the
/// hidden layer sure, so the average lands halfway.
#[test]
fn a_hidden_layer_is_averaged_with_the_regression() {
    let p = with_hidden(serde_json::json!({
        "weights_in": [[1.0, 0.0], [0.0, 1.0]], "bias_in": [0.0, 0.0],
        "weights_out": [[40.0, 0.0], [0.0, 40.0]], "bias_out": [0.0, 0.0],
    }))
    .expect("a consistent hidden layer parses");
    let probs = p.probabilities(&[1.0, -1.0]);
    assert!((probs[0] - 0.75).abs() < 1e-4, "{probs:?}");
    assert!((probs.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    // ReLU: the negative unit adds nothing, so [-1, 1] favours git_status alone
    let probs = p.probabilities(&[-1.0, 1.0]);
    assert!((probs[1] - 0.75).abs() < 1e-4, "{probs:?}");
}

#[test]
fn an_inconsistent_hidden_layer_is_an_error() {
    let err = with_hidden(serde_json::json!({
        "weights_in": [[1.0, 0.0], [0.0, 1.0]], "bias_in": [0.0, 0.0],
        "weights_out": [[1.0, 0.0]], "bias_out": [0.0, 0.0],
    }))
    .expect_err("one output row for two classes");
    assert!(err.contains("hidden layer of 2 units"), "{err}");
    let err = with_hidden(serde_json::json!({
        "weights_in": [[1.0, 0.0, 0.0]], "bias_in": [0.0],
        "weights_out": [[1.0], [1.0]], "bias_out": [0.0, 0.0],
    }))
    .expect_err("an input row three wide for two dimensions");
    assert!(err.contains("hidden layer"), "{err}");
}

#[test]
fn the_committed_prior_has_its_hidden_layer() {
    let p = IntentPrior::embedded().expect("the committed prior parses");
    assert!(p.hidden.is_some(), "the prior is trained with a hidden layer");
}
