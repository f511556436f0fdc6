//! `induce train-black-box`: train the paper's GCN and report its accuracy.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use induce::models::io::checkpoint::{atomic_write, save_gcn};
use induce::models::{Aggregation, GcnConfig, GcnTrainingConfig, train_gcn};
use induce::run::load_data;

use crate::args::DataArgs;
use crate::pick_device;

#[derive(Debug, Args)]
pub struct TrainBlackBoxArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// Hidden width of the three graph convolutions (paper: 20; 128 on Amazon-Photo).
    #[arg(long, default_value_t = 20)]
    pub hidden: usize,
    /// Training epochs (paper: 1000).
    #[arg(long, default_value_t = 1000)]
    pub epochs: usize,
    /// How the convolutions sum messages: segment (CSR segment reduction, no atomics) or
    /// scatter-add (Burn's gather + select_assign; kept for comparison). Same model up to float
    /// rounding.
    #[arg(long, default_value = "segment", value_parser = parse_aggregation)]
    pub aggregation: Aggregation,
    /// Output directory: black_box.bpk, black_box.json and report.json.
    #[arg(long)]
    pub out: PathBuf,
}

fn parse_aggregation(s: &str) -> Result<Aggregation, String> {
    serde_json::from_value(serde_json::Value::String(s.into()))
        .map_err(|_| format!("unknown aggregation {s:?} (segment or scatter-add)"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.2} %", 100.0 * v))
}

/// Runs `induce train-black-box`.
pub fn run(a: TrainBlackBoxArgs) -> Result<()> {
    let dev = pick_device(a.data.backend)?;
    let data = load_data(&a.data.data, a.data.format.format, a.data.seed)?;
    anyhow::ensure!(
        !data.split.train.is_empty(),
        "{} has no training split: the black box cannot be trained on it",
        a.data.data
    );
    anyhow::ensure!(a.epochs > 0, "--epochs must be at least 1");
    let g = &data.graph;
    let gcfg = GcnConfig::new(g.features().dim(), g.num_classes())
        .with_hidden(a.hidden)
        .with_init_seed(a.data.seed);
    let tcfg = GcnTrainingConfig::new(gcfg.clone())
        .with_epochs(a.epochs)
        .with_aggregation(a.aggregation);
    let (model, report) = train_gcn(&data, &tcfg, &dev)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    save_gcn(&model, &gcfg, a.out.join("black_box.bpk"))?;
    let json = serde_json::json!({
        "dataset": data.name, "data": a.data.data, "seed": a.data.seed,
        "nodes": g.num_nodes(), "edges": g.num_edges(),
        "hidden": a.hidden, "epochs": a.epochs,
        "train_accuracy": report.train_accuracy, "test_accuracy": report.test_accuracy,
        "final_loss": report.final_loss, "seconds": report.seconds,
        "epoch_seconds": report.epoch_seconds,
        "first_epoch_seconds": report.first_epoch_seconds,
        "steady_epoch_seconds": report.steady_epoch_seconds, "aggregation": a.aggregation,
        "backend": format!("{dev:?}"),
    });
    atomic_write(
        a.out.join("report.json"),
        &serde_json::to_vec_pretty(&json)?,
    )?;
    println!(
        "{}: train accuracy {}, test accuracy {} ({} epochs, {:.1} s, {:.3} s per epoch) -> {}",
        data.name,
        pct(report.train_accuracy),
        pct(report.test_accuracy),
        a.epochs,
        report.seconds,
        report.epoch_seconds,
        a.out.join("black_box.bpk").display()
    );
    Ok(())
}
