//! `quiver mcp conformance-client URL`: quiver's downstream MCP client, driven
//! once against one server the way a caller would — one session (signing in
//! with OAuth first when the server answers 401), `tools/list`, then every
//! tool called with arguments built from its input schema. Elicitation
//! requests are accepted with the defaults their schema gives (there is no
//! client in front to ask). This is what the MCP conformance suite's *client*
//! scenarios run as "the client under test"; it is also a quick check that a
//! configured server works.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::{Map, Value, json};

use super::connect::{self, LocalAnswers};
use super::oauth::{self, Browser, FileTokenStore, LoginOptions};
use super::stderr::StderrTail;
use crate::config::{OAuthSettings, ServerConfig, Transport};

/// Arguments the caller gives for some tools (by name), used instead of
/// ones built from the schema (the suite names the values a scenario checks).
pub type Given = std::collections::HashMap<String, Map<String, Value>>;

/// What one run did, for the command's output.
#[derive(Debug, Default, serde::Serialize)]
pub struct ProbeReport {
    pub signed_in: bool,
    pub tools: Vec<String>,
    /// (tool, the result's text or the error), in call order.
    pub calls: Vec<(String, Result<String, String>)>,
}

/// Accepts a form elicitation with every default its schema states.
struct AcceptDefaults;

impl LocalAnswers for AcceptDefaults {
    fn elicit(&self, request: &ElicitRequestParams) -> Option<ElicitResult> {
        let ElicitRequestParams::FormElicitationParams { requested_schema, .. } = request else {
            return Some(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(requested_schema).ok()?;
        let mut content = Map::new();
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                if let Some(default) = property.get("default") {
                    content.insert(name.clone(), default.clone());
                }
            }
        }
        Some(ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)))
    }
}

/// An argument value a schema accepts: its default, its first enum member,
/// else a plain value of its type.
fn sample(schema: &Value) -> Value {
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return first.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("number") | Some("integer") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => sample_object(schema),
        Some("null") => Value::Null,
        _ => json!("test"),
    }
}

/// The required properties of an object schema, each with a [`sample`].
fn sample_object(schema: &Value) -> Value {
    let mut out = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let property = properties.and_then(|p| p.get(name)).cloned().unwrap_or(Value::Null);
        out.insert(name.to_string(), sample(&property));
    }
    Value::Object(out)
}

/// Runs the probe against `url`, signing in with `oauth` when asked to.
/// Tokens from a sign-in live in a private temporary folder for the run only.
pub async fn run(
    url: &str,
    oauth: OAuthSettings,
    protocol: crate::config::Protocol,
    given: &Given,
    timeout: Duration,
    say: &(dyn Fn(&str) + Sync),
) -> Result<ProbeReport, String> {
    let config = ServerConfig {
        name: "probe".into(),
        transport: Transport::Http { url: url.into(), headers: Default::default(), bearer_token_env: None, oauth },
        enabled: true,
        enabled_tools: None,
        disabled_tools: vec![],
        startup_timeout: timeout,
        tool_timeout: timeout,
        source: "(command line)".into(),
        trust: quiver_engine::permissions::trust::Source::User,
        expose: Default::default(),
        protocol,
        workspace: None,
    };
    let dir = std::env::temp_dir().join(format!("quiver-probe-{}-{}", std::process::id(), nanos()));
    let result = probe(&config, FileTokenStore::new(&dir, &config.name, url), given, timeout, say).await;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn nanos() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default()
}

/// How many sign-ins one run may do (the first, then scope step-ups): a
/// server that keeps refusing must not loop the user through its login.
const MAX_SIGN_INS: usize = 3;

/// The `WWW-Authenticate` challenge of a request refused with 401 or 403.
fn challenge_of(error: &rmcp::ServiceError) -> Option<String> {
    use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
    let rmcp::ServiceError::TransportSend(e) = error else { return None };
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e.error.as_ref());
    while let Some(current) = source {
        if let Some(e) = current.downcast_ref::<AuthRequiredError>() {
            return Some(e.www_authenticate_header.clone());
        }
        if let Some(e) = current.downcast_ref::<InsufficientScopeError>() {
            return Some(e.www_authenticate_header.clone());
        }
        source = current.source();
    }
    None
}

/// One step's failure: refused for authorization (with the challenge), or not.
enum StepError {
    Auth(Option<String>),
    Other(String),
}

impl From<rmcp::ServiceError> for StepError {
    fn from(e: rmcp::ServiceError) -> Self {
        match challenge_of(&e) {
            Some(challenge) => StepError::Auth(Some(challenge)),
            None => StepError::Other(e.to_string()),
        }
    }
}

