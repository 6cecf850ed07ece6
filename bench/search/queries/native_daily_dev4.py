# Issue 26, session 34: a fourth everyday dev set for quiver's own tools
# (native-daily-dev4.jsonl). Written blind, by a new voice: from only the
# tools' names and one-line descriptions (`quiver catalog --loaded ...`,
# `--model deepseek-v4-pro` for tool_agent), before any ranking run on these
# requests, without reading the manifest's phrasings or prompt snippets, and
# not from (nor checked against) the check sets. The voice: a team lead
# delegating between meetings and dictating by voice (lowercase, little
# punctuation, "um", indirect asks such as "could you", "I'd like", British
# spellings), weighted to the families that crowd each other: files vs shell
# vs web, git status / diff vs the GitHub and PR-attempt tools, shell jobs vs
# durable tasks, notes / memory vs checklists and the plan, sub-agents, RLM,
# automations. All 66 tools. A dev set: its misses may be read.
# Requests that accept two tools: waiting on "the background job" without
# saying which kind (exec_shell_wait or task_shell_wait); a dev server started
# in the background (task_shell_start or exec_shell); `pytest -k auth`
# (run_tests or exec_shell); fetching a local health URL (fetch_url or
# exec_shell).
# usage: python3 native_daily_dev4.py > native-daily-dev4.jsonl
import json

