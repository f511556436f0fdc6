//! The GPU check in one binary, so that a single (large, LLVM-carrying) CUDA executable travels to
//! a lent GPU machine (`scripts/gpu-prep.sh` builds it, `scripts/gpu-check.sh` runs it). For each
//! backend named, in one run on one machine:
//!
//! 1. the message-passing kernels (values and both gradients) against Burn's own scatter-add
//!    composition on seeded random graphs (`induce_models::kernels::spmm::self_check`), and the policy's
//!    fused inference kernels (scoring MLP, GAT attention) against their compositions
//!    (`induce_models::kernels::fused::self_check`);
//! 2. parity with the authors' shipped explanations on syn1 / syn4 / syn5, Burn kernel
//!    (with `--reference DIR`), and where each differing target leaves the authors' path, with
//!    both kernels' margins there (a tie within float rounding or not); on a GPU backend a
//!    second time with exact `f32` dense products (`induce_models::device::set_exact_matmul`:
//!    no TF32), as `parity_exact_matmul`;
//! 3. full-batch GCN epochs (hidden 128) on the ogbn-arxiv-sized graph, the segment kernel beside
//!    the scatter-add composition;
//! 4. on the GPU backends, with `--verdict-data GRAPH`, one round of batched exact verdicts
//!    (the paper's GCN on 300 edited copies of the graph at once, every row downloaded).
//!
//! With `--explain-job CONFIG` (the `config.json` of an `induce explain` run) it does only this
//! instead: on each backend, the data and black box loaded once, the job explained
//! `--explain-repeat` times in one process, each run's explain seconds printed. The first run
//! pays the GPU's one-time costs (CubeCL compiles every kernel on its first launch, in-process);
//! later runs show the steady state a long-lived process (an audit of a whole graph, the Python
//! package) sees (the black box's caches, e.g. its graph-wide first-layer product, are kept
//! between runs; each run builds its explainers afresh). Each run's explanations are checked
//! against the first's. Relative paths in the job resolve against the current directory, as
//! for `induce explain`; its thread count is this machine's (`threads` is not part of a job).
//! Not profiled: compare its seconds with each other, not with a profiled `induce explain`.
//!
//! ```text
//! cargo run --release --example gpu_check -- --backends flex --out runs/gpu-check
//! ```
//!
//! Writes `gpu_check.json` (every number) and `config.json` into `--out`.

mod common;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Parser;
use induce::BackendKind;
use induce::harness::bench::{BenchRow, batched_verdicts, gcn_epochs};
use induce::harness::parity::run_dataset_with;
use induce::models::io::checkpoint::atomic_write;
use induce::models::kernels::spmm::self_check;
use induce::rl::Kernel;

/// Relative log-probability margin under which a parity difference counts as a tie within float
/// rounding (TF32 products on a GPU carry ~1e-3 relative error;
/// `induce_models::device::float_tolerance_on`).
const TIE_TOLERANCE: f32 = 2e-3;

/// Check and time the GPU backends against the CPU on one machine.
#[derive(Debug, Parser, serde::Serialize)]
struct Args {
    /// Backends to run, in order (e.g. cuda,vulkan,flex).
    #[arg(long, value_delimiter = ',', default_value = "flex")]
    backends: Vec<BackendKind>,
    /// The authors' reference export (syn1/syn4/syn5); parity is skipped without it.
    #[arg(long)]
    reference: Option<PathBuf>,
    /// Full-batch GCN epochs per backend and aggregation (0 skips the GCN rows).
    #[arg(long, default_value_t = 2)]
    epochs: usize,
    /// A dataset for the GCN rows instead of the generated arxiv-sized graph.
    #[arg(long)]
    gcn_data: Option<String>,
    /// A graph (e.g. the Amazon-Photo explain graph) for the batched-verdicts row, timed on the
    /// GPU backends only (`induce::harness::bench::batched_verdicts`).
    #[arg(long)]
    verdict_data: Option<String>,
    /// Episodes of the batched-verdicts row.
    #[arg(long, default_value_t = 300)]
    verdict_batch: usize,
    /// Hidden width of the batched-verdicts row (the Amazon black box's).
    #[arg(long, default_value_t = 128)]
    verdict_hidden: usize,
    /// An `induce explain` run's `config.json`: explain that job `--explain-repeat` times in
    /// one process on each backend, and nothing else.
    #[arg(long)]
    explain_job: Option<PathBuf>,
    /// Runs of `--explain-job` per backend (the first includes kernel compilation).
    #[arg(long, default_value_t = 2)]
    explain_repeat: usize,
    /// Output directory.
    #[arg(long, default_value = "runs/gpu-check")]
    out: PathBuf,
}

