# Issue 26, session 36: a fifth everyday dev set for quiver's own tools
# (native-daily-dev5.jsonl). Written blind: from only the tools' names and
# one-line descriptions (the exported docs' `name` and the first line of
# `description`), before any ranking run on these requests, without reading
# the manifest's phrasings or prompt snippets, and not from (nor checked
# against) the check sets. Voices none of dev..dev4 used, mixed through every
# family: a terse terminal-native developer typing fragments ("tests pls",
# "whats changed", "diff pls", "cat Cargo.toml"); a non-native English speaker
# ("please to change", "I search a file, where it is?"); someone pasting
# error output and asking what to do (a traceback, a compiler error, a git
# rejection, EADDRINUSE); requests that name the goal rather than the tool
# ("did I break anything?", "onboard me to this repo"). Weighted to the
# families that crowd each other: files vs shell vs web, git status / diff vs
# the GitHub and PR-attempt tools, shell jobs vs durable tasks, notes /
# memory vs checklists and the plan, sub-agents, RLM, automations, MCP
# servers. All 66 tools. A dev set: its misses may be read.
# Requests that accept two tools: a literal command line that a native tool
# also serves (`cat FILE`, `ls DIR`: the file tool or exec_shell; `cargo
# test`: run_tests or exec_shell; `curl URL` and a local health URL:
# fetch_url or exec_shell; `git status`: git_status or exec_shell);
# "whats changed" (git_status or git_diff); polling a background job without
# saying which kind (exec_shell_wait or task_shell_wait).
# usage: python3 native_daily_dev5.py > native-daily-dev5.jsonl
import json

