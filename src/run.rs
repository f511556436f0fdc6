//! The jobs behind the command line, as library functions: load any data, train a policy,
//! explain a target set with any method and write the run. `induce explain` is
//! [`explain_job`] + [`RunWriter`](induce_explain::pipeline::RunWriter).

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use induce_explain::pipeline::{
    BlackBoxAccuracy, EvalContext, ExplainOptions, GraphSize, MethodRun, Progress, RunSummary,
    Shard, TargetSpec, select_targets,
};
use induce_graph::generators::SyntheticKind;
use induce_graph::io::DataFormat;
use induce_graph::{Dataset, GraphError};
use induce_models::BlackBox;
use induce_models::train::split_accuracy;
use induce_rl::{EditMode, EpochStats, InduceConfig, PolicyMeta, timed, train_inductive};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::method_set::{MethodSet, MethodSettings, Policies};
use crate::methods::{BaselineConfig, Family, Method, Preset, load_black_box};

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

/// Reads an allowed-pairs file (the paper's V_c): one pair `u w` or `u,w` a line, original ids;
/// blank lines and `#` comments skipped.
pub fn read_pairs(path: impl AsRef<Path>, num_nodes: usize) -> Result<Vec<(u32, u32)>> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |reason: String| Error::InvalidValue {
            what: "allowed pair",
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

/// Everything that defines an `induce explain` run; saved as its `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainJob {
    /// The data (file, folder or built-in name).
    pub data: String,
    /// Its format (`None`: detected).
    #[serde(with = "format_serde")]
    pub format: Option<DataFormat>,
    /// The black box: the authors' `.safetensors`, a `.bpk` checkpoint or a run directory.
    pub black_box: PathBuf,
    /// A trained policy (`.bpk` or the directory `induce train` wrote), for the inductive
    /// methods.
    pub policy: Option<PathBuf>,
    /// The methods, in order.
    pub methods: Vec<Method>,
    /// Which nodes to explain.
    pub targets: TargetSpec,
    /// Keep only the paper's targets (non-zero label, predicted correctly) of a broad spec
    /// (`train`, `test`, `all`).
    pub paper_filter: bool,
    /// Explain only a seeded random sample of the targets (before sharding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<Sample>,
    /// Explain only this shard of the targets.
    pub shard: Option<Shard>,
    /// Edit types allowed (`None`: the method's own).
    pub edits: Option<EditMode>,
    /// The allowed pairs V_c (`None`: every pair).
    pub allowed: Option<Vec<(u32, u32)>>,
    /// Seed of the run (generated data, policy initialisation, sampling).
    pub seed: u64,
    /// The hyper-parameter family whose settings `induce` and `baselines` start from
    /// ([`ExplainJob::with_family`]).
    #[serde(default = "default_family")]
    pub family: Preset,
    /// Whether `family` was guessed from the data's name (`--family auto`) rather than chosen.
    #[serde(default = "default_true")]
    pub family_guessed: bool,
    /// InduCE settings of the transductive and untrained methods (the trained ones take theirs
    /// from the checkpoint, apart from `edits` and `allowed`).
    pub induce: InduceConfig,
    /// The baselines' settings (their authors', per dataset family).
    #[serde(default)]
    pub baselines: BaselineConfig,
    /// Worker threads (0: all cores). Results do not depend on it, so it is not saved in
    /// `config.json` (shards run with different thread counts merge).
    #[serde(skip)]
    pub threads: usize,
}

