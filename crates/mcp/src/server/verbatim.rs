//! Results the handler passes on verbatim (a directly exposed server's
//! `tools/call` answer, its `tools/list` entries), kept by slot until the
//! transport writes them: rmcp's types cannot carry bytes, so the handler
//! hands rmcp a placeholder naming a slot and the transport (stdio or HTTP)
//! writes the slot's text in its place. Apart from both, so the handler can
//! hold one without importing a transport; the lines both transports write
//! ([`encode`], [`result_line`]) live here for the same reason (the HTTP
//! answer and the stdio transport each write the other's lines).

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::RoleServer;
use rmcp::model::{
    CallToolResult, JsonObject, JsonRpcMessage, ListToolsResult, MetaObject, NumberOrString, RequestId, ServerResult,
};
use rmcp::service::TxJsonRpcMessage;

/// The `_meta` key of a placeholder result. Never leaves quiver: the
/// transport replaces the whole result.
pub(crate) const SLOT_KEY: &str = "io.quiver/verbatim-slot";

/// What a slot holds.
enum Verbatim {
    /// A whole `CallToolResult`.
    Call(Arc<String>),
    /// For each tool of a `tools/list` answer, in order, its entry's text
    /// when it has one; the others are written as rmcp would.
    Tools(Vec<Option<Arc<str>>>),
}

/// Results waiting to be written verbatim, by slot.
#[derive(Default)]
pub struct VerbatimResults {
    next: AtomicU64,
    slots: Mutex<BTreeMap<u64, Verbatim>>,
}

/// Slots kept at most. A slot is taken as soon as its answer is written, so
/// the map is nearly empty; what stays is an answer never written (an HTTP
/// client that left mid-call), and a client leaving over and over must not
/// grow it without bound. The oldest goes first.
pub(crate) const MAX_SLOTS: usize = 1024;

fn slot_meta(slot: u64) -> MetaObject {
    let mut meta = JsonObject::new();
    meta.insert(SLOT_KEY.into(), slot.into());
    MetaObject(meta)
}

fn slot_of(meta: Option<&MetaObject>) -> Option<u64> {
    meta?.0.get(SLOT_KEY)?.as_u64()
}

impl VerbatimResults {
    /// Slots held now (tests of the bound).
    #[cfg(test)]
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.lock().len()
    }

    /// A placeholder for `verbatim` (a `CallToolResult`'s JSON text); the
    /// transport writes `verbatim` where the placeholder would go.
    pub fn placeholder(&self, verbatim: Arc<String>) -> CallToolResult {
        let slot = self.next.fetch_add(1, Ordering::Relaxed);
        self.keep(slot, Verbatim::Call(verbatim));
        let mut result = CallToolResult::success(Vec::new());
        result.meta = Some(slot_meta(slot));
        result
    }

    /// `list` marked so that the transport writes the tools that have an
    /// entry in `entries` (same order) as that text.
    pub fn tools_placeholder(&self, mut list: ListToolsResult, entries: Vec<Option<Arc<str>>>) -> ListToolsResult {
        if list.meta.is_some() || entries.len() != list.tools.len() {
            return list;
        }
        let slot = self.next.fetch_add(1, Ordering::Relaxed);
        self.keep(slot, Verbatim::Tools(entries));
        list.meta = Some(slot_meta(slot));
        list
    }

    fn keep(&self, slot: u64, verbatim: Verbatim) {
        let mut slots = self.slots.lock();
        slots.insert(slot, verbatim);
        while slots.len() > MAX_SLOTS {
            slots.pop_first();
        }
    }

    /// The line's `result` text for a placeholder (taken: each is written once).
    pub(crate) fn take(&self, result: &ServerResult) -> Option<Result<Vec<u8>, serde_json::Error>> {
        match result {
            ServerResult::CallToolResult(call) => match self.slots.lock().remove(&slot_of(call.meta.as_ref())?)? {
                Verbatim::Call(text) => Some(Ok(text.as_bytes().to_vec())),
                Verbatim::Tools(_) => None,
            },
            ServerResult::ListToolsResult(list) => match self.slots.lock().remove(&slot_of(list.meta.as_ref())?)? {
                Verbatim::Tools(entries) => Some(tools_text(list, &entries)),
                Verbatim::Call(_) => None,
            },
            _ => None,
        }
    }
}

/// `{"tools":[...], <the list's other members>}` with each entry's text
/// where it has one.
fn tools_text(list: &ListToolsResult, entries: &[Option<Arc<str>>]) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = b"{\"tools\":[".to_vec();
    for (i, (tool, entry)) in list.tools.iter().zip(entries).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match entry {
            Some(text) => out.extend_from_slice(text.as_bytes()),
            None => serde_json::to_writer(&mut out, tool)?,
        }
    }
    out.push(b']');
    let mut rest = list.clone();
    rest.tools.clear();
    rest.meta = None;
    if let serde_json::Value::Object(members) = serde_json::to_value(&rest)? {
        for (key, value) in members.iter().filter(|(k, _)| k.as_str() != "tools") {
            out.push(b',');
            serde_json::to_writer(&mut out, key)?;
            out.push(b':');
            serde_json::to_writer(&mut out, value)?;
        }
    }
    out.push(b'}');
    Ok(out)
}

/// The line for one outgoing message: serialized by serde, except a
/// placeholder's, which is the verbatim text in the response envelope.
pub(crate) fn encode(
    item: &TxJsonRpcMessage<RoleServer>,
    verbatim: &VerbatimResults,
) -> Result<Vec<u8>, serde_json::Error> {
    let mut line = match item {
        JsonRpcMessage::Response(response) => match verbatim.take(&response.result) {
            Some(text) => return Ok(result_line(&response.id, &text?)),
            None => serde_json::to_vec(item)?,
        },
        other => serde_json::to_vec(other)?,
    };
    line.push(b'\n');
    Ok(line)
}

/// The answer line to request `id` whose `result` is `text` (JSON, as is).
pub(crate) fn result_line(id: &RequestId, text: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(text.len() + 64);
    write_result_line(&mut line, id, text);
    line
}

/// Appends [`result_line`]'s line to `line`.
pub(crate) fn write_result_line(line: &mut Vec<u8>, id: &RequestId, text: &[u8]) {
    line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    match id {
        NumberOrString::Number(n) => line.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        NumberOrString::String(s) => crate::lines::write_json_string(line, s),
    }
    line.extend_from_slice(b",\"result\":");
    line.extend_from_slice(text);
    line.extend_from_slice(b"}\n");
}
