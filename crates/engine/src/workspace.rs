//! The workspace root and the one gate every file tool passes through: a path the
//! model gives is resolved inside the root or refused, never silently clamped.

use std::io;
use std::path::{Component, Path, PathBuf};

use crate::result::ToolError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// `root` must exist; it is canonicalized so later prefix checks are exact.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = root.as_ref().canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(io::ErrorKind::NotADirectory, format!("{} is not a directory", root.display())));
        }
        Ok(Workspace { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a model-supplied path to an absolute path inside the workspace.
    ///
    /// Relative paths are taken from the root; absolute paths are accepted only when
    /// they already lie inside it. `..` is resolved lexically and may not climb out.
    /// Then the deepest existing ancestor is canonicalized, so a symlink anywhere on
    /// the way that points outside is refused, and a symlink loop is reported as such.
    /// The target itself need not exist (tools that create files use this too).
    pub fn resolve(&self, raw: &str) -> Result<PathBuf, ToolError> {
        if raw.trim().is_empty() {
            return Err(ToolError::model("path is empty"));
        }
        if raw.contains('\0') {
            return Err(ToolError::model("path contains a NUL byte"));
        }
        let given = Path::new(raw);
        let joined = if given.is_absolute() { given.to_path_buf() } else { self.root.join(given) };
        let lexical = normalize(&joined).ok_or_else(|| self.escape_error(raw))?;
        if !lexical.starts_with(&self.root) {
            return Err(self.escape_error(raw));
        }
        let physical = canonicalize_existing_prefix(&lexical).map_err(|e| {
            if e.raw_os_error() == Some(40) || e.to_string().contains("symbolic links") {
                ToolError::model(format!("path `{raw}` goes through a symlink loop"))
            } else {
                ToolError::model(format!("cannot resolve path `{raw}`: {e}"))
            }
        })?;
        if !physical.starts_with(&self.root) {
            return Err(ToolError::model(format!(
                "path `{raw}` resolves through a symlink to {} which is outside the workspace root {}",
                physical.display(),
                self.root.display()
            )));
        }
        Ok(physical)
    }

    /// The path relative to the root, with `/` separators, for showing to a model.
    pub fn display(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        let s = rel.to_string_lossy().replace('\\', "/");
        if s.is_empty() { ".".to_string() } else { s }
    }

    fn escape_error(&self, raw: &str) -> ToolError {
        ToolError::model(format!(
            "path `{raw}` is outside the workspace root {}; use a path relative to the root",
            self.root.display()
        ))
    }
}

/// Lexical normalization: drops `.`, applies `..`. `None` if `..` climbs past `/`.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(c) => out.push(c),
        }
    }
    Some(out)
}

/// Canonicalizes the longest existing prefix of `path` and re-appends the rest.
/// A dangling symlink as the last component is followed as far as it resolves, so
/// writing through it cannot land outside the root either.
fn canonicalize_existing_prefix(path: &Path) -> io::Result<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(canon) => {
                let mut out = canon;
                for part in rest.iter().rev() {
                    out.push(part);
                }
                return Ok(out);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A dangling symlink: resolve its target lexically against its parent.
                if let Ok(target) = std::fs::read_link(&existing) {
                    let parent = existing.parent().map(Path::to_path_buf).unwrap_or_default();
                    let joined = if target.is_absolute() { target } else { parent.join(target) };
                    let resolved = normalize(&joined).ok_or_else(|| io::Error::other("symlink climbs past /"))?;
                    if rest.len() > 64 {
                        return Err(io::Error::other("too many levels of symbolic links"));
                    }
                    existing = resolved;
                    continue;
                }
                match (existing.file_name().map(|n| n.to_os_string()), existing.parent()) {
                    (Some(name), Some(parent)) => {
                        rest.push(name);
                        existing = parent.to_path_buf();
                    }
                    _ => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
