//! `quiver search QUERY [--limit N] [--domain D] [--scope deferred|all] [--json]`
//!
//! Ranks as `tool_search` does: with the search model tool search uses
//! (`search_model`), and says which ranking answered.

use std::process::ExitCode;

use quiver_engine::canonical;
use quiver_engine::{DomainFilter, Scope, SearchOptions};
use serde_json::json;

use crate::setup;

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ScopeArg {
    Deferred,
    All,
}

#[derive(clap::Args)]
pub struct Args {
    query: String,
    #[arg(long, default_value_t = 5)]
    limit: usize,
    #[arg(long)]
    domain: Option<String>,
    #[arg(long, value_enum, default_value = "deferred")]
    scope: ScopeArg,
    /// Treat QUERY as a regular expression over names, aliases and descriptions.
    #[arg(long)]
    regex: bool,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    audience: setup::AudienceArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().ok();
    let engine = setup::engine(cwd.as_deref(), None)?;
    let audience = args.audience.audience();
    let options = SearchOptions {
        limit: args.limit.clamp(1, 20),
        domain: match args.domain.as_deref() {
            None => DomainFilter::All,
            Some(d) => d.parse().map_err(|e: quiver_engine::NameError| anyhow::anyhow!("--domain: {e}"))?,
        },
        regex: args.regex,
        scope: match args.scope {
            ScopeArg::Deferred => Scope::Deferred,
            ScopeArg::All => Scope::All,
        },
    };
    let choice = crate::search_model::model_choice()?;
    if let Some(model) = crate::search_model::meaning(&choice) {
        engine.attach_meaning(&*model);
        wait_for_vectors(&engine);
    }
    let found = engine.search_found(&args.query, &options, &audience, &[]).map_err(anyhow::Error::msg)?;
    let hits = found.tools;
    let ranking = match found.ranking {
        quiver_search::Ranking::Lexical => "lexical".to_string(),
        other => format!("{}; model: {}", other.as_str(), choice.describe()),
    };
    if args.json {
        let rows: Vec<_> = hits
            .iter()
            .map(|t| {
                json!({
                    "name": t.spec.name,
                    "domain": t.spec.domain,
                    "risk": t.spec.risk.as_str(),
                    "state": engine.lifecycle().canonical_state(&t.spec, &audience).as_str(),
                    "aliases": engine.lifecycle().aliases_of(&t.spec.name),
                    "description": t.spec.description,
                })
            })
            .collect();
        let model = (found.ranking != quiver_search::Ranking::Lexical).then(|| choice.label());
        let body = json!({ "query": args.query, "matches": rows, "ranking": found.ranking.as_str(), "model": model });
        setup::out(&canonical::to_string_pretty(&body));
    } else {
        if hits.is_empty() {
            setup::out("no match");
        }
        for (i, t) in hits.iter().enumerate() {
            setup::out(&format!("{:>2}. {:<24} [{}] {}", i + 1, t.spec.name, t.spec.domain, t.spec.description));
        }
        setup::out(&format!("ranking: {ranking}"));
    }
    Ok(ExitCode::SUCCESS)
}

/// A one-shot search waits for an installed model's vectors (a cold build of
/// a few hundred tools takes seconds; cached, milliseconds) rather than
/// answering lexically; a broken model is reported and the search is lexical.
fn wait_for_vectors(engine: &quiver_engine::Engine) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        match engine.meaning_state() {
            Some(quiver_search::MeaningState::Building) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Some(quiver_search::MeaningState::Failed(why)) => {
                tracing::warn!("search model: {why}; ranking by words alone");
                return;
            }
            _ => return,
        }
    }
}
