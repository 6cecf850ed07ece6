//! Claude-style `{"mcpServers": {...}}` JSON (Claude Desktop's config,
//! a project's `.mcp.json`) as servers to add to the user's config.
//!
//! All or nothing: every entry is judged first, and if any cannot be
//! imported as asked (a name taken, a name quiver would change, a transport
//! it does not speak, a `${VAR}` it cannot keep), nothing is written and
//! each problem is named. `only` picks entries; `force` replaces servers of
//! the same name.
//!
//! `${VAR}` references: quiver's TOML does not expand them (Claude's JSON
//! does), so a reference cannot be copied as is. `Authorization: Bearer
//! ${VAR}` becomes `bearer_token_env = "VAR"` (read at connect time, as
//! before); any other reference is a problem unless `expand_env`, which
//! writes the variable's current value into the config instead.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use super::error::ManageError;
use super::new_server::{NewServer, NewTransport};
use super::user_file::UserConfig;

#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Replace servers of the same name already in the user's config.
    pub force: bool,
    /// Only these entries (all when empty).
    pub only: Vec<String>,
    /// Expand `${VAR}` now (the values are written into the config).
    pub expand_env: bool,
}

#[derive(Debug, Default)]
pub struct ImportPlan {
    /// What would be added, in the file's order.
    pub servers: Vec<NewServer>,
    /// Entries that cannot be imported as asked: (name, why).
    pub problems: Vec<(String, String)>,
    /// Things worth saying that do not stop the import (keys left out).
    pub notes: Vec<String>,
}

/// Judges every entry of `text` (the file at `path`) against `existing`.
pub fn plan(
    path: &Path,
    text: &str,
    options: &ImportOptions,
    existing: &UserConfig,
) -> Result<ImportPlan, ManageError> {
    let root: Value = serde_json::from_str(text).map_err(|e| ManageError::Syntax {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let Some(Value::Object(entries)) = root.get("mcpServers") else {
        return Err(ManageError::Invalid(format!(
            "{}: no `mcpServers` object; expected {{\"mcpServers\": {{\"NAME\": {{...}}}}}}",
            path.display()
        )));
    };
    // Relative `cwd`s are relative to the imported file, wherever the user's config is.
    let base = std::path::absolute(path.parent().unwrap_or(Path::new("")))
        .map_err(|e| ManageError::io(path, "cannot resolve its folder", e))?;
    let mut plan = ImportPlan::default();
    for wanted in &options.only {
        if !entries.contains_key(wanted) {
            plan.problems.push((wanted.clone(), format!("not in {}", path.display())));
        }
    }
    for (name, entry) in entries {
        if !options.only.is_empty() && !options.only.contains(name) {
            continue;
        }
        if let Err(reason) = super::name::check(name) {
            let hint = format!(
                "{reason}; rename it in the file (e.g. `{}`) or leave it out with --only",
                super::name::suggest(name)
            );
            plan.problems.push((name.clone(), hint));
            continue;
        }
        if existing.contains(name) && !options.force {
            plan.problems
                .push((name.clone(), format!("already in {}; --force replaces it", existing.path().display())));
            continue;
        }
        match entry_to_server(name, entry, &base, options.expand_env) {
            Ok((server, ignored)) => {
                if !ignored.is_empty() {
                    plan.notes.push(format!("`{name}`: left out {}", ignored.join(", ")));
                }
                plan.servers.push(server);
            }
            Err(reason) => plan.problems.push((name.clone(), reason)),
        }
    }
    Ok(plan)
}

/// Adds the plan's servers to `config` (not saved).
pub fn apply(config: &mut UserConfig, plan: &ImportPlan, force: bool) -> Result<(), ManageError> {
    for server in &plan.servers {
        config.add(server, force)?;
    }
    Ok(())
}

/// Keys an entry may have that are not copied (other clients' own settings).
const KNOWN: &[&str] =
    &["type", "command", "args", "env", "cwd", "url", "headers", "enabled", "startup_timeout_ms", "tool_timeout_ms"];

fn entry_to_server(name: &str, entry: &Value, base: &Path, expand: bool) -> Result<(NewServer, Vec<String>), String> {
    let Value::Object(fields) = entry else { return Err("not an object with `command` or `url`".into()) };
    let ignored: Vec<String> =
        fields.keys().filter(|k| !KNOWN.contains(&k.as_str())).map(|k| format!("`{k}`")).collect();
    let text = |field: &str| -> Result<Option<String>, String> {
        match fields.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => keep(field, s, expand).map(Some),
            Some(_) => Err(format!("`{field}` must be a string")),
        }
    };
    let kind = text("type")?;
    let transport = match (kind.as_deref(), text("command")?, text("url")?) {
        (Some("sse"), _, _) => {
            return Err("uses the legacy SSE transport, which quiver does not speak; \
                        add its streamable HTTP endpoint with `quiver mcp add NAME --url URL`"
                .into());
        }
        (Some(other), _, _)
            if !matches!(other, "stdio" | "http" | "streamable-http" | "streamable_http" | "streamableHttp") =>
        {
            return Err(format!("unknown transport `{other}` (expected stdio or http)"));
        }
        (_, Some(_), Some(_)) => return Err("has both `command` and `url`".into()),
        (_, None, None) => return Err("has neither `command` nor `url`".into()),
        (Some("stdio"), None, Some(_)) => return Err("`type` is `stdio` but there is no `command`".into()),
        (Some(t), Some(_), None) if t != "stdio" => return Err(format!("`type` is `{t}` but there is no `url`")),
        (_, Some(command), None) => {
            let args = strings(fields, "args", expand)?;
            let env = map(fields, "env", expand)?;
            let cwd = text("cwd")?.map(|c| base.join(c));
            NewTransport::Stdio { command, args, env, cwd }
        }
        (_, None, Some(url)) => {
            // Bearer tokens by reference survive as `bearer_token_env`.
            let mut bearer_token_env = None;
            let mut raw_headers: Map<String, Value> = match fields.get("headers") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(h)) => h.clone(),
                Some(_) => return Err("`headers` must be an object of strings".into()),
            };
            let auth = raw_headers.keys().find(|k| k.eq_ignore_ascii_case("authorization")).cloned();
            if let Some(key) = auth
                && let Some(var) = raw_headers.get(&key).and_then(Value::as_str).and_then(bearer_reference)
            {
                bearer_token_env = Some(var);
                raw_headers.remove(&key);
            }
            let headers =
                map(&Map::from_iter([("headers".to_string(), Value::Object(raw_headers))]), "headers", expand)?;
            if fields.get("args").is_some() || fields.get("env").is_some() || fields.get("cwd").is_some() {
                return Err("`args`, `env` and `cwd` only apply to `command` servers".into());
            }
            NewTransport::Http { url, headers, bearer_token_env }
        }
    };
    let mut server = NewServer::stdio(name, "", Vec::new());
    server.transport = transport;
    if let Some(enabled) = fields.get("enabled") {
        server.enabled = enabled.as_bool().ok_or("`enabled` must be true or false")?;
    }
    server.startup_timeout = millis(fields, "startup_timeout_ms")?;
    server.tool_timeout = millis(fields, "tool_timeout_ms")?;
    Ok((server, ignored))
}

