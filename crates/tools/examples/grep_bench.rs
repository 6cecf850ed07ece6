//! Runs `grep_files`' search machinery (walk, match, collect, sort, render) on a
//! directory, outside any session, so `bench/grep_vs_rg.sh` can time it against
//! ripgrep on the same tree and pattern.
//!
//! Usage: grep_bench DIR PATTERN [-i] [--runs N]
//! Prints one line per run: `elapsed_ms=<f> matches=<n> files=<n> binary_skipped=<n>`.

#![allow(clippy::print_stdout)]

use std::time::Instant;

use quiver_tools::search::grep_files::{SearchOptions, search};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: grep_bench DIR PATTERN [-i] [--runs N]";
    let dir = std::path::PathBuf::from(args.next().ok_or_else(|| anyhow::anyhow!(usage))?).canonicalize()?;
    let mut opts = SearchOptions::new(args.next().ok_or_else(|| anyhow::anyhow!(usage))?);
    let mut runs = 1;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-i" => opts.case_insensitive = true,
            "--runs" => runs = args.next().ok_or_else(|| anyhow::anyhow!(usage))?.parse()?,
            other => anyhow::bail!("unknown argument {other}; {usage}"),
        }
    }
    for _ in 0..runs {
        let start = Instant::now();
        let report = search(&dir, &dir, &opts).map_err(|e| anyhow::anyhow!("{e}"))?;
        let rendered = report.render(&opts, ".");
        let elapsed = start.elapsed();
        std::hint::black_box(rendered);
        println!(
            "elapsed_ms={:.1} matches={} files={} binary_skipped={}",
            elapsed.as_secs_f64() * 1000.0,
            report.total_matches,
            report.files_matched,
            report.binary_skipped
        );
    }
    Ok(())
}
