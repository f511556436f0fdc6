//! The quality study on the paper's own graphs (`induce::quality`): every method on the
//! authors' BA-Shapes, Tree-Cycles and Tree-Grid with their GCNs and evaluation targets, over
//! several seeds: fidelity, size (mean and std over seeds), accuracy, strict accuracy,
//! 1-minimality, and stability (Jaccard of the edit sets across seeds and under 1-5 noise edges).
//!
//! ```text
//! cargo run --release --example quality -- --data ../shared/reference --out runs/quality
//! ```
//!
//! Writes `quality.json` (one row per graph, method and variant) and `quality.md` (the table)
//! into `--out`, with `config.json` beside them.

mod common;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use induce::Method;
use induce::pipeline::Progress;
use induce::quality::{QualityConfig, format_quality_table, run_quality, write_quality};

/// Every method, several seeds, on the authors' syn1 / syn4 / syn5.
#[derive(Debug, Parser)]
struct Args {
    /// Folder with synX.npz and synX_gcn.safetensors.
    #[arg(long, default_value = "../shared/reference")]
    data: PathBuf,
    /// Output folder.
    #[arg(long, default_value = "runs/quality")]
    out: PathBuf,
    /// Graphs, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "syn1,syn4,syn5")]
    graphs: Vec<String>,
    /// Number of seeds (FIRST_SEED, FIRST_SEED + 1, ...).
    #[arg(long, default_value_t = 5)]
    seeds: u64,
    /// The first seed.
    #[arg(long, default_value_t = induce::DEFAULT_SEED)]
    first_seed: u64,
    /// Methods, comma-separated [default: every method].
    #[arg(long, value_delimiter = ',')]
    methods: Vec<Method>,
    /// Skip the paper-faithful rows of the InduCE methods.
    #[arg(long)]
    no_paper_faithful: bool,
    /// Skip the stability-under-noise measurement (halves the time).
    #[arg(long)]
    no_noise: bool,
    /// Smoke run: 2 seeds, 10 targets per graph, 5 InduCE episodes, 20 baseline iterations.
    #[arg(long)]
    quick: bool,
    /// Backend: flex, ndarray, vulkan, cuda or cube-cpu, as compiled in (default: $INDUCE_BACKEND,
    /// else flex).
    #[arg(long)]
    backend: Option<induce::BackendKind>,
}

/// Prints each step with the elapsed time.
struct Log(Instant);

impl Progress for Log {
    fn message(&self, message: &str) {
        eprintln!("[{:>6.1} s] {message}", self.0.elapsed().as_secs_f64());
    }
}

fn main() -> std::process::ExitCode {
    induce::models::device::install_env_settings();
    common::exit(run(Args::parse()))
}

fn run(args: Args) -> Result<()> {
    let (_, dev) = common::backend(args.backend)?;
    let mut cfg = QualityConfig::full(&args.data);
    cfg.graphs = args.graphs.clone();
    cfg.seeds = (args.first_seed..args.first_seed + args.seeds).collect();
    if !args.methods.is_empty() {
        cfg.methods = args.methods.clone();
    }
    cfg.paper_faithful_rows = !args.no_paper_faithful;
    cfg.noise = !args.no_noise;
    if args.quick {
        cfg.seeds.truncate(2);
        cfg.max_targets = Some(10);
        cfg.max_episodes = Some(5);
        cfg.max_iterations = Some(20);
    }
    anyhow::ensure!(!cfg.seeds.is_empty(), "--seeds must be at least 1");
    let t0 = Instant::now();
    let report = run_quality(&cfg, &dev, &Log(t0))?;
    write_quality(&report, &args.out)?;
    let config = serde_json::to_vec_pretty(&cfg)?;
    induce::models::io::checkpoint::atomic_write(args.out.join("config.json"), &config)
        .with_context(|| format!("writing {}", args.out.display()))?;
    print!("{}", format_quality_table(&report.rows));
    for n in &report.notes {
        println!("note: {n}");
    }
    println!(
        "{:.1} s; results in {}",
        t0.elapsed().as_secs_f64(),
        args.out.join("quality.json").display()
    );
    Ok(())
}
