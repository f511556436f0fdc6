//! The learning curve of InduCE's policy on ONE target: the transductive schedule (a fresh
//! policy, one REINFORCE update per sampled episode, γ 0.6), printed episode by episode, then
//! what the trained policy does greedily. A diagnostic for "why does transductive find nothing
//! here?": when every episode's return is `−budget · β` and nothing flips, no sampled edit moved
//! the black box's confidence and the policy has nothing to learn from.
//!
//! ```text
//! cargo run --release --example learning_curve -- --data runs/amazon-lcc.npz \
//!     --black-box runs/amazon-lcc-bb --target 776 --lr 1e-2 --episodes 40
//! ```
//!
//! Unlike `induce explain --method transductive`, it does not stop at the first counterfactual
//! and seeds the policy from `--seed` alone (not from the target id).

mod common;

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;
use induce::EditKind;
use induce::rl::env::{EnvConfig, Episode};
use induce::rl::{Kernel, KernelPolicy, run_greedy, train_on_episodes};

/// Print the per-episode learning curve of a policy trained on one target.
#[derive(Debug, Parser)]
struct Args {
    /// Graph: a file any loader reads, or a built-in benchmark name (ba-shapes, tree-cycles,
    /// tree-grid).
    #[arg(long)]
    data: String,
    /// Black box: the authors' .safetensors GCN, a .bpk of ours or a run directory.
    #[arg(long)]
    black_box: PathBuf,
    /// The target node (original id).
    #[arg(long)]
    target: u32,
    /// Adam learning rate (the paper's: 3e-4).
    #[arg(long, default_value_t = 3e-4)]
    lr: f64,
    /// Episodes (one update each).
    #[arg(long, default_value_t = 80)]
    episodes: usize,
    /// Seed of the split (data without one), the initialisation and the sampling.
    #[arg(long, default_value_t = induce::DEFAULT_SEED)]
    seed: u64,
}

fn main() -> std::process::ExitCode {
    induce::models::device::install_env_settings();
    common::exit(run(Args::parse()))
}

fn run(args: Args) -> Result<()> {
    anyhow::ensure!(args.episodes > 0, "--episodes must be at least 1");
    anyhow::ensure!(
        args.lr.is_finite() && args.lr > 0.0,
        "--lr must be a positive number"
    );
    let device = induce::device(induce::BackendKind::from_env_or_default()?)?;
    let data = induce::run::load_data(&args.data, None, args.seed)?;
    let loaded =
        induce::methods::load_black_box(&args.black_box, &data, Default::default(), &device)?;
    let bb = loaded.black_box.as_ref();
    let mut config = induce::Preset::for_dataset(&data.name).transductive(args.seed);
    config.train.lr = args.lr;
    config.train.episodes = args.episodes;
    config.train.batch_size = 1;
    let env = EnvConfig::default();
    let mut episodes = vec![Episode::new(&data.graph, bb, args.target, &env)?];
    let ep = &episodes[0];
    println!(
        "target {}: {} nodes, {} candidate edits, p(label {}) = {:.4}; budget {}, lr {}",
        args.target,
        ep.num_nodes(),
        ep.candidates().len(),
        ep.original_label(),
        ep.log_prob_original().exp(),
        ep.budget(),
        args.lr
    );
    println!("episode    return  flipped  edits");
    let dims = (data.graph.features().dim(), data.graph.num_classes());
    let policy = train_on_episodes(&mut episodes, dims, &config, &device, |s| {
        println!(
            "{:7} {:9.3} {:8} {:6.1}",
            s.epoch,
            s.mean_return,
            s.flipped > 0.0,
            s.mean_edits
        );
    })?;
    let mut ep = Episode::new(&data.graph, bb, args.target, &env)?;
    run_greedy(&KernelPolicy::new(&policy, Kernel::Host, &device), &mut ep)?;
    let adds = ep
        .edits()
        .iter()
        .filter(|e| e.kind == EditKind::Add)
        .count();
    println!(
        "greedy after training: {} edits ({} additions), flipped {}, p(label {}) = {:.4}",
        ep.num_edits(),
        adds,
        ep.is_flipped(),
        ep.original_label(),
        ep.log_prob_original().exp()
    );
    Ok(())
}
