//! Whole-pipeline performance measurements (the `bench` example): inductive inference with the
//! authors' weights, inductive training, transductive explanation, with wall time and peak
//! resident memory per row.
//!
//! Peak memory is the process's high-water mark (`VmHWM` in `/proc/self/status`), reset before
//! each row by writing `5` to `/proc/self/clear_refs` (Linux ≥ 4.0); elsewhere it is `None`.
//! It includes everything resident: the loaded data, the models and the allocator's caches.

use std::path::Path;
use std::time::Instant;

use burn::tensor::Device;
use induce_graph::generators::SyntheticKind;
use induce_graph::io::load_reference_npz;
use induce_models::gcn::train::GcnTrainingConfig;
use induce_models::io::reference::load_reference_gcn;
use induce_models::{GcnConfig, train_gcn};
use serde::{Deserialize, Serialize};

use crate::harness::parity::run_dataset_with;
use induce_explain::pipeline::select_targets;
use induce_models::Kernel;
use induce_rl::induce::{InduceConfig, explain_transductive, train_inductive};
use induce_rl::{Result, RlError};

/// One measured row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRow {
    /// What was measured, e.g. `inductive inference syn1 (host)`.
    pub name: String,
    /// Wall time of the measured work (loading and black-box training excluded).
    pub seconds: f64,
    /// Number of target nodes processed.
    pub targets: usize,
    /// `seconds / targets`.
    pub seconds_per_target: f64,
    /// Peak resident memory of the process during the row, in MiB (see the module docs).
    pub peak_rss_mib: Option<f64>,
    /// A short outcome check (e.g. parity count, found counterfactuals, mean size).
    pub detail: String,
}

/// Resets the process's resident-memory high-water mark; false where unsupported.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The process's resident-memory high-water mark in bytes (`VmHWM`), if available.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Runs `work` (which returns the measured seconds, the number of targets and a detail string)
/// with the peak-memory mark reset before and read after.
pub fn measure(
    name: impl Into<String>,
    work: impl FnOnce() -> Result<(f64, usize, String)>,
) -> Result<BenchRow> {
    let reset = reset_peak_rss();
    let (seconds, targets, detail) = work()?;
    let peak = if reset { peak_rss_bytes() } else { None };
    Ok(BenchRow {
        name: name.into(),
        seconds,
        targets,
        seconds_per_target: seconds / targets.max(1) as f64,
        peak_rss_mib: peak.map(|b| b as f64 / (1024.0 * 1024.0)),
        detail,
    })
}

/// Full-batch GCN training epochs (forward, backward, Adam step) on `data`, hidden width
/// `hidden`, once per aggregation: the CSR segment kernel and Burn's scatter-add composition,
/// side by side in one run. `targets` of each row is the number of epochs and `seconds` the
/// mean of the epochs after the first (the steady state; that epoch alone for a single one, its
/// time in the detail); the segment row's detail gives the ratio to the scatter-add row and both
/// give the trained accuracy (the two models differ only by float rounding).
pub fn gcn_epochs(
    data: &induce_graph::Dataset,
    hidden: usize,
    epochs: usize,
    device: &Device,
) -> Result<Vec<BenchRow>> {
    use induce_models::Aggregation;
    let g = &data.graph;
    let mut rows: Vec<BenchRow> = Vec::new();
    for aggregation in [Aggregation::ScatterAdd, Aggregation::Segment] {
        let cfg = GcnConfig::new(g.features().dim(), g.num_classes()).with_hidden(hidden);
        let tcfg = GcnTrainingConfig::new(cfg)
            .with_epochs(epochs)
            .with_aggregation(aggregation);
        let name = format!(
            "GCN epoch {} ({} nodes, {} edges, hidden {hidden}), {}",
            data.name,
            g.num_nodes(),
            g.num_edges(),
            serde_json::to_value(aggregation)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        );
        let baseline = rows.first().map(|r| r.seconds);
        rows.push(measure(name, || {
            let (_, report) = train_gcn(data, &tcfg, device)?;
            // The steady-state epoch when there is one: the first holds the GPU kernels'
            // compilation and autotuning.
            let epoch = report.steady_epoch_seconds.unwrap_or(report.epoch_seconds);
            let mut detail = format!(
                "test accuracy {:.2} % after {epochs} epochs; first epoch {:.4} s, {}",
                100.0 * report.test_accuracy.unwrap_or(f64::NAN),
                report.first_epoch_seconds,
                match report.steady_epoch_seconds {
                    Some(_) => "the time is the mean of the later ones",
                    None => "the time is that epoch's",
                }
            );
            if let Some(b) = baseline {
                detail += &format!(", {:.2}x faster than scatter-add", b / epoch);
            }
            Ok((epoch * epochs as f64, epochs, detail))
        })?);
        // `seconds` is the mean (steady-state) epoch.
        let last = rows.last_mut().expect("pushed");
        last.seconds /= epochs as f64;
    }
    Ok(rows)
}