fn main() -> std::process::ExitCode {
    induce::models::device::install_env_settings();
    common::exit(run(Args::parse()))
}

fn run(args: Args) -> Result<()> {
    std::fs::create_dir_all(&args.out)?;
    atomic_write(
        args.out.join("config.json"),
        &serde_json::to_vec_pretty(&args)?,
    )?;
    if let Some(path) = &args.explain_job {
        return explain_repeated(&args, path);
    }
    let data = match (args.epochs, &args.gcn_data) {
        (0, _) => None,
        (_, Some(path)) => Some(induce::run::load_data(path, None, 42)?),
        (_, None) => Some(induce::graph::generators::ArxivLikeConfig::default().generate()?),
    };
    let verdict_graph = match &args.verdict_data {
        Some(path) => Some(induce::run::load_data(path, None, 42)?),
        None => None,
    };
    let mut results = Vec::new();
    let mut failed = false;
    for &kind in &args.backends {
        let mut entry = serde_json::json!({ "backend": kind.to_string() });
        let dev = match induce::models::device::device(kind) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("{kind}: {e}");
                entry["error"] = e.to_string().into();
                results.push(entry);
                failed = true;
                continue;
            }
        };
        // 1. kernels
        let start = Instant::now();
        let checks = self_check(&dev, 3)?;
        let ok = checks.iter().all(|c| c.passes(1e-4));
        failed |= !ok;
        eprintln!(
            "{kind}: kernel check {} ({:.2} s): {checks:?}",
            if ok { "passed" } else { "FAILED" },
            start.elapsed().as_secs_f64()
        );
        entry["kernel_check"] = serde_json::json!({ "passed": ok, "sizes": checks });
        // The fused inference kernels against their compositions (TF32 products there on a
        // GPU; none on the CPU backends).
        let fused = induce::models::kernels::fused::self_check(&dev, 3)?;
        let fused_ok = fused.passes(2e-3);
        failed |= !fused_ok;
        eprintln!(
            "{kind}: fused kernels {}: {fused:?}",
            if fused_ok { "passed" } else { "FAILED" },
        );
        entry["fused_check"] = serde_json::json!({ "passed": fused_ok, "max_rel": fused });
        // 2. parity, and on a GPU again with exact f32 products (no TF32)
        if let Some(dir) = &args.reference {
            entry["parity"] = parity(dir, kind, &dev, "")?.into();
            if induce::models::device::is_gpu(&dev) {
                let before = induce::models::device::exact_matmul();
                induce::models::device::set_exact_matmul(true);
                let exact = parity(dir, kind, &dev, " (exact f32 products)");
                induce::models::device::set_exact_matmul(before);
                entry["parity_exact_matmul"] = exact?.into();
            }
        }
        // Batched verdicts (GPU backends only: on the CPU they would take minutes).
        if let Some(v) = &verdict_graph
            && induce::models::device::is_gpu(&dev)
        {
            let row = batched_verdicts(
                &v.graph,
                args.verdict_batch,
                args.verdict_hidden,
                4,
                3,
                &dev,
            )?;
            eprintln!(
                "{kind}: {}: {:.4} s per call ({})",
                row.name, row.seconds, row.detail
            );
            entry["batched_verdicts"] = serde_json::to_value(row)?;
        }
        // 3. GCN epochs
        if let Some(data) = &data {
            let rows: Vec<BenchRow> = gcn_epochs(data, 128, args.epochs, &dev)?;
            for r in &rows {
                eprintln!(
                    "{kind}: {}: {:.4} s per epoch ({})",
                    r.name, r.seconds, r.detail
                );
            }
            entry["gcn_epochs"] = serde_json::to_value(rows)?;
        }
        results.push(entry);
    }
    let json = serde_json::json!({
        "threads": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "results": results,
    });
    finish(&args.out.join("gpu_check.json"), &json)?;
    anyhow::ensure!(!failed, "a backend failed its check (see above)");
    Ok(())
}

