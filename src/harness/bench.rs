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
use induce_models::reference::load_reference_gcn;
use induce_models::train::GcnTrainingConfig;
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

/// The core of a batched exact verdict on a device, timed: the black-box passes of `batch`
/// episodes over the whole graph at once, laid out as `[n, batch · hidden]` so that each of the
/// three layers is one row scaling per episode (each episode's own degrees), one sparse product
/// over the graph's messages ([`GraphTensors::propagate`](induce_models::GraphTensors)) and one
/// `[n · batch, hidden] × [hidden, hidden]` product. `seconds` is the mean of `reps` such
/// 3-layer passes after one warm-up pass, the device synchronised after each; `targets` is
/// `batch`.
///
/// A feasibility measure for moving the explainer's verdicts to a GPU (`docs/GPU.md`: today
/// each step's verdict is the host's incremental GCN), not the verdicts themselves: the
/// corrections for each episode's toggled edges and the classifier are left out.
///
/// Errors: `batch`, `hidden` or `reps` of 0, and the graph's upload.
pub fn batched_verdict_core(
    graph: &induce_graph::Graph,
    batch: usize,
    hidden: usize,
    reps: usize,
    device: &Device,
) -> Result<BenchRow> {
    use burn::tensor::{Tensor, TensorData};
    if batch == 0 || hidden == 0 || reps == 0 {
        return Err(RlError::InvalidConfig(format!(
            "batched verdict core: batch {batch}, hidden {hidden} and reps {reps} must be positive"
        )));
    }
    let n = graph.num_nodes();
    let name = format!(
        "batched verdict core ({n} nodes, {} edges, {batch} episodes x hidden {hidden}, 3 layers)",
        graph.num_edges()
    );
    let g = induce_models::GraphTensors::new(n, &graph.edges(), device)?;
    // Deterministic values in [-0.5, 0.5): activations, one degree scale per node and episode,
    // and a weight matrix.
    let fill = |len: usize, salt: u64| -> Vec<f32> {
        (0..len as u64)
            .map(|i| {
                let h = (i ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
                (h % 1000) as f32 / 1000.0 - 0.5
            })
            .collect()
    };
    let x = Tensor::<2>::from_data(
        TensorData::new(fill(n * batch * hidden, 1), [n, batch * hidden]),
        device,
    );
    let scale = Tensor::<3>::from_data(TensorData::new(fill(n * batch, 2), [n, batch, 1]), device)
        .abs()
        + 0.5;
    let w = Tensor::<2>::from_data(
        TensorData::new(fill(hidden * hidden, 3), [hidden, hidden]),
        device,
    );
    let pass = |h: Tensor<2>| verdict_core_pass(&g, h, &scale, &w);
    measure(name, || {
        let _ = pass(x.clone());
        let _ = device.sync();
        let start = Instant::now();
        let mut out = x.clone();
        for _ in 0..reps {
            out = pass(x.clone());
            let _ = device.sync();
        }
        let seconds = start.elapsed().as_secs_f64() / reps as f64;
        let check: f32 = out.sum().into_scalar();
        Ok((
            seconds,
            batch,
            format!(
                "mean of {reps} passes after a warm-up; {:.3} ms per episode; checksum {check:.4e}",
                1e3 * seconds / batch as f64
            ),
        ))
    })
}

/// Three layers of [`batched_verdict_core`]: per episode `b`, `H ← relu(Â (s_b ⊙ H_b) W)`, all
/// episodes in one `[n, batch · hidden]` tensor (episode `b` in columns `b·hidden..`).
///
/// # Shapes
/// - h: `[n, batch · hidden]`, scale: `[n, batch, 1]`, w: `[hidden, hidden]`
/// - output: `[n, batch · hidden]`
fn verdict_core_pass(
    g: &induce_models::GraphTensors,
    mut h: burn::tensor::Tensor<2>,
    scale: &burn::tensor::Tensor<3>,
    w: &burn::tensor::Tensor<2>,
) -> burn::tensor::Tensor<2> {
    let [n, batch, _] = scale.dims();
    let hidden = w.dims()[0];
    for _ in 0..3 {
        let scaled = (h.reshape([n, batch, hidden]) * scale.clone()).reshape([n, batch * hidden]);
        let aggregated = g.propagate(scaled).reshape([n * batch, hidden]);
        h = burn::tensor::activation::relu(aggregated.matmul(w.clone()))
            .reshape([n, batch * hidden]);
    }
    h
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
    let config = InduceConfig {
        episodes: epochs,
        kernel,
        ..InduceConfig::default()
    };
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
        episodes: cap,
        gamma: 0.6,
        kernel,
        ..InduceConfig::default()
    };
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

    /// The batched layout keeps the episodes apart: episode `b`'s columns of a 2-episode pass
    /// are the pass of episode `b` alone.
    #[test]
    fn the_batched_verdict_core_keeps_episodes_apart() {
        use burn::tensor::{Tensor, TensorData};
        let dev = induce_models::device::default_device().unwrap();
        let data = SyntheticKind::TreeCycles.generate(1).unwrap();
        let n = data.graph.num_nodes();
        let g = induce_models::GraphTensors::new(n, &data.graph.edges(), &dev).unwrap();
        let hidden = 3;
        let vals = |len: usize, k: usize| -> Vec<f32> {
            (0..len)
                .map(|i| ((i * 7 + k * 13) % 11) as f32 / 11.0 - 0.4)
                .collect()
        };
        let w = Tensor::<2>::from_data(TensorData::new(vals(9, 0), [3, 3]), &dev);
        let x: Vec<Vec<f32>> = (0..2).map(|b| vals(n * hidden, b + 1)).collect();
        let s: Vec<Vec<f32>> = (0..2)
            .map(|b| vals(n, b + 5).iter().map(|v| v + 1.0).collect())
            .collect();
        let alone: Vec<Vec<f32>> = (0..2)
            .map(|b| {
                let xb = Tensor::<2>::from_data(TensorData::new(x[b].clone(), [n, hidden]), &dev);
                let sb = Tensor::<3>::from_data(TensorData::new(s[b].clone(), [n, 1, 1]), &dev);
                induce_models::tensors::to_vec(verdict_core_pass(&g, xb, &sb, &w))
            })
            .collect();
        let mut xs = Vec::new();
        let mut ss = Vec::new();
        for i in 0..n {
            for b in 0..2 {
                xs.extend_from_slice(&x[b][i * hidden..(i + 1) * hidden]);
                ss.push(s[b][i]);
            }
        }
        let xs = Tensor::<2>::from_data(TensorData::new(xs, [n, 2 * hidden]), &dev);
        let ss = Tensor::<3>::from_data(TensorData::new(ss, [n, 2, 1]), &dev);
        let both = induce_models::tensors::to_vec(verdict_core_pass(&g, xs, &ss, &w));
        let mut worst = 0.0f32;
        for i in 0..n {
            for b in 0..2 {
                for j in 0..hidden {
                    let d = both[i * 2 * hidden + b * hidden + j] - alone[b][i * hidden + j];
                    worst = worst.max(d.abs());
                }
            }
        }
        assert!(worst < 1e-5, "{worst}");
        assert!(
            alone[0].iter().any(|&v| v > 0.0),
            "not all zero after the ReLUs"
        );
        let row = batched_verdict_core(&data.graph, 2, 4, 1, &dev).unwrap();
        assert_eq!(row.targets, 2);
        assert!(batched_verdict_core(&data.graph, 0, 4, 1, &dev).is_err());
    }
}
