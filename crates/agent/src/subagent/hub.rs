//! The registry of child runs. One hub per process: its tools are registered
//! once with the native ones (so the head is the same whether or not a
//! provider is configured), and it learns the engine's host and the model
//! provider afterwards. Sessions it does not know are roots (depth 0, no
//! role limits); every child's session is recorded with its depth and the
//! chain of role limits it runs under.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use quiver_engine::{EngineHost, Session, ToolContext, ToolError, new_session_id};
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use crate::message::{Effort, Message, Usage};
use crate::provider::Provider;
use crate::run::{AgentLoop, EnginePort, RunEvent, RunLimits, RunStatus};
use crate::subagent::guard::{Guarded, Limit};
use crate::subagent::limits::SubagentLimits;
use crate::subagent::record::{AgentHandle, AgentState, Snapshot};
use crate::subagent::role::Role;
use crate::subagent::store::{self, AgentRecord};

/// Receives a child's events (`quiver exec --json` prints them tagged with the agent id).
pub type EventTap = Arc<dyn Fn(Value) + Send + Sync>;

/// What children run on: the model provider and the settings.
pub struct AgentRuntime {
    pub provider: Arc<dyn Provider>,
    pub provider_name: String,
    pub model: String,
    pub effort: Option<Effort>,
    pub max_output_tokens: Option<u32>,
    pub limits: SubagentLimits,
    /// The root sessions' system prompt (a fork starts from it).
    pub root_system: String,
    pub events: Option<EventTap>,
}

/// What `agent_open` (or `tool_agent`) asks for, already validated.
pub struct OpenRequest {
    pub prompt: String,
    pub role: Role,
    pub name: Option<String>,
    pub fork_context: bool,
    pub allowed_tools: Option<Vec<String>>,
    pub model: Option<String>,
    /// `tool_agent`'s executor: no reasoning effort asked for.
    pub thinking_off: bool,
}

struct SessionInfo {
    depth: u32,
    chain: Vec<Limit>,
    system: String,
    model: String,
}

#[derive(Default)]
struct HubState {
    sessions: HashMap<String, SessionInfo>,
    agents: Vec<Arc<AgentHandle>>,
    /// Released agents, as last persisted (the store keeps them for `quiver agents`).
    released: Vec<AgentRecord>,
    next: u64,
}

pub struct AgentHub {
    /// Stamped on every record this hub persists.
    boot_id: String,
    /// Where records are persisted; set when a runtime is configured.
    store: OnceLock<PathBuf>,
    host: OnceLock<Weak<EngineHost>>,
    runtime: OnceLock<Arc<AgentRuntime>>,
    unavailable: Mutex<Option<String>>,
    state: Mutex<HubState>,
}

const NO_PROVIDER: &str = "sub-agents need a model provider, and none is configured: set [model] provider/model (and \
[providers.NAME] for your own endpoint) in ~/.config/quiver/config.toml and export its API key (DEEPSEEK_API_KEY by \
default)";

impl AgentHub {
    pub fn new() -> Arc<Self> {
        Arc::new(AgentHub {
            boot_id: store::new_boot_id(),
            store: OnceLock::new(),
            host: OnceLock::new(),
            runtime: OnceLock::new(),
            unavailable: Mutex::new(None),
            state: Mutex::new(HubState::default()),
        })
    }

    pub fn boot_id(&self) -> &str {
        &self.boot_id
    }

    /// Writes this boot's records (live and released) to the store, if any.
    fn persist(&self) {
        let Some(path) = self.store.get() else { return };
        let records: Vec<AgentRecord> = {
            let state = self.state.lock();
            state.released.iter().cloned().chain(state.agents.iter().map(|a| a.record(&self.boot_id))).collect()
        };
        if let Err(e) = store::save(path, &self.boot_id, &records) {
            tracing::warn!(error = %format!("{e:#}"), "could not persist sub-agent records");
        }
    }

    /// The host children's engines come from (held weakly: the host holds the hub's tools).
    pub fn attach_host(&self, host: &Arc<EngineHost>) {
        let _ = self.host.set(Arc::downgrade(host));
    }

