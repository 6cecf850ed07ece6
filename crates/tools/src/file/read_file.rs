//! `read_file`: a text file with line numbers, a window of it, a PDF's text,
//! or an image (PNG, JPEG, GIF, WebP) as an MCP image block, which a
//! vision-capable model is shown and any other reader sees as a one-line stand-in.

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::{Capabilities, Domain, ReadError, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::util::{io_error, looks_binary, which};

const DEFAULT_LIMIT: usize = 2000;
const MAX_LINE_CHARS: usize = 2000;
/// Whole files are read into memory; past this, a search is the better tool.
const MAX_FILE_BYTES: u64 = 64 << 20;
const PDF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
/// Anthropic's per-image limit, the strictest of the providers'; larger images
/// are described, not sent.
const MAX_IMAGE_BYTES: usize = 5 << 20;

pub struct ReadFile;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileInput {
    /// File path, relative to the workspace root.
    pub path: String,
    /// First line to return, 1-based (default 1).
    #[serde(default)]
    // The schema says what `run` refuses: a model whose grammar follows it
    // cannot send 0, and one that does is told by the schema check.
    #[schemars(range(min = 1))]
    pub offset: Option<usize>,
    /// Maximum number of lines (default 2000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
    /// PDF only: page range such as "3" or "2-5".
    #[serde(default)]
    pub pages: Option<String>,
}

impl Tool for ReadFile {
    type Input = ReadFileInput;
    const NAME: &'static str = "read_file";
    const DOMAIN: Domain = Domain::File;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    // Images come back as images too; the description does not say so because
    // it is part of the first-turn head, whose bytes are pinned across releases.
    fn description(&self) -> String {
        "Read a file with line numbers; offset/limit for a window. PDFs: text extracted, pages selects a range.".into()
    }

    async fn run(&self, input: ReadFileInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = ctx.workspace.resolve(&input.path)?;
        let shown = ctx.workspace.display(&path);
        crate::file::secret_read::guard(ctx, &path, &shown).await?;
        let is_pdf = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("pdf"));
        if !is_pdf && input.pages.is_some() {
            return Err(ToolError::model("`pages` applies to PDF files only; use offset/limit"));
        }
        // Opened beneath the root (never by path string) and checked on the open
        // descriptor, so a symlink or FIFO swapped in after `resolve` is refused.
        let ws = ctx.workspace.clone();
        let read_path = path.clone();
        let bytes = tokio::task::spawn_blocking(move || ws.read_regular(&read_path, MAX_FILE_BYTES))
            .await
            .map_err(|e| ToolError::Fatal(anyhow::anyhow!("read_file task panicked: {e}")))?
            .map_err(|e| read_error(e, &shown))?;
        if let Some(mime) = image_type(&bytes) {
            if input.offset.is_some() || input.limit.is_some() {
                return Err(ToolError::model(format!("`{shown}` is an image ({mime}); offset/limit apply to text")));
            }
            return Ok(image_output(&bytes, mime, shown));
        }
        let text = if is_pdf {
            pdf_text(ctx, &bytes, &shown, input.pages.as_deref()).await?
        } else {
            if looks_binary(&bytes) {
                return Err(ToolError::model(format!("`{shown}` is a binary file ({} bytes); not shown", bytes.len())));
            }
            String::from_utf8_lossy(&bytes).into_owned()
        };

        let offset = input.offset.unwrap_or(1);
        if offset == 0 {
            return Err(ToolError::model("`offset` is 1-based; use 1 for the first line"));
        }
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT);
        if limit == 0 {
            return Err(ToolError::model("`limit` must be at least 1"));
        }
        let total = text.lines().count();
        if offset > total.max(1) {
            return Err(ToolError::model(format!("`offset` {offset} is past the end of `{shown}` ({total} lines)")));
        }
        let mut out = String::new();
        let mut shown_lines = 0;
        for (i, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
            let line = if line.chars().count() > MAX_LINE_CHARS {
                let cut: String = line.chars().take(MAX_LINE_CHARS).collect();
                format!("{cut}… [line truncated]")
            } else {
                line.to_string()
            };
            out.push_str(&format!("{:>6}\t{}\n", i + 1, line));
            shown_lines += 1;
        }
        let last = offset + shown_lines - usize::from(shown_lines > 0);
        let truncated = last < total;
        if truncated {
            out.push_str(&format!("… {} more lines; continue with offset={}\n", total - last, last + 1));
        }
        Ok(ToolOutput::text(out)
            .with_meta("path", shown)
            .with_meta("total_lines", total)
            .with_meta("truncated", truncated))
    }
}

/// The image type from the file's first bytes (never from its name: a
/// `.png` that is text is read as text).
fn image_type(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, ..] => Some("image/png"),
        [0xFF, 0xD8, 0xFF, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Some("image/gif"),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Some("image/webp"),
        _ => None,
    }
}

