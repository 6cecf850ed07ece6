//! Claude-style `{"mcpServers": {...}}` JSON (`.mcp.json`, Claude Desktop's
//! config), so a server set up for another client works here unchanged.
//!
//! Each entry takes `type` (`stdio`, `http`; `sse` is recognised but not
//! spoken), `command`/`args`/`env`/`cwd` or `url`/`headers`, with `${VAR}` and
//! `${VAR:-default}` expanded in all of them as Claude Code does. quiver's own
//! keys (`enabled`, `enabled_tools`, `disabled_tools`, timeouts) work here too.
//! Keys we do not know are ignored: these files are shared with other clients,
//! which add their own.

use std::path::Path;

use serde_json::Value;

use super::{ConfigError, McpConfig, RawServer, build_server};

pub fn parse_claude_json(path: &Path, text: &str) -> Result<McpConfig, ConfigError> {
    let root: Value = serde_json::from_str(text).map_err(|e| ConfigError::new(path, "(syntax)", e.to_string()))?;
    let mut config = McpConfig::default();
    let Some(servers) = root.get("mcpServers") else {
        return Err(ConfigError::new(path, "mcpServers", "missing; expected `{\"mcpServers\": {\"NAME\": {...}}}`"));
    };
    let Value::Object(servers) = servers else {
        return Err(ConfigError::new(path, "mcpServers", "must be an object of servers by name"));
    };
    for (name, entry) in servers {
        let key = format!("mcpServers.{name}");
        let Value::Object(fields) = entry else {
            return Err(ConfigError::new(path, &key, "must be an object with `command` or `url`"));
        };
        let mut fields = fields.clone();
        for field in ["command", "url", "cwd"] {
            if let Some(Value::String(s)) = fields.get_mut(field) {
                *s = expand(s).map_err(|m| ConfigError::new(path, format!("{key}.{field}"), m))?;
            }
        }
        for field in ["args", "env", "headers"] {
            if let Some(value) = fields.get_mut(field) {
                expand_strings(value).map_err(|m| ConfigError::new(path, format!("{key}.{field}"), m))?;
            }
        }
        let kind = match fields.get("type") {
            None | Some(Value::Null) => None,
            Some(Value::String(t)) => {
                Some(normalize_type(t).map_err(|m| ConfigError::new(path, format!("{key}.type"), m))?)
            }
            Some(_) => return Err(ConfigError::new(path, format!("{key}.type"), "must be a string")),
        };
        fields.remove("type");
        let raw: RawServer =
            serde_json::from_value(Value::Object(fields)).map_err(|e| ConfigError::new(path, &key, e.to_string()))?;
        let raw = RawServer { kind, ..raw };
        if raw.kind.as_deref() == Some("http") && raw.url.is_none() {
            return Err(ConfigError::new(path, &key, "`type` is `http` but there is no `url`"));
        }
        if raw.kind.as_deref() == Some("stdio") && raw.command.is_none() {
            return Err(ConfigError::new(path, &key, "`type` is `stdio` but there is no `command`"));
        }
        let server = build_server(path, name, raw)
            // build_server names keys TOML-style; say it in this file's terms.
            .map_err(|e| ConfigError { key: e.key.replacen("mcp_servers.", "mcpServers.", 1), ..e })?;
        config.servers.insert(name.clone(), server);
    }
    Ok(config)
}

fn normalize_type(t: &str) -> Result<String, String> {
    match t {
        "stdio" => Ok("stdio".into()),
        "http" | "streamable-http" | "streamable_http" | "streamableHttp" => Ok("http".into()),
        "sse" => Ok("sse".into()),
        other => Err(format!("unknown transport `{other}` (expected stdio, http or sse)")),
    }
}

fn expand_strings(value: &mut Value) -> Result<(), String> {
    match value {
        Value::String(s) => *s = expand(s)?,
        Value::Array(items) => items.iter_mut().try_for_each(expand_strings)?,
        Value::Object(map) => map.values_mut().try_for_each(expand_strings)?,
        _ => {}
    }
    Ok(())
}

/// `${VAR}` and `${VAR:-default}`; an unset variable without a default is an
/// error (a server started with a silently empty token fails far more obscurely).
pub(crate) fn expand(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unterminated `${{` in `{text}`"));
        };
        let inner = &after[..end];
        let (var, default) = match inner.split_once(":-") {
            Some((v, d)) => (v, Some(d)),
            None => (inner, None),
        };
        if var.is_empty() || !var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!("`${{{inner}}}` is not a valid variable reference"));
        }
        // A key in a `${VAR}` reference lives outside the environment now.
        match (quiver_sandbox::secret_env(var), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(d)) => out.push_str(d),
            (None, None) => {
                return Err(format!("environment variable `{var}` is not set (use `${{{var}:-default}}`)"));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
