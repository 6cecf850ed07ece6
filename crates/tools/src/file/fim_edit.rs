//! `fim_edit`: fill a marked region of a file with the model's fill-in-the-middle
//! completion (prefix + suffix → middle).
//!
//! The model names the region, never writes it: either an exact `marker` string
//! already in the file (a `TODO: fill` line, a `<FILL>` placeholder) or a line
//! range. Everything before the region is the prompt, everything after it the
//! suffix; the provider's FIM endpoint (DeepSeek's `/beta/completions`) returns
//! the middle. Confinement, the write risk and the atomic write are those of
//! `edit_file`; the completion comes through the context's [`FillInMiddle`],
//! which only a host running a model provides.
//!
//! [`FillInMiddle`]: quiver_engine::FillInMiddle

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{
    Capabilities, Domain, InputAlias, ReadError, Risk, Tool, ToolContext, ToolError, ToolOutput, Unit,
};

use crate::file::edit_file::diff;
use crate::file::write_file::write_atomically;
use crate::util::{io_error, looks_binary};

const DEFAULT_MAX_TOKENS: u32 = 512;
const MAX_TOKENS_CAP: u32 = 4096;
/// Larger files would send a prompt no FIM model takes (and cost a fortune).
const MAX_FILE_BYTES: usize = 512 * 1024;

pub struct FimEdit;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FimEditInput {
    /// File path, relative to the workspace root.
    pub path: String,
    /// Exact text in the file to replace with the completion (must occur once).
    pub marker: Option<String>,
    /// First line of the region to replace (1-based), with limit; instead of marker.
    #[schemars(range(min = 1))]
    pub offset: Option<usize>,
    /// Lines in the region.
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
    /// Upper bound on the completion's tokens (default 512, at most 4096).
    #[schemars(range(min = 1))]
    pub max_tokens: Option<u32>,
}

/// The byte span of the region to fill.
struct Region {
    start: usize,
    end: usize,
    /// 1-based line where the region starts, for the message.
    line: usize,
    /// The replaced text ended a line; the fill keeps the line break.
    ends_line: bool,
}

impl Tool for FimEdit {
    type Input = FimEditInput;
    const NAME: &'static str = "fim_edit";
    const DOMAIN: Domain = Domain::File;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::WRITES_FILES;
    // Before one vocabulary the region was `start_line..=end_line` (1-based,
    // inclusive), as recorded calls say.
    const INPUT_ALIASES: &'static [InputAlias] = &[
        InputAlias::rename("start_line", "offset"),
        InputAlias::converted("end_line", "limit", Unit::InclusiveEnd { start: "start_line" }),
    ];

    fn description(&self) -> String {
        "Fill a region of a file (an exact marker string, or limit lines from offset) with the model's \
         fill-in-the-middle completion from the code around it; returns a diff."
            .into()
    }

    async fn run(&self, input: FimEditInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = ctx.workspace.resolve(&input.path)?;
        let shown = ctx.workspace.display(&path);
        crate::file::protected_write::guard(ctx, &path, &shown).await?;
        let max_tokens = input.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
        if max_tokens == 0 || max_tokens > MAX_TOKENS_CAP {
            return Err(ToolError::model(format!("`max_tokens` must be between 1 and {MAX_TOKENS_CAP}")));
        }
        // Checked before reading anything: without a FIM model nothing can succeed.
        let Some(fim) = ctx.fim.clone() else {
            return Err(ToolError::model(
                "fim_edit needs a model provider with a fill-in-the-middle endpoint (DeepSeek's /beta/completions), \
                 and this session has none; write the region yourself with edit_file",
            ));
        };
        // Beneath the root, checked on the descriptor (as edit_file): a directory
        // swapped for a symlink cannot lead outside, and a FIFO is refused, never waited on.
        let ws = ctx.workspace.clone();
        let read_path = path.clone();
        let bytes = tokio::task::spawn_blocking(move || ws.read_regular(&read_path, MAX_FILE_BYTES as u64))
            .await
            .map_err(|e| ToolError::Fatal(anyhow::anyhow!("fim_edit read task panicked: {e}")))?
            .map_err(|e| match e {
                ReadError::NotRegular => ToolError::model(format!(
                    "`{shown}` is not a regular file (a pipe, socket or device); fim_edit edits regular files only"
                )),
                ReadError::Directory => {
                    ToolError::model(format!("`{shown}` is a directory; fim_edit fills a region of one file"))
                }
                ReadError::TooLarge(len) => ToolError::model(format!(
                    "`{shown}` is {len} bytes; fim_edit sends the whole file as context and takes files up to {MAX_FILE_BYTES} bytes"
                )),
                ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    ToolError::model(format!("`{shown}` does not exist; create it with write_file"))
                }
                ReadError::Io(e) => io_error("read", &shown, &e),
            })?;
        if bytes.len() > MAX_FILE_BYTES {
            return Err(ToolError::model(format!(
                "`{shown}` is {} bytes; fim_edit sends the whole file as context and takes files up to {MAX_FILE_BYTES} bytes",
                bytes.len()
            )));
        }
        if looks_binary(&bytes) {
            return Err(ToolError::model(format!("`{shown}` is a binary file; fim_edit edits text only")));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| ToolError::model(format!("`{shown}` is not valid UTF-8; fim_edit edits UTF-8 text only")))?;
        let region = region(&text, &input, &shown)?;
        let (prefix, suffix) = (&text[..region.start], &text[region.end..]);

        let middle = fim.fill(prefix, suffix, max_tokens).await.map_err(|e| {
            ToolError::model(format!("the fill-in-the-middle request failed ({e}); `{shown}` is unchanged"))
        })?;
        let middle = shape_middle(&middle, &text, &region);
        let updated = format!("{prefix}{middle}{suffix}");
        if updated == text {
            return Err(ToolError::model(format!(
                "the completion left `{shown}` unchanged (it returned the region's current text)"
            )));
        }
        let rendered = diff(&shown, &text, &updated);
        write_atomically(&ctx.workspace, path, updated.into_bytes(), &shown).await?;
        let mut out =
            format!("Filled `{shown}` at line {} with {} bytes from {}\n", region.line, middle.len(), fim.provider());
        out.push_str(&rendered);
        Ok(ToolOutput::text(out)
            .with_meta("path", shown)
            .with_meta("line", region.line)
            .with_meta("filled_bytes", middle.len()))
    }
}

