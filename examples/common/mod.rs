//! Shared command line of the per-dataset examples (`ba_shapes`, `tree_cycles`, `tree_grid`).

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;
use induce::experiment::{ExperimentConfig, run};
use induce::graph::generators::SyntheticKind;
use induce::models::device::{BackendKind, default_backend, device};
use induce::pipeline::format_table;
use induce::progress::Bars;
use induce::rl::Reward;

/// Generate the benchmark, train the black-box GCN (or load one), train InduCE, explain the test
/// targets and print the paper's table; results go to `--out`.
#[derive(Debug, Parser)]
pub struct Args {
    /// Seed of everything (generator, split, black box, policy, sampling).
    #[arg(long, default_value_t = induce::DEFAULT_SEED)]
    pub seed: u64,
    /// Load this black-box checkpoint (`.bpk` with its `.json`) instead of training one.
    #[arg(long)]
    pub black_box: Option<PathBuf>,
    /// Output directory (default: runs/<dataset>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Training episodes M (default: the paper's, 80 on BA-Shapes and 500 on the trees).
    #[arg(long)]
    pub episodes: Option<usize>,
    /// Reward: `shaped` (default) or `paper`.
    #[arg(long, default_value = "shaped")]
    pub reward: String,
    /// Smoke run of under a minute (few epochs, 10 targets).
    #[arg(long)]
    pub quick: bool,
    /// Backend: flex, ndarray or cuda (default: $INDUCE_BACKEND, else flex).
    #[arg(long)]
    pub backend: Option<String>,
    /// No progress bars.
    #[arg(long)]
    pub no_progress: bool,
}

/// Parses the command line and runs the experiment on `kind`; an error is printed as one clear
/// message (with its causes) and a non-zero exit code.
pub fn main_for(kind: SyntheticKind) -> std::process::ExitCode {
    exit(run_for(kind, Args::parse()))
}

/// The exit of every example: success, or the error on one line (`error: ...`) and code 1.
pub fn exit(result: Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", message(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, leaving out a cause already quoted by its parent.
pub fn message(e: &anyhow::Error) -> String {
    let mut out = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !out.contains(&c) {
            out = format!("{out}: {c}");
        }
    }
    out
}

fn run_for(kind: SyntheticKind, args: Args) -> Result<()> {
    let backend: BackendKind = match &args.backend {
        Some(name) => name.parse()?,
        None => default_backend()?,
    };
    let dev = device(backend)?;
    let mut cfg = ExperimentConfig::paper(kind.name(), args.seed);
    cfg.black_box = args.black_box.clone();
    if let Some(m) = args.episodes {
        anyhow::ensure!(m > 0, "--episodes must be at least 1");
        cfg.inductive.episodes = m;
        cfg.transductive.episodes = m;
    }
    let reward = match args.reward.as_str() {
        "shaped" => Reward::shaped(),
        "paper" => Reward::paper(),
        other => anyhow::bail!("unknown reward `{other}` (expected `shaped` or `paper`)"),
    };
    cfg.inductive.env.reward = reward;
    cfg.transductive.env.reward = reward;
    if args.quick {
        cfg = cfg.quick();
    }
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("runs").join(kind.name()));
    let summary = run(&cfg, None, &out, &dev, &Bars::new(!args.no_progress))?;
    print!("{}", format_table(&[&summary]));
    println!("results in {}", out.display());
    Ok(())
}
