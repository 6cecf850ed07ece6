//! `read_file`: a text file with line numbers, a window of it, or a PDF's text.

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::util::{io_error, looks_binary, which};

const DEFAULT_LIMIT: usize = 2000;
const MAX_LINE_CHARS: usize = 2000;
/// Whole files are read into memory; past this, a search is the better tool.
const MAX_FILE_BYTES: u64 = 64 << 20;
const PDF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

pub struct ReadFile;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileInput {
    /// File path, relative to the workspace root.
    pub path: String,
    /// First line to return, 1-based (default 1).
    #[serde(default)]
    pub offset: Option<usize>,
    /// Maximum number of lines (default 2000).
    #[serde(default)]
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

    fn description(&self) -> String {
        "Read a file with line numbers; offset/limit for a window. PDFs: text extracted, pages selects a range.".into()
    }

    async fn run(&self, input: ReadFileInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = ctx.workspace.resolve(&input.path)?;
        let shown = ctx.workspace.display(&path);
        if path.is_dir() {
            return Err(ToolError::model(format!("`{shown}` is a directory; use list_dir")));
        }
        let meta = tokio::fs::metadata(&path).await.map_err(|e| io_error("read", &shown, &e))?;
        if !meta.is_file() {
            // A FIFO or device would block or never end.
            return Err(ToolError::model(format!("`{shown}` is not a regular file (a pipe, socket or device)")));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(ToolError::model(format!(
                "`{shown}` is {} MiB, over the {} MiB read_file limit; use grep_files to find the part you need",
                meta.len() >> 20,
                MAX_FILE_BYTES >> 20
            )));
        }
        let is_pdf = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("pdf"));
        let text = if is_pdf {
            pdf_text(&path, &shown, input.pages.as_deref()).await?
        } else {
            if input.pages.is_some() {
                return Err(ToolError::model("`pages` applies to PDF files only; use offset/limit"));
            }
            let bytes = tokio::fs::read(&path).await.map_err(|e| io_error("read", &shown, &e))?;
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

/// Extracts text with `pdftotext` (poppler), optionally limited to pages.
async fn pdf_text(path: &std::path::Path, shown: &str, pages: Option<&str>) -> Result<String, ToolError> {
    let Some(program) = which("pdftotext") else {
        return Err(ToolError::model(format!(
            "`{shown}` is a PDF and `pdftotext` (poppler-utils) is not installed; install it to read PDFs"
        )));
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.arg("-layout");
    if let Some(pages) = pages {
        let (first, last) = parse_pages(pages)?;
        cmd.args(["-f", &first.to_string(), "-l", &last.to_string()]);
    }
    cmd.arg(path).arg("-").kill_on_drop(true);
    let output = tokio::time::timeout(PDF_TIMEOUT, cmd.output())
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