mod format_serde {
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

fn default_family() -> Preset {
    Preset::Real
}

fn default_true() -> bool {
    true
}

/// The dataset name a `--data` value gives (a file's stem, a built-in's name): what the family
/// is guessed from.
fn data_stem(data: &str) -> String {
    Path::new(data)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl ExplainJob {
    /// A job with the paper's settings for the dataset family guessed from `data`'s name (see
    /// [`Preset::for_dataset`]; [`ExplainJob::with_family`] chooses another): transductive
    /// γ 0.6 and the family's episode cap, the paper's target filter, all cores.
    pub fn new(data: impl Into<String>, black_box: impl Into<PathBuf>, methods: &[Method]) -> Self {
        let data = data.into();
        let stem = data_stem(&data);
        let seed = induce_graph::DEFAULT_SEED;
        let family = Family::choose(None, &stem);
        Self {
            induce: family.preset.transductive(seed),
            baselines: BaselineConfig::for_family(family.preset, &stem, seed),
            family: family.preset,
            family_guessed: family.guessed,
            data,
            format: None,
            black_box: black_box.into(),
            policy: None,
            methods: methods.to_vec(),
            targets: TargetSpec::Test,
            paper_filter: true,
            sample: None,
            shard: None,
            edits: None,
            allowed: None,
            seed,
            threads: 0,
        }
    }

    /// The same job in `family` (`None`: guessed from the data's name, as [`ExplainJob::new`]
    /// does): `induce` and `baselines` are reset to that family's settings with the job's seed,
    /// so call it before changing them.
    ///
    /// ```
    /// use induce::run::ExplainJob;
    /// use induce::{Method, Preset};
    /// let job = ExplainJob::new("runs/my-graph.npz", "gcn.safetensors", &[Method::Transductive]);
    /// assert_eq!((job.family, job.family_guessed, job.induce.episodes), (Preset::Real, true, 80));
    /// let job = job.with_family(Some(Preset::Trees));
    /// assert_eq!((job.family, job.family_guessed, job.induce.episodes), (Preset::Trees, false, 500));
    /// ```
    pub fn with_family(mut self, family: Option<Preset>) -> Self {
        let stem = data_stem(&self.data);
        let f = Family::choose(family, &stem);
        self.family = f.preset;
        self.family_guessed = f.guessed;
        self.induce = f.preset.transductive(self.seed);
        self.baselines = BaselineConfig::for_family(f.preset, &stem, self.seed);
        self
    }

    /// How the job's family was chosen, in one line ([`Family::describe`]).
    pub fn family_line(&self) -> String {
        family_line(&self.data, self.family, self.family_guessed)
    }
}

/// `family: …`: how a job on `data` came to `preset` ([`Family::describe`]).
fn family_line(data: &str, preset: Preset, guessed: bool) -> String {
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
    black_box: &dyn BlackBox,
    seed: u64,
    shard: Option<Shard>,
    runs: &[MethodRun],
) -> Result<RunSummary> {
    let (train, test) = split_accuracy(black_box, data)?;
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
    paper_filter: bool,
    shard: Option<Shard>,
    data: &Dataset,
    black_box: &dyn BlackBox,
    hops: u32,
) -> Result<Vec<u32>> {
    resolve_targets_sampled(spec, paper_filter, None, shard, data, black_box, hops)
}

fn no_paper_target(n: usize, spec: &TargetSpec) -> crate::error::Error {
    induce_explain::ExplainError::NoTargets(format!(
        "none of the {n} nodes of `{spec}` is one of the paper's targets (predicted correctly; \
         with a non-zero label on motif graphs); pass --all-nodes to explain them anyway"
    ))
    .into()
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
    paper_filter: bool,
    sample: Option<Sample>,
    shard: Option<Shard>,
    data: &Dataset,
    black_box: &dyn BlackBox,
    hops: u32,
) -> Result<Vec<u32>> {
    resolve_targets_described(spec, paper_filter, sample, shard, data, black_box, hops)
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
    let head = match sample {
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
    format!("{head} {rule}; --all-nodes keeps all {pool}")
}

/// [`resolve_targets_sampled`], and for a broad spec narrowed by the paper's filter the line of
/// [`target_rule_line`] saying how many targets it chose (before sharding) and by which rule.
pub fn resolve_targets_described(
    spec: &TargetSpec,
    paper_filter: bool,
    sample: Option<Sample>,
    shard: Option<Shard>,
    data: &Dataset,
    black_box: &dyn BlackBox,
    hops: u32,
) -> Result<(Vec<u32>, Option<String>)> {
    let mut targets = spec.resolve(data)?;
    let pool = targets.len();
    let filter = paper_filter && spec.is_broad();
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

fn threads(n: usize) -> usize {
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

/// Runs an explain job: loads the data, the black box and (for the inductive methods) the
/// policy, checks everything before explaining anything, then explains the targets with every
/// method. Returns the summary and the per-method records (write them with
/// [`RunWriter`](induce_explain::pipeline::RunWriter)).
pub fn explain_job(
    job: &ExplainJob,
    device: &Device,
    progress: &dyn Progress,
) -> Result<(RunSummary, Vec<MethodRun>)> {
    explain_job_journaled(job, device, progress, None)
}

/// [`explain_job`] that records its progress in `journal` and skips what an interrupted run of
/// the same job already explained (`induce explain --resume`); see
/// [`Journal`](induce_explain::pipeline::Journal). The result equals an uninterrupted run's.
pub fn explain_job_journaled(
    job: &ExplainJob,
    device: &Device,
    progress: &dyn Progress,
    journal: Option<&induce_explain::pipeline::Journal>,
) -> Result<(RunSummary, Vec<MethodRun>)> {
    explain_job_noticed(job, device, progress, journal, &|_| {})
}

/// [`explain_job_journaled`] that tells `notice` what it decided for the user, once the data,
/// black box, policies and targets are checked and before anything is explained: the
/// hyper-parameter family ([`ExplainJob::family_line`]) and, for a broad target spec narrowed
/// by the paper's filter, how many targets it chose by which rule ([`target_rule_line`], also
/// kept in the summary's notes). `induce explain` prints them on stderr.
pub fn explain_job_noticed(
    job: &ExplainJob,
    device: &Device,
    progress: &dyn Progress,
    journal: Option<&induce_explain::pipeline::Journal>,
    notice: &dyn Fn(&str),
) -> Result<(RunSummary, Vec<MethodRun>)> {
    if job.methods.is_empty() {
        return Err(Error::InvalidValue {
            what: "method list",
            value: String::new(),
            reason: "give at least one method".into(),
        });
    }
    let data = load_data(&job.data, job.format, job.seed)?;
    let loaded = load_black_box(&job.black_box, &data, job.induce.kernel, device)?;
    let bb = loaded.black_box.as_ref();
    let settings = MethodSettings {
        baselines: job.baselines.clone(),
        edits: job.edits,
        allowed: job.allowed.clone(),
        ..MethodSettings::for_family(job.family, job.seed)
    }
    .with_induce(job.induce.clone());
    let hops = settings.induce.env.hops;
    let policies = match &job.policy {
        Some(path) => Policies::Load(path),
        None => Policies::Absent,
    };
    let mut set =
        MethodSet::new(&data, &loaded, settings, policies, device).with_progress(progress);
    // Load every policy before explaining anything: a bad checkpoint fails fast.
    let mut prepared = Vec::new();
    for &m in &job.methods {
        prepared.push(m.needs_policy().then(|| set.prepare(m)).transpose()?);
    }
    let (targets, rule) = resolve_targets_described(
        &job.targets,
        job.paper_filter,
        job.sample,
        job.shard,
        &data,
        bb,
        hops,
    )?;
    if job.methods.iter().any(|m| m.needs_training_targets()) {
        set.set_baseline_targets(training_targets(&data, bb, hops, &targets)?);
    }
    notice(&job.family_line());
    if let Some(line) = &rule {
        notice(line);
    }
    let ctx = EvalContext::new(&data.graph, bb, hops)?;
    let opts = ExplainOptions {
        threads: threads(job.threads),
        progress,
    };
    let mut runs = Vec::new();
    for (&m, p) in job.methods.iter().zip(prepared) {
        let p = match p {
            Some(p) => p,
            None => set.prepare(m)?,
        };
        runs.push(p.explain(&ctx, &targets, &opts, journal)?);
    }
    let mut summary = summary_for(&data, bb, job.seed, job.shard, &runs)?;
    summary.notes.extend(rule);
    Ok((summary, runs))
}

/// Everything that defines an `induce train` run; saved beside the policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainJob {
    /// The data (file, folder or built-in name).
    pub data: String,
    /// Its format (`None`: detected).
    #[serde(with = "format_serde")]
    pub format: Option<DataFormat>,
    /// The black box (see [`load_black_box`]).
    pub black_box: PathBuf,
    /// Training targets (default: the training split, filtered as the paper does).
    pub targets: TargetSpec,
    /// Keep only the paper's targets of a broad spec.
    pub paper_filter: bool,
    /// Train only on a seeded random sample of the targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<Sample>,
    /// The hyper-parameter family whose settings `induce` starts from
    /// ([`TrainJob::with_family`]).
    #[serde(default = "default_family")]
    pub family: Preset,
    /// Whether `family` was guessed from the data's name (`--family auto`) rather than chosen.
    #[serde(default = "default_true")]
    pub family_guessed: bool,
    /// InduCE settings (γ, episodes, seed, environment).
    pub induce: InduceConfig,
}

impl TrainJob {
    /// The paper's inductive settings for the family guessed from `data`'s name.
    pub fn new(data: impl Into<String>, black_box: impl Into<PathBuf>) -> Self {
        let data = data.into();
        let family = Family::choose(None, &data_stem(&data));
        Self {
            induce: family.preset.inductive(induce_graph::DEFAULT_SEED),
            family: family.preset,
            family_guessed: family.guessed,
            data,
            format: None,
            black_box: black_box.into(),
            targets: TargetSpec::Train,
            paper_filter: true,
            sample: None,
        }
    }

    /// The same job in `family` (`None`: guessed from the data's name): `induce` is reset to
    /// that family's inductive settings with the job's seed, so call it before changing them.
    pub fn with_family(mut self, family: Option<Preset>) -> Self {
        let f = Family::choose(family, &data_stem(&self.data));
        self.family = f.preset;
        self.family_guessed = f.guessed;
        self.induce = f.preset.inductive(self.induce.seed);
        self
    }

    /// How the job's family was chosen, in one line ([`Family::describe`]).
    pub fn family_line(&self) -> String {
        family_line(&self.data, self.family, self.family_guessed)
    }
}

/// What [`train_job`] measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainOutcome {
    /// Number of training targets.
    pub targets: usize,
    /// Statistics of the last epoch.
    pub last_epoch: Option<EpochStats>,
    /// Training time.
    pub seconds: f64,
}

/// Trains an inductive policy (InduCE, REINFORCE) on the job's targets. Returns the policy, the
/// metadata to save beside it ([`induce_rl::save_policy`]) and what training measured.
pub fn train_job(
    job: &TrainJob,
    device: &Device,
    progress: &dyn Progress,
) -> Result<(induce_models::Policy, PolicyMeta, TrainOutcome)> {
    train_job_checkpointed(job, device, progress, None)
}

/// [`train_job`] that checkpoints after every epoch into `checkpoint` and continues from it
/// when it exists (`induce train --resume`; see
/// [`train_inductive_checkpointed`](induce_rl::train_inductive_checkpointed)). The returned
/// policy equals an uninterrupted run's.
pub fn train_job_checkpointed(
    job: &TrainJob,
    device: &Device,
    progress: &dyn Progress,
    checkpoint: Option<&Path>,
) -> Result<(induce_models::Policy, PolicyMeta, TrainOutcome)> {
    train_job_noticed(job, device, progress, checkpoint, &|_| {})
}

/// [`train_job_checkpointed`] that tells `notice`, once the data, black box and targets are
/// checked and before training, the hyper-parameter family ([`TrainJob::family_line`]) and, for
/// a broad target spec narrowed by the paper's filter, how many targets it chose by which rule
/// ([`target_rule_line`]). `induce train` prints them on stderr.
pub fn train_job_noticed(
    job: &TrainJob,
    device: &Device,
    progress: &dyn Progress,
    checkpoint: Option<&Path>,
    notice: &dyn Fn(&str),
) -> Result<(induce_models::Policy, PolicyMeta, TrainOutcome)> {
    let data = load_data(&job.data, job.format, job.induce.seed)?;
    let loaded = load_black_box(&job.black_box, &data, job.induce.kernel, device)?;
    let bb = loaded.black_box.as_ref();
    let hops = job.induce.env.hops;
    let (targets, rule) = resolve_targets_described(
        &job.targets,
        job.paper_filter,
        job.sample,
        None,
        &data,
        bb,
        hops,
    )?;
    notice(&job.family_line());
    if let Some(line) = &rule {
        notice(line);
    }
    let (policy, last, seconds) = train_reporting_with(
        (&data.graph, bb, &targets),
        &job.induce,
        device,
        progress,
        "train policy",
        checkpoint,
    )?;
    let meta = PolicyMeta {
        feature_dim: data.graph.features().dim(),
        num_classes: bb.num_classes(),
        induce: job.induce.clone(),
    };
    Ok((
        policy,
        meta,
        TrainOutcome {
            targets: targets.len(),
            last_epoch: last,
            seconds,
        },
    ))
}

/// [`train_inductive`] reporting each epoch to `progress` (as task `task`); returns the policy,
/// the last epoch's statistics and the training time.
pub fn train_reporting(
    graph: &induce_graph::Graph,
    black_box: &dyn BlackBox,
    targets: &[u32],
    config: &InduceConfig,
    device: &Device,
    progress: &dyn Progress,
    task: &str,
) -> Result<(induce_models::Policy, Option<EpochStats>, f64)> {
    train_reporting_with(
        (graph, black_box, targets),
        config,
        device,
        progress,
        task,
        None,
    )
}

fn train_reporting_with(
    (graph, black_box, targets): (&induce_graph::Graph, &dyn BlackBox, &[u32]),
    config: &InduceConfig,
    device: &Device,
    progress: &dyn Progress,
    task: &str,
    checkpoint: Option<&Path>,
) -> Result<(induce_models::Policy, Option<EpochStats>, f64)> {
    progress.begin(task, config.episodes);
    let mut last = None;
    let report = |s: &EpochStats| {
        progress.message(&format!(
            "return {:.3} flipped {:.0}% edits {:.2}",
            s.mean_return,
            100.0 * s.flipped,
            s.mean_edits
        ));
        progress.advance(1);
        last = Some(s.clone());
    };
    let (policy, seconds) = timed(|| match checkpoint {
        Some(path) => induce_rl::train_inductive_checkpointed(
            graph, black_box, targets, config, device, path, report,
        ),
        None => train_inductive(graph, black_box, targets, config, device, report),
    });
    progress.end();
    Ok((policy?, last, seconds))
}