Q = [
# read_file
("read_file", "take a look at pyproject.toml and tell me which python version it wants"),
("read_file", "i'd like to see what's in src/config/defaults.yaml"),
("read_file", "show me the first 40 lines of app/models/user.rb"),
("read_file", "um what does the CONTRIBUTING file actually say"),
("read_file", "could you read pages 10 to 14 of design.pdf"),
# list_dir
("list_dir", "what's in the scripts folder"),
("list_dir", "give me a listing of docs two levels deep"),
("list_dir", "are there any files in the migrations directory yet"),
# write_file
("write_file", "start a new file src/utils/slugify.ts with a slugify function in it"),
("write_file", "dump this json into fixtures/users.json"),
("write_file", "write a Dockerfile for a node 20 app"),
("write_file", "replace the whole of .prettierrc with a config that turns semicolons off"),
# edit_file
("edit_file", "in server.js rename the variable cfg to config"),
("edit_file", "change DEBUG = True to False in settings.py"),
("edit_file", "the import on line 3 of index.ts is wrong, it should be './api' not './apis'"),
("edit_file", "add serde = \"1\" under [dependencies] in Cargo.toml"),
("edit_file", "tweak the error message in validate.go so it says email is required"),
# fim_edit
("fim_edit", "there's a // FILL ME in parser.rs, have the model write the code that belongs there"),
("fim_edit", "lines 88 to 102 of reducer.js are a stub, generate the middle from the code around it"),
# apply_patch
("apply_patch", "a colleague sent me this diff, could you put it into the tree"),
("apply_patch", "apply these hunks\n--- a/foo.py\n+++ b/foo.py\n@@ -1,3 +1,3 @@"),
("apply_patch", "the patch renames util.c to helpers.c and edits the Makefile, apply all of it in one go"),
# project_map
("project_map", "i'm new to this codebase, what's the overall structure"),
("project_map", "which languages and notable files does this repo have"),
("project_map", "give me the lay of the land before we start"),
# grep_files
("grep_files", "where do we use tenant_id in the code"),
("grep_files", "find every call to os.getenv"),
("grep_files", "any TODOs left in the python files?"),
("grep_files", "grep for panic!( across src"),
("grep_files", "which lines still reference the old endpoint /v1/login"),
# file_search
("file_search", "where's the dockerfile for the worker service"),
("file_search", "i can't find the stripe webhook handler file, it's called something like stripe_hooks"),
("file_search", "is there a jest.config somewhere in the repo"),
# exec_shell
("exec_shell", "run npm install"),
("exec_shell", "run pip list | grep requests"),
("exec_shell", "build the project with make"),
("exec_shell", "docker compose up -d please"),
("exec_shell", "what's listening on port 8000"),
("exec_shell", "compress the logs folder into logs.tar.gz"),
("exec_shell", "show the last five commits with git log"),
("exec_shell", "chmod +x deploy.sh"),
# exec_shell_wait
("exec_shell_wait", "is that npm install i kicked off in the background done yet"),
("exec_shell_wait", "poll the background shell command and show me what it printed since last time"),
("exec_shell_wait task_shell_wait", "wait for the background job to exit and tell me the exit code"),
# exec_shell_interact
("exec_shell_interact", "the installer running in the background is asking y/n, send it y"),
("exec_shell_interact", "type exit into the repl that's running in the background"),
("exec_shell_interact", "send help to the stdin of the background process"),
# exec_shell_cancel
("exec_shell_cancel", "kill that background shell command, it's hanging"),
("exec_shell_cancel", "stop every background command you started"),
("exec_shell_cancel", "ctrl+c the tail -f you left running"),
# task_shell_start
("task_shell_start", "start the full test suite in the background and give me the id, i'll check later"),
("task_shell_start exec_shell", "launch the dev server in the background"),
("task_shell_start", "kick off cargo build --release as a long-running background task so we can keep working"),
# task_shell_wait
("task_shell_wait", "wait for the background build and record it as the release-build gate"),
("task_shell_wait", "when the test task finishes, save the result as a gate called unit"),
("task_shell_wait exec_shell_wait", "check on the long-running task and show me the new output"),
# task_create
("task_create", "queue a background agent to upgrade all our dependencies, it should keep going after i log off"),
("task_create", "create a durable task: write docs for the public api"),
("task_create", "hand the flaky test investigation to a background agent task that survives this session"),
("task_create", "put a job in the queue to refactor the billing module overnight"),
# task_list
("task_list", "what durable tasks have we got running"),
("task_list", "list the queued tasks, newest first"),
("task_list", "show me the failed background agent tasks"),
# task_read
("task_read", "how did task 42 go? show me its result and timeline"),
("task_read", "open durable task t-7f3 and show the gate evidence"),
("task_read", "what's the transcript of the overnight refactor task"),
# task_cancel
("task_cancel", "cancel the durable task that's refactoring billing"),
("task_cancel", "abort queued task 17, we don't need it any more"),
("task_cancel", "stop the background agent task i queued this morning"),
# task_gate_run
("task_gate_run", "run the linter and record the evidence on the task"),
("task_gate_run", "run cargo clippy as a verification gate for this task"),
("task_gate_run", "verify the build passes and attach the log to the durable task"),
# pr_attempt_record
("pr_attempt_record", "save my current changes as a pr attempt on the task"),
("pr_attempt_record", "snapshot the diff including untracked files as an attempt"),
("pr_attempt_record", "record this working tree as attempt number two"),
# pr_attempt_list
("pr_attempt_list", "what pr attempts have been recorded on this task"),
("pr_attempt_list", "list the attempts for task 9 with their line counts"),
# pr_attempt_read
("pr_attempt_read", "show me the patch from the first pr attempt"),
("pr_attempt_read", "read attempt 3 of the task, i want to see which files it touched"),
# pr_attempt_preflight
("pr_attempt_preflight", "does the recorded attempt still apply cleanly on top of main"),
("pr_attempt_preflight", "check whether attempt 2 conflicts with HEAD"),
("pr_attempt_preflight", "dry run applying the saved pr attempt against the latest commit"),
# github_issue_context
("github_issue_context", "what's issue #88 about"),
("github_issue_context", "pull up github issue 1204 with its comments"),
("github_issue_context", "read https://github.com/acme/api/issues/51"),
# github_pr_context
("github_pr_context", "what's the status of PR #230, are the checks green"),
("github_pr_context", "show me the reviews on pull request 77"),
("github_pr_context", "get the diff of the open PR 412 on github"),
# github_comment
("github_comment", "post a comment on issue #88 saying it's fixed in the latest build"),
("github_comment", "reply on PR 77 with the test evidence"),
("github_comment", "leave a note on the github issue that we reproduced it"),
# github_close_issue
("github_close_issue", "close issue #88, it's done"),
("github_close_issue", "mark github issue 1204 as closed, the gates passed"),
# github_close_pr
("github_close_pr", "close PR 412 without merging, it's been superseded"),
("github_close_pr", "shut the stale pull request #77"),
# automation_create
("automation_create", "every weekday at 9am run a dependency audit"),
("automation_create", "schedule a nightly job that checks for broken links, berlin time"),
("automation_create", "set up a cron that summarises open issues every monday"),
# automation_list
("automation_list", "what scheduled jobs do i have"),
("automation_list", "list my automations and when they next run"),
# automation_read
("automation_read", "show the recent runs of the nightly-audit automation"),
("automation_read", "did the weekly report automation miss any runs"),
# automation_update
("automation_update", "move the nightly audit to 2am"),
("automation_update", "change the prompt of the monday summary automation"),
# automation_pause
("automation_pause", "pause the link checker for now"),
("automation_pause", "hold off on the weekly report schedule until i say so"),
# automation_resume
("automation_resume", "turn the link checker back on"),
("automation_resume", "resume the paused nightly audit"),
# automation_delete
("automation_delete", "get rid of the monday summary automation entirely"),
("automation_delete", "delete the old cron for backups"),
# automation_run
("automation_run", "run the nightly audit right now, don't wait for tonight"),
("automation_run", "trigger the weekly report automation manually"),
# git_status
("git_status", "am i on the right branch? what's staged?"),
("git_status", "is my working copy clean"),
("git_status", "how far ahead of origin am i"),
("git_status", "any untracked files lying around?"),
# git_diff
("git_diff", "what did i change in the last hour, show the diff"),
("git_diff", "show me the staged changes"),
("git_diff", "how many lines have i added and removed"),
("git_diff", "let me see the unstaged edits to api.py"),
# diagnostics
("diagnostics", "which rust and node versions are installed here"),
("diagnostics", "what os and architecture am i on"),
("diagnostics", "give me an environment report"),
# run_tests
("run_tests", "run the tests"),
("run_tests", "do the unit tests still pass after that change"),
("run_tests exec_shell", "run just the auth tests with pytest -k auth"),
("run_tests", "which tests are failing right now"),
# checklist_write
("checklist_write", "make a checklist for the migration: back up the db, run the migration, verify, clean up"),
("checklist_write", "start a fresh todo list with these four steps"),
("checklist_write", "replace the checklist with write tests, fix bug, update docs"),
# checklist_add
("checklist_add", "add update changelog to the checklist"),
("checklist_add", "put ping the design team on the todo list too"),
("checklist_add", "one more item for the list: rotate the secrets"),
# checklist_update
("checklist_update", "mark item 2 as done"),
("checklist_update", "set the run migration step to in progress"),
("checklist_update", "tick off the changelog item"),
# checklist_list
("checklist_list", "what's left on the checklist"),
("checklist_list", "show my todo items and their status"),
# update_plan
("update_plan", "write down the plan: investigate first, then patch, then test"),
("update_plan", "revise the plan, step 3 is done and we're adding a rollback step"),
("update_plan", "lay out the high-level steps for this refactor"),
# note
("note", "jot down that the flaky test is caused by timezone handling"),
("note", "make a note: we decided to keep the v1 endpoint for now"),
("note", "what notes have we taken this session"),
# remember
("remember", "remember that i prefer tabs over spaces, for future sessions too"),
("remember", "save to memory: the staging db password lives in 1password, not .env"),
("remember", "keep in mind for next time that i use pnpm, not npm"),
# retrieve_tool_result
("retrieve_tool_result", "that output got cut off, show me the tail of out_3"),
("retrieve_tool_result", "search the spilled output out_12 for error"),
("retrieve_tool_result", "lines 500 to 600 of the big result from the last command"),
# handle_read
("handle_read", "read the first 20 elements of the var_handle array"),
("handle_read", "run a jsonpath query $.items[*].id on that handle"),
# agent_open
("agent_open", "spin up a sub-agent to write the migration while we look at the frontend"),
("agent_open", "delegate the research on rate limiting to a background subagent"),
("agent_open", "start a helper agent that audits our error handling"),
# agent_eval
("agent_eval", "what did the sub-agent find? give me its summary"),
("agent_eval", "is the helper agent done yet"),
("agent_eval", "send the subagent a follow-up: also check the tests folder"),
# agent_close
("agent_close", "cancel the sub-agent, it's going round in circles"),
("agent_close", "release the finished helper agent"),
# tool_agent
("tool_agent", "have an executor sub-agent do the mechanical renames and wait for it"),
("tool_agent", "hand this tool work to the executor agent and give me the result"),
# fetch_url
("fetch_url", "download https://api.github.com/repos/rust-lang/rust/releases/latest and show me the json"),
("fetch_url", "read the page at https://docs.python.org/3/library/asyncio.html"),
("fetch_url", "what does https://example.org/status say"),
("fetch_url exec_shell", "get the contents of http://localhost:8080/health"),
# web_search
("web_search", "look up how to fix address already in use in docker"),
("web_search", "search online for the latest stable version of postgres"),
("web_search", "google the error ECONNRESET node fetch"),
("web_search", "find some articles comparing axum and actix"),
# speech
("speech", "read this paragraph aloud into a wav file"),
("speech", "turn the release notes into audio"),
# tool_search
("tool_search", "are there any tools for working with spreadsheets? load them"),
("tool_search", "i need a tool that can do git things, find one"),
# mcp_servers
("mcp_servers", "which mcp servers are configured and are they connected"),
("mcp_servers", "why did the postgres mcp server fail, show the last error"),
# mcp_discover
("mcp_discover", "connect to the github mcp server and load its tools"),
("mcp_discover", "bring up the slack mcp so i can use its tools"),
# mcp_call
("mcp_call", "call the linear server's create_issue tool"),
("mcp_call", "invoke search_docs on the notion mcp"),
# rlm_open
("rlm_open", "load the 200mb access.log into a python sandbox"),
("rlm_open", "open a repl over the transcript session object"),
("rlm_open", "start an rlm session on https://example.com/data.csv"),
# rlm_eval
("rlm_eval", "in the rlm, count how many lines mention timeout"),
("rlm_eval", "run sub_query_batch over each chunk of the context"),
("rlm_eval", "eval len(_context) in the repl session"),
# rlm_configure
("rlm_configure", "raise the rlm eval timeout to 120 seconds"),
("rlm_configure", "switch the rlm child model to the cheap one"),
# rlm_close
("rlm_close", "close the python repl and tell me how many tokens it used"),
("rlm_close", "we're finished with the rlm, stop it"),
# rlm_session_objects
("rlm_session_objects", "list the session objects i could load, like the transcript"),
("rlm_session_objects", "preview the system prompt card"),
]

for tool, q in Q:
    expected = list(dict.fromkeys(tool.split()))
    print(json.dumps({"query": q, "expected": expected}))
