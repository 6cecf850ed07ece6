use super::*;

fn doc(name: &str, description: &str) -> SearchDoc {
    SearchDoc {
        name: name.into(),
        aliases: vec![],
        domain: "mcp".into(),
        description: description.into(),
        prompt_snippet: None,
        params: vec![],
        server: None,
    }
}

#[test]
fn doc_text_spells_the_short_name_in_words() {
    assert_eq!(doc_text(&doc("mcp__gh__create_issue", " Open an issue. ")), "create issue: Open an issue.");
    assert_eq!(doc_text(&doc("getUserInfo", "")), "get user info");
    assert_eq!(doc_text(&doc("uber.ride", "x")), "uber ride: x");
}

#[test]
fn cache_round_trips_and_rejects_a_different_key() {
    let dir = std::env::temp_dir().join(format!("qvec-test-{}", std::process::id()));
    let path = dir.join("k.qvec");
    let v = vec![0.5f32, -1.0, 2.0, 0.25];
    write_cache(&path, "key1", 2, 2, &v).unwrap();
    assert_eq!(read_cache(&path, "key1", 2, 2), Some(v));
    assert_eq!(read_cache(&path, "key2", 2, 2), None);
    assert_eq!(read_cache(&path, "key1", 4, 1), None);
    std::fs::write(&path, b"QVEC0001garbage").unwrap();
    assert_eq!(read_cache(&path, "key1", 2, 2), None);
    let _ = std::fs::remove_dir_all(&dir);
    // the key covers the model and every text in order
    let t = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_ne!(cache_key("m", &t(&["a", "b"])), cache_key("m", &t(&["b", "a"])));
    assert_ne!(cache_key("m", &t(&["ab"])), cache_key("m", &t(&["a", "b"])));
    assert_ne!(cache_key("m1", &t(&["a"])), cache_key("m2", &t(&["a"])));
}
