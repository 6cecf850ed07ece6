//! `tool_search`: the one meta-tool that is always active. It finds deferred
//! tools and loads them into the session so they join the catalog tail on the
//! next request. It never runs the tools it finds, and its own description never
//! lists tools, so the head stays byte-stable whatever is registered.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::canonical;
use crate::capabilities::Capabilities;
use crate::context::ToolContext;
use crate::domain::{Domain, DomainFilter};
use crate::input_alias::InputAlias;
use crate::names;
use crate::result::{ToolError, ToolOutput};
use crate::spec::{Risk, ToolSpec};
use crate::surface::{Scope, SearchOptions};
use crate::tool::Tool;

pub struct ToolSearch;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    #[default]
    Bm25,
    Regex,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchInput {
    /// What you need to do, in words; or `select:name1,name2` to load exact tools.
    pub query: String,
    #[serde(default)]
    pub domain: Option<DomainFilter>,
    /// Also return tools already loaded.
    #[serde(default)]
    pub include_loaded: Option<bool>,
    /// Default 5, max 20.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
    #[serde(default)]
    pub mode: Option<SearchMode>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Match {
    name: String,
    canonical_name: String,
    status: &'static str,
    title: String,
    description: String,
    domain: Domain,
    aliases: Vec<String>,
    risk: Risk,
    schema_preview: Value,
    load_token: String,
}

impl Tool for ToolSearch {
    type Input = ToolSearchInput;
    const NAME: &'static str = "tool_search";
    const DOMAIN: Domain = Domain::Meta;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;
    // Every other tool input is snake_case; this one was `includeLoaded`, as recorded calls say.
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("includeLoaded", "include_loaded")];

    fn description(&self) -> String {
        "Find and load more tools (file, git, shell jobs, web, memory, MCP servers, ...). \
         Matches become callable on your next request. `select:a,b` loads exact names."
            .into()
    }

    async fn run(&self, input: ToolSearchInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let query = input.query.trim();
        if query.is_empty() {
            return Err(ToolError::model("`query` is empty; describe the task, or use `select:name`"));
        }
        let chars = query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(ToolError::model(format!(
                "`query` is {chars} characters; tool_search matches a description of the task of up to \
                 {MAX_QUERY_CHARS}: say what you want to do, quoting only the telling lines of any output"
            )));
        }
        let limit = input.limit.unwrap_or(5);
        if !(1..=20).contains(&limit) {
            return Err(ToolError::model(format!("`limit` must be between 1 and 20, got {limit}")));
        }
        let surface = &ctx.surface;
        let session = &ctx.session;
        let loaded_before = session.loaded();
        // Tools of servers being discovered right now (a fresh machine) should
        // be findable by the first search: wait a bounded time for them.
        let pending = ctx.dispatcher.settle(ctx, DISCOVERY_WAIT).await;

        // (tool, reached through a deprecated alias)
        let mut found: Vec<(ToolSpec, bool)> = Vec::new();
        let mut not_found: Vec<String> = Vec::new();
        // How the matches were found, reported in the result; and how many of
        // them to load: every named one, else the confident ones only.
        let ranking: &str;
        let mut confident = usize::MAX;
        // Confident matches that ask for approval and were found by a request
        // that does not name their action: listed, not loaded (`load_guard.rs`).
        let mut held: Vec<String> = Vec::new();
        if let Some(list) = query.strip_prefix("select:") {
            ranking = "select";
            for raw in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                match surface.resolve_visible(raw, &ctx.audience) {
                    Some(r) => {
                        if !found.iter().any(|(t, _)| t.name == r.spec.name) {
                            found.push((r.spec, r.via_deprecated_alias));
                        }
                    }
                    None => not_found.push(raw.to_string()),
                }
            }
        } else {
            let scope = if input.include_loaded.unwrap_or(false) { Scope::DeferredAndLoaded } else { Scope::Deferred };
            let options = SearchOptions {
                limit: limit as usize,
                domain: input.domain.unwrap_or_default(),
                regex: input.mode == Some(SearchMode::Regex),
                scope,
            };
            let ranked =
                surface.search_ranked(query, &options, &ctx.audience, &loaded_before).map_err(ToolError::model)?;
            ranking = if options.regex { "regex" } else { ranked.ranking.as_str() };
            confident = ranked.confident;
            held = ranked.held;
            let named_alias = surface.deprecated_replacement(query);
            found = ranked
                .tools
                .into_iter()
                .map(|t| {
                    let via_alias = named_alias.as_deref() == Some(t.name.as_str());
                    (t, via_alias)
                })
                .collect();
        }

        // Active (head) tools are already visible: selecting one loads nothing.
        // Past the confident matches, tools are listed but not loaded, so a
        // search adds only what it is sure of to every later request.
        let to_load: Vec<String> = found
            .iter()
            .take(confident)
            .filter(|(t, _)| !surface.in_head(t, &ctx.audience) && !held.contains(&t.name))
            .map(|(t, _)| t.name.clone())
            .collect();
        let newly = session.load(&to_load);
        session.record_search(query, newly.clone());
        let loaded_after = session.loaded();

        let matches: Vec<Match> = found
            .iter()
            .map(|(tool, deprecated)| {
                let name = tool.name.clone();
                let status = if *deprecated {
                    "deprecated_alias"
                } else if loaded_after.contains(&name) || surface.in_head(tool, &ctx.audience) {
                    "loaded"
                } else {
                    "available_lazy"
                };
                Match {
                    canonical_name: name.clone(),
                    status,
                    title: title_of(&name),
                    description: tool.description.clone(),
                    domain: tool.domain,
                    aliases: surface.aliases_of(&name),
                    risk: tool.risk,
                    schema_preview: schema_preview(&tool.input_schema),
                    load_token: load_token(tool),
                    name,
                }
            })
            .collect();

        let mut next = next_instruction(&matches, &newly, &not_found);
        if !held.is_empty() {
            next.push_str(&format!(
                " {} ask{} for approval and your request does not name {} action, so {} not loaded: \
                 `select:{}` loads {}.",
                names(held.iter().map(String::as_str)),
                if held.len() == 1 { "s" } else { "" },
                if held.len() == 1 { "its" } else { "their" },
                if held.len() == 1 { "it is" } else { "they are" },
                held.join(","),
                if held.len() == 1 { "it" } else { "them" },
            ));
        }
        for note in &pending {
            next.push(' ');
            next.push_str(note);
        }
        let mut body = json!({
            "query": query,
            "ranking": ranking,
            "loadedBefore": loaded_before,
            "matches": matches,
            "loadedAfter": loaded_after,
            "nextInstruction": next,
        });
        // The same facts as `nextInstruction`'s last sentences, for a client
        // that renders the result itself (the Responses wire's note beside a
        // `tool_search_output`); present only when there is something to say,
        // so an ordinary result's bytes do not change.
        if !not_found.is_empty() {
            body["notFound"] = json!(not_found);
        }
        if !pending.is_empty() {
            body["notes"] = json!(pending);
        }
        // Canonical key order so identical searches give identical bytes.
        Ok(ToolOutput::json(canonical::sorted(&body)).with_meta("loaded", json!(newly)))
    }
}

