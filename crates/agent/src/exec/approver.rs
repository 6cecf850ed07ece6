//! The terminal approver for `agent` mode: shows the engine's exact question
//! (the command or patch it is about) on stderr and reads y / n / a from the
//! terminal. `a` approves that same question for the rest of the session.
//! Built only when stdin and stderr are terminals and stdin is not the prompt:
//! otherwise nobody can answer, and the engine refuses with a message the
//! model can act on.

use std::collections::HashSet;
use std::future::Future;
use std::io::{BufRead, IsTerminal, Write};
use std::pin::Pin;

use parking_lot::Mutex;

use quiver_engine::permissions::Approver;

#[derive(Default)]
pub struct TerminalApprover {
    always: Mutex<HashSet<String>>,
    /// One question at a time: concurrent calls must not interleave prompts.
    asking: tokio::sync::Mutex<()>,
}

impl TerminalApprover {
    /// An approver when someone can answer on this terminal.
    pub fn if_interactive(stdin_is_prompt: bool) -> Option<Self> {
        let tty = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        (tty && !stdin_is_prompt).then(TerminalApprover::default)
    }

    fn always(&self) -> parking_lot::MutexGuard<'_, HashSet<String>> {
        self.always.lock()
    }
}

/// y / yes → once; a / always → for the session; anything else → no.
pub fn parse_answer(line: &str) -> (bool, bool) {
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => (true, false),
        "a" | "always" => (true, true),
        _ => (false, false),
    }
}

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, question: &'a str) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>> {
        Box::pin(async move {
            if self.always().contains(question) {
                return true;
            }
            let _one = self.asking.lock().await;
            let q = question.to_string();
            // Reading the terminal blocks; keep it off the runtime's workers.
            let answer = tokio::task::spawn_blocking(move || {
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\nquiver needs approval:\n  {q}\nallow? [y]es / [n]o / [a]lways this session: ");
                let _ = err.flush();
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line).map(|_| line).unwrap_or_default()
            })
            .await
            .unwrap_or_default();
            let (yes, always) = parse_answer(&answer);
            if always {
                self.always().insert(question.to_string());
            }
            yes
        })
    }
}
