//! `induce eval`: the paper-style table of runs side by side.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use induce::explain::pipeline::{format_table, read_run};

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Run directories.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
}

/// Runs `induce eval`.
pub fn run(a: EvalArgs) -> Result<()> {
    let runs = a.dirs.iter().map(read_run).collect::<Result<Vec<_>, _>>()?;
    for (i, r) in runs.iter().enumerate() {
        if runs.len() > 1 {
            println!("run {}: {}", i + 1, r.dir.display());
        }
    }
    let s: Vec<_> = runs.iter().map(|r| &r.summary).collect();
    print!("{}", format_table(&s));
    Ok(())
}
