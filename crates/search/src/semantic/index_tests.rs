use super::*;

fn doc(name: &str, description: &str) -> SearchDoc {
    SearchDoc {
        name: name.into(),
        aliases: vec![],
        domain: "mcp".into(),
        description: description.into(),
        prompt_snippet: None,
        phrasings: Vec::new(),
        examples: Vec::new(),
        params: vec![],
        server: None,
    }
}

fn tmp(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("qvec-{tag}-{}-{:?}", std::process::id(), std::thread::current().id()))
}

#[test]
fn doc_text_spells_the_short_name_in_words() {
    assert_eq!(doc_text(&doc("mcp__gh__create_issue", " Open an issue. ")), "create issue: Open an issue.");
    assert_eq!(doc_text(&doc("getUserInfo", "")), "get user info");
    assert_eq!(doc_text(&doc("uber.ride", "x")), "uber ride: x");
}

#[test]
fn phrasings_are_embedded_after_their_tool_and_blank_ones_skipped() {
    let mut a = doc("git_diff", "Show changes.");
    a.phrasings = vec!["what did I change".into(), "  ".into(), "show my edits".into()];
    let (texts, owner) = embedded_texts(&[doc("read_file", "Read a file."), a]);
    assert_eq!(texts, ["read file: Read a file.", "git diff: Show changes.", "what did I change", "show my edits"]);
    assert_eq!(owner, [0, 1, 1, 1]);
}

#[test]
fn examples_are_embedded_after_the_phrasings_and_marked() {
    let mut a = doc("git_diff", "Show changes.");
    a.phrasings = vec!["what did I change".into()];
    a.examples = vec!["git diff --cached".into(), " ".into(), "diff of utils.py".into()];
    let (texts, owner, example) = embedded_rows(&[a, doc("read_file", "Read a file.")]);
    assert_eq!(
        texts,
        [
            "git diff: Show changes.",
            "what did I change",
            "git diff --cached",
            "diff of utils.py",
            "read file: Read a file."
        ]
    );
    assert_eq!(owner, [0, 0, 0, 0, 1]);
    assert_eq!(example, [false, false, true, true, false]);
}

#[test]
fn an_example_row_counts_at_its_weight_and_not_at_all_at_zero() {
    let index = SemanticIndex {
        dim: 2,
        // doc 0: a description row; doc 1: a description row far from the
        // query and an example row on it
        vectors: vec![0.6, 0.8, 0.0, 1.0, 1.0, 0.0],
        owner: vec![0, 1, 1],
        example: vec![false, false, true],
        example_weight: EXAMPLE_WEIGHT,
        example_top: 1,
        keys: vec![[0; 16], [1; 16], [2; 16]],
        name_rank: vec![0, 1],
        model_id: "m".into(),
        encoded: 3,
        prior: None,
    };
    let q = [1.0, 0.0];
    assert_eq!(index.clone().with_example_weight(1.0).scores(&q), vec![0.6, 1.0]);
    assert_eq!(index.clone().with_example_weight(0.5).scores(&q), vec![0.6, 0.5]);
    assert_eq!(index.with_example_weight(0.0).scores(&q), vec![0.6, 0.0], "the description row alone");
}

#[test]
fn examples_count_by_the_mean_of_their_closest_few() {
    let index = SemanticIndex {
        dim: 2,
        // doc 0: a description row; doc 1: a description row and three
        // examples, one on the query, one half way, one orthogonal
        vectors: vec![0.6, 0.8, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.6, 0.8],
        owner: vec![0, 1, 1, 1, 1],
        example: vec![false, false, true, true, true],
        example_weight: 1.0,
        example_top: 1,
        keys: vec![[0; 16], [1; 16], [2; 16], [3; 16], [4; 16]],
        name_rank: vec![0, 1],
        model_id: "m".into(),
        encoded: 5,
        prior: None,
    };
    let q = [1.0, 0.0];
    let doc1 = |k: usize| index.clone().with_example_top(k).scores(&q)[1];
    assert!((doc1(1) - 1.0).abs() < 1e-6);
    assert!((doc1(2) - 0.8).abs() < 1e-6, "the two closest: (1.0 + 0.6) / 2");
    assert!((doc1(3) - 1.6 / 3.0).abs() < 1e-6);
    assert!((doc1(9) - 1.6 / 3.0).abs() < 1e-6, "fewer examples than k: the mean of all");
    // the description row still counts when it is closer than the mean
    let q2 = [0.0, 1.0];
    assert!((index.clone().with_example_top(3).scores(&q2)[1] - 1.0).abs() < 1e-6);
}

