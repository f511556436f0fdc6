//! The paper's experiment on a generated benchmark, end to end: generate the graph, train (or
//! load) the black box, pick the targets, train InduCE, explain, measure, write the results.
//!
//! The per-dataset examples (`cargo run --release --example tree_cycles`, ...) are thin wrappers
//! around [`run`]. Results in `out`:
//! * `summary.json`: dataset, seed, graph size, black-box accuracy and one row per method;
//! * `explanations.jsonl`: one line per (method, target);
//! * `config.json`: the [`ExperimentConfig`] used; `black_box.bpk` (+ `.json`) and the trained
//!   policies `policy.bpk`, `policy-del-only.bpk` (+ `.json`).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use burn::tensor::Device;
use indicatif::{ProgressBar, ProgressStyle};
use induce_graph::generators::SyntheticKind;
use induce_graph::{Dataset, Graph, k_hop};
use induce_models::checkpoint::{atomic_write, load_gcn, save_gcn};
use induce_models::host_policy::HostPolicy;
use induce_models::train::split_accuracy;
use induce_models::{
    BlackBox, GcnBlackBox, GcnConfig, GcnTrainingConfig, HostGcn, Policy, train_gcn,
};
use serde::{Deserialize, Serialize};

use crate::env::EditMode;
use crate::error::{Result, RlError};
use crate::explanation::Explanation;
use crate::induce::{
    InduceConfig, PolicyKernel, PolicyMeta, explain_greedy, explain_greedy_host,
    explain_transductive, save_policy, timed, train_inductive,
};
use crate::metrics::{Summary, neighbourhood_edges, summarize};

/// The files [`run`] writes (removed first when they exist, so a directory never mixes runs).
pub const OUTPUT_FILES: [&str; 9] = [
    "config.json",
    "summary.json",
    "explanations.jsonl",
    "black_box.bpk",
    "black_box.json",
    "policy.bpk",
    "policy.json",
    "policy-del-only.bpk",
    "policy-del-only.json",
];

/// Everything that defines a run; saved as `config.json` next to the results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentConfig {
    /// Benchmark name (`ba-shapes`, `tree-cycles`, `tree-grid`).
    pub dataset: String,
    /// Seed of the generator, split, black-box initialisation and InduCE.
    pub seed: u64,
    /// Black-box training epochs (paper: 1000).
    pub black_box_epochs: usize,
    /// Load this black-box checkpoint instead of training one.
    pub black_box: Option<PathBuf>,
    /// Inductive InduCE (γ 0.4).
    pub inductive: InduceConfig,
    /// Transductive InduCE (γ 0.6); `episodes` is the per-target cap.
    pub transductive: InduceConfig,
    /// Explain at most this many evaluation targets (all when `None`).
    pub max_targets: Option<usize>,
    /// Draw progress bars on stderr.
    pub progress: bool,
}

impl ExperimentConfig {
    /// The paper's settings for a benchmark: M = 80 episodes on BA-Shapes, 500 on the trees.
    pub fn paper(kind: SyntheticKind, seed: u64) -> Self {
        let episodes = match kind {
            SyntheticKind::BaShapes => 80,
            _ => 500,
        };
        let inductive = InduceConfig {
            episodes,
            seed,
            ..InduceConfig::default()
        };
        let transductive = InduceConfig {
            gamma: 0.6,
            ..inductive.clone()
        };
        Self {
            dataset: kind.name().to_string(),
            seed,
            black_box_epochs: 1000,
            black_box: None,
            inductive,
            transductive,
            max_targets: None,
            progress: true,
        }
    }

    /// A smoke run of well under a minute: few episodes, ten targets (the black box keeps its
    /// full training: it takes seconds and the targets depend on its accuracy).
    pub fn quick(mut self) -> Self {
        self.inductive.episodes = self.inductive.episodes.min(2);
        self.transductive.episodes = self.transductive.episodes.min(3);
        self.max_targets = Some(self.max_targets.unwrap_or(10).min(10));
        self
    }
}

