//! `handle_read`: bounded projections of a `var_handle` payload (slices, line
//! ranges, counts, JSONPath), so a large value is inspected without replaying it.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use serde_json_path::JsonPath;

use quiver_engine::spill::{SpillStore, VarHandles};
use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput, Unit};

use crate::evidence::retrieve_tool_result::{MAX_OUTPUT_BYTES, line_window, window};

const DEFAULT_ITEMS: i64 = 50;
const DEFAULT_CHARS: i64 = 4000;
const KEYS_SHOWN: usize = 50;

pub struct HandleRead;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HandleOp {
    Slice,
    Range,
    Count,
    Jsonpath,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HandleReadInput {
    /// A var_handle, e.g. "var_1".
    pub handle: String,
    /// slice: items/chars [start, end), 0-based, negative from the end; range: `limit` lines from `offset` (1-based); count: sizes; jsonpath: query `path`.
    pub op: HandleOp,
    // `start`/`end` stay for `slice`: a Python slice of items or characters
    // (the REPL's own indexing, negative from the end), not a line window;
    // `[0:-1]` has no offset/limit without the payload's length.
    #[serde(default)]
    pub start: Option<i64>,
    #[serde(default)]
    pub end: Option<i64>,
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub offset: Option<usize>,
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
    /// jsonpath: a JSONPath such as "$.items[*].name".
    #[serde(default)]
    pub path: Option<String>,
}

impl Tool for HandleRead {
    type Input = HandleReadInput;
    const NAME: &'static str = "handle_read";
    const DOMAIN: Domain = Domain::Evidence;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NEVER_SPILL;
    // Before one vocabulary `range` took `start..=end` (1-based, inclusive), as recorded calls say.
    const INPUT_ALIASES: &'static [InputAlias] = &[
        InputAlias::rename("start", "offset").when("op", "range"),
        InputAlias::converted("end", "limit", Unit::InclusiveEnd { start: "start" }).when("op", "range"),
    ];

    fn description(&self) -> String {
        "Read part of a var_handle payload: slice of an array or string, a line range, counts, or a JSONPath query."
            .into()
    }

    async fn run(&self, input: HandleReadInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let vars = ctx.session.state::<VarHandles>();
        let Some(payload) = vars.get(&input.handle) else {
            return Err(unknown_handle(&input.handle, &vars.handles(), &ctx.session.state::<SpillStore>()));
        };
        let handle = input.handle.trim().to_string();
        check_args(&input)?;
        let output = match input.op {
            HandleOp::Slice => slice(&payload, input.start, input.end)?,
            HandleOp::Range => range(&payload, input.offset, input.limit)?,
            HandleOp::Count => ToolOutput::json(count(&payload)),
            HandleOp::Jsonpath => jsonpath(&payload, input.path.as_deref().unwrap_or(""))?,
        };
        Ok(output.with_meta("handle", handle))
    }
}

fn unknown_handle(handle: &str, known: &[String], spills: &SpillStore) -> ToolError {
    if let Some(record) = spills.get(handle) {
        return ToolError::model(match record.var_handle {
            Some(var) => format!("`{handle}` is a spilled output; its JSON is var_handle `{var}`: use that here"),
            None => format!("`{handle}` is a spilled text output; read it with retrieve_tool_result"),
        });
    }
    if known.is_empty() {
        ToolError::model(format!("unknown var_handle `{handle}`: this session has no var handles"))
    } else {
        ToolError::model(format!("unknown var_handle `{handle}`; this session's var handles: {}", known.join(", ")))
    }
}