Q = [
# read_file
("read_file exec_shell", "cat Cargo.toml"),
("read_file", "whats in main.go"),
("read_file", "please, I need to see the content of file config/app.ini"),
("read_file", "lines 50-80 of handlers.py"),
("read_file", "KeyError: 'region'\n  File \"settings.py\", line 212\nshow me the code around there"),
("read_file", "thread 'main' panicked at src/config.rs:41:10: called `Option::unwrap()` on a `None` value -- open that spot"),
("read_file", "the README, what it says about install?"),
# list_dir
("list_dir exec_shell", "ls src"),
("list_dir", "what files are in the folder templates?"),
("list_dir", "tree of pkg/, 3 levels"),
("list_dir", "I want to know which things are inside directory build/output"),
# write_file
("write_file", "new file .env with PORT=3000"),
("write_file", "please create for me the file hello.py that print hello world"),
("write_file", "save that as docs/notes.txt"),
("write_file", "I need a .gitignore for a python project"),
("write_file", "overwrite config.json with {\"debug\": false}"),
# edit_file
("edit_file", "s/localhost/0.0.0.0/ in server.py"),
("edit_file", "fix typo recieve -> receive in mailer.js"),
("edit_file", "in file package.json please to change the version to 2.1.0"),
("edit_file", "TypeError: Cannot read properties of undefined (reading 'map') at List.jsx:14\nguard it with items ?? []"),
("edit_file", "comment out the console.log in app.ts"),
("edit_file", "warning: unused variable `tmp` in src/cache.rs line 33, just delete that line"),
# fim_edit
("fim_edit", "theres a TODO_IMPL marker in lexer.rs, fill it from the code around"),
("fim_edit", "complete lines 40-55 of cache.py with fill-in-the-middle"),
("fim_edit", "the function body in utils.go between line 12 and 30 is empty, let the model fill the hole"),
# apply_patch
("apply_patch", "apply this\n--- a/src/app.py\n+++ b/src/app.py\n@@ -10,2 +10,2 @@\n-x = 1\n+x = 2"),
("apply_patch", "I have a patch with changes for three files, please put it in the code, all or nothing"),
("apply_patch", "here's a unified diff from code review, apply it"),
# project_map
("project_map", "overview of repo"),
("project_map", "what kind of project is this? languages, main files"),
("project_map", "onboard me to this repo"),
# grep_files
("grep_files", "grep TODO"),
("grep_files", "where is fn parse_header defined"),
("grep_files", "ModuleNotFoundError: No module named 'utils.helpers'\nwho imports utils.helpers?"),
("grep_files", "find all places that call deprecated_api("),
("grep_files", "search the code for the string 'api_key'"),
("grep_files", "in which files appears the word 'retry_count'?"),
# file_search
("file_search", "find file named webpack.config"),
("file_search", "where is the docker-compose file"),
("file_search", "I search a file, name is similar to user_service, where it is?"),
("file_search", "Error: Cannot find module './routes' -- is there a routes file anywhere?"),
# exec_shell
("exec_shell", "npm ci"),
("exec_shell", "du -sh node_modules"),
("exec_shell", "Error: listen EADDRINUSE: address already in use :::3000\nkill whatever holds that port"),
("exec_shell", "bash: ./run.sh: Permission denied\nmake it executable"),
("exec_shell", "pip install -r requirements.txt"),
("exec_shell", "how much free disk do we have"),
("exec_shell", "go build ./..."),
("exec_shell", "convert video.mov to mp4 with ffmpeg"),
("exec_shell", "please execute the migration script scripts/migrate.sh"),
# exec_shell_wait
("exec_shell_wait", "poll the bg shell command, new output?"),
("exec_shell_wait", "the shell thing I started with background true, is it exited? exit code?"),
("exec_shell_wait task_shell_wait", "bg job done?"),
# exec_shell_interact
("exec_shell_interact", "the background process asks for a password now, type hunter2"),
("exec_shell_interact", "send q to the running background program's stdin"),
("exec_shell_interact", "the bg python prompt waits for input, give it 42"),
# exec_shell_cancel
("exec_shell_cancel", "stop the background shell task"),
("exec_shell_cancel", "ctrl-c the bg command"),
("exec_shell_cancel", "kill all background shell jobs"),
# task_shell_start
("task_shell_start", "start the full test suite in background, I keep working meanwhile"),
("task_shell_start exec_shell", "launch dev server in the background and give me the id"),
("task_shell_start", "long build: kick it off in bg, later I record it as a gate"),
# task_shell_wait
("task_shell_wait", "wait for the bg build and save the result as gate 'build'"),
("task_shell_wait", "is the long test run finished? record it as gate tests"),
("task_shell_wait exec_shell_wait", "new output from the background server task?"),
# fetch_url
("fetch_url exec_shell", "curl https://api.github.com/repos/rust-lang/rust"),
("fetch_url", "open this page https://docs.rs/tokio/latest/tokio/ and summarize"),
("fetch_url exec_shell", "what does http://localhost:8080/health return"),
("fetch_url", "what says the page example.com/pricing"),
("fetch_url", "429 Too Many Requests from https://api.example.com/v2/items\ntry getting it again"),
# web_search
("web_search", "google rust async trait stable?"),
("web_search", "error[E0277]: the trait bound `Foo: Serialize` is not satisfied\nlook online what this means"),
("web_search", "latest version of react?"),
("web_search", "find me articles about postgres vacuum tuning"),
("web_search", "npm ERR! code ERESOLVE unable to resolve dependency tree\nanyone else had this? search it"),
# git_status
("git_status exec_shell", "git status --short"),
("git_status git_diff", "whats changed"),
("git_status", "anything uncommitted in here?"),
("git_status", "which branch am I"),
("git_status", "CONFLICT (content): Merge conflict in src/app.ts\nwhich files are still conflicted?"),
("git_status", "! [rejected] main -> main (non-fast-forward)\nam I behind origin?"),
("git_status", "is there new files not tracked by git?"),
# git_diff
("git_diff", "diff pls"),
("git_diff", "show me exactly what I changed in router.go"),
("git_diff", "staged diff"),
("git_diff", "how many lines did I touch"),
("git_diff", "before I commit, I want to review my changes line by line"),
# diagnostics
("diagnostics", "what toolchains do I have"),
("diagnostics", "env info"),
("diagnostics", "which python version is installed here"),
("diagnostics", "cargo: command not found\nis rust even installed on this machine?"),
# run_tests
("run_tests", "tests pls"),
("run_tests exec_shell", "cargo test --workspace"),
("run_tests", "did I break anything? run the suite"),
("run_tests", "FAILED tests/test_api.py::test_create - assert 500 == 201\nrerun only that one"),
("run_tests", "how many tests fail now"),
# checklist_write
("checklist_write", "todo: 1) migrate db 2) update api 3) deploy"),
("checklist_write", "make me a checklist for the release"),
("checklist_write", "throw away the current checklist, new one: lint, test, ship"),
# checklist_add
("checklist_add", "add 'update docs' to the todos"),
("checklist_add", "also put write changelog in the checklist"),
("checklist_add", "+1 item: check CI"),
# checklist_update
("checklist_update", "item 3 done"),
("checklist_update", "mark the lint step in progress"),
("checklist_update", "rename checklist item 2 to fix flaky test"),
# checklist_list
("checklist_list", "todos?"),
("checklist_list", "where are we on the checklist"),
("checklist_list", "show the checklist with the statuses"),
# update_plan
("update_plan", "update the plan: step 2 done, next is the refactor"),
("update_plan", "write down the high-level plan for this migration: design, implement, test"),
("update_plan", "revise plan, we skip step 4"),
# note
("note", "note: the flaky test comes from the timezone"),
("note", "jot that the API needs an auth header"),
("note", "list my session notes"),
# remember
("remember", "remember: I like 4-space indent, always"),
("remember", "for future sessions: always use pnpm, not npm"),
("remember", "save to long-term memory that deploys are on fridays only"),
# tool_search
("tool_search", "I need a tool for GitHub things, load it"),
("tool_search", "is there a tool to talk with MCP servers? find it"),
("tool_search", "load more tools for the web"),
# retrieve_tool_result
("retrieve_tool_result", "the output was cut, show me the rest of out_3"),
("retrieve_tool_result", "grep out_7 for error"),
("retrieve_tool_result", "tail of the spilled output"),
# handle_read
("handle_read", "slice items 10..20 of the var_handle"),
("handle_read", "jsonpath $.users[*].email on that handle"),
("handle_read", "how many elements in the handle payload"),
# agent_open
("agent_open", "spin up a subagent to write the docs while I do the tests"),
("agent_open", "delegate: let another agent investigate the memory leak in the background"),
("agent_open", "start a helper agent on refactoring the auth module"),
# agent_eval
("agent_eval", "what did the sub-agent find? summary"),
("agent_eval", "is the helper agent done"),
("agent_eval", "tell the subagent to also check the tests"),
# agent_close
("agent_close", "cancel the sub-agent, not needed anymore"),
("agent_close", "kill agent 2 and its children"),
("agent_close", "release the finished helper"),
# tool_agent
("tool_agent", "give this tool work to an executor: rename all .jpeg to .jpg, and wait for the result"),
("tool_agent", "hand off the mechanical edits to the executor agent and wait"),
# mcp_servers
("mcp_servers", "which mcp servers do we have set up"),
("mcp_servers", "mcp status? any errors?"),
("mcp_servers", "is the postgres MCP connected"),
# mcp_discover
("mcp_discover", "connect to the gitlab mcp server, I want its tools"),
("mcp_discover", "load the tools from the filesystem mcp"),
("mcp_discover", "enable the slack MCP so I can use its tools"),
# mcp_call
("mcp_call", "call the query tool of the postgres mcp server with 'select 1'"),
("mcp_call", "use mcp server jira, tool create_ticket, title 'bug'"),
("mcp_call", "invoke sentry list_issues through mcp"),
# rlm_open
("rlm_open", "open a python repl over big.log"),
("rlm_open", "load this url into an RLM session: https://example.com/dump.csv"),
("rlm_open", "new rlm session called audit over the transcript"),
# rlm_eval
("rlm_eval", "in the repl, count lines of _context containing ERROR"),
("rlm_eval", "run sub_query_batch over the chunks in the rlm"),
("rlm_eval", "rlm: print(len(_context))"),
("rlm_eval", "in rlm map a summary prompt over each section"),
# rlm_configure
("rlm_configure", "rlm timeout 300s"),
("rlm_configure", "set sub_rlm depth 2"),
("rlm_configure", "child model for the rlm -> the smaller one"),
# rlm_close
("rlm_close", "close the repl, stats?"),
("rlm_close", "done with rlm session audit, shut it"),
# rlm_session_objects
("rlm_session_objects", "what session objects can I load in rlm"),
("rlm_session_objects", "show the cards for transcript and system prompt"),
# speech
("speech", "read this text aloud into a wav"),
("speech", "tts 'build finished' to done.wav"),
# task_create
("task_create", "queue a durable task: upgrade all deps, it can run after I log off"),
("task_create", "background agent task that keeps going when this session ends: triage the open issues"),
("task_create", "make a task to refactor payments, I check it later"),
# task_list
("task_list", "what durable tasks are queued"),
("task_list", "which durable tasks failed"),
("task_list", "show the newest background tasks"),
# task_read
("task_read", "status of task 42"),
("task_read", "show the timeline and gate evidence of task t-17"),
("task_read", "what did task abc123 produce, transcript?"),
# task_cancel
("task_cancel", "cancel task 42"),
("task_cancel", "the queued durable task for the deps upgrade, abort it"),
("task_cancel", "stop running task t-9, we don't need it"),
# task_gate_run
("task_gate_run", "run clippy as a gate and record it on the task"),
("task_gate_run", "verify: npm run lint, record the evidence on the task"),
("task_gate_run", "gate: cargo build, keep exit code and duration on the task"),
# pr_attempt_record
("pr_attempt_record", "record my current changes as a PR attempt"),
("pr_attempt_record", "snapshot this diff as an attempt on the task"),
("pr_attempt_record", "save the work as attempt 2, untracked files too"),
# pr_attempt_list
("pr_attempt_list", "which PR attempts exist for this task"),
("pr_attempt_list", "attempts list"),
# pr_attempt_read
("pr_attempt_read", "show the patch of attempt 1"),
("pr_attempt_read", "read the second PR attempt"),
# pr_attempt_preflight
("pr_attempt_preflight", "does attempt 3 still apply on HEAD?"),
("pr_attempt_preflight", "check if the recorded attempt conflicts with main now"),
("pr_attempt_preflight", "error: patch failed: src/db.rs:12\nwill my recorded attempt still apply cleanly?"),
# github_issue_context
("github_issue_context", "read issue #88"),
("github_issue_context", "whats in gh issue 12, comments too"),
("github_issue_context", "https://github.com/acme/app/issues/301 what is this about"),
# github_pr_context
("github_pr_context", "PR 45 checks status?"),
("github_pr_context", "review comments on pull 19"),
("github_pr_context", "files changed in PR #7"),
# github_comment
("github_comment", "comment on #88 that the fix is in"),
("github_comment", "reply on the PR saying tests pass"),
("github_comment", "post on issue 12: can't reproduce"),
# github_close_issue
("github_close_issue", "close issue 88, it's fixed"),
("github_close_issue", "issue #12 done, close it"),
# github_close_pr
("github_close_pr", "close PR 45 without merge"),
("github_close_pr", "we abandon pull request 19, close it"),
# automation_create
("automation_create", "every day at 9am run the dependency audit"),
("automation_create", "cron 0 3 * * 1: backup check, Europe/Berlin"),
("automation_create", "schedule a weekly report each friday"),
# automation_list
("automation_list", "what schedules do I have"),
("automation_list", "list automations + next run"),
# automation_read
("automation_read", "show the runs of the nightly-audit automation"),
("automation_read", "did the weekly report automation miss any times?"),
# automation_update
("automation_update", "change the nightly audit to 2am"),
("automation_update", "automation report: new prompt 'summarize PRs'"),
("automation_update", "move the backup automation to the UTC timezone"),
# automation_pause
("automation_pause", "pause the nightly audit"),
("automation_pause", "stop the weekly report for now, I resume it later"),
# automation_resume
("automation_resume", "unpause nightly audit"),
("automation_resume", "continue the weekly report automation"),
# automation_delete
("automation_delete", "delete the backup automation"),
("automation_delete", "remove schedule old-cleanup forever"),
# automation_run
("automation_run", "run nightly audit now"),
("automation_run", "fire the report automation once, manually"),
]

for tool, q in Q:
    expected = list(dict.fromkeys(tool.split()))
    print(json.dumps({"query": q, "expected": expected}))
