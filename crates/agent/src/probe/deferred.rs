//! Deferred tools kept out: whether a Messages server really leaves a tool
//! sent with `defer_loading: true` out of the prompt. Accepting the flag
//! proves nothing: LiteLLM's proxy takes it and hands the definition to its
//! backend as an ordinary tool, so every deferred tool costs prompt tokens
//! and the cache saving is lost. So the check measures: the same request
//! twice, the second with one large deferred tool, and compares the prompt
//! tokens each reports (`input_tokens` plus the cache's read and written
//! tokens: everything the prompt held). When the deferred tool added next to
//! nothing, a third request sends it as an ordinary tool: only a server that
//! counts that one has shown it keeps the deferred one out.

use serde_json::{Value, json};

use super::client::{Reply, one_line};
use super::requests::{self, render, usage_objects};
use super::{Check, Probe, Status};
use crate::openai::ToolTurnContent;
use crate::provider::Wire;

/// The deferred tool's name.
const DEFERRED: &str = "probe_deferred_report";

/// A deferred tool may add less than this percentage of its own estimated
/// tokens (its bytes / 4) and still count as kept out: a server may add a
/// few tokens of its own for deferred tools, never the definition.
const KEPT_OUT_PERCENT: u64 = 25;

/// What the fields of the deferred tool's schema are, and say.
const FIELDS: [(&str, &str); 8] = [
    (
        "repository",
        "The repository to report on, as owner/name. The report reads its default branch unless `ref` names another branch, tag or commit.",
    ),
    (
        "ref",
        "A branch, tag or commit of the repository. Unset: the default branch. A commit may be abbreviated to seven or more hexadecimal digits.",
    ),
    (
        "since",
        "The earliest date included, as YYYY-MM-DD in UTC. Unset: thirty days before `until`. Dates before the repository's first commit are clamped.",
    ),
    (
        "until",
        "The latest date included, as YYYY-MM-DD in UTC. Unset: today. A date in the future is refused rather than clamped, to catch swapped ranges.",
    ),
    (
        "paths",
        "Only changes under these paths count (each a directory or file, relative to the repository root, no globs). Unset or empty: the whole tree.",
    ),
    (
        "authors",
        "Only commits by these authors count, each an email address or a login. Matching is case-insensitive; co-authors named in trailers count too.",
    ),
    (
        "group_by",
        "How the report's rows are grouped: `day`, `week`, `author` or `path` (the top-level directory). Each row carries commits, files touched and lines changed.",
    ),
    (
        "limit",
        "At most this many rows, the largest first (by lines changed). Unset: 50. The totals always cover every row, including those left out.",
    ),
];

/// A realistic large tool (about 3 KB), the same bytes on every run.
pub(super) fn deferred_tool() -> Value {
    let mut properties = serde_json::Map::new();
    for (name, description) in FIELDS {
        let kind = match name {
            "limit" => json!({"type": "integer", "minimum": 1, "maximum": 500, "description": description}),
            "paths" | "authors" => json!({"type": "array", "items": {"type": "string"}, "description": description}),
            "group_by" => {
                json!({"type": "string", "enum": ["day", "week", "author", "path"], "description": description})
            }
            _ => json!({"type": "string", "description": description}),
        };
        properties.insert(name.to_string(), kind);
    }
    let description = "Summarize the commit activity of a repository over a date range: how many commits, \
        which files changed most, who changed them and how many lines were added and removed, grouped by \
        day, week, author or top-level path. Use it to answer questions such as what changed in a \
        component last month, who has worked on a file, or how busy a branch has been, instead of \
        reading the log commit by commit. The report is computed from the repository's history as \
        fetched at the time of the call; merges are counted once, on their first parent, and \
        generated files (lock files, vendored directories, files marked as generated in \
        .gitattributes) are left out of the line counts but listed apart. Large ranges are \
        summarized rather than refused: when more rows match than `limit`, the largest are kept \
        and the rest are totalled in a final row. The result is JSON: `rows` (each with its group \
        key, commits, files, lines_added, lines_removed), `totals`, and `notes` saying what was \
        clamped or left out.";
    json!({
        "name": DEFERRED,
        "description": description,
        "input_schema": {"type": "object", "properties": properties, "required": ["repository"]},
    })
}

/// Everything the prompt held, by one answer's usage: Anthropic's
/// `input_tokens` leave out what the cache read and wrote.
fn prompt_tokens(usage: &Value) -> Option<u64> {
    let field = |name: &str| usage.get(name).and_then(Value::as_u64);
    let input = field("input_tokens")?;
    Some(input + field("cache_read_input_tokens").unwrap_or(0) + field("cache_creation_input_tokens").unwrap_or(0))
}

