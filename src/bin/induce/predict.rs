//! `induce predict`: every node's predicted class and class probabilities, as CSV.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use induce::methods::load_black_box_with_arch;
use induce::models::io::checkpoint::atomic_write;
use induce::rl::Kernel;
use induce::run::{load_data, predict, write_predictions_csv};

use crate::args::{DataArgs, ModelArgs};
use crate::pick_device;

#[derive(Debug, Args)]
pub struct PredictArgs {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Output CSV (`node,label,p0,…`), written atomically [default: stdout].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `induce predict`.
pub fn run(a: PredictArgs) -> Result<()> {
    let dev = pick_device(a.data.backend)?;
    let data = load_data(&a.data.data, a.data.format.format, a.data.seed)?;
    let loaded = load_black_box_with_arch(
        &a.model.black_box,
        a.model.arch.as_deref(),
        &data,
        Kernel::Host,
        &dev,
    )?;
    let lp = predict(&data, loaded.black_box.as_ref())?;
    match &a.out {
        Some(path) => {
            let mut csv = Vec::new();
            write_predictions_csv(&lp, &mut csv)?;
            atomic_write(path, &csv)?;
            eprintln!(
                "{} nodes, {} classes -> {}",
                lp.num_nodes(),
                lp.num_classes(),
                path.display()
            );
        }
        None => write_predictions_csv(&lp, std::io::stdout().lock())?,
    }
    Ok(())
}
