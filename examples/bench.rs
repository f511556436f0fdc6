//! Whole-pipeline performance table (`docs/PERFORMANCE.md`): inductive inference with the
//! authors' weights (parity preset), inductive training on BA-Shapes, transductive explanation,
//! each with wall time and peak resident memory.
//!
//! ```text
//! cargo run --release --example bench -- --out runs/bench
//! ```
//!
//! Writes `bench.json` (`{"rows": [{"name", "seconds", "targets", "seconds_per_target",
//! "peak_rss_mib", "detail"}]}`), `bench.md` (the table) and `config.json` (these arguments)
//! into `--out`.
//!
//! `--scale` instead runs InduCE on an ogbn-arxiv-sized graph (`induce::rl::scale`; several
//! minutes, most of it training the black box) and also writes `scale.json` (its report).

mod common;

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;
use induce::models::checkpoint::atomic_write;
use induce::models::device::{BackendKind, default_backend, device};
use induce::rl::PolicyKernel;
use induce::rl::bench::{
    BenchRow, format_rows, inductive_inference, inductive_training, transductive,
};
use induce::rl::scale::{self, ScaleConfig};

/// Measure InduCE's inference, training and transductive explanation times.
#[derive(Debug, Parser, serde::Serialize)]
struct Args {
    /// Output directory.
    #[arg(long, default_value = "runs/bench")]
    out: PathBuf,
    /// The authors' reference export (syn1/syn4/syn5 graphs, GCNs and policies).
    #[arg(long, default_value = "../shared/reference")]
    data: PathBuf,
    /// Inductive training epochs (passes over the BA-Shapes training targets) to time.
    #[arg(long, default_value_t = 1)]
    epochs: usize,
    /// Also time the Burn kernel (inference and training rows) beside the host kernel.
    #[arg(long)]
    compare_burn: bool,
    /// Run the ogbn-arxiv-scale experiment instead of the table (see `induce::rl::scale`).
    #[arg(long)]
    scale: bool,
    /// With `--scale`: a JSON file of `ScaleConfig` fields overriding the defaults.
    #[arg(long)]
    scale_config: Option<PathBuf>,
    /// Backend: flex, ndarray or cuda (default: $INDUCE_BACKEND, else flex).
    #[arg(long)]
    backend: Option<String>,
}

fn main() -> std::process::ExitCode {
    common::exit(run(Args::parse()))
}

fn run(args: Args) -> Result<()> {
    anyhow::ensure!(args.epochs > 0, "--epochs must be at least 1");
    let kind: BackendKind = match &args.backend {
        Some(name) => name.parse()?,
        None => default_backend()?,
    };
    let dev = device(kind)?;
    std::fs::create_dir_all(&args.out)?;
    atomic_write(
        args.out.join("config.json"),
        &serde_json::to_vec_pretty(&args)?,
    )?;
    let kernels: &[PolicyKernel] = if args.compare_burn {
        &[PolicyKernel::Host, PolicyKernel::Burn]
    } else {
        &[PolicyKernel::Host]
    };
    if args.scale {
        return run_scale(&args, &dev, kind);
    }
    let mut rows: Vec<BenchRow> = Vec::new();
    let mut push = |r: BenchRow| {
        eprintln!("{}: {:.3} s ({})", r.name, r.seconds, r.detail);
        rows.push(r);
    };
    if args.data.join("syn1.npz").exists() {
        for ds in ["syn1", "syn5", "syn4"] {
            for &k in kernels {
                push(inductive_inference(&args.data, ds, k, &dev)?);
            }
        }
    } else {
        eprintln!(
            "{} not found: skipping the rows on the authors' graphs",
            args.data.display()
        );
    }
    for &k in kernels {
        push(inductive_training(args.epochs, k, &dev)?);
    }
    if args.data.join("syn1.npz").exists() {
        for (ds, cap) in [("syn1", 80), ("syn4", 500), ("syn5", 500)] {
            push(transductive(&args.data, ds, cap, PolicyKernel::Host, &dev)?);
        }
    }
    let table = format_rows(&rows);
    print!("{table}");
    let json = serde_json::json!({ "backend": kind.to_string(), "rows": rows });
    atomic_write(
        args.out.join("bench.json"),
        &serde_json::to_vec_pretty(&json)?,
    )?;
    atomic_write(args.out.join("bench.md"), table.as_bytes())?;
    println!("wrote {}", args.out.join("bench.json").display());
    Ok(())
}

fn run_scale(
    args: &Args,
    dev: &induce::models::burn::tensor::Device,
    kind: BackendKind,
) -> Result<()> {
    let config: ScaleConfig = match &args.scale_config {
        Some(path) => serde_json::from_slice(&std::fs::read(path)?)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
        None => ScaleConfig::default(),
    };
    atomic_write(
        args.out.join("scale-config.json"),
        &serde_json::to_vec_pretty(&config)?,
    )?;
    let (report, rows) = scale::run(&config, dev, |line| eprintln!("{line}"))?;
    let table = format_rows(&rows);
    print!("{table}");
    println!("{}", serde_json::to_string_pretty(&report)?);
    let json = serde_json::json!({ "backend": kind.to_string(), "rows": rows });
    atomic_write(
        args.out.join("bench.json"),
        &serde_json::to_vec_pretty(&json)?,
    )?;
    atomic_write(args.out.join("bench.md"), table.as_bytes())?;
    atomic_write(
        args.out.join("scale.json"),
        &serde_json::to_vec_pretty(&report)?,
    )?;
    println!("wrote {}", args.out.join("scale.json").display());
    Ok(())
}
