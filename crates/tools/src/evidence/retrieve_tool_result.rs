//! `retrieve_tool_result`: bounded windows of a spilled tool output (`out_<n>`).

use regex::Regex;
use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::spill::{SpillRecord, SpillStore, summary_text};
use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput, Unit};

const DEFAULT_LINES: usize = 100;
const MAX_LINES: usize = 1000;
const DEFAULT_MATCHES: usize = 50;
const MAX_MATCHES: usize = 500;
const CONTEXT_LINES: usize = 2;
/// Every answer stays under the spill bound, so reading never spills again.
pub(crate) const MAX_OUTPUT_BYTES: usize = 24 * 1024;
const MAX_LINE_CHARS: usize = 2000;

pub struct RetrieveToolResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RetrieveMode {
    Summary,
    Head,
    Tail,
    Lines,
    Query,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveInput {
    /// Handle of a spilled output, e.g. "out_1".
    pub handle: String,
    /// summary | head | tail | lines (from offset) | query (regex over lines).
    pub mode: RetrieveMode,
    /// lines: first line, 1-based.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub offset: Option<usize>,
    /// head/tail/lines: line count (default 100); query: max matches (default 50).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
    /// query: regex matched against each line; (?i) for case-insensitive.
    #[serde(default)]
    pub query: Option<String>,
}

impl Tool for RetrieveToolResult {
    type Input = RetrieveInput;
    const NAME: &'static str = "retrieve_tool_result";
    const DOMAIN: Domain = Domain::Evidence;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NEVER_SPILL;
    // Before one vocabulary: a count was `n`, a line window `start..=end`
    // (1-based, inclusive), as recorded calls say.
    const INPUT_ALIASES: &'static [InputAlias] = &[
        InputAlias::rename("n", "limit"),
        InputAlias::rename("start", "offset"),
        InputAlias::converted("end", "limit", Unit::InclusiveEnd { start: "start" }),
    ];

    fn description(&self) -> String {
        "Read a large tool output that was spilled to a file, by its handle (out_N): summary, head, tail, a line range, or a regex query with context.".into()
    }

    async fn run(&self, input: RetrieveInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let store = ctx.session.state::<SpillStore>();
        let record = store.get(&input.handle).ok_or_else(|| unknown_handle(&input.handle, &store.handles()))?;
        check_args(&input)?;
        let bytes = tokio::fs::read(&record.path).await.map_err(|e| {
            ToolError::model(format!(
                "the file behind `{}` ({}) cannot be read: {e}; rerun the original tool call",
                record.handle,
                record.path.display()
            ))
        })?;
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().collect();
        let total = lines.len();
        let output = match input.mode {
            RetrieveMode::Summary => ToolOutput::text(summary_text(&text, &record)),
            RetrieveMode::Head => {
                let n = count(input.limit, DEFAULT_LINES, MAX_LINES, "limit")?;
                window(&lines, 0, n.min(total))
            }
            RetrieveMode::Tail => {
                let n = count(input.limit, DEFAULT_LINES, MAX_LINES, "limit")?;
                window(&lines, total.saturating_sub(n), total)
            }
            RetrieveMode::Lines => {
                let (from, to) = line_window(input.offset, input.limit, total)?;
                window(&lines, from, to)
            }
            RetrieveMode::Query => {
                let pattern = input.query.as_deref().unwrap_or("");
                let n = count(input.limit, DEFAULT_MATCHES, MAX_MATCHES, "limit")?;
                query(&lines, pattern, n)?
            }
        };
        Ok(with_record_meta(output, &record))
    }
}

fn with_record_meta(output: ToolOutput, record: &SpillRecord) -> ToolOutput {
    let output = output
        .with_meta("handle", record.handle.clone())
        .with_meta("tool", record.tool.clone())
        .with_meta("total_lines", record.lines)
        .with_meta("bytes", record.bytes);
    match &record.var_handle {
        Some(var) => output.with_meta("var_handle", var.clone()),
        None => output,
    }
}

fn unknown_handle(handle: &str, known: &[String]) -> ToolError {
    let hint = if handle.trim().starts_with("var_") { " (`var_` handles are read with handle_read)" } else { "" };
    if known.is_empty() {
        ToolError::model(format!("unknown handle `{handle}`{hint}: this session has no spilled outputs"))
    } else {
        ToolError::model(format!(
            "unknown handle `{handle}`{hint}; this session's spilled outputs: {}",
            known.join(", ")
        ))
    }
}

/// Arguments that belong to another mode are a sign the model misunderstood one.
fn check_args(input: &RetrieveInput) -> Result<(), ToolError> {
    let misplaced = |field: &str, modes: &str| {
        Err(ToolError::model(format!("`{field}` applies to mode {modes} only, not `{}`", mode_name(input.mode))))
    };
    let mode = input.mode;
    if input.limit.is_some() && mode == RetrieveMode::Summary {
        return misplaced("limit", "head, tail, lines or query");
    }
    if input.offset.is_some() && mode != RetrieveMode::Lines {
        return misplaced("offset", "lines");
    }
    if input.query.is_some() && mode != RetrieveMode::Query {
        return misplaced("query", "query");
    }
    Ok(())
}

