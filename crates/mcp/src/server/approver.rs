//! Approvals over MCP elicitation: in `agent` mode the engine asks before risky
//! steps, and behind `quiver mcp serve` the one who can answer is the user at
//! the MCP client. A client that advertised elicitation gets a yes/no form; a
//! client that did not gets no approver at all, so the engine refuses with its
//! own message ("needs approval, and this session has nobody to ask").
//! A stateless (2026-07-28) client is asked the same form as an input
//! request of the call's `InputRequiredResult` (`input_required`).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use quiver_engine::permissions::Approver;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer, RoleServer};
use serde_json::json;

/// How long a user gets to answer before the step is refused. Long enough for a
/// human to read the question, short enough that a client which advertised
/// elicitation but never answers does not hang the call forever.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);

/// The form's single field. Boolean, so every form-capable client can render it.
const FIELD: &str = "approve";

pub struct ElicitationApprover {
    to: Asked,
}

/// Who is asked: a session's client, by a request on its connection, or a
/// stateless call's client, by an input request of its call.
enum Asked {
    Peer(Peer<RoleServer>),
    Input(super::input_required::Asker),
}

impl ElicitationApprover {
    /// An approver for this client, or `None` when it cannot be asked.
    pub fn for_peer(peer: &Peer<RoleServer>) -> Option<Self> {
        peer.supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
            .then(|| ElicitationApprover { to: Asked::Peer(peer.clone()) })
    }

    /// An approver for a stateless call's client, or `None` when its request
    /// did not declare form elicitation (an empty `elicitation` means form).
    pub fn for_input(asker: &super::input_required::Asker) -> Option<Self> {
        let elicitation = asker.capabilities.elicitation.as_ref()?;
        let form = elicitation.form.is_some() || elicitation.url.is_none();
        form.then(|| ElicitationApprover { to: Asked::Input(asker.clone()) })
    }

    async fn ask(&self, question: &str) -> bool {
        let Some(schema) = approval_schema() else { return false };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!("quiver wants to {}", question.trim_start_matches("allow ")),
            requested_schema: schema,
        };
        let answer = match &self.to {
            Asked::Peer(peer) => peer.create_elicitation_with_timeout(params, Some(ANSWER_TIMEOUT)).await,
            // Bounded by how long a call waits for its client's input.
            Asked::Input(asker) => {
                let request = rmcp::model::ServerRequest::ElicitRequest(rmcp::model::Request::new(params));
                match asker.ask(request).await {
                    Ok(rmcp::model::ClientResult::ElicitResult(answer)) => Ok(answer),
                    Ok(_) => Err(rmcp::ServiceError::UnexpectedResponse),
                    Err(e) => Err(e),
                }
            }
        };
        match answer {
            Ok(answer) => {
                answer.action == ElicitationAction::Accept
                    && answer.content.as_ref().and_then(|c| c.get(FIELD)).and_then(|v| v.as_bool()) == Some(true)
            }
            Err(e) => {
                tracing::warn!(error = %e, "approval request to the MCP client failed; refusing");
                false
            }
        }
    }
}

impl Approver for ElicitationApprover {
    fn approve<'a>(&'a self, question: &'a str) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>> {
        Box::pin(self.ask(question))
    }
}

/// `{approve: boolean}`, required. Built from JSON so it is the exact wire form.
fn approval_schema() -> Option<ElicitationSchema> {
    let schema = json!({
        "type": "object",
        "properties": {
            FIELD: {
                "type": "boolean",
                "title": "Allow",
                "description": "Allow this step to run",
                "default": false,
            }
        },
        "required": [FIELD],
    });
    match serde_json::from_value(schema) {
        Ok(schema) => Some(schema),
        Err(e) => {
            tracing::error!(error = %e, "approval form schema rejected by rmcp");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_is_accepted() {
        assert!(approval_schema().is_some());
    }
}