    pub fn configure(&self, runtime: AgentRuntime) {
        let _ = self.runtime.set(Arc::new(runtime));
        if let Some(path) = store::store_path() {
            let _ = self.store.set(path);
        }
    }

    /// Why children cannot run here (a missing key, a bad config); said in every refusal.
    pub fn set_unavailable(&self, reason: impl Into<String>) {
        *self.unavailable.lock() = Some(reason.into());
    }

    pub fn is_configured(&self) -> bool {
        self.runtime.get().is_some()
    }

    fn runtime(&self) -> Result<(Arc<AgentRuntime>, Arc<EngineHost>), ToolError> {
        let host = self.host.get().and_then(Weak::upgrade);
        match (self.runtime.get(), host) {
            (Some(runtime), Some(host)) => Ok((Arc::clone(runtime), host)),
            _ => Err(ToolError::model(match self.unavailable.lock().as_deref() {
                Some(reason) => format!("{NO_PROVIDER} ({reason})."),
                None => format!("{NO_PROVIDER}."),
            })),
        }
    }

    /// Children with a live task that are not done yet, across all depths.
    pub fn running(&self) -> usize {
        self.state.lock().agents.iter().filter(|a| a.snapshot().state.is_active()).count()
    }

    /// Starts a child and returns at once; the child runs as a tokio task.
    pub fn open(self: &Arc<Self>, ctx: &ToolContext, request: OpenRequest) -> Result<Arc<AgentHandle>, ToolError> {
        let (runtime, host) = self.runtime()?;
        let parent_id = ctx.session.id().to_string();
        let mut state = self.state.lock();
        let (depth, mut chain, parent_system, parent_model) = match state.sessions.get(&parent_id) {
            Some(info) => (info.depth, info.chain.clone(), info.system.clone(), info.model.clone()),
            None => (0, Vec::new(), runtime.root_system.clone(), ctx.audience.model.clone().unwrap_or_default()),
        };
        if depth + 1 > runtime.limits.max_depth {
            return Err(ToolError::model(format!(
                "cannot open a sub-agent: the depth limit is {} ([subagents] max_depth) and this agent is at depth {depth}",
                runtime.limits.max_depth
            )));
        }
        let running = state.agents.iter().filter(|a| a.snapshot().state.is_active()).count();
        if running >= runtime.limits.max_concurrent {
            return Err(ToolError::model(format!(
                "cannot open a sub-agent: {running} are running, the cap is {} ([subagents] max_concurrent); \
agent_eval one to wait for it, or agent_close one to free a slot",
                runtime.limits.max_concurrent
            )));
        }
        state.next += 1;
        let number = state.next;
        let id = format!("agent-{number}");
        let name = request.name.clone().unwrap_or_else(|| format!("{}-{number}", request.role));
        if state.agents.iter().any(|a| a.parent_session == parent_id && a.name == name) {
            return Err(ToolError::model(format!(
                "this session already has an agent named `{name}`; pick another name or agent_close it first"
            )));
        }
        chain.push(Limit {
            role: request.role,
            allowed: request.allowed_tools.clone().or_else(|| (request.role == Role::Custom).then(Vec::new)),
        });
        let model = request.model.clone().unwrap_or_else(|| runtime.model.clone());
        let fork = request.fork_context && model == parent_model;
        let system = if fork { parent_system } else { request.role.system_prompt() };
        let (history, first_prompt) =
            if fork { fork_history(ctx, &request)? } else { (Vec::new(), request.prompt.clone()) };

        let session_id = new_session_id();
        let transcript_path =
            crate::exec::paths::session_path(&session_id).map_err(|e| ToolError::model(e.to_string()))?;
        let mut child = ctx.clone();
        child.session = Arc::new(Session::new(session_id.clone()));
        if fork {
            // The same tail as the parent: the fork's first request repeats its prefix.
            child.session.restore_lazy_state(ctx.session.lazy_state());
        }
        child.audience.model = Some(model.clone());
        child.dispatcher = Arc::new(Guarded { host: Arc::clone(&host), chain: chain.clone() });
        child.transcript = Some(
            crate::exec::open_transcript(
                &transcript_path,
                &session_id,
                &ctx.workspace,
                &child.audience,
                &runtime.provider_name,
            )
            .map_err(ToolError::Fatal)?,
        );
        state.sessions.insert(
            session_id.clone(),
            SessionInfo { depth: depth + 1, chain, system: system.clone(), model: model.clone() },
        );
        let (status, _) = watch::channel(Snapshot {
            state: AgentState::Pending,
            answer: None,
            turns: 0,
            usage: Usage::default(),
            runs: 0,
        });
        let (input, inputs) = mpsc::unbounded_channel();
        let handle = Arc::new(AgentHandle {
            id,
            name,
            role: request.role,
            parent_session: parent_id,
            session_id,
            transcript: transcript_path,
            started: Instant::now(),
            started_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            status,
            input: Mutex::new(Some(input)),
            task: Mutex::new(None),
        });
        state.agents.push(Arc::clone(&handle));
        drop(state);
        self.persist();
        let job = ChildJob {
            hub: Arc::downgrade(self),
            handle: Arc::clone(&handle),
            runtime,
            port: EnginePort::hosted(host, child),
            model,
            system,
            effort_off: request.thinking_off,
        };
        let task = tokio::spawn(job.run(history, first_prompt, inputs));
        *handle.task.lock() = Some(task.abort_handle());
        Ok(handle)
    }

