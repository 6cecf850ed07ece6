# (expected tools, request) — written from the tools' one-line descriptions,
# in a user's everyday words. Alternate lines go to the dev half and the check half.
Q = [
# read_file
("read_file", "what's inside Cargo.toml?"),
("read_file", "pull up lib.rs so I can see it"),
("read_file", "print the package.json for me"),
("read_file", "I want to look at the Makefile"),
("read_file", "show the first 30 lines of main.go"),
("read_file", "what does the readme say about installing?"),
("read_file", "check the contents of .env.example"),
("read_file", "page 3 of the invoice pdf, what's the total?"),
# write_file
("write_file", "make a new file called notes/todo.md with a heading"),
("write_file", "save this as scripts/deploy.sh"),
("write_file", "dump the following json into fixtures/user.json"),
("write_file", "start a fresh LICENSE file with the MIT text"),
# edit_file
("edit_file", "swap the word colour for color in the header component"),
("edit_file", "fix the typo 'recieve' in mailer.py"),
("edit_file", "change MAX_RETRIES to 5 in constants.ts"),
("edit_file", "tweak the version line in pyproject.toml to 2.1.0"),
# apply_patch
("apply_patch", "here's a diff, put it into the code"),
("apply_patch", "apply this .patch file's hunks to the repo"),
("apply_patch", "land these changes across three files from the unified diff below"),
# list_dir
("list_dir", "what's in the src folder?"),
("list_dir", "show me the files under tests/, two levels deep"),
("list_dir", "ls the config directory"),
# file_search
("file_search", "where's the file named something like userController?"),
("file_search", "locate the docker-compose file"),
("file_search", "which file is called settings, I forget the extension"),
# grep_files
("grep_files", "where do we call parse_args?"),
("grep_files", "find every TODO in the code"),
("grep_files", "which files mention DATABASE_URL"),
("grep_files", "search the source for 'deprecated' with a couple lines around each hit"),
# project_map
("project_map", "give me the lay of the land of this repo"),
("project_map", "I'm new to this codebase, what's it made of?"),
("project_map", "what languages is this project written in?"),
# exec_shell
("exec_shell", "run make"),
("exec_shell", "type npm install for me"),
("exec_shell", "what does `uname -a` print here?"),
("exec_shell", "do a quick ls -la in the terminal"),
("exec_shell", "run the build script and show me the output"),
("exec_shell", "execute python3 manage.py migrate"),
# exec_shell_wait
("exec_shell_wait", "is my background command done yet?"),
("exec_shell_wait", "check on the thing running in the background and show new output"),
("exec_shell_wait", "poll the background shell job until it exits"),
# exec_shell_interact
("exec_shell_interact", "type 'yes' into the prompt the running command is waiting on"),
("exec_shell_interact", "send a line of input to the repl I started in the background"),
("exec_shell_interact", "answer the password question in that running process"),
# exec_shell_cancel
("exec_shell_cancel", "stop the background job"),
("exec_shell_cancel", "kill the dev server I left running"),
("exec_shell_cancel", "that command is stuck, end it"),
("exec_shell_cancel", "stop all the shell things still running"),
# run_tests
("run_tests", "do the tests pass?"),
("run_tests", "run cargo test and tell me what broke"),
("run_tests", "which tests are failing right now"),
# git_status
("git_status", "is the tree clean?"),
("git_status", "anything uncommitted?"),
("git_status", "which branch am I on and am I ahead of origin"),
("git_status", "are there untracked files lying around"),
("git_status", "do I have merge conflicts"),
# git_diff
("git_diff", "what did I change so far"),
("git_diff", "show me the staged changes"),
("git_diff", "how many lines did I add and delete"),
# diagnostics
("diagnostics", "what OS and rust version does this machine have"),
("diagnostics", "which toolchains are installed here"),
("diagnostics", "quick health check of my environment"),
# fetch_url
("fetch_url", "grab https://example.com/changelog and tell me what's new"),
("fetch_url", "download the json from this api endpoint"),
("fetch_url", "open that link and read it"),
# web_search
("web_search", "google the error 'address already in use'"),
("web_search", "look up online what the latest python release is"),
("web_search", "search the internet for reviews of this library"),
# note
("note", "keep a note"),
("note", "jot down that the cache bug is in the loader"),
("note", "write down a follow-up for later in this session"),
("note", "what notes have I made so far"),
# remember
("remember", "remember that I like tabs over spaces"),
("remember", "from now on always use pnpm, keep that for next time"),
("remember", "save to my long-term memory that my name is Sam"),
# checklist
("checklist_write", "set up a checklist: design, build, test, ship"),
("checklist_write", "make me a to-do list for this refactor"),
("checklist_add", "add 'update docs' to the checklist"),
("checklist_add", "put one more item on the todo list"),
("checklist_list", "show the checklist"),
("checklist_list", "what's left on my to-do list"),
("checklist_update", "tick off the second item"),
("checklist_update", "mark 'write tests' as done"),
# update_plan
("update_plan", "lay out a step by step plan for the migration"),
("update_plan", "revise the plan, step 2 is finished"),
# speech
("speech", "read this paragraph out loud into a wav"),
("speech", "turn this text into audio"),
# fim_edit
("fim_edit", "fill in the body of this function between the markers"),
("fim_edit", "complete lines 40 to 55 using the code around them"),
# retrieve_tool_result / handle_read
("retrieve_tool_result", "the output was cut off, show the rest of out_3"),
("retrieve_tool_result", "search the spilled output for 'error'"),
("handle_read", "give me items 10 to 20 of that var_handle"),
("handle_read", "run a jsonpath query on the handle's payload"),
# MCP
("mcp_servers", "which MCP servers do I have configured?"),
("mcp_servers", "is the slack mcp connected or erroring"),
("mcp_discover", "connect the jira mcp server and load its tools"),
("mcp_discover", "bring in all tools from the postgres server"),
("mcp_call", "call the 'create_ticket' tool on the linear server"),
("mcp_call", "invoke a tool on an mcp server directly by name"),
# sub-agents
("agent_open", "spin up a helper agent to look into the flaky test"),
("agent_open", "hand this research off to a sub-agent in the background"),
("agent_eval", "what did the sub-agent find?"),
("agent_eval", "wait for the helper agent to finish and give me its summary"),
("agent_close", "shut down that sub-agent"),
("agent_close", "cancel the helper, we don't need it anymore"),
# durable tasks
("task_create", "queue a job that keeps working after I log off"),
("task_create", "kick off a background agent task to upgrade dependencies"),
("task_list", "what tasks are queued or running"),
("task_list", "list my failed background tasks"),
("task_read", "how is task 42 doing, show its timeline"),
("task_read", "open the durable task and show its result and artifacts"),
("task_cancel", "cancel durable task 17"),
("task_cancel", "call off the queued overnight agent task"),
("task_shell_start", "start the server in the background and give me a handle"),
("task_shell_start", "launch the long build so it runs while we talk"),
("task_shell_wait", "wait for the test run task and record it as the 'unit' gate"),
("task_shell_wait", "has the background build task finished? new output please"),
("task_gate_run", "run the linter and record the evidence on the task"),
("task_gate_run", "verify the build passes and log it as a gate"),
# PR attempts
("pr_attempt_record", "save my current changes as a PR attempt"),
("pr_attempt_record", "snapshot this patch on the task before I try something else"),
("pr_attempt_list", "list the PR attempts on this task"),
("pr_attempt_list", "what attempts have we recorded so far"),
("pr_attempt_read", "show me the patch from attempt 2"),
("pr_attempt_read", "open the second recorded attempt"),
("pr_attempt_preflight", "would attempt 3 still apply cleanly on top of main?"),
("pr_attempt_preflight", "check if the saved patch conflicts with HEAD"),
# GitHub
("github_issue_context", "read github issue 88"),
("github_issue_context", "what's the bug report in issue #12 about"),
("github_pr_context", "show me PR 301 and its checks"),
("github_pr_context", "what do the reviewers say on the pull request"),
("github_comment", "post a comment on the issue saying it's fixed"),
("github_comment", "reply on the PR with the test results"),
("github_close_issue", "close issue 45, it's done"),
("github_close_issue", "mark the github issue as resolved and close it"),
("github_close_pr", "close the pull request without merging"),
("github_close_pr", "shut PR 77, we're abandoning it"),
# automations
("automation_create", "every morning at 9 run the dependency audit"),
("automation_create", "schedule a weekly cleanup job on mondays"),
("automation_list", "what scheduled jobs do I have"),
("automation_list", "when does the nightly report run next"),
("automation_read", "show the recent runs of the backup automation"),
("automation_read", "did the cron job miss any runs"),
("automation_pause", "pause the nightly build automation"),
("automation_pause", "hold the scheduled report for now"),
("automation_resume", "turn the paused schedule back on"),
("automation_resume", "restart the automation I paused last week"),
("automation_run", "run the backup automation right now"),
("automation_run", "trigger the scheduled job once, outside its time"),
("automation_update", "change the report schedule to 6pm"),
("automation_update", "edit the automation's prompt"),
("automation_delete", "delete the old cleanup automation"),
("automation_delete", "get rid of that scheduled job entirely"),
# RLM
("rlm_open", "load this huge log into a python sandbox to analyze"),
("rlm_open", "open an RLM session over the dataset file"),
("rlm_eval", "run some python on the loaded context"),
("rlm_eval", "in the RLM, count the lines matching 'ERROR'"),
("rlm_configure", "raise the RLM's sub-query timeout to 120 seconds"),
("rlm_configure", "change the RLM output limit"),
("rlm_close", "close the python session and show its stats"),
("rlm_close", "we're done with the RLM, stop it"),
("rlm_session_objects", "list the conversation pieces I can load into the RLM"),
("rlm_session_objects", "what session objects are there, like the transcript"),
# tool_search
("tool_search", "are there tools for working with docker?"),
("tool_search", "load the git tools"),
]
import json, sys
seen=set()
dev=open(sys.argv[1],'w'); chk=open(sys.argv[2],'w')
per={}
for exp,q in Q:
    assert q not in seen, q; seen.add(q)
    e=[exp] if isinstance(exp,str) else list(exp)
    if e[0] not in per: per[e[0]]=[0,len(per)]
    i,g=per[e[0]]; per[e[0]][0]+=1
    (dev if (i+g)%2==0 else chk).write(json.dumps({"query":q,"expected":e})+"\n")
print(len(Q), file=sys.stderr)
