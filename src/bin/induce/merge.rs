//! `induce merge`: join the shard directories of one run.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use induce::explain::pipeline::{RunWriter, format_table, merge_runs, merge_shard_root};

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shard directories, in any order (or --from and --count).
    #[arg(required_unless_present = "from", conflicts_with = "from")]
    pub dirs: Vec<PathBuf>,
    /// The root of an array run (`induce slurm`): its shards are ROOT/shard-1 ..= ROOT/shard-N;
    /// a missing or interrupted one is named (index and directory).
    #[arg(long, requires = "count", value_name = "ROOT")]
    pub from: Option<PathBuf>,
    /// The number of shards under --from.
    #[arg(long, value_name = "N")]
    pub count: Option<usize>,
    /// Output directory of the merged run (an existing run there is replaced: merging again
    /// gives the same run).
    #[arg(long)]
    pub out: PathBuf,
}

/// Runs `induce merge`.
pub fn run(a: MergeArgs) -> Result<()> {
    let (merged, n) = match (&a.from, a.count) {
        (Some(root), Some(count)) => (merge_shard_root(root, count)?, count),
        _ => (merge_runs(&a.dirs)?, a.dirs.len()),
    };
    let w = RunWriter::create(&a.out)?;
    w.finish(&merged.config, &merged.summary, &merged.runs)?;
    print!("{}", format_table(&[&merged.summary]));
    println!("merged {n} shards into {}", a.out.display());
    Ok(())
}
