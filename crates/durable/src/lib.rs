//! quiver's durable store: work that outlives the request that made it.
//!
//! One embedded SQLite database (WAL mode, every write one transaction) in
//! quiver's state directory holds tasks and their timelines, gate evidence, PR
//! attempts, GitHub audit records and automations; large bodies live as files
//! beside it (`artifacts/`) and are referenced by id. A write that returned `Ok`
//! survives a `kill -9` of the process at any later point: SQLite commits before
//! the call returns, and an artifact's file is synced and renamed into place
//! before the row that names it is committed.
//!
//! The store knows nothing of models or tools: the agent runtime claims queued
//! tasks and reports what happened, the tools read and write through it.

mod artifact;
mod automation;
mod clock;
mod error;
mod evidence;
mod migrations;
mod store;
mod summary;
mod task;

pub use artifact::Artifact;
pub use automation::{
    Automation, AutomationPatch, AutomationRun, AutomationState, NewAutomation, RunOutcome, TickReport,
    validate_schedule,
};
pub use clock::{Clock, ManualClock, SystemClock, Timestamp};
pub use error::StoreError;
pub use evidence::{AuditRecord, GateClass, GateRecord, NewGate, NewPrAttempt, PrAttempt};
pub use store::Store;
pub use summary::summarize;
pub use task::{ChecklistItem, NewTask, Task, TaskEvent, TaskFilter, TaskState, TaskView};