fn check_args(input: &HandleReadInput) -> Result<(), ToolError> {
    let op = match input.op {
        HandleOp::Slice => "slice",
        HandleOp::Range => "range",
        HandleOp::Count => "count",
        HandleOp::Jsonpath => "jsonpath",
    };
    if input.path.is_some() && input.op != HandleOp::Jsonpath {
        return Err(ToolError::model(format!("`path` applies to op jsonpath only, not `{op}`")));
    }
    if (input.start.is_some() || input.end.is_some()) && input.op != HandleOp::Slice {
        return Err(ToolError::model(format!("`start`/`end` apply to op slice only, not `{op}`")));
    }
    if (input.offset.is_some() || input.limit.is_some()) && input.op != HandleOp::Range {
        return Err(ToolError::model(format!("`offset`/`limit` apply to op range only, not `{op}`")));
    }
    Ok(())
}

/// Python-style index: negative counts from the end; clamped into `0..=len`.
fn resolve(index: i64, len: usize) -> usize {
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let i = if index < 0 { (len_i + index).max(0) } else { index.min(len_i) };
    usize::try_from(i).unwrap_or(0)
}

fn slice(payload: &Value, start: Option<i64>, end: Option<i64>) -> Result<ToolOutput, ToolError> {
    let (len, default_window) = match payload {
        Value::Array(items) => (items.len(), DEFAULT_ITEMS),
        Value::Object(map) => (map.len(), DEFAULT_ITEMS),
        Value::String(s) => (s.chars().count(), DEFAULT_CHARS),
        other => {
            return Err(ToolError::model(format!(
                "op `slice` needs an array, object or string; this payload is {}: {other}",
                type_name(other)
            )));
        }
    };
    let from = resolve(start.unwrap_or(0), len);
    let to = match end {
        Some(end) => resolve(end, len),
        None => from.saturating_add(usize::try_from(default_window).unwrap_or(50)).min(len),
    };
    if from >= len && len > 0 {
        return Err(ToolError::model(format!("`start` {} is past the end (length {len})", start.unwrap_or(0))));
    }
    if to < from {
        return Err(ToolError::model(format!("`end` resolves to {to}, before `start` at {from}")));
    }
    match payload {
        Value::String(s) => {
            let text: String = s.chars().skip(from).take(to - from).collect();
            // Cut by bytes too: a slice of multibyte text must still fit the budget.
            let mut shown_chars = 0;
            let mut bytes = 0;
            for c in text.chars() {
                if bytes + c.len_utf8() > MAX_OUTPUT_BYTES {
                    break;
                }
                bytes += c.len_utf8();
                shown_chars += 1;
            }
            let shown_to = from + shown_chars;
            let mut out: String = text.chars().take(shown_chars).collect();
            if shown_to < to {
                out.push_str(&format!(
                    "\n… bounded at {} KiB; continue with start={shown_to}",
                    MAX_OUTPUT_BYTES / 1024
                ));
            }
            Ok(ToolOutput::text(out)
                .with_meta("total_chars", len)
                .with_meta("start", from)
                .with_meta("end", shown_to)
                .with_meta("truncated", shown_to < to))
        }
        Value::Array(items) => {
            let (shown, next) = bounded(items[from..to].iter().cloned(), from);
            Ok(slice_output(json!({"type": "array", "total": len, "start": from, "items": shown}), next, to))
        }
        Value::Object(map) => {
            let entries = map.iter().skip(from).take(to - from).map(|(k, v)| {
                let mut entry = Map::new();
                entry.insert(k.clone(), v.clone());
                Value::Object(entry)
            });
            let (shown, next) = bounded(entries, from);
            let merged: Map<String, Value> =
                shown.into_iter().filter_map(|e| e.as_object().cloned()).flat_map(|m| m.into_iter()).collect();
            Ok(slice_output(json!({"type": "object", "total": len, "start": from, "entries": merged}), next, to))
        }
        _ => Err(ToolError::model("op `slice` needs an array, object or string")),
    }
}