/// Batched exact verdicts on a device, timed: the paper's GCN (hidden `hidden`, untrained
/// weights: the time does not depend on them) on `batch` edited copies of `graph` at once
/// ([`VerdictBatch::log_probs`](induce_models::black_box::batched::VerdictBatch)), each episode
/// toggling `toggles` pairs (deletions of its own edges and additions), every node's row
/// downloaded. This is one round of verdicts of a batched explanation (today each episode's
/// verdict is the host's incremental GCN, `docs/GPU.md`). `seconds` is the mean of `reps` calls
/// after one warm-up call, the device synchronised by the download; `targets` is `batch`. The
/// detail gives the largest difference, over the first two episodes, from the model run on each
/// edited graph alone on the same device.
///
/// Errors: `batch`, `hidden` or `reps` of 0, a graph without edges, and the model's errors.
pub fn batched_verdicts(
    graph: &induce_graph::Graph,
    batch: usize,
    hidden: usize,
    toggles: usize,
    reps: usize,
    device: &Device,
) -> Result<BenchRow> {
    use induce_models::black_box::batched::VerdictBatch;
    use induce_models::kernels::tensors::{matrix, to_vec};
    let edges = graph.edges();
    if batch == 0 || hidden == 0 || reps == 0 || edges.is_empty() {
        return Err(RlError::InvalidConfig(format!(
            "batched verdicts: batch {batch}, hidden {hidden}, reps {reps} and the graph's {} \
             edges must be positive",
            edges.len()
        )));
    }
    let n = graph.num_nodes();
    let x = graph.features();
    let gcn = GcnConfig::new(x.dim(), graph.num_classes().max(2))
        .with_hidden(hidden)
        .init(device);
    let name = format!(
        "batched verdicts ({n} nodes, {} edges, {batch} episodes x {toggles} toggles, hidden \
         {hidden})",
        edges.len()
    );
    // Episode b deletes edges b, b + batch, ... and adds pairs between far-apart ids.
    let lists: Vec<Vec<(u32, u32)>> = (0..batch)
        .map(|b| {
            (0..toggles)
                .map(|k| match k % 2 {
                    0 => edges[(b + k * batch) % edges.len()],
                    _ => {
                        let u = ((b * 7919 + k * 104_729) % n) as u32;
                        let w = ((u as usize + n / 2 + k) % n) as u32;
                        (u, if w == u { (u + 1) % n as u32 } else { w })
                    }
                })
                .filter(|&(u, w)| u != w)
                .collect()
        })
        .collect();
    let all: Vec<u32> = (0..n as u32).collect();
    let rows: Vec<Vec<u32>> = vec![all; batch];
    let bound = VerdictBatch::new(&gcn, x, &edges, device)?;
    measure(name, || {
        let first = bound.log_probs(&lists, &rows)?;
        let start = Instant::now();
        for _ in 0..reps {
            bound.log_probs(&lists, &rows)?;
        }
        let seconds = start.elapsed().as_secs_f64() / reps as f64;
        let mut worst = 0f32;
        for (b, list) in lists.iter().enumerate().take(2) {
            let mut set: std::collections::BTreeSet<(u32, u32)> =
                edges.iter().map(|&(u, w)| (u.min(w), u.max(w))).collect();
            for &(u, w) in list {
                let p = (u.min(w), u.max(w));
                if !set.remove(&p) {
                    set.insert(p);
                }
            }
            let e: Vec<(u32, u32)> = set.into_iter().collect();
            let g = induce_models::GraphTensors::new(n, &e, device)?;
            let alone = to_vec(gcn.forward(matrix(x.as_slice(), n, x.dim(), device), &g));
            for (a, w) in first[b].as_slice().iter().zip(&alone) {
                worst = worst.max((a - w).abs());
            }
        }
        Ok((
            seconds,
            batch,
            format!(
                "mean of {reps} calls after a warm-up; {:.3} ms per episode; largest difference \
                 from each edited graph alone {worst:.2e}",
                1e3 * seconds / batch as f64
            ),
        ))
    })
}

/// Greedy inductive inference with the authors' shipped policy and GCN in the parity preset on
/// every eval target of `dataset` (`syn1`, `syn4`, `syn5` in `dir`); the explanation loop only.
pub fn inductive_inference(
    dir: &Path,
    dataset: &str,
    kernel: Kernel,
    device: &Device,
) -> Result<BenchRow> {
    let name = format!("inductive inference {dataset} ({})", kernel.name());
    measure(name, || {
        let d = run_dataset_with(dir, dataset, device, kernel)
            .map_err(|e| RlError::InvalidConfig(e.to_string()))?;
        Ok((
            d.seconds,
            d.total,
            format!("{}/{} identical to the authors'", d.identical, d.total),
        ))
    })
}

