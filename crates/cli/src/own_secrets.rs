//! The first thing `quiver` does: take its secrets out of its own environment
//! (`quiver_sandbox::withhold_own_secrets`), so not even root finds a key in
//! `/proc/<quiver>/environ`. Keys are then read through
//! `quiver_sandbox::secret_env`.
//!
//! The sandbox's patterns catch `*_API_KEY`, `*_TOKEN` and kin; a key in a
//! variable of another name is known only from the user's own config
//! (`api_key_env`, an MCP server's `bearer_token_env` or
//! `oauth_client_secret_env`) or from `mcp serve --token-env`. A project's
//! `quiver.toml` may not name a provider's key variable, and is not read here.

use std::path::Path;

/// Withholds quiver's secrets; `token_env` is `mcp serve --token-env`'s
/// variable. Must run before any thread starts (the first lines of `main`).
pub fn withhold(token_env: Option<&str>) -> Result<quiver_sandbox::Withheld, quiver_sandbox::WithholdError> {
    let mut names = quiver_sandbox::user_config_file().map(|f| key_variables(&f)).unwrap_or_default();
    names.extend(token_env.map(str::to_string));
    quiver_sandbox::withhold_own_secrets(&names)
}

/// The key variables `path` (the user's `config.toml`) names. A file that
/// cannot be read or parsed names none: the command that loads it reports it.
fn key_variables(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    let Ok(table) = toml::from_str::<toml::Table>(&text) else { return Vec::new() };
    key_variables_of(&table)
}

fn key_variables_of(table: &toml::Table) -> Vec<String> {
    let named = |section: &str, keys: &[&str]| -> Vec<String> {
        let Some(entries) = table.get(section).and_then(toml::Value::as_table) else { return Vec::new() };
        entries
            .values()
            .filter_map(toml::Value::as_table)
            .flat_map(|entry| keys.iter().filter_map(|k| entry.get(*k).and_then(toml::Value::as_str)))
            .filter(|name| !name.trim().is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut names = named("providers", &["api_key_env"]);
    names.extend(named("mcp_servers", &["bearer_token_env", "oauth_client_secret_env"]));
    names
}

#[cfg(test)]
#[path = "own_secrets_tests.rs"]
mod tests;