/// Takes items while the serialized total stays under the budget; returns them and
/// the index after the last one taken.
fn bounded(items: impl Iterator<Item = Value>, from: usize) -> (Vec<Value>, usize) {
    let mut out = Vec::new();
    let mut bytes = 0;
    for item in items {
        let size = item.to_string().len() + 1;
        if !out.is_empty() && bytes + size > MAX_OUTPUT_BYTES {
            break;
        }
        if out.is_empty() && size > MAX_OUTPUT_BYTES {
            // One item alone over the budget: show what it is, not all of it.
            out.push(too_large(&item, size));
            break;
        }
        bytes += size;
        out.push(item);
    }
    let next = from + out.len();
    (out, next)
}

/// Stands in for a value too large for one answer: what it is and how big.
fn too_large(value: &Value, bytes: usize) -> Value {
    let mut card = count(value);
    if let Value::Object(map) = &mut card {
        map.remove("keys");
        map.remove("keys_truncated");
        map.insert("bytes".into(), json!(bytes));
    }
    json!({"too_large": card, "hint": "narrow it: a deeper JSONPath, or a slice such as [0:10]"})
}

fn slice_output(mut body: Value, next: usize, to: usize) -> ToolOutput {
    if let Value::Object(map) = &mut body {
        map.insert("end".into(), json!(next));
        if next < to {
            map.insert("next_start".into(), json!(next));
        }
    }
    ToolOutput::json(body).with_meta("truncated", next < to)
}

/// Lines of the payload as text (strings as they are, anything else pretty JSON).
fn range(payload: &Value, offset: Option<usize>, limit: Option<usize>) -> Result<ToolOutput, ToolError> {
    let text = match payload {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
    };
    let lines: Vec<&str> = text.lines().collect();
    let (from, to) = line_window(offset.or(Some(1)), limit, lines.len())?;
    Ok(window(&lines, from, to).with_meta("total_lines", lines.len()))
}

fn count(payload: &Value) -> Value {
    match payload {
        Value::Array(items) => json!({"type": "array", "count": items.len()}),
        Value::Object(map) => {
            let keys: Vec<&String> = map.keys().take(KEYS_SHOWN).collect();
            json!({"type": "object", "count": map.len(), "keys": keys, "keys_truncated": map.len() > KEYS_SHOWN})
        }
        Value::String(s) => {
            json!({"type": "string", "chars": s.chars().count(), "lines": s.lines().count(), "bytes": s.len()})
        }
        other => json!({"type": type_name(other), "count": 1}),
    }
}

fn jsonpath(payload: &Value, path: &str) -> Result<ToolOutput, ToolError> {
    if path.trim().is_empty() {
        return Err(ToolError::model("op `jsonpath` needs `path`, e.g. \"$.items[*].name\" or \"$..id\""));
    }
    let parsed = JsonPath::parse(path).map_err(|e| {
        ToolError::model(format!(
            "invalid JSONPath `{path}`: {e}; a JSONPath starts at `$`, e.g. \"$.items[0].name\", \"$..id\", \"$.items[?@.ok == true]\""
        ))
    })?;
    let parsed_text;
    let doc = match payload {
        Value::String(s) => {
            parsed_text = serde_json::from_str::<Value>(s).map_err(|_| {
                ToolError::model("this payload is plain text, not JSON; use op slice or range".to_string())
            })?;
            &parsed_text
        }
        other => other,
    };
    let nodes = parsed.query_located(doc);
    let total = nodes.len();
    let located = nodes.iter().map(|n| {
        let size = n.node().to_string().len();
        let value = if size > MAX_OUTPUT_BYTES { too_large(n.node(), size) } else { n.node().clone() };
        json!({"location": n.location().to_string(), "value": value})
    });
    let (matches, shown) = bounded(located, 0);
    let mut body = json!({"path": path, "count": total, "matches": matches});
    if let (true, Value::Object(map)) = (shown < total, &mut body) {
        map.insert(
            "truncated".into(),
            json!(format!("{shown} of {total} matches shown (bounded output); narrow the path")),
        );
    }
    Ok(ToolOutput::json(body).with_meta("matches", total).with_meta("truncated", shown < total))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
#[path = "handle_read_tests.rs"]
mod tests;
