//! The user's own config file (`$QUIVER_CONFIG_DIR/config.toml`, else
//! `~/.config/quiver/config.toml`), the one file quiver edits.
//!
//! Edits go through `toml_edit`, so every comment, blank line and key order
//! the user wrote stays as it was; only the server's own table changes. The
//! file is shared with the agent's settings (`[providers]`, `[sandbox]`, ...),
//! which are never touched. Before anything is written the new text is read
//! back with the reader quiver runs on (`config::parse_toml`): an edit never
//! turns a readable file into one quiver refuses. The write is atomic (a
//! temporary file beside the target, then a rename), keeps the file's mode
//! (new files: 0600, they may hold tokens), writes through a symlink to
//! where it points (dotfile repositories), and is abandoned if the file
//! changed since it was read.

use std::io::Write;
use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, TableLike, Value};

use super::error::ManageError;
use super::new_server::NewServer;
use crate::config::{self, McpConfig};

/// The table every server lives under.
const SERVERS: &str = "mcp_servers";

/// Whether [`UserConfig::add`] made a new server or replaced one (`--force`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    New,
    Replaced,
}

pub struct UserConfig {
    path: PathBuf,
    /// The text as read; `None` when the file does not exist yet.
    original: Option<String>,
    doc: DocumentMut,
}

impl UserConfig {
    /// Where the user's config is (the same rule `McpConfig` reads by).
    pub fn default_path() -> Result<PathBuf, ManageError> {
        config::user_config_dir().map(|d| d.join("config.toml")).ok_or(ManageError::NoConfigDir)
    }

    pub fn open_default() -> Result<Self, ManageError> {
        UserConfig::open(UserConfig::default_path()?)
    }

    /// Reads `path` (a missing file is an empty config). A file that is not
    /// TOML is an error with its line and column; it is never written.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, ManageError> {
        let path = path.into();
        let original = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(ManageError::io(&path, "cannot read", e)),
        };
        let text = original.as_deref().unwrap_or("");
        let doc = text.parse::<DocumentMut>().map_err(|e| syntax_error(&path, text, &e))?;
        Ok(UserConfig { path, original, doc })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The text as it would be written now.
    pub fn text(&self) -> String {
        self.doc.to_string()
    }

    /// The servers this file defines, in file order.
    pub fn server_names(&self) -> Vec<String> {
        self.servers().map(|t| t.iter().map(|(k, _)| k.to_string()).collect()).unwrap_or_default()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.servers().is_some_and(|t| t.contains_key(name))
    }

    /// What quiver would read from the text as it stands (the same reader
    /// and checks as at run time).
    pub fn config(&self) -> Result<McpConfig, ManageError> {
        read_config(&self.path, &self.text()).map_err(|e| ManageError::Invalid(e.to_string()))
    }

    /// Adds `server`; an existing one of that name only with `replace`, and
    /// then in its place, with the comments above its header kept.
    pub fn add(&mut self, server: &NewServer, replace: bool) -> Result<Added, ManageError> {
        if let Err(reason) = super::name::check(&server.name) {
            return Err(ManageError::InvalidName { name: server.name.clone(), reason });
        }
        let exists = self.contains(&server.name);
        if exists && !replace {
            return Err(ManageError::Exists { name: server.name.clone(), path: self.path.clone() });
        }
        let path = self.path.clone();
        let servers = self.servers_mut(&path)?;
        let item = if servers.is_inline() {
            Item::Value(Value::InlineTable(server.to_inline()))
        } else {
            let mut table = server.to_table();
            if let Some(old) = servers.table.get(&server.name).and_then(Item::as_table) {
                *table.decor_mut() = old.decor().clone();
                table.set_position(old.position());
            }
            Item::Table(table)
        };
        servers.table.insert(&server.name, item);
        Ok(if exists { Added::Replaced } else { Added::New })
    }

    /// Removes a server's table (with the comments directly above its header,
    /// which describe it).
    pub fn remove(&mut self, name: &str) -> Result<(), ManageError> {
        self.require(name)?;
        let path = self.path.clone();
        self.servers_mut(&path)?.table.remove(name);
        Ok(())
    }

    /// Sets `enabled`; whether anything changed. Disabling writes
    /// `enabled = false`; enabling removes that line again when it carries no
    /// comment (true is the default), else sets it to `true` in place.
    pub fn set_enabled(&mut self, name: &str, enabled: bool) -> Result<bool, ManageError> {
        self.require(name)?;
        let path = self.path.clone();
        let servers = self.servers_mut(&path)?;
        let Some(server) = servers.table.get_mut(name).and_then(Item::as_table_like_mut) else {
            return Err(ManageError::Invalid(format!(
                "{}: {SERVERS}.{name} is not a table; fix it by hand",
                path.display()
            )));
        };
        let commented = server.key("enabled").is_some_and(|k| has_comment(k.leaf_decor()))
            || server.get("enabled").and_then(Item::as_value).is_some_and(|v| has_comment(v.decor()));
        match server.get_mut("enabled") {
            None if enabled => Ok(false),
            None => {
                server.insert("enabled", toml_edit::value(false));
                Ok(true)
            }
            Some(item) => {
                if item.as_bool() == Some(enabled) {
                    return Ok(false);
                }
                if enabled && !commented {
                    server.remove("enabled");
                } else if let Some(v) = item.as_value_mut() {
                    let decor = v.decor().clone();
                    *v = Value::from(enabled);
                    *v.decor_mut() = decor;
                } else {
                    *item = toml_edit::value(enabled);
                }
                Ok(true)
            }
        }
    }

    /// The error for a name this file does not define: a project's server
    /// of that name (in `effective`) is named as such.
    pub fn not_here(&self, name: &str, effective: Option<&McpConfig>) -> ManageError {
        match effective.and_then(|c| c.servers.get(name)) {
            Some(server) if server.source != self.path => {
                ManageError::NotUsers { name: name.to_string(), file: server.source.clone(), user: self.path.clone() }
            }
            _ => ManageError::Unknown { name: name.to_string(), path: self.path.clone(), known: self.server_names() },
        }
    }

    /// Writes the file if anything changed (whether it did). The new text
    /// must read as a config, unless the file was already unreadable before
    /// (then the edit is how the user repairs it).
    pub fn save(&self) -> Result<bool, ManageError> {
        let text = self.text();
        if self.original.as_deref().unwrap_or("") == text {
            return Ok(false);
        }
        self.check_text(&text)?;
        write_atomic(&self.path, self.original.as_deref(), &text)?;
        Ok(true)
    }

    /// Whether [`Self::save`] would accept the text as it stands (a dry run).
    pub fn check(&self) -> Result<(), ManageError> {
        self.check_text(&self.text())
    }

    fn check_text(&self, text: &str) -> Result<(), ManageError> {
        if let Err(e) = read_config(&self.path, text) {
            let was_readable = self.original.as_deref().is_none_or(|t| read_config(&self.path, t).is_ok());
            if was_readable {
                return Err(ManageError::Invalid(e.to_string()));
            }
        }
        Ok(())
    }

    fn require(&self, name: &str) -> Result<(), ManageError> {
        if self.contains(name) { Ok(()) } else { Err(self.not_here(name, None)) }
    }

    fn servers(&self) -> Option<&dyn TableLike> {
        self.doc.get(SERVERS).and_then(Item::as_table_like)
    }

    /// The `mcp_servers` table, made (as `[mcp_servers.NAME]` headers only)
    /// when the file has none.
    fn servers_mut(&mut self, path: &Path) -> Result<Servers<'_>, ManageError> {
        let item = self.doc.entry(SERVERS).or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            Item::Table(t)
        });
        let inline = item.is_inline_table();
        match item.as_table_like_mut() {
            Some(table) => Ok(Servers { table, inline }),
            None => {
                Err(ManageError::Invalid(format!("{}: `{SERVERS}` is not a table; fix it by hand", path.display())))
            }
        }
    }
}