async fn probe(
    config: &ServerConfig,
    store: FileTokenStore,
    given: &Given,
    timeout: Duration,
    say: &(dyn Fn(&str) + Sync),
) -> Result<ProbeReport, String> {
    let mut report = ProbeReport::default();
    let mut sign_ins = 0;
    let mut granted: Vec<String> = Vec::new();
    loop {
        match attempt(config, &store, given, timeout, &mut report).await {
            Ok(()) => return Ok(report),
            Err(StepError::Other(e)) => return Err(e),
            Err(StepError::Auth(challenge)) => {
                if sign_ins == MAX_SIGN_INS {
                    return Err(format!(
                        "the server still refuses after {MAX_SIGN_INS} sign-ins ({}); giving up",
                        challenge.unwrap_or_default()
                    ));
                }
                sign_ins += 1;
                say(&format!("the server asks for authorization; signing in (attempt {sign_ins})"));
                // A step-up asks for what was granted plus what the server
                // now names, so the new token does not lose earlier access.
                let wanted = challenge.as_deref().map(oauth::challenge_scopes).unwrap_or_default();
                let scopes = (!granted.is_empty() && !wanted.is_empty()).then(|| {
                    let mut all = granted.clone();
                    all.extend(wanted.into_iter().filter(|s| !granted.contains(s)));
                    all
                });
                let options = LoginOptions { browser: Browser::Headless, timeout, say, scopes, challenge };
                granted = oauth::login(config, store.clone(), options).await.map_err(|e| e.to_string())?;
                report.signed_in = true;
            }
        }
    }
}

/// One session: connect, list, call every tool not yet answered. A refusal
/// for authorization ends it; the caller signs in and runs another.
async fn attempt(
    config: &ServerConfig,
    store: &FileTokenStore,
    given: &Given,
    timeout: Duration,
    report: &mut ProbeReport,
) -> Result<(), StepError> {
    let stderr = StderrTail::new();
    let local: Arc<dyn LocalAnswers> = Arc::new(AcceptDefaults);
    let flag = Arc::new(AtomicBool::new(false));
    let opened = tokio::time::timeout(
        timeout,
        connect::open_or_challenge(
            config,
            &stderr,
            flag,
            super::events::channel(),
            Some(store.clone()),
            Some(local),
            Arc::default(),
        ),
    )
    .await
    .map_err(|_| StepError::Other("the server did not answer initialize in time".into()))?;
    let conn = match opened {
        Ok(conn) => conn,
        Err(connect::OpenFailure { challenge: Some(challenge), .. }) => return Err(StepError::Auth(Some(challenge))),
        Err(e) if e.message == oauth::login_needed(config) => return Err(StepError::Auth(None)),
        Err(e) => return Err(StepError::Other(e.message)),
    };
    let peer = conn.service.peer().clone();
    let outcome = async {
        let tools = peer.list_all_tools().await?;
        report.tools = tools.iter().map(|t| t.name.to_string()).collect();
        for tool in tools {
            let name = tool.name.to_string();
            if report.calls.iter().any(|(done, _)| *done == name) {
                continue;
            }
            let sampled = || match sample_object(&Value::Object((*tool.input_schema).clone())) {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            let arguments = given.get(&name).cloned().unwrap_or_else(sampled);
            let mut params = CallToolRequestParams::new(name.clone());
            params.arguments = Some(arguments);
            // quiver's own call path: every round of a 2026-07-28 server's.
            let result = match tokio::time::timeout(timeout, super::calls::rounds(&conn, params)).await {
                Err(_) => Err(format!("no answer within {} ms", timeout.as_millis())),
                Ok(Err(e)) => match StepError::from(e) {
                    auth @ StepError::Auth(_) => return Err(auth),
                    StepError::Other(e) => Err(e),
                },
                Ok(Ok(super::calls::Answer::Task)) => Err("the server answered with a task".into()),
                Ok(Ok(super::calls::Answer::Complete(result))) => {
                    let text: Vec<String> =
                        result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.to_string())).collect();
                    if result.is_error == Some(true) { Err(text.join("\n")) } else { Ok(text.join("\n")) }
                }
            };
            report.calls.push((name, result));
        }
        Ok::<(), StepError>(())
    }
    .await;
    let _ = conn.service.cancel().await;
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_fill_required_properties_by_type_and_default() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "number"}, "b": {"type": "integer"}, "s": {"type": "string"},
                "e": {"type": "string", "enum": ["x", "y"]}, "d": {"type": "string", "default": "dv"},
                "optional": {"type": "string"}
            },
            "required": ["a", "b", "s", "e", "d"]
        });
        assert_eq!(sample_object(&schema), json!({"a": 1, "b": 1, "s": "test", "e": "x", "d": "dv"}));
    }
}
