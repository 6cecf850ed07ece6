use super::check_name;

#[test]
fn session_names_are_plain_labels() {
    for ok in ["s", "log.analysis", "run-2_b", &"a".repeat(64)] {
        assert!(check_name(ok).is_ok(), "{ok}");
    }
    for bad in ["", "a b", "../x", "name/with/slash", "ünï", &"a".repeat(65)] {
        let e = check_name(bad).unwrap_err().to_string();
        assert!(e.contains("invalid session name"), "{bad}: {e}");
    }
}
