//! Serves an eval's queries: `sub_query*` as one concurrent batch of child
//! completions, `sub_rlm` as a nested, depth-limited RLM session in which the
//! child model writes Python until it calls `finalize`.

use std::sync::Arc;

use quiver_agent::{BoxFuture, Message};
use quiver_engine::ToolContext;
use serde_json::json;

use crate::child::{ChildAnswer, ChildModel, ChildPrompt, ChildUsage};
use crate::config::RlmConfig;
use crate::repl::ContextKind;
use crate::session::{Queries, RlmSession, Source};
use crate::session_objects::preview;

/// Steps a nested session gets to reach `finalize`.
pub const NESTED_STEPS: usize = 4;

const NESTED_SYSTEM: &str = "You drive a Python REPL to answer a question about a context too large to read at once. \
The context is the string `_context`. Reply with one ```python block per turn; its printed output comes back to you. \
Helpers: sub_query(prompt, context=None), sub_query_batch(prompts) (at most 16). \
When you know the answer, call finalize(value) with a JSON-serializable value.";

pub struct Fanout {
    pub child: Arc<ChildModel>,
}

impl Queries for Fanout {
    fn answer<'a>(
        &'a self,
        ctx: &'a ToolContext,
        kind: &'a str,
        items: Vec<ChildPrompt>,
        config: &'a RlmConfig,
        depth: u32,
    ) -> BoxFuture<'a, Result<Vec<ChildAnswer>, String>> {
        Box::pin(async move {
            match kind {
                "query" => Ok(self.child.batch(&items, &config.child_model, config.sub_query_timeout).await),
                "rlm" => {
                    if depth + 1 > config.max_depth {
                        return Err(format!(
                            "sub_rlm: this session is at depth {depth} and max_depth is {}; raise it with rlm_configure (at most {})",
                            config.max_depth,
                            crate::config::MAX_DEPTH
                        ));
                    }
                    let mut answers = Vec::with_capacity(items.len());
                    for item in items {
                        answers.push(self.nested(ctx, item, config, depth + 1).await);
                    }
                    Ok(answers)
                }
                other => Err(format!("unknown query kind `{other}`")),
            }
        })
    }
}

impl Fanout {
    async fn nested(&self, ctx: &ToolContext, item: ChildPrompt, config: &RlmConfig, depth: u32) -> ChildAnswer {
        let text = item.context.unwrap_or_default();
        let meta = json!({"chars": text.chars().count(), "lines": text.lines().count(), "preview": preview(&text)});
        let source = Source { text: Arc::new(text), kind: ContextKind::Text, meta: meta.clone() };
        let mut session = match RlmSession::open(
            ctx,
            "sub_rlm",
            source,
            config.clone(),
            depth,
            self.child.secret_env.clone(),
        )
        .await
        {
            Ok(s) => s,
            Err(e) => {
                return ChildAnswer {
                    result: Err(format!("sub_rlm could not start: {e}")),
                    usage: ChildUsage::default(),
                };
            }
        };
        let mut usage = ChildUsage::default();
        let mut messages = vec![Message::user(format!("{}\n\n`_context`: {meta}", item.prompt))];
        let mut result = Err(format!("sub_rlm: the child model did not call finalize() within {NESTED_STEPS} steps"));
        for _ in 0..NESTED_STEPS {
            let reply =
                self.child.converse(NESTED_SYSTEM, &messages, &config.child_model, config.sub_query_timeout).await;
            let (text, step_usage) = match reply {
                Ok(r) => r,
                Err(e) => {
                    result = Err(format!("sub_rlm: {e}"));
                    break;
                }
            };
            usage.add(&step_usage);
            let code = python_block(&text);
            let outcome = match session.eval(ctx, &code, self).await {
                Ok(o) => o,
                Err(e) => {
                    result = Err(format!("sub_rlm: {e}"));
                    break;
                }
            };
            usage.add(&outcome.usage);
            if let Some((value, _)) = outcome.final_value {
                // JSON text: the bootstrap's `sub_rlm` parses it back to the value.
                result = Ok(value.to_string());
                break;
            }
            let mut feedback = crate::repl::truncate(&outcome.stdout, 4000).to_string();
            if let Some(error) = &outcome.error {
                feedback.push_str(&format!("\nError:\n{}", crate::repl::truncate(error, 2000)));
            }
            messages.push(Message::assistant_text(text));
            messages.push(Message::user(format!("Output:\n{feedback}")));
        }
        session.close().await;
        ChildAnswer { result, usage }
    }
}

/// The first ```python (or bare ```) block of a reply, else the whole reply.
pub fn python_block(text: &str) -> String {
    for fence in ["```python", "```py", "```"] {
        if let Some(start) = text.find(fence) {
            let body = &text[start + fence.len()..];
            let body = body.strip_prefix('\n').unwrap_or(body);
            if let Some(end) = body.find("```") {
                return body[..end].to_string();
            }
        }
    }
    text.to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "fanout_tests.rs"]
mod tests;
