//! Whole-pipeline performance table (`docs/PERFORMANCE.md`): inductive inference with the
//! authors' weights (parity preset), inductive training on BA-Shapes, transductive explanation,
//! and every baseline on the authors' graphs and GCNs (Random, CF-GNNExplainer, CF²,
//! PGExplainer; CF-GNNExplainer++ with `--plus-plus`), each with wall time and peak resident
//! memory; the CF-GNNExplainer and CF² rows give the ratio to their authors' published
//! runtimes.
//!
//! ```text
//! cargo run --release --example bench -- --out runs/bench
//! ```
//!
//! Writes `bench.json` (`{"rows": [{"name", "seconds", "targets", "seconds_per_target",
//! "peak_rss_mib", "detail"}]}`), `bench.md` (the table) and `config.json` (these arguments)
//! into `--out`.
//!
//! `--scale` instead runs InduCE on an ogbn-arxiv-sized graph (`induce::harness::scale`; several
//! minutes, most of it training the black box) and also writes `scale.json` (its report).

mod common;

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;
use induce::Method;
use induce::explain::Verdict;
use induce::harness::bench::{
    BenchRow, format_rows, gcn_epochs, inductive_inference, inductive_training, measure,
    transductive,
};
use induce::harness::scale::{self, ScaleConfig};
use induce::models::device::BackendKind;
use induce::models::io::checkpoint::atomic_write;
use induce::pipeline::TargetSpec;
use induce::rl::Kernel;
use induce::rl::RlError;
use induce::run::{ExplainJob, RunContext, explain};

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
    /// Also time CF-GNNExplainer++ (about a minute on syn1).
    #[arg(long)]
    plus_plus: bool,
    /// Run the ogbn-arxiv-scale experiment instead of the table (see `induce::harness::scale`).
    #[arg(long)]
    scale: bool,
    /// With `--scale`: a JSON file of `ScaleConfig` fields overriding the defaults.
    #[arg(long)]
    scale_config: Option<PathBuf>,
    /// Time full-batch GCN epochs (hidden 128) on the ogbn-arxiv-sized graph instead of the
    /// table: the CSR segment kernel beside Burn's scatter-add, in one run.
    #[arg(long)]
    gcn_epoch: bool,
    /// With `--gcn-epoch`: a dataset to use instead of the generated arxiv-sized graph.
    #[arg(long)]
    gcn_data: Option<String>,
    /// With `--gcn-epoch`: epochs per aggregation.
    #[arg(long, default_value_t = 3)]
    gcn_epochs: usize,
    /// Backend: flex, ndarray, vulkan, cuda or cube-cpu, as compiled in (default: $INDUCE_BACKEND,
    /// else flex).
    #[arg(long)]
    backend: Option<induce::BackendKind>,
}

fn main() -> std::process::ExitCode {
    induce::models::device::install_env_settings();
    common::exit(run(Args::parse()))
}