/// `Bearer ${VAR}` → `VAR`.
fn bearer_reference(value: &str) -> Option<String> {
    let var = value.trim().strip_prefix("Bearer ")?.trim().strip_prefix("${")?.strip_suffix('}')?;
    let ok = !var.is_empty() && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    ok.then(|| var.to_string())
}

/// A string value as it will be written: unchanged, expanded (`expand`), or
/// refused when it holds a reference quiver's TOML would not expand.
fn keep(field: &str, value: &str, expand: bool) -> Result<String, String> {
    if !value.contains("${") {
        return Ok(value.to_string());
    }
    if expand {
        return crate::config::claude_expand(value).map_err(|e| format!("`{field}`: {e}"));
    }
    Err(format!(
        "`{field}` refers to an environment variable (`{value}`), which quiver's config does not expand; \
         --expand-env writes its current value into your config instead"
    ))
}

fn strings(fields: &Map<String, Value>, field: &str, expand: bool) -> Result<Vec<String>, String> {
    match fields.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str().ok_or(format!("`{field}` must be a list of strings")).and_then(|s| keep(field, s, expand))
            })
            .collect(),
        Some(_) => Err(format!("`{field}` must be a list of strings")),
    }
}

fn map(fields: &Map<String, Value>, field: &str, expand: bool) -> Result<BTreeMap<String, String>, String> {
    match fields.get(field) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(items)) => items
            .iter()
            .map(|(k, v)| {
                let v = v.as_str().ok_or(format!("`{field}.{k}` must be a string"))?;
                Ok((k.clone(), keep(&format!("{field}.{k}"), v, expand)?))
            })
            .collect(),
        Some(_) => Err(format!("`{field}` must be an object of strings")),
    }
}

fn millis(fields: &Map<String, Value>, field: &str) -> Result<Option<Duration>, String> {
    match fields.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(|ms| Some(Duration::from_millis(ms)))
            .ok_or(format!("`{field}` must be a number of milliseconds")),
    }
}

#[cfg(test)]
#[path = "import_tests.rs"]
mod tests;