/// One row of the results table: a method, its metrics (fractions in `[0, 1]`) and its times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    /// `induce-inductive`, `induce-transductive`, `induce-inductive-del-only` or
    /// `untrained-policy`.
    pub method: String,
    /// The metrics (flattened into the row's JSON object).
    #[serde(flatten)]
    pub metrics: Summary,
    /// Policy training time.
    pub train_seconds: f64,
    /// Time to explain all targets.
    pub explain_seconds: f64,
}

/// Graph size in `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphSize {
    /// Nodes.
    pub nodes: usize,
    /// Undirected edges.
    pub edges: usize,
}

/// Black-box accuracy in `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlackBoxAccuracy {
    /// Train accuracy, in `[0, 1]`.
    pub train_accuracy: f64,
    /// Test accuracy, in `[0, 1]`.
    pub test_accuracy: f64,
}

/// The content of `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentSummary {
    /// Benchmark name.
    pub dataset: String,
    /// Seed.
    pub seed: u64,
    /// Graph size.
    pub graph: GraphSize,
    /// Black-box accuracy.
    pub black_box: BlackBoxAccuracy,
    /// One row per method.
    pub runs: Vec<RunRow>,
}

/// One line of `explanations.jsonl`.
#[derive(Debug, Clone, Serialize)]
struct ExplanationLine<'a> {
    method: &'a str,
    #[serde(flatten)]
    explanation: &'a Explanation,
}

/// Nodes of `nodes` with a non-zero label that the black box predicts correctly on their h-hop
/// neighbourhood: the paper's explanation targets.
pub fn select_targets(
    data: &Dataset,
    bb: &dyn BlackBox,
    nodes: &[u32],
    hops: u32,
) -> Result<Vec<u32>> {
    let g = &data.graph;
    let mut out = Vec::new();
    for &u in nodes {
        let label = g.labels()[u as usize] as usize;
        if label == 0 {
            continue;
        }
        let s = k_hop(g, u, hops)?;
        let lp = bb.log_probs(&s.features(g), &s.edges)?;
        if lp.argmax(s.target_local) == label {
            out.push(u);
        }
    }
    Ok(out)
}

