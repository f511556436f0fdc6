//! The quality study of the paper's own graphs: every method on the authors' BA-Shapes,
//! Tree-Cycles and Tree-Grid (`syn1`, `syn4`, `syn5` with their GCNs and evaluation targets),
//! over several seeds, with fidelity, size, accuracy, 1-minimality and stability (Jaccard
//! similarity of the edit sets across seeds and under noise edges, as GNNX-Bench measures it).
//!
//! [`run_quality`] does the work; `cargo run --release --example quality -- --data
//! ../shared/reference --out DIR` writes its [`QualityReport`] as `DIR/quality.json`.
//!
//! Protocol, per graph and seed `s`:
//! * InduCE's inductive policies are trained with seed `s` on the paper's targets among the
//!   file's training split (`syn1`), or among the nodes that are not evaluation targets (`syn4`
//!   and `syn5` carry no split), then explain the evaluation targets; transductive InduCE trains
//!   per target with seed `s`. Each InduCE method runs twice: with the default configuration
//!   (minimality pass) and paper-faithful (none). The baselines run once, with their authors'
//!   settings seeded with `s`.
//! * Stability under noise: for each target, `1 + (draw mod 5)` random edges are added between
//!   nodes of its neighbourhood outside its motif ([`with_noise_edges`]; targets whose prediction
//!   the noise changes are skipped), the same explainer (same trained policy, same seed)
//!   explains the target on the noisy graph, and the Jaccard similarity with the clean edit set
//!   is averaged.

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use induce_explain::metrics::{jaccard, mean_pairwise_jaccard, with_noise_edges};
use induce_explain::pipeline::{
    EvalContext, ExplainOptions, MethodRun, Progress, TargetRecord, TargetSpec,
};
use induce_explain::{Explainer, Explanation, Protocol, Verdict};
use induce_graph::{Dataset, Graph};
use induce_models::BlackBox;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::methods::{BaselineConfig, Method, Preset, load_black_box};
use crate::methods::{MethodSet, MethodSettings, Policies};
use crate::run::{load_data, training_targets};

/// What the quality study runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityConfig {
    /// The folder with `synX.npz` and `synX_gcn.safetensors` (`../shared/reference`).
    pub data_dir: PathBuf,
    /// The graphs, by file stem (`syn1`, `syn4`, `syn5`).
    pub graphs: Vec<String>,
    /// One run per seed.
    pub seeds: Vec<u64>,
    /// The methods (CLI names in the rows).
    pub methods: Vec<Method>,
    /// Run the paper-faithful variant of each InduCE method as well.
    pub paper_faithful_rows: bool,
    /// Measure stability under noise edges (doubles the explanation time).
    pub noise: bool,
    /// Cap of InduCE's training episodes (inductive epochs and transductive per-target
    /// episodes); `None`: the paper's.
    pub max_episodes: Option<usize>,
    /// Cap of the baselines' budgets; `None`: their authors'.
    pub max_iterations: Option<usize>,
    /// Explain at most this many evaluation targets per graph (`None`: all).
    pub max_targets: Option<usize>,
}

impl QualityConfig {
    /// The full study: the three graphs, seeds 42..=46, every method, both InduCE variants,
    /// noise.
    pub fn full(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            graphs: vec!["syn1".into(), "syn4".into(), "syn5".into()],
            seeds: (42..47).collect(),
            methods: Method::defaults(),
            paper_faithful_rows: true,
            noise: true,
            max_episodes: None,
            max_iterations: None,
            max_targets: None,
        }
    }
}

