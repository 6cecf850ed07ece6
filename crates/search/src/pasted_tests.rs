use super::*;

fn printed(query: &str) -> Vec<&str> {
    output_lines(query).into_iter().map(|(a, b)| query[a..b].trim()).collect()
}

#[test]
fn tracebacks_and_compiler_errors_are_output() {
    let q = "ValueError: bad input\n  File \"app.py\", line 9\nopen it";
    assert_eq!(printed(q), ["ValueError: bad input", "File \"app.py\", line 9"]);
    let q = "error[E0308]: mismatched types\nwhat does that mean";
    assert_eq!(printed(q), ["error[E0308]: mismatched types"]);
    let q = "    at Widget.render (Widget.tsx:20)\nwhat broke";
    assert_eq!(printed(q), ["at Widget.render (Widget.tsx:20)"]);
}

#[test]
fn log_levels_shell_complaints_and_statuses_are_output() {
    assert_eq!(printed("yarn ERR! network timeout\nretry?"), ["yarn ERR! network timeout"]);
    assert_eq!(printed("FAIL src/a.test.ts\nagain"), ["FAIL src/a.test.ts"]);
    assert_eq!(printed("zsh: command not found: rg\ninstall it"), ["zsh: command not found: rg"]);
    assert_eq!(printed("503 Service Unavailable\nfrom the api, why"), ["503 Service Unavailable"]);
    assert_eq!(printed("! [remote rejected] dev -> dev\nwhy"), ["! [remote rejected] dev -> dev"]);
}

#[test]
fn the_ask_and_single_lines_are_not_output() {
    // one line: the ask and the output cannot be told apart
    assert!(printed("KeyError: 'x' in app.py, show me").is_empty());
    // output alone: nothing is left to ask
    assert!(printed("error: oops\nwarning: unused").is_empty());
    // lines a person types: a label that is no program's, an "at" with no place
    assert!(printed("todo: 1) fix\n2) test").is_empty());
    assert!(printed("at the top of main.rs\nadd a comment").is_empty());
    assert!(printed("apply this\n--- a/x.py\n+++ b/x.py").is_empty());
}
