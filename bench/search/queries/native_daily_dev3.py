# Issue 26, session 32: a third everyday dev set for quiver's own tools
# (native-daily-dev3.jsonl). Written blind: from only the tools' names and
# one-line descriptions (`quiver catalog --loaded ...`), before reading the
# manifest's phrasings or prompt snippets and before any ranking run. Varied
# voices: terse, chatty, non-native English, questions, typos, concrete
# files / branches / URLs / PR numbers, and requests that state the goal
# rather than the tool. Not written from, and not checked against, the check
# sets. A dev set: its misses may be read.
# Four requests accept two tools (waiting on a background job: exec_shell_wait
# or task_shell_wait; a server started in the background: task_shell_start or
# exec_shell; `pytest -k auth`: run_tests or exec_shell).
# usage: python3 native_daily_dev3.py > native-daily-dev3.jsonl
import json

Q = [
# read_file
("read_file", "can you look at src/lib.rs for me"),
("read_file", "pls show whats in Makefile"),
("read_file", "I want to read the docker-compose.yml, what services it has?"),
("read_file", "go through lines 200 to 260 of parser.c"),
("read_file", "page 4 of the spec.pdf please"),
("read_file", "what does the .env.example contain"),
# list_dir
("list_dir", "what is inside the tests directory"),
("list_dir", "show me folder contents of assets/img, hidden files too"),
("list_dir", "which files do we have under src/handlers?"),
# write_file
("write_file", "make a file notes/todo.md with three bullet points"),
("write_file", "save this script as scripts/deploy.sh"),
("write_file", "overwrite LICENSE with the MIT text"),
# edit_file
("edit_file", "change the port from 8080 to 3000 in main.go"),
("edit_file", "fix the typo 'recieve' -> 'receive' in README"),
("edit_file", "bump version to 1.4.2 in Cargo.toml"),
("edit_file", "in routes.py, replace every print( with logger.info("),
# fim_edit
("fim_edit", "there's a TODO marker in handler.rs, let the model fill that gap from the surrounding code"),
("fim_edit", "complete lines 40..55 of sort.py, the middle is missing"),
# apply_patch
("apply_patch", "here is a unified diff, apply it to the repo"),
("apply_patch", "aplly the patch below, it touches 4 files and deletes old.rs"),
# project_map
("project_map", "i just cloned this repo, give me an overview of how it's laid out"),
("project_map", "what languages is this project written in?"),
("project_map", "where do I start in this codebase"),
# grep_files
("grep_files", "where is `fn connect` defined"),
("grep_files", "find all usages of deprecated_api in *.ts files"),
("grep_files", "search the code for TODO(alice)"),
("grep_files", "which files mention AWS_SECRET"),
# file_search
("file_search", "where's the file called something like userctrl"),
("file_search", "find webpack config file"),
("file_search", "locate schema.sql somewhere in the repo"),
# exec_shell
("exec_shell", "run ls -la /tmp"),
("exec_shell", "execute python3 manage.py migrate"),
("exec_shell", "how much disk space is left? check with du"),
("exec_shell", "git log --oneline -20"),
("exec_shell", "kill the process on port 5432"),
# exec_shell_wait
("exec_shell_wait task_shell_wait", "is the background build still running? give me the new output"),
("exec_shell_wait task_shell_wait", "poll task t-17 till it exits"),
# exec_shell_interact
("exec_shell_interact", "the script is asking y/n, answer y"),
("exec_shell_interact", "type my password into the waiting prompt of the background process"),
("exec_shell_interact", "send 'quit' to the repl running in background"),
# exec_shell_cancel
("exec_shell_cancel", "stop the dev server I started in the background"),
("exec_shell_cancel", "kill all background shell tasks"),
("exec_shell_cancel", "abort that running watch command, it hangs"),
# task_shell_start
("task_shell_start", "start the full test suite in background and record it as a gate later"),
("task_shell_start exec_shell", "launch npm run dev as long running server"),
# task_shell_wait
("task_shell_wait", "wait for the long build to finish and save it as gate 'build'"),
("task_shell_wait", "when the background tests end, record the result as a named gate"),
# task_create
("task_create", "queue a background agent task to upgrade all deps, it can run after I log off"),
("task_create", "create a durable task: migrate the db schema to v3"),
("task_create", "I want an agent to work on issue 88 overnight, even after this session ends"),
# task_list
("task_list", "what durable tasks do I have?"),
("task_list", "show failed tasks newest first"),
# task_read
("task_read", "what's the state of task 42, and its timeline"),
("task_read", "show me the result and artifacts of the durable task abc123"),
# task_cancel
("task_cancel", "cancel the queued durable task, I don't need it anymore"),
("task_cancel", "stop task 42 please, it's going wrong direction"),
# task_gate_run
("task_gate_run", "run clippy and record evidence on the task"),
("task_gate_run", "verify the build passes and attach the log to the durable task as evidence"),
# pr_attempt_record
("pr_attempt_record", "save my current changes as a PR attempt"),
("pr_attempt_record", "snapshot the working tree diff as an attempt on the task, with untracked files"),
# pr_attempt_list
("pr_attempt_list", "which PR attempts did we record so far on this task"),
("pr_attempt_list", "list attempts"),
# pr_attempt_read
("pr_attempt_read", "show me the patch of attempt 2"),
("pr_attempt_read", "what files did the first PR attempt change?"),
# pr_attempt_preflight
("pr_attempt_preflight", "does attempt 3 still apply cleanly on main?"),
("pr_attempt_preflight", "check whether the recorded patch conflicts with HEAD"),
# github_issue_context
("github_issue_context", "what does issue #412 say"),
("github_issue_context", "read github issue 77 with its comments"),
("github_issue_context", "who is assigned to https://github.com/acme/api/issues/15 ?"),
# github_pr_context
("github_pr_context", "look at PR #58 and tell me if checks pass"),
("github_pr_context", "show the review comments on pull request 1203"),
("github_pr_context", "get the diff of https://github.com/acme/web/pull/9"),
# github_comment
("github_comment", "post a comment on #412 that the fix is in"),
("github_comment", "reply on the PR with the gate results"),
# github_close_issue
("github_close_issue", "close issue 77, it's done"),
("github_close_issue", "mark the github issue as resolved and close it with evidence"),
# github_close_pr
("github_close_pr", "close PR #58 without merge, we go another way"),
("github_close_pr", "shut down that pull request, not merging it"),
# automation_create
("automation_create", "every monday at 9 run a dependency audit"),
("automation_create", "schedule a nightly job that checks broken links, Europe/Berlin time"),
("automation_create", "set up cron 0 3 * * * to clean old artifacts"),
# automation_list
("automation_list", "what automations are scheduled?"),
("automation_list", "show my cron jobs and when they run next"),
# automation_read
("automation_read", "show the recent runs of the weekly-report automation"),
("automation_read", "did the nightly automation miss any run?"),
# automation_update
("automation_update", "change the schedule of dep-audit to fridays"),
("automation_update", "edit the prompt of the nightly automation"),
# automation_pause
("automation_pause", "pause the link checker schedule for now"),
("automation_pause", "hold the weekly-report automation during holidays"),
# automation_resume
("automation_resume", "resume the paused dep-audit"),
("automation_resume", "turn the nightly automation back on"),
# automation_delete
("automation_delete", "delete the old cleanup automation entirely"),
("automation_delete", "remove the weekly-report schedule, we don't need it"),
# automation_run
("automation_run", "run the dep-audit automation right now, don't wait for monday"),
("automation_run", "trigger the nightly automation manually"),
# git_status
("git_status", "is my working tree clean?"),
("git_status", "which branch am I on and am I ahead of origin"),
("git_status", "any untracked or conflicted files?"),
# git_diff
("git_diff", "what did I change in the last hour (not yet committed)"),
("git_diff", "show staged changes"),
("git_diff", "diff of my uncommitted work pls"),
# diagnostics
("diagnostics", "what os and rust version is this machine"),
("diagnostics", "which toolchains are installed here"),
("diagnostics", "environment info please, node and python versions"),
# run_tests
("run_tests", "run the tests and tell me which fail"),
("run_tests", "are the unit tests passing on this branch?"),
("run_tests exec_shell", "pytest -k auth"),
# checklist_write
("checklist_write", "make a todo list for this refactor: 1 split module 2 add tests 3 docs"),
("checklist_write", "replace the whole checklist with these five steps"),
# checklist_add
("checklist_add", "add 'update changelog' to the checklist"),
("checklist_add", "put one more item on the todo list: ping reviewers"),
# checklist_update
("checklist_update", "mark item 3 as done"),
("checklist_update", "set the 'write docs' step to in progress"),
# checklist_list
("checklist_list", "what's left on my todo list?"),
("checklist_list", "show checklist"),
# update_plan
("update_plan", "revise the plan: step 2 is now done, add a migration step"),
("update_plan", "write down the high level plan before we start"),
# note
("note", "note to self: the flaky test is test_timeout_retry"),
("note", "jot down that we decided to keep sqlite"),
("note", "what notes did I take this session?"),
# retrieve_tool_result
("retrieve_tool_result", "the output got cut off, show me the rest of out_3"),
("retrieve_tool_result", "lines 500-600 of that spilled output"),
# handle_read
("handle_read", "give me elements 10..20 of the var_handle array"),
("handle_read", "run the jsonpath $.users[*].email on the handle"),
# remember
("remember", "remember I prefer tabs over spaces"),
("remember", "for future sessions: always run fmt before commit"),
("remember", "keep in mind that my name is Priya, across sessions"),
# agent_open
("agent_open", "spin up a sub-agent to review the auth module while we continue"),
("agent_open", "start a helper in background that explores the codebase for dead code"),
# agent_eval
("agent_eval", "is the reviewer agent done yet? what did it find"),
("agent_eval", "tell the explore agent to also check the tests folder"),
# agent_close
("agent_close", "cancel the sub-agent, we don't need it"),
("agent_close", "release the finished helper agent"),
# tool_agent
("tool_agent", "hand these tool calls to an executor agent and wait for result"),
# fetch_url
("fetch_url", "get https://httpbin.org/json"),
("fetch_url", "read the page at docs.python.org/3/library/asyncio.html"),
("fetch_url", "download the content of this link https://example.org/changelog"),
# web_search
("web_search", "look up online what's new in python 3.13"),
("web_search", "search internet: rust async trait stable?"),
("web_search", "find me articles about sqlite WAL mode"),
# speech
("speech", "turn this paragraph into a wav audio file"),
("speech", "can you say 'build finished' as speech"),
# tool_search
("tool_search", "do you have some tool for pdf to image?"),
("tool_search", "load the git tools"),
# mcp_servers
("mcp_servers", "list mcp servers and their status"),
("mcp_servers", "why is the slack mcp failing? show last error"),
# mcp_discover
("mcp_discover", "connect to the filesystem mcp server and get its tools"),
("mcp_discover", "load the tools of the jira server"),
# mcp_call
("mcp_call", "call search_issues on the jira mcp server"),
("mcp_call", "use the sentry server's get_event tool directly"),
# rlm_open
("rlm_open", "load big_dump.csv into a python sandbox so we can poke at it"),
("rlm_open", "open an rlm session over https://example.com/huge.log"),
# rlm_eval
("rlm_eval", "in the rlm session, count lines that contain ERROR"),
("rlm_eval", "execute python on _context: print(_context[:500])"),
# rlm_configure
("rlm_configure", "set the child model of the rlm to a smaller one and lower the sub_query timeout"),
("rlm_configure", "increase rlm output limit"),
# rlm_close
("rlm_close", "done with the python session, close it and give me the token stats"),
("rlm_close", "shut down rlm"),
# rlm_session_objects
("rlm_session_objects", "what session objects can I load, like the system prompt or transcript?"),
("rlm_session_objects", "preview the conversation transcript as a card"),
]

for tool, q in Q:
    print(json.dumps({"query": q, "expected": tool.split()}))
