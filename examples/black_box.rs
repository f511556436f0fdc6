//! Train (or import) the black-box GCN on a dataset and report its accuracy.
//!
//! ```text
//! cargo run --release --example black_box -- --dataset tree-cycles
//! cargo run --release --example black_box -- --npz ../shared/reference/syn1.npz \
//!     --weights ../shared/reference/syn1_gcn.safetensors
//! ```
//!
//! Writes `black_box.bpk` (+ `black_box.json`, its config), `report.json` and `run.json` (the
//! arguments) into `--out` (default `runs/black-box/<dataset>`), which `induce explain
//! --black-box DIR` and `induce train --black-box DIR` then read.

mod common;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use induce::graph::generators::SyntheticKind;
use induce::graph::io::{load_gnn_benchmark_npz, load_reference_npz};
use induce::graph::{Dataset, Split};
use induce::models::gcn::train::split_accuracy;
use induce::models::io::checkpoint::{atomic_write, save_gcn};
use induce::models::io::reference::load_reference_gcn;
use induce::models::{GcnBlackBox, GcnConfig, GcnTrainingConfig, train_gcn};

/// npz layouts this example reads.
#[derive(Debug, Clone, Copy, ValueEnum, serde::Serialize)]
enum Format {
    /// The reference layout (`edge_index`, `features`, `labels`, `train_idx`, ...).
    Reference,
    /// The gnn-benchmark layout (`adj_*`, `attr_*`, `labels`): Cora, CiteSeer, Amazon-Photo.
    GnnBenchmark,
}

/// Train or import the black-box GCN and report train/test accuracy.
#[derive(Debug, Parser, serde::Serialize)]
struct Args {
    /// Built-in benchmark to generate: ba-shapes, tree-cycles or tree-grid.
    #[arg(long, default_value = "tree-cycles", conflicts_with = "npz")]
    dataset: String,
    /// Read the graph from an npz file instead of generating one.
    #[arg(long)]
    npz: Option<PathBuf>,
    /// Layout of `--npz`.
    #[arg(long, value_enum, default_value = "reference")]
    format: Format,
    /// Import these reference weights (SafeTensors) instead of training.
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Seed of the generator, the split (when the data has none) and the initialisation.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Training epochs (paper: 1000).
    #[arg(long, default_value_t = 1000)]
    epochs: usize,
    /// Backend: flex, ndarray, vulkan, cuda or cube-cpu, as compiled in (default: $INDUCE_BACKEND,
    /// else flex).
    #[arg(long)]
    backend: Option<induce::BackendKind>,
    /// Output directory (default: runs/black-box/<dataset>).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn load(args: &Args) -> Result<Dataset> {
    let Some(path) = &args.npz else {
        let kind: SyntheticKind = args.dataset.parse()?;
        return Ok(kind.generate(args.seed)?);
    };
    let mut data = match args.format {
        Format::Reference => load_reference_npz(path)?,
        Format::GnnBenchmark => load_gnn_benchmark_npz(path)?,
    };
    for note in &data.notes {
        eprintln!("note: {note}");
    }
    if data.split.train.is_empty() {
        eprintln!(
            "note: {} has no split; using a seeded random 80/20 split",
            path.display()
        );
        data.split = Split::random(data.graph.num_nodes(), 0.8, args.seed)?;
    }
    Ok(data)
}

fn main() -> std::process::ExitCode {
    induce::models::device::install_env_settings();
    common::exit(run(Args::parse()))
}

fn run(args: Args) -> Result<()> {
    if args.epochs == 0 && args.weights.is_none() {
        bail!("--epochs must be at least 1");
    }
    let (kind, dev) = common::backend(args.backend)?;
    let data = load(&args)?;
    let g = &data.graph;
    println!(
        "{}: {} nodes, {} edges, {} features, {} classes ({} backend)",
        data.name,
        g.num_nodes(),
        g.num_edges(),
        g.features().dim(),
        g.num_classes(),
        kind
    );
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("runs/black-box").join(&data.name));
    let config = GcnConfig::new(g.features().dim(), g.num_classes()).with_init_seed(args.seed);
    let (model, config) = match &args.weights {
        Some(w) => {
            let m = load_reference_gcn(w, &dev)?;
            let c = GcnConfig::new(m.input_dim(), m.num_classes()).with_hidden(m.hidden());
            (m, c)
        }
        None => {
            let cfg = GcnTrainingConfig::new(config.clone()).with_epochs(args.epochs);
            let (m, r) = train_gcn(&data, &cfg, &dev)?;
            println!(
                "trained {} epochs in {:.2} s, final loss {:.4}",
                r.epochs, r.seconds, r.final_loss
            );
            (m, config)
        }
    };
    let bb = GcnBlackBox::new(model.clone(), &dev);
    let (train, test) = split_accuracy(&bb, &data)?;
    let pct = |a: Option<f64>| a.map_or("- (empty split)".into(), |a| format!("{:.2}%", 100.0 * a));
    println!("train accuracy {}  test accuracy {}", pct(train), pct(test));
    save_gcn(&model, &config, out.join("black_box.bpk")).context("saving the model")?;
    let report = serde_json::json!({
        "dataset": data.name,
        "nodes": g.num_nodes(),
        "edges": g.num_edges(),
        "train_accuracy": train,
        "test_accuracy": test,
    });
    atomic_write(
        out.join("report.json"),
        &serde_json::to_vec_pretty(&report)?,
    )?;
    atomic_write(out.join("run.json"), &serde_json::to_vec_pretty(&args)?)?;
    println!("wrote {}", out.display());
    Ok(())
}
