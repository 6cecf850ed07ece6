//! `quiver catalog [--provider P] [--model M] [--mode M] [--format F] [--loaded a,b] [--hash]`

use std::process::ExitCode;

use quiver_engine::CatalogFormat;
use quiver_engine::Resolution;

use crate::setup;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    audience: setup::AudienceArgs,
    #[arg(long, default_value = "openai")]
    format: CatalogFormat,
    /// Tools loaded in the session, in load order (the tail).
    #[arg(long, value_delimiter = ',')]
    loaded: Vec<String>,
    /// Print `sha256:<hex> <bytes> bytes <n> tools` instead of the JSON.
    #[arg(long)]
    hash: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().ok();
    let engine = setup::engine(cwd.as_deref(), None)?;
    // An old name in --loaded means its canonical tool: aliases never enter a catalog.
    let mut loaded = Vec::new();
    for name in &args.loaded {
        match engine.lifecycle().resolve(name, engine.registry()) {
            Resolution::Canonical(n) => loaded.push(n.to_string()),
            Resolution::Alias { entry, .. } => loaded.push(entry.replacement.clone()),
            Resolution::Removed { .. } | Resolution::Unknown => {
                anyhow::bail!("--loaded names `{name}`, which is not a dispatchable tool")
            }
        }
    }
    let audience = args.audience.audience();
    let catalog = engine.catalog(&audience, &loaded);
    if args.hash {
        setup::out(&catalog.fingerprint(args.format).to_string());
    } else {
        setup::out(&catalog.to_canonical_string(args.format));
    }
    Ok(ExitCode::SUCCESS)
}
