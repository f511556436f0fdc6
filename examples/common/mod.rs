//! Shared command line of the per-dataset examples: the generated benchmarks (`ba_shapes`,
//! `tree_cycles`, `tree_grid`) and the real graphs (`cora`, `citeseer`, `amazon_photo`,
//! `ogbn_arxiv`).

// Each example uses only part of this module (the generated or the real-graph entry point).
#![allow(dead_code)]

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;
use induce::cli::{Bars, error_line};
use induce::experiment::{ExperimentConfig, run};
use induce::graph::generators::SyntheticKind;
use induce::models::device::{BackendKind, device};
use induce::pipeline::format_table;
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
    /// Reward: shaped (default) or paper.
    #[arg(long, default_value = "shaped", value_name = "shaped|paper")]
    pub reward: Reward,
    /// Smoke run of under a minute (few epochs, 10 targets).
    #[arg(long)]
    pub quick: bool,
    /// Backend: flex, ndarray, vulkan, cuda or cube-cpu, as compiled in (default: $INDUCE_BACKEND,
    /// else flex).
    #[arg(long)]
    pub backend: Option<BackendKind>,
    /// No progress bars.
    #[arg(long)]
    pub no_progress: bool,
    /// The data file or folder (real-graph examples; the generated ones ignore it).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Hidden width of the black-box GCN [default: 20; 128 on Amazon-Photo, as the paper].
    #[arg(long)]
    pub hidden: Option<usize>,
    /// Black-box training epochs [default: the paper's 1000].
    #[arg(long)]
    pub epochs: Option<usize>,
    /// Explain at most this many evaluation targets.
    #[arg(long)]
    pub max_targets: Option<usize>,
    /// Methods to run, comma-separated [default: InduCE's inductive, inductive-best-of-k,
    /// transductive, inductive-del-only, untrained; the baselines random, cf-gnnexplainer,
    /// cf-gnnexplainer++, cf2, pgexplainer].
    #[arg(long, value_delimiter = ',')]
    pub methods: Vec<induce::Method>,
    /// Budget of every baseline (random masks, optimisation steps, PGExplainer epochs)
    /// [default: each method's authors'].
    #[arg(long)]
    pub iterations: Option<usize>,
    /// Work on the graph's largest connected component with a seeded 80/20 split (on
    /// Amazon-Photo: 7,487 nodes, 119,043 edges, the paper's Amazon graph, instead of a seeded
    /// node's 3-hop neighbourhood).
    #[arg(long)]
    pub largest_component: bool,
}

/// How a real-graph example turns its file into the experiment's dataset.
#[derive(Debug, Clone, Copy)]
pub enum Protocol {
    /// The whole graph; a seeded 80/20 split when the file has none (gnn-benchmark npz).
    Whole,
    /// The paper's Amazon-Photo protocol: a seeded random central node, its `hops`-hop
    /// neighbourhood as the graph, a seeded 80/20 split.
    Neighbourhood { hops: u32 },
}

/// Parses the command line and runs the experiment on a real graph read from `--data` (default
/// `default_path`, relative to the repository).
pub fn main_for_file(
    name: &str,
    default_path: &str,
    protocol: Protocol,
    hidden: usize,
) -> std::process::ExitCode {
    induce::models::device::install_env_settings();
    exit(run_file(
        name,
        default_path,
        protocol,
        hidden,
        Args::parse(),
    ))
}

fn run_file(
    name: &str,
    default_path: &str,
    protocol: Protocol,
    hidden: usize,
    args: Args,
) -> Result<()> {
    use anyhow::Context;
    let path = args
        .data
        .clone()
        .unwrap_or_else(|| PathBuf::from(default_path));
    let path_str = path.display().to_string();
    let mut data = induce::run::load_data(&path_str, None, args.seed)
        .with_context(|| format!("loading {name} (pass --data PATH)"))?;
    data = match protocol {
        _ if args.largest_component => data.largest_component(0.8, args.seed)?,
        Protocol::Whole => data,
        Protocol::Neighbourhood { hops } => data.random_neighbourhood(hops, 0.8, args.seed)?.0,
    };
    let mut cfg = config(name, &args)?;
    // Recorded absolute, so that `induce render` / `induce report` reopen the run from any
    // directory (as `induce explain` records its paths).
    cfg.dataset = std::path::absolute(&path)
        .unwrap_or(path)
        .display()
        .to_string();
    cfg.black_box_hidden = args.hidden.unwrap_or(hidden);
    let dev = pick_device(&args)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(name));
    let summary =
        induce::experiment::run_on(&cfg, &data, &out, &dev, &Bars::new(!args.no_progress))?;
    if matches!(protocol, Protocol::Neighbourhood { .. }) || args.largest_component {
        // The run's graph exists only in memory: keep it beside the results, so that
        // `induce render` / `induce report` can draw its explanations later.
        induce::graph::io::save_npz(&data, out.join("data.npz"))?;
    }
    print!("{}", format_table(&[&summary]));
    println!("results in {}", out.display());
    Ok(())
}

fn pick_device(args: &Args) -> Result<induce::Device> {
    Ok(backend(args.backend)?.1)
}

/// The backend named by `--backend` (else `$INDUCE_BACKEND`, else the first compiled in) and
/// its device.
pub fn backend(kind: Option<BackendKind>) -> Result<(BackendKind, induce::Device)> {
    let kind = match kind {
        Some(kind) => kind,
        None => BackendKind::from_env_or_default()?,
    };
    Ok((kind, device(kind)?))
}

/// The experiment configuration the options give, for a dataset family named `name`.
fn config(name: &str, args: &Args) -> Result<ExperimentConfig> {
    let mut cfg = ExperimentConfig::paper(name, args.seed);
    cfg.black_box = args
        .black_box
        .as_ref()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()));
    if let Some(m) = args.episodes {
        anyhow::ensure!(m > 0, "--episodes must be at least 1");
        cfg.inductive.train.episodes = m;
        cfg.transductive.train.episodes = m;
    }
    if let Some(e) = args.epochs {
        anyhow::ensure!(e > 0, "--epochs must be at least 1");
        cfg.black_box_epochs = e;
    }
    if let Some(h) = args.hidden {
        cfg.black_box_hidden = h;
    }
    let reward = args.reward;
    cfg.inductive.env.reward = reward;
    cfg.transductive.env.reward = reward;
    if !args.methods.is_empty() {
        cfg.methods = args.methods.clone();
    }
    if let Some(k) = args.iterations {
        anyhow::ensure!(k > 0, "--iterations must be at least 1");
        cfg.baselines = cfg.baselines.with_iterations(k);
    }
    if args.quick {
        cfg = cfg.quick();
    }
    if let Some(k) = args.max_targets {
        cfg.max_targets = Some(cfg.max_targets.map_or(k, |q| q.min(k)));
    }
    Ok(cfg)
}

/// Parses the command line and runs the experiment on `kind`; an error is printed as one clear
/// message (with its causes) and a non-zero exit code.
pub fn main_for(kind: SyntheticKind) -> std::process::ExitCode {
    induce::models::device::install_env_settings();
    exit(run_for(kind, Args::parse()))
}

/// The exit of every example: success, or the error on one line (`error: ...`) and code 1.
pub fn exit(result: Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_line(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

fn run_for(kind: SyntheticKind, args: Args) -> Result<()> {
    let dev = pick_device(&args)?;
    let cfg = config(kind.name(), &args)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(kind.name()));
    let summary = run(&cfg, None, &out, &dev, &Bars::new(!args.no_progress))?;
    print!("{}", format_table(&[&summary]));
    println!("results in {}", out.display());
    Ok(())
}