#[test]
fn a_tool_scores_by_its_closest_row() {
    let index = SemanticIndex {
        dim: 2,
        // doc 0: one row; doc 1: a description row far from the query and a
        // phrasing row close to it
        vectors: vec![0.6, 0.8, 0.0, 1.0, 1.0, 0.0],
        owner: vec![0, 1, 1],
        example: vec![false; 3],
        example_weight: EXAMPLE_WEIGHT,
        example_top: 1,
        keys: vec![[0; 16], [1; 16], [2; 16]],
        name_rank: vec![0, 1],
        model_id: "m".into(),
        encoded: 3,
        prior: None,
    };
    assert_eq!(index.scores(&[1.0, 0.0]), vec![0.6, 1.0]);
    assert_eq!(index.scores(&[0.0, 1.0]), vec![0.8, 1.0]);
    assert_eq!(index.scores(&[1.0]), vec![0.0, 0.0], "a vector of the wrong size scores nothing");
}

#[test]
fn the_store_round_trips_and_rejects_another_model_or_size() {
    let dir = tmp("store");
    let path = store_path(&dir, "model-a");
    assert_ne!(path, store_path(&dir, "model-b"), "one store per model");
    let (k1, k2) = (text_key("model-a", "x"), text_key("model-a", "y"));
    assert_ne!(k1, text_key("model-b", "x"), "the key covers the model");
    let v1 = [0.5f32, -1.0];
    let v2 = [2.0f32, 0.25];
    write_store(&path, "model-a", 2, &[(k1, &v1[..]), (k2, &v2[..])]).unwrap();
    assert_eq!(read_store(&path, "model-a", 2), vec![(k1, v1.to_vec()), (k2, v2.to_vec())]);
    assert!(read_store(&path, "model-b", 2).is_empty());
    assert!(read_store(&path, "model-a", 4).is_empty());
    std::fs::write(&path, b"QVEC0002garbage").unwrap();
    assert!(read_store(&path, "model-a", 2).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Built-in tools (no server, with example requests) the prior knows.
fn built_in(name: &str, description: &str, example: &str) -> SearchDoc {
    SearchDoc { examples: vec![example.into()], ..doc(name, description) }
}

fn issue_tools() -> Vec<SearchDoc> {
    vec![
        built_in("github_comment", "Post a comment on an issue or pull request.", "comment on issue 12"),
        built_in("github_issue_context", "Read an issue with its comments.", "show me issue 12"),
        SearchDoc { server: Some("gh".into()), ..doc("mcp__gh__get_issue", "Get an issue.") },
    ]
}

/// The prior over the embedded model's own index reads the index's query
/// vector; an MCP server's tool gets nothing from it.
#[test]
fn the_embedded_model_reads_requests_for_the_prior_itself() {
    let enc = Encoder::embedded().expect("the embedded model loads");
    let index = SemanticIndex::build(&enc, &issue_tools(), None).expect("builds");
    let query = "read github issue 77 with its comments";
    let v = enc.encode_query(query).expect("encodes");
    let p = index.prior(query, &v).expect("the prior applies to built-in tools").per_doc;
    assert!(p[1] > p[0], "issue context {:?} vs comment {:?}", p[1], p[0]);
    assert_eq!(p[2], None);
    // its own vector is what it reads: another vector gives other odds
    let other = enc.encode_query("post a comment").expect("encodes");
    assert_ne!(index.prior(query, &other).unwrap().per_doc, p);
}

/// A transformer no prior was trained on borrows the static model's: the
/// request is read through the embedded model, so the transformer's own
/// query vector does not matter, and the odds are the embedded model's.
#[test]
fn a_transformer_borrows_the_static_prior_through_the_embedded_model() {
    let Some(dir) = crate::semantic::test_model_dir() else { return };
    let enc = Encoder::load(&dir).expect("the test model loads");
    let embedded = Encoder::embedded().expect("the embedded model loads");
    let docs = issue_tools();
    let index = SemanticIndex::build(&enc, &docs, None).expect("builds");
    let query = "read github issue 77 with its comments";
    let v = enc.encode_query(query).expect("encodes");
    let p = index.prior(query, &v).expect("a transformer gets the static prior").per_doc;
    assert_eq!(index.prior(query, &vec![0.0; enc.dim()]).unwrap().per_doc, p, "its own vector is not read");
    let own = SemanticIndex::build(&embedded, &docs, None).unwrap();
    assert_eq!(own.prior(query, &embedded.encode_query(query).unwrap()).unwrap().per_doc, p);
    assert!(p[1] > p[0], "issue context {:?} vs comment {:?}", p[1], p[0]);
}
