//! The paper's experiment on one dataset, end to end: load or generate the graph, train (or
//! load) the black box, pick the targets, train InduCE, explain with every method, measure,
//! write the results. The per-dataset examples (`cargo run --release --example tree_cycles`,
//! ...) are thin wrappers around [`run`].
//!
//! Results in `out` (written all at once, see
//! [`RunWriter`]): `summary.json`, `explanations.jsonl`,
//! `config.json` (this [`ExperimentConfig`]), `black_box.bpk` (+ `.json`) when trained here, and
//! the trained policies `policy.bpk`, `policy-del-only.bpk` (+ `.json`).

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use induce_explain::Protocol;
use induce_explain::pipeline::{
    EvalContext, ExplainOptions, MethodRun, Progress, RunSummary, RunWriter, select_targets,
};
use induce_graph::Dataset;
use induce_graph::io::DataFormat;
use induce_models::io::checkpoint::{load_gcn, save_gcn};
use induce_models::{GcnConfig, GcnTrainingConfig, train_gcn};
use induce_rl::InduceConfig;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::methods::{BaselineConfig, Method, Preset, black_box_for};
use crate::methods::{MethodSet, MethodSettings, Policies};
use crate::run::{load_data, summary_for};

/// Everything that defines a run; saved as `config.json` next to the results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentConfig {
    /// The data: a built-in benchmark (`ba-shapes`, `tree-cycles`, `tree-grid`, generated with
    /// `seed`) or a file / folder in any supported format.
    pub dataset: String,
    /// Seed of the generator, split, black-box initialisation and InduCE.
    pub seed: u64,
    /// Black-box training epochs (paper: 1000).
    pub black_box_epochs: usize,
    /// Hidden width of the black-box GCN (paper: 20; 128 on Amazon-Photo).
    pub black_box_hidden: usize,
    /// Load this black-box checkpoint instead of training one.
    pub black_box: Option<PathBuf>,
    /// Inductive InduCE (γ 0.4).
    pub inductive: InduceConfig,
    /// Transductive InduCE (γ 0.6); `episodes` is the per-target cap.
    pub transductive: InduceConfig,
    /// The baselines' settings (their authors', per dataset family).
    #[serde(default)]
    pub baselines: BaselineConfig,
    /// The methods to run, in order.
    pub methods: Vec<Method>,
    /// Explain at most this many evaluation targets (all when `None`).
    pub max_targets: Option<usize>,
}

impl ExperimentConfig {
    /// The paper's settings for `dataset` (a built-in name or a path), with the family's
    /// episodes ([`Preset::for_dataset`]) and every InduCE method.
    pub fn paper(dataset: &str, seed: u64) -> Self {
        let stem = Path::new(dataset)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let preset = Preset::for_dataset(&stem);
        Self {
            dataset: dataset.to_string(),
            seed,
            black_box_epochs: 1000,
            black_box_hidden: 20,
            black_box: None,
            inductive: preset.inductive(seed),
            transductive: preset.transductive(seed),
            baselines: BaselineConfig::for_dataset(&stem, seed),
            methods: Method::defaults(),
            max_targets: None,
        }
    }

    /// A smoke run of well under a minute: few episodes, 20 optimisation steps per baseline,
    /// ten targets (the black box keeps its full training: it takes seconds and the targets
    /// depend on its accuracy).
    pub fn quick(mut self) -> Self {
        self.inductive.train.episodes = self.inductive.train.episodes.min(2);
        self.transductive.train.episodes = self.transductive.train.episodes.min(3);
        self.baselines = self.baselines.quick(20);
        self.max_targets = Some(self.max_targets.unwrap_or(10).min(10));
        self
    }
}

/// Runs the whole experiment and writes its results into `out`. `format` forces the data format
/// of a file (detected when `None`).
pub fn run(
    config: &ExperimentConfig,
    format: Option<DataFormat>,
    out: impl AsRef<Path>,
    device: &Device,
    progress: &dyn Progress,
) -> Result<RunSummary> {
    let data = load_data(&config.dataset, format, config.seed)?;
    run_on(config, &data, out, device, progress)
}

/// [`run`] on a dataset already in memory (e.g. a subgraph cut out of a larger graph, as the
/// Amazon-Photo protocol does); `config.dataset` only names it in `config.json`.
pub fn run_on(
    config: &ExperimentConfig,
    data: &Dataset,
    out: impl AsRef<Path>,
    device: &Device,
    progress: &dyn Progress,
) -> Result<RunSummary> {
    let out = out.as_ref();
    let writer = RunWriter::create(out)?;
    let g = &data.graph;
    let (d, c) = (g.features().dim(), g.num_classes());
    let model = match &config.black_box {
        Some(path) => load_gcn(path, Some((d, c)), device)?,
        None => {
            let gcfg = GcnConfig::new(d, c)
                .with_hidden(config.black_box_hidden)
                .with_init_seed(config.seed);
            let tcfg = GcnTrainingConfig::new(gcfg.clone()).with_epochs(config.black_box_epochs);
            progress.message("training the black box");
            let (m, _) = train_gcn(data, &tcfg, device)?;
            save_gcn(&m, &gcfg, writer.path().join("black_box.bpk"))?;
            m
        }
    };
    let loaded = black_box_for(model, config.inductive.kernel, device)?;
    let bb = loaded.black_box.as_ref();

    let hops = config.inductive.env.hops;
    let train_targets = select_targets(data, bb, &data.split.train, hops)?;
    let mut eval_targets = match &data.eval_targets {
        Some(e) => e.clone(),
        None => select_targets(data, bb, &data.split.test, hops)?,
    };
    if let Some(k) = config.max_targets {
        eval_targets.truncate(k);
    }
    if eval_targets.is_empty() {
        return Err(induce_explain::ExplainError::NoTargets(format!(
            "{} has no test node that is one of the paper's targets",
            data.name
        ))
        .into());
    }
    progress.message(&format!(
        "{}: {} nodes, {} edges; {} training targets, {} evaluation targets",
        data.name,
        g.num_nodes(),
        g.num_edges(),
        train_targets.len(),
        eval_targets.len()
    ));
    let protocol = Protocol::exact(hops);
    let ctx = EvalContext::new(g, bb, protocol)?;
    let opts = ExplainOptions {
        progress,
        ..Default::default()
    };
    let settings = MethodSettings::new(
        protocol,
        config.inductive.clone(),
        config.transductive.clone(),
        config.baselines.clone(),
    );
    let policies = Policies::Train {
        targets: &train_targets,
        save_dir: Some(writer.path()),
    };
    let mut set = MethodSet::new(data, bb, settings, policies, device)
        .with_baseline_targets(train_targets.clone())
        .with_progress(progress);
    let mut runs: Vec<MethodRun> = Vec::new();
    for &method in &config.methods {
        let prepared = set.prepare(method)?;
        runs.push(prepared.explain(&ctx, &eval_targets, &opts, None)?);
    }
    let summary = summary_for(data, ctx.predictions(), config.seed, None, &runs)?;
    let config_json = serde_json::to_value(config).map_err(|e| Error::InvalidValue {
        what: "experiment config",
        value: config.dataset.clone(),
        reason: e.to_string(),
    })?;
    writer.finish(&config_json, &summary, &runs)?;
    // The pictures: report.html beside summary.json.
    progress.message("writing report.html");
    crate::render::write_run_report(out, data, bb, hops)?;
    Ok(summary)
}
