//! The transcript as cells: what the person said, what the model answered
//! (streamed), its reasoning (folded), each tool call (status, duration, a
//! short result that unfolds), and notices. Plain data: rendering is in
//! `render::cells`, and every change bumps the cell's `version` so the
//! renderer re-wraps only the cells that changed.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub enum CellKind {
    User { text: String, steered: bool },
    Assistant { text: String, streaming: bool },
    Reasoning { text: String, chars: usize },
    Tool(ToolCell),
    Info { text: String },
    Error { text: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub kind: CellKind,
    /// Unfolded: a tool's whole result, the whole reasoning.
    pub expanded: bool,
    pub version: u64,
}

impl Cell {
    pub fn new(kind: CellKind) -> Self {
        Cell { kind, expanded: false, version: 0 }
    }

    /// Whether Tab (or a click) can fold and unfold this cell.
    pub fn foldable(&self) -> bool {
        matches!(self.kind, CellKind::Tool(_) | CellKind::Reasoning { .. })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolStatus {
    Running,
    Done,
    Failed,
    /// The run was interrupted while the call ran.
    Cancelled,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCell {
    pub id: String,
    pub name: String,
    /// The arguments as the model sent them (JSON text).
    pub arguments: String,
    pub status: ToolStatus,
    pub duration: Option<Duration>,
    pub output: String,
}

impl ToolCell {
    /// The arguments as an object, when they parse.
    pub fn args(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::from_str(&self.arguments) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        }
    }

    /// The result as a person reads it: the text of a result the engine
    /// rendered as JSON (`{"content": ..., "metadata": ...}`), else as is.
    pub fn display_output(&self) -> String {
        match serde_json::from_str::<serde_json::Value>(&self.output) {
            Ok(serde_json::Value::Object(map)) => match map.get("content") {
                Some(serde_json::Value::String(text)) => text.clone(),
                _ => self.output.clone(),
            },
            _ => self.output.clone(),
        }
    }

    /// One line saying what the call is about: a command, a path, a query.
    pub fn summary(&self) -> String {
        let args = self.args();
        for key in [
            "command",
            "cmd",
            "path",
            "query",
            "pattern",
            "url",
            "id",
            "name",
            "prompt",
            "job_id",
            "task_id",
            "automation_id",
            "attempt_id",
            "item_id",
        ] {
            if let Some(value) = args.get(key) {
                let text = match value {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                return first_line(&text).to_string();
            }
        }
        let compact = serde_json::Value::Object(args).to_string();
        if compact == "{}" { String::new() } else { compact }
    }
}

pub fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

/// The transcript: cells in order, and where the streaming pieces go.
#[derive(Debug, Default)]
pub struct Transcript {
    pub cells: Vec<Cell>,
    next_version: u64,
}

impl Transcript {
    pub fn push(&mut self, kind: CellKind) -> usize {
        let mut cell = Cell::new(kind);
        cell.version = self.bump();
        self.cells.push(cell);
        self.cells.len() - 1
    }

    fn bump(&mut self) -> u64 {
        self.next_version += 1;
        self.next_version
    }

    /// Changes a cell and marks it for re-rendering.
    pub fn update(&mut self, index: usize, change: impl FnOnce(&mut Cell)) {
        let version = self.bump();
        if let Some(cell) = self.cells.get_mut(index) {
            change(cell);
            cell.version = version;
        }
    }

    /// Appends streamed text to the answer being written, starting one.
    pub fn stream_text(&mut self, delta: &str) {
        match self.cells.last() {
            Some(Cell { kind: CellKind::Assistant { streaming: true, .. }, .. }) => {
                let last = self.cells.len() - 1;
                self.update(last, |cell| {
                    if let CellKind::Assistant { text, .. } = &mut cell.kind {
                        text.push_str(delta);
                    }
                });
            }
            _ => {
                self.push(CellKind::Assistant { text: delta.to_string(), streaming: true });
            }
        }
    }

    /// Appends streamed reasoning, starting a reasoning cell.
    pub fn stream_reasoning(&mut self, delta: &str) {
        match self.cells.last() {
            Some(Cell { kind: CellKind::Reasoning { .. }, .. }) => {
                let last = self.cells.len() - 1;
                self.update(last, |cell| {
                    if let CellKind::Reasoning { text, chars } = &mut cell.kind {
                        text.push_str(delta);
                        *chars += delta.chars().count();
                    }
                });
            }
            _ => {
                self.push(CellKind::Reasoning { text: delta.to_string(), chars: delta.chars().count() });
            }
        }
    }

    /// The model's whole message arrived: the streamed cell becomes final
    /// (with the message's text: a non-streaming provider sent no deltas).
    pub fn finish_text(&mut self, full: &str) {
        let streaming = self.cells.iter().rposition(|c| matches!(c.kind, CellKind::Assistant { streaming: true, .. }));
        match streaming {
            Some(index) => self.update(index, |cell| {
                cell.kind = CellKind::Assistant { text: full.to_string(), streaming: false };
            }),
            None => {
                self.push(CellKind::Assistant { text: full.to_string(), streaming: false });
            }
        }
    }

    /// Streaming stopped without a final message (an interruption, a failure).
    pub fn settle_streaming(&mut self) {
        let open: Vec<usize> = self
            .cells
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                matches!(c.kind, CellKind::Assistant { streaming: true, .. })
                    || matches!(&c.kind, CellKind::Tool(t) if t.status == ToolStatus::Running)
            })
            .map(|(i, _)| i)
            .collect();
        for index in open {
            self.update(index, |cell| match &mut cell.kind {
                CellKind::Assistant { streaming, .. } => *streaming = false,
                CellKind::Tool(tool) => tool.status = ToolStatus::Cancelled,
                _ => {}
            });
        }
    }

    pub fn tool_index(&self, id: &str) -> Option<usize> {
        self.cells.iter().rposition(|c| matches!(&c.kind, CellKind::Tool(t) if t.id == id))
    }
}
