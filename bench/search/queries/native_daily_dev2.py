# Issue 26, session 31: a second everyday dev set for quiver's own tools
# (native-daily-dev2.jsonl). Written by one helper from the tools' prompt
# snippets and descriptions (`crates/engine/manifest/lifecycle.toml`,
# `quiver catalog`), in the voice of a user typing quickly: named files,
# command lines, URLs, short imperatives. Not written from, and not checked
# against, native-daily-check.jsonl. A dev set: its misses may be read.
# usage: python3 native_daily_dev2.py > native-daily-dev2.jsonl
import json

Q = [
# read_file
("read_file", "cat src/main.rs"),
("read_file", "open README.md"),
("read_file", "show me config/settings.yaml"),
("read_file", "whats in the Dockerfile"),
("read_file", "print lines 40-80 of server.py"),
("read_file", "let me see tsconfig.json"),
("read_file", "read docs/design.pdf and tell me what the auth section says"),
("read_file", "head of CHANGELOG.md pls"),
# list_dir
("list_dir", "ls src/"),
("list_dir", "what files are in ./scripts"),
("list_dir", "list the contents of the migrations folder"),
("list_dir", "show the tree under crates, 2 deep"),
# write_file
("write_file", "create .gitignore with target/ and node_modules/"),
("write_file", "write a hello world to hello.py"),
("write_file", "new file docs/CONTRIBUTING.md, short guide"),
("write_file", "put this yaml into .github/workflows/ci.yml"),
# edit_file
("edit_file", "in app.js rename fetchData to loadData"),
("edit_file", "set timeout = 30 in config.toml"),
("edit_file", "replace localhost with 0.0.0.0 in server.go"),
("edit_file", "remove the debug print on line 12 of utils.py"),
# fim_edit
("fim_edit", "fill in the body of parse_header, it's just a todo right now"),
("fim_edit", "complete the unimplemented function in cache.rs"),
# apply_patch
("apply_patch", "apply this diff:\n--- a/x.py\n+++ b/x.py"),
("apply_patch", "patch these 3 files with the hunks below"),
("apply_patch", "move utils.py to lib/utils.py and fix the imports, one patch"),
# project_map
("project_map", "overview of the repo structure"),
("project_map", "how is this codebase organized"),
("project_map", "where's the entry point of this app"),
# grep_files
("grep_files", "grep for unwrap( in crates/"),
("grep_files", "find all uses of getUserById"),
("grep_files", "which files import requests"),
("grep_files", "search for FIXME"),
# file_search
("file_search", "where is package.json"),
("file_search", "find the file called routes something"),
("file_search", "path of the jest config?"),
# exec_shell
("exec_shell", "cargo build"),
("exec_shell", "run npm install"),
("exec_shell", "git log --oneline -10"),
("exec_shell", "df -h"),
("exec_shell", "run docker ps"),
("exec_shell", "make clean && make"),
("exec_shell", "pip install requests"),
("exec_shell", "run ./configure"),
("exec_shell diagnostics", "what node version is on the path? node -v"),
("exec_shell", "kill whatever's on port 3000"),
("exec_shell fetch_url", "curl -I https://example.com"),
# exec_shell_wait
("exec_shell_wait", "is the npm install finished"),
("exec_shell_wait", "any more output from that command?"),
("exec_shell_wait", "wait for the build command to exit"),
# exec_shell_interact
("exec_shell_interact", "send 'y' to the prompt"),
("exec_shell_interact", "type my answer into the running script: 42"),
("exec_shell_interact", "press enter in the process"),
# exec_shell_cancel
("exec_shell_cancel", "kill the npm run dev you started"),
("exec_shell_cancel", "ctrl-c that command"),
("exec_shell_cancel", "the build is hung, kill it"),
# task_shell_start
("task_shell_start", "start the dev server in the background and keep going"),
("task_shell_start", "kick off the full test run in the background"),
# task_shell_wait
("task_shell_wait", "wait on the background test run"),
("task_shell_wait", "how's the long build in the background going"),
# task_create
("task_create", "make this a durable task that keeps going after i close the laptop"),
("task_create", "queue up a background agent task to migrate the db schema"),
("task_create", "hand the flaky test investigation to an overnight task"),
# task_list
("task_list", "list my tasks"),
("task_list", "which durable tasks failed?"),
# task_read
("task_read", "show me what task 12 produced"),
("task_read", "progress of the migration task?"),
# task_cancel
("task_cancel", "cancel the durable task"),
("task_cancel", "call off the queued migration task"),
# task_gate_run
("task_gate_run", "run the gate for the task: tests and lint as evidence"),
("task_gate_run", "run the verification gate on task 7"),
# pr attempts
("pr_attempt_record", "record this diff as a PR attempt"),
("pr_attempt_record", "save my changes as an attempt on the task"),
("pr_attempt_list", "list the attempts on this task"),
("pr_attempt_list", "how many PR attempts have we recorded"),
("pr_attempt_read", "show attempt 2's patch"),
("pr_attempt_read", "open the last recorded attempt"),
("pr_attempt_preflight", "does attempt 3 still apply on main?"),
("pr_attempt_preflight", "git apply --check the recorded patch"),
# github
("github_issue_context", "read issue #231"),
("github_issue_context", "what's github issue 88 about"),
("github_pr_context", "summarize PR #45"),
("github_pr_context", "is CI green on pull 77?"),
("github_pr_context", "what files did PR 12 change"),
("github_comment", "comment on #231 that it's fixed in main"),
("github_comment", "reply to the PR review with the test output"),
("github_close_issue", "close issue 231"),
("github_close_issue", "mark #88 as not planned"),
("github_close_pr", "close PR 45, we won't merge it"),
("github_close_pr", "abandon pull request 77"),
# automations
("automation_create", "every weekday at 9 summarize new issues"),
("automation_create", "schedule a nightly dependency check"),
("automation_list", "what automations do I have"),
("automation_list", "list scheduled jobs"),
("automation_read", "show the runs of the nightly automation"),
("automation_read", "did the morning job run today?"),
("automation_update", "move the nightly report to 6am"),
("automation_update", "change the cron of the weekly digest to mondays"),
("automation_pause", "pause the nightly report"),
("automation_pause", "suspend that automation for the holidays"),
("automation_resume", "resume the nightly report"),
("automation_resume", "unpause the weekly digest"),
("automation_delete", "delete the weekly digest automation"),
("automation_delete", "get rid of that cron job for good"),
("automation_run", "run the nightly report now"),
("automation_run", "trigger the digest automation immediately"),
# git
("git_status", "git status"),
("git_status", "which branch am i on"),
("git_status", "anything uncommitted?"),
("git_status", "any untracked files?"),
("git_diff", "git diff"),
("git_diff", "show me what i changed in lib.rs"),
("git_diff", "diff my staged changes"),
# diagnostics
("diagnostics", "what rust version is installed"),
("diagnostics", "is the sandbox enabled"),
("diagnostics", "which toolchains do we have here"),
# run_tests
("run_tests", "run the tests"),
("run_tests exec_shell", "cargo test"),
("run_tests exec_shell", "npm test"),
("run_tests", "are the unit tests passing?"),
# checklists and plans
("checklist_write", "make a checklist: fix bug, add test, update docs"),
("checklist_write", "replace the todo list with these steps"),
("checklist_add", "add 'update changelog' to the todo list"),
("checklist_add", "one more todo: bump the version"),
("checklist_update", "mark step 2 done"),
("checklist_update", "set 'add tests' to in progress"),
("checklist_list", "show the todo list"),
("checklist_list", "what's still open on the checklist"),
("update_plan", "write up a plan for the refactor in phases"),
("update_plan", "update the plan: we'll do the api first"),
# notes and memory
("note", "note: the flaky test is timing related"),
("note", "jot down that port 8080 is taken"),
("note", "what notes have i taken so far"),
("remember", "remember i prefer tabs over spaces"),
("remember", "from now on always use pnpm"),
# saved outputs
("retrieve_tool_result", "show the tail of that truncated output"),
("retrieve_tool_result", "search the saved output for 'error'"),
("handle_read", "get .items[0].name from the stored json"),
("handle_read", "how many entries are in that json result"),
# sub-agents
("agent_open", "spin up a subagent to review the diff"),
("agent_open", "delegate the docs update to a helper agent"),
("agent_eval", "is the reviewer agent finished"),
("agent_eval", "what did the explorer subagent report"),
("agent_close", "shut down the reviewer agent"),
("agent_close", "close the helper agent"),
("tool_agent", "have an executor agent run these tool steps and report back"),
# web
("fetch_url", "fetch https://api.github.com/repos/rust-lang/rust"),
("fetch_url", "what does https://docs.rs/serde say about derive?"),
("fetch_url", "download https://example.com/data.json"),
("fetch_url", "read this page https://blog.rust-lang.org/ and summarize"),
("web_search", "search the web for 'error E0499'"),
("web_search", "google how to undo a git rebase"),
("web_search", "latest version of tokio?"),
("speech", "read this paragraph out loud"),
("speech", "make a wav of this text"),
# tools and MCP
("tool_search", "is there a tool to resize images"),
("mcp_servers", "which mcp servers are configured"),
("mcp_servers", "is the postgres mcp server connected"),
("mcp_discover", "connect the github mcp server and load its tools"),
("mcp_call", "call the query tool on the postgres server"),
# RLM
("rlm_open", "this log is 2GB, analyze it in python"),
("rlm_open", "open a python repl over transcript.txt"),
("rlm_eval", "run this python in the analysis session: len(_context)"),
("rlm_eval", "fan out questions over the chunks with sub_query_batch"),
("rlm_configure", "bump the rlm session timeout to 10 minutes"),
("rlm_close", "close the rlm session and show stats"),
("rlm_session_objects", "load this chat's transcript into the repl"),
]

for tool, q in Q:
    print(json.dumps({"query": q, "expected": tool.split()}))
