//! `list_dir`: a gitignore-aware, depth-limited tree of a directory.
//!
//! The walk never follows symlinks (a link is shown with its target, not entered),
//! so a listing can neither leave the workspace nor loop. Output order is the
//! walker's sorted pre-order, which makes it byte-identical from run to run and
//! makes truncation cut at the same place every time.

use std::path::{Path, PathBuf};

use ignore::{DirEntry, WalkBuilder};
use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput, Workspace};

use crate::util::{io_error, stays_inside};

const DEFAULT_DEPTH: usize = 1;
const MAX_DEPTH: usize = 5;
/// Entries shown before the listing is cut; keeps one call's output bounded.
const MAX_ENTRIES: usize = 500;
/// How far past the cut we keep counting, so the note can say how much was left.
const COUNT_BEYOND: usize = 20_000;

pub struct ListDir;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirInput {
    /// Directory, relative to the workspace root (default ".").
    pub path: Option<String>,
    /// Levels to descend, 1-5 (default 1).
    #[schemars(range(min = 1))]
    pub depth: Option<usize>,
    /// Include dotfiles (default false).
    pub include_hidden: Option<bool>,
}

impl Tool for ListDir {
    type Input = ListDirInput;
    const NAME: &'static str = "list_dir";
    const DOMAIN: Domain = Domain::File;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "List a directory as a tree (dirs end in /), skipping gitignored files; depth to descend.".into()
    }

    async fn run(&self, input: ListDirInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw = input.path.as_deref().unwrap_or(".");
        let dir = ctx.workspace.resolve(raw)?;
        let shown = ctx.workspace.display(&dir);
        crate::file::secret_read::guard(ctx, &dir, &shown).await?;
        let depth = input.depth.unwrap_or(DEFAULT_DEPTH);
        if depth == 0 || depth > MAX_DEPTH {
            return Err(ToolError::model(format!("`depth` must be between 1 and {MAX_DEPTH}, got {depth}")));
        }
        let meta = tokio::fs::metadata(&dir).await.map_err(|e| io_error("list", &shown, &e))?;
        if !meta.is_dir() {
            return Err(ToolError::model(format!("`{shown}` is a file, not a directory; use read_file")));
        }
        let include_hidden = input.include_hidden.unwrap_or(false);
        let ws = ctx.workspace.clone();
        let listing = tokio::task::spawn_blocking(move || walk_listing(&ws, &dir, depth, include_hidden))
            .await
            .map_err(|e| ToolError::Fatal(anyhow::anyhow!("list_dir walker panicked: {e}")))?;

        let mut out = format!("{}/\n", shown.trim_end_matches('/'));
        for line in &listing.lines {
            out.push_str(line);
            out.push('\n');
        }
        if listing.lines.is_empty() {
            out.push_str("  (empty");
            out.push_str(if include_hidden { ")\n" } else { "; hidden and gitignored entries are not shown)\n" });
        }
        let truncated = listing.total > listing.lines.len();
        if truncated {
            let more = listing.total - listing.lines.len();
            let plus = if listing.count_capped { "+" } else { "" };
            out.push_str(&format!(
                "… listing cut at {MAX_ENTRIES} entries ({more}{plus} more); list a subdirectory or use a smaller depth\n"
            ));
        }
        if listing.unreadable > 0 {
            out.push_str(&format!("({} entries could not be read)\n", listing.unreadable));
        }
        Ok(ToolOutput::text(out)
            .with_meta("path", shown)
            .with_meta("entries", listing.lines.len())
            .with_meta("truncated", truncated))
    }
}

struct Listing {
    lines: Vec<String>,
    /// Entries seen in total (shown or not), up to the counting cap.
    total: usize,
    count_capped: bool,
    unreadable: usize,
}

fn walk_listing(ws: &Workspace, dir: &Path, depth: usize, include_hidden: bool) -> Listing {
    let mut listing = Listing { lines: Vec::new(), total: 0, count_capped: false, unreadable: 0 };
    for item in walker(ws, dir, include_hidden, Some(depth)).build() {
        let entry = match item {
            Ok(entry) => entry,
            Err(_) => {
                listing.unreadable += 1;
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        listing.total += 1;
        if listing.lines.len() < MAX_ENTRIES {
            listing.lines.push(format!("{}{}", "  ".repeat(entry.depth()), entry_label(ws, &entry)));
        } else if listing.total >= MAX_ENTRIES + COUNT_BEYOND {
            listing.count_capped = true;
            break;
        }
    }
    listing
}

/// `name/` for a directory, `name -> target` for a symlink, `name` otherwise.
fn entry_label(ws: &Workspace, entry: &DirEntry) -> String {
    let name = entry.file_name().to_string_lossy();
    match entry.file_type() {
        Some(t) if t.is_dir() => format!("{name}/"),
        Some(t) if t.is_symlink() => match ws.read_link(entry.path()) {
            Ok(target) => format!("{name} -> {}", target.to_string_lossy()),
            Err(_) => format!("{name} -> ?"),
        },
        _ => name.into_owned(),
    }
}

/// The walker every structure tool shares: `.gitignore`/`.ignore` honoured with or
/// without a git repository, symlinks never followed, children sorted by name, and
/// the inside of `.git` never entered even when dotfiles are shown, and nothing
/// reported or entered that is not inside the workspace ([`stays_inside`]).
pub(crate) fn walker(ws: &Workspace, root: &Path, include_hidden: bool, max_depth: Option<usize>) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    let ws = ws.clone();
    builder
        .hidden(!include_hidden)
        .require_git(false)
        .follow_links(false)
        .max_depth(max_depth)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| {
            entry.path().parent().is_none_or(|p| p.file_name() != Some(".git".as_ref())) && stays_inside(&ws, entry)
        });
    builder
}

/// `path` relative to the walk's `root` (the root itself becomes the empty path).
pub(crate) fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
#[path = "list_dir_tests.rs"]
mod tests;