fn mode_name(mode: RetrieveMode) -> &'static str {
    match mode {
        RetrieveMode::Summary => "summary",
        RetrieveMode::Head => "head",
        RetrieveMode::Tail => "tail",
        RetrieveMode::Lines => "lines",
        RetrieveMode::Query => "query",
    }
}

fn count(given: Option<usize>, default: usize, max: usize, field: &str) -> Result<usize, ToolError> {
    let n = given.unwrap_or(default);
    if n == 0 || n > max {
        return Err(ToolError::model(format!("`{field}` must be between 1 and {max}, got {n}")));
    }
    Ok(n)
}

/// `limit` lines from the 1-based `offset` → 0-based half-open, clamped at the end.
pub(crate) fn line_window(
    offset: Option<usize>,
    limit: Option<usize>,
    total: usize,
) -> Result<(usize, usize), ToolError> {
    let Some(offset) = offset else {
        return Err(ToolError::model("this needs `offset` (first line, 1-based) and optionally `limit` (lines)"));
    };
    if offset == 0 {
        return Err(ToolError::model("`offset` is 1-based; use 1 for the first line"));
    }
    if offset > total {
        return Err(ToolError::model(format!("`offset` {offset} is past the end ({total} lines)")));
    }
    let limit = limit.unwrap_or(DEFAULT_LINES);
    if limit == 0 {
        return Err(ToolError::model("`limit` must be at least 1"));
    }
    // Clamped first: asking past the end is fine, asking for too much at once is not.
    let to = (offset - 1).saturating_add(limit).min(total);
    if to - (offset - 1) > MAX_LINES {
        return Err(ToolError::model(format!("at most {MAX_LINES} lines per call; lower `limit`")));
    }
    Ok((offset - 1, to))
}

fn numbered(out: &mut String, index: usize, sep: char, line: &str) {
    let chars = line.chars().count();
    if chars > MAX_LINE_CHARS {
        let cut: String = line.chars().take(MAX_LINE_CHARS).collect();
        out.push_str(&format!("{:>6}{sep}{cut}… [{} more chars]\n", index + 1, chars - MAX_LINE_CHARS));
    } else {
        out.push_str(&format!("{:>6}{sep}{line}\n", index + 1));
    }
}

/// Lines `from..to` with numbers, cut where the output budget ends.
pub(crate) fn window(lines: &[&str], from: usize, to: usize) -> ToolOutput {
    let mut out = String::new();
    let mut shown_to = from;
    for (i, line) in lines.iter().enumerate().take(to).skip(from) {
        if out.len() > MAX_OUTPUT_BYTES {
            break;
        }
        numbered(&mut out, i, '\t', line);
        shown_to = i + 1;
    }
    if shown_to < to {
        out.push_str(&format!(
            "… output bounded at {} KiB; continue with offset={}\n",
            MAX_OUTPUT_BYTES / 1024,
            shown_to + 1
        ));
    }
    let first = if shown_to > from { from + 1 } else { 0 };
    ToolOutput::text(out).with_meta("first_line", first).with_meta("last_line", shown_to)
}

/// Matching lines with `CONTEXT_LINES` around each, overlapping windows merged,
/// grep style: `N:` a match, `N-` context, `--` between groups.
fn query(lines: &[&str], pattern: &str, max_matches: usize) -> Result<ToolOutput, ToolError> {
    if pattern.is_empty() {
        return Err(ToolError::model("mode `query` needs `query`, a regex such as \"error|panic\""));
    }
    let re = Regex::new(pattern).map_err(|e| ToolError::model(format!("invalid regex in `query`: {e}")))?;
    let matched: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| re.is_match(l)).map(|(i, _)| i).collect();
    let total_matches = matched.len();
    let mut out = String::new();
    let mut shown = 0;
    let mut printed_to = 0usize; // exclusive end of the last printed window
    for &m in &matched {
        if shown == max_matches || out.len() > MAX_OUTPUT_BYTES {
            break;
        }
        let from = m.saturating_sub(CONTEXT_LINES).max(printed_to);
        if shown > 0 && from > printed_to {
            out.push_str("--\n");
        }
        let to = (m + CONTEXT_LINES + 1).min(lines.len());
        for (i, line) in lines.iter().enumerate().take(to).skip(from) {
            numbered(&mut out, i, if re.is_match(line) { ':' } else { '-' }, line);
        }
        printed_to = printed_to.max(to);
        shown += 1;
    }
    if total_matches == 0 {
        out.push_str(&format!("no line matches /{pattern}/ ({} lines searched)\n", lines.len()));
    } else if shown < total_matches {
        let next = matched.get(shown).map(|i| i + 1).unwrap_or(0);
        out.push_str(&format!(
            "… {} more matching lines (next at line {next}); raise `n` or narrow the regex\n",
            total_matches - shown
        ));
    }
    Ok(ToolOutput::text(out).with_meta("matches", total_matches).with_meta("shown_matches", shown))
}

#[cfg(test)]
#[path = "retrieve_tool_result_tests.rs"]
mod tests;
