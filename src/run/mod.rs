//! The jobs behind the command line, as library functions: load any data, train a policy
//! ([`TrainJob`], [`train()`]), explain a target set with any method and write the run
//! ([`ExplainJob`], [`explain()`]). Both entry points take a [`RunContext`]: the device, the
//! progress display, the notice sink, a run directory and data already in memory. `induce
//! explain` is one conversion from its arguments to an [`ExplainJob`] and one call of
//! [`explain()`].

mod context;
pub mod explain;
pub mod memory;
pub mod options;
mod predict;
pub mod train;

pub use context::{Resume, RunContext};
pub use explain::{ExplainJob, explain, explain_in_memory};
pub use memory::MemoryJob;
pub use options::{
    DEFAULT_MAX_NEIGHBOURHOOD, DEFAULT_SAMPLES, RunOptions, SETTING_NAMES, name_settings,
};
pub use predict::{predict, write_predictions_csv};
pub(crate) use train::train_reporting;
pub use train::{TrainJob, TrainOutcome, Trained, train, train_report_name, write_policy_dir};

use std::path::Path;

use induce_explain::pipeline::{
    BlackBoxAccuracy, GraphSize, MethodRun, RunSummary, Shard, TargetSpec, select_targets,
};
use induce_graph::generators::SyntheticKind;
use induce_graph::io::DataFormat;
use induce_graph::{Dataset, GraphError};
use induce_models::BlackBox;
use induce_models::gcn::train::split_accuracy_of;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::methods::{Family, Preset};

/// Loads a dataset from `spec`: a file or folder in any supported format (detected, or
/// `format`), or the name of a built-in benchmark (`ba-shapes`, `tree-cycles`, `tree-grid`)
/// generated with `seed` when no such file exists.
///
/// A file with neither a split nor an evaluation set (the gnn-benchmark npz files: Cora,
/// CiteSeer, Amazon-Photo) gets a seeded 80/20 split (`seed`), with a note; the partial
/// reference graphs `syn4`/`syn5` keep their empty split (they are explained on `eval`).
///
/// ```
/// let d = induce::run::load_data("tree-cycles", None, 42).unwrap();
/// assert_eq!(d.graph.num_nodes(), 871);
/// ```
pub fn load_data(spec: &str, format: Option<DataFormat>, seed: u64) -> Result<Dataset> {
    let path = Path::new(spec);
    if path.exists() || format.is_some() {
        let mut d = induce_graph::io::load(path, format)?;
        if d.split.train.is_empty() && d.split.test.is_empty() && d.eval_targets.is_none() {
            d.split = induce_graph::Split::random(d.graph.num_nodes(), 0.8, seed)?;
            // The loader's own note ("split left empty") no longer holds.
            d.notes.retain(|n| !n.contains("split left empty"));
            d.notes.push(format!(
                "no split in the file: seeded 80/20 split (seed {seed})"
            ));
        }
        return Ok(d);
    }
    match spec.parse::<SyntheticKind>() {
        Ok(kind) => {
            let mut d = kind.generate(seed)?;
            d.notes
                .push(format!("generated {} with seed {seed}", kind.name()));
            Ok(d)
        }
        Err(_) => Err(GraphError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such file or directory, and not a built-in dataset (ba-shapes, \
                 tree-cycles, tree-grid)",
            ),
        )
        .into()),
    }
}

/// Reads a file of node pairs (`--allowed`, the paper's V_c; `--lock-edges`): one pair `u w` or
/// `u,w` a line, original ids; blank lines and `#` comments skipped.
pub fn read_pairs(path: impl AsRef<Path>, num_nodes: usize) -> Result<Vec<(u32, u32)>> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| Error::InvalidValue {
        what: "pairs file",
        value: path.display().to_string(),
        reason: e.to_string(),
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |reason: String| Error::InvalidValue {
            what: "node pair",
            value: format!("{}:{}: {line}", path.display(), i + 1),
            reason,
        };
        let parts: Vec<&str> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|p| !p.is_empty())
            .collect();
        let [u, w] = parts.as_slice() else {
            return Err(bad("expected two node ids".into()));
        };
        let id = |s: &str| -> Result<u32> {
            let v: u32 = s
                .parse()
                .map_err(|_| bad(format!("`{s}` is not a node id")))?;
            if v as usize >= num_nodes {
                return Err(bad(format!("node {v} is out of range ({num_nodes} nodes)")));
            }
            Ok(v)
        };
        out.push((id(u)?, id(w)?));
    }
    Ok(out)
}

