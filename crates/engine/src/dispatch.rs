//! Dispatch: every call, by any name it was ever known by, goes through here.
//! Name → canonical handler, old argument names rewritten, arguments checked
//! against the schema, the mode's permission applied, and deprecation notices
//! merged into result metadata.

use serde_json::{Map, Value, json};

use crate::context::ToolContext;
use crate::engine::Engine;
use crate::lifecycle::{LifecycleState, Resolution};
use crate::manifest::{AliasEntry, AliasState};
use crate::permissions::{self, Decision};
use crate::result::{ToolError, ToolResult};
use crate::transcript::Event;

impl Engine {
    /// Runs a call. Anything the model can act on comes back as an error result;
    /// only a fatal tool failure is an `Err`.
    pub async fn dispatch(&self, name: &str, args: Value, ctx: &ToolContext) -> anyhow::Result<ToolResult> {
        let Some(transcript) = &ctx.transcript else {
            return self.dispatch_unrecorded(name, args, ctx).await;
        };
        let call_id = transcript.next_call_id();
        transcript.append(&Event::ToolCall {
            call_id: call_id.clone(),
            name: name.to_string(),
            arguments: args.clone(),
        })?;
        let before = ctx.session.lazy_state();
        let result = self.dispatch_unrecorded(name, args, ctx).await?;
        transcript.append(&Event::ToolResult { call_id, name: name.to_string(), result: result.clone() })?;
        let after = ctx.session.lazy_state();
        for search in after.search_history.iter().skip(before.search_history.len()) {
            transcript.append(&Event::Search {
                turn: search.turn,
                query: search.query.clone(),
                loaded: search.loaded.clone(),
            })?;
        }
        let added: Vec<String> =
            after.loaded_lazy_tools.iter().filter(|n| !before.loaded_lazy_tools.contains(n)).cloned().collect();
        if !added.is_empty() {
            transcript.append(&Event::Load { turn: ctx.session.turn(), names: added })?;
        }
        Ok(result)
    }

    async fn dispatch_unrecorded(&self, name: &str, args: Value, ctx: &ToolContext) -> anyhow::Result<ToolResult> {
        let (canonical, alias): (&str, Option<&AliasEntry>) = match self.lifecycle().resolve(name, self.registry()) {
            Resolution::Canonical(n) => (n, None),
            Resolution::Alias { entry, .. } => (entry.replacement.as_str(), Some(entry)),
            Resolution::Removed { name, entry } => return Ok(ToolResult::error(removed_message(name, entry))),
            Resolution::Unknown => return Ok(ToolResult::error(self.unknown_message(name, ctx))),
        };
        let mut result = self.run_canonical(name, canonical, alias, args, ctx).await?;
        // Every answer to a deprecated name carries the notice, error results
        // included: those are the calls where the model most needs the new name.
        if let Some(entry) = alias.filter(|e| e.state == AliasState::Deprecated) {
            tracing::warn!(tool = name, use_instead = %entry.replacement, "deprecated tool name called");
            result.metadata.insert("_deprecation".into(), deprecation_block(name, entry));
            // The notice is part of the answer now: what the server wrote is no longer all of it.
            result.verbatim = None;
        }
        Ok(result)
    }

    async fn run_canonical(
        &self,
        name: &str,
        canonical: &str,
        alias: Option<&AliasEntry>,
        args: Value,
        ctx: &ToolContext,
    ) -> anyhow::Result<ToolResult> {
        let lifecycle = self.lifecycle();
        let Some(tool) = self.registry().get(canonical) else {
            return Ok(ToolResult::error(format!(
                "tool `{name}` is an alias of `{canonical}`, which is not available in this build"
            )));
        };

        let mut args = if args.is_null() { Value::Object(Map::new()) } else { args };
        // Models often send `null` for an optional argument; that means "absent".
        if let Value::Object(map) = &mut args {
            map.retain(|_, v| !v.is_null());
        }
        if let (Some(entry), Value::Object(map)) = (alias, &mut args) {
            for (k, v) in &entry.set_args {
                map.insert(k.clone(), v.clone());
            }
        }
        // Old argument names of recorded calls, before the schema (which refuses them) sees the call.
        if let Value::Object(map) = &mut args
            && let Err(message) = crate::input_alias::apply(canonical, tool.handler.input_aliases(), map)
        {
            return Ok(ToolResult::error(message));
        }
        if let Err(message) = tool.validator.check(canonical, &args) {
            return Ok(ToolResult::error(message));
        }
        match permissions::check(ctx.mode(), &tool.spec) {
            Decision::Allow => {}
            Decision::Deny(message) => return Ok(ToolResult::error(message)),
            Decision::Ask(question) => {
                if let Err(e) = ctx.ask(&question).await {
                    return Ok(ToolResult::error(e.to_string()));
                }
            }
        }
        // Calling a deferred tool directly works, and loads it like a search would.
        if lifecycle.canonical_state(&tool.spec, &ctx.audience) == LifecycleState::Deferred
            && lifecycle.visible(canonical, &ctx.audience)
        {
            ctx.session.load(&[canonical.to_string()]);
        }

        let mut result = match tool.handler.call(args, ctx).await {
            Ok(output) => ToolResult::ok(output),
            Err(ToolError::Model(message)) => ToolResult::error(message),
            Err(ToolError::Report(output)) => ToolResult { is_error: true, ..ToolResult::ok(output) },
            Err(ToolError::Fatal(e)) => return Err(e.context(format!("tool `{canonical}` failed"))),
        };
        if crate::spill::spill_if_large(&mut result, &tool.spec, ctx).await {
            result.verbatim = None;
        }
        Ok(result)
    }