/// How long a search waits for tool lists still being discovered.
pub const DISCOVERY_WAIT: std::time::Duration = std::time::Duration::from_secs(8);

/// The longest `query` searched, in characters. A request with a pasted
/// traceback runs to a few hundred; far beyond this a model has pasted a whole
/// log, which matches every tool a little and would come back echoed in full.
pub const MAX_QUERY_CHARS: usize = 4000;

fn next_instruction(matches: &[Match], newly: &[String], not_found: &[String]) -> String {
    let ready: Vec<&str> = matches.iter().filter(|m| m.status != "available_lazy").map(|m| m.name.as_str()).collect();
    let mut text = if matches.is_empty() {
        "No tool matched. Try other words, a different domain, or `select:` with an exact name.".to_string()
    } else if !newly.is_empty() {
        format!(
            "Loaded {}. They are callable from your next request; call them by name.",
            names(newly.iter().map(String::as_str))
        )
    } else if !ready.is_empty() {
        format!("Already available: {}. Call them directly.", names(ready.iter().copied()))
    } else {
        "Nothing loaded.".to_string()
    };
    let lazy: Vec<&str> = matches.iter().filter(|m| m.status == "available_lazy").map(|m| m.name.as_str()).collect();
    if !lazy.is_empty() {
        text.push_str(&format!(
            " Also matching, not loaded: {}; load one with `select:{}`.",
            names(lazy.iter().copied()),
            lazy[0]
        ));
    }
    if !not_found.is_empty() {
        text.push_str(&format!(" Not found: {}.", names(not_found.iter().map(String::as_str))));
    }
    text
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    it.map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// `exec_shell_cancel` → "Exec shell cancel"; `mcp__srv__get_item` → "Get item (srv)".
fn title_of(name: &str) -> String {
    let (base, server) = match names::split(name) {
        Some((server, tool)) => (tool, Some(server)),
        None => (name, None),
    };
    let words = base.replace(['_', '-'], " ");
    let mut title: String = words.chars().take(1).flat_map(char::to_uppercase).collect();
    title.push_str(&words.chars().skip(1).collect::<String>());
    match server {
        Some(s) => format!("{title} ({s})"),
        None => title,
    }
}

/// `{param: "type"}` with required ones marked, a glance before loading.
fn schema_preview(schema: &Value) -> Value {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let ty = match prop.get("type") {
                Some(Value::String(t)) => t.clone(),
                Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("|"),
                _ if prop.get("enum").is_some() => "enum".into(),
                _ => "any".into(),
            };
            let ty = if required.contains(&name.as_str()) { format!("{ty} (required)") } else { ty };
            out.insert(name.clone(), Value::String(ty));
        }
    }
    Value::Object(out)
}

/// A short fingerprint of the exact spec that was loaded, so a host can tell
/// whether a tool changed between the search and the call.
fn load_token(tool: &ToolSpec) -> String {
    let spec = json!({
        "name": tool.name,
        "description": tool.description,
        "schema": tool.input_schema,
    });
    let digest = Sha256::digest(canonical::to_string(&spec).as_bytes());
    format!("qt1-{}", &hex::encode(digest)[..16])
}