/// One row of `quality.json`: a method (and variant) on one graph, aggregated over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityRow {
    /// The graph (`syn1`, ...).
    pub graph: String,
    /// The method, as the command line names it.
    pub method: String,
    /// `default` (InduCE with the minimality pass), `paper-faithful` (InduCE without it) or
    /// `authors` (a baseline with its authors' settings).
    pub variant: String,
    /// Number of seeds run (1 for the methods whose results do not depend on the seed,
    /// CF-GNNExplainer and CF-GNNExplainer++: their runs would be identical).
    pub seeds: usize,
    /// Number of evaluation targets.
    pub targets: usize,
    /// Mean over seeds of the number of targets with a counterfactual.
    pub found_mean: f64,
    /// Mean over seeds of the number of those counterfactuals that flip the model on the whole
    /// graph (each checked by a whole-graph forward pass).
    #[serde(default)]
    pub valid_mean: Option<f64>,
    /// Mean over seeds of the fidelity (share without a counterfactual), in `[0, 1]`: over the
    /// valid counterfactuals for rows with exact verdicts, over the found ones for the
    /// paper-faithful rows (frozen-neighbourhood verdicts).
    pub fidelity_mean: f64,
    /// Mean over seeds of the whole-graph fidelity (share without a VALID counterfactual).
    #[serde(default)]
    pub valid_fidelity_mean: Option<f64>,
    /// Mean over seeds of the mean size (`None` if no seed found anything).
    pub size_mean: Option<f64>,
    /// Standard deviation over seeds of the mean size.
    pub size_std_over_seeds: Option<f64>,
    /// Mean over seeds of the within-seed size standard deviation (the paper's ±).
    pub size_std_within_mean: Option<f64>,
    /// Mean over seeds of the paper's accuracy.
    pub accuracy_mean: Option<f64>,
    /// Mean over seeds of the strict (motif) accuracy.
    pub strict_accuracy_mean: Option<f64>,
    /// Share of all counterfactuals (all seeds) that are 1-minimal.
    pub minimal_fraction: Option<f64>,
    /// Mean over targets of the mean pairwise Jaccard similarity of the edit sets across seeds.
    pub jaccard_seeds: Option<f64>,
    /// Mean over (seed, target) of the Jaccard similarity between the clean and the noisy
    /// graph's edit sets.
    pub jaccard_noise: Option<f64>,
    /// Number of (seed, target) pairs compared under noise.
    pub noise_pairs: usize,
    /// Mean over seeds of the time to explain all targets (clean graph).
    pub explain_seconds: f64,
    /// Mean over seeds of the training time (policy or PGExplainer).
    pub train_seconds: f64,
}

/// The whole study, as `quality.json` holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityReport {
    /// What ran.
    pub config: QualityConfig,
    /// One row per graph, method and variant.
    pub rows: Vec<QualityRow>,
    /// How each graph's training targets were chosen, and anything else to know.
    pub notes: Vec<String>,
}

/// One (method, variant) of one seed: its clean run and, per target, its explanation on the
/// noisy graph (`None` where no noise was placed).
struct SeedRun {
    run: MethodRun,
    noisy: Vec<Option<Explanation>>,
}