pub(crate) mod format_serde {
    use induce_graph::io::DataFormat;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(f: &Option<DataFormat>, s: S) -> Result<S::Ok, S::Error> {
        match f {
            Some(f) => s.serialize_some(f.name()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DataFormat>, D::Error> {
        let s: Option<String> = Option::deserialize(d)?;
        s.map(|s| s.parse().map_err(serde::de::Error::custom))
            .transpose()
    }
}

pub(crate) fn default_family() -> Preset {
    Preset::Real
}

pub(crate) fn default_true() -> bool {
    true
}

/// The dataset name a `--data` value gives (a file's stem, a built-in's name): what the family
/// is guessed from.
pub(crate) fn data_stem(data: &str) -> String {
    Path::new(data)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `family: …`: how a job on `data` came to `preset` ([`Family::describe`]).
pub(crate) fn family_line(data: &str, preset: Preset, guessed: bool) -> String {
    let f = Family { preset, guessed };
    format!("family: {}", f.describe(&data_stem(data)))
}

/// The notes a run's summary carries: the data's, and why a metric is undefined.
pub fn run_notes(data: &Dataset) -> Vec<String> {
    let mut notes = data.notes.clone();
    if data.graph.motifs().is_none() {
        notes.push(format!(
            "strict_accuracy: undefined, {} has no motif ground truth",
            data.name
        ));
    }
    notes
}

/// The summary skeleton of a run on `data` (rows added by the caller).
pub fn summary_for(
    data: &Dataset,
    predictions: &[usize],
    seed: u64,
    shard: Option<Shard>,
    runs: &[MethodRun],
) -> Result<RunSummary> {
    let (train, test) = split_accuracy_of(predictions, data);
    Ok(RunSummary {
        dataset: data.name.clone(),
        seed,
        graph: GraphSize {
            nodes: data.graph.num_nodes(),
            edges: data.graph.num_edges(),
        },
        black_box: BlackBoxAccuracy {
            train_accuracy: train,
            test_accuracy: test,
        },
        shard,
        runs: runs.iter().map(MethodRun::row).collect(),
        notes: run_notes(data),
    })
}

/// Resolves the targets of a job on `data`: the spec, the paper's filter for broad specs, then
/// the shard. An empty result is an error saying which step emptied it.
pub fn resolve_targets(
    spec: &TargetSpec,
    filter: TargetFilter,
    shard: Option<Shard>,
    data: &Dataset,
    black_box: &dyn BlackBox,
    hops: u32,
) -> Result<Vec<u32>> {
    resolve_targets_sampled(spec, filter, None, shard, data, black_box, hops)
}

fn no_paper_target(n: usize, spec: &TargetSpec) -> crate::error::Error {
    induce_explain::ExplainError::NoTargets(format!(
        "none of the {n} nodes of `{spec}` is one of the paper's targets (predicted correctly; \
         with a non-zero label on motif graphs); set `TargetFilter::AllNodes` to explain them \
         anyway"
    ))
    .into()
}

/// Which nodes of a broad target spec (`train`, `test`, `all`) a run keeps; narrow specs (a
/// list, a file, `eval`) are kept whole. Saved in a job's `config.json` as
/// `"paper_filter": true` / `false`.
///
/// ```
/// use induce::run::TargetFilter;
/// assert_eq!(TargetFilter::default(), TargetFilter::Paper);
/// assert_eq!(serde_json::to_string(&TargetFilter::AllNodes).unwrap(), "false");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum TargetFilter {
    /// The paper's targets: the nodes the black box predicts correctly on their neighbourhood,
    /// with a non-zero label when the data has motif ground truth (docs/FORMATS.md).
    #[default]
    Paper,
    /// Every node of the spec (`--all-nodes`).
    AllNodes,
}

impl Serialize for TargetFilter {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_bool(*self == TargetFilter::Paper)
    }
}

impl<'de> Deserialize<'de> for TargetFilter {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(match bool::deserialize(d)? {
            true => TargetFilter::Paper,
            false => TargetFilter::AllNodes,
        })
    }
}

/// A seeded random sample of at most `size` targets (`--sample N`): which nodes of a large
/// target set a run explains or trains on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// Number of targets kept.
    pub size: usize,
    /// Seed of the draw.
    pub seed: u64,
}

