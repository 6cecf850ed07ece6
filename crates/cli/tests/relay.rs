//! The session relay end to end: `quiver relay [focus]` asks the (scripted)
//! model for a `# Session relay` of the workspace's last session and keeps it
//! as `.quiver/handoff.md`; `quiver exec --from-relay` starts from it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};

use crate::exec::{Env, stderr, stdout};

async fn relay(env: &Env, server: &ScriptedServer, args: &[&str]) -> std::process::Output {
    let mut cmd = env.command(Some("sk-test-secret"));
    cmd.arg("relay").arg("--base-url").arg(server.base_url()).arg("--workspace").arg(env.ws.path());
    cmd.args(args).output().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_relay_is_written_from_the_last_session_and_a_new_session_starts_from_it() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    let handoff = env.ws.path().join(".quiver/handoff.md");

    // Nothing to relay yet, and nothing to start from: clear errors, no file.
    let out = relay(&env, &server, &[]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no recorded session"), "{}", stderr(&out));
    let out = env.exec(&server, &["--from-relay"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no relay") && stderr(&out).contains("quiver relay"), "{}", stderr(&out));
    assert!(!handoff.exists());

    server.script([
        ScriptedTurn::tool_call(
            "c1",
            "checklist_write",
            r#"{"items":[{"content":"rename the greeting","status":"completed"},{"content":"update the docs","status":"in_progress"}]}"#,
        ),
        ScriptedTurn::tool_call("c2", "write_file", r#"{"path":"greeting.txt","content":"hi\n"}"#),
        ScriptedTurn::text("Renamed the greeting; the docs are next."),
    ]);
    let out = env.exec(&server, &["--mode", "yolo", "Rename the greeting and update the docs."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 3);

    // The model writes some sections; quiver fills the rest from the transcript.
    server.script([ScriptedTurn::text(
        "# Session relay\n\n## Goal\nRename the greeting and update the docs.\n\n## Decisions\nKeep the file name.\n\n## Next action\nEdit README.md to say hi.",
    )]);
    let out = relay(&env, &server, &["the", "docs"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("--from-relay"), "{}", stderr(&out));
    let ask = server.requests()[3].json();
    // The whole history went to the model, with the focus, and no tools.
    let text = ask["messages"].to_string();
    assert!(text.contains("Rename the greeting and update the docs.") && text.contains("greeting.txt"), "{text}");
    let last = ask["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(last.contains("# Session relay") && last.ends_with("Focus the relay on: the docs"), "{last}");
    assert!(ask.get("tools").is_none_or(|t| t.as_array().is_none_or(|a| a.is_empty())), "{ask}");

    let doc = std::fs::read_to_string(&handoff).unwrap();
    assert_eq!(
        doc,
        "# Session relay\n\n## Goal\nRename the greeting and update the docs.\n\n\
## Current checklist item\nupdate the docs\n\n## Changed files\n- greeting.txt\n\n\
## Decisions\nKeep the file name.\n\n## Verification state\n(none recorded)\n\n\
## Next action\nEdit README.md to say hi.\n"
    );

    // --stdout prints instead of writing.
    server.script([ScriptedTurn::text("## Next action\nSomething else.")]);
    let out = relay(&env, &server, &["--stdout"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("## Next action\nSomething else."), "{}", stdout(&out));
    assert_eq!(std::fs::read_to_string(&handoff).unwrap(), doc);

    // A new session starts from the relay; without a prompt it takes the next action.
    server.script([ScriptedTurn::text("Continuing.")]);
    let out = env.exec(&server, &["--from-relay"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = server.requests().last().unwrap().json();
    let messages = first["messages"].as_array().unwrap();
    let user = messages.iter().find(|m| m["role"] == "user").unwrap()["content"].as_str().unwrap();
    assert!(user.contains(&doc.trim().to_string()), "{user}");
    assert!(user.ends_with("then take its next action."), "{user}");
    // With a prompt, the prompt is the ask.
    server.script([ScriptedTurn::text("Reviewed.")]);
    let out = env.exec(&server, &["--from-relay", "Only review the change."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = server.requests().last().unwrap().json();
    let user = first["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(user.ends_with("Only review the change."), "{user}");

    // A file that is not a relay is refused, and resume cannot be mixed in.
    std::fs::write(env.ws.path().join("other.md"), "# Notes\n").unwrap();
    let out =
        env.exec(&server, &["--from-relay", "--relay-file", env.ws.path().join("other.md").to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("must start with `# Session relay`"), "{}", stderr(&out));
    let out = env.exec(&server, &["--from-relay", "resume", "s1", "go"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot resume"), "{}", stderr(&out));
}
