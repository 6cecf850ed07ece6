//! Reachable, key accepted, model listed: the models list (`GET /models` on
//! the OpenAI wire, `GET /v1/models` on Anthropic's), the same with a wrong
//! key, and the plain chat's status for servers that list no models.

use serde_json::Value;

use super::client::{WRONG_KEY, one_line};
use super::{Check, Probe, Status};

fn auth_refused(status: Option<u16>) -> bool {
    matches!(status, Some(401 | 403))
}

pub(super) async fn reachable_and_models(p: &mut Probe<'_>) {
    let path = p.client.models_path();
    let reply = match p.client.get(path, None).await {
        Ok(reply) => reply,
        Err(e) => {
            p.set(Check::Reachable, Status::No, format!("GET {path}: {}", one_line(&e, 200)), None);
            p.blocked = Some("the server is not reachable".into());
            p.blocked(Check::ModelListed);
            return;
        }
    };
    p.set(Check::Reachable, Status::Ok, format!("HTTP {} from GET {path}", reply.status), Some(reply.elapsed));
    p.models_status = Some(reply.status);
    if auth_refused(Some(reply.status)) {
        p.blocked = Some("the key was refused".into());
        p.set(Check::ModelListed, Status::NotApplicable, "the key was refused", None);
        return;
    }
    let model = p.target.model.clone();
    let (status, detail) = match (reply.status, reply.json()) {
        (404, _) => (Status::NotApplicable, format!("GET {path} is not served (HTTP 404)")),
        (_, _) if !reply.ok() => (Status::No, format!("GET {path}: {}", reply.refusal())),
        (_, Some(json)) => {
            let ids: Vec<String> = json
                .get("data")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|m| m.get("id").and_then(Value::as_str))
                .map(str::to_string)
                .collect();
            if ids.contains(&model) {
                (Status::Ok, format!("`{model}` is among the {} listed", ids.len()))
            } else {
                let shown: Vec<&str> = ids.iter().take(3).map(String::as_str).collect();
                let more = if ids.len() > 3 { ", …" } else { "" };
                (Status::No, format!("`{model}` is not among the {} listed ({}{more})", ids.len(), shown.join(", ")))
            }
        }
        (_, None) => (Status::No, format!("GET {path} did not answer JSON")),
    };
    p.set(Check::ModelListed, status, detail, Some(reply.elapsed));
}

/// The key's verdict, after the plain chat: refused when either request was
/// refused for it; with a wrong key tried too, to tell a checked key from a
/// server that checks none.
pub(super) async fn key(p: &mut Probe<'_>) {
    if p.models_status.is_none() {
        p.blocked(Check::KeyAccepted);
        return;
    }
    let var = p.target.key_env.clone();
    let refused = auth_refused(p.models_status) || auth_refused(p.chat_status);
    if refused {
        p.blocked = Some("the key was refused".into());
    }
    let status_seen = if auth_refused(p.models_status) { p.models_status } else { p.chat_status };
    let (status, detail) = match (&p.target.key, refused) {
        (None, true) => (Status::No, format!("{var} is not set, and the server wants a key")),
        (None, false) => (
            Status::NotApplicable,
            format!(
                "{var} is not set and the server answers without a key (quiver exec still wants it set, to anything)"
            ),
        ),
        (Some(_), true) => (Status::No, format!("refused (HTTP {})", status_seen.unwrap_or_default())),
        (Some(_), false) => {
            let path = p.client.models_path();
            match p.models_status {
                Some(s) if (200..300).contains(&s) => match p.client.get(path, Some(WRONG_KEY)).await {
                    Ok(wrong) if wrong.ok() => {
                        (Status::Ok, "accepted; so is a wrong key (the server checks none)".into())
                    }
                    // LiteLLM without a database says 400 "No connected db." to a key it does not know.
                    Ok(wrong) if (400..500).contains(&wrong.status) && wrong.status != 404 => {
                        (Status::Ok, format!("accepted (a wrong key is refused: HTTP {})", wrong.status))
                    }
                    _ => (Status::Ok, "accepted".to_string()),
                },
                _ => (Status::Ok, "accepted".to_string()),
            }
        }
    };
    p.set(Check::KeyAccepted, status, detail, None);
}