/// Writes `json` to `path` (atomically) and says so; then, with `INDUCE_PROFILE=1`, the device
/// spans (synchronised) of everything the run did, all backends.
fn finish(path: &std::path::Path, json: &serde_json::Value) -> Result<()> {
    atomic_write(path, &serde_json::to_vec_pretty(json)?)?;
    println!("wrote {}", path.display());
    for (name, secs, calls) in induce::models::timing::report() {
        eprintln!("span: {name}: {secs:.4} s in {calls} calls");
    }
    Ok(())
}

/// `--explain-job`: the job explained `--explain-repeat` times per backend in one process
/// (data and black box loaded once per backend), each run's explain seconds printed and written
/// to `explain_repeat.json`.
fn explain_repeated(args: &Args, path: &std::path::Path) -> Result<()> {
    let text =
        std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let job: induce::run::ExplainJob = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!("{}: not an explain job's config.json: {e}", path.display())
    })?;
    anyhow::ensure!(
        args.explain_repeat > 0,
        "--explain-repeat must be at least 1"
    );
    let data = induce::run::load_data(&job.data, job.format, job.seed)?;
    let mut results = Vec::new();
    let mut differs = false;
    for &kind in &args.backends {
        let dev = induce::models::device::device(kind)?;
        let kernel = job.black_box_kernel.unwrap_or(job.induce.kernel);
        let loaded = induce::methods::load_black_box_with_arch(
            &job.black_box,
            job.arch.as_deref(),
            &data,
            kernel,
            &dev,
        )?;
        let (mut seconds, mut first, mut same_all) = (Vec::new(), None, true);
        for run in 1..=args.explain_repeat {
            let ctx =
                induce::run::RunContext::new(&dev).with_loaded(&data, loaded.black_box.as_ref());
            let (_, runs) = induce::run::explain(&job, &ctx)?;
            let secs: f64 = runs.iter().map(|r| r.explain_seconds).sum();
            let explanations: Vec<_> = runs.iter().map(|r| r.explanations()).collect();
            let same = first.get_or_insert_with(|| explanations.clone()) == &explanations;
            same_all &= same;
            eprintln!(
                "{kind}: explain run {run} of {}: {secs:.3} s{}",
                args.explain_repeat,
                if same {
                    ""
                } else {
                    " (explanations DIFFER from run 1's)"
                }
            );
            seconds.push(secs);
        }
        differs |= !same_all;
        results.push(serde_json::json!({
            "backend": kind.to_string(), "explain_seconds": seconds,
            "same_explanations": same_all,
        }));
    }
    let json = serde_json::json!({
        "job": path.display().to_string(),
        "threads": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "results": results,
    });
    finish(&args.out.join("explain_repeat.json"), &json)?;
    anyhow::ensure!(
        !differs,
        "a repeated run's explanations differ from the first's"
    );
    Ok(())
}

/// Parity with the authors' explanations on syn1/4/5 (Burn kernel on `dev`), printed and as
/// JSON rows; `label` tags the printed lines.
fn parity(
    dir: &std::path::Path,
    kind: BackendKind,
    dev: &induce::Device,
    label: &str,
) -> anyhow::Result<Vec<serde_json::Value>> {
    let mut parity = Vec::new();
    for name in ["syn1", "syn4", "syn5"] {
        let d = run_dataset_with(dir, name, dev, Kernel::Burn)?;
        let not_ties = d.not_ties(TIE_TOLERANCE).len();
        eprintln!(
            "{kind}: parity{label} {name} {}/{} identical ({:.2} s); {} differences, {} of \
             them not ties within {TIE_TOLERANCE:e}",
            d.identical,
            d.total,
            d.seconds,
            d.divergences.len(),
            not_ties
        );
        for t in &d.divergences {
            eprintln!("{kind}: parity{label} {name}: {t}");
        }
        parity.push(serde_json::json!({
            "dataset": name, "identical": d.identical, "total": d.total,
            "seconds": d.seconds,
            "mismatches": d.mismatches.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
            "divergences": d.divergences, "tie_tolerance": TIE_TOLERANCE,
            "not_ties": not_ties,
        }));
    }
    Ok(parity)
}
