//! A server to add to the user's config, and the shapes its command-line
//! arguments take (`--env K=V`, `--header 'K: V'`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use toml_edit::{InlineTable, Table, value};

use crate::config::{Expose, Protocol};

#[derive(Debug, Clone, PartialEq)]
pub struct NewServer {
    pub name: String,
    pub transport: NewTransport,
    /// Written only when false (`enabled = false`); true is the default.
    pub enabled: bool,
    pub startup_timeout: Option<Duration>,
    pub tool_timeout: Option<Duration>,
    /// Written only when set (`"search"` is the default).
    pub expose: Option<Expose>,
    /// Written only when set (`"initialize"` is the default).
    pub protocol: Option<Protocol>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NewTransport {
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String>, cwd: Option<PathBuf> },
    Http { url: String, headers: BTreeMap<String, String>, bearer_token_env: Option<String> },
}

impl NewServer {
    pub fn stdio(name: impl Into<String>, command: impl Into<String>, args: Vec<String>) -> Self {
        NewServer::with(name, NewTransport::Stdio { command: command.into(), args, env: BTreeMap::new(), cwd: None })
    }

    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        NewServer::with(name, NewTransport::Http { url: url.into(), headers: BTreeMap::new(), bearer_token_env: None })
    }

    fn with(name: impl Into<String>, transport: NewTransport) -> Self {
        NewServer {
            name: name.into(),
            transport,
            enabled: true,
            startup_timeout: None,
            tool_timeout: None,
            expose: None,
            protocol: None,
        }
    }

    /// The `[mcp_servers.NAME]` table, keys in the order a person would
    /// write them. Only what was given is written, so the defaults stay
    /// quiver's (a later quiver may change them).
    pub fn to_table(&self) -> Table {
        let mut t = Table::new();
        match &self.transport {
            NewTransport::Stdio { command, args, env, cwd } => {
                t.insert("command", value(command.as_str()));
                if !args.is_empty() {
                    t.insert("args", value(args.iter().map(String::as_str).collect::<toml_edit::Array>()));
                }
                if !env.is_empty() {
                    t.insert("env", value(inline(env)));
                }
                if let Some(cwd) = cwd {
                    t.insert("cwd", value(cwd.to_string_lossy().as_ref()));
                }
            }
            NewTransport::Http { url, headers, bearer_token_env } => {
                t.insert("url", value(url.as_str()));
                if !headers.is_empty() {
                    t.insert("headers", value(inline(headers)));
                }
                if let Some(var) = bearer_token_env {
                    t.insert("bearer_token_env", value(var.as_str()));
                }
            }
        }
        for (key, timeout) in [("startup_timeout_ms", self.startup_timeout), ("tool_timeout_ms", self.tool_timeout)] {
            if let Some(d) = timeout {
                t.insert(key, value(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)));
            }
        }
        if let Some(expose) = self.expose {
            t.insert("expose", value(if expose.is_direct() { "direct" } else { "search" }));
        }
        if let Some(protocol) = self.protocol {
            t.insert("protocol", value(protocol.as_str()));
        }
        if !self.enabled {
            t.insert("enabled", value(false));
        }
        t
    }

    /// The same settings as an inline table (for a file whose
    /// `mcp_servers` is itself written inline).
    pub(crate) fn to_inline(&self) -> InlineTable {
        self.to_table().into_inline_table()
    }
}

fn inline(map: &BTreeMap<String, String>) -> InlineTable {
    let mut t = InlineTable::new();
    for (k, v) in map {
        t.insert(k, v.as_str().into());
    }
    t
}

/// Why an `--env` or `--header` argument was refused (each variant holds
/// the argument, or the part of it at fault).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairError {
    #[error("`{0}` is not NAME=VALUE")]
    NotEnvPair(String),
    #[error("`{0}` is not an environment variable name (letters, digits, `_`)")]
    BadEnvName(String),
    #[error("`{0}` is not `Name: value`")]
    NotHeader(String),
    #[error("`{0}` has no header name before `:`")]
    NoHeaderName(String),
}

/// `K=V` (`--env`): the value may contain `=`; the name must be a name a
/// shell could export.
pub fn parse_env_pair(text: &str) -> Result<(String, String), PairError> {
    let Some((name, val)) = text.split_once('=') else {
        return Err(PairError::NotEnvPair(text.to_string()));
    };
    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(PairError::BadEnvName(name.to_string()));
    }
    Ok((name.to_string(), val.to_string()))
}

/// `Name: value` (`--header`), as curl takes it. The header name is checked
/// when the config is read back (one rule, in `config`).
pub fn parse_header(text: &str) -> Result<(String, String), PairError> {
    let Some((name, val)) = text.split_once(':') else {
        return Err(PairError::NotHeader(text.to_string()));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(PairError::NoHeaderName(text.to_string()));
    }
    Ok((name.to_string(), val.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stdio_table_has_only_what_was_given() {
        let mut s = NewServer::stdio("fs", "npx", vec!["-y".into(), "server-fs".into()]);
        assert_eq!(s.to_table().to_string(), "command = \"npx\"\nargs = [\"-y\", \"server-fs\"]\n");
        if let NewTransport::Stdio { env, cwd, .. } = &mut s.transport {
            env.insert("LOG".into(), "debug".into());
            *cwd = Some(PathBuf::from("/srv"));
        }
        s.startup_timeout = Some(Duration::from_secs(5));
        s.enabled = false;
        assert_eq!(
            s.to_table().to_string(),
            "command = \"npx\"\nargs = [\"-y\", \"server-fs\"]\nenv = { LOG = \"debug\" }\ncwd = \"/srv\"\n\
             startup_timeout_ms = 5000\nenabled = false\n"
        );
    }

    #[test]
    fn an_http_table() {
        let mut s = NewServer::http("api", "https://example.com/mcp");
        if let NewTransport::Http { headers, bearer_token_env, .. } = &mut s.transport {
            headers.insert("X-Team".into(), "core".into());
            *bearer_token_env = Some("API_TOKEN".into());
        }
        s.expose = Some(Expose::Direct);
        s.protocol = Some(Protocol::Auto);
        assert_eq!(
            s.to_table().to_string(),
            "url = \"https://example.com/mcp\"\nheaders = { X-Team = \"core\" }\nbearer_token_env = \"API_TOKEN\"\n\
             expose = \"direct\"\nprotocol = \"auto\"\n"
        );
    }

    #[test]
    fn argument_forms() {
        assert_eq!(parse_env_pair("A_1=x=y"), Ok(("A_1".into(), "x=y".into())));
        assert_eq!(parse_env_pair("EMPTY="), Ok(("EMPTY".into(), String::new())));
        assert_eq!(parse_env_pair("novalue"), Err(PairError::NotEnvPair("novalue".into())));
        assert_eq!(parse_env_pair("1A=x"), Err(PairError::BadEnvName("1A".into())));
        assert_eq!(
            parse_env_pair("A-B=x").unwrap_err().to_string(),
            "`A-B` is not an environment variable name (letters, digits, `_`)"
        );
        assert_eq!(parse_header("Authorization: Bearer a:b"), Ok(("Authorization".into(), "Bearer a:b".into())));
        assert_eq!(parse_header("X-Empty:"), Ok(("X-Empty".into(), String::new())));
        assert_eq!(parse_header("nocolon").unwrap_err().to_string(), "`nocolon` is not `Name: value`");
        assert_eq!(parse_header(": v").unwrap_err().to_string(), "`: v` has no header name before `:`");
    }
}
