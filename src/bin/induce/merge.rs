//! `induce merge`: join the shard directories of one run.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use induce::explain::pipeline::{RunWriter, format_table, merge_runs};

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shard directories, in any order.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Output directory of the merged run.
    #[arg(long)]
    pub out: PathBuf,
}

/// Runs `induce merge`.
pub fn run(a: MergeArgs) -> Result<()> {
    let merged = merge_runs(&a.dirs)?;
    let w = RunWriter::create(&a.out)?;
    w.finish(&merged.config, &merged.summary, &merged.runs)?;
    print!("{}", format_table(&[&merged.summary]));
    println!("merged {} shards into {}", a.dirs.len(), a.out.display());
    Ok(())
}
