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
