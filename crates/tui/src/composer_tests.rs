use super::*;

fn typed(s: &str) -> Composer {
    let mut c = Composer::default();
    for ch in s.chars() {
        c.insert_char(ch);
    }
    c
}

#[test]
fn leaked_sgr_mouse_reports_are_dropped_as_they_complete() {
    let c = typed("fix[<35;12;5Mthe bug[<0;3;4m");
    assert_eq!(c.text(), "fixthe bug");
    // Text that only looks a little like one stays.
    assert_eq!(typed("a[<b;1;2M").text(), "a[<b;1;2M");
    assert_eq!(typed("see [<1;2M").text(), "see [<1;2M");
}

#[test]
fn a_large_paste_is_a_placeholder_and_the_model_gets_it_whole() {
    let mut c = typed("look at ");
    let log: String = (0..50).map(|i| format!("line {i}\n")).collect();
    c.paste(&log);
    assert!(c.text().starts_with("look at [Pasted 50 lines"), "{}", c.text());
    assert!(!c.text().contains("line 49"));
    let sent = c.take();
    assert_eq!(sent, format!("look at {log}"));
    assert!(c.text().is_empty());
}

#[test]
fn backspace_removes_a_placeholder_whole() {
    let mut c = Composer::default();
    c.paste(&"x\n".repeat(20));
    c.backspace();
    assert_eq!(c.text(), "");
    assert_eq!(c.take(), "");
}

#[test]
fn small_pastes_are_inline_and_crlf_is_normalised() {
    let mut c = Composer::default();
    c.paste("a\r\nb");
    assert_eq!(c.text(), "a\nb");
}

#[test]
fn up_and_down_move_between_lines_then_through_history() {
    let mut c = typed("first");
    c.take();
    let mut second = typed("second");
    std::mem::swap(&mut c.text, &mut second.text);
    c.cursor = c.text.len();
    c.take();
    c.set_text("draft");
    c.up();
    assert_eq!(c.text(), "second");
    c.up();
    assert_eq!(c.text(), "first");
    c.down();
    c.down();
    assert_eq!(c.text(), "draft");

    let mut m = typed("abc\nde");
    m.up();
    assert_eq!(m.cursor(), 2);
    m.end();
    m.down();
    assert_eq!(m.cursor(), m.text().len());
}

#[test]
fn editing_keys_work_on_multibyte_text() {
    let mut c = typed("héllo wörld");
    c.kill_word_back();
    assert_eq!(c.text(), "héllo ");
    c.left();
    c.left();
    c.backspace();
    assert_eq!(c.text(), "hélo ");
    c.home();
    c.kill_line_forward();
    assert_eq!(c.text(), "");
}

#[test]
fn a_mention_at_the_cursor_completes_to_a_path() {
    let mut c = typed("read @src/ma");
    assert_eq!(c.mention(), Some((5, "src/ma")));
    c.complete_mention("src/main.rs");
    assert_eq!(c.text(), "read @src/main.rs ");
    assert_eq!(c.mention(), None);
}