fn bar(show: bool, len: usize, what: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len as u64);
    pb.set_style(
        ProgressStyle::with_template("{prefix:>28} [{bar:30}] {pos}/{len} {elapsed} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    pb
}

/// Explains every target; a target whose neighbourhood offers no allowed action counts as
/// "no counterfactual found" (its label is the one the black box predicts, `labels[t]` for the
/// experiment's correctly predicted targets) instead of aborting the run.
fn explain_all(
    targets: &[u32],
    labels: &[u32],
    show: bool,
    what: &str,
    f: impl Fn(u32) -> Result<Explanation> + Sync,
) -> Result<(Vec<Explanation>, f64)> {
    let pb = bar(show, targets.len(), what);
    let (res, secs) = timed(|| {
        crate::parallel::map(targets, crate::parallel::default_threads(), |&t| {
            let e = match f(t) {
                Err(RlError::NoCandidate { target }) => {
                    let label = labels[target as usize] as usize;
                    Ok(Explanation {
                        target,
                        found: false,
                        original_label: label,
                        new_label: label,
                        edits: Vec::new(),
                    })
                }
                other => other,
            };
            pb.inc(1);
            e
        })
    });
    pb.finish_and_clear();
    Ok((res?, secs))
}

fn train_policy(
    g: &Graph,
    bb: &dyn BlackBox,
    targets: &[u32],
    cfg: &InduceConfig,
    show: bool,
    what: &str,
    device: &Device,
) -> Result<(Policy, f64)> {
    let pb = bar(show, cfg.episodes, what);
    let (policy, secs) = timed(|| {
        train_inductive(g, bb, targets, cfg, device, |s| {
            pb.set_message(format!(
                "return {:.3} flipped {:.0}% edits {:.2}",
                s.mean_return,
                100.0 * s.flipped,
                s.mean_edits
            ));
            pb.inc(1);
        })
    });
    pb.finish_and_clear();
    Ok((policy?, secs))
}

/// Runs the whole experiment and writes its results into `out`.
pub fn run(config: &ExperimentConfig, out: &Path, device: &Device) -> Result<ExperimentSummary> {
    let kind: SyntheticKind = config.dataset.parse()?;
    let show = config.progress;
    // A rerun into the same directory must not leave files of an earlier run beside this one's.
    for f in OUTPUT_FILES {
        match std::fs::remove_file(out.join(f)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(induce_models::ModelError::Io {
                    path: out.join(f),
                    source: e,
                }
                .into());
            }
            _ => {}
        }
    }
    let config_json =
        serde_json::to_vec_pretty(config).map_err(|e| RlError::InvalidConfig(e.to_string()))?;
    atomic_write(&out.join("config.json"), &config_json)?;

    let data = kind.generate(config.seed)?;
    let g = &data.graph;
    let (d, c) = (g.features().dim(), g.num_classes());
    let model = match &config.black_box {
        Some(path) => load_gcn(path, Some((d, c)), device)?,
        None => {
            let gcfg = GcnConfig::new(d, c).with_init_seed(config.seed);
            let tcfg = GcnTrainingConfig::new(gcfg.clone()).with_epochs(config.black_box_epochs);
            let (m, _) = train_gcn(&data, &tcfg, device)?;
            save_gcn(&m, &gcfg, &out.join("black_box.bpk"))?;
            m
        }
    };
    // With the host kernel the black box runs as its host copy too (same function, pinned by
    // tests to the Burn model).
    let bb: Box<dyn BlackBox> = match config.inductive.kernel {
        PolicyKernel::Host => Box::new(HostGcn::from_gcn(&model)?),
        PolicyKernel::Burn => Box::new(GcnBlackBox::new(model, device)),
    };
    let bb = bb.as_ref();
    let (train_accuracy, test_accuracy) = split_accuracy(bb, &data)?;
    let full_pred = bb.log_probs(g.features(), &g.edges())?.predictions();

    let hops = config.inductive.env.hops;
    let train_targets = select_targets(&data, bb, &data.split.train, hops)?;
    let mut eval_targets = select_targets(&data, bb, &data.split.test, hops)?;
    if let Some(k) = config.max_targets {
        eval_targets.truncate(k);
    }
    if show {
        eprintln!(
            "{}: {} nodes, {} edges; black box train {:.2}% test {:.2}%; {} training targets, {} \
             evaluation targets",
            data.name,
            g.num_nodes(),
            g.num_edges(),
            100.0 * train_accuracy,
            100.0 * test_accuracy,
            train_targets.len(),
            eval_targets.len()
        );
    }
    let edges_of = |t: u32| neighbourhood_edges(g, t, hops).unwrap_or(0);
    let mut rows = Vec::new();
    let mut lines: Vec<(String, Vec<Explanation>)> = Vec::new();
    let mut record = |method: &str, e: Vec<Explanation>, tr: f64, ex: f64| -> Result<()> {
        let s = summarize(&e, g, &full_pred, edges_of)?;
        rows.push(RunRow {
            method: method.to_string(),
            metrics: s,
            train_seconds: tr,
            explain_seconds: ex,
        });
        lines.push((method.to_string(), e));
        Ok(())
    };

    // Greedy inference with a trained policy, in the configured kernel.
    let greedy = |p: &Policy, cfg: &InduceConfig| {
        let host = HostPolicy::from_policy(p);
        let (p, cfg) = (p.clone(), cfg.clone());
        move |t| match cfg.kernel {
            PolicyKernel::Host => explain_greedy_host(&host, g, bb, t, &cfg.env),
            PolicyKernel::Burn => explain_greedy(&p, g, bb, t, &cfg.env, device),
        }
    };

    // InduCE inductive.
    let icfg = &config.inductive;
    let (policy, tr) = train_policy(
        g,
        bb,
        &train_targets,
        icfg,
        show,
        "train induce-inductive",
        device,
    )?;
    let meta = |induce: &InduceConfig| PolicyMeta {
        feature_dim: d,
        num_classes: c,
        induce: induce.clone(),
    };
    save_policy(&policy, &meta(icfg), &out.join("policy.bpk"))?;
    let (e, ex) = explain_all(
        &eval_targets,
        g.labels(),
        show,
        "explain induce-inductive",
        greedy(&policy, icfg),
    )?;
    record("induce-inductive", e, tr, ex)?;

    // InduCE transductive.
    let tcfg = &config.transductive;
    let (e, ex) = explain_all(
        &eval_targets,
        g.labels(),
        show,
        "induce-transductive",
        |t| explain_transductive(g, bb, t, tcfg, device),
    )?;
    record("induce-transductive", e, 0.0, ex)?;

    // InduCE inductive, deletions only.
    let mut dcfg = icfg.clone();
    dcfg.env.mode = EditMode::DeleteOnly;
    let del_targets: Vec<u32> = train_targets
        .iter()
        .copied()
        .filter(|&t| {
            k_hop(g, t, hops)
                .map(|s| s.num_edges() > 0)
                .unwrap_or(false)
        })
        .collect();
    let (dpolicy, tr) = train_policy(g, bb, &del_targets, &dcfg, show, "train del-only", device)?;
    save_policy(&dpolicy, &meta(&dcfg), &out.join("policy-del-only.bpk"))?;
    let (e, ex) = explain_all(
        &eval_targets,
        g.labels(),
        show,
        "explain del-only",
        greedy(&dpolicy, &dcfg),
    )?;
    record("induce-inductive-del-only", e, tr, ex)?;

    // The same network, untrained.
    let untrained = icfg.policy_config(d, c).init(device);
    let (e, ex) = explain_all(
        &eval_targets,
        g.labels(),
        show,
        "explain untrained-policy",
        greedy(&untrained, icfg),
    )?;
    record("untrained-policy", e, 0.0, ex)?;

    let summary = ExperimentSummary {
        dataset: data.name.clone(),
        seed: config.seed,
        graph: GraphSize {
            nodes: g.num_nodes(),
            edges: g.num_edges(),
        },
        black_box: BlackBoxAccuracy {
            train_accuracy,
            test_accuracy,
        },
        runs: rows,
    };
    let mut jsonl = Vec::new();
    for (method, expls) in &lines {
        for e in expls {
            let line = ExplanationLine {
                method,
                explanation: e,
            };
            serde_json::to_writer(&mut jsonl, &line)
                .map_err(|e| RlError::InvalidConfig(e.to_string()))?;
            jsonl.push(b'\n');
        }
    }
    atomic_write(&out.join("explanations.jsonl"), &jsonl)?;
    let json =
        serde_json::to_vec_pretty(&summary).map_err(|e| RlError::InvalidConfig(e.to_string()))?;
    atomic_write(&out.join("summary.json"), &json)?;
    Ok(summary)
}