/// PNG and GIF keep their size at a fixed place in the header.
fn image_size(bytes: &[u8], mime: &str) -> Option<(u32, u32)> {
    match mime {
        "image/png" if bytes.len() >= 24 => Some((
            u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]),
            u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]),
        )),
        "image/gif" if bytes.len() >= 10 => Some((
            u32::from(u16::from_le_bytes([bytes[6], bytes[7]])),
            u32::from(u16::from_le_bytes([bytes[8], bytes[9]])),
        )),
        _ => None,
    }
}

fn image_output(bytes: &[u8], mime: &str, shown: String) -> ToolOutput {
    use base64::Engine as _;
    let size = image_size(bytes, mime).map(|(w, h)| format!(", {w}x{h}")).unwrap_or_default();
    let line = format!("`{shown}`: {mime}, {} bytes{size}", bytes.len());
    if bytes.len() > MAX_IMAGE_BYTES {
        return ToolOutput::text(format!(
            "{line}; over the {} MiB image limit, so not sent to the model",
            MAX_IMAGE_BYTES >> 20
        ))
        .with_meta("path", shown);
    }
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    ToolOutput::from_blocks(vec![
        serde_json::json!({"type": "text", "text": line}),
        serde_json::json!({"type": "image", "data": data, "mimeType": mime}),
    ])
    .with_meta("path", shown)
    .with_meta("mime_type", mime)
}

/// The model-facing message for a refused read.
pub(crate) fn read_error(err: ReadError, shown: &str) -> ToolError {
    match err {
        ReadError::Directory => ToolError::model(format!("`{shown}` is a directory; use list_dir")),
        // A FIFO or device would block or never end.
        ReadError::NotRegular => {
            ToolError::model(format!("`{shown}` is not a regular file (a pipe, socket or device)"))
        }
        ReadError::TooLarge(len) => ToolError::model(format!(
            "`{shown}` is {} MiB, over the {} MiB read_file limit; use grep_files to find the part you need",
            len >> 20,
            MAX_FILE_BYTES >> 20
        )),
        ReadError::Io(e) => io_error("read", shown, &e),
    }
}

/// Extracts text with `pdftotext` (poppler), optionally limited to pages. The
/// bytes (already read beneath the root) go in on stdin, so pdftotext never
/// opens a path that could have changed. Like every process a tool starts, it
/// passes the command gate and runs in the sandbox with a scrubbed
/// environment: a PDF is untrusted input to a large C parser. It writes only
/// to its stdout, so nothing of the workspace is writable to it.
async fn pdf_text(ctx: &ToolContext, bytes: &[u8], shown: &str, pages: Option<&str>) -> Result<String, ToolError> {
    let Some(program) = which("pdftotext") else {
        return Err(ToolError::model(format!(
            "`{shown}` is a PDF and `pdftotext` (poppler-utils) is not installed; install it to read PDFs"
        )));
    };
    let request = CommandRequest::tool_argv(&[program.display().to_string()]);
    let grant = crate::process::authorize(ctx, &request).await?;
    let launch = crate::process::Launch::with_roots(ctx, grant, Vec::new())?;
    let mut cmd = tokio::process::Command::new(program);
    cmd.arg("-layout");
    if let Some(pages) = pages {
        let (first, last) = parse_pages(pages)?;
        cmd.args(["-f", &first.to_string(), "-l", &last.to_string()]);
    }
    cmd.arg("-").arg("-").kill_on_drop(true);
    cmd.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let running = launch.prepare(&mut cmd).map_err(|e| io_error("run pdftotext on", shown, &e))?;
    let run = async {
        use tokio::io::AsyncWriteExt;
        let mut child = cmd.spawn()?;
        running.started(child.id());
        if let Some(mut stdin) = child.stdin.take() {
            // pdftotext may stop reading early on a broken PDF; its exit status says why.
            let _ = stdin.write_all(bytes).await;
        }
        child.wait_with_output().await
    };
    let output = tokio::time::timeout(PDF_TIMEOUT, run)
        .await
        .map_err(|_| {
            ToolError::model(format!("pdftotext took over {} s on `{shown}` and was stopped", PDF_TIMEOUT.as_secs()))
        })?
        .map_err(|e| io_error("run pdftotext on", shown, &e))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(ToolError::model(format!("pdftotext failed on `{shown}`: {}", stderr.trim())));
    }
    Ok(String::from_utf8_lossy(&output.stdout).replace('\u{c}', "\n"))
}

fn parse_pages(spec: &str) -> Result<(u32, u32), ToolError> {
    let bad = || ToolError::model(format!("`pages` must look like \"3\" or \"2-5\" (1-based), got \"{spec}\""));
    let (a, b) = match spec.split_once('-') {
        Some((a, b)) => (a.trim(), b.trim()),
        None => (spec.trim(), spec.trim()),
    };
    let first: u32 = a.parse().map_err(|_| bad())?;
    let last: u32 = b.parse().map_err(|_| bad())?;
    if first == 0 || last < first {
        return Err(bad());
    }
    Ok((first, last))
}

#[cfg(test)]
#[path = "read_file_tests.rs"]
mod tests;
