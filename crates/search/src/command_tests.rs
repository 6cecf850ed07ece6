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
        "go ahead and fix it",
        "make sure the build passes",
        "pull it with docker and run it",
        "are there tools for working with docker?",
    ] {
        assert_eq!(command_line(q), None, "{q}");
    }
}

fn doc(name: &str, description: &str) -> crate::SearchDoc {
    crate::SearchDoc { name: name.into(), description: description.into(), ..Default::default() }
}

fn top(idx: &crate::SearchIndex, q: &str) -> String {
    idx.search(q, 5, &|_| true).first().map(|h| idx.docs()[h.doc].name.clone()).unwrap_or_default()
}

#[test]
fn a_command_line_ranks_the_tool_that_runs_commands() {
    let idx = crate::SearchIndex::build(vec![
        doc("exec_shell", "Run a shell command; output is stdout and stderr."),
        doc("write_file", "Create or make a new file with content; a clean start."),
        doc("run_tests", "Run the test suite and build a pass/fail summary."),
    ]);
    for q in [
        "run make",
        "make clean && make",
        "df -h",
        "cargo build",
        "what does `uname -a` print?",
        "go build ./...",
        "how much disk is left? check with du",
        "convert video.mov to mp4 with ffmpeg",
    ] {
        assert_eq!(top(&idx, q), "exec_shell", "{q}");
    }
    // "make" as an English verb is no command line
    assert_eq!(top(&idx, "make a new file with the notes"), "write_file");
}

#[test]
fn a_relative_clause_names_the_item_not_the_action() {
    let idx = crate::SearchIndex::build(vec![
        doc("automation_pause", "Pause a scheduled automation."),
        doc("automation_resume", "Resume or restart a scheduled automation."),
    ]);
    assert_eq!(top(&idx, "restart the automation I paused last week"), "automation_resume");
    assert_eq!(top(&idx, "pause the automation you started"), "automation_pause");
}

#[test]
fn an_issue_number_is_a_github_reference() {
    assert_eq!(crate::query::value_kinds("comment on #231, it's fixed"), ["github"]);
    assert!(crate::query::value_kinds("item # 2 and C#").is_empty());
}
