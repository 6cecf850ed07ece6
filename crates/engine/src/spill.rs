//! Evidence kept out of the context window: spilled outputs and var handles.
//!
//! A tool result larger than a bound costs its full size on every later turn of the
//! conversation, and most of it is never looked at again. Dispatch therefore writes
//! such a result in full to a spill file and gives the model a summary (size, head,
//! tail) plus a handle (`out_<n>`) that `retrieve_tool_result` reads in bounded
//! windows. Structured payloads also get a *var handle* (`var_<n>`) in [`VarHandles`],
//! which `handle_read` projects (slices, counts, JSONPath) without re-reading text.
//!
//! Both stores are per-session state, numbered by per-session counters so a replayed
//! transcript gets the same handles.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use serde_json::{Value, json};

use crate::capabilities::Capabilities;
use crate::context::ToolContext;
use crate::result::ToolResult;
use crate::spec::ToolSpec;

/// Results whose content text is longer than this are spilled (bytes).
pub const DEFAULT_SPILL_THRESHOLD: usize = 32 * 1024;
/// Lines of the spilled text shown at the start and at the end of the summary.
pub const SUMMARY_HEAD_LINES: usize = 60;
pub const SUMMARY_TAIL_LINES: usize = 20;
/// A single line longer than this is cut in the summary (minified JSON, logs).
const SUMMARY_LINE_CHARS: usize = 240;
/// Byte budgets for the summary's head and tail, so a summary always stays well
/// under the spill threshold whatever the line lengths.
const SUMMARY_HEAD_BUDGET: usize = 16 * 1024;
const SUMMARY_TAIL_BUDGET: usize = 6 * 1024;
/// Text with a line longer than this also gets a var handle (see `spill_if_large`).
const LONG_LINE_BYTES: usize = 2000;

#[path = "spill_blocks.rs"]
mod blocks_spill;
#[path = "spill_sweep.rs"]
mod sweep;
pub use blocks_spill::BINARY_INLINE_BYTES;
pub use sweep::{SPILL_RETENTION, sweep};

/// Where spill files go and how large a result may get before it is spilled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillConfig {
    /// Files go to `<root>/<session id>/out_<n>.txt`.
    pub root: PathBuf,
    pub threshold_bytes: usize,
}

impl SpillConfig {
    /// `$QUIVER_SPILL_DIR`, else `$QUIVER_HOME/tool_outputs`, else a folder in the
    /// OS temp dir (a session's evidence is scratch data, not user configuration).
    pub fn from_env() -> Self {
        let root = match (std::env::var_os("QUIVER_SPILL_DIR"), std::env::var_os("QUIVER_HOME")) {
            (Some(dir), _) if !dir.is_empty() => PathBuf::from(dir),
            (_, Some(home)) if !home.is_empty() => PathBuf::from(home).join("tool_outputs"),
            _ => std::env::temp_dir().join("quiver").join("tool_outputs"),
        };
        SpillConfig { root, threshold_bytes: DEFAULT_SPILL_THRESHOLD }
    }
}

/// One spilled output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillRecord {
    pub handle: String,
    /// The tool whose output this was.
    pub tool: String,
    pub path: PathBuf,
    pub bytes: usize,
    pub lines: usize,
    /// Set when the output was JSON and is also readable with `handle_read`.
    pub var_handle: Option<String>,
}

impl SpillRecord {
    /// The `spilled` block merged into a result's metadata.
    pub fn metadata(&self) -> Value {
        let mut block = json!({
            "handle": self.handle,
            "path": self.path.to_string_lossy(),
            "bytes": self.bytes,
            "lines": self.lines,
        });
        if let (Some(var), Value::Object(map)) = (&self.var_handle, &mut block) {
            map.insert("var_handle".into(), Value::String(var.clone()));
        }
        block
    }
}

#[derive(Default)]
struct SpillInner {
    config: Option<SpillConfig>,
    next: u64,
    /// Binary spills are numbered apart, so text handles stay `out_1, out_2…`.
    next_blob: u64,
    records: BTreeMap<u64, SpillRecord>,
}

/// Per-session record of spilled outputs (`ctx.session.state::<SpillStore>()`).
#[derive(Default)]
pub struct SpillStore {
    inner: Mutex<SpillInner>,
}