    /// This session's agent by id or name.
    pub fn find(&self, ctx: &ToolContext, id: Option<&str>, name: Option<&str>) -> Result<Arc<AgentHandle>, ToolError> {
        let mine = self.list(ctx);
        let found = mine.iter().find(|a| Some(a.id.as_str()) == id || (id.is_none() && Some(a.name.as_str()) == name));
        found.cloned().ok_or_else(|| {
            let known: Vec<String> = mine.iter().map(|a| format!("{} ({})", a.id, a.name)).collect();
            let asked = id.or(name).unwrap_or_default();
            ToolError::model(format!(
                "no agent `{asked}` in this session; known: {}",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            ))
        })
    }

    /// This session's agents, oldest first.
    pub fn list(&self, ctx: &ToolContext) -> Vec<Arc<AgentHandle>> {
        let parent = ctx.session.id();
        self.state.lock().agents.iter().filter(|a| a.parent_session == parent).cloned().collect()
    }

    /// Queues a follow-up input; the child runs it after its current run.
    pub fn send_input(&self, handle: &AgentHandle, input: String) -> Result<(), ToolError> {
        let sender = handle.input.lock().clone();
        let state = handle.snapshot().state;
        match sender {
            Some(tx) if !matches!(state, AgentState::Cancelled | AgentState::Interrupted(_)) => {
                handle.set(|s| s.state = AgentState::Pending);
                tx.send(input).map_err(|_| ToolError::model(format!("agent `{}` has ended", handle.id)))
            }
            _ => Err(ToolError::model(format!(
                "agent `{}` is {} and takes no more input; open a new one",
                handle.id,
                state.as_str()
            ))),
        }
    }

    /// Waits until the agent is not pending or running, at most `timeout`;
    /// returns whether it got there. Dropping the wait leaves the child be.
    pub async fn wait(&self, handle: &AgentHandle, timeout: Duration) -> bool {
        let mut rx = handle.status.subscribe();
        tokio::time::timeout(timeout, rx.wait_for(|s| !s.state.is_active())).await.is_ok_and(|r| r.is_ok())
    }

    /// Cancels the agent and every descendant (their tasks are aborted, so
    /// their sessions, and the processes those sessions started, go too).
    pub fn cancel_tree(&self, handle: &AgentHandle) {
        handle.abort();
        if handle.snapshot().state.is_active() {
            handle.set(|s| s.state = AgentState::Cancelled);
        }
        let children: Vec<Arc<AgentHandle>> =
            self.state.lock().agents.iter().filter(|a| a.parent_session == handle.session_id).cloned().collect();
        for child in children {
            self.cancel_tree(&child);
        }
        self.persist();
    }

