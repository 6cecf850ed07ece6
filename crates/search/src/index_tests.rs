use super::*;

#[test]
fn short_name_strips_mcp_prefix() {
    let d =
        SearchDoc { name: "mcp__git-hub__list_issues".into(), server: Some("git-hub".into()), ..Default::default() };
    assert_eq!(d.short_name(), "list_issues");
    let d = SearchDoc { name: "mcp__x__y__z".into(), ..Default::default() };
    assert_eq!(d.short_name(), "y__z");
    let d = SearchDoc { name: "read_file".into(), ..Default::default() };
    assert_eq!(d.short_name(), "read_file");
}

#[test]
fn decompound_prefers_fewer_even_pieces() {
    let vocab = ["key", "vault", "node", "pool", "sync", "group", "keyv"];
    let known = |w: &str| vocab.contains(&w);
    assert_eq!(decompound("keyvault", &known), Some(vec!["key".to_string(), "vault".to_string()]));
    assert_eq!(decompound("nodepoolsync", &known), Some(vec!["node".into(), "pool".into(), "sync".into()]));
    assert_eq!(decompound("keyboard", &known), None);
    assert_eq!(decompound("k8svault", &known), None);
}

#[test]
fn a_word_longer_than_any_a_catalog_spells_is_not_split() {
    // every piece is "known", so only the length stops it
    let known = |_: &str| true;
    let long = format!("{}{}", "a".repeat(LONGEST_WORD / 2), "b".repeat(LONGEST_WORD / 2 + 1));
    assert_eq!(decompound(&long, &known), None);
    let fits = format!("{}{}", "a".repeat(LONGEST_WORD / 2), "b".repeat(LONGEST_WORD / 2));
    assert!(decompound(&fits, &known).is_some());
}

#[test]
fn negated_clauses_are_dropped() {
    let t = drop_negated("Get one key. Not for listing multiple keys. Fast.");
    assert!(!t.contains("listing"));
    assert!(t.contains("Get one key.") && t.contains("Fast."));
}

#[test]
fn first_sentence_stops_at_period_or_newline() {
    assert_eq!(first_sentence("List things. More text"), "List things");
    assert_eq!(first_sentence("  One line\nsecond"), "One line");
    assert_eq!(first_sentence("v1.2 is fine"), "v1.2 is fine");
}

#[test]
fn build_keeps_doc_order_and_handles_empty() {
    let docs = vec![
        SearchDoc { name: "b_tool".into(), description: "second".into(), ..Default::default() },
        SearchDoc { name: "a_tool".into(), description: "first".into(), ..Default::default() },
    ];
    let idx = SearchIndex::build(docs.clone());
    assert_eq!(idx.docs(), &docs[..]);
    assert_eq!(idx.name_rank, vec![1, 0]);
    let empty = SearchIndex::build(Vec::new());
    assert!(empty.search("anything", 5, &|_| true).is_empty());
}

#[test]
fn boilerplate_parameters_do_not_make_topic_words_common() {
    let tenant = ("tenant".to_string(), "The Microsoft Entra ID tenant to use.".to_string());
    let mut docs: Vec<SearchDoc> = (0..12)
        .map(|i| SearchDoc {
            name: format!("tool_{i}_show"),
            description: format!("Show thing number {i}."),
            params: vec![tenant.clone()],
            ..Default::default()
        })
        .collect();
    docs.push(SearchDoc {
        name: "sql_admin_list".into(),
        description: "List the Microsoft Entra administrators of a SQL server.".into(),
        params: vec![tenant.clone()],
        ..Default::default()
    });
    let idx = SearchIndex::build(docs.clone());
    let entra = idx.terms.get("entra").copied().map(|t| idx.postings[t as usize].len());
    assert_eq!(entra, Some(1));
    let all = SearchIndex::build_with(docs, RankParams { boiler_share: 0.0, ..RankParams::default() });
    let entra = all.terms.get("entra").copied().map(|t| all.postings[t as usize].len());
    assert_eq!(entra, Some(13));
}

#[test]
fn only_a_long_description_gets_a_lead_sentence_field() {
    let one =
        SearchDoc { name: "a".into(), description: "Runs a quick compliance review.".into(), ..Default::default() };
    let two = SearchDoc {
        name: "b".into(),
        description: "Runs a quick compliance review. Requires a subscription id.".into(),
        ..Default::default()
    };
    let lead = |d: &SearchDoc| -> Vec<String> {
        field_words(d, &|_| false, Examples::OFF)[Field::Summary as usize].iter().map(|w| w.text.clone()).collect()
    };
    assert!(lead(&one).is_empty());
    assert_eq!(lead(&two), ["runs", "quick", "compliance", "review"]);
}

#[test]
fn examples_are_their_own_field_and_unindexed_at_weight_zero() {
    let d = SearchDoc {
        name: "git_status".into(),
        description: "Git status of the workspace.".into(),
        examples: vec!["is the working tree clean?".into(), "git diff src/app.ts".into()],
        ..Default::default()
    };
    let words = |which: Examples| -> Vec<String> {
        field_words(&d, &|_| false, which)[Field::Example as usize].iter().map(|w| w.text.clone()).collect()
    };
    let on = Examples { on: true, values: true, min_examples: 1 };
    let all = words(on);
    assert_eq!(all[..3], ["working", "tree", "clean"]);
    assert!(all.iter().any(|w| w == "app"), "{all:?}");
    // without literal values: the file name's words go, the verb stays
    assert_eq!(words(Examples { values: false, ..on }), ["working", "tree", "clean", "git", "diff"]);
    // only words two examples share
    assert!(words(Examples { min_examples: 2, ..on }).is_empty());
    assert!(words(Examples::OFF).is_empty());
    let other = SearchDoc { name: "read_file".into(), description: "Read a file.".into(), ..Default::default() };
    let docs = vec![d, other];
    // At weight 0 an example's words are not in the index at all, so they
    // neither match nor change another word's rarity.
    let mut params = RankParams::default();
    params.set("example", 0.0).unwrap();
    let off = SearchIndex::build_with(docs.clone(), params);
    assert!(!off.terms.contains_key("clean"));
    assert!(off.search("is the tree clean", 5, &|_| true).is_empty());
    let on = SearchIndex::build_with(docs, RankParams::default());
    let hits = on.search("is the tree clean", 5, &|_| true);
    assert_eq!(hits.first().map(|h| on.docs()[h.doc].name.as_str()), Some("git_status"));
}