struct Servers<'a> {
    table: &'a mut dyn TableLike,
    inline: bool,
}

impl Servers<'_> {
    fn is_inline(&self) -> bool {
        self.inline
    }
}

fn has_comment(decor: &toml_edit::Decor) -> bool {
    let has = |raw: Option<&toml_edit::RawString>| raw.and_then(|r| r.as_str()).is_some_and(|s| s.contains('#'));
    has(decor.prefix()) || has(decor.suffix())
}

/// The servers `text` defines, read as quiver reads the user's file.
fn read_config(path: &Path, text: &str) -> Result<McpConfig, config::ConfigError> {
    let config = config::parse_toml(path, text)?;
    config.check_prefixes()?;
    Ok(config)
}

/// `path:line:column: message` for text `toml_edit` cannot read.
fn syntax_error(path: &Path, text: &str, e: &toml_edit::TomlError) -> ManageError {
    let at = e.span().map_or(0, |s| s.start).min(text.len());
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    ManageError::Syntax { path: path.to_path_buf(), line, column, message: e.message().trim().to_string() }
}

fn write_atomic(path: &Path, expected: Option<&str>, text: &str) -> Result<(), ManageError> {
    // A symlink is written through: replacing the link with a file would
    // cut a dotfiles checkout off from the config it manages.
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    create_private_dir(&dir)?;
    let permissions = match std::fs::metadata(&target) {
        Ok(meta) => Some(meta.permissions()),
        Err(_) => new_file_permissions(),
    };
    let io = |what: &str| {
        let target = target.clone();
        let what = what.to_string();
        move |e: std::io::Error| ManageError::io(&target, &what, e)
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".config.toml.")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(io("cannot create a temporary file beside it"))?;
    tmp.write_all(text.as_bytes()).map_err(io("cannot write"))?;
    if let Some(permissions) = permissions {
        tmp.as_file().set_permissions(permissions).map_err(io("cannot set permissions"))?;
    }
    tmp.as_file().sync_all().map_err(io("cannot sync"))?;
    // The last look before the rename: an edit made meanwhile (another
    // quiver, an editor) is not overwritten.
    let now = match std::fs::read_to_string(&target) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(ManageError::io(&target, "cannot read", e)),
    };
    if now.as_deref() != expected {
        return Err(ManageError::Changed { path: path.to_path_buf() });
    }
    tmp.persist(&target).map_err(|e| ManageError::io(&target, "cannot replace", e.error))?;
    // The rename itself survives a crash only once the directory is synced.
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// A new config file is the user's alone: it may come to hold tokens.
#[cfg(unix)]
fn new_file_permissions() -> Option<std::fs::Permissions> {
    Some(std::os::unix::fs::PermissionsExt::from_mode(0o600))
}

#[cfg(not(unix))]
fn new_file_permissions() -> Option<std::fs::Permissions> {
    None
}

fn create_private_dir(dir: &Path) -> Result<(), ManageError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| ManageError::io(dir, "cannot create the directory", e))
}

#[cfg(test)]
#[path = "user_file_tests.rs"]
mod tests;
