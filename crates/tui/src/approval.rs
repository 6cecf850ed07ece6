//! The approver the engine asks in an interactive session: each question
//! goes to the front end as a prompt in front of the composer, and the
//! engine's call waits for the answer (once, always this session, or no).
//! The same `Approver` the headless terminal approver and MCP elicitation
//! implement, so decisions and their records are the same everywhere.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use quiver_engine::permissions::Approver;
use tokio::sync::{mpsc, oneshot};

use crate::app::{Answer, Approval};
use crate::event::UiEvent;

pub struct UiApprover {
    tx: mpsc::UnboundedSender<UiEvent>,
    always: Mutex<HashSet<String>>,
}

impl UiApprover {
    pub fn new(tx: mpsc::UnboundedSender<UiEvent>) -> Self {
        UiApprover { tx, always: Mutex::new(HashSet::new()) }
    }

    fn always_contains(&self, question: &str) -> bool {
        self.always.lock().map(|a| a.contains(question)).unwrap_or(false)
    }
}

impl Approver for UiApprover {
    fn approve<'a>(&'a self, question: &'a str) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>> {
        Box::pin(async move {
            if self.always_contains(question) {
                return true;
            }
            let (reply, answer) = oneshot::channel();
            if self.tx.send(UiEvent::Approval(Approval { question: question.to_string(), reply })).is_err() {
                // The front end is gone: nobody can approve.
                return false;
            }
            match answer.await {
                Ok(Answer::Once) => true,
                Ok(Answer::Always) => {
                    if let Ok(mut always) = self.always.lock() {
                        always.insert(question.to_string());
                    }
                    true
                }
                Ok(Answer::No) | Err(_) => false,
            }
        })
    }
}
