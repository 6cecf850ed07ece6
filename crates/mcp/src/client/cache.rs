//! The tool list each server reported last time, on disk, so `tool_search` can
//! find a server's tools before (and without) starting it.
//!
//! One file per server and transport: `<cache>/mcp/<server>-<hash>.json`, where
//! the hash covers what is launched (command, args, cwd, env or URL). Two
//! projects with a server of the same name but different commands do not
//! overwrite each other's lists, and editing a server's command starts afresh.
//! `<cache>` is `$QUIVER_CACHE_DIR`, else `~/.cache/quiver`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::{ServerConfig, Transport};
use quiver_engine::names::sanitize_server;

/// What quiver keeps of one downstream tool (MCP's own field names, so the
/// file reads like a `tools/list` answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// The server's `outputSchema` and `annotations`, verbatim: a gateway
    /// forwards them in `tools/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// The tool's `tools/list` entry exactly as the server wrote it, for a
    /// directly exposed server (the gateway lists it unchanged). Cached too:
    /// with a warm cache a client's first `tools/list` is answered before the
    /// server is up, and that list is the one most clients keep.
    #[serde(default, rename = "listedAs", skip_serializing_if = "Option::is_none", with = "entry_text")]
    pub verbatim: Option<std::sync::Arc<str>>,
}

/// A verbatim entry is kept in the cache file as a JSON string holding the
/// server's text, so its key order and number forms survive the round trip.
mod entry_text {
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(text: &Option<Arc<str>>, out: S) -> Result<S::Ok, S::Error> {
        match text {
            Some(text) => out.serialize_str(text),
            None => out.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(input: D) -> Result<Option<Arc<str>>, D::Error> {
        Ok(Option::<String>::deserialize(input)?.map(Arc::from))
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CacheFile {
    version: u32,
    server: String,
    fetched_at_unix: u64,
    tools: Vec<RemoteTool>,
}

const VERSION: u32 = 1;

/// Where the cache lives; one per manager.
#[derive(Debug, Clone)]
pub struct ToolCache {
    dir: Option<PathBuf>,
}

impl ToolCache {
    /// `$QUIVER_CACHE_DIR/mcp`, else the platform cache dir's `quiver/mcp`.
    pub fn from_env() -> Self {
        let root = match std::env::var_os("QUIVER_CACHE_DIR") {
            Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
            _ => dirs::cache_dir().map(|d| d.join("quiver")),
        };
        ToolCache { dir: root.map(|r| r.join("mcp")) }
    }

    pub fn at(dir: impl Into<PathBuf>) -> Self {
        ToolCache { dir: Some(dir.into()) }
    }

    /// No caching at all (nothing is read or written).
    pub fn disabled() -> Self {
        ToolCache { dir: None }
    }

    pub fn path_for(&self, server: &ServerConfig) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        Some(dir.join(format!("{}-{}.json", sanitize_server(&server.name), transport_hash(&server.transport))))
    }

    /// The cached list, or `None` when there is none or it is unreadable (a
    /// broken cache only costs a reconnect, never an error).
    pub fn load(&self, server: &ServerConfig) -> Option<Vec<RemoteTool>> {
        let path = self.path_for(server)?;
        let text = std::fs::read_to_string(&path).ok()?;
        match serde_json::from_str::<CacheFile>(&text) {
            Ok(file) if file.version == VERSION && file.server == server.name => Some(file.tools),
            Ok(_) => None,
            Err(e) => {
                tracing::debug!(path = %path.display(), error = %e, "ignoring unreadable MCP tool cache");
                None
            }
        }
    }

    /// Writes the list atomically (temp file + rename), so a concurrent reader
    /// never sees half a file. Failures are logged, not raised: the cache is an
    /// optimisation.
    pub fn store(&self, server: &ServerConfig, tools: &[RemoteTool]) {
        let Some(path) = self.path_for(server) else { return };
        if let Err(e) = write_atomic(&path, server, tools) {
            tracing::warn!(path = %path.display(), error = %e, "could not write the MCP tool cache");
        }
    }
}

fn write_atomic(path: &Path, server: &ServerConfig, tools: &[RemoteTool]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let fetched_at_unix =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let file = CacheFile { version: VERSION, server: server.name.clone(), fetched_at_unix, tools: tools.to_vec() };
    let text = serde_json::to_string_pretty(&file).map_err(std::io::Error::other)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("cache"),
        std::process::id()
    ));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Short hash of what is launched or contacted (env and header values
/// included, hashed, so secrets never land in a file name or a listing).
fn transport_hash(transport: &Transport) -> String {
    let mut h = Sha256::new();
    match transport {
        Transport::Stdio { command, args, env, cwd } => {
            h.update(b"stdio\0");
            h.update(command.as_bytes());
            for a in args {
                h.update(b"\0");
                h.update(a.as_bytes());
            }
            for (k, v) in env {
                h.update(format!("\0{k}={v}").as_bytes());
            }
            if let Some(cwd) = cwd {
                h.update(format!("\0cwd={}", cwd.display()).as_bytes());
            }
        }
        Transport::Http { url, .. } => {
            h.update(b"http\0");
            h.update(url.as_bytes());
        }
        Transport::Unsupported { kind, .. } => h.update(kind.as_bytes()),
    }
    hex::encode(h.finalize())[..12].to_string()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    fn server(name: &str, command: &str) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            transport: Transport::Stdio { command: command.into(), args: vec![], env: BTreeMap::new(), cwd: None },
            enabled: true,
            enabled_tools: None,
            disabled_tools: vec![],
            startup_timeout: Duration::from_secs(1),
            tool_timeout: Duration::from_secs(1),
            source: PathBuf::from("quiver.toml"),
            trust: quiver_engine::permissions::trust::Source::User,
            workspace: None,
            expose: Default::default(),
            protocol: Default::default(),
        }
    }

    fn tool(name: &str) -> RemoteTool {
        RemoteTool {
            name: name.into(),
            title: None,
            description: format!("{name} things"),
            input_schema: json!({"type": "object"}),
            read_only_hint: Some(true),
            destructive_hint: None,
            output_schema: None,
            annotations: None,
            verbatim: None,
        }
    }

    #[test]
    fn round_trips_per_server_and_command() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let cache = ToolCache::at(dir.path());
        let a = server("a", "srv-a");
        assert_eq!(cache.load(&a), None);
        cache.store(&a, &[tool("x"), tool("y")]);
        assert_eq!(cache.load(&a), Some(vec![tool("x"), tool("y")]));
        // Same name, different command: a different file.
        assert_eq!(cache.load(&server("a", "other")), None);
        Ok(())
    }

