//! `file_search`: fuzzy file-name search over the gitignore-aware file list.
//!
//! Scoring is `nucleo-matcher` with its path configuration (bonuses after `/`),
//! the same matcher Helix's file picker uses. Each walker thread scores with its
//! own matcher; ranking afterwards is by score, then path, so it is deterministic.

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput, Workspace};

use crate::search::walk::{WalkedFile, walk};
use crate::util::io_error;

const DEFAULT_LIMIT: usize = 20;
const MAX_LIMIT: usize = 500;

pub struct FileSearch;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileSearchInput {
    /// Part of a file name or path, fuzzy ("gfile" finds grep_files.rs); spaces separate terms.
    pub query: String,
    /// Directory to search, relative to the workspace root (default: the root).
    #[serde(default)]
    pub path: Option<String>,
    /// Most results (default 20).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
}

impl Tool for FileSearch {
    type Input = FileSearchInput;
    const NAME: &'static str = "file_search";
    const DOMAIN: Domain = Domain::Search;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Find files by fuzzy name match (gitignore-aware); best matches first.".into()
    }

    async fn run(&self, input: FileSearchInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if input.query.trim().is_empty() {
            return Err(ToolError::model("`query` is empty; give part of a file name, e.g. \"main.rs\""));
        }
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT);
        if limit == 0 || limit > MAX_LIMIT {
            return Err(ToolError::model(format!("`limit` must be between 1 and {MAX_LIMIT}, got {limit}")));
        }
        let target = ctx.workspace.resolve(input.path.as_deref().unwrap_or("."))?;
        let shown = ctx.workspace.display(&target);
        crate::file::secret_read::guard(ctx, &target, &shown).await?;
        match ctx.workspace.symlink_metadata(&target) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(ToolError::model(format!("`{shown}` is a file; `path` must be a directory"))),
            Err(e) => return Err(io_error("search", &shown, &e)),
        }
        let ws = ctx.workspace.clone();
        let query = input.query;
        let found = tokio::task::spawn_blocking(move || find(&ws, &target, &query).map(|f| (f, query)))
            .await
            .map_err(|e| ToolError::Fatal(anyhow::anyhow!("file_search worker failed: {e}")))?;
        let (found, query) = found?;

        let total = found.ranked.len();
        let mut out = String::new();
        for (_, path) in found.ranked.iter().take(limit) {
            out.push_str(path);
            out.push('\n');
        }
        if total == 0 {
            out = format!("No file names match \"{query}\" in `{shown}` ({} files searched)\n", found.scanned);
        } else if total > limit {
            out.push_str(&format!("… {} more matches; refine the query or raise limit\n", total - limit));
        }
        Ok(ToolOutput::text(out)
            .with_meta("path", shown)
            .with_meta("matches", total)
            .with_meta("files_searched", found.scanned)
            .with_meta("truncated", total > limit))
    }
}

struct Found {
    /// (score, path relative to the root), best first.
    ranked: Vec<(u32, String)>,
    scanned: u64,
}

fn find(ws: &Workspace, target: &std::path::Path, query: &str) -> Result<Found, ToolError> {
    let root = ws.root();
    // Smart case: an upper-case letter in the query makes the match case-sensitive.
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let results: Mutex<Batch> = Mutex::new(Batch::default());
    walk(ws, target, None, || {
        let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
        let mut chars = Vec::new();
        let mut local = LocalBatch { batch: Batch::default(), shared: &results };
        let pattern = &pattern;
        move |file: &WalkedFile<'_>| {
            local.batch.scanned += 1;
            let rel = file.path().strip_prefix(root).unwrap_or(file.path());
            let rel = rel.to_string_lossy();
            if let Some(score) = pattern.score(Utf32Str::new(&rel, &mut chars), &mut matcher) {
                local.batch.ranked.push((score, rel.replace('\\', "/")));
            }
        }
    })?;
    let Batch { mut ranked, scanned } = results.into_inner();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    Ok(Found { ranked, scanned })
}

#[derive(Default)]
struct Batch {
    ranked: Vec<(u32, String)>,
    scanned: u64,
}

/// One walker thread's results, merged into the shared list when the thread's
/// visitor is dropped at the end of the walk (the visitor has no other end hook),
/// so threads never contend on a lock per file.
struct LocalBatch<'a> {
    batch: Batch,
    shared: &'a Mutex<Batch>,
}

impl Drop for LocalBatch<'_> {
    fn drop(&mut self) {
        let mut shared = self.shared.lock();
        shared.ranked.append(&mut self.batch.ranked);
        shared.scanned += self.batch.scanned;
    }
}

#[cfg(test)]
#[path = "file_search_tests.rs"]
mod tests;
