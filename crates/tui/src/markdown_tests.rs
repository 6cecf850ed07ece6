use super::*;

fn plain(md: &str) -> String {
    render(md, &Theme::plain(), true)
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn paragraphs_lists_code_and_links_read_as_text() {
    let md = "# Plan\n\nFirst **do** this:\n\n1. read `main.rs`\n2. fix it\n\n- a\n  - b\n\n```rust\nfn main() {\n    x();\n}\n```\n\nSee [docs](https://example.com).\n\n> quoted\n";
    insta::assert_snapshot!(plain(md));
}

#[test]
fn an_unfinished_stream_renders_without_panicking() {
    for md in ["```rust\nfn", "**bold", "1. one\n2.", "| a | b |\n|---|"] {
        let _ = plain(md);
    }
}
