//! `quiver search QUERY [--limit N] [--domain D] [--scope deferred|all] [--json]`

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
            Some(d) => d.parse().map_err(|e: String| anyhow::anyhow!("--domain: {e}"))?,
        },
        regex: args.regex,
        scope: match args.scope {
            ScopeArg::Deferred => Scope::Deferred,
            ScopeArg::All => Scope::All,
        },
    };
    let hits = engine.search_tools(&args.query, &options, &audience, &[]).map_err(anyhow::Error::msg)?;
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
        setup::out(&canonical::to_string_pretty(&json!({ "query": args.query, "matches": rows })));
    } else if hits.is_empty() {
        setup::out("no match");
    } else {
        for (i, t) in hits.iter().enumerate() {
            setup::out(&format!("{:>2}. {:<24} [{}] {}", i + 1, t.spec.name, t.spec.domain, t.spec.description));
        }
    }
    Ok(ExitCode::SUCCESS)
}
