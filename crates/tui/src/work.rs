//! The Work panel's facts: the checklist, the active durable task, running
//! shell jobs and sub-agents. The runner fills this from the engine; the
//! panel draws it the same in every mode.

#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkSnapshot {
    /// (done, text) in checklist order.
    pub checklist: Vec<(bool, String)>,
    /// The durable task the session works on, if any: (id, title, state).
    pub task: Option<(String, String, String)>,
    pub jobs: Vec<JobLine>,
    pub agents: Vec<AgentLine>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct JobLine {
    pub id: String,
    pub command: String,
    pub status: String,
    pub elapsed_secs: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AgentLine {
    pub id: String,
    pub name: String,
    pub state: String,
}

impl WorkSnapshot {
    pub fn is_empty(&self) -> bool {
        self.checklist.is_empty() && self.task.is_none() && self.jobs.is_empty() && self.agents.is_empty()
    }
}
