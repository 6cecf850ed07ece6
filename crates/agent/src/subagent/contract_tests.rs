use super::*;

#[test]
fn five_sections_in_order_parse() {
    let answer = "SUMMARY: read it\nsecond line\nCHANGES: None.\nEVIDENCE:\n- notes.txt:1-1 says hello\nRISKS: none\nBLOCKERS: None.";
    let parsed = parse(answer);
    assert!(parsed.contract_ok);
    assert_eq!(parsed.sections["SUMMARY"], "read it\nsecond line");
    assert_eq!(parsed.sections["EVIDENCE"], "- notes.txt:1-1 says hello");
    assert_eq!(parsed.sections["BLOCKERS"], "None.");
}

#[test]
fn markdown_headings_are_accepted() {
    let answer = "## SUMMARY: a\n**CHANGES:** None.\nEVIDENCE: -\nRISKS: -\nBLOCKERS: None.";
    assert!(parse(answer).contract_ok);
}

#[test]
fn broken_answers_are_wrapped_whole() {
    for answer in [
        "just some prose",
        "SUMMARY: a\nEVIDENCE: b\nCHANGES: c\nRISKS: d\nBLOCKERS: e",
        "preamble\nSUMMARY: a\nCHANGES: c\nEVIDENCE: b\nRISKS: d\nBLOCKERS: e",
        "SUMMARY: a\nCHANGES: c",
    ] {
        let parsed = parse(answer);
        assert!(!parsed.contract_ok, "{answer}");
        assert_eq!(parsed.sections.len(), 1);
        assert_eq!(parsed.sections["SUMMARY"], answer.trim());
    }
}