impl SpillStore {
    /// Overrides the environment's settings for this session (hosts, tests).
    pub fn configure(&self, config: SpillConfig) {
        self.inner.lock().config = Some(config);
    }

    /// Outputs larger than this many bytes are spilled.
    pub fn threshold_bytes(&self) -> usize {
        self.inner.lock().config.get_or_insert_with(SpillConfig::from_env).threshold_bytes
    }

    pub fn config(&self) -> SpillConfig {
        self.inner.lock().config.get_or_insert_with(SpillConfig::from_env).clone()
    }

    /// Writes `text` to a new spill file and records it under the next `out_<n>`.
    /// Any tool may call this directly for output it bounds itself (a shell's
    /// head+tail window); dispatch calls it for every oversized result.
    pub async fn spill_text(
        &self,
        session_id: &str,
        tool: &str,
        text: &str,
        var_handle: Option<String>,
    ) -> std::io::Result<SpillRecord> {
        let (number, root) = {
            let mut inner = self.inner.lock();
            let root = inner.config.get_or_insert_with(SpillConfig::from_env).root.clone();
            inner.next += 1;
            (inner.next, root)
        };
        let handle = format!("out_{number}");
        let dir = root.join(safe_component(session_id));
        sweep::sweep_once(&root, &dir);
        create_private_dir(&dir).await?;
        let path = write_new_file(&dir, &handle, "txt", text.as_bytes()).await?;
        let record = SpillRecord {
            handle,
            tool: tool.to_string(),
            path,
            bytes: text.len(),
            lines: text.lines().count(),
            var_handle,
        };
        self.inner.lock().records.insert(number, record.clone());
        Ok(record)
    }

    /// Writes a binary payload (an image or audio block too large to inline) to
    /// a new file `blob_<n>.<ext>` next to the session's text spills; the file's
    /// path. Not a `retrieve_tool_result` handle: line windows of bytes mean nothing.
    pub async fn spill_bytes(&self, session_id: &str, bytes: &[u8], ext: &str) -> std::io::Result<PathBuf> {
        let (number, root) = {
            let mut inner = self.inner.lock();
            let root = inner.config.get_or_insert_with(SpillConfig::from_env).root.clone();
            inner.next_blob += 1;
            (inner.next_blob, root)
        };
        let dir = root.join(safe_component(session_id));
        sweep::sweep_once(&root, &dir);
        create_private_dir(&dir).await?;
        write_new_file(&dir, &format!("blob_{number}"), ext, bytes).await
    }

    /// Records a file some other store already keeps (a durable task's log
    /// artifact) under the next `out_<n>`, so `retrieve_tool_result` reads it like
    /// any spilled output. The file is not copied and never swept from here.
    pub fn adopt(&self, tool: &str, path: PathBuf, bytes: usize, lines: usize) -> SpillRecord {
        let mut inner = self.inner.lock();
        inner.next += 1;
        let number = inner.next;
        let record = SpillRecord {
            handle: format!("out_{number}"),
            tool: tool.to_string(),
            path,
            bytes,
            lines,
            var_handle: None,
        };
        inner.records.insert(number, record.clone());
        record
    }

    /// Removes this session's spill folder, for a host whose session ends with
    /// the process (`quiver call`): no later call can read its handles back.
    /// Only a folder of nothing but spill files goes; `true` when one did.
    pub fn discard(&self, session_id: &str) -> bool {
        let root = self.config().root;
        sweep::remove_spill_folder(&root.join(safe_component(session_id)))
    }

    pub fn get(&self, handle: &str) -> Option<SpillRecord> {
        let number = handle_number(handle, "out_")?;
        self.inner.lock().records.get(&number).cloned()
    }

    /// Handles of this session, oldest first.
    pub fn handles(&self) -> Vec<String> {
        self.inner.lock().records.values().map(|r| r.handle.clone()).collect()
    }
}

#[derive(Default)]
struct VarInner {
    next: u64,
    payloads: BTreeMap<u64, Arc<Value>>,
}

/// Per-session store of structured payloads behind `var_<n>` handles. Any tool (and
/// later a sub-agent) registers a payload and hands the model the small card from
/// [`VarHandles::card`] instead of the payload itself.
#[derive(Default)]
pub struct VarHandles {
    inner: Mutex<VarInner>,
}