fn pct(v: Option<f64>) -> String {
    v.map(|x| format!("{:.2}", 100.0 * x))
        .unwrap_or_else(|| "-".into())
}

/// The results as a table like the paper's (fidelity and accuracies in %).
pub fn format_table(s: &ExperimentSummary) -> String {
    let mut out = Vec::new();
    let _ = writeln!(
        out,
        "{} (seed {}): {} nodes, {} edges; black box train {:.2}% test {:.2}%",
        s.dataset,
        s.seed,
        s.graph.nodes,
        s.graph.edges,
        100.0 * s.black_box.train_accuracy,
        100.0 * s.black_box.test_accuracy
    );
    let _ = writeln!(
        out,
        "{:<27} {:>7} {:>8} {:>13} {:>8} {:>8} {:>8} {:>9} {:>8} {:>9}",
        "method",
        "targets",
        "fid %",
        "size",
        "acc %",
        "strict %",
        "sparsity",
        "add/del",
        "train s",
        "explain s"
    );
    for row in &s.runs {
        let r = &row.metrics;
        let size = match (r.size_mean, r.size_std) {
            (Some(m), Some(sd)) => format!("{m:.2} ± {sd:.2}"),
            _ => "-".into(),
        };
        let _ = writeln!(
            out,
            "{:<27} {:>7} {:>8} {:>13} {:>8} {:>8} {:>8} {:>9} {:>8.1} {:>9.2}",
            row.method,
            r.targets,
            pct(r.fidelity),
            size,
            pct(r.accuracy),
            pct(r.strict_accuracy),
            r.sparsity
                .map(|v| format!("{v:.3}"))
                .unwrap_or_else(|| "-".into()),
            format!("{}/{}", r.additions, r.deletions),
            row.train_seconds,
            row.explain_seconds
        );
    }
    String::from_utf8(out).expect("utf-8")
}
