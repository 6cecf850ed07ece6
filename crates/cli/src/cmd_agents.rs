//! `quiver agents [--json]`: the sub-agent records of every run on this
//! machine (`$QUIVER_STATE_DIR/subagents.v1.json`). A record whose quiver
//! is gone is stale; one left running by a process that died is shown as
//! interrupted, never as live.

use std::process::ExitCode;

use quiver_agent::subagent::store;
use quiver_engine::canonical;
use serde_json::json;

use crate::setup;

#[derive(clap::Args)]
pub struct Args {
    /// One JSON document instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(path) = store::store_path() else {
        anyhow::bail!("no state directory: set QUIVER_STATE_DIR");
    };
    let records = store::load(&path)?;
    if args.json {
        let agents: Vec<_> = records
            .iter()
            .map(|r| {
                let mut value = serde_json::to_value(r).unwrap_or_default();
                value["stale"] = json!(!store::boot_alive(&r.boot));
                value
            })
            .collect();
        setup::out(&canonical::to_string(&json!({ "agents": agents })));
        return Ok(ExitCode::SUCCESS);
    }
    if records.is_empty() {
        setup::out("no sub-agent records");
        return Ok(ExitCode::SUCCESS);
    }
    setup::out("ID\tNAME\tROLE\tSTATE\tBOOT\tSTARTED\tDURATION\tTOKENS");
    for r in &records {
        let state = match (&r.reason, store::boot_alive(&r.boot)) {
            (Some(reason), _) => format!("{} ({reason})", r.state),
            (None, false) => format!("{} (stale)", r.state),
            (None, true) => r.state.clone(),
        };
        setup::out(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{:.1}s\t{}",
            r.id,
            r.name,
            r.role,
            state,
            r.boot,
            r.started_ms,
            r.duration_ms as f64 / 1000.0,
            r.tokens
        ));
    }
    Ok(ExitCode::SUCCESS)
}