impl VarHandles {
    /// Stores a payload; returns its handle name.
    pub fn register(&self, payload: Value) -> String {
        let mut inner = self.inner.lock();
        inner.next += 1;
        let number = inner.next;
        inner.payloads.insert(number, Arc::new(payload));
        format!("var_{number}")
    }

    /// The payload, shared: large payloads are never copied to be read.
    pub fn get(&self, handle: &str) -> Option<Arc<Value>> {
        let number = handle_number(handle, "var_")?;
        self.inner.lock().payloads.get(&number).cloned()
    }

    /// Handles of this session, oldest first.
    pub fn handles(&self) -> Vec<String> {
        self.inner.lock().payloads.keys().map(|n| format!("var_{n}")).collect()
    }

    /// What a model is shown instead of a payload: handle, type and size.
    pub fn card(handle: &str, payload: &Value) -> Value {
        let (kind, count) = match payload {
            Value::Array(items) => ("array", items.len()),
            Value::Object(map) => ("object", map.len()),
            Value::String(s) => ("string", s.chars().count()),
            Value::Null => ("null", 0),
            Value::Bool(_) => ("boolean", 1),
            Value::Number(_) => ("number", 1),
        };
        json!({ "var_handle": handle, "type": kind, "count": count })
    }
}

fn handle_number(handle: &str, prefix: &str) -> Option<u64> {
    handle.trim().strip_prefix(prefix)?.parse().ok()
}

/// Session ids come from hosts and clients; only a plain name becomes a folder.
fn safe_component(id: &str) -> String {
    let cleaned: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect();
    if cleaned.is_empty() || cleaned.chars().all(|c| c == '.') { "session".to_string() } else { cleaned }
}

/// Spilled outputs can hold anything a tool saw (tokens in logs): owner-only.
async fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = tokio::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(0o700);
    builder.create(dir).await
}