/// Inductive training on our BA-Shapes (seed 42, black box trained first, not timed): `epochs`
/// passes over the training targets with the default configuration.
pub fn inductive_training(epochs: usize, kernel: Kernel, device: &Device) -> Result<BenchRow> {
    let data = SyntheticKind::BaShapes.generate(42)?;
    let (d, c) = (data.graph.features().dim(), data.graph.num_classes());
    let gcfg = GcnConfig::new(d, c).with_init_seed(42);
    let (model, _) = train_gcn(&data, &GcnTrainingConfig::new(gcfg), device)?;
    let bb = induce_models::gcn_black_box(&model, kernel, device)?;
    let bb = bb.as_ref();
    let mut config = InduceConfig {
        kernel,
        ..InduceConfig::default()
    };
    config.train.episodes = epochs;
    let targets = select_targets(&data, bb, &data.split.train, config.env.hops)?;
    let name = format!(
        "inductive training ba-shapes, {epochs} epoch(s) ({})",
        kernel.name()
    );
    measure(name, || {
        let mut last = None;
        let start = Instant::now();
        train_inductive(&data.graph, bb, &targets, &config, device, |s| {
            last = Some(s.clone());
        })?;
        let secs = start.elapsed().as_secs_f64();
        let detail = last.map_or(String::new(), |s| {
            format!(
                "last epoch: flipped {:.0}%, {:.2} edits/episode",
                100.0 * s.flipped,
                s.mean_edits
            )
        });
        Ok((secs, targets.len() * epochs, detail))
    })
}

/// Transductive InduCE (one fresh policy per target, at most `cap` episodes, γ = 0.6, default
/// state and reward) on every eval target of the reference `dataset` with its shipped GCN,
/// targets explained on all cores, with verdicts taken where `verdict` says (exact: the
/// model's receptive field in the edited graph; neighbourhood: the paper's frozen one).
pub fn transductive(
    dir: &Path,
    dataset: &str,
    cap: usize,
    kernel: Kernel,
    verdict: induce_explain::Verdict,
    device: &Device,
) -> Result<BenchRow> {
    let data = load_reference_npz(dir.join(format!("{dataset}.npz")))?;
    let targets = data.eval_targets.clone().unwrap_or_default();
    let gcn = load_reference_gcn(dir.join(format!("{dataset}_gcn.safetensors")), device)?;
    let bb = induce_models::gcn_black_box(&gcn, kernel, device)?;
    let bb = bb.as_ref();
    let mut config = InduceConfig {
        kernel,
        ..InduceConfig::default()
    };
    (config.train.episodes, config.train.gamma) = (cap, 0.6);
    config.env.verdict = verdict;
    let name = format!(
        "transductive {dataset}, cap {cap} ({}, {} verdicts)",
        kernel.name(),
        match verdict {
            induce_explain::Verdict::Exact => "exact",
            induce_explain::Verdict::Neighbourhood => "frozen-neighbourhood",
        }
    );
    measure(name, || {
        let start = Instant::now();
        let expl =
            induce_rl::parallel::map(&targets, induce_rl::parallel::default_threads(), |&t| {
                match explain_transductive(&data.graph, bb, t, &config, device) {
                    Err(RlError::NoCandidate { .. }) => Ok(None),
                    other => other.map(Some),
                }
            })?;
        let secs = start.elapsed().as_secs_f64();
        let found: Vec<usize> = expl
            .iter()
            .flatten()
            .filter(|e| e.found)
            .map(|e| e.size())
            .collect();
        let mean = found.iter().sum::<usize>() as f64 / found.len().max(1) as f64;
        Ok((
            secs,
            targets.len(),
            format!(
                "found {}/{}, mean size {mean:.2}",
                found.len(),
                targets.len()
            ),
        ))
    })
}

/// A Markdown table of rows.
pub fn format_rows(rows: &[BenchRow]) -> String {
    let mut s = String::from(
        "| row | targets | seconds | ms / target | peak RSS (MiB) | check |\n|---|---:|---:|---:|---:|---|\n",
    );
    for r in rows {
        let rss = r
            .peak_rss_mib
            .map_or("n/a".to_string(), |m| format!("{m:.0}"));
        s.push_str(&format!(
            "| {} | {} | {:.3} | {:.2} | {} | {} |\n",
            r.name,
            r.targets,
            r.seconds,
            1e3 * r.seconds_per_target,
            rss,
            r.detail
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_divides_and_reports_memory() {
        let row = measure("x", || Ok((2.0, 4, "ok".into()))).unwrap();
        assert_eq!(row.seconds_per_target, 0.5);
        if cfg!(target_os = "linux") {
            assert!(row.peak_rss_mib.is_some_and(|m| m > 0.0));
        }
        let t = format_rows(&[row]);
        assert!(t.contains("| x | 4 | 2.000 | 500.00 |"), "{t}");
    }

    #[test]
    fn batched_verdicts_match_each_edited_graph() {
        let dev = induce_models::testing::test_device().unwrap();
        let data = SyntheticKind::TreeCycles.generate(1).unwrap();
        let row = batched_verdicts(&data.graph, 3, 4, 4, 1, &dev).unwrap();
        assert_eq!(row.targets, 3);
        let worst: f32 = row.detail.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(worst < 1e-5, "{}", row.detail);
        assert!(batched_verdicts(&data.graph, 0, 4, 4, 1, &dev).is_err());
    }
}
