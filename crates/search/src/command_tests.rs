use super::command_line;

fn words(q: &str) -> Option<String> {
    command_line(q).map(|w| w.join(" "))
}

#[test]
fn a_program_opening_the_request_is_a_command_line() {
    assert_eq!(words("make").as_deref(), Some("make"));
    assert_eq!(words("run make").as_deref(), Some("make"));
    assert_eq!(words("cargo build --release").as_deref(), Some("cargo build release"));
    assert_eq!(words("please run `npm install`").as_deref(), Some("npm install"));
    assert_eq!(words("what does `uname -a` print here?").as_deref(), Some("uname a"));
    assert_eq!(words("run ./configure").as_deref(), Some("configure"));
    assert_eq!(words("pip install requests, then run the app").as_deref(), Some("pip install requests"));
}

#[test]
fn options_and_operators_make_a_command_line() {
    assert_eq!(words("git log --oneline -10").as_deref(), Some("log oneline"));
    assert_eq!(words("do a quick ls -la in the terminal").as_deref(), Some("ls la"));
    assert_eq!(words("make clean && make").as_deref(), Some("make clean make"));
    assert_eq!(words("ps aux | sort").as_deref(), Some("ps aux sort"));
}

#[test]
fn prose_is_no_command_line() {
    for q in [
        "make a new file called notes.md",
        "write a hello world to hello.py",
        "re-run the failed job",
        "- update the changelog",
        "is the value -5 or 5?",
        "what does the make target do",
        "show the docker-compose file",
    ] {
        assert_eq!(command_line(q), None, "{q}");
    }
}
