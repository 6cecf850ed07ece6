//! What reaches the interactive loop from elsewhere: the run's events, the
//! approver's questions, and the answers of commands that ran as tasks.

use quiver_agent::message::Message;
use quiver_agent::run::RunEvent;
use tokio::sync::mpsc;

use crate::app::Approval;
use crate::work::WorkSnapshot;

/// What reaches the loop from elsewhere: the run, the approver, commands.
pub enum UiEvent {
    Run(RunEvent),
    RunDone { messages: Option<Vec<Message>>, error: Option<String> },
    Approval(Approval),
    Panel { title: String, lines: Vec<String> },
    Notice(String),
    Failure(String),
    Work(WorkSnapshot),
    Files(Vec<String>),
}

pub type UiSender = mpsc::UnboundedSender<UiEvent>;
pub type UiReceiver = mpsc::UnboundedReceiver<UiEvent>;

pub fn channel() -> (UiSender, UiReceiver) {
    mpsc::unbounded_channel()
}