/// [`resolve_targets`] with an optional [`Sample`]: the spec's nodes are shuffled with the
/// sample's seed and the paper's filter (for broad specs) is applied in that order until `size`
/// targets pass, so the result is a uniform sample of the filtered targets without running the
/// black box on all of them; the kept ids keep the spec's order, then are sharded.
pub fn resolve_targets_sampled(
    spec: &TargetSpec,
    filter: TargetFilter,
    sample: Option<Sample>,
    shard: Option<Shard>,
    data: &Dataset,
    black_box: &dyn BlackBox,
    hops: u32,
) -> Result<Vec<u32>> {
    resolve_targets_described(spec, filter, sample, shard, data, black_box, hops)
        .map(|(targets, _)| targets)
}

/// The words a broad spec's nodes go by (`test nodes`).
fn spec_nodes(spec: &TargetSpec) -> String {
    match spec {
        TargetSpec::Train => "training nodes".into(),
        TargetSpec::Test => "test nodes".into(),
        TargetSpec::All => "nodes".into(),
        other => format!("nodes of `{other}`"),
    }
}

/// One line saying how many targets the paper's filter kept of a broad spec's `pool` nodes and
/// by which rule, which depends on the data: with motif ground truth (a reference npz's
/// `motif` array, a generated benchmark, or the authors' syn1/syn4/syn5 by their names) the
/// nodes with label 0 (the base graph) are skipped; without it every class counts, label 0
/// included. `chosen` counts the targets before sharding.
///
/// ```
/// use induce::TargetSpec;
/// let d = induce::run::load_data("tree-cycles", None, 42).unwrap();
/// let line = induce::run::target_rule_line(&TargetSpec::Test, 175, 60, None, &d, 4);
/// assert!(line.starts_with("targets: 60 of the 175 test nodes"), "{line}");
/// assert!(line.contains("non-zero label"), "{line}");
/// // A sample at least as large as the pool keeps them all: no sample to speak of.
/// let all = induce::run::Sample { size: 900, seed: 42 };
/// let line = induce::run::target_rule_line(&TargetSpec::Test, 175, 60, Some(all), &d, 4);
/// assert!(line.starts_with("targets: 60 of the 175 test nodes"), "{line}");
/// let few = induce::run::Sample { size: 60, seed: 42 };
/// let line = induce::run::target_rule_line(&TargetSpec::Test, 175, 60, Some(few), &d, 4);
/// assert!(line.starts_with("targets: a random sample (seed 42) of 60"), "{line}");
/// ```
pub fn target_rule_line(
    spec: &TargetSpec,
    pool: usize,
    chosen: usize,
    sample: Option<Sample>,
    data: &Dataset,
    hops: u32,
) -> String {
    let what = spec_nodes(spec);
    // A sample at least as large as the pool keeps every target: no sample to speak of.
    let head = match sample.filter(|s| s.size < pool) {
        Some(s) => format!(
            "targets: a random sample (seed {}) of {chosen} of the {pool} {what}, drawn among",
            s.seed
        ),
        None => format!("targets: {chosen} of the {pool} {what}:"),
    };
    let rule = match data.graph.motifs() {
        Some(_) => format!(
            "those with a non-zero label that the black box predicts correctly on their \
             {hops}-hop neighbourhood (the paper's rule: {} has motif ground truth, label 0 is \
             its base graph)",
            data.name
        ),
        None => format!(
            "those the black box predicts correctly on their {hops}-hop neighbourhood, of every \
             class ({} has no motif ground truth, so label 0 is not skipped as a base graph; \
             with a `motif` array it would be)",
            data.name
        ),
    };
    format!("{head} {rule}; all {pool} are kept without the paper's filter (all nodes)")
}