    /// The spec of the tool a call by `name` with `arguments` (a JSON
    /// text as the client wrote it; none is `{}`) reaches, when
    /// dispatch would hand it to the tool unchanged and ask nobody: the name
    /// is the tool's own (no alias, nothing deprecated), the arguments are an
    /// object with no `null` to drop and pass the schema, the mode allows the
    /// tool outright, and calling it loads nothing (the tool is not deferred,
    /// or `session` has loaded it already). `None` means the call
    /// needs [`Engine::dispatch`]. A gateway relays such a call to the server
    /// behind as the client wrote it (see quiver-mcp's stdio call path); what
    /// the result may still need (spilling) is the caller's to check.
    pub fn passes_unchanged(
        &self,
        name: &str,
        arguments: Option<&str>,
        audience: &crate::Audience,
        session: &crate::Session,
    ) -> Option<&crate::ToolSpec> {
        match self.passes_unchanged_loading(name, arguments, audience, session)? {
            (spec, false) => Some(spec),
            (_, true) => None,
        }
    }

    /// [`Self::passes_unchanged`], except that a call which would load the
    /// tool (deferred, not loaded in `session`) passes too, saying so: a
    /// stateless client's loaded tools are not in any session here, and the
    /// caller answers with the tail that call makes.
    pub fn passes_unchanged_loading(
        &self,
        name: &str,
        arguments: Option<&str>,
        audience: &crate::Audience,
        session: &crate::Session,
    ) -> Option<(&crate::ToolSpec, bool)> {
        let lifecycle = self.lifecycle();
        match lifecycle.resolve(name, self.registry()) {
            Resolution::Canonical(canonical) if canonical == name => {}
            _ => return None,
        }
        let tool = self.registry().get(name)?;
        if !tool.validator.passes_unchanged(arguments.unwrap_or("{}")) {
            return None;
        }
        if permissions::check(audience.mode, &tool.spec) != Decision::Allow {
            return None;
        }
        let loads = lifecycle.canonical_state(&tool.spec, audience) == LifecycleState::Deferred
            && lifecycle.visible(name, audience)
            && !session.is_loaded(name);
        Some((&tool.spec, loads))
    }

    /// An unknown name: the closest names the model could have meant.
    fn unknown_message(&self, name: &str, ctx: &ToolContext) -> String {
        let lifecycle = self.lifecycle();
        let mut scored: Vec<(f64, &str)> = self
            .registry()
            .iter()
            .filter(|t| lifecycle.visible(&t.spec.name, &ctx.audience))
            .map(|t| (similarity(name, &t.spec.name), t.spec.name.as_str()))
            .filter(|(score, _)| *score >= 0.6)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        let nearest: Vec<String> = scored.iter().take(3).map(|(_, n)| format!("`{n}`")).collect();
        if nearest.is_empty() {
            format!("unknown tool `{name}`; use tool_search to find a tool for the job")
        } else {
            format!("unknown tool `{name}`; did you mean {}? (tool_search finds others)", nearest.join(", "))
        }
    }
}

fn similarity(a: &str, b: &str) -> f64 {
    let a = a.to_ascii_lowercase();
    let b = b.to_ascii_lowercase();
    if b.contains(&a) || a.contains(&b) {
        return 0.9;
    }
    strsim::jaro_winkler(&a, &b)
}

pub fn deprecation_block(name: &str, entry: &AliasEntry) -> Value {
    json!({
        "this_tool": name,
        "use_instead": entry.replacement,
        // The wire keeps saying "TBD" for no planned version: recorded
        // transcripts replay to the same bytes.
        "removed_in": entry.planned_removal_version.as_deref().unwrap_or("TBD"),
        "message": format!("Tool '{name}' is deprecated; use '{}' instead.", entry.replacement),
    })
}

fn removed_message(name: &str, entry: &AliasEntry) -> String {
    let when = entry.planned_removal_version.as_deref().map(|v| format!(" in version {v}")).unwrap_or_default();
    format!("Tool '{name}' was removed{when}; use '{}' instead.", entry.replacement)
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