fn run(args: Args) -> Result<()> {
    anyhow::ensure!(args.epochs > 0, "--epochs must be at least 1");
    let (kind, dev) = common::backend(args.backend)?;
    std::fs::create_dir_all(&args.out)?;
    atomic_write(
        args.out.join("config.json"),
        &serde_json::to_vec_pretty(&args)?,
    )?;
    let kernels: &[Kernel] = if args.compare_burn {
        &[Kernel::Host, Kernel::Burn]
    } else {
        &[Kernel::Host]
    };
    if args.scale {
        return run_scale(&args, &dev, kind);
    }
    if args.gcn_epoch {
        return run_gcn_epoch(&args, &dev, kind);
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
            // The cost of exact verdicts: the same search judged on the frozen neighbourhood.
            for v in [Verdict::Exact, Verdict::Neighbourhood] {
                push(transductive(&args.data, ds, cap, Kernel::Host, v, &dev)?);
            }
        }
        for ds in ["syn1", "syn4", "syn5"] {
            for r in baseline_rows(&args, ds, &dev)? {
                push(r);
            }
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

/// `--gcn-epoch`: full-batch GCN epochs, both aggregations, one table.
fn run_gcn_epoch(args: &Args, dev: &induce::Device, kind: BackendKind) -> Result<()> {
    anyhow::ensure!(args.gcn_epochs > 0, "--gcn-epochs must be at least 1");
    let data = match &args.gcn_data {
        Some(path) => induce::run::load_data(path, None, 42)?,
        None => induce::graph::generators::ArxivLikeConfig::default().generate()?,
    };
    let rows = gcn_epochs(&data, 128, args.gcn_epochs, dev)?;
    for r in &rows {
        eprintln!("{}: {:.3} s per epoch ({})", r.name, r.seconds, r.detail);
    }
    let table = format_rows(&rows);
    print!("{table}");
    let json = serde_json::json!({ "backend": kind.to_string(), "rows": rows });
    atomic_write(
        args.out.join("gcn_epoch.json"),
        &serde_json::to_vec_pretty(&json)?,
    )?;
    atomic_write(args.out.join("gcn_epoch.md"), table.as_bytes())?;
    Ok(())
}

/// The published runtimes (seconds, whole evaluation set, the InduCE paper's Table 4) of
/// CF-GNNExplainer and CF² on syn1 / syn4 / syn5.
fn published_seconds(method: Method, ds: &str) -> Option<f64> {
    let i = ["syn1", "syn4", "syn5"].iter().position(|d| *d == ds)?;
    if method == Method::CF_GNNEXPLAINER {
        Some([3964.36, 1295.66, 2382.51][i])
    } else if method == Method::CF2 {
        Some([2565.87, 165.56, 249.92][i])
    } else {
        None
    }
}

/// Every baseline and the search references (greedy, exhaustive and `--shortlist 64`, exact) on
/// the authors' graph `ds` with its GCN and evaluation targets, with its authors' settings (host
/// gradient kernel; also Burn's with `--compare-burn`); each row's detail gives the black-box
/// evaluations per target.
fn baseline_rows(args: &Args, ds: &str, dev: &induce::Device) -> Result<Vec<BenchRow>> {
    let mut methods = vec![
        Method::RANDOM,
        Method::CF_GNNEXPLAINER,
        Method::CF2,
        Method::PGEXPLAINER,
        Method::GREEDY,
        Method::EXACT,
    ];
    if args.plus_plus {
        methods.push(Method::CF_GNNEXPLAINER_PLUS_PLUS);
    }
    let mut kernels = vec![Kernel::Host];
    if args.compare_burn {
        kernels.push(Kernel::Burn);
    }
    let mut rows = Vec::new();
    for m in methods {
        // greedy also bounded: each step judges the 64 actions a first-order estimate ranks first.
        let shortlists: &[Option<usize>] = match m == Method::GREEDY {
            true => &[None, Some(64)],
            false => &[None],
        };
        for (&kernel, &shortlist) in kernels
            .iter()
            .flat_map(|k| shortlists.iter().map(move |s| (k, s)))
        {
            let gradient = m.needs_gradients() && !m.needs_training_targets();
            if kernel == Kernel::Burn && !gradient {
                continue;
            }
            let data = args.data.join(format!("{ds}.npz"));
            let bb = args.data.join(format!("{ds}_gcn.safetensors"));
            let mut job = ExplainJob::new(data.display().to_string(), bb, &[m]);
            job.targets = TargetSpec::Eval;
            job.baselines.cf_gnnexplainer.kernel = kernel;
            job.baselines.cf2.kernel = kernel;
            job.baselines.greedy.shortlist = shortlist;
            let name = match (gradient, shortlist) {
                (true, _) => format!("{m} {ds} ({kernel:?})").to_lowercase(),
                (false, Some(k)) => format!("{m} --shortlist {k} {ds}"),
                (false, None) => format!("{m} {ds}"),
            };
            rows.push(measure(name, || {
                let (_, runs) = explain(&job, &RunContext::new(dev))
                    .map_err(|e| RlError::InvalidConfig(e.to_string()))?;
                let run = &runs[0];
                let row = run.row();
                let secs = run.train_seconds + run.explain_seconds;
                let size = row
                    .metrics
                    .size_mean
                    .map_or("-".into(), |s| format!("{s:.2}"));
                let mut detail = format!(
                    "fid {:.1} %, size {size}",
                    100.0 * row.metrics.fidelity.unwrap_or(f64::NAN)
                );
                if let Some(ev) = row.metrics.evaluations_mean {
                    detail += &format!(", {ev:.0} evaluations/target");
                }
                if let Some(p) = published_seconds(m, ds) {
                    detail += &format!(", published {p} s: {:.0}x faster", p / secs);
                }
                Ok((secs, run.records.len(), detail))
            })?);
        }
    }
    Ok(rows)
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
