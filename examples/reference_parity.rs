//! Parity with the authors' numerics (`docs/PARITY.md`): greedy inference with their
//! shipped policy, in the reference-compatibility configuration, on each dataset's eval targets,
//! compared with their shipped explanations.
//!
//! ```text
//! cargo run --release --example reference_parity -- --data ../shared/reference
//! ```
//!
//! Prints `syn1: N/76 identical` (and syn4, syn5), every differing target with its first
//! differing step, and writes `parity.json` into `--out` (default `runs/parity`). Exits with an
//! error when a dataset misses its required count (syn1 76, syn4 72, syn5 128).

mod common;

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Parser;
use induce::harness::ParityReport;
use induce::harness::parity::{REQUIRED, run_dataset_with};
use induce::rl::Kernel;

/// Reproduce the InduCE authors' shipped inductive explanations with the reference preset.
#[derive(Debug, Parser)]
struct Args {
    /// Directory holding the reference export (`synX.npz`, `synX_gcn.safetensors`,
    /// `synX_policy.safetensors`, `synX_inductive_expected.json`).
    #[arg(long, default_value = "../shared/reference")]
    data: PathBuf,
    /// Datasets to check, in order.
    #[arg(long, value_delimiter = ',', default_value = "syn1,syn4,syn5")]
    datasets: Vec<String>,
    /// Backend: flex, ndarray, vulkan, cuda or cube-cpu, as compiled in (default: $INDUCE_BACKEND,
    /// else flex).
    #[arg(long)]
    backend: Option<induce::BackendKind>,
    /// Policy and black-box implementation: `burn` (default; the exact reproduction) or `host`
    /// (the fused CPU kernels, same functions in another summation order).
    #[arg(long, default_value = "burn")]
    kernel: Kernel,
    /// Output directory for `parity.json`.
    #[arg(long, default_value = "runs/parity")]
    out: PathBuf,
}

fn main() -> std::process::ExitCode {
    induce::models::device::install_env_settings();
    common::exit(run(Args::parse()))
}

fn run(args: Args) -> Result<()> {
    let (kind, dev) = common::backend(args.backend)?;
    let kernel = args.kernel;
    let mut report = ParityReport::default();
    for name in &args.datasets {
        let d = run_dataset_with(&args.data, name, &dev, kernel)?;
        println!(
            "{}: {}/{} identical ({:.2} s, {kind} backend)",
            d.name, d.identical, d.total, d.seconds
        );
        for (m, t) in d.mismatches.iter().zip(&d.divergences) {
            println!("  {m}");
            println!("    where it leaves the authors' path: {}", t.divergence);
        }
        report.datasets.push(d);
    }
    let path = report.write(&args.out)?;
    println!("wrote {}", path.display());
    if !report.passes() {
        let need: Vec<String> = REQUIRED
            .iter()
            .map(|(n, t, r)| format!("{n} {r}/{t}"))
            .collect();
        bail!("parity below the required counts ({})", need.join(", "));
    }
    Ok(())
}