/// The prompt tokens of a non-streamed answer, if it reported any.
fn reported(reply: &Reply, wire: Wire) -> Option<u64> {
    let json = reply.json()?;
    usage_objects(wire, std::slice::from_ref(&json)).iter().find_map(prompt_tokens)
}

pub(super) async fn deferred_tools(p: &mut Probe<'_>) {
    let row = Check::DeferredTools;
    if p.target.wire != Wire::Anthropic {
        return p.set(
            row,
            Status::NotApplicable,
            "Chat Completions has no deferred tools: loaded tools are appended to `tools` (`deferred_tools = \
             \"dispatch\"` keeps `tools` fixed and calls them through `call_tool`)",
            None,
        );
    }
    if p.blocked(row) {
        return;
    }
    let path = p.client.chat_path();
    let plain = requests::with_tool_asking(p.target, "Reply with one word: hello.", 16);
    let mut with_deferred = plain.clone();
    let tool = deferred_tool();
    let tool_bytes = quiver_engine::canonical::to_string(&tool).len();
    let estimate = u64::try_from(tool_bytes / 4).unwrap_or(u64::MAX);
    with_deferred.deferred_tools = vec![tool];
    let mut replies = Vec::new();
    for req in [&plain, &with_deferred] {
        let body = render(p.target, req, false, ToolTurnContent::default());
        match p.client.post(path, &body).await {
            Ok(reply) => replies.push(reply),
            Err(e) => return p.set(row, Status::No, format!("POST {path}: {}", one_line(&e, 200)), None),
        }
    }
    let [without, with] = [&replies[0], &replies[1]];
    let took = Some(without.elapsed + with.elapsed);
    if !without.ok() {
        let detail = format!("cannot tell: the request without a deferred tool failed: {}", without.refusal());
        return p.set(row, Status::NotApplicable, detail, took);
    }
    if !with.ok() {
        // A refusal of the body (not a server failing): `defer_loading`
        // fails the whole request here, so quiver appends instead.
        if (400..500).contains(&with.status) || with.said().invalid_body {
            p.learned.deferred_tools = Some(false);
        }
        return p.set(row, Status::No, format!("`defer_loading` is refused: {}", with.refusal()), took);
    }
    let (Some(before), Some(after)) = (reported(without, p.target.wire), reported(with, p.target.wire)) else {
        let detail = "cannot tell: an answer reported no input tokens (a deferred tool was accepted)";
        return p.set(row, Status::NotApplicable, detail, took);
    };
    let added = after.saturating_sub(before);
    let numbers = format!("+{added} input tokens for a ~{estimate}-token deferred tool ({before} → {after})");
    let counted = |added: u64| added.saturating_mul(100) >= estimate.saturating_mul(KEPT_OUT_PERCENT);
    if counted(added) {
        p.learned.deferred_tools = Some(false);
        let detail = format!("accepted, but counted as prompt: {numbers}; it reaches the model as an ordinary tool");
        return p.set(row, Status::No, detail, took);
    }
    // Nothing added proves something only if the server counts tools at all
    // (a backend whose template drops tools counts neither): the same tool
    // as an ordinary one is the control.
    let mut ordinary = plain.clone();
    if let (Value::Array(tools), Some(tool)) = (&mut ordinary.tools, with_deferred.deferred_tools.first()) {
        tools.push(tool.clone());
    }
    let body = render(p.target, &ordinary, false, ToolTurnContent::default());
    let control = match p.client.post(path, &body).await {
        Ok(reply) => reply,
        Err(e) => return p.set(row, Status::No, format!("POST {path}: {}", one_line(&e, 200)), took),
    };
    let took = took.map(|t| t + control.elapsed);
    let control_added = reported(&control, p.target.wire).filter(|_| control.ok()).map(|n| n.saturating_sub(before));
    match control_added {
        Some(control_added) if counted(control_added) => {
            p.learned.deferred_tools = Some(true);
            let detail = format!("kept out of the prompt: {numbers}; as an ordinary tool it added +{control_added}");
            p.set(row, Status::Ok, detail, took);
        }
        Some(control_added) => {
            let detail = format!(
                "cannot tell: {numbers}, but as an ordinary tool it added +{control_added} too (the server does not count tools as prompt)"
            );
            p.set(row, Status::NotApplicable, detail, took);
        }
        None => {
            let detail = format!(
                "cannot tell: {numbers}, and the same tool sent as an ordinary one got no usage back ({})",
                if control.ok() { "no input tokens".to_string() } else { control.refusal() }
            );
            p.set(row, Status::NotApplicable, detail, took);
        }
    }
}