    #[test]
    fn an_entry_as_the_server_wrote_it_survives_the_cache_byte_for_byte() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let cache = ToolCache::at(dir.path());
        let a = server("a", "srv-a");
        let written = r#"{"name":"x","inputSchema":{"type":"object","properties":{}},"execution":{"taskSupport":"forbidden"},"annotations":{"priority":1}}"#;
        let mut listed = tool("x");
        listed.verbatim = Some(std::sync::Arc::from(written));
        cache.store(&a, &[listed.clone(), tool("y")]);
        let back = cache.load(&a).ok_or_else(|| anyhow::anyhow!("nothing cached"))?;
        assert_eq!(back, vec![listed, tool("y")]);
        assert_eq!(back[0].verbatim.as_deref(), Some(written));
        assert_eq!(back[1].verbatim, None);
        Ok(())
    }

    #[test]
    fn a_cache_file_from_before_entries_were_kept_still_loads() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let cache = ToolCache::at(dir.path());
        let a = server("a", "srv-a");
        let path = cache.path_for(&a).ok_or_else(|| anyhow::anyhow!("no path"))?;
        let old = json!({"version": 1, "server": "a", "fetchedAtUnix": 1,
            "tools": [{"name": "x", "description": "x things", "inputSchema": {"type": "object"}, "readOnlyHint": true}]});
        std::fs::write(&path, old.to_string())?;
        assert_eq!(cache.load(&a), Some(vec![tool("x")]));
        Ok(())
    }

    #[test]
    fn a_corrupt_file_is_ignored() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let cache = ToolCache::at(dir.path());
        let a = server("a", "srv-a");
        let path = cache.path_for(&a).ok_or_else(|| anyhow::anyhow!("no path"))?;
        std::fs::write(&path, "{not json")?;
        assert_eq!(cache.load(&a), None);
        cache.store(&a, &[tool("x")]);
        assert_eq!(cache.load(&a), Some(vec![tool("x")]));
        Ok(())
    }

    #[test]
    fn disabled_cache_stores_nothing() {
        let cache = ToolCache::disabled();
        cache.store(&server("a", "x"), &[tool("x")]);
        assert_eq!(cache.load(&server("a", "x")), None);
    }
}