/// Two sessions may share an id (and so a folder) across processes; a file is never
/// overwritten, the name gets a suffix instead.
async fn write_new_file(dir: &Path, handle: &str, ext: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    use tokio::io::AsyncWriteExt;
    for attempt in 0..1000u32 {
        let name = if attempt == 0 { format!("{handle}.{ext}") } else { format!("{handle}-{attempt}.{ext}") };
        let path = dir.join(name);
        let mut options = tokio::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        options.mode(0o600);
        match options.open(&path).await {
            Ok(mut file) => {
                file.write_all(bytes).await?;
                file.flush().await?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, format!("no free file name for {handle}")))
}

/// The text that replaces a spilled result: facts, how to read on, head and tail.
pub fn summary_text(text: &str, record: &SpillRecord) -> String {
    let mut out = format!(
        "Output of `{}` was too large to show in full ({} bytes, {} lines); it is saved as handle `{}`.\n",
        record.tool, record.bytes, record.lines, record.handle
    );
    let example = if record.lines > SUMMARY_HEAD_LINES + SUMMARY_TAIL_LINES {
        format!("\"mode\": \"lines\", \"start\": {}, \"end\": {}", SUMMARY_HEAD_LINES + 1, SUMMARY_HEAD_LINES + 100)
    } else {
        "\"mode\": \"query\", \"query\": \"error|warning\"".to_string()
    };
    out.push_str(&format!(
        "Read more with retrieve_tool_result, e.g. {{\"handle\": \"{}\", {example}}}; \
         modes: summary, head, tail, lines, query (regex search).\n",
        record.handle
    ));
    if let Some(var) = &record.var_handle {
        out.push_str(&format!(
            "Also held as var_handle `{var}`: handle_read projects it (slice by items or characters, range, count, \
             jsonpath for JSON).\n"
        ));
    }
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    let head_end = if total <= SUMMARY_HEAD_LINES + SUMMARY_TAIL_LINES { total } else { SUMMARY_HEAD_LINES };
    let head_shown = push_lines(&mut out, &lines, 0, head_end, SUMMARY_HEAD_BUDGET);
    if head_shown < total {
        let tail_from = total.saturating_sub(SUMMARY_TAIL_LINES).max(head_shown);
        if tail_from > head_shown {
            out.push_str(&format!("--- lines {}-{} omitted ---\n", head_shown + 1, tail_from));
        }
        let tail_shown = push_lines(&mut out, &lines, tail_from, total, SUMMARY_TAIL_BUDGET);
        if tail_shown < total {
            out.push_str(&format!("--- lines {}-{} omitted ---\n", tail_shown + 1, total));
        }
    }
    out
}

/// Appends `lines[from..to]` under a header while `budget` lasts; returns the index
/// after the last line appended.
fn push_lines(out: &mut String, lines: &[&str], from: usize, to: usize, budget: usize) -> usize {
    if from >= to {
        return from;
    }
    let mut body = String::new();
    let mut end = from;
    for line in &lines[from..to] {
        let shown = cut_line(line);
        if !body.is_empty() && body.len() + shown.len() + 1 > budget {
            break;
        }
        body.push_str(&shown);
        body.push('\n');
        end += 1;
    }
    out.push_str(&format!("--- lines {}-{} ---\n", from + 1, end));
    out.push_str(&body);
    end
}

fn cut_line(line: &str) -> String {
    let chars = line.chars().count();
    if chars <= SUMMARY_LINE_CHARS {
        return line.to_string();
    }
    let cut: String = line.chars().take(SUMMARY_LINE_CHARS).collect();
    format!("{cut}… [{} more chars]", chars - SUMMARY_LINE_CHARS)
}

/// The dispatch hook: spills `result` when its content is over the session's bound.
/// If the spill file cannot be written the content is cut instead, so an oversized
/// result never reaches the model whole.
/// Returns whether it changed the result (spilled or cut something).
pub async fn spill_if_large(result: &mut ToolResult, spec: &ToolSpec, ctx: &ToolContext) -> bool {
    spill_in_place(result, spec, ctx).await;
    result.metadata.contains_key("spilled") || result.metadata.contains_key("truncated")
}

async fn spill_in_place(result: &mut ToolResult, spec: &ToolSpec, ctx: &ToolContext) {
    // Tools that return bounded windows of spilled data say so: spilling them
    // would only mint handles of handles.
    if spec.capabilities.contains(Capabilities::NEVER_SPILL) {
        return;
    }
    let store = ctx.session.state::<SpillStore>();
    let threshold = store.config().threshold_bytes;
    if !result.blocks.is_empty() {
        blocks_spill::spill_blocks(result, spec, ctx, threshold).await;
        return;
    }
    let text = match &result.content {
        Value::String(s) if s.len() > threshold => s.clone(),
        Value::String(_) => return,
        other => {
            if other.to_string().len() <= threshold {
                return;
            }
            // Pretty-printed so that line windows and regex queries are meaningful.
            serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string())
        }
    };
    // JSON gets a var handle for projections; so does text with very long lines
    // (minified code, one-line logs), which line windows cut but char slices reach.
    let payload = json_payload(&result.content)
        .or_else(|| text.lines().any(|l| l.len() > LONG_LINE_BYTES).then(|| Value::String(text.clone())));
    let var_handle = payload.map(|payload| ctx.session.state::<VarHandles>().register(payload));
    match store.spill_text(ctx.session.id(), &spec.name, &text, var_handle).await {
        Ok(record) => {
            result.content = Value::String(summary_text(&text, &record));
            result.metadata.insert("spilled".into(), record.metadata());
        }
        Err(e) => {
            tracing::warn!(tool = %spec.name, error = %e, "could not write spill file; cutting the output instead");
            let mut end = threshold.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            result.content = Value::String(format!(
                "{}\n… [output cut at {end} of {} bytes: writing the spill file failed: {e}]",
                &text[..end],
                text.len()
            ));
            result.metadata.insert("truncated".into(), Value::Bool(true));
        }
    }
}

/// Structured content, or text that is a JSON object or array, worth a var handle.
fn json_payload(content: &Value) -> Option<Value> {
    match content {
        Value::String(s) => {
            let trimmed = s.trim_start();
            if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
                return None;
            }
            serde_json::from_str::<Value>(s).ok().filter(|v| v.is_object() || v.is_array())
        }
        Value::Null => None,
        other => Some(other.clone()),
    }
}

#[cfg(test)]
#[path = "spill_tests.rs"]
mod tests;