/// [`resolve_targets_sampled`], and for a broad spec narrowed by the paper's filter the line of
/// [`target_rule_line`] saying how many targets it chose (before sharding) and by which rule.
pub fn resolve_targets_described(
    spec: &TargetSpec,
    filter: TargetFilter,
    sample: Option<Sample>,
    shard: Option<Shard>,
    data: &Dataset,
    black_box: &dyn BlackBox,
    hops: u32,
) -> Result<(Vec<u32>, Option<String>)> {
    let mut targets = spec.resolve(data)?;
    let pool = targets.len();
    let filter = filter == TargetFilter::Paper && spec.is_broad();
    if let Some(s) = sample {
        if s.size == 0 {
            return Err(induce_explain::ExplainError::InvalidValue {
                what: "sample size",
                value: "0".into(),
                reason: "a sample needs at least one target".into(),
            }
            .into());
        }
        use rand::SeedableRng;
        use rand::seq::SliceRandom;
        let n = targets.len();
        let mut order = targets.clone();
        order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(s.seed));
        let mut kept = Vec::with_capacity(s.size.min(n));
        let mut at = 0;
        while kept.len() < s.size && at < n {
            // Test as many nodes as are still missing (at least one per core) at a time.
            let want = (s.size - kept.len()).max(induce_explain::parallel::default_threads());
            let part = &order[at..(at + want).min(n)];
            at += part.len();
            let pass = match filter {
                true => select_targets(data, black_box, part, hops)?,
                false => part.to_vec(),
            };
            kept.extend(pass.into_iter().take(s.size - kept.len()));
        }
        if kept.is_empty() {
            return Err(no_paper_target(n, spec));
        }
        let kept: std::collections::HashSet<u32> = kept.into_iter().collect();
        targets.retain(|t| kept.contains(t));
    } else if filter {
        let n = targets.len();
        targets = select_targets(data, black_box, &targets, hops)?;
        if targets.is_empty() {
            return Err(no_paper_target(n, spec));
        }
    }
    let line = filter.then(|| target_rule_line(spec, pool, targets.len(), sample, data, hops));
    if let Some(s) = shard {
        let n = targets.len();
        targets = s.select(&targets);
        if targets.is_empty() {
            return Err(induce_explain::ExplainError::NoTargets(format!(
                "shard {s} of {n} targets is empty"
            ))
            .into());
        }
    }
    Ok((targets, line))
}

pub(crate) fn threads(n: usize) -> usize {
    if n == 0 {
        induce_explain::parallel::default_threads()
    } else {
        n
    }
}

/// The nodes an inductive baseline (PGExplainer) trains on: the paper's targets among the
/// training split; for data without one (the authors' `syn4`/`syn5` files carry only evaluation
/// targets), the paper's targets among all nodes except `exclude` (the explained ones).
pub fn training_targets(
    data: &Dataset,
    black_box: &dyn BlackBox,
    hops: u32,
    exclude: &[u32],
) -> Result<Vec<u32>> {
    let pool: Vec<u32> = match data.split.train.is_empty() {
        false => data.split.train.clone(),
        true => {
            let skip: std::collections::HashSet<u32> = exclude.iter().copied().collect();
            (0..data.graph.num_nodes() as u32)
                .filter(|u| !skip.contains(u))
                .collect()
        }
    };
    Ok(select_targets(data, black_box, &pool, hops)?)
}
