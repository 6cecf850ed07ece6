//! `quiver tools [--json]`

use std::process::ExitCode;

use quiver_engine::{Audience, canonical};
use serde_json::json;

use crate::setup;

#[derive(clap::Args)]
pub struct Args {
    /// One JSON document instead of a table.
    #[arg(long)]
    json: bool,
    #[arg(long, default_value = "default")]
    provider: String,
    #[arg(long)]
    model: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().ok();
    let engine = setup::engine(cwd.as_deref(), None)?;
    let audience = Audience { provider: args.provider, model: args.model, ..Audience::default() };
    let lifecycle = engine.lifecycle();
    let mut rows = Vec::new();
    for tool in engine.registry().iter() {
        let gated = !lifecycle.visible(&tool.spec.name, &audience);
        rows.push(json!({
            "name": tool.spec.name,
            "state": lifecycle.canonical_state(&tool.spec, &audience).as_str(),
            "canonical": tool.spec.name,
            "domain": tool.spec.domain,
            "risk": tool.spec.risk.as_str(),
            "gated": gated,
        }));
    }
    for (alias, entry) in &engine.manifest().aliases {
        let target = engine.registry().get(&entry.replacement);
        rows.push(json!({
            "name": alias,
            "state": entry.state.as_str(),
            "canonical": entry.replacement,
            "domain": target.map(|t| t.spec.domain.as_str()).unwrap_or("?"),
            "risk": target.map(|t| t.spec.risk.as_str()).unwrap_or("?"),
            "gated": false,
        }));
    }
    rows.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    if args.json {
        setup::out(&canonical::to_string_pretty(&json!({ "tools": rows })));
        return Ok(ExitCode::SUCCESS);
    }
    setup::out(&format!("{:<26} {:<21} {:<22} {:<12} {}", "NAME", "STATE", "CANONICAL", "DOMAIN", "RISK"));
    for r in &rows {
        let state =
            format!("{}{}", r["state"].as_str().unwrap_or(""), if r["gated"] == true { " (gated)" } else { "" });
        setup::out(&format!(
            "{:<26} {:<21} {:<22} {:<12} {}",
            r["name"].as_str().unwrap_or(""),
            state,
            r["canonical"].as_str().unwrap_or(""),
            r["domain"].as_str().unwrap_or(""),
            r["risk"].as_str().unwrap_or("")
        ));
    }
    Ok(ExitCode::SUCCESS)
}