fn mean(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.into_iter().collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn std(v: &[f64]) -> Option<f64> {
    let m = mean(v.iter().copied())?;
    Some((v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64).sqrt())
}

/// The noisy graph of each target for `seed` (`None` where no noise could be placed without
/// changing the prediction).
fn noisy_graphs(
    data: &Dataset,
    bb: &dyn BlackBox,
    targets: &[u32],
    hops: u32,
    seed: u64,
) -> Result<Vec<Option<Graph>>> {
    let jobs: Vec<u32> = targets.to_vec();
    Ok(induce_explain::parallel::map(
        &jobs,
        induce_explain::parallel::default_threads(),
        |&t| {
            let mut rng = StdRng::seed_from_u64(seed ^ (u64::from(t) << 20) ^ 0x05EE_D0F0_015E);
            let k = 1 + (t as usize + seed as usize) % 5;
            Ok(with_noise_edges(&data.graph, bb, t, hops, k, &mut rng)?.map(|(g, _)| g))
        },
    )?)
}

/// Explains every target on its noisy graph.
fn explain_noisy(
    e: &dyn Explainer,
    targets: &[u32],
    graphs: &[Option<Graph>],
) -> Result<Vec<Option<Explanation>>> {
    let jobs: Vec<(u32, Option<&Graph>)> = targets
        .iter()
        .copied()
        .zip(graphs.iter().map(Option::as_ref))
        .collect();
    Ok(induce_explain::parallel::map(
        &jobs,
        induce_explain::parallel::default_threads(),
        |&(t, g)| match g {
            Some(g) => e.explain(g, t).map(Some),
            None => Ok(None),
        },
    )?)
}

/// Runs the study. `progress` receives one message per (graph, seed, method).
pub fn run_quality(
    config: &QualityConfig,
    device: &Device,
    progress: &dyn Progress,
) -> Result<QualityReport> {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for graph in &config.graphs {
        let data_path = config.data_dir.join(format!("{graph}.npz"));
        let bb_path = config.data_dir.join(format!("{graph}_gcn.safetensors"));
        let data = load_data(&data_path.to_string_lossy(), None, config.seeds[0])?;
        let preset = Preset::for_dataset(graph);
        let base = preset.inductive(config.seeds[0]);
        let loaded = load_black_box(&bb_path, &data, base.kernel, device)?;
        let bb = loaded.black_box.as_ref();
        let hops = base.env.hops;
        let mut targets = TargetSpec::Eval.resolve(&data)?;
        if let Some(k) = config.max_targets {
            targets.truncate(k);
        }
        let train = training_targets(&data, bb, hops, &targets)?;
        notes.push(format!(
            "{graph}: {} evaluation targets; inductive policies and PGExplainer trained on {} \
             nodes ({})",
            targets.len(),
            train.len(),
            match data.split.train.is_empty() {
                true =>
                    "the paper's targets among the nodes that are not evaluation targets: \
                         the file has no training split",
                false => "the paper's targets of the file's training split",
            }
        ));
        // One context per protocol: the default rows', and the paper-faithful rows'.
        let protocol = |paper: bool| Protocol::exact(hops).with_paper_faithful(paper);
        let contexts = [
            EvalContext::new(&data.graph, bb, protocol(false))?,
            EvalContext::new(&data.graph, bb, protocol(true))?,
        ];
        let opts = ExplainOptions {
            progress,
            ..Default::default()
        };
        // (method, variant) → one SeedRun per seed.
        let mut cells: Vec<((Method, &'static str), Vec<SeedRun>)> = Vec::new();
        for &seed in &config.seeds {
            let noisy = match config.noise {
                true => noisy_graphs(&data, bb, &targets, hops, seed)?,
                false => vec![None; targets.len()],
            };
            let mut ind = preset.inductive(seed);
            let mut tr = preset.transductive(seed);
            if let Some(m) = config.max_episodes {
                ind.train.episodes = ind.train.episodes.min(m);
                tr.train.episodes = tr.train.episodes.min(m);
            }
            let mut baselines = BaselineConfig::for_dataset(graph, seed);
            if let Some(k) = config.max_iterations {
                baselines = baselines.quick(k);
            }
            // One set of methods per variant: each trains (and shares) its own policies.
            let set = |paper_faithful: bool| {
                let settings = MethodSettings::new(
                    protocol(paper_faithful),
                    ind.clone(),
                    tr.clone(),
                    baselines.clone(),
                );
                let policies = Policies::Train {
                    targets: &train,
                    save_dir: None,
                };
                MethodSet::new(&data, bb, settings, policies, device)
                    .with_baseline_targets(train.clone())
            };
            let mut sets = [set(false), set(true)];
            for &method in &config.methods {
                let variants: &[&'static str] =
                    match (method.is_baseline(), config.paper_faithful_rows) {
                        (true, _) => &["authors"],
                        (false, true) => &["default", "paper-faithful"],
                        (false, false) => &["default"],
                    };
                for &variant in variants {
                    let key = (method, variant);
                    let slot = match cells.iter().position(|(k, _)| *k == key) {
                        Some(i) => i,
                        None => {
                            cells.push((key, Vec::new()));
                            cells.len() - 1
                        }
                    };
                    if !method.depends_on_seed() && !cells[slot].1.is_empty() {
                        // Same result for every seed: run once (the row says so).
                        continue;
                    }
                    progress.message(&format!("{graph} seed {seed}: {method} ({variant})"));
                    let paper = usize::from(variant == "paper-faithful");
                    let prepared = sets[paper].prepare(method)?;
                    let run = prepared.explain(&contexts[paper], &targets, &opts, None)?;
                    let noisy = match config.noise {
                        true => explain_noisy(prepared.explainer.as_ref(), &targets, &noisy)?,
                        false => vec![None; targets.len()],
                    };
                    cells[slot].1.push(SeedRun { run, noisy });
                }
            }
        }
        for ((method, variant), seeds) in cells {
            rows.push(aggregate(graph, method, variant, &seeds, targets.len()));
        }
    }
    Ok(QualityReport {
        config: config.clone(),
        rows,
        notes,
    })
}

fn aggregate(
    graph: &str,
    method: Method,
    variant: &str,
    seeds: &[SeedRun],
    targets: usize,
) -> QualityRow {
    let rows: Vec<_> = seeds.iter().map(|s| s.run.row()).collect();
    let sizes: Vec<f64> = rows.iter().filter_map(|r| r.metrics.size_mean).collect();
    let (mut minimal, mut checked) = (0usize, 0usize);
    for (s, row) in seeds.iter().zip(&rows) {
        // As in the rows' own metrics (`summarize_records`): under exact verdicts a found record
        // that the whole-graph check refutes is no counterfactual.
        let exact = row.metrics.verdict == Verdict::Exact;
        let refuted = |r: &&TargetRecord| exact && r.valid == Some(false);
        for r in s.run.records.iter().filter(|r| !refuted(r)) {
            if let Some(m) = r.one_minimal {
                checked += 1;
                minimal += usize::from(m);
            }
        }
    }
    let jaccard_seeds = mean((0..targets).filter_map(|i| {
        let runs: Vec<Explanation> = seeds
            .iter()
            .map(|s| s.run.records[i].explanation.clone())
            .collect();
        mean_pairwise_jaccard(&runs)
    }));
    let noise: Vec<f64> = seeds
        .iter()
        .flat_map(|s| {
            s.run
                .records
                .iter()
                .zip(&s.noisy)
                .filter_map(|(r, n)| jaccard(&r.explanation, n.as_ref()?))
        })
        .collect();
    QualityRow {
        graph: graph.to_string(),
        method: method.name().to_string(),
        variant: variant.to_string(),
        seeds: seeds.len(),
        targets,
        found_mean: mean(rows.iter().map(|r| r.metrics.found as f64)).unwrap_or(0.0),
        valid_mean: mean(
            rows.iter()
                .filter_map(|r| r.metrics.valid.map(|v| v as f64)),
        ),
        fidelity_mean: mean(rows.iter().filter_map(|r| r.metrics.fidelity)).unwrap_or(0.0),
        valid_fidelity_mean: mean(rows.iter().filter_map(|r| r.metrics.valid_fidelity)),
        size_mean: mean(sizes.iter().copied()),
        size_std_over_seeds: std(&sizes),
        size_std_within_mean: mean(rows.iter().filter_map(|r| r.metrics.size_std)),
        accuracy_mean: mean(rows.iter().filter_map(|r| r.metrics.accuracy)),
        strict_accuracy_mean: mean(rows.iter().filter_map(|r| r.metrics.strict_accuracy)),
        minimal_fraction: (checked > 0).then(|| minimal as f64 / checked as f64),
        jaccard_seeds,
        noise_pairs: noise.len(),
        jaccard_noise: mean(noise),
        explain_seconds: mean(rows.iter().map(|r| r.explain_seconds)).unwrap_or(0.0),
        train_seconds: mean(rows.iter().map(|r| r.train_seconds)).unwrap_or(0.0),
    }
}

/// The rows as a Markdown table (percentages for shares, `–` for undefined values).
pub fn format_quality_table(rows: &[QualityRow]) -> String {
    let pct = |v: Option<f64>| v.map_or("–".into(), |v| format!("{:.1}", 100.0 * v));
    let num = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.2}"));
    let mut s = String::from(
        "| graph | method | variant | found | valid | fid % | fid % graph | size | ± seeds | acc % | \
         strict % | 1-min % | J seeds | J noise | explain s |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {:.1}/{} | {} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} | \
             {:.2} |\n",
            r.graph,
            r.method,
            r.variant,
            r.found_mean,
            r.targets,
            r.valid_mean.map_or("–".into(), |v| format!("{v:.1}")),
            100.0 * r.fidelity_mean,
            r.valid_fidelity_mean
                .map_or("–".into(), |v| format!("{:.2}", 100.0 * v)),
            num(r.size_mean),
            num(r.size_std_over_seeds),
            pct(r.accuracy_mean),
            pct(r.strict_accuracy_mean),
            pct(r.minimal_fraction),
            num(r.jaccard_seeds),
            num(r.jaccard_noise),
            r.explain_seconds
        ));
    }
    s
}

/// Writes `quality.json` and `quality.md` into `out` (atomically, each).
pub fn write_quality(report: &QualityReport, out: impl AsRef<Path>) -> Result<()> {
    let out = out.as_ref();
    std::fs::create_dir_all(out).map_err(|e| crate::Error::Io {
        path: out.to_path_buf(),
        source: e,
    })?;
    let json = serde_json::to_vec_pretty(report).map_err(|e| crate::Error::InvalidValue {
        what: "quality report",
        value: out.display().to_string(),
        reason: e.to_string(),
    })?;
    induce_models::io::checkpoint::atomic_write(out.join("quality.json"), &json)?;
    induce_models::io::checkpoint::atomic_write(
        out.join("quality.md"),
        format_quality_table(&report.rows).as_bytes(),
    )?;
    Ok(())
}
