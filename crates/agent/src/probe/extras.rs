//! Vision (is a request with an image accepted) and fill in the middle (does
//! a `/completions`-style endpoint take a `suffix`).

use serde_json::Value;

use super::client::one_line;
use super::requests::{self, parse};
use super::{Check, Probe, Status};
use crate::openai::fim_url;
use crate::provider::Wire;

pub(super) async fn vision(p: &mut Probe<'_>) {
    if p.blocked(Check::Vision) {
        return;
    }
    let body = requests::image(p.target);
    let path = p.client.chat_path();
    let reply = match p.client.post(path, &body).await {
        Ok(reply) => reply,
        Err(e) => return p.set(Check::Vision, Status::No, format!("POST {path}: {}", one_line(&e, 200)), None),
    };
    if !reply.ok() {
        // A refusal of the body (not a server failing): sending images to
        // this server fails the whole request, so quiver never does.
        if (400..500).contains(&reply.status) || reply.said().invalid_body {
            p.learned.vision = Some(false);
        }
        return p.set(
            Check::Vision,
            Status::No,
            format!("an image is refused: {}", reply.refusal()),
            Some(reply.elapsed),
        );
    }
    let parsed =
        reply.json().ok_or_else(|| "the answer is not JSON".to_string()).and_then(|v| parse(p.target.wire, &v));
    match parsed {
        Ok(_) => p.set(
            Check::Vision,
            Status::Ok,
            "an image is accepted (whether the model sees it is not checked)",
            Some(reply.elapsed),
        ),
        Err(e) => p.set(Check::Vision, Status::No, one_line(&e, 200), Some(reply.elapsed)),
    }
}

pub(super) async fn fim(p: &mut Probe<'_>) {
    if p.target.wire == Wire::Anthropic {
        return p.set(Check::Fim, Status::NotApplicable, "the Messages API has no fill-in-the-middle endpoint", None);
    }
    if p.blocked(Check::Fim) {
        return;
    }
    let configured = p.target.fim_path.clone();
    let path = configured.clone().unwrap_or_else(|| "/completions".to_string());
    if let Err(why) = fim_url(&p.target.base_url, &path) {
        return p.set(Check::Fim, Status::No, why, None);
    }
    let reply = match p.client.post(&path, &requests::fim(p.target)).await {
        Ok(reply) => reply,
        Err(e) => return p.set(Check::Fim, Status::No, format!("POST {path}: {}", one_line(&e, 200)), None),
    };
    let text = reply.json().and_then(|v| v.pointer("/choices/0/text").and_then(Value::as_str).map(str::to_string));
    let (status, detail) = match (reply.ok(), text, configured) {
        (true, Some(_), Some(_)) => (Status::Ok, format!("POST {path} (`fim_path`) fills in")),
        (true, Some(_), None) => (
            Status::Ok,
            format!(
                "POST {path} takes a `suffix`; set `fim_path = \"{path}\"` to use it (whether the model was trained for FIM is not checked)"
            ),
        ),
        (true, None, _) => (Status::No, format!("POST {path} answered without choices[0].text")),
        (false, _, _) if reply.status == 404 => (Status::No, format!("no FIM endpoint (POST {path}: HTTP 404)")),
        (false, _, _) => (Status::No, format!("POST {path}: {}", reply.refusal())),
    };
    p.set(Check::Fim, status, detail, Some(reply.elapsed));
}