/// Where to fill, from exactly one of `marker` or the line range.
fn region(text: &str, input: &FimEditInput, shown: &str) -> Result<Region, ToolError> {
    match (&input.marker, input.offset, input.limit) {
        (Some(marker), None, None) => marker_region(text, marker, shown),
        (None, Some(offset), Some(limit)) => line_region(text, offset, limit, shown),
        (None, Some(_), None) | (None, None, Some(_)) => {
            Err(ToolError::model("give both `offset` (first line, 1-based) and `limit` (lines)"))
        }
        (None, None, None) => {
            Err(ToolError::model("say where to fill: `marker` (exact text in the file) or `offset` and `limit`"))
        }
        (Some(_), _, _) => Err(ToolError::model("give either `marker` or a line range, not both")),
    }
}

fn marker_region(text: &str, marker: &str, shown: &str) -> Result<Region, ToolError> {
    if marker.is_empty() {
        return Err(ToolError::model("`marker` is empty; quote the placeholder text to replace"));
    }
    let starts: Vec<usize> = text.match_indices(marker).map(|(i, _)| i).collect();
    let line_of = |at: usize| text[..at].matches('\n').count() + 1;
    match starts.as_slice() {
        [] => {
            Err(ToolError::model(format!("`marker` was not found in `{shown}`; quote it exactly, or use offset/limit")))
        }
        [at] => {
            Ok(Region { start: *at, end: at + marker.len(), line: line_of(*at), ends_line: marker.ends_with('\n') })
        }
        many => {
            let lines: Vec<String> = many.iter().take(20).map(|&at| line_of(at).to_string()).collect();
            Err(ToolError::model(format!(
                "`marker` appears {} times in `{shown}` (at lines {}); quote a unique one",
                many.len(),
                lines.join(", ")
            )))
        }
    }
}

fn line_region(text: &str, start: usize, limit: usize, shown: &str) -> Result<Region, ToolError> {
    let end = (start + limit).saturating_sub(1);
    // Byte offset where each line starts, plus the end of the text.
    let mut starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    if starts.last() == Some(&text.len()) && !text.is_empty() {
        starts.pop();
    }
    let lines = starts.len();
    if start == 0 || end < start || end > lines {
        return Err(ToolError::model(format!(
            "lines {start}..{end} (`offset` {start}, `limit` {limit}) are not within `{shown}` (lines 1..{lines}; `offset` is 1-based)"
        )));
    }
    let from = starts[start - 1];
    let to = starts.get(end).copied().unwrap_or(text.len());
    Ok(Region { start: from, end: to, line: start, ends_line: text[from..to].ends_with('\n') })
}

/// The completion, fitted to the file: a replaced whole line keeps its line
/// break, and a CRLF file stays CRLF.
fn shape_middle(middle: &str, text: &str, region: &Region) -> String {
    let mut middle = middle.replace("\r\n", "\n");
    if region.ends_line && !middle.ends_with('\n') {
        middle.push('\n');
    }
    let crlf = text.matches("\r\n").count() * 2 > text.matches('\n').count();
    if crlf { middle.replace('\n', "\r\n") } else { middle }
}

#[cfg(test)]
#[path = "fim_edit_tests.rs"]
mod tests;
