//! `induce report`: one self-contained HTML report of runs.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::pick_device;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run directories.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Output file [default: DIR/report.html for one run, report.html for several].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `induce report`.
pub fn run(a: ReportArgs) -> Result<()> {
    let dev = pick_device(None)?;
    let out = a.out.unwrap_or_else(|| match a.dirs.as_slice() {
        [one] => one.join("report.html"),
        _ => PathBuf::from("report.html"),
    });
    induce::render::write_report(&a.dirs, &out, &dev)?;
    println!("{} run(s) -> {}", a.dirs.len(), out.display());
    Ok(())
}
