use super::summarize;

#[test]
fn short_text_is_kept_whole() {
    assert_eq!(summarize("a\nb", 100), "a\nb");
}

#[test]
fn long_log_keeps_both_ends_and_counts_the_gap() {
    let log: String = (0..1000).map(|i| format!("line {i}\n")).collect();
    let s = summarize(&log, 200);
    assert!(s.starts_with("line 0\n"), "{s}");
    assert!(s.ends_with("line 999"), "{s}");
    assert!(s.contains("lines omitted"), "{s}");
    assert!(s.chars().count() < 260, "{}", s.len());
}

#[test]
fn one_huge_line_is_cut_by_characters() {
    let s = summarize(&"x".repeat(10_000), 100);
    assert!(s.contains("characters omitted"));
    assert!(s.len() < 200);
}