    /// Forgets a finished agent (its transcript stays on disk).
    pub fn release(&self, handle: &AgentHandle) {
        handle.abort();
        {
            let mut state = self.state.lock();
            state.agents.retain(|a| a.id != handle.id);
            state.sessions.remove(&handle.session_id);
            state.released.push(handle.record(&self.boot_id));
        }
        self.persist();
    }
}

/// A fork's history: the parent's conversation as recorded (so the first
/// request repeats the parent's last request's prefix byte for byte), then a
/// state snapshot, the role and the task as the next user message.
fn fork_history(ctx: &ToolContext, request: &OpenRequest) -> Result<(Vec<Message>, String), ToolError> {
    let Some(transcript) = &ctx.transcript else {
        return Err(ToolError::model("fork_context needs a recorded parent session; open it without fork_context"));
    };
    let parent = crate::exec::resume::read(transcript.path()).map_err(ToolError::Fatal)?;
    // As resumed: up to the parent's last request; the turn that is opening
    // this fork (calls not answered yet) is not part of it.
    let history = parent.messages;
    let loaded = ctx.session.loaded();
    let snapshot = format!(
        "# Fork snapshot\nYou are a sub-agent forked from the conversation above; the parent continues on its own.\n\
loaded tools: {}\nturn: {}\n\n# Role\n{}\n\n# Task\n{}",
        if loaded.is_empty() { "none".to_string() } else { loaded.join(", ") },
        ctx.session.turn(),
        request.role.system_prompt(),
        request.prompt
    );
    Ok((history, snapshot))
}

/// The child's task: its first run, then one run per follow-up input.
struct ChildJob {
    hub: Weak<AgentHub>,
    handle: Arc<AgentHandle>,
    runtime: Arc<AgentRuntime>,
    port: EnginePort,
    model: String,
    system: String,
    effort_off: bool,
}

impl ChildJob {
    async fn run(self, mut history: Vec<Message>, mut prompt: String, mut inputs: mpsc::UnboundedReceiver<String>) {
        let id = self.handle.id.clone();
        let events = self.runtime.events.clone();
        loop {
            self.handle.set(|s| s.state = AgentState::Running);
            if let Some(hub) = self.hub.upgrade() {
                hub.persist();
            }
            let agent = AgentLoop {
                provider: self.runtime.provider.as_ref(),
                tools: &self.port,
                model: self.model.clone(),
                system: self.system.clone(),
                max_output_tokens: self.runtime.max_output_tokens,
                effort: if self.effort_off { None } else { self.runtime.effort },
                stream: true,
                limits: RunLimits { max_turns: self.runtime.limits.max_turns, token_budget: None },
                compaction: None,
            };
            let mut sink = |event: RunEvent| {
                if let Some(tap) = &events
                    && let Some(mut value) = crate::exec::render::json_event(&event)
                {
                    value["agent_id"] = Value::String(id.clone());
                    tap(value);
                }
            };
            match agent.run(history.clone(), &prompt, &mut sink).await {
                Ok(outcome) => {
                    let state = match &outcome.status {
                        RunStatus::Done => AgentState::Completed,
                        other => AgentState::Failed(crate::exec::render::status_str(other)),
                    };
                    self.handle.set(|s| {
                        s.state = state;
                        s.answer = Some(outcome.final_text.clone());
                        s.turns += outcome.turns;
                        s.usage.add(&outcome.usage);
                        s.runs += 1;
                    });
                    history = outcome.messages;
                }
                Err(e) => self.handle.set(|s| {
                    s.state = AgentState::Failed(e.to_string());
                    s.runs += 1;
                }),
            }
            if let Some(hub) = self.hub.upgrade() {
                hub.persist();
            }
            match inputs.recv().await {
                Some(next) => prompt = next,
                None => break,
            }
        }
    }
}
